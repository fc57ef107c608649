// GPU suite for tiled_spmm and tiled_spmm_tf32: every result against Eigen in double precision,
// outputs NaN-poisoned first, edge shapes, every layout of B and C, alpha and beta, Inf and NaN
// in B, floats outside 3xTF32's exact range, every real matrix, long windows shared by several
// warps or cut into segments, and the planner's use of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spade/device/kernels.hpp>
#include <spade/spade.hpp>

#include "gpu/gpu_support.hpp"
#include "test_support.hpp"

namespace {

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::device::spmm_arithmetic;
using spade::testing::fresh_seed;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::random_dense;
using spade::testing::splitmix64;
using spade::testing::spmm_edge_shapes;

struct product_case {
  double alpha = 1;
  double beta = 0;
  spmm_arithmetic arithmetic = spmm_arithmetic::native;
  /// When not 0, tiled_spmm runs under a memory cap this many bytes above what is in use, too
  /// little for the condensed windows, so the tiles serve (checked: nothing is cached on A).
  std::size_t cap_slack = 0;
  /// With cap_slack: the windows are built by a first product before the cap, so the cap falls
  /// on what a product allocates itself (the long windows' segment workspace), and the windows
  /// stay cached.
  bool cap_after_windows = false;
};

/// C = alpha·A·B + beta·C through tiled_spmm, each element checked against the double-precision
/// sum: |got − want| ≤ (row length + k)·u·(|alpha|·(|A|·|B|) + |beta·C|) + tiny, u = eps(T)
/// (2^-11 for plain TF32), k = 8 for 3xTF32 and 2 otherwise, and NaN or Inf exactly where the
/// exact result has them. C is NaN-poisoned when
/// beta = 0. Returns the number of elements outside the bound.
template <class T, class LB, class LC>
std::size_t check_product(const spade::csr<T, cpu>& a, const spade::dense<T, cpu, LB>& b,
                          const product_case& pc, splitmix64& rng) {
  CAPTURE(a.rows());
  CAPTURE(a.cols());
  CAPTURE(a.nnz());
  CAPTURE(b.cols());
  CAPTURE(pc.alpha);
  CAPTURE(pc.beta);
  const bool b_row_major = std::is_same_v<LB, row_major>;
  const bool c_row_major = std::is_same_v<LC, row_major>;
  CAPTURE(b_row_major);
  CAPTURE(c_row_major);
  const index_t n = b.cols();
  spade::dense<T, cpu, LC> start = random_dense<T, LC>(a.rows(), n, 0.0, rng);
  const spade::dense<T, cpu, LC> c0 = start;
  if (pc.beta == 0)
    std::fill(start.values().begin(), start.values().end(), std::numeric_limits<T>::quiet_NaN());
  const spade::tiled<T, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(a));
  const spade::dense<T, gpu, LB> bg = spade::to_gpu(b);
  spade::dense<T, gpu, LC> cg = spade::to_gpu(start);
  if (pc.cap_slack == 0) {
    spade::device::tiled_spmm(T(pc.alpha), at, bg, T(pc.beta), cg, pc.arithmetic);
    // The windows stay cached on A for the next product (none is made for an empty C).
    CHECK(at.cache().size() == (cg.element_count() > 0 ? 1u : 0u));
  } else {
    spade::context& ctx = spade::default_context();
    struct limit_guard {
      ~limit_guard() { spade::default_context().set_memory_limit(0); }
    } restore_limit;
    if (pc.cap_after_windows) {
      spade::dense<T, gpu, LC> first(cg.rows(), cg.cols());
      spade::device::tiled_spmm(T(1), at, bg, T(0), first, pc.arithmetic);
    }
    ctx.synchronize();
    ctx.set_memory_limit(ctx.bytes_in_use() + pc.cap_slack);
    spade::device::tiled_spmm(T(pc.alpha), at, bg, T(pc.beta), cg, pc.arithmetic);
    CHECK(at.cache().size() == (pc.cap_after_windows ? 1u : 0u));
  }
  const spade::dense<T, cpu, LC> got = spade::to_cpu(cg);

