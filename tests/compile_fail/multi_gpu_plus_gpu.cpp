// A gpu operand and a multi_gpu one do not mix: distribute the gpu one onto the cluster.
// expect: spade: operator+/-: the operands live in different spaces (cpu, gpu, multi_gpu)
#include <spade/spade.hpp>

int main() {
  spade::vector<double, spade::multi_gpu> x;
  spade::vector<double, spade::gpu> y;
  auto z = x + y;
  (void)z;
}
