// cast<U> of a sparse operand takes a csr (its pattern kept): one static_assert for a coo.
// expect: spade::cast<U> of a sparse operand takes a csr
#include <spade/spade.hpp>

int main() {
  const spade::coo<double, spade::cpu> a;
  const spade::coo<float, spade::cpu> b = spade::cast<float>(a);
  return b.rows();
}