  const bool plain_tf32 = pc.arithmetic == spmm_arithmetic::tf32 && std::is_same_v<T, float>;
  const double u = plain_tf32 ? 0x1p-11 : std::numeric_limits<T>::epsilon();
  // 3xTF32 drops small·small (≤ 2^-22·|ab|) and rounds each small part to TF32 (≤ 2^-22·|ab|
  // per cross term): up to 6u per product beyond the sum's own rounding, so 6 more units.
  const double extra_terms = std::is_same_v<T, float> && !plain_tf32 ? 8 : 2;
  std::size_t bad = 0;
  double worst = 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    const auto first = a.row_ptr()[static_cast<std::size_t>(i)];
    const auto last = a.row_ptr()[static_cast<std::size_t>(i) + 1];
    for (index_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (auto e = first; e < last; ++e) {
        const double term = double(a.values()[static_cast<std::size_t>(e)]) *
                            double(b(a.col_idx()[static_cast<std::size_t>(e)], j));
        exact += term;
        magnitude += std::abs(term);
      }
      const double c_old = pc.beta == 0 ? 0.0 : double(c0(i, j));
      const double want = pc.alpha * exact + pc.beta * c_old;
      const double bound = (double(last - first) + extra_terms) * u *
                               (std::abs(pc.alpha) * magnitude + std::abs(pc.beta * c_old)) +
                           std::numeric_limits<T>::min();
      const double value = double(got(i, j));
      const bool ok = std::isnan(want)   ? std::isnan(value)
                      : std::isinf(want) ? value == want
                                         : std::abs(value - want) <= bound;
      if (!ok) {
        ++bad;
        worst = std::max(worst, std::isfinite(value) ? std::abs(value - want) / bound : INFINITY);
      }
    }
  }
  CAPTURE(worst);
  CHECK(bad == 0);
  return bad;
}

template <class T>
void every_layout(const spade::csr<T, cpu>& a, index_t n, const product_case& pc, splitmix64& rng) {
  const auto b_row = random_dense<T, row_major>(a.cols(), n, 0.0, rng);
  spade::dense<T, cpu, col_major> b_col(a.cols(), n);
  for (index_t i = 0; i < a.cols(); ++i)
    for (index_t j = 0; j < n; ++j)
      b_col(i, j) = b_row(i, j);
  check_product<T, row_major, row_major>(a, b_row, pc, rng);
  check_product<T, row_major, col_major>(a, b_row, pc, rng);
  check_product<T, col_major, row_major>(a, b_col, pc, rng);
  check_product<T, col_major, col_major>(a, b_col, pc, rng);
}

