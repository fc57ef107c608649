// A view of a const matrix is read-only: assigning into it is one static_assert.
// expect: this view is read-only (it views a const matrix or vector)
#include <spade/spade.hpp>

int main() {
  const spade::dense<double, spade::cpu> d(4, 4);
  const spade::dense<double, spade::cpu> e(2, 2);
  spade::block(d, 0, 0, 2, 2) = e;
  return 0;
}
