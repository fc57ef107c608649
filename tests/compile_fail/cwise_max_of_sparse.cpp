// cwise_max of a sparse and a dense operand is not defined on the pattern (max(0, b) may be b).
// expect: cwise_quotient/cwise_max/cwise_min of a sparse operand are not
#include <spade/spade.hpp>

int main() {
  const spade::csr<double, spade::cpu> a;
  const spade::dense<double, spade::cpu> d;
  spade::dense<double, spade::cpu> r = spade::cwise_max(a, d);
  return static_cast<int>(r.rows());
}
