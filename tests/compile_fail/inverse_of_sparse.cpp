// 1/0 = inf: inverse of a sparse operand would fill every unstored entry.
// expect: spade::inverse: 1/0 = inf, so on a sparse operand it would fill every unstored
#include <spade/spade.hpp>

int main() {
  const spade::csr<float, spade::gpu> a;
  spade::csr<float, spade::gpu> b = spade::inverse(a);
  return static_cast<int>(b.nnz());
}
