// Porting from Eigen: an Eigen program (Y = A·X, then the residual R = B − A·X) next to its Spade
// port, line for line. Eigen types stay at the edges; from_eigen / to_eigen cross over.
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>

// The bundled matrices: CMake passes the source tree's folder, so the example runs from any
// working directory; compiled by hand, it reads them relative to the repository root.
#ifndef SPADE_EXAMPLE_DATA
#define SPADE_EXAMPLE_DATA "tests/data/matrices"
#endif

using sparse_eigen = Eigen::SparseMatrix<double, Eigen::RowMajor>;

template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, spade::gpu>)
    return spade::to_gpu(m);
  else
    return m;
}

template <class Space>
int run(const sparse_eigen& a_e, const Eigen::MatrixXd& x_e, const Eigen::MatrixXd& b_e) {
  // --- The Eigen program (CPU, one thread).
  const Eigen::MatrixXd y_e = a_e * x_e;
  const Eigen::MatrixXd r_e = b_e - a_e * x_e;

  // --- The Spade port: the same two lines once the operands are in Spade types.
  auto A = to_space<Space>(spade::from_eigen(a_e));  // csr<double, Space>
  auto X = to_space<Space>(spade::from_eigen(x_e));  // dense<double, Space, col_major>
  auto B = to_space<Space>(spade::from_eigen(b_e));  // (MatrixXd is column-major; kept)
  auto Y = spade::eval(A * X);
  auto R = spade::eval(B - A * X);  // the product runs first, then one subtraction kernel

  // --- Back to Eigen (from either space) to compare.
  const Eigen::MatrixXd y_s = spade::to_eigen(Y);
  const Eigen::MatrixXd r_s = spade::to_eigen(R);
  const double dy = (y_s - y_e).norm() / y_e.norm();
  const double dr = (r_s - r_e).norm() / r_e.norm();
  std::cout << "A: " << A.rows() << "x" << A.cols() << ", nnz " << A.nnz()
            << "; X, B: " << x_e.rows() << "x" << x_e.cols() << "\n"
            << "Eigen: |Y| = " << y_e.norm() << ", |R| = " << r_e.norm() << "\n"
            << "Spade: |Y| = " << y_s.norm() << ", |R| = " << r_s.norm() << "\n"
            << "relative difference: Y " << dy << ", R " << dr << "\n";
  return dy < 1e-12 && dr < 1e-12 ? 0 : 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    // The file is read with Spade's Matrix Market reader (it takes .mtx.gz); Eigen gets a copy.
    const char* path = argc > 1 ? argv[1] : SPADE_EXAMPLE_DATA "/cage10.mtx.gz";
    const sparse_eigen a_e = spade::to_eigen(spade::read_matrix_market<double>(path));
    std::srand(7);  // Eigen's Random() draws from std::rand
    const Eigen::MatrixXd x_e = Eigen::MatrixXd::Random(a_e.cols(), 16);
    const Eigen::MatrixXd b_e = Eigen::MatrixXd::Random(a_e.rows(), 16);

    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(a_e, x_e, b_e);
    std::cout << "no GPU (" << why << "): running the Spade port on the CPU\n";
    return run<spade::cpu>(a_e, x_e, b_e);
  } catch (const spade::error& e) {
    std::cerr << "01_port_from_eigen: " << e.what() << "\n";
    return 1;
  }
}
