// A gpu matrix has no element access: reading one element would be a device round trip each.
// expect: elements of a cpu matrix only, so copy a gpu one to the host with spade::to_cpu first
#include <spade/spade.hpp>

int main() {
  const spade::dense<double, spade::gpu> d;
  return static_cast<int>(d(0, 0));
}
