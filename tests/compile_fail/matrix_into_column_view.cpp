// A column view takes a vector expression, not a matrix: one static_assert.
// expect: a vector expression goes into a row, col, segment, head or tail
#include <spade/spade.hpp>

int main() {
  spade::dense<double, spade::cpu> d(4, 4);
  const spade::dense<double, spade::cpu> m(4, 1);
  spade::col(d, 0) = m;
  return 0;
}
