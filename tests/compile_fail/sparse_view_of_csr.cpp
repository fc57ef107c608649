// sparse_view marks a dense matrix as mostly zeros; a sparse matrix needs no view.
// expect: spade::sparse_view: the argument must be a spade::dense matrix
#include <spade/spade.hpp>

int main() {
  spade::csr<double, spade::cpu> a;
  auto view = spade::sparse_view(a);
  (void)view;
}
