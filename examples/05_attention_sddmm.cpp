// Graph attention scores by SDDMM: for each edge (i, j) of a graph, score(i, j) = tanh(q_i·k_j/√d),
// computed only at the graph's edges (Q·Kᵀ is never formed: for n nodes it would be n² values),
// then each node aggregates its neighbours' values, H = S·V. Checked against the reference.
#include <cmath>
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>
#include <vector>

template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, spade::gpu>)
    return spade::to_gpu(m);
  else
    return m;
}

template <class Space>
int run(const spade::csr<float, spade::cpu>& graph) {
  const spade::index_t n = graph.rows();
  constexpr spade::index_t d = 64;
  // The graph's pattern with unit weights: attention decides the weights.
  const std::vector<float> ones(static_cast<std::size_t>(graph.nnz()), 1.0f);
  const auto A = to_space<Space>(spade::csr<float, spade::cpu>(
      n, n, std::vector<spade::index_t>(graph.row_ptr().begin(), graph.row_ptr().end()),
      std::vector<spade::index_t>(graph.col_idx().begin(), graph.col_idx().end()), ones));
  const auto Q = to_space<Space>(spade::random_dense<float>(n, d, 1));  // queries
  const auto K = to_space<Space>(spade::random_dense<float>(n, d, 2));  // keys
  const auto V = to_space<Space>(spade::random_dense<float>(n, d, 3));  // values

  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  auto scores = spade::tanh(spade::cwise_product(A, Q * spade::transpose(K)) * scale);
  std::cout << spade::explain(spade::cwise_product(A, Q * spade::transpose(K)));
  const spade::csr<float, Space> S = scores;  // SDDMM, then tanh on the stored values
  const spade::dense<float, Space> H = S * V;

  const Eigen::MatrixXf got = spade::to_eigen(H);
  const Eigen::MatrixXf want = spade::to_eigen(spade::reference(scores * V));
  const double error = (got - want).norm() / want.norm();
  std::cout << "attention on " << n << " nodes, " << A.nnz() << " edges, d = " << d
            << ": relative error of H vs reference " << error << "\n";
  return error < 1e-5 ? 0 : 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    // A graph file if given, else an R-MAT graph of 2^12 nodes with 16 edges each on average.
    const auto graph = argc > 1 ? spade::read_matrix_market<float>(argv[1])
                                : spade::generate::rmat<float>(12, 16, 42);
    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(graph);
    std::cout << "no GPU (" << why << "): running on the CPU\n";
    return run<spade::cpu>(graph);
  } catch (const spade::error& e) {
    std::cerr << "05_attention_sddmm: " << e.what() << "\n";
    return 1;
  }
}
