// Sparse formats hold float or double: cast<half> of a csr is one static_assert.
// expect: spade::cast<U> to spade::half or spade::bfloat16 takes a dense matrix or a vector
#include <spade/spade.hpp>

int main() {
  const spade::csr<float, spade::cpu> a;
  const auto h = spade::cast<spade::half>(a);
  (void)h;
  return 0;
}
