// GPU suite for ELLPACK-R: conversions bit for bit, ellr_spmv/ellr_spmm vs Eigen, the planner.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spade/device/convert.hpp>
#include <spade/device/kernels.hpp>
#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "support/ellr_reference.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::ellr_layout;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::testing::bits_equal;
using spade::testing::check_same;
using spade::testing::contains;
using spade::testing::ellr_by_definition;
using spade::testing::expected_ellr;
using spade::testing::fresh_seed;
using spade::testing::longest_row;
using spade::testing::no_device;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::row_length;
using spade::testing::splitmix64;
using spade::testing::with_long_rows;

namespace {

using spade::testing::tuning_restorer;

// The lanes the planner gives `a` on this device: detail::ellr_threads_per_row (its values are
// pinned by hand in tests/cpu/test_ellr.cpp).
template <class T>
index_t planned_lanes(const spade::csr<T, cpu>& a) {
  const auto& device = spade::default_context().properties();
  return spade::detail::ellr_threads_per_row(
      a.rows(), static_cast<double>(a.nnz()) / a.rows(),
      std::int64_t{device.sm_count} * device.max_threads_per_sm);
}

std::string layout_text(const ellr_layout& layout) {
  return "{" + std::to_string(layout.slice_height) + ", " + std::to_string(layout.sort_window) +
         ", " + std::to_string(layout.lanes) + "}";
}

// Fills `bytes` of the context's pool with all-ones bits (NaN as float or double, -1 as an index)
// and gives them back, so the conversion that runs next most likely receives them: an element it
// forgets to write then shows up as NaN or -1.
void poison_pool(std::size_t bytes) {
  if (bytes == 0) return;
  const spade::device_buffer<unsigned char> poison(std::vector<unsigned char>(bytes, 0xff));
}

// ---- inputs -----------------------------------------------------------------------------------

// A csr whose row i holds lengths[i] entries at columns 0, 1, ... (random values).
template <class T>
spade::csr<T, cpu> csr_with_row_lengths(index_t cols, const std::vector<index_t>& lengths,
                                        splitmix64& rng) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (const index_t n : lengths) {
    for (index_t j = 0; j < n; ++j) {
      col_idx.push_back(j);
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(static_cast<index_t>(lengths.size()), cols, std::move(row_ptr),
                            std::move(col_idx), std::move(values));
}

template <class T>
struct named_csr {
  std::string name;
  spade::csr<T, cpu> a;
};

// The edge shapes every conversion and product case runs: empty extents, one element, a warp
// ± 1, a tall matrix with empty rows, only empty rows, one very long row, several densities
// (density 1.0 with some empty rows: two lengths only, so the stable sort is what orders them),
// and enough rows for sort windows of 1024 and 2048 to end mid-slice. Some stored values are
// explicit zeros: a conversion moves the pattern, not the nonzeros.
template <class T>
std::vector<named_csr<T>> edge_matrices(splitmix64& rng, bool with_tall) {
  std::vector<named_csr<T>> m;
  m.push_back({"0x0", spade::csr<T, cpu>(0, 0)});
  m.push_back({"0x5", spade::csr<T, cpu>(0, 5)});
  m.push_back({"5x0", spade::csr<T, cpu>(5, 0)});
  m.push_back({"1x1", random_csr<T>(1, 1, 1.0, rng)});
  m.push_back({"31x33", random_csr<T>(31, 33, 0.3, rng, 0.9, 0.05)});
  m.push_back({"33x31", random_csr<T>(33, 31, 0.3, rng, 0.8, 0.05)});
  // SPADE_SKIP_TALL: leave the million-row matrix out (runs under racecheck).
  if (with_tall && std::getenv("SPADE_SKIP_TALL") == nullptr)
    m.push_back({"1000003x5, some rows empty", random_csr<T>(1000003, 5, 0.25, rng, 0.6)});
  m.push_back({"70x20 without entries", spade::csr<T, cpu>(70, 20)});
  m.push_back({"300x20000, row 117 full",
               with_long_rows(random_csr<T>(300, 20000, 0.0005, rng, 0.8), {117}, 20000, rng)});
  for (const double density : {0.0, 0.1, 0.5, 1.0})
    m.push_back({"257x95 at density " + std::to_string(density),
                 random_csr<T>(257, 95, density, rng, 0.8, 0.05)});
  m.push_back({"4100x40, windows cut mid-slice", random_csr<T>(4100, 40, 0.1, rng, 0.9)});
  return m;
}

// The paper's arrays of `a` (rows × width column-major, entry k of row r at k·rows + r), made
// by hand for the checked constructor: an ellr whose slice is exactly `rows` tall.
template <class T>
spade::ellr<T, cpu> paper_arrays_by_hand(const spade::csr<T, cpu>& a) {
  const index_t width = longest_row(a);
  const auto slots = static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(width);
  std::vector<T> values(slots, T(0));
  std::vector<index_t> col_idx(slots, 0), lengths;
  for (index_t r = 0; r < a.rows(); ++r) {
    lengths.push_back(row_length(a, r));
    for (index_t k = 0; k < row_length(a, r); ++k) {
      const auto slot = static_cast<std::size_t>(std::int64_t{k} * a.rows() + r);
      values[slot] = a.values()[static_cast<std::size_t>(a.row_ptr()[r] + k)];
      col_idx[slot] = a.col_idx()[static_cast<std::size_t>(a.row_ptr()[r] + k)];
    }
  }
  return spade::ellr<T, cpu>(a.rows(), a.cols(), width, std::move(values), std::move(col_idx),
                             std::move(lengths));
}

// ---- comparisons ------------------------------------------------------------------------------

template <class T>
void check_same_ellr(const spade::ellr<T, gpu>& got, const spade::ellr<T, cpu>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.nnz() == want.nnz());
  CHECK(got.width() == want.width());
  CHECK(got.slice_height() == want.slice_height());
  CHECK(got.slices() == want.slices());
  CHECK(got.layout() == want.layout());
  CHECK(got.padded_size() == want.padded_size());
  CHECK(bits_equal(got.values().to_host(), want.values()));
  CHECK(got.col_idx().to_host() == want.col_idx());
  CHECK(got.row_lengths().to_host() == want.row_lengths());
  CHECK(got.slice_offsets().to_host() == want.slice_offsets());
  CHECK(got.row_order().to_host() == want.row_order());
}

template <class T>
void check_same_ellr(const spade::ellr<T, cpu>& got, const spade::ellr<T, cpu>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.nnz() == want.nnz());
  CHECK(got.width() == want.width());
  CHECK(got.slice_height() == want.slice_height());
  CHECK(got.layout() == want.layout());
  CHECK(bits_equal(got.values(), want.values()));
  CHECK(got.col_idx() == want.col_idx());
  CHECK(got.row_lengths() == want.row_lengths());
  CHECK(got.slice_offsets() == want.slice_offsets());
  CHECK(got.row_order() == want.row_order());
}

template <class T>
void check_definition(const spade::ellr<T, gpu>& got, const expected_ellr<T>& want) {
  CHECK(got.slice_height() == want.slice_height);
  CHECK(got.width() == want.width);
  CHECK(bits_equal(got.values().to_host(), want.values));
  CHECK(got.col_idx().to_host() == want.col_idx);
  CHECK(got.row_lengths().to_host() == want.row_lengths);
  CHECK(got.slice_offsets().to_host() == want.slice_offsets);
  CHECK(got.row_order().to_host() == want.row_order);
}

