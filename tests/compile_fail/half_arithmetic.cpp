// half and bfloat16 are storage types: adding two half matrices is one static_assert.
// expect: spade::half and spade::bfloat16 are storage types and do not compute
#include <spade/spade.hpp>

int main() {
  const spade::dense<spade::half, spade::cpu> a(2, 2), b(2, 2);
  const spade::dense<spade::half, spade::cpu> c = a + b;
  return c.rows();
}
