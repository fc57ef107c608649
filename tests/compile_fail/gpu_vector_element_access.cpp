// A gpu vector has no element access, through x(i) as through x[i]: one static_assert.
// expect: read and write elements of a cpu vector only, so copy a
#include <spade/spade.hpp>

int main() {
  spade::vector<double, spade::gpu> x;
  return static_cast<int>(x(0));
}
