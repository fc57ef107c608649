// A graph-convolution layer, H = A·(X·W): the dense X·W (n×64 times 64×16) first, then the sparse
// adjacency A aggregates each node's neighbours. Written as one expression; Spade evaluates the
// inner product into a temporary, then runs the SpMM. Then the normalised layer with its
// nonlinearity, H = tanh(as_diagonal(inverse(row_sums(A))) * A * (X * W)).
#include <iostream>
#include <spade/spade.hpp>
#include <type_traits>

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
  auto A = to_space<Space>(graph);                                  // adjacency, n×n
  auto X = to_space<Space>(spade::random_dense<float>(n, 64, 1));   // node features, n×64
  auto W = to_space<Space>(spade::random_dense<float>(64, 16, 2));  // layer weights, 64×16

  auto layer = A * (X * W);  // the order of the brackets is the order of the work
  std::cout << spade::explain(layer);
  spade::dense<float, Space> H = layer;

  // Check against Eigen on the CPU; float sums over a row of A and 64 features: tolerance
  // scales with the longest row.
  const Eigen::MatrixXf got = spade::to_eigen(H);
  const Eigen::MatrixXf want = spade::to_eigen(spade::reference(layer));
  const double error = (got - want).norm() / want.norm();
  std::cout << "graph: " << n << " nodes, " << A.nnz() << " edges; H: " << H.rows() << "x"
            << H.cols() << ", relative error vs reference " << error << "\n";
  if (!(error < 1e-5)) return 1;

  // The normalised layer H = tanh(D⁻¹·|A|·(X·W)), D = diag(row sums of |A|): the row scaling
  // keeps |A|'s pattern (rows without edges stay empty, so their infinite 1/0 is never used),
  // X·W and the SpMM run as above, and tanh is one fused element-wise pass.
  const spade::csr<float, Space> weights = spade::abs(A);
  auto normalised =
      spade::tanh(spade::as_diagonal(spade::inverse(spade::row_sums(weights))) * weights * (X * W));
  const spade::dense<float, Space> H2 = normalised;
  const Eigen::MatrixXf got2 = spade::to_eigen(H2);
  const Eigen::MatrixXf want2 = spade::to_eigen(spade::reference(normalised));
  const double error2 = (got2 - want2).norm() / want2.norm();
  std::cout << "normalised layer tanh(D^-1 |A| (X W)): relative error vs reference " << error2
            << "\n";
  return error2 < 1e-5 ? 0 : 1;
}

int main(int argc, char** argv) {
  // A bad file or a failed device call ends the run with its message, not an abort.
  try {
    // A graph file if given (e.g. a SNAP graph in Matrix Market form), else an R-MAT graph of
    // 2^12 nodes with 16 edges each on average and the skewed degrees of real social graphs.
    const auto graph = argc > 1 ? spade::read_matrix_market<float>(argv[1])
                                : spade::generate::rmat<float>(12, 16, 42);
    std::string why;
    if (spade::device_available(&why)) return run<spade::gpu>(graph);
    std::cout << "no GPU (" << why << "): running on the CPU\n";
    return run<spade::cpu>(graph);
  } catch (const spade::error& e) {
    std::cerr << "03_gnn_layer: " << e.what() << "\n";
    return 1;
  }
}
