// A half scalar times a half vector is arithmetic on a storage type: one static_assert.
// expect: spade::half and spade::bfloat16 are storage types and do not compute
#include <spade/spade.hpp>

int main() {
  const spade::vector<spade::half, spade::gpu> x;
  const auto y = spade::half(2.0f) * x;
  (void)y;
  return 0;
}