template <class T>
std::size_t ellr_bytes(std::int64_t slots, index_t rows) {
  return static_cast<std::size_t>(slots) * (sizeof(T) + sizeof(index_t)) +
         static_cast<std::size_t>(rows) * 2 * sizeof(index_t) + 64;
}

// csr → ellr on the GPU equals the host conversion and the definition; ellr → csr on the GPU
// gives `a` back, from the GPU's own result and from the uploaded host result independently.
template <class T>
void check_conversion(const spade::csr<T, cpu>& a, const spade::csr<T, gpu>& g,
                      ellr_layout layout) {
  const std::string layout_name = layout_text(layout);
  CAPTURE(layout_name);
  const spade::ellr<T, cpu> want = spade::host::csr_to_ellr(a, layout);
  poison_pool(ellr_bytes<T>(want.padded_size(), a.rows()));
  const spade::ellr<T, gpu> got = spade::device::csr_to_ellr(g, layout);
  check_same_ellr(got, want);
  check_definition(got, ellr_by_definition(a, layout));
  CHECK(got.layout() == layout);
  poison_pool(static_cast<std::size_t>(a.nnz()) * (sizeof(T) + sizeof(index_t)) +
              static_cast<std::size_t>(a.rows()) * 2 * sizeof(index_t) + 64);
  check_same(spade::to_cpu(spade::device::ellr_to_csr(got)), a);
  check_same(spade::to_cpu(spade::device::ellr_to_csr(spade::to_gpu(want))), a);
}

// ---- products: the reference and the check ------------------------------------------------------

template <class T>
spade::csr<double, cpu> widen(const spade::csr<T, cpu>& a, bool magnitude = false) {
  std::vector<double> v(a.values().begin(), a.values().end());
  if (magnitude)
    for (double& x : v)
      x = std::abs(x);
  return spade::csr<double, cpu>(a.rows(), a.cols(), a.row_ptr(), a.col_idx(), std::move(v));
}

// X (any layout, exact in double) as a row-major double matrix, or its magnitudes.
template <class T, class L>
spade::dense<double, cpu> widen(const spade::dense<T, cpu, L>& x, bool magnitude = false) {
  spade::dense<double, cpu> w(x.rows(), x.cols());
  for (index_t i = 0; i < x.rows(); ++i)
    for (index_t j = 0; j < x.cols(); ++j)
      w(i, j) = magnitude ? std::abs(double(x(i, j))) : double(x(i, j));
  return w;
}

template <class T>
spade::dense<T, cpu> as_column(const spade::vector<T, cpu>& x) {
  spade::dense<T, cpu> d(x.size(), 1);
  for (index_t i = 0; i < x.size(); ++i)
    d(i, 0) = x[i];
  return d;
}

// A·X in double by Eigen (spade::reference on widened copies), |A|·|X| for the error bound, and
// the entries of each row (the length of each sum).
struct product_reference {
  index_t rows = 0;
  index_t n = 0;
  spade::dense<double, cpu> value;
  spade::dense<double, cpu> magnitude;
  std::vector<index_t> terms;
};

template <class T, class L>
product_reference reference_product(const spade::csr<T, cpu>& a, const spade::dense<T, cpu, L>& x) {
  product_reference r;
  r.rows = a.rows();
  r.n = x.cols();
  r.value = spade::reference(widen(a) * widen(x));
  r.magnitude = spade::reference(widen(a, true) * widen(x, true));
  for (index_t i = 0; i < a.rows(); ++i)
    r.terms.push_back(row_length(a, i));
  return r;
}

// Elements of alpha·A·X + beta·Y0 that `got` has wrong: allowed is (terms + 2)·ε(T)·
// (|alpha|·(|A|·|X|) + |beta·Y0|) + the smallest normal T; NaN never passes. beta = 0 must
// ignore Y0 (poisoned with NaN by the callers).
template <class T, class Got, class Start>
std::size_t count_wrong(const product_reference& r, double alpha, double beta, Got&& got,
                        Start&& start, double& worst) {
  const double eps = std::numeric_limits<T>::epsilon();
  std::size_t bad = 0;
  for (index_t i = 0; i < r.rows; ++i)
    for (index_t v = 0; v < r.n; ++v) {
      const double y0 = beta == 0 ? 0.0 : double(start(i, v));
      const double want = alpha * r.value(i, v) + beta * y0;
      const double bound = (r.terms[static_cast<std::size_t>(i)] + 2) * eps *
                               (std::abs(alpha) * r.magnitude(i, v) + std::abs(beta * y0)) +
                           std::numeric_limits<T>::min();
      const double error = std::abs(double(got(i, v)) - want);
      if (!(error <= bound)) {
        ++bad;
        worst = std::max(worst, std::isnan(error) ? INFINITY : error / bound);
      }
    }
  return bad;
}

template <class T>
spade::vector<T, cpu> random_vector(index_t n, splitmix64& rng) {
  spade::vector<T, cpu> x(n);
  for (index_t i = 0; i < n; ++i)
    x[i] = spade::testing::nonzero_value<T>(rng);
  return x;
}

template <class T>
spade::vector<T, cpu> nan_vector(index_t n) {
  return spade::vector<T, cpu>(
      std::vector<T>(static_cast<std::size_t>(n), std::numeric_limits<T>::quiet_NaN()));
}

template <class T, class L>
spade::dense<T, cpu, L> random_matrix(index_t rows, index_t cols, splitmix64& rng) {
  spade::dense<T, cpu, L> d(rows, cols);
  for (T& x : d.values())
    x = spade::testing::nonzero_value<T>(rng);
  return d;
}

template <class T, class L>
spade::dense<T, cpu, L> nan_matrix(index_t rows, index_t cols) {
  spade::dense<T, cpu, L> d(rows, cols);
  std::fill(d.values().begin(), d.values().end(), std::numeric_limits<T>::quiet_NaN());
  return d;
}

struct scaling {
  double alpha;
  double beta;
};
// beta = 0 with a NaN y (must be ignored), and a general alpha/beta with a known y.
const std::vector<scaling> scalings = {{1.0, 0.0}, {-0.5, 2.0}};

// y = alpha·E·x + beta·y by ellr_spmv with `threads_per_row`, checked against the reference.
template <class T>
void check_spmv(const spade::ellr<T, gpu>& e, const spade::vector<T, gpu>& x,
                const product_reference& ref, int threads_per_row, scaling s, splitmix64& rng) {
  CAPTURE(threads_per_row);
  CAPTURE(s.alpha);
  CAPTURE(s.beta);
  const spade::vector<T, cpu> y0 =
      s.beta == 0 ? nan_vector<T>(e.rows()) : random_vector<T>(e.rows(), rng);
  spade::vector<T, gpu> y = spade::to_gpu(y0);
  const spade::device::ellr_spmv_launch launch =
      spade::device::ellr_spmv(T(s.alpha), e, x, T(s.beta), y, threads_per_row);
  if (e.rows() > 0) {
    if (threads_per_row > 0)
      CHECK(launch.threads_per_row == threads_per_row);
    else if (e.lanes() > 1)
      CHECK(launch.threads_per_row == e.lanes());
    else
      CHECK((launch.threads_per_row >= 1 && launch.threads_per_row <= 32 &&
             (launch.threads_per_row & (launch.threads_per_row - 1)) == 0));
    CHECK(launch.vectors_per_pass == 1);
    CHECK_FALSE(launch.wide_loads);
    CHECK_FALSE(launch.paired_loads);
  }
  const spade::vector<T, cpu> got = spade::to_cpu(y);
  REQUIRE(got.size() == e.rows());
  double worst = 0;
  const std::size_t bad = count_wrong<T>(
      ref, s.alpha, s.beta, [&](index_t i, index_t) { return got[i]; },
      [&](index_t i, index_t) { return y0[i]; }, worst);
  CAPTURE(worst);
  CHECK(bad == 0);
}

