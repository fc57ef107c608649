// An element-wise function of a half operand is one static_assert.
// expect: spade::half and spade::bfloat16 are storage types and do not compute
#include <spade/spade.hpp>

int main() {
  const spade::vector<spade::half, spade::cpu> x(3);
  const spade::vector<spade::half, spade::cpu> y = spade::abs(x);
  return y.size();
}
