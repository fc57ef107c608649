// cusparse_spgemm computes sparse x sparse; it cannot be forced onto sparse x dense.
// expect: spade::eval<K>: kernel K cannot compute this expression's top node
#include <spade/spade.hpp>

int main() {
  spade::csr<float, spade::cpu> a;
  spade::dense<float, spade::cpu> b;
  auto c = spade::eval<spade::kernels::cusparse_spgemm>(a * b);
  (void)c;
}
