// A reduction of a bfloat16 vector is one static_assert (cast to float or double first).
// expect: spade::half and spade::bfloat16 are storage types and do not compute
#include <spade/spade.hpp>

int main() {
  const spade::vector<spade::bfloat16, spade::gpu> x;
  const float s = spade::sum(x);
  return static_cast<int>(s);
}