/// A matrix of `rows` rows whose first 8 rows (one window) hold `long_row_entries` entries each
/// over `long_columns` distinct columns, and whose other rows hold one entry each: one long
/// window among short ones.
template <class T>
spade::csr<T, cpu> one_long_window(index_t rows, index_t cols, index_t long_columns,
                                   index_t long_row_entries, splitmix64& rng) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < rows; ++i) {
    std::vector<index_t> row;
    if (i < 8) {
      // Every column of the window's stretch is stored by some row of it.
      for (index_t c = i; c < long_columns; c += 8)
        row.push_back(c);
      while (static_cast<index_t>(row.size()) < long_row_entries)
        row.push_back(static_cast<index_t>(rng.below(static_cast<std::uint64_t>(long_columns))));
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    } else {
      row.push_back(static_cast<index_t>(rng.below(static_cast<std::uint64_t>(cols))));
    }
    for (index_t c : row) {
      col_idx.push_back(c);
      values.push_back(T(2 * rng.uniform() - 1));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// A matrix of `rows` rows of one or two entries each, except the windows listed: window w (rows
/// 8w .. 8w + 7, fewer at the matrix's end) stores every column of 0 .. columns - 1 from one row
/// or another, plus random ones, so its condensed form holds exactly ceil(columns / 8) blocks.
template <class T>
spade::csr<T, cpu> hub_windows(index_t rows, index_t cols,
                               const std::vector<std::pair<index_t, index_t>>& window_columns,
                               splitmix64& rng) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < rows; ++i) {
    std::vector<index_t> row;
    index_t columns = 0;
    for (const auto& [window, count] : window_columns)
      if (i / 8 == window) columns = count;
    if (columns > 0) {
      const index_t window_rows = std::min<index_t>(8, rows - 8 * (i / 8));
      for (index_t c = i % 8; c < columns; c += window_rows)
        row.push_back(c);
      for (int extra = 0; extra < 5; ++extra)
        row.push_back(static_cast<index_t>(rng.below(static_cast<std::uint64_t>(columns))));
    } else {
      for (std::uint64_t e = 0; e < 1 + rng.below(2); ++e)
        row.push_back(static_cast<index_t>(rng.below(static_cast<std::uint64_t>(cols))));
    }
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (index_t c : row) {
      col_idx.push_back(c);
      values.push_back(T(2 * rng.uniform() - 1));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

}  // namespace

TEST_CASE_TEMPLATE("tiled_spmm: edge shapes, widths, layouts, alpha and beta", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // 12 and 36: rows of B and C read and written 16 bytes at a time, the last chunk partly
  // past C's edge.
  for (const auto& s : spmm_edge_shapes)
    for (index_t n : {1, 7, 12, 32, 33, 36, 128}) {
      const auto a = random_csr<T>(s.m, s.k, s.density, rng, s.row_fraction);
      every_layout(a, n, {1.0, 0.0}, rng);
      every_layout(a, n, {-0.75, 0.5}, rng);
    }
}

TEST_CASE_TEMPLATE("tiled_spmm: 1000003 rows, N = 512, a matrix with no entries", T, float,
                   double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  if (std::getenv("SPADE_SKIP_TALL") == nullptr) {
    const auto tall = random_csr<T>(1000003, 9, 0.4, rng, 0.7);
    const auto b = random_dense<T, row_major>(tall.cols(), 33, 0.0, rng);
    check_product<T, row_major, row_major>(tall, b, {1.5, 0.0}, rng);
  }
  const auto wide = random_csr<T>(200, 300, 0.1, rng);
  const auto b512 = random_dense<T, row_major>(300, 512, 0.0, rng);
  check_product<T, row_major, row_major>(wide, b512, {1.0, 0.0}, rng);
  const spade::csr<T, cpu> no_entries(40, 17);
  for (index_t n : {1, 32})
    for (double beta : {0.0, 2.0})
      every_layout(no_entries, n, {1.0, beta}, rng);
}

TEST_CASE_TEMPLATE("tiled_spmm: Inf and NaN in B reach only the rows that store their column", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // Rows 0..7 share tile columns 0..7, but only row 3 stores column 5: the tensor-core form would
  // give every row of the tile 0·Inf = NaN.
  const auto a = random_csr<T>(16, 16, 0.5, rng);
  auto b = random_dense<T, row_major>(16, 40, 0.0, rng);
  for (index_t j = 0; j < 40; j += 3)
    b(static_cast<index_t>(j % 16), j) =
        (j % 2) ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN();
  check_product<T, row_major, row_major>(a, b, {1.0, 0.0}, rng);
  check_product<T, row_major, col_major>(a, b, {2.0, 0.5}, rng);
}

TEST_CASE("tiled_spmm: floats outside 3xTF32's exact range keep fp32 accuracy") {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  auto a = random_csr<float>(40, 40, 0.3, rng);
  for (std::size_t k = 0; k < a.values().size(); k += 5)
    a.values()[k] *= 0x1p-110f;  // small parts below 2^-126 would flush on the tensor cores
  auto b = random_dense<float, row_major>(40, 32, 0.0, rng);
  for (std::size_t k = 0; k < b.values().size(); k += 7)
    b.values()[k] *= 0x1p-105f;
  check_product<float, row_major, row_major>(a, b, {1.0, 0.0}, rng);
}

TEST_CASE("tiled_spmm: tiny and subnormal entries of A keep fp32 accuracy, beside large ones") {
  // Entries of A below 3xTF32's exact range take the tensor cores scaled by 2^48 (the scaled
  // path): rows made of them only, rows mixing them with ordinary and subnormal entries, rows
  // near the scaled path's overflow guards (2^70: taken) and past them (2^90: the scalar path).
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  auto a = random_csr<float>(200, 120, 0.2, rng);
  for (index_t i = 0; i < a.rows(); ++i) {
    const auto first = static_cast<std::size_t>(a.row_ptr()[static_cast<std::size_t>(i)]);
    const auto last = static_cast<std::size_t>(a.row_ptr()[static_cast<std::size_t>(i) + 1]);
    for (std::size_t k = first; k < last; ++k) {
      float& v = a.values()[k];
      if (i < 8)
        v *= 0x1p-120f;
      else if (k % 11 == 0)
        v *= 0x1p-140f;  // subnormal
      else if (k % 3 == 0)
        v *= 0x1p-110f;
      else if (i >= 40 && i < 48 && k % 3 == 1)
        v *= 0x1p70f;
      else if (i >= 48 && i < 56 && k % 3 == 1)
        v *= 0x1p90f;
    }
  }
  every_layout(a, 32, {1.0, 0.0}, rng);
  every_layout(a, 33, {-0.5, 2.0}, rng);
  every_layout(a, 128, {1.0, 0.0}, rng);
}

TEST_CASE("tiled_spmm_tf32: plain TF32 within TF32's bound, and measurably less exact") {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a = random_csr<float>(300, 300, 0.2, rng);
  const auto b = random_dense<float, row_major>(300, 64, 0.0, rng);
  check_product<float, row_major, row_major>(a, b, {1.0, 0.0, spmm_arithmetic::tf32}, rng);
  // The same product held to fp32's bound fails somewhere: the mode really is TF32.
  const spade::tiled<float, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(a));
  const spade::dense<float, gpu> bg = spade::to_gpu(b);
  spade::dense<float, gpu> native(300, 64), tf32(300, 64);
  spade::device::tiled_spmm(1.0f, at, bg, 0.0f, native, spmm_arithmetic::native);
  spade::device::tiled_spmm(1.0f, at, bg, 0.0f, tf32, spmm_arithmetic::tf32);
  const auto n_host = spade::to_cpu(native), t_host = spade::to_cpu(tf32);
  double gap = 0;
  for (std::size_t k = 0; k < n_host.values().size(); ++k)
    gap = std::max(gap, double(std::abs(n_host.values()[k] - t_host.values()[k])));
  CHECK(gap > 1e-5);
}

TEST_CASE_TEMPLATE("tiled_spmm: every real matrix, N = 32 and 128, results repeat bit for bit", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  int count = 0;
  for (const auto& path : spade::testing::real_matrices()) {
    CAPTURE(path.string());
    const auto a = spade::read_matrix_market<T>(path);
    const auto b = random_dense<T, row_major>(a.cols(), 32, 0.0, rng);
    check_product<T, row_major, row_major>(a, b, {1.0, 0.0}, rng);
    if (count++ < 4) {
      const auto b128 = random_dense<T, row_major>(a.cols(), 128, 0.0, rng);
      check_product<T, row_major, row_major>(a, b128, {1.0, 1.0}, rng);
      const spade::tiled<T, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(a));
      const spade::dense<T, gpu> bg = spade::to_gpu(b128);
      spade::dense<T, gpu> c1(a.rows(), 128), c2(a.rows(), 128);
      spade::device::tiled_spmm(T(1), at, bg, T(0), c1);
      spade::device::tiled_spmm(T(1), at, bg, T(0), c2);
      CHECK(spade::to_cpu(c1).values() == spade::to_cpu(c2).values());
    }
  }
  CHECK(count > 0);
}

