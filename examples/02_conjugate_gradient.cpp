// Conjugate gradient in Spade vector algebra, step for step as Eigen's ConjugateGradient does it
// (Jacobi preconditioner as_diagonal(inverse(diagonal(A))), ‖r‖ < tol·‖b‖), run next to Eigen's
// for comparison.
#include <Eigen/IterativeLinearSolvers>
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>

// The bundled matrices: CMake passes the source tree's folder, so the example runs from any
// working directory; compiled by hand, it reads them relative to the repository root.
#ifndef SPADE_EXAMPLE_DATA
#define SPADE_EXAMPLE_DATA "tests/data/matrices"
#endif

using sparse_eigen = Eigen::SparseMatrix<double, Eigen::RowMajor>;
constexpr double tolerance = 1e-10;

template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, spade::gpu>)
    return spade::to_gpu(m);
  else
    return m;
}

template <class Space>
int run(const sparse_eigen& a_e, const Eigen::VectorXd& b_e, int eigen_iterations) {
  auto A = to_space<Space>(spade::from_eigen(a_e));
  auto b = to_space<Space>(spade::from_eigen(b_e));
  // Jacobi: M⁻¹ = diag(A)⁻¹, evaluated once; z = M⁻¹·r is then one element-wise kernel.
  const spade::vector<double, Space> inverse_diagonal = spade::inverse(spade::diagonal(A));
  const auto M = spade::as_diagonal(inverse_diagonal);
  std::cout << spade::explain(A * b);  // the SpMV every iteration runs

  spade::vector<double, Space> x(A.cols());  // x₀ = 0
  spade::vector<double, Space> r = b - A * x, z = M * r, p = z, q;
  double rz = spade::dot(r, z);
  const double b_norm = spade::norm(b);
  double residual = spade::norm(r);
  int k = 0;  // counted as Eigen counts: iterations that did not stop
  for (; residual >= tolerance * b_norm && k < 2 * eigen_iterations; ++k) {
    q = A * p;
    const double alpha = rz / spade::dot(p, q);
    x = x + alpha * p;  // z = a·x + b·y forms: one kernel on the GPU
    r = r - alpha * q;
    if ((residual = spade::norm(r)) < tolerance * b_norm) break;
    z = M * r;
    const double rz_next = spade::dot(r, z);
    p = z + (rz_next / rz) * p;
    rz = rz_next;
  }
  // After the loop: the conversion the planner made at the second product is reused (a cache
  // hit), so the solver paid it once.
  std::cout << "after the loop:\n" << spade::explain(A * p);
  std::cout << "Spade CG: " << k << " iterations, relative residual " << residual / b_norm
            << " (recomputed " << spade::norm(b - A * x) / b_norm << ")\n";
  if (residual < tolerance * b_norm) return 0;
  std::cout << "Spade CG did not reach " << tolerance << " within 2x Eigen's iterations\n";
  return 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    // bcsstk03: a 112x112 symmetric positive definite stiffness matrix (condition number ~1e6).
    const char* path = argc > 1 ? argv[1] : SPADE_EXAMPLE_DATA "/bcsstk03.mtx.gz";
    const sparse_eigen a_e = spade::to_eigen(spade::read_matrix_market<double>(path));
    const Eigen::VectorXd b_e =
        spade::to_eigen(spade::random_vector<double>(static_cast<spade::index_t>(a_e.rows()), 3));

    Eigen::ConjugateGradient<sparse_eigen, Eigen::Lower | Eigen::Upper> eigen_cg(a_e);
    eigen_cg.setTolerance(tolerance);
    const Eigen::VectorXd x_e = eigen_cg.solve(b_e);
    const auto eigen_iterations = static_cast<int>(eigen_cg.iterations());
    std::cout << "Eigen CG: " << eigen_iterations << " iterations, relative residual "
              << eigen_cg.error() << " (recomputed " << (b_e - a_e * x_e).norm() / b_e.norm()
              << ")\n";

    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(a_e, b_e, eigen_iterations);
    std::cout << "no GPU (" << why << "): running Spade's CG on the CPU\n";
    return run<spade::cpu>(a_e, b_e, eigen_iterations);
  } catch (const spade::error& e) {
    std::cerr << "02_conjugate_gradient: " << e.what() << "\n";
    return 1;
  }
}