// A result of the planner (y = A * x and the like) against the reference, alpha 1 and beta 0.
template <class T>
bool matches(const spade::vector<T, gpu>& y, const product_reference& ref) {
  const spade::vector<T, cpu> got = spade::to_cpu(y);
  if (got.size() != ref.rows) return false;
  double worst = 0;
  return count_wrong<T>(
             ref, 1.0, 0.0, [&](index_t i, index_t) { return got[i]; },
             [](index_t, index_t) { return 0.0; }, worst) == 0;
}

template <class T, class L>
bool matches(const spade::dense<T, gpu, L>& y, const product_reference& ref) {
  const spade::dense<T, cpu, L> got = spade::to_cpu(y);
  if (got.rows() != ref.rows || got.cols() != ref.n) return false;
  double worst = 0;
  return count_wrong<T>(
             ref, 1.0, 0.0, [&](index_t i, index_t v) { return got(i, v); },
             [](index_t, index_t) { return 0.0; }, worst) == 0;
}

// The planner's state for a gpu csr operand: its product count and whether its ellr is cached.
template <class T>
long uses_of(const spade::csr<T, gpu>& a) {
  return spade::detail::product_uses_of(a).count;
}

template <class T>
bool ellr_cached(const spade::csr<T, gpu>& a) {
  return a.cache().template contains<spade::ellr<T, gpu>>();
}

std::size_t conversions() {
  return spade::conversion_counter().load();
}

}  // namespace

// ---- conversions ------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("gpu csr -> ellr equals the host's and the definition; ellr -> csr inverts it",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const std::vector<ellr_layout> layouts = {{},         {32, 0},    {32, 1024}, {4, 8},
                                            {1, 0},     {32, 2048}, {0, 0, 4},  {32, 1024, 8},
                                            {4, 8, 32}, {7, 0, 2}};
  for (const auto& [name, a] : edge_matrices<T>(rng, true)) {
    CAPTURE(name);
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    for (const ellr_layout& layout : layouts)
      check_conversion(a, g, layout);
    // The checked constructor's paper arrays: one slice exactly `rows` tall.
    if (a.rows() > 0 && a.rows() < 100000) {
      const spade::ellr<T, gpu> by_hand = spade::to_gpu(paper_arrays_by_hand(a));
      CHECK(by_hand.slice_height() == a.rows());
      check_same(spade::to_cpu(spade::device::ellr_to_csr(by_hand)), a);
    }
  }
  // One full row among short ones: the paper's layout pads every row to it; sorted into the
  // first slice it costs one slice of padding.
  const spade::csr<T, gpu> long_row =
      spade::to_gpu(with_long_rows(random_csr<T>(300, 20000, 0.0005, rng), {117}, 20000, rng));
  const spade::ellr<T, gpu> paper = spade::device::csr_to_ellr(long_row, ellr_layout{});
  CHECK(paper.width() == 20000);
  CHECK(paper.padded_size() == std::int64_t{320} * 20000);
  const spade::ellr<T, gpu> sorted = spade::device::csr_to_ellr(long_row, ellr_layout{32, 1024});
  CHECK(sorted.row_order().to_host()[0] == 117);
  CHECK(sorted.slice_offsets().to_host()[1] == std::int64_t{32} * 20000);
}

TEST_CASE_TEMPLATE("gpu csr -> ellr rejects layouts no conversion makes", T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const spade::csr<T, gpu> g = spade::to_gpu(random_csr<T>(40, 30, 0.2, rng));
  for (const ellr_layout bad :
       {ellr_layout{-1, 0}, ellr_layout{32, -4}, ellr_layout{0, 64}, ellr_layout{32, 48},
        ellr_layout{32, 4096}, ellr_layout{32, 1024, 3}, ellr_layout{0, 0, 64}}) {
    const std::string layout_name = layout_text(bad);
    CAPTURE(layout_name);
    CHECK_THROWS_AS((void)spade::device::csr_to_ellr(g, bad), spade::invalid_matrix);
  }
  // Still usable afterwards.
  CHECK(spade::device::csr_to_ellr(g, ellr_layout{4, 8}).nnz() == g.nnz());
}

// ---- ellr_spmv --------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("ellr_spmv vs Eigen: threads per row, layouts, alpha and beta, edge shapes", T,
                   float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const std::vector<ellr_layout> layouts = {{}, {32, 1024}, {4, 8}, {0, 0, 4}, {32, 1024, 32}};
  for (const auto& [name, a] : edge_matrices<T>(rng, true)) {
    CAPTURE(name);
    const bool tall = a.rows() > 100000;
    const spade::vector<T, cpu> x_host = random_vector<T>(a.cols(), rng);
    const product_reference ref = reference_product(a, as_column(x_host));
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    const spade::vector<T, gpu> x = spade::to_gpu(x_host);
    for (const ellr_layout& layout : layouts) {
      // A million rows: two layouts suffice.
      if (tall && !(layout == ellr_layout{} || layout == ellr_layout{32, 1024})) continue;
      const std::string layout_name = layout_text(layout);
      CAPTURE(layout_name);
      const spade::ellr<T, gpu> e = spade::device::csr_to_ellr(g, layout);
      for (const int threads : {0, 1, 2, 4, 8, 16, 32}) {
        if (tall && threads != 0 && threads != 1 && threads != 8) continue;
        for (const scaling s : scalings)
          check_spmv(e, x, ref, threads, s, rng);
      }
    }
    // The checked constructor's slice of exactly `rows` (not a multiple of 32).
    if (a.rows() > 0 && !tall) {
      const spade::ellr<T, gpu> by_hand = spade::to_gpu(paper_arrays_by_hand(a));
      for (const int threads : {0, 1, 8})
        check_spmv(by_hand, x, ref, threads, scalings[1], rng);
    }
  }
}

