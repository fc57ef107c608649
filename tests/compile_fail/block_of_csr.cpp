// block() views a dense matrix; a csr's rows are spade::rows: one static_assert.
// expect: spade::block/row/col view a spade::dense matrix
#include <spade/spade.hpp>

int main() {
  const spade::csr<double, spade::cpu> a;
  const spade::dense<double, spade::cpu> b = spade::block(a, 0, 0, 0, 0);
  return b.rows();
}
