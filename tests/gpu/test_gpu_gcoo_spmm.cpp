// GPU suite for gcoo_spmm and gcoo_spmm_paper: every result against Eigen in double precision,
// outputs NaN-poisoned first, edge shapes, long groups cut into items, every real matrix, and
// the planner's use of the kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <spade/device/kernels.hpp>
#include <spade/spade.hpp>

#include "gpu/gpu_support.hpp"
#include "test_support.hpp"

namespace {

using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::testing::fresh_seed;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::splitmix64;

template <class T>
spade::dense<T, cpu> random_values(index_t rows, index_t cols, splitmix64& rng) {
  spade::dense<T, cpu> d(rows, cols);
  for (T& x : d.values())
    x = spade::testing::nonzero_value<T>(rng);
  return d;
}

template <class T>
spade::csr<double, cpu> widen(const spade::csr<T, cpu>& a, bool magnitude = false) {
  std::vector<double> v(a.values().begin(), a.values().end());
  if (magnitude)
    for (double& x : v)
      x = std::abs(x);
  return spade::csr<double, cpu>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), std::move(v));
}

template <class T>
spade::dense<double, cpu> widen(const spade::dense<T, cpu>& d, bool magnitude = false) {
  spade::dense<double, cpu> w(d.rows(), d.cols());
  for (std::size_t k = 0; k < d.values().size(); ++k)
    w.values()[k] = magnitude ? std::abs(double(d.values()[k])) : double(d.values()[k]);
  return w;
}

enum class kernel { ours, paper };

struct product_case {
  index_t group_size = 4;
  double alpha = 1;
  double beta = 0;
  int split_entries = 0;  // 0: the kernel's own choice
  kernel which = kernel::ours;
  int paper_block = 128;
};

/// Runs C = alpha·A·B + beta·C on the GPU and checks every element against the Eigen result in
/// double: |got − want| ≤ 8·eps(T)·(|alpha|·(|A|·|B|) + |beta|·|C|) + tiny, and no NaN.
template <class T>
void check_product(const spade::csr<T, cpu>& a, index_t n, const product_case& pc,
                   splitmix64& rng) {
  CAPTURE(a.rows());
  CAPTURE(a.cols());
  CAPTURE(a.nnz());
  CAPTURE(n);
  CAPTURE(pc.group_size);
  CAPTURE(pc.alpha);
  CAPTURE(pc.beta);
  CAPTURE(pc.split_entries);
  CAPTURE(static_cast<int>(pc.which));
  const auto b = random_values<T>(a.cols(), n, rng);
  const auto c0 = random_values<T>(a.rows(), n, rng);

  const auto product = spade::reference(widen(a) * widen(b));
  const auto magnitude = spade::reference(widen(a, true) * widen(b, true));

  const spade::gcoo<T, gpu> g = spade::convert<spade::gcoo>(spade::to_gpu(a), pc.group_size);
  REQUIRE(g.group_size() == pc.group_size);
  const spade::dense<T, gpu> bg = spade::to_gpu(b);
  spade::dense<T, cpu> start = c0;
  if (pc.beta == 0)
    std::fill(start.values().begin(), start.values().end(), std::numeric_limits<T>::quiet_NaN());
  spade::dense<T, gpu> cg = spade::to_gpu(start);
  if (pc.which == kernel::ours)
    spade::device::gcoo_spmm(T(pc.alpha), g, bg, T(pc.beta), cg, pc.split_entries);
  else
    spade::device::gcoo_spmm_paper(T(pc.alpha), g, bg, T(pc.beta), cg, pc.paper_block);
  const auto got = spade::to_cpu(cg);

  const double eps = std::numeric_limits<T>::epsilon();
  double worst = 0;
  std::size_t bad = 0;
  for (std::size_t k = 0; k < got.values().size(); ++k) {
    const double c_old = pc.beta == 0 ? 0.0 : double(c0.values()[k]);
    const double want = pc.alpha * product.values()[k] + pc.beta * c_old;
    const double bound =
        8 * eps * (std::abs(pc.alpha) * magnitude.values()[k] + std::abs(pc.beta * c_old)) +
        std::numeric_limits<T>::min();
    const double error = std::abs(double(got.values()[k]) - want);
    if (!(error <= bound)) {
      ++bad;
      worst = std::max(worst, std::isnan(error) ? INFINITY : error / bound);
    }
  }
  CAPTURE(worst);
  CHECK(bad == 0);
}