TEST_CASE_TEMPLATE("every real matrix: gpu csr -> ellr equals the host's, ellr_spmv equals Eigen",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // The paper's layout pads every row to the longest: skewed graphs would need gigabytes.
  constexpr double max_paper_slots = 3e7;
  std::size_t checked = 0, paper_skipped = 0;
  for (const std::filesystem::path& path : spade::testing::real_matrices()) {
    const std::string name = path.filename().string();
    CAPTURE(name);
    const auto a = spade::read_matrix_market<T>(path);
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    const double paper_slots = (a.rows() + 31.0) / 32 * 32 * longest_row(a);
    const bool paper_fits = paper_slots <= max_paper_slots;
    check_conversion(a, g, ellr_layout{32, 1024});
    if (paper_fits)
      check_conversion(a, g, ellr_layout{});
    else
      ++paper_skipped;

    const spade::vector<T, cpu> x_host = random_vector<T>(a.cols(), rng);
    const product_reference ref = reference_product(a, as_column(x_host));
    const spade::vector<T, gpu> x = spade::to_gpu(x_host);
    const spade::ellr<T, gpu> e =
        spade::device::csr_to_ellr(g, paper_fits ? ellr_layout{} : ellr_layout{32, 1024});
    for (const int threads : {0, 1, 2, 4, 8})
      check_spmv(e, x, ref, threads, scalings[0], rng);
    // Interleaved lanes, threads matching them (the planner's pairing) and not.
    for (const index_t lanes : {4, 32}) {
      const spade::ellr<T, gpu> il = spade::device::csr_to_ellr(g, ellr_layout{32, 1024, lanes});
      check_spmv(il, x, ref, 0, scalings[0], rng);
      check_spmv(il, x, ref, 1, scalings[1], rng);
    }
    check_spmv(e, x, ref, 0, scalings[1], rng);
    // Deterministic: the same call gives the same bits.
    std::vector<std::vector<T>> runs;
    for (int repeat = 0; repeat < 2; ++repeat) {
      spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(a.rows()));
      spade::device::ellr_spmv(T(1), e, x, T(0), y);
      runs.push_back(spade::to_cpu(y).values());
    }
    CHECK(bits_equal(runs[0], runs[1]));
    ++checked;
  }
  MESSAGE("real matrices checked: " << checked << " (paper layout skipped for " << paper_skipped
                                    << " with over " << max_paper_slots << " padded slots)");
  CHECK(checked > 0);
}

// ---- ellr_spmm --------------------------------------------------------------------------------

namespace {

// The pass ellr_spmm should run for X of n columns: the narrowest of 1, 2, 4, 8, 16 or 32 that
// holds them (written out here, not taken from the library, so the launch is checked against it).
int expected_pass(index_t n) {
  return n == 1 ? 1 : n == 2 ? 2 : n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : 32;
}

// The column groups a launch at `threads_per_row` (0: ellr_spmm's default) should use: the ones
// asked for, else past 8 columns one thread per 8 (a thread sums at most 8), except in double at
// 9-16 columns 4 threads of 4 where the row's threads stay within a warp; else 0 (ellr_spmm's own
// rule, checked apart).
template <class T>
int expected_groups(index_t n, int column_groups, int threads_per_row) {
  if (column_groups > 0) return column_groups;
  if (n <= 8) return 0;
  if (sizeof(T) == 8 && n <= 16 && 4 * std::max(threads_per_row, 1) <= 32) return 4;
  return expected_pass(n) / 8;
}

// Y = alpha·E·X + beta·Y by ellr_spmm for X in LX and Y in LY with X's columns split over
// `column_groups` threads (0: as ellr_spmm chooses), checked against the reference; also how it
// ran: one pass of 1, 2, 4 or 8 vectors; unsplit, row-major X read with 16-byte loads at 4 or 8
// columns (and 2 in double), in element pairs at every other width from 2 (odd widths: rows
// starting on and off a pair boundary), col-major X one element at a time; split, each thread's
// piece of a row-major X with 16-byte loads when every piece is whole such vectors (past 8
// columns: when X's rows are, each piece up to its own last column), in pairs when pieces of 2
// cover an even width or, in float past 8 columns, when X's rows are even, else (and col-major X)
// one element at a time.
template <class T, class LX, class LY>
void check_spmm(const spade::ellr<T, gpu>& e, const spade::dense<T, cpu, LX>& x_host,
                const product_reference& ref, int threads_per_row, int column_groups, scaling s,
                splitmix64& rng) {
  const index_t n = x_host.cols();
  constexpr bool x_row_major = std::is_same_v<LX, row_major>;
  constexpr bool y_row_major = std::is_same_v<LY, row_major>;
  CAPTURE(n);
  CAPTURE(x_row_major);
  CAPTURE(y_row_major);
  CAPTURE(threads_per_row);
  CAPTURE(column_groups);
  CAPTURE(s.alpha);
  CAPTURE(s.beta);
  const spade::dense<T, cpu, LY> y0 =
      s.beta == 0 ? nan_matrix<T, LY>(e.rows(), n) : random_matrix<T, LY>(e.rows(), n, rng);
  const spade::dense<T, gpu, LX> x = spade::to_gpu(x_host);
  spade::dense<T, gpu, LY> y = spade::to_gpu(y0);
  const spade::device::ellr_spmv_launch launch =
      spade::device::ellr_spmm(T(s.alpha), e, x, T(s.beta), y, threads_per_row, column_groups);
  if (e.rows() > 0) {
    const int groups_asked = expected_groups<T>(n, column_groups, threads_per_row);
    if (threads_per_row > 0) {
      CHECK(launch.threads_per_row == threads_per_row);
    } else if (e.lanes() > 1) {
      // The layout's lanes, fewer where the split would take a row past a warp; past 8 columns
      // half that from 4 threads on matrices of ellr_wide_half_threads_min_rows rows or more
      // where each thread then walks at most ellr_wide_half_max_entries_per_thread entries of
      // a mean row.
      int expected = std::min<int>(e.lanes(), 32 / std::max(groups_asked, 1));
      const auto& tune = spade::tuning();
      const double mean = static_cast<double>(e.nnz()) / static_cast<double>(e.rows());
      if (n > 8 && e.rows() >= tune.ellr_wide_half_threads_min_rows && expected >= 4 &&
          mean <= tune.ellr_wide_half_max_entries_per_thread * (expected / 2))
        expected /= 2;
      CHECK(launch.threads_per_row == expected);
    }
    const int pass = expected_pass(n);
    CHECK(launch.vectors_per_pass == pass);
    if (groups_asked > 0) {
      CHECK(launch.column_groups == groups_asked);
    } else {
      // Split in two only for a row-major X of 8 columns at one thread per row in float, up to
      // 16 in double.
      const int most = sizeof(T) == 8 ? 16 : 1;
      CHECK(launch.column_groups ==
            (x_row_major && n == 8 && launch.threads_per_row <= most ? 2 : 1));
    }
    const int groups = launch.column_groups;
    bool wide = false, paired = false;
    if (groups == 1) {
      wide = x_row_major && (n == 4 || n == 8 || (sizeof(T) == 8 && n == 2));
      paired = x_row_major && n > 1 && !wide;
    } else {
      // Past 8 columns X's rows need only be whole 16-byte vectors (N = 12 in float, any even N
      // in double), else even in float (float pairs): each piece reads up to its own last column.
      const int piece = pass / groups;
      const bool whole_rows = (n * sizeof(T)) % 16 == 0;
      wide = x_row_major && (piece * sizeof(T)) % 16 == 0 && whole_rows && (n == pass || n > 8);
      paired = x_row_major && !wide &&
               ((piece == 2 && n % 2 == 0) || (sizeof(T) == 4 && n > 8 && n % 2 == 0));
    }
    CHECK(launch.wide_loads == wide);
    CHECK(launch.paired_loads == paired);
  }
  const spade::dense<T, cpu, LY> got = spade::to_cpu(y);
  REQUIRE(got.rows() == e.rows());
  REQUIRE(got.cols() == n);
  double worst = 0;
  const std::size_t bad = count_wrong<T>(
      ref, s.alpha, s.beta, [&](index_t i, index_t v) { return got(i, v); },
      [&](index_t i, index_t v) { return y0(i, v); }, worst);
  CAPTURE(worst);
  CHECK(bad == 0);
}

template <class T, class LX>
void check_spmm_all_y(const spade::ellr<T, gpu>& e, const spade::dense<T, cpu, LX>& x_host,
                      const product_reference& ref, splitmix64& rng) {
  const index_t n = x_host.cols();
  const int pass = expected_pass(n);
  // {threads per row, column groups}: fewer, as many and more threads per row than the pass has
  // vectors (4 or 8), the row's sums reduce-scattered over them, each thread ending with a share
  // of the columns; the split ellr_spmm chooses (0), none (1), and forced splits of 2 and 4.
  const std::pair<int, int> runs[] = {{0, 0}, {1, 0}, {2, 0}, {4, 0},  {8, 0}, {32, 0}, {0, 1},
                                      {2, 1}, {8, 1}, {4, 2}, {16, 2}, {1, 4}, {8, 4}};
  for (const auto& [threads, groups] : runs) {
    if (groups > 1 && 2 * groups > pass) continue;  // a split needs 2 columns a thread
    for (const scaling s : scalings) {
      check_spmm<T, LX, row_major>(e, x_host, ref, threads, groups, s, rng);
      check_spmm<T, LX, col_major>(e, x_host, ref, threads, groups, s, rng);
    }
  }
}

// The ellr_spmm cases' matrices: empty, one entry, odd sizes, empty rows, one row of 2000.
template <class T>
std::vector<named_csr<T>> spmm_matrices(splitmix64& rng) {
  std::vector<named_csr<T>> matrices;
  matrices.push_back({"0x5", spade::csr<T, cpu>(0, 5)});
  matrices.push_back({"1x1", random_csr<T>(1, 1, 1.0, rng)});
  matrices.push_back({"33x31", random_csr<T>(33, 31, 0.3, rng, 0.8)});
  matrices.push_back({"257x95, empty rows", random_csr<T>(257, 95, 0.1, rng, 0.7)});
  matrices.push_back({"300x2000, one row of 2000",
                      with_long_rows(random_csr<T>(300, 2000, 0.004, rng), {42}, 2000, rng)});
  return matrices;
}

}  // namespace

