// A multi_gpu object already lives on its cluster's GPUs: to_gpu has no single GPU to pick.
// expect: spade::to_gpu: a multi_gpu object already lives on its cluster's GPUs
#include <spade/spade.hpp>

int main() {
  spade::vector<double, spade::multi_gpu> x;
  spade::to_gpu(x);
}
