// The same mistake assigned to a matrix: still the one message, no conversion error after it.
// expect: spade: operator*: the operands live in different spaces (cpu, gpu, multi_gpu)
#include <spade/spade.hpp>

int main() {
  spade::csr<float, spade::cpu> a;
  spade::dense<float, spade::gpu> b;
  spade::dense<float, spade::gpu> c = a * b;
  c = a * b;
}
