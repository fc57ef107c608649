// A product of a cpu and a gpu operand is refused where it is written.
// expect: spade: operator*: the operands live in different spaces (cpu, gpu, multi_gpu)
#include <spade/spade.hpp>

int main() {
  spade::csr<float, spade::cpu> a;
  spade::dense<float, spade::gpu> b;
  auto product = a * b;
  (void)product;
}
