// Quickstart: read a matrix, convert it on the GPU when there is one, hand the result to Eigen.
#include <iostream>
#include <spade/spade.hpp>

int main(int argc, char** argv) {
  auto A =
      spade::read_matrix_market<double>(argc > 1 ? argv[1] : "tests/data/matrices/cage10.mtx.gz");
  std::string why;
  const bool gpu = spade::device_available(&why);
  if (!gpu) std::cout << "no GPU (" << why << "): converting on the CPU\n";
  auto C = gpu ? spade::to_cpu(spade::convert<spade::coo>(spade::to_gpu(A)))  // CUB on the GPU
               : spade::convert<spade::coo>(A);                         // same result on the CPU
  Eigen::SparseMatrix<double, Eigen::RowMajor> E = spade::to_eigen(C);  // sums repeats, if any
  std::cout << A.rows() << "x" << A.cols() << ", nnz " << A.nnz() << ", norm " << E.norm() << "\n";
}
