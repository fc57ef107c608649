// exp(0) = 1: exp of a sparse operand would fill every unstored entry, so it does not compile.
// expect: spade::exp: exp(0) = 1, so on a sparse operand it would fill every unstored
#include <spade/spade.hpp>

int main() {
  const spade::csr<double, spade::cpu> a;
  spade::csr<double, spade::cpu> b = spade::exp(a);
  return static_cast<int>(b.nnz());
}
