// dense + csr has no sum rule: both operands must be dense, both sparse, or both vectors.
// expect: spade: operator+/-: no planner rule adds these two operand types
#include <spade/spade.hpp>

int main() {
  spade::dense<double, spade::cpu> a;
  spade::csr<double, spade::cpu> b;
  spade::dense<double, spade::cpu> c = a + b;
  (void)c;
}