TEST_CASE_TEMPLATE("tiled_spmm: without room for the windows, the tiles give the products", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // 250 windows: their block offsets alone (2 KB) pass a 256-byte slack.
  const auto a = random_csr<T>(2000, 300, 0.05, rng, 0.9);
  for (index_t n : {7, 32, 33}) {
    check_product<T, row_major, row_major>(a, random_dense<T, row_major>(300, n, 0.0, rng),
                                           {1.0, 0.0, spmm_arithmetic::native, 256}, rng);
    check_product<T, row_major, col_major>(a, random_dense<T, row_major>(300, n, 0.0, rng),
                                           {-2.0, 0.5, spmm_arithmetic::native, 256}, rng);
  }
  auto b = random_dense<T, row_major>(300, 40, 0.0, rng);
  b(5, 3) = std::numeric_limits<T>::infinity();
  b(17, 9) = std::numeric_limits<T>::quiet_NaN();
  check_product<T, row_major, row_major>(a, b, {1.0, 0.0, spmm_arithmetic::native, 256}, rng);
  if constexpr (std::is_same_v<T, float>)
    check_product<T, row_major, row_major>(a, random_dense<T, row_major>(300, 32, 0.0, rng),
                                           {1.0, 0.0, spmm_arithmetic::tf32, 256}, rng);
}

