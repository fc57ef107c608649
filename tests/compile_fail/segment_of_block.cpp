// Views of views compose only where the shape allows: a segment of a block is one static_assert.
// expect: spade::segment/head/tail view a spade::vector or a row, column or segment of one
#include <spade/spade.hpp>

int main() {
  spade::dense<double, spade::cpu> d(4, 4);
  auto s = spade::segment(spade::block(d, 0, 0, 2, 2), 0, 2);
  (void)s;
  return 0;
}
