// A difference of float and double operands names operator+/- (a difference is a sum).
// expect: spade: operator+/-: the operands have different scalar types (float and double)
#include <spade/spade.hpp>

int main() {
  spade::dense<float, spade::cpu> a;
  spade::dense<double, spade::cpu> b;
  auto difference = a - b;
  (void)difference;
}
