// cwise_product needs two dense matrices or two vectors, not one of each.
// expect: both operands must be dense matrices or both vectors
#include <spade/spade.hpp>

int main() {
  const spade::dense<double, spade::cpu> d;
  const spade::vector<double, spade::cpu> x;
  spade::dense<double, spade::cpu> r = spade::cwise_product(d, x);
  return static_cast<int>(r.rows());
}