TEST_CASE_TEMPLATE("ellr_spmm vs Eigen: N = 1 to 8, every layout of X and Y, each way of reading X",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const std::vector<named_csr<T>> matrices = spmm_matrices<T>(rng);
  for (const auto& [name, a] : matrices) {
    CAPTURE(name);
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    for (const ellr_layout& layout : {ellr_layout{}, ellr_layout{32, 1024}, ellr_layout{4, 8},
                                      ellr_layout{32, 1024, 4}, ellr_layout{0, 0, 8}}) {
      const std::string layout_name = layout_text(layout);
      CAPTURE(layout_name);
      const spade::ellr<T, gpu> e = spade::device::csr_to_ellr(g, layout);
      for (const index_t n : {1, 2, 3, 4, 5, 6, 7, 8}) {
        const auto x_rows = random_matrix<T, row_major>(a.cols(), n, rng);
        const auto x_cols = random_matrix<T, col_major>(a.cols(), n, rng);
        check_spmm_all_y(e, x_rows, reference_product(a, x_rows), rng);
        check_spmm_all_y(e, x_cols, reference_product(a, x_cols), rng);
      }
    }
  }
}

TEST_CASE_TEMPLATE("ellr_spmm vs Eigen: N = 9 to 32 in one pass, X's columns split over threads", T,
                   float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const std::vector<named_csr<T>> matrices = spmm_matrices<T>(rng);
  // Default threads halve from 200 rows here: on 257x95 and 300x2000 (short mean rows on the
  // 4- and 32-lane layouts), not on 33x31.
  const tuning_restorer restore;
  spade::tuning().ellr_wide_half_threads_min_rows = 200;
  // {threads per row, column groups}: the defaults, forced threads, and forced splits of 2 (8
  // columns a thread, up to 16 columns) and 4; the ones the kernel cannot make are left out
  // here and checked to throw in the next case.
  const std::pair<int, int> runs[] = {{0, 0}, {1, 0}, {2, 0}, {8, 0}, {16, 0},
                                      {0, 2}, {4, 2}, {0, 4}, {4, 4}, {8, 4}};
  for (const auto& [name, a] : matrices) {
    CAPTURE(name);
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    for (const ellr_layout& layout :
         {ellr_layout{}, ellr_layout{32, 1024}, ellr_layout{32, 1024, 4}, ellr_layout{0, 0, 32}}) {
      const std::string layout_name = layout_text(layout);
      CAPTURE(layout_name);
      const spade::ellr<T, gpu> e = spade::device::csr_to_ellr(g, layout);
      for (const index_t n : {9, 10, 12, 14, 16, 17, 18, 24, 31, 32}) {
        const auto x_rows = random_matrix<T, row_major>(a.cols(), n, rng);
        const auto x_cols = random_matrix<T, col_major>(a.cols(), n, rng);
        const auto ref_rows = reference_product(a, x_rows);
        const auto ref_cols = reference_product(a, x_cols);
        for (const auto& [threads, groups] : runs) {
          const int split = expected_groups<T>(n, groups, threads);
          const int piece = expected_pass(n) / split;
          if (piece > 8 || threads * split > 32) continue;
          const scaling s = scalings[rng.below(scalings.size())];
          check_spmm<T, row_major, row_major>(e, x_rows, ref_rows, threads, groups, s, rng);
          check_spmm<T, row_major, col_major>(e, x_rows, ref_rows, threads, groups, s, rng);
          check_spmm<T, col_major, row_major>(e, x_cols, ref_cols, threads, groups, s, rng);
          check_spmm<T, col_major, col_major>(e, x_cols, ref_cols, threads, groups, s, rng);
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("ellr_spmv / ellr_spmm throw on mismatched shapes, N = 33, bad threads per row",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto a = random_csr<T>(10, 6, 0.3, rng);
  const spade::ellr<T, gpu> e = spade::device::csr_to_ellr(spade::to_gpu(a), ellr_layout{});
  using spade::device::ellr_spmm;
  using spade::device::ellr_spmv;
  spade::vector<T, gpu> x(6), y(10), x_bad(7), y_bad(9);
  CHECK_THROWS_AS(ellr_spmv(T(1), e, x_bad, T(0), y), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmv(T(1), e, x, T(0), y_bad), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmv(T(1), e, x, T(0), y, 3), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmv(T(1), e, x, T(0), y, 64), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmv(T(1), e, x, T(0), y, 12), spade::invalid_matrix);

  spade::dense<T, gpu> b(6, 4), c(10, 4), b_bad(7, 4), c_rows(9, 4), c_cols(10, 3);
  spade::dense<T, gpu, col_major> b_col(6, 4), c_col(10, 4);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b_bad, T(0), c), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c_rows), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c_cols), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b_col, T(0), c_rows), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c, 3), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b_col, T(0), c_col, 3), spade::invalid_matrix);
  // Column splits: 1, 2 or 4 threads, each keeping 2 columns or more, a row within a warp.
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c, 0, 3), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c, 0, 8), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c, 0, 4), spade::invalid_matrix);  // 4 columns
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b, T(0), c, 32, 2), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b_col, T(0), c_col, 0, -1), spade::invalid_matrix);
  spade::dense<T, gpu> b2(6, 2), c2(10, 2);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b2, T(0), c2, 0, 2), spade::invalid_matrix);
  // Past 8 columns only split, at most 8 columns a thread, at most 32 columns.
  spade::dense<T, gpu> b16(6, 16), c16(10, 16), b32(6, 32), c32(10, 32), b33(6, 33), c33(10, 33);
  spade::dense<T, gpu, col_major> b33_col(6, 33), c33_col(10, 33);
  CHECK_THROWS_WITH_AS(ellr_spmm(T(1), e, b16, T(0), c16, 0, 1), doctest::Contains("2 to 8"),
                       spade::invalid_matrix);
  // A split it cannot make is named as such, not as the threads it would have sized.
  CHECK_THROWS_WITH_AS(ellr_spmm(T(1), e, b16, T(0), c16, 0, 3),
                       doctest::Contains("3 column groups; choose 1, 2 or 4"),
                       spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b32, T(0), c32, 0, 2), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b32, T(0), c32, 16, 4), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b32, T(0), c32, 16, 0), spade::invalid_matrix);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b33, T(0), c33), spade::dimension_mismatch);
  CHECK_THROWS_AS(ellr_spmm(T(1), e, b33_col, T(0), c33_col), spade::dimension_mismatch);
  // The planner hands ellr at most 16 columns.
  CHECK(spade::device::ellr_max_vectors == 16);

  // Still usable afterwards: X of 8 columns, and of 32.
  const auto x8 = random_matrix<T, row_major>(6, 8, rng);
  check_spmm<T, row_major, row_major>(e, x8, reference_product(a, x8), 0, 0, scalings[0], rng);
  const auto x32 = random_matrix<T, row_major>(6, 32, rng);
  check_spmm<T, row_major, row_major>(e, x32, reference_product(a, x32), 0, 0, scalings[0], rng);
}

