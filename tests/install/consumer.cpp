// A user's translation unit: host compiler only, one include, cpu types, gpu when present.
#include <iostream>
#include <spade/spade.hpp>

int main() {
  auto a = spade::random_sparse<double>(50, 40, 0.1, 7);
  auto d = spade::convert<spade::dense>(a);
  auto back = spade::convert<spade::csr>(d);
  if (back.nnz() != a.nnz()) return 1;
  std::string reason;
  if (spade::device_available(&reason)) {
    auto g = spade::to_cpu(spade::convert<spade::csr>(spade::to_gpu(d)));
    if (g.col_idx() != a.col_idx()) return 1;
  }
  std::cout << "consumer: " << a.rows() << "x" << a.cols() << " nnz " << a.nnz() << " ok\n";
  return 0;
}