// A matrix with few windows leaves the SMs short of warps, so its long windows are summed by two
// or four warps each (lib/kernels/tiled_spmm.cu, warps_per_item) and a short one by one warp of
// its group. On a 114- or 132-SM device the 40-row matrix takes four warps per window and the
// 12800-row one two at N = 32; elsewhere the results must hold all the same.
TEST_CASE_TEMPLATE("tiled_spmm: long windows shared by several warps, results repeat bit for bit",
                   T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto few = one_long_window<T>(40, 3000, 2000, 600, rng);
  for (index_t n : {1, 32, 33, 128}) {
    every_layout(few, n, {1.0, 0.0}, rng);
    every_layout(few, n, {-0.75, 0.5}, rng);
  }
  const auto many = one_long_window<T>(12800, 12800, 80, 30, rng);
  check_product<T, row_major, row_major>(many, random_dense<T, row_major>(12800, 32, 0.0, rng),
                                         {1.0, 0.0}, rng);
  for (const auto* a : {&few, &many}) {
    const spade::tiled<T, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(*a));
    const spade::dense<T, gpu> bg =
        spade::to_gpu(random_dense<T, row_major>(a->cols(), 32, 0.0, rng));
    spade::dense<T, gpu> c1(a->rows(), 32), c2(a->rows(), 32);
    spade::device::tiled_spmm(T(1), at, bg, T(0), c1);
    spade::device::tiled_spmm(T(1), at, bg, T(0), c2);
    CHECK(spade::to_cpu(c1).values() == spade::to_cpu(c2).values());
  }
}

// With enough windows for one warp each to fill the device, a window of more than 32 blocks and
// 8 times the mean is summed in segments by warps of their own, then the segments are added
// (lib/kernels/tiled_spmm.cu, find_long_windows). 40003 rows make 5001 windows (mean 2-3 blocks):
// at N = 1-32 one item each, more than the 24 warps per SM that 132 SMs take. The long windows:
// the first, two in the middle (33 blocks: just long; 32: just not), and the last, of 3 rows.
TEST_CASE_TEMPLATE(
    "tiled_spmm: long windows of a large matrix summed in segments, results repeat "
    "bit for bit",
    T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const index_t rows = 40003, cols = 40003;
  const auto a =
      hub_windows<T>(rows, cols, {{0, 3000}, {1234, 33 * 8}, {2345, 32 * 8}, {5000, 2501}}, rng);
  for (index_t n : {1, 32, 33, 128}) {
    CAPTURE(n);
    every_layout(a, n, {1.0, 0.0}, rng);
    every_layout(a, n, {-0.75, 0.5}, rng);
  }
  if constexpr (std::is_same_v<T, float>)
    check_product<T, row_major, row_major>(a, random_dense<T, row_major>(cols, 32, 0.0, rng),
                                           {1.0, 0.0, spmm_arithmetic::tf32}, rng);
  auto b = random_dense<T, row_major>(cols, 32, 0.0, rng);
  b(17, 3) = std::numeric_limits<T>::infinity();  // a column of the first window
  b(2600, 9) = std::numeric_limits<T>::quiet_NaN();
  check_product<T, row_major, row_major>(a, b, {1.0, 0.0}, rng);
  const spade::tiled<T, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(a));
  const spade::dense<T, gpu> bg = spade::to_gpu(random_dense<T, row_major>(cols, 32, 0.0, rng));
  spade::dense<T, gpu> c1(rows, 32), c2(rows, 32);
  spade::device::tiled_spmm(T(1), at, bg, T(0), c1);
  spade::device::tiled_spmm(T(1), at, bg, T(0), c2);
  CHECK(spade::to_cpu(c1).values() == spade::to_cpu(c2).values());

  // The segments ran: at N = 32 their workspace holds 256 sums for each of 47 segments (24 for
  // window 0's 375 blocks, 3 for the 33, 20 for the last window's 313), where a product over
  // whole, cached windows allocates nothing. A device of more than 208 SMs gives these 5001
  // windows fewer than 24 warps an SM, so warps share them instead and nothing is checked here.
  spade::context& ctx = spade::default_context();
  if (std::int64_t{ctx.properties().sm_count} * 24 <= 5001) {
    ctx.pool_bytes_peak(true);
    const std::size_t pool_before = ctx.pool_bytes_in_use();
    spade::device::tiled_spmm(T(1), at, bg, T(0), c1);
    CHECK(ctx.pool_bytes_peak() - pool_before >= 47 * 256 * sizeof(T));
  } else {
    MESSAGE("more than 208 SMs: the segments are not used for this matrix");
  }
  // Without room for that workspace (the windows built first, then a cap 1 KB above what is in
  // use) the windows are summed whole, within the same bound.
  check_product<T, row_major, row_major>(a, random_dense<T, row_major>(cols, 32, 0.0, rng),
                                         {1.0, 0.0, spmm_arithmetic::native, 1024, true}, rng);
}

