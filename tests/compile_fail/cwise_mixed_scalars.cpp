// Element-wise operations never mix precisions silently: cast one operand first.
// expect: the operands have different scalar types, so convert one with spade::cast<T>
#include <spade/spade.hpp>

int main() {
  const spade::vector<double, spade::gpu> x;
  const spade::vector<float, spade::gpu> y;
  spade::vector<double, spade::gpu> r = spade::cwise_max(x, y);
  return static_cast<int>(r.size());
}