// ---- the planner ------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("planner: y = A * x runs cuSPARSE once, then converts A to ellr once for good",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  tuning_restorer restore;
  spade::tuning() = spade::default_thresholds;
  REQUIRE(spade::tuning().ellr_min_uses == 2);
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // 2000 rows of 7 entries (fewer in the first and last 3): the paper's layout pads < 1%.
  const auto a_host = spade::generate::banded<T>(2000, 3, 3, seed);
  spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const auto x_host = random_vector<T>(2000, rng);
  const spade::vector<T, gpu> x = spade::to_gpu(x_host);
  const product_reference ref = reference_product(a_host, as_column(x_host));
  spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(2000));

  const std::size_t before = conversions();
  const std::string first_plan = spade::explain(a * x);
  CAPTURE(first_plan);
  CHECK(contains(first_plan, "declined: ellr_spmv: product 1 with this operand < ellr_min_uses 2"));
  CHECK(contains(first_plan, "chosen: cusparse_spmv"));
  y = a * x;
  CHECK(matches(y, ref));
  CHECK(uses_of(a) == 1);
  CHECK_FALSE(ellr_cached(a));
  CHECK(conversions() - before == 0);

  const std::string second_plan = spade::explain(a * x);
  CAPTURE(second_plan);
  CHECK(contains(second_plan, "chosen: ellr_spmv"));
  CHECK(contains(second_plan, "the paper's layout"));
  CHECK(contains(second_plan, "converted now, then cached on the operand"));
  CHECK_FALSE(contains(second_plan, "declined: ellr_spmv"));
  y = spade::to_gpu(nan_vector<T>(2000));
  y = a * x;
  CHECK(matches(y, ref));
  CHECK(ellr_cached(a));
  CHECK(conversions() - before == 1);

  const std::string third_plan = spade::explain(a * x);
  CAPTURE(third_plan);
  CHECK(contains(third_plan, "chosen: ellr_spmv"));
  CHECK(contains(third_plan, "the ellr is cached on the operand (conversion reused)"));
  for (int i = 0; i < 6; ++i) {
    y = spade::to_gpu(nan_vector<T>(2000));
    y = a * x;
    CHECK(matches(y, ref));
  }
  // One conversion over all of them; ellr runs do not count as uses of A as it is.
  CHECK(conversions() - before == 1);
  CHECK(uses_of(a) == 1);
  const auto& cached = spade::detail::cached_convert<spade::ellr<T, gpu>>(a);
  CHECK(cached.layout() == ellr_layout{0, 0, planned_lanes(a_host)});
  CHECK(cached.nnz() == a_host.nnz());
  CHECK(conversions() - before == 1);

  // New values (same pattern): the cache goes, and the count starts again.
  std::vector<T> doubled = a_host.values();
  for (T& v : doubled)
    v = T(2) * v;
  a.values() = spade::device_buffer<T>(doubled);
  CHECK_FALSE(ellr_cached(a));
  const spade::csr<T, cpu> doubled_host(a_host.rows(), a_host.cols(), a_host.row_ptr(),
                                        a_host.col_idx(), doubled);
  const product_reference ref2 = reference_product(doubled_host, as_column(x_host));
  CHECK(contains(spade::explain(a * x), "declined: ellr_spmv: product 1 with this operand"));
  y = spade::to_gpu(nan_vector<T>(2000));
  y = a * x;
  CHECK(matches(y, ref2));
  CHECK(conversions() - before == 1);
  CHECK_FALSE(ellr_cached(a));
  for (int i = 0; i < 3; ++i) {
    y = spade::to_gpu(nan_vector<T>(2000));
    y = a * x;
    CHECK(matches(y, ref2));
  }
  CHECK(ellr_cached(a));
  CHECK(conversions() - before == 2);
}

