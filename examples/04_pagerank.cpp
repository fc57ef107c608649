// PageRank by power iteration in Spade's element-wise algebra, next to the same iteration in Eigen:
// P = D⁻¹·A (each row of the graph divided by its out-degree, the pattern kept), then
// x ← d·Pᵀx + (1 − d·Σ(Pᵀx))/n, which sends the rank of pages without links (and the
// teleport) uniformly to all pages; stops when Σ|x_new − x| < 1e-10.
#include <cmath>
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>

#ifndef SPADE_EXAMPLE_DATA
#define SPADE_EXAMPLE_DATA "tests/data/matrices"
#endif

constexpr double damping = 0.85;
constexpr double tolerance = 1e-10;

template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, spade::gpu>)
    return spade::to_gpu(m);
  else
    return m;
}

/// The same iteration in Eigen (double, on the CPU): the ranks and the iteration count to match.
Eigen::VectorXd eigen_pagerank(const Eigen::SparseMatrix<double, Eigen::RowMajor>& a, int* steps) {
  const auto n = a.rows();
  Eigen::VectorXd out_degree = Eigen::VectorXd::Zero(n);
  for (Eigen::Index r = 0; r < n; ++r)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(a, r); it; ++it)
      out_degree[r] += it.value();
  Eigen::SparseMatrix<double, Eigen::RowMajor> p = a;
  for (Eigen::Index r = 0; r < n; ++r)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(p, r); it; ++it)
      it.valueRef() /= out_degree[r];
  Eigen::VectorXd x = Eigen::VectorXd::Constant(n, 1.0 / static_cast<double>(n));
  for (*steps = 0; *steps < 1000; ++*steps) {
    const Eigen::VectorXd y = p.transpose() * x;
    const Eigen::VectorXd next =
        damping * y +
        Eigen::VectorXd::Constant(n, (1 - damping * y.sum()) / static_cast<double>(n));
    const double change = (next - x).cwiseAbs().sum();
    x = next;
    if (change < tolerance) break;
  }
  return x;
}

template <class Space>
int run(const spade::csr<double, spade::cpu>& graph) {
  const spade::index_t n = graph.rows();
  const auto A = to_space<Space>(graph);
  // Row-stochastic P: each row scaled by 1/out-degree in one pass, the pattern kept.
  const spade::vector<double, Space> inverse_degree = spade::inverse(spade::row_sums(A));
  const spade::csr<double, Space> P = spade::as_diagonal(inverse_degree) * A;
  auto x = spade::vector<double, Space>::constant(n, 1.0 / static_cast<double>(n));
  spade::vector<double, Space> y, next;
  int steps = 0;
  for (; steps < 1000; ++steps) {
    y = spade::transpose(P) * x;
    const double kept = spade::sum(y);  // rank that followed links; the rest is redistributed
    next = damping * y + (1 - damping * kept) / static_cast<double>(n);
    const double change = spade::sum(spade::abs(next - x));
    x = next;
    if (change < tolerance) break;
  }
  int eigen_steps = 0;
  const Eigen::VectorXd want = eigen_pagerank(spade::to_eigen(graph), &eigen_steps);
  const Eigen::VectorXd got = spade::to_eigen(spade::to_cpu(x));
  const double error = (got - want).cwiseAbs().maxCoeff();
  Eigen::Index top = 0;
  got.maxCoeff(&top);
  std::cout << "PageRank on " << n << " pages, " << A.nnz() << " links: " << steps
            << " iterations (Eigen " << eigen_steps << "), highest rank " << got[top] << " at page "
            << top << ", largest difference from Eigen " << error << "\n";
  return error < 1e-12 && std::abs(steps - eigen_steps) <= 1 ? 0 : 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    // cage10: a 11397-node directed graph (DNA electrophoresis); its link weights are used as
    // they are (all positive).
    const char* path = argc > 1 ? argv[1] : SPADE_EXAMPLE_DATA "/cage10.mtx.gz";
    const auto graph = spade::read_matrix_market<double>(path);
    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(graph);
    std::cout << "no GPU (" << why << "): running on the CPU\n";
    return run<spade::cpu>(graph);
  } catch (const spade::error& e) {
    std::cerr << "04_pagerank: " << e.what() << "\n";
    return 1;
  }
}
