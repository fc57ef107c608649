// A double expression does not go into a float matrix.
// expect: spade: assignment: the destination's scalar type differs from the expression's
#include <spade/spade.hpp>

int main() {
  spade::dense<double, spade::cpu> a;
  spade::dense<float, spade::cpu> c;
  c = a * a;
}
