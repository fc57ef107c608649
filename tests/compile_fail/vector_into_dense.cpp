// A matrix-vector product is a vector: it does not go into a dense matrix.
// expect: spade: assignment: a vector expression goes into a spade::vector
#include <spade/spade.hpp>

int main() {
  spade::dense<float, spade::cpu> a;
  spade::vector<float, spade::cpu> x;
  spade::dense<float, spade::cpu> c = a * x;
  (void)c;
}
