// A transpose of a row-split dense matrix is not distributed (a csr's is: an all-to-all).
// expect: spade: this expression node has no multi_gpu rule yet
#include <spade/spade.hpp>

int main() {
  spade::dense<double, spade::multi_gpu> a;
  spade::dense<double, spade::multi_gpu> t = spade::transpose(a);
  (void)t;
}
