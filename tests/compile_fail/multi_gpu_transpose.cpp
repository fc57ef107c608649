// A transpose of a row-split matrix would need an all-to-all of its entries: not distributed.
// expect: spade: this expression node has no multi_gpu rule yet
#include <spade/spade.hpp>

int main() {
  spade::csr<double, spade::multi_gpu> a;
  spade::csr<double, spade::multi_gpu> t = spade::transpose(a);
  (void)t;
}