template <class T>
spade::csr<T, cpu> csr_of_triplets(index_t rows, index_t cols,
                                   std::vector<std::tuple<index_t, index_t, T>> triplets) {
  std::sort(triplets.begin(), triplets.end());
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0), col_idx;
  std::vector<T> values;
  for (const auto& [r, c, v] : triplets) {
    ++row_ptr[static_cast<std::size_t>(r) + 1];
    col_idx.push_back(c);
    values.push_back(v);
  }
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

}  // namespace

TEST_CASE_TEMPLATE("gcoo_spmm: the paper's 4x4 example, both kernels, every group size", T, float,
                   double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // Fig. 2 of the paper: A(0,0)=7, A(1,1)=10, A(2,0)=9, A(0,3)=8, A(3,2)=6, A(3,3)=3.
  const auto a = csr_of_triplets<T>(
      4, 4, {{0, 0, T(7)}, {1, 1, T(10)}, {2, 0, T(9)}, {0, 3, T(8)}, {3, 2, T(6)}, {3, 3, T(3)}});
  for (index_t p : {1, 2, 3, 4, 5})
    for (index_t n : {1, 4, 6})
      for (kernel k : {kernel::ours, kernel::paper})
        check_product(a, n, {p, 1.0, 0.0, 0, k, 32}, rng);
}

TEST_CASE_TEMPLATE("gcoo_spmm: edge shapes, group sizes, widths, alpha and beta", T, float,
                   double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const auto& s : spade::testing::spmm_edge_shapes)
    for (index_t p : {1, 2, 3, 4, 8, 13, 32})
      for (index_t n : {1, 3, 4, 32, 33, 128, 200}) {
        const auto a = random_csr<T>(s.m, s.k, s.density, rng, s.row_fraction);
        check_product(a, n, {p, 1.0, 0.0}, rng);
        check_product(a, n, {p, -0.75, 0.5}, rng);
      }
}

TEST_CASE_TEMPLATE("gcoo_spmm: 1000003 rows, an empty matrix and a matrix with no entries", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto tall = random_csr<T>(1000003, 3, 0.3, rng, 0.7);
  for (index_t p : {4, 32})
    for (index_t n : {4, 33})
      check_product(tall, n, {p, 1.5, 0.0}, rng);
  check_product(tall, 8, {4, 1.0, -1.0}, rng);
  const spade::csr<T, cpu> no_entries(40, 17);
  for (index_t n : {1, 32})
    for (double beta : {0.0, 2.0})
      for (kernel k : {kernel::ours, kernel::paper})
        check_product(no_entries, n, {4, 1.0, beta, 0, k}, rng);
}

TEST_CASE_TEMPLATE("gcoo_spmm: long groups cut into work items (partial sums, fixed order)", T,
                   float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // One row touching every column, beside short rows and empty ones.
  auto a = random_csr<T>(45, 5000, 0.002, rng, 0.5);
  {
    std::vector<index_t> row_ptr = a.row_ptr(), col_idx;
    std::vector<T> values;
    for (index_t i = 0; i < a.rows(); ++i) {
      if (i == 21) {
        for (index_t j = 0; j < a.cols(); ++j) {
          col_idx.push_back(j);
          values.push_back(spade::testing::nonzero_value<T>(rng));
        }
      } else {
        for (index_t q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) {
          col_idx.push_back(a.col_idx()[q]);
          values.push_back(a.values()[q]);
        }
      }
      row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
    }
    a = spade::csr<T, cpu>(a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                           std::move(values));
  }
  for (int split : {1, 7, 32, 256, 0})
    for (index_t p : {1, 4, 13})
      for (index_t n : {4, 33, 128}) {
        check_product(a, n, {p, 1.0, 0.0, split}, rng);
        check_product(a, n, {p, 0.5, -2.0, split}, rng);
      }
}

