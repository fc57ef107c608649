// Vectors are columns and have no transpose; dot(x, y) is the inner product.
// expect: spade::transpose: vectors are columns and have no transpose here
#include <spade/spade.hpp>

int main() {
  spade::vector<double, spade::cpu> x;
  auto t = spade::transpose(x);
  (void)t;
}