TEST_CASE_TEMPLATE("planner: ellr_spmv declined (skew, padding, transposed A, N = 17); SELL layout",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  tuning_restorer restore;
  spade::tuning() = spade::default_thresholds;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};

  SUBCASE("a row 120 times the mean: longest row > ellr_max_row_spread x mean") {
    std::vector<index_t> lengths(3000, 4);
    lengths[1234] = 500;
    const auto a_host = csr_with_row_lengths<T>(1000, lengths, rng);
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    const auto x_host = random_vector<T>(1000, rng);
    const spade::vector<T, gpu> x = spade::to_gpu(x_host);
    const product_reference ref = reference_product(a_host, as_column(x_host));
    const std::size_t before = conversions();
    for (int i = 0; i < 3; ++i) {
      const std::string plan = spade::explain(a * x);
      CAPTURE(plan);
      CHECK(contains(plan, "declined: ellr_spmv: longest row 500 > ellr_max_row_spread"));
      CHECK(contains(plan, "chosen: cusparse_spmv"));
      spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(3000));
      y = a * x;
      CHECK(matches(y, ref));
    }
    CHECK(conversions() - before == 0);
    CHECK_FALSE(ellr_cached(a));
  }

  SUBCASE("varied row lengths: SELL-32-1024, or declined over ellr_max_padding") {
    // About 10 entries a row, 3 to 25: the paper's layout pads far more than 5%.
    const auto a_host = random_csr<T>(3000, 200, 0.05, rng);
    std::vector<index_t> lengths;
    for (index_t r = 0; r < a_host.rows(); ++r)
      lengths.push_back(row_length(a_host, r));
    const auto padding_of = [&](ellr_layout layout) {
      return spade::detail::plan_ellr_shape(
                 a_host.rows(), layout,
                 [&](index_t r) { return lengths[static_cast<std::size_t>(r)]; })
          .padding();
    };
    // The thresholds count padding with one lane; the cached ellr interleaves the planner's.
    const double plain = padding_of({});
    const double sell = padding_of({32, 1024});
    const index_t lanes = planned_lanes(a_host);
    CAPTURE(plain);
    CAPTURE(sell);
    REQUIRE(plain > spade::tuning().ellr_plain_max_padding);
    REQUIRE(sell > 0.0);
    REQUIRE(sell <= spade::tuning().ellr_max_padding);
    REQUIRE(longest_row(a_host) <= spade::tuning().ellr_max_row_spread *
                                       static_cast<double>(a_host.nnz()) / a_host.rows());
    const auto x_host = random_vector<T>(200, rng);
    const spade::vector<T, gpu> x = spade::to_gpu(x_host);
    const product_reference ref = reference_product(a_host, as_column(x_host));

    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(3000));
    y = a * x;  // the first use: cuSPARSE
    CHECK(matches(y, ref));
    const std::string plan = spade::explain(a * x);
    CAPTURE(plan);
    CHECK(contains(plan, "chosen: ellr_spmv"));
    CHECK(contains(plan, "SELL-32-1024"));
    CHECK(contains(plan, std::to_string(lanes) + " thread(s) per row, entries interleaved"));
    y = spade::to_gpu(nan_vector<T>(3000));
    y = a * x;
    CHECK(matches(y, ref));
    REQUIRE(ellr_cached(a));
    const auto& cached = spade::detail::cached_convert<spade::ellr<T, gpu>>(a);
    CHECK(cached.layout() == ellr_layout{32, 1024, lanes});
    CHECK(cached.padding() == doctest::Approx(padding_of({32, 1024, lanes})));
    CHECK(cached.row_order().size() == 3000);

    // The same matrix against a padding threshold below its SELL padding: declined.
    spade::tuning().ellr_max_padding = sell / 2;
    const spade::csr<T, gpu> b = spade::to_gpu(a_host);
    const std::size_t before = conversions();
    for (int i = 0; i < 3; ++i) {
      const std::string b_plan = spade::explain(b * x);
      CAPTURE(b_plan);
      CHECK(contains(b_plan, "declined: ellr_spmv: the planned ellr would be"));
      CHECK(contains(b_plan, "> ellr_max_padding"));
      CHECK(contains(b_plan, "chosen: cusparse_spmv"));
      y = spade::to_gpu(nan_vector<T>(3000));
      y = b * x;
      CHECK(matches(y, ref));
    }
    CHECK(conversions() - before == 0);
    CHECK_FALSE(ellr_cached(b));
  }

  SUBCASE("transpose(A) * x declines ellr_spmv, on any use") {
    const auto a_host = spade::generate::banded<T>(1500, 2, 5, seed);
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    const auto x_host = random_vector<T>(1500, rng);
    const spade::vector<T, gpu> x = spade::to_gpu(x_host);
    // Aᵀ·x in double by Eigen; a row of Aᵀ is a column of A.
    product_reference ref;
    ref.rows = 1500;
    ref.n = 1;
    const spade::dense<double, cpu> xd = widen(as_column(x_host));
    const spade::dense<double, cpu> xm = widen(as_column(x_host), true);
    ref.value = spade::reference(spade::transpose(widen(a_host)) * xd);
    ref.magnitude = spade::reference(spade::transpose(widen(a_host, true)) * xm);
    ref.terms.assign(1500, 0);
    for (const index_t c : a_host.col_idx())
      ++ref.terms[static_cast<std::size_t>(c)];
    for (int i = 0; i < 3; ++i) {
      const std::string plan = spade::explain(spade::transpose(a) * x);
      CAPTURE(plan);
      CHECK(contains(plan, "declined: ellr_spmv: the sparse operand is transposed"));
      CHECK(contains(plan, "chosen: cusparse_spmv"));
      spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(1500));
      y = spade::transpose(a) * x;
      CHECK(matches(y, ref));
    }
    CHECK_FALSE(ellr_cached(a));
  }

  SUBCASE("A * X: 4, 12 and 16 columns go to ellr_spmv from the second use, 17 never") {
    const auto a_host = spade::generate::banded<T>(2000, 3, 3, seed);
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    const auto x4_host = random_matrix<T, row_major>(2000, 4, rng);
    const auto x4c_host = random_matrix<T, col_major>(2000, 4, rng);
    const auto x16_host = random_matrix<T, row_major>(2000, 16, rng);
    const auto x17_host = random_matrix<T, row_major>(2000, 17, rng);
    const spade::dense<T, gpu> x4 = spade::to_gpu(x4_host);
    const spade::dense<T, gpu, col_major> x4c = spade::to_gpu(x4c_host);
    const spade::dense<T, gpu> x16 = spade::to_gpu(x16_host);
    const spade::dense<T, gpu> x17 = spade::to_gpu(x17_host);
    const product_reference ref4 = reference_product(a_host, x4_host);
    const product_reference ref4c = reference_product(a_host, x4c_host);
    const product_reference ref16 = reference_product(a_host, x16_host);
    const product_reference ref17 = reference_product(a_host, x17_host);
    const std::size_t before = conversions();

    const std::string first_plan = spade::explain(a * x4);
    CAPTURE(first_plan);
    CHECK(contains(first_plan, "declined: ellr_spmv: product 1 with this operand < ellr_min_uses"));
    CHECK(contains(first_plan, "chosen: cusparse_spmm"));
    spade::dense<T, gpu> y4 = a * x4;
    CHECK(matches(y4, ref4));
    CHECK(uses_of(a) == 1);

    const std::string plan4 = spade::explain(a * x4);
    const std::string plan16 = spade::explain(a * x16);
    const std::string plan17 = spade::explain(a * x17);
    CAPTURE(plan4);
    CAPTURE(plan16);
    CAPTURE(plan17);
    CHECK(contains(plan4, "chosen: ellr_spmv"));
    CHECK(contains(plan16, "chosen: ellr_spmv"));
    // Past 8 columns X's rows must be whole 16-byte pieces: 12 columns in float; in double
    // only 16.
    const auto x12_host = random_matrix<T, row_major>(2000, 12, rng);
    const spade::dense<T, gpu> x12 = spade::to_gpu(x12_host);
    const spade::dense<T, gpu> x10 = spade::to_gpu(random_matrix<T, row_major>(2000, 10, rng));
    const std::string plan12 = spade::explain(a * x12);
    const std::string plan10 = spade::explain(a * x10);
    CAPTURE(plan12);
    CAPTURE(plan10);
    CHECK_FALSE(contains(plan10, "chosen: ellr_spmv"));
    if (sizeof(T) == 8) {
      CHECK(contains(plan12, "declined: ellr_spmv: N = 12: past 8 columns in double only N = 16"));
      CHECK(contains(plan10, "declined: ellr_spmv: N = 10: past 8 columns in double only N = 16"));
      CHECK_FALSE(contains(plan12, "chosen: ellr_spmv"));
    } else {
      CHECK(contains(plan12, "chosen: ellr_spmv"));
      CHECK(contains(plan12, "12 columns split over 2 threads of 8"));
      CHECK(contains(plan10,
                     "declined: ellr_spmv: N = 10: past 8 columns in float only N = 12 "
                     "or 16"));
    }
    CHECK(contains(plan17, "declined: ellr_spmv: N = 17 > ellr_max_vectors 16"));
    CHECK_FALSE(contains(plan17, "chosen: ellr_spmv"));
    CHECK(contains(plan17, "chosen: cusparse_spmm"));
    // 16 columns of a col-major X, or into a col-major Y, stay with cuSPARSE (ellr_spmm would
    // read such an X one element at a time; only row-major ones were measured).
    const spade::dense<T, gpu, col_major> x16c =
        spade::to_gpu(random_matrix<T, col_major>(2000, 16, rng));
    const std::string plan16c = spade::explain(a * x16c);
    CAPTURE(plan16c);
    CHECK(contains(plan16c, "declined: ellr_spmv: a col-major X or Y"));
    CHECK(contains(plan16, sizeof(T) == 8 ? "16 columns split over 4 threads of 4"
                                          : "16 columns split over 2 threads of 8"));

    for (int i = 0; i < 2; ++i) {
      y4 = spade::to_gpu(nan_matrix<T, row_major>(2000, 4));
      y4 = a * x4;
      CHECK(matches(y4, ref4));
      // Col-major X and Y: ellr_spmm takes both as they are.
      spade::dense<T, gpu, col_major> y4c = a * x4c;
      CHECK(matches(y4c, ref4c));
    }
    CHECK(conversions() - before == 1);
    CHECK(uses_of(a) == 1);
    spade::dense<T, gpu> y16 = spade::to_gpu(nan_matrix<T, row_major>(2000, 16));
    y16 = a * x16;
    CHECK(matches(y16, ref16));
    CHECK(uses_of(a) == 1);  // the cached ellr ran
    spade::dense<T, gpu> y12 = spade::to_gpu(nan_matrix<T, row_major>(2000, 12));
    y12 = a * x12;
    CHECK(matches(y12, reference_product(a_host, x12_host)));
    // float: the cached ellr ran; double: cuSPARSE on A as it is.
    CHECK(uses_of(a) == (sizeof(T) == 8 ? 2 : 1));
    spade::dense<T, gpu> y17 = a * x17;
    CHECK(matches(y17, ref17));
    CHECK(uses_of(a) == (sizeof(T) == 8 ? 3 : 2));  // cuSPARSE ran on A as it is
    CHECK(conversions() - before == 1);
  }
}