TEST_CASE_TEMPLATE("gcoo_spmm: one operand, repeated calls with changing split sizes and widths", T,
                   float, double) {
  // The split pieces of a window meet through an arrival counter that the last piece resets,
  // and each split size keeps its own cached schedule: a reused operand must stay right and
  // give bit-identical results when the same call repeats.
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto a = random_csr<T>(3001, 700, 0.05, rng, 0.1);
  const spade::gcoo<T, gpu> g = spade::convert<spade::gcoo>(spade::to_gpu(a), 4);
  const double eps = std::numeric_limits<T>::epsilon();
  for (index_t n : {32, 5, 128})
    for (int split : {7, 64, 7, 0, 1, 64}) {
      CAPTURE(n);
      CAPTURE(split);
      const auto b = random_values<T>(a.cols(), n, rng);
      const auto product = spade::reference(widen(a) * widen(b));
      const auto magnitude = spade::reference(widen(a, true) * widen(b, true));
      const spade::dense<T, gpu> bg = spade::to_gpu(b);
      std::vector<std::vector<T>> runs;
      for (int repeat = 0; repeat < 2; ++repeat) {
        spade::dense<T, cpu> start(a.rows(), n);
        std::fill(start.values().begin(), start.values().end(),
                  std::numeric_limits<T>::quiet_NaN());
        spade::dense<T, gpu> cg = spade::to_gpu(start);
        spade::device::gcoo_spmm(T(1), g, bg, T(0), cg, split);
        runs.push_back(spade::to_cpu(cg).values());
      }
      CHECK(runs[0] == runs[1]);
      std::size_t bad = 0;
      for (std::size_t k = 0; k < runs[0].size(); ++k) {
        const double bound = 8 * eps * magnitude.values()[k] + std::numeric_limits<T>::min();
        if (!(std::abs(double(runs[0][k]) - product.values()[k]) <= bound)) ++bad;
      }
      CHECK(bad == 0);
    }
}

TEST_CASE_TEMPLATE("gcoo_spmm_paper: block sizes and group sizes up to 32", T, float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a = random_csr<T>(100, 70, 0.1, rng, 0.8);
  for (int block : {32, 128, 256})
    for (index_t p : {1, 2, 4, 7, 8, 32})
      for (index_t n : {1, 33, 300})
        check_product(a, n, {p, 1.0, 0.5, 0, kernel::paper, block}, rng);
  const spade::gcoo<T, gpu> wide = spade::convert<spade::gcoo>(spade::to_gpu(a), index_t{33});
  spade::dense<T, gpu> b(70, 4), c(100, 4);
  CHECK_THROWS_AS(spade::device::gcoo_spmm_paper(T(1), wide, b, T(0), c), spade::invalid_matrix);
}

TEST_CASE_TEMPLATE("gcoo_spmm: mismatched shapes throw dimension_mismatch", T, float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto g = spade::convert<spade::gcoo>(spade::to_gpu(random_csr<T>(10, 6, 0.3, rng)));
  spade::dense<T, gpu> b(7, 3), c(10, 3), b_ok(6, 3), c_bad(9, 3);
  CHECK_THROWS_AS(spade::device::gcoo_spmm(T(1), g, b, T(0), c), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::device::gcoo_spmm(T(1), g, b_ok, T(0), c_bad), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::device::gcoo_spmm_paper(T(1), g, b, T(0), c), spade::dimension_mismatch);
}

TEST_CASE_TEMPLATE("gcoo_spmm: every real matrix, N = 32 (and 128 for the first few)", T, float,
                   double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  int count = 0;
  for (const auto& path : spade::testing::real_matrices()) {
    CAPTURE(path.string());
    const auto a = spade::read_matrix_market<T>(path);
    check_product(a, 32, {4, 1.0, 0.0}, rng);
    if (count++ < 4) {
      check_product(a, 128, {8, 1.0, 1.0}, rng);
      check_product(a, 33, {4, 1.0, 0.0, 0, kernel::paper}, rng);
    }
  }
  CHECK(count > 0);
}

