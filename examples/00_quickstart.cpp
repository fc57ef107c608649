// Quickstart: C = A * B and y = A * x on the GPU (on the CPU without one), the plan Spade made
// for them, and a check against the Eigen reference.
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>

// The bundled matrices: CMake passes the source tree's folder, so the example runs from any
// working directory; compiled by hand, it reads them relative to the repository root.
#ifndef SPADE_EXAMPLE_DATA
#define SPADE_EXAMPLE_DATA "tests/data/matrices"
#endif

// A host matrix or vector, copied to the memory space the run uses.
template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, spade::gpu>)
    return spade::to_gpu(m);
  else
    return m;
}

// ‖result − expected‖ / ‖expected‖, on the host through Eigen (to_eigen takes either space).
template <class R, class E>
double relative_error(const R& result, const E& expected) {
  const auto want = spade::to_eigen(expected);
  return (spade::to_eigen(result) - want).norm() / want.norm();
}

// One function for both spaces: only the Space tag differs between the GPU and the CPU run.
template <class Space>
int run(const char* path) {
  auto A = to_space<Space>(spade::read_matrix_market<double>(path));      // csr<double, Space>
  auto B = to_space<Space>(spade::random_dense<double>(A.cols(), 8, 1));  // dense, 8 columns
  auto x = to_space<Space>(spade::random_vector<double>(A.cols(), 2));

  auto product = A * B;                     // an expression: nothing is computed yet
  std::cout << spade::explain(product);     // the rule, the candidate kernels, the choice and why
  spade::dense<double, Space> C = product;  // evaluates: cuSPARSE SpMM on the GPU, Eigen on CPU
  spade::vector<double, Space> y = A * x;   // sparse × vector: SpMV

  // spade::reference evaluates the same expression on the CPU with Eigen: the answer to check.
  const double error_c = relative_error(C, spade::reference(product));
  const double error_y = relative_error(y, spade::reference(A * x));
  std::cout << "A: " << A.rows() << "x" << A.cols() << ", nnz " << A.nnz() << "\n"
            << "C = A * B: " << C.rows() << "x" << C.cols() << ", relative error " << error_c
            << "\n"
            << "y = A * x: " << y.size() << " entries, relative error " << error_y << "\n";
  return error_c < 1e-12 && error_y < 1e-12 ? 0 : 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    const char* path = argc > 1 ? argv[1] : SPADE_EXAMPLE_DATA "/cage10.mtx.gz";
    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(path);
    std::cout << "no GPU (" << why << "): running on the CPU\n";
    return run<spade::cpu>(path);
  } catch (const spade::error& e) {
    std::cerr << "00_quickstart: " << e.what() << "\n";
    return 1;
  }
}
