// float and double operands are never mixed silently.
// expect: spade: operator*: the operands have different scalar types (float and double)
#include <spade/spade.hpp>

int main() {
  spade::csr<float, spade::cpu> a;
  spade::dense<double, spade::cpu> b;
  spade::dense<double, spade::cpu> c = a * b;
  (void)c;
}
