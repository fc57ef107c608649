// A user program that uses every operation of the API contract (../shared/API.md) on cpu and gpu
// types, in float (and double too with -DSPADE_BENCH_BOTH_SCALARS): bench/compile_time.sh times
// how long g++ -O2 takes to build it (target: 10 s). It also runs: the cpu part always, the gpu
// part when a GPU is present.
// Every format of the contract is converted to at least once (gcoo, ellr and tiled since
// 2026-11-23: the compile-time figures in docs/benchmarks/README.md predate them).
#include <cstdio>
#include <filesystem>
#include <string>
#include <type_traits>

#include <spade/spade.hpp>

namespace {

template <class T, class Space>
double exercise(std::uint64_t seed) {
  using dense_t = spade::dense<T, Space>;
  using dense_cm = spade::dense<T, Space, spade::col_major>;
  using vector_t = spade::vector<T, Space>;
  using csr_t = spade::csr<T, Space>;
  using coo_t = spade::coo<T, Space>;
  constexpr bool on_gpu = std::is_same_v<Space, spade::gpu>;
  auto place = [](const auto& host) {
    if constexpr (on_gpu)
      return spade::to_gpu(host);
    else
      return host;
  };
  const spade::index_t n = 64;

  // Moving data: generators, Eigen, Matrix Market, spaces, formats.
  const csr_t a = place(spade::random_sparse<T>(n, n, 0.05, seed));
  const csr_t s = place(spade::random_sparse<T>(n, n, 0.1, seed + 1));
  const dense_t d = place(spade::random_dense<T>(n, n, seed + 2));
  const vector_t x = place(spade::random_vector<T>(n, seed + 3));
  const vector_t w = place(spade::random_vector<T>(n, seed + 4));
  const auto eigen_sparse = spade::to_eigen(a);
  const auto eigen_dense = spade::to_eigen(d);
  const auto eigen_vector = spade::to_eigen(x);
  const csr_t a2 = place(spade::from_eigen(eigen_sparse));
  const dense_t d2 = place(spade::from_eigen(eigen_dense));
  const vector_t x2 = place(spade::from_eigen(eigen_vector));
  const auto file = std::filesystem::temp_directory_path() /
                    ("spade_every_operation_" + std::to_string(seed) + ".mtx");
  spade::write_matrix_market(file, spade::to_cpu(a));
  const csr_t a3 = place(spade::read_matrix_market<T>(file));
  std::filesystem::remove(file);
  const coo_t c = spade::convert<spade::coo>(a);
  const csr_t c2 = spade::convert<spade::csr>(c);
  const dense_t ad = spade::convert<spade::dense>(a);
  const dense_cm dcm = spade::convert<dense_cm>(d);
  const csr_t back = spade::convert<spade::csr>(ad);
  const auto grouped = spade::convert<spade::gcoo>(a);
  const auto padded = spade::convert<spade::ellr>(a);
  const auto tiles = spade::convert<spade::tiled>(a);

  // Products of every supported pairing, sums, scaling, transposition.
  dense_t dd = d * d2;
  dense_t sd = a * d;
  dense_t ds = d * a2;
  dense_t cd = c * dcm;
  vector_t sx = a * x;
  vector_t dx = d * x2;
  csr_t ss = a * s;
  csr_t cs = c * spade::transpose(s);
  csr_t tt = tiles * tiles;
  dense_t gd = grouped * d;
  vector_t ex = padded * x;
  dense_t sum = d + d2;
  dense_t diff = d - T(2) * d2;
  csr_t ssum = a + s;
  csr_t sdiff = a3 - c2 * T(0.5);
  vector_t xsum = x - w;
  dense_t t = spade::transpose(d) * spade::transpose(a);

  // Fused forms (one kernel call each) and eval.
  dd = T(2) * (d * d2) + T(0.5) * dd;
  sx = T(2) * (a * x) + T(-1) * sx;
  xsum = T(3) * x + T(2) * w;
  const auto e = spade::eval(a * d + ds);
  const auto r = spade::eval(spade::transpose(a) * x);

  // Planning: the compile-time plan, explain, a forced kernel, the reference.
  using plan = spade::plan_of<decltype(a * d)>;
  using forced =
      std::conditional_t<on_gpu, spade::kernels::cusparse_spmm, spade::kernels::eigen_product>;
  static_assert(plan::template has_kernel<forced>);
  const std::string why = spade::explain(T(2) * (a * d) + sd);
  const dense_t f = spade::eval<forced>(a * d);
  const auto ref = spade::reference(a * d);

  // Element-wise algebra (one fused kernel each on the gpu), reductions and diagonals.
  dense_t fused = T(2) * spade::exp(-spade::square(d)) + spade::cwise_product(d, d2) / T(3) - T(1);
  vector_t xf = spade::abs(x) + spade::cwise_max(w, T(0)) + spade::pow(spade::abs(x), T(1.5));
  const csr_t kept = spade::sqrt(spade::abs(a)) + spade::cwise_product(a, d);
  const vector_t sums = spade::row_sums(spade::abs(d)) + spade::col_sums(a) + spade::diagonal(d);
  const csr_t scaled = spade::as_diagonal(sums) * a * spade::as_diagonal(x);
  const T reduced = spade::sum(fused) + spade::mean(xf) + spade::max_coeff(kept) +
                    spade::min_coeff(sums) + spade::squared_norm(spade::tanh(x)) +
                    spade::sum(scaled) + spade::norm(fused);

  // Scalars.
  const T dots =
      spade::dot(x, w) + spade::dot(a * x, w) + spade::norm(sx) + spade::norm(x - w) + reduced;

  // Errors.
  int caught = 0;
  try {
    const vector_t bad = place(spade::random_vector<T>(n + 1, seed));
    vector_t y = a * bad;
  } catch (const spade::dimension_mismatch&) {
    ++caught;
  } catch (const spade::error&) {
    ++caught;
  }

  const auto total =
      spade::to_eigen(e).sum() + spade::to_eigen(t).sum() + spade::to_eigen(f).sum() +
      spade::to_eigen(ref).sum() + spade::to_eigen(r).sum() + spade::to_eigen(cd).sum() +
      spade::to_eigen(dx).sum() + spade::to_eigen(ss).sum() + spade::to_eigen(cs).sum() +
      spade::to_eigen(sum).sum() + spade::to_eigen(diff).sum() + spade::to_eigen(ssum).sum() +
      spade::to_eigen(sdiff).sum() + spade::to_eigen(xsum).sum() + spade::to_eigen(back).sum() +
      spade::to_eigen(dd).sum() + spade::to_eigen(tt).sum() + spade::to_eigen(gd).sum() +
      spade::to_eigen(ex).sum();
  return static_cast<double>(total) + static_cast<double>(dots) + caught +
         static_cast<double>(why.size() + a.nnz() + c.nnz() + x.size() + d.rows() + d.cols());
}

}  // namespace

int main() {
  std::printf("cpu fp32: %g\n", exercise<float, spade::cpu>(1));
#ifdef SPADE_BENCH_BOTH_SCALARS
  std::printf("cpu fp64: %g\n", exercise<double, spade::cpu>(2));
#endif
  std::string why;
  if (!spade::device_available(&why)) {
    std::printf("gpu: skipped (%s)\n", why.c_str());
    return 0;
  }
  std::printf("gpu fp32: %g\n", exercise<float, spade::gpu>(1));
#ifdef SPADE_BENCH_BOTH_SCALARS
  std::printf("gpu fp64: %g\n", exercise<double, spade::gpu>(2));
#endif
}
