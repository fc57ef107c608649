// A + s would fill every unstored entry of a sparse A (s * A and A / s keep the pattern).
// expect: spade: sparse + scalar would fill every unstored entry
#include <spade/spade.hpp>

int main() {
  const spade::csr<double, spade::cpu> a;
  spade::csr<double, spade::cpu> b = a + 1.0;
  return static_cast<int>(b.nnz());
}
