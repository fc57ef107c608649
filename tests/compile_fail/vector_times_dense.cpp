// A vector is a column: vector * dense has no planner rule.
// expect: spade: operator*: no planner rule multiplies these two operand types
#include <spade/spade.hpp>

int main() {
  spade::vector<float, spade::cpu> x;
  spade::dense<float, spade::cpu> a;
  spade::vector<float, spade::cpu> y = x * a;
  (void)y;
}