TEST_CASE_TEMPLATE("planner: an ellr operand, eval<ellr_spmv>, fused y = 2 * (A * x) + 3 * y", T,
                   float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  tuning_restorer restore;
  spade::tuning() = spade::default_thresholds;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto a_host = spade::generate::stencil27<T>(12, 11, 10);
  const index_t n = a_host.rows();
  const auto x_host = random_vector<T>(n, rng);
  const spade::vector<T, gpu> x = spade::to_gpu(x_host);
  const product_reference ref = reference_product(a_host, as_column(x_host));

  SUBCASE("an ellr operand, either layout") {
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    for (const ellr_layout layout : {ellr_layout{}, ellr_layout{4, 8}}) {
      const std::string layout_name = layout_text(layout);
      CAPTURE(layout_name);
      const std::size_t before = conversions();
      const spade::ellr<T, gpu> e = spade::convert<spade::ellr>(a, layout);
      CHECK(conversions() - before == 1);
      const std::string plan = spade::explain(e * x);
      CAPTURE(plan);
      CHECK(contains(plan, "chosen: ellr_spmv (the operand is an ellr"));
      CHECK_FALSE(contains(plan, "declined: ellr_spmv"));
      spade::vector<T, gpu> y = spade::to_gpu(nan_vector<T>(n));
      y = e * x;
      CHECK(matches(y, ref));
      const auto x4_host = random_matrix<T, row_major>(n, 4, rng);
      const spade::dense<T, gpu> x4 = spade::to_gpu(x4_host);
      CHECK(contains(spade::explain(e * x4), "chosen: ellr_spmv"));
      const spade::dense<T, gpu> y4 = e * x4;
      CHECK(matches(y4, reference_product(a_host, x4_host)));
      CHECK(conversions() - before == 1);
    }
  }

  SUBCASE("eval<kernels::ellr_spmv> converts and runs on the first call") {
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    const std::size_t before = conversions();
    const spade::vector<T, gpu> y = spade::eval<spade::kernels::ellr_spmv>(a * x);
    CHECK(matches(y, ref));
    CHECK(conversions() - before == 1);
    CHECK(ellr_cached(a));
    CHECK(uses_of(a) == 0);
    // The planner now finds the ellr cached, with no use of A as it is.
    const std::string plan = spade::explain(a * x);
    CAPTURE(plan);
    CHECK(contains(plan, "chosen: ellr_spmv"));
    CHECK(contains(plan, "the ellr is cached on the operand (conversion reused)"));
  }

  SUBCASE("fused y = 2 * (A * x) + 3 * y through ellr_spmv") {
    const spade::csr<T, gpu> a = spade::to_gpu(a_host);
    spade::vector<T, gpu> warm = a * x;  // the first use: cuSPARSE
    warm = a * x;                        // the second: converted to ellr
    REQUIRE(ellr_cached(a));
    REQUIRE(uses_of(a) == 1);
    const std::size_t before = conversions();
    const spade::vector<T, cpu> y0 = random_vector<T>(n, rng);
    spade::vector<T, gpu> y = spade::to_gpu(y0);
    const std::string plan = spade::explain(T(2) * (a * x) + T(3) * y);
    CAPTURE(plan);
    CHECK(contains(plan, "fused form"));
    CHECK(contains(plan, "chosen: ellr_spmv"));
    y = T(2) * (a * x) + T(3) * y;
    const spade::vector<T, cpu> got = spade::to_cpu(y);
    double worst = 0;
    const std::size_t bad = count_wrong<T>(
        ref, 2.0, 3.0, [&](index_t i, index_t) { return got[i]; },
        [&](index_t i, index_t) { return y0[i]; }, worst);
    CAPTURE(worst);
    CHECK(bad == 0);
    CHECK(uses_of(a) == 1);  // not cuSPARSE
    CHECK(conversions() - before == 0);
  }
}

// ---- spaces -----------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("ellr round trips: to_gpu / to_cpu, convert<csr> and convert<ellr> on the gpu",
                   T, float, double) {
  if (no_device("the ellr GPU tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const spade::ellr<T, gpu> empty = spade::to_gpu(spade::ellr<T, cpu>{});
  CHECK(empty.rows() == 0);
  CHECK(spade::to_cpu(empty).nnz() == 0);
  for (const auto& [name, a] : edge_matrices<T>(rng, false)) {
    CAPTURE(name);
    const spade::csr<T, gpu> g = spade::to_gpu(a);
    for (const ellr_layout& layout : {ellr_layout{}, ellr_layout{32, 1024}, ellr_layout{4, 8}}) {
      const std::string layout_name = layout_text(layout);
      CAPTURE(layout_name);
      const spade::ellr<T, cpu> e_cpu = spade::convert<spade::ellr>(a, layout);
      const spade::ellr<T, gpu> e_gpu = spade::to_gpu(e_cpu);
      check_same_ellr(e_gpu, e_cpu);
      check_same_ellr(spade::to_cpu(e_gpu), e_cpu);

      std::size_t before = conversions();
      const spade::csr<T, gpu> back = spade::convert<spade::csr>(e_gpu);
      CHECK(conversions() - before == 1);
      check_same(spade::to_cpu(back), a);

      before = conversions();
      const spade::ellr<T, gpu> made = spade::convert<spade::ellr>(g, layout);
      CHECK(conversions() - before == 1);
      check_same_ellr(made, e_cpu);
      // An ellr already in the layout is copied, not converted.
      before = conversions();
      check_same_ellr(spade::convert<spade::ellr>(made, layout), e_cpu);
      CHECK(conversions() - before == 0);
    }
    // The paper's layout through the one-argument convert.
    check_same_ellr(spade::convert<spade::ellr>(g), spade::host::csr_to_ellr(a, ellr_layout{}));
  }
}
