// Quickstart: read a matrix, move it to the GPU, convert it there, and hand it to Eigen.
#include <iostream>
#include <spade/spade.hpp>

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "tests/data/matrices/cage10.mtx.gz";
  auto A = spade::read_matrix_market<double>(path);  // csr<double, cpu>
  std::cout << path << ": " << A.rows() << "x" << A.cols() << ", nnz " << A.nnz() << "\n";
  std::string why;
  if (spade::device_available(&why)) {
    auto G = spade::to_gpu(A);               // csr<double, gpu>
    auto C = spade::convert<spade::coo>(G);  // converted on the GPU (CUB)
    Eigen::SparseMatrix<double, Eigen::RowMajor> E = spade::to_eigen(C);
    std::cout << "on " << spade::default_context().properties().name << ": ";
    std::cout << "Frobenius norm " << E.norm() << "\n";
  } else {
    std::cout << "no GPU (" << why << "), staying on the CPU: ";
    std::cout << "Frobenius norm " << spade::to_eigen(A).norm() << "\n";
  }
}
