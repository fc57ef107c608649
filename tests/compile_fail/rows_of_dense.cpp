// spade::rows gives a row range of a csr; a dense matrix has block(): one static_assert.
// expect: spade::rows views a row range of a spade::csr
#include <spade/spade.hpp>

int main() {
  const spade::dense<double, spade::cpu> d(4, 4);
  const spade::dense<double, spade::cpu> r = spade::rows(d, 0, 2);
  return r.rows();
}