TEST_CASE_TEMPLATE("tiled_spmm: mismatched shapes throw dimension_mismatch naming them", T, float,
                   double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a = random_csr<T>(20, 30, 0.2, rng);
  const spade::tiled<T, gpu> at = spade::convert<spade::tiled>(spade::to_gpu(a));
  const spade::dense<T, gpu> b_bad(31, 4), b(30, 4);
  spade::dense<T, gpu> c(20, 4), c_bad(21, 4);
  CHECK_THROWS_AS(spade::device::tiled_spmm(T(1), at, b_bad, T(0), c), spade::dimension_mismatch);
  CHECK_THROWS_WITH_AS(spade::device::tiled_spmm(T(1), at, b, T(0), c_bad),
                       doctest::Contains("tiled_spmm"), spade::dimension_mismatch);
}

TEST_CASE_TEMPLATE("planner: sparse x dense picks tiled_spmm on full tiles, caches the tiles", T,
                   float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  // Block diagonal of dense 8x8 blocks: 64 entries per tile, 2^17 entries.
  const index_t blocks = 2048;
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t r = 0; r < blocks * 8; ++r) {
    for (index_t c = (r / 8) * 8; c < (r / 8) * 8 + 8; ++c) {
      col_idx.push_back(c);
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  const spade::csr<T, cpu> a_host(blocks * 8, blocks * 8, row_ptr, col_idx, values);
  const auto b_host = random_dense<T, row_major>(blocks * 8, 64, 0.0, rng);
  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const spade::dense<T, gpu> b = spade::to_gpu(b_host);
  const std::string plan = spade::explain(a * b);
  CAPTURE(plan);
  CHECK(plan.find("chosen: tiled_spmm") != std::string::npos);
  CHECK(plan.find("mean tile fill 64") != std::string::npos);
  const std::size_t before = spade::conversion_counter().load();
  spade::dense<T, gpu> c = a * b;
  spade::dense<T, gpu> c2 = a * b;
  CHECK(spade::conversion_counter().load() - before == 1);  // the tiles, once
  CHECK(spade::to_cpu(c).values() == spade::to_cpu(c2).values());
  check_product<T, row_major, row_major>(a_host, b_host, {1.0, 0.0}, rng);
  // A narrow B declines, naming the threshold; a sparse matrix's tiles are too empty.
  const auto narrow = spade::to_gpu(random_dense<T, row_major>(blocks * 8, 8, 0.0, rng));
  CHECK(spade::explain(a * narrow).find("tiled_spmm: N = 8 < tiled_spmm_min_columns") !=
        std::string::npos);
  const spade::csr<T, gpu> scattered = spade::to_gpu(random_csr<T>(20000, 20000, 0.0005, rng));
  const auto b2 = spade::to_gpu(random_dense<T, row_major>(20000, 64, 0.0, rng));
  CHECK(spade::explain(scattered * b2).find("tiled_spmm: tiles too sparse") != std::string::npos);
  // Forced, the plain TF32 mode runs (float) and the fp64 one stays exact.
  const spade::dense<T, gpu> forced = spade::eval<spade::kernels::tiled_spmm_tf32>(a * b);
  CHECK(forced.rows() == a.rows());
}