TEST_CASE_TEMPLATE("planner: sparse x dense picks gcoo_spmm, explains it, and caches the gcoo", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a_host = random_csr<T>(300, 200, 0.02, rng);
  const auto b_host = random_values<T>(200, 64, rng);
  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const spade::dense<T, gpu> b = spade::to_gpu(b_host);
  // With the default thresholds 300 rows are too few for gcoo_spmm; lowered, it is chosen.
  const std::string default_plan = spade::explain(a * b);
  CAPTURE(default_plan);
  CHECK(default_plan.find("declined: gcoo_spmm: 300 rows < gcoo_min_rows") != std::string::npos);
  CHECK(default_plan.find("chosen: cusparse_spmm") != std::string::npos);
  const spade::thresholds saved = spade::tuning();
  spade::tuning().gcoo_min_rows = 100;
  const std::string plan = spade::explain(a * b);
  CAPTURE(plan);
  CHECK(plan.find("chosen: gcoo_spmm") != std::string::npos);
  const auto want = spade::reference(widen(a_host) * widen(b_host));
  auto close_to_want = [&](const spade::dense<T, cpu>& got) {
    REQUIRE(got.values().size() == want.values().size());
    for (std::size_t k = 0; k < want.values().size(); ++k)
      if (!(std::abs(double(got.values()[k]) - want.values()[k]) <=
            1e-4 * (1 + std::abs(want.values()[k]))))
        return false;
    return true;
  };
  const std::size_t before = spade::conversion_counter().load();
  spade::dense<T, gpu> c = a * b;
  CHECK(close_to_want(spade::to_cpu(c)));
  c = a * b;  // the gcoo conversion is cached on a
  CHECK(spade::conversion_counter().load() - before == 1);
  // Forced kernels, a col-major destination and a transposed (cached) B.
  const spade::dense<T, gpu> paper = spade::eval<spade::kernels::gcoo_spmm_paper>(a * b);
  CHECK(close_to_want(spade::to_cpu(paper)));
  const spade::dense<T, gpu> forced = spade::eval<spade::kernels::gcoo_spmm>(a * b);
  CHECK(close_to_want(spade::to_cpu(forced)));
  // A col-major destination: the planner declines gcoo_spmm and says why.
  spade::dense<T, gpu, spade::col_major> c_col(a.rows(), b.cols());
  c_col = a * b;
  CHECK(close_to_want(spade::convert<spade::dense<T, cpu>>(spade::to_cpu(c_col))));
  const spade::dense<T, gpu> bt = spade::to_gpu(
      spade::convert<spade::dense<T, cpu>>(spade::reference(spade::transpose(b_host))));
  spade::dense<T, gpu> c2 = a * spade::transpose(bt);
  CHECK(close_to_want(spade::to_cpu(c2)));
  // Narrow B: below gcoo_narrow_min_columns cuSPARSE, by threshold; from it on, the gcoo the
  // products above cached on a runs at once (gcoo_narrow_min_uses waits only for a conversion).
  const auto narrowest = static_cast<index_t>(spade::tuning().gcoo_narrow_min_columns);
  const spade::dense<T, gpu> too_narrow(200, narrowest - 1);
  const std::string too_narrow_plan = spade::explain(a * too_narrow);
  CAPTURE(too_narrow_plan);
  CHECK(too_narrow_plan.find("< gcoo_narrow_min_columns") != std::string::npos);
  CHECK(too_narrow_plan.find("chosen: cusparse_spmm") != std::string::npos);
  const spade::dense<T, gpu> narrow_b = spade::to_gpu(random_values<T>(200, narrowest, rng));
  const std::string narrow_plan = spade::explain(a * narrow_b);
  CAPTURE(narrow_plan);
  CHECK(narrow_plan.find("chosen: gcoo_spmm") != std::string::npos);
  const std::size_t narrow_before = spade::conversion_counter().load();
  const spade::dense<T, gpu> narrow_c = a * narrow_b;
  CHECK(spade::conversion_counter().load() == narrow_before);  // the cached gcoo
  const auto narrow_want = spade::reference(widen(a_host) * widen(spade::to_cpu(narrow_b)));
  const spade::dense<T, cpu> narrow_got = spade::to_cpu(narrow_c);
  REQUIRE(narrow_got.values().size() == narrow_want.values().size());
  std::size_t narrow_bad = 0;
  for (std::size_t k = 0; k < narrow_want.values().size(); ++k)
    if (!(std::abs(double(narrow_got.values()[k]) - narrow_want.values()[k]) <=
          1e-4 * (1 + std::abs(narrow_want.values()[k]))))
      ++narrow_bad;
  CHECK(narrow_bad == 0);
  // A skewed matrix: one row far longer than the mean.
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < 300; ++i) {
    const index_t length = i == 7 ? 200 : (i % 3 == 0 ? 1 : 0);
    for (index_t j = 0; j < length; ++j) {
      col_idx.push_back(j);
      values.push_back(T(1));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  const spade::csr<T, gpu> skewed =
      spade::to_gpu(spade::csr<T, cpu>(300, 200, row_ptr, col_idx, values));
  CHECK(spade::explain(skewed * b).find("declined: gcoo_spmm: longest row 200 >") !=
        std::string::npos);
  spade::tuning() = saved;
}

TEST_CASE_TEMPLATE("sparse_view on the gpu: dense -> gcoo once, then gcoo_spmm", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // 3001 rows at 2% density, a third of them empty.
  const auto sparse = random_csr<T>(3001, 500, 0.02, rng, 0.66);
  const auto d_host = spade::convert<spade::dense<T, cpu>>(sparse);
  const auto b_host = random_values<T>(500, 64, rng);
  const spade::dense<T, gpu> d = spade::to_gpu(d_host);
  const spade::dense<T, gpu> b = spade::to_gpu(b_host);
  const std::string plan = spade::explain(spade::sparse_view(d) * b);
  CAPTURE(plan);
  CHECK(plan.find("sparse view") != std::string::npos);
  CHECK(plan.find("chosen: gcoo_spmm") != std::string::npos);
  const std::size_t before = spade::conversion_counter().load();
  spade::dense<T, gpu> c(3001, 64);
  c = spade::sparse_view(d) * b;
  c = spade::sparse_view(d) * b;
  CHECK(spade::conversion_counter().load() - before == 0);  // explain made it; cached on d
  const auto want = spade::reference(widen(sparse) * widen(b_host));
  const auto magnitude = spade::reference(widen(sparse, true) * widen(b_host, true));
  const auto got = spade::to_cpu(c);
  const double eps = std::numeric_limits<T>::epsilon();
  std::size_t bad = 0;
  for (std::size_t k = 0; k < want.values().size(); ++k)
    if (!(std::abs(double(got.values()[k]) - want.values()[k]) <=
          8 * eps * magnitude.values()[k] + std::numeric_limits<T>::min()))
      ++bad;
  CHECK(bad == 0);
  // The planner's group size: fewer rows than 4 x the device's resident warps give p < 4.
  const spade::gcoo<T, gpu> g = spade::sparse_view(d);
  const auto& props = spade::default_context().properties();
  const std::int64_t warps = std::int64_t{props.sm_count} * props.max_threads_per_sm / 32;
  CHECK(g.group_size() == (3001 / 4 >= warps ? 4 : 3001 / 2 >= warps ? 2 : 1));
  CHECK(g.nnz() == sparse.nnz());
  // A view is never densified, whatever its density: D -> gcoo -> dense would be waste.
  const auto thick = random_csr<T>(200, 150, 0.3, rng);
  const spade::dense<T, gpu> thick_d = spade::to_gpu(spade::convert<spade::dense<T, cpu>>(thick));
  const spade::dense<T, gpu> thick_b = spade::to_gpu(random_values<T>(150, 64, rng));
  const std::string thick_plan = spade::explain(spade::sparse_view(thick_d) * thick_b);
  CAPTURE(thick_plan);
  CHECK(thick_plan.find("chosen: gcoo_spmm") != std::string::npos);
}

TEST_CASE_TEMPLATE("gcoo_spmm: arrival counters grow when one schedule meets more column tiles", T,
                   float, double) {
  // With C of at least 4 M elements the partial budget is C itself, so the schedule for a cut
  // is the same at N = 128 and N = 256 while the column tiles double (float: 1 -> 2).
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  auto a = random_csr<T>(40000, 300, 0.01, rng);
  {
    // Every 97th row touches all columns: long groups, split at 16 entries.
    std::vector<index_t> every_97th;
    for (index_t i = 0; i < a.rows(); i += 97)
      every_97th.push_back(i);
    a = spade::testing::with_long_rows(a, every_97th, a.cols(), rng);
  }
  const spade::gcoo<T, gpu> g = spade::convert<spade::gcoo>(spade::to_gpu(a), 4);
  const double eps = std::numeric_limits<T>::epsilon();
  for (index_t n : {128, 256, 128, 256}) {
    CAPTURE(n);
    const auto b = random_values<T>(a.cols(), n, rng);
    const auto product = spade::reference(widen(a) * widen(b));
    const auto magnitude = spade::reference(widen(a, true) * widen(b, true));
    spade::dense<T, cpu> start(a.rows(), n);
    std::fill(start.values().begin(), start.values().end(), std::numeric_limits<T>::quiet_NaN());
    spade::dense<T, gpu> cg = spade::to_gpu(start);
    const auto launch = spade::device::gcoo_spmm(T(1), g, spade::to_gpu(b), T(0), cg, 16);
    CHECK(launch.split_groups > 0);
    const auto got = spade::to_cpu(cg);
    std::size_t bad = 0;
    for (std::size_t k = 0; k < got.values().size(); ++k)
      if (!(std::abs(double(got.values()[k]) - product.values()[k]) <=
            8 * eps * magnitude.values()[k] + std::numeric_limits<T>::min()))
        ++bad;
    CHECK(bad == 0);
  }
}

TEST_CASE_TEMPLATE(
    "planner: gcoo_spmm for wide B on short rows (in double from N = 64), cuSPARSE for narrow B", T,
    float, double) {
  auto density_of = [](const auto& m) {
    return static_cast<double>(m.nnz()) / (static_cast<double>(m.rows()) * m.cols());
  };
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // 9000 rows of about 6 entries: above gcoo_wide_min_rows, below gcoo_wide_max_mean_row.
  const auto a_host = random_csr<T>(9000, 9000, 6.0 / 9000, rng);
  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const spade::dense<T, gpu> wide = spade::to_gpu(random_values<T>(9000, 128, rng));
  const spade::dense<T, gpu> narrow = spade::to_gpu(random_values<T>(9000, 64, rng));
  const std::string wide_plan = spade::explain(a * wide);
  const std::string narrow_plan = spade::explain(a * narrow);
  CAPTURE(wide_plan);
  CAPTURE(narrow_plan);
  CHECK(wide_plan.find("chosen: gcoo_spmm") != std::string::npos);
  if constexpr (std::is_same_v<T, double>) {
    // In double the rule holds from gcoo_fp64_wide_columns (64).
    CHECK(narrow_plan.find("chosen: gcoo_spmm") != std::string::npos);
    const spade::dense<T, gpu> narrower = spade::to_gpu(random_values<T>(9000, 32, rng));
    const std::string narrower_plan = spade::explain(a * narrower);
    CAPTURE(narrower_plan);
    CHECK(narrower_plan.find("< gcoo_fp64_wide_columns") != std::string::npos);
    CHECK(narrower_plan.find("chosen: cusparse_spmm") != std::string::npos);
  } else {
    CHECK(narrow_plan.find("< gcoo_wide_columns") != std::string::npos);
    CHECK(narrow_plan.find("chosen: cusparse_spmm") != std::string::npos);
  }
  // 5000 rows of about 20 entries: too few and too long for the wide rule, enough for the
  // widest B.
  const auto long_rows = spade::to_gpu(random_csr<T>(5000, 5000, 20.0 / 5000, rng));
  const spade::dense<T, gpu> widest = spade::to_gpu(random_values<T>(5000, 512, rng));
  const spade::dense<T, gpu> b128 = spade::to_gpu(random_values<T>(5000, 128, rng));
  const std::string widest_plan = spade::explain(long_rows * widest);
  const std::string b128_plan = spade::explain(long_rows * b128);
  CAPTURE(widest_plan);
  CAPTURE(b128_plan);
  if constexpr (std::is_same_v<T, double>) {
    // Rows of 20 > gcoo_fp64_wide_max_mean_row: in double cuSPARSE keeps them.
    CHECK(widest_plan.find("declined: gcoo_spmm: double with N = 512") != std::string::npos);
    CHECK(widest_plan.find("chosen: cusparse_spmm") != std::string::npos);
  } else {
    CHECK(widest_plan.find("chosen: gcoo_spmm") != std::string::npos);
  }
  CHECK(b128_plan.find("declined: gcoo_spmm: 5000 rows < gcoo_min_rows") != std::string::npos);
  CHECK(b128_plan.find("chosen: cusparse_spmm") != std::string::npos);
  // Density 0.12: sparse for N = 512, densified for GEMM from densify_wide_columns on.
  const auto thick = spade::to_gpu(random_csr<T>(300, 300, 0.12, rng));
  REQUIRE(density_of(thick) < spade::tuning().densify_density);
  REQUIRE(density_of(thick) >= spade::tuning().densify_density_wide);
  const spade::dense<T, gpu> b_wide(300,
                                    static_cast<index_t>(spade::tuning().densify_wide_columns));
  const spade::dense<T, gpu> b_512(300, 512);
  const std::string gemm_plan = spade::explain(thick * b_wide);
  CAPTURE(gemm_plan);
  CHECK(gemm_plan.find("densify_density_wide") != std::string::npos);
  CHECK(gemm_plan.find("chosen: cublas_gemm") != std::string::npos);
  CHECK(spade::explain(thick * b_512).find("chosen: cublas_gemm") == std::string::npos);
}

TEST_CASE_TEMPLATE(
    "planner: narrow B over a large regular A runs gcoo_spmm from the "
    "gcoo_narrow_min_uses-th product on",
    T, float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // 80³ = 512000 rows of the 7-point stencil: gcoo_min_rows and the spread rule hold, and
  // ellr_spmv declines N = 16 on more rows than an H100's or H200's 270336 resident threads.
  const auto a_host = spade::generate::stencil7<T>(80, 80, 80);
  REQUIRE(a_host.rows() >= spade::tuning().gcoo_min_rows);
  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const auto b_host = random_values<T>(a.cols(), 16, rng);
  const spade::dense<T, gpu> b = spade::to_gpu(b_host);
  const auto want = spade::reference(widen(a_host) * widen(b_host));
  const auto magnitude = spade::reference(widen(a_host, true) * widen(b_host, true));
  const T eps = std::numeric_limits<T>::epsilon();
  auto bad_entries = [&](const spade::dense<T, gpu>& c) {
    const spade::dense<T, cpu> got = spade::to_cpu(c);
    std::size_t bad = 0;
    for (std::size_t k = 0; k < want.values().size(); ++k)
      if (!(std::abs(double(got.values()[k]) - want.values()[k]) <=
            8 * eps * magnitude.values()[k] + std::numeric_limits<T>::min()))
        ++bad;
    return bad;
  };
  auto poisoned = [&] {
    spade::dense<T, cpu> nan(a.rows(), b.cols());
    std::fill(nan.values().begin(), nan.values().end(), std::numeric_limits<T>::quiet_NaN());
    return spade::dense<T, gpu>(spade::to_gpu(nan));
  };
  const long min_uses = spade::tuning().gcoo_narrow_min_uses;
  REQUIRE(min_uses >= 1);
  const std::size_t before = spade::conversion_counter().load();
  for (long use = 1; use < min_uses; ++use) {
    CAPTURE(use);
    const std::string plan = spade::explain(a * b);
    CAPTURE(plan);
    CHECK(plan.find("declined: gcoo_spmm: N = 16 < gcoo_min_columns 32 and product " +
                    std::to_string(use) + " with this operand < gcoo_narrow_min_uses") !=
          std::string::npos);
    CHECK(plan.find("chosen: cusparse_spmm") != std::string::npos);
    spade::dense<T, gpu> c = poisoned();
    c = a * b;
    CHECK(bad_entries(c) == 0);
  }
  CHECK(spade::conversion_counter().load() == before);  // nothing converted yet
  const std::string plan = spade::explain(a * b);
  CAPTURE(plan);
  CHECK(plan.find("chosen: gcoo_spmm") != std::string::npos);
  spade::dense<T, gpu> c = poisoned();
  c = a * b;
  CHECK(bad_entries(c) == 0);
  CHECK(spade::conversion_counter().load() - before == 1);  // converted once, then cached
  c = a * b;
  CHECK(bad_entries(c) == 0);
  CHECK(spade::conversion_counter().load() - before == 1);
}
