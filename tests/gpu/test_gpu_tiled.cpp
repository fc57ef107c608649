// GPU suite for the tiled format and tiled_spgemm (paper 002): the tensor-core fragment layouts,
// csr ↔ tiled on the device against the host conversions, C = alpha·A·B against Eigen in every
// arithmetic, the tile census, and the planner's choice.
#include <doctest/doctest.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <spade/device/convert.hpp>
#include <spade/device/kernels.hpp>
#include <spade/eval/preview.hpp>
#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "spgemm_check.hpp"
#include "test_support.hpp"

using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::device::tile_arithmetic;
using spade::testing::check_product;
using spade::testing::contains;
using spade::testing::fresh_seed;
using spade::testing::no_device;
using spade::testing::poison_pool;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::splitmix64;
using spade::testing::transposed;

namespace {

// The error each arithmetic promises, relative to |alpha|·(|A|·|B|) (issue [6/6]).
template <class T>
double arithmetic_tolerance(tile_arithmetic arithmetic) {
  if (arithmetic == tile_arithmetic::fp16) return 1e-2;
  return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

// The same matrix with every stored magnitude below 1/64 raised to 1/64 (sign and explicit zeros
// kept): products then stay in fp16's normal range (from 6.1e-5), where its 11-bit significand
// gives the promised relative error; below it fp16 keeps absolute, not relative, precision.
template <class T>
spade::csr<T, cpu> fp16_safe(const spade::csr<T, cpu>& a) {
  std::vector<T> values = a.values();
  for (T& v : values)
    if (v != T(0) && std::abs(v) < T(1) / T(64)) v = v < T(0) ? -T(1) / T(64) : T(1) / T(64);
  return spade::csr<T, cpu>(spade::unchecked, a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                            std::move(values));
}

template <class T>
spade::csr<T, cpu> run_tiled(const spade::csr<T, cpu>& a, const spade::csr<T, cpu>& b, T alpha,
                             tile_arithmetic arithmetic,
                             spade::device::tiled_spgemm_report* report = nullptr) {
  const auto a_t = spade::convert<spade::tiled>(spade::to_gpu(a));
  const auto b_t = spade::convert<spade::tiled>(spade::to_gpu(b));
  const std::size_t guess = static_cast<std::size_t>(a.nnz() + b.nnz()) * (8 + sizeof(T)) * 4;
  poison_pool(std::min<std::size_t>(guess, std::size_t{1} << 28));
  const auto c = spade::device::tiled_spgemm(alpha, a_t, b_t, arithmetic, report);
  return spade::to_cpu(spade::device::tiled_to_csr(c));
}

// Row-major 8×8 product in double.
std::vector<double> host_tile_product(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> c(64, 0.0);
  for (int r = 0; r < 8; ++r)
    for (int m = 0; m < 8; ++m)
      for (int col = 0; col < 8; ++col)
        c[r * 8 + col] += a[r * 8 + m] * b[m * 8 + col];
  return c;
}

template <class T>
void check_probe(const std::vector<double>& a, const std::vector<double>& b,
                 tile_arithmetic arithmetic, double tolerance) {
  const std::vector<T> a_t(a.begin(), a.end()), b_t(b.begin(), b.end());
  const std::vector<T> got = spade::device::tile_product_probe(a_t, b_t, arithmetic);
  const std::vector<double> want = host_tile_product(a, b);
  REQUIRE(got.size() == 64u);
  for (int k = 0; k < 64; ++k) {
    CAPTURE(k);
    CHECK(std::abs(static_cast<double>(got[k]) - want[k]) <= tolerance * (1.0 + std::abs(want[k])));
  }
}

}  // namespace

// Each (r, m, c) once: A holds only (r, m), B only (m, c), so C must hold a·b at (r, c) and
// nothing else. A fragment entry read from or written to the wrong lane moves or loses it.
TEST_CASE_TEMPLATE("tiled_spgemm's tensor-core fragment layouts (sm_90)", T, float, double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  for (const auto arithmetic : {tile_arithmetic::native, tile_arithmetic::fp16}) {
    CAPTURE(static_cast<int>(arithmetic));
    for (int r = 0; r < 8; ++r)
      for (int m = 0; m < 8; ++m)
        for (int c = 0; c < 8; c += (arithmetic == tile_arithmetic::fp16 ? 1 : 3)) {
          CAPTURE(r);
          CAPTURE(m);
          CAPTURE(c);
          std::vector<double> a(64, 0.0), b(64, 0.0);
          a[r * 8 + m] = 1.5 + r;  // small integers and halves: exact in fp16 and TF32
          b[m * 8 + c] = -0.5 - c;
          check_probe<T>(a, b, arithmetic, 0.0);
          if (arithmetic == tile_arithmetic::native) {
            // Below 2^-102 the float path sums with FMAs instead of 3xTF32: its own layout.
            a[r * 8 + m] = std::ldexp(1.5 + r, -110);
            check_probe<T>(a, b, arithmetic, 0.0);
          }
        }
  }
  // Full random tiles: every lane's every fragment entry at once.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> a(64), b(64);
    for (int k = 0; k < 64; ++k) {
      a[k] = rng.chance(0.3) ? 0.0 : rng.uniform() * 2 - 1;
      b[k] = rng.chance(0.3) ? 0.0 : rng.uniform() * 2 - 1;
    }
    for (const auto arithmetic : {tile_arithmetic::native, tile_arithmetic::fp16})
      check_probe<T>(a, b, arithmetic, 8 * arithmetic_tolerance<T>(arithmetic));
  }
}

TEST_CASE_TEMPLATE("csr <-> tiled on the GPU equals the host conversions", T, float, double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  std::vector<std::pair<std::string, spade::csr<T, cpu>>> cases;
  cases.emplace_back("0x0", spade::csr<T, cpu>(0, 0));
  cases.emplace_back("1x1", random_csr<T>(1, 1, 1.0, rng));
  cases.emplace_back("31x33", random_csr<T>(31, 33, 0.2, rng, 0.8, 0.1));
  cases.emplace_back("33x31", random_csr<T>(33, 31, 0.3, rng, 0.8));
  cases.emplace_back("40x9 without entries", spade::csr<T, cpu>(40, 9));
  cases.emplace_back("block diagonal", spade::generate::block_diagonal<T>(9, 8, 40, seed));
  if (std::getenv("SPADE_SKIP_TALL") == nullptr)
    cases.emplace_back("1000003x5 with empty rows", random_csr<T>(1000003, 5, 0.3, rng, 0.6));
  for (const auto& path : spade::testing::real_matrices())
    cases.emplace_back(path.filename().string(), spade::read_matrix_market<T>(path));
  for (const auto& [name, a] : cases) {
    CAPTURE(name);
    const auto want = spade::convert<spade::tiled>(a);
    const auto a_d = spade::to_gpu(a);
    poison_pool(static_cast<std::size_t>(a.nnz()) * 40 + 64);
    const auto got = spade::to_cpu(spade::device::csr_to_tiled(a_d));
    CHECK(got.rows() == want.rows());
    CHECK(got.cols() == want.cols());
    CHECK(got.tile_row() == want.tile_row());
    CHECK(got.tile_col() == want.tile_col());
    CHECK(got.bitmap() == want.bitmap());
    CHECK(got.values() == want.values());
    CHECK(got.tiles() == want.tiles());
    if (got.tiles() > 0) CHECK(got.tile_offset() == want.tile_offset());
    poison_pool(static_cast<std::size_t>(a.nnz()) * 40 + 64);
    const auto back = spade::to_cpu(spade::device::tiled_to_csr(spade::to_gpu(want)));
    CHECK(back.row_ptr() == a.row_ptr());
    CHECK(back.col_idx() == a.col_idx());
    CHECK(back.values() == a.values());
  }
}

TEST_CASE_TEMPLATE("tiled_spgemm vs Eigen: edge shapes, culling, every arithmetic", T, float,
                   double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  struct pair_case {
    std::string name;
    spade::csr<T, cpu> a, b;
  };
  std::vector<pair_case> cases;
  cases.push_back({"0x0 * 0x0", spade::csr<T, cpu>(0, 0), spade::csr<T, cpu>(0, 0)});
  cases.push_back({"0x5 * 5x3", spade::csr<T, cpu>(0, 5), random_csr<T>(5, 3, 0.5, rng)});
  cases.push_back({"4x0 * 0x6", spade::csr<T, cpu>(4, 0), spade::csr<T, cpu>(0, 6)});
  cases.push_back({"1x1 * 1x1", random_csr<T>(1, 1, 1.0, rng), random_csr<T>(1, 1, 1.0, rng)});
  cases.push_back({"31x33 * 33x31", random_csr<T>(31, 33, 0.2, rng, 0.8, 0.05),
                   random_csr<T>(33, 31, 0.2, rng, 0.8, 0.05)});
  cases.push_back({"33x31 * 31x1000 (rectangular)", random_csr<T>(33, 31, 0.3, rng, 0.9),
                   random_csr<T>(31, 1000, 0.02, rng, 0.9)});
  cases.push_back(
      {"70x20 without entries * 20x9", spade::csr<T, cpu>(70, 20), random_csr<T>(20, 9, 0.4, rng)});
  cases.push_back({"257x95 with explicit zeros", random_csr<T>(257, 95, 0.1, rng, 0.7, 0.2),
                   random_csr<T>(95, 257, 0.1, rng, 0.7, 0.2)});
  // Even columns of A against odd rows of B: every tile pair meets on k but no product exists,
  // so every pair is culled and C is empty.
  {
    std::vector<index_t> a_ptr{0}, a_col, b_ptr{0}, b_col;
    std::vector<T> a_val, b_val;
    for (index_t i = 0; i < 64; ++i) {
      for (index_t j = 0; j < 64; j += 2) {
        a_col.push_back(j);
        a_val.push_back(spade::testing::nonzero_value<T>(rng));
      }
      a_ptr.push_back(static_cast<index_t>(a_col.size()));
      if (i % 2 == 1)
        for (index_t j = 0; j < 64; ++j) {
          b_col.push_back(j);
          b_val.push_back(spade::testing::nonzero_value<T>(rng));
        }
      b_ptr.push_back(static_cast<index_t>(b_col.size()));
    }
    cases.push_back({"structurally empty tile pairs",
                     spade::csr<T, cpu>(64, 64, a_ptr, a_col, a_val),
                     spade::csr<T, cpu>(64, 64, b_ptr, b_col, b_val)});
  }
  cases.push_back({"block diagonal 8..64", spade::generate::block_diagonal<T>(40, 8, 64, seed),
                   spade::generate::block_diagonal<T>(40, 8, 64, seed)});
  cases.push_back({"stencil27 12^3", spade::generate::stencil27<T>(12, 12, 12),
                   spade::generate::stencil27<T>(12, 12, 12)});
  cases.push_back({"rmat scale 11", spade::generate::rmat<T>(11, 8, seed),
                   spade::generate::rmat<T>(11, 8, seed)});
  if (std::getenv("SPADE_SKIP_TALL") == nullptr)
    cases.push_back({"1000003x5 with empty rows * 5x7", random_csr<T>(1000003, 5, 0.3, rng, 0.6),
                     random_csr<T>(5, 7, 0.5, rng)});
  for (const auto& c : cases) {
    CAPTURE(c.name);
    for (const auto arithmetic : {tile_arithmetic::native, tile_arithmetic::fp16}) {
      CAPTURE(static_cast<int>(arithmetic));
      const bool half = arithmetic == tile_arithmetic::fp16;
      const auto a = half ? fp16_safe(c.a) : c.a;
      const auto b = half ? fp16_safe(c.b) : c.b;
      for (const T alpha : {T(1), T(-2.5)}) {
        spade::device::tiled_spgemm_report report;
        const auto got = run_tiled(a, b, alpha, arithmetic, &report);
        CAPTURE(report.describe());
        check_product(c.name, got, a, b, alpha, arithmetic_tolerance<T>(arithmetic));
        if (c.name == "structurally empty tile pairs") {
          CHECK(report.tile_pairs == 8 * 8 * 8);  // 64 tiles of A, each meeting 8 of B
          CHECK(report.culled_pairs == 8 * 8 * 8);
          CHECK(got.nnz() == 0);
        }
      }
    }
  }
  // Sums run in a fixed order: the same product twice is bit for bit the same.
  const auto& block = *std::find_if(cases.begin(), cases.end(), [](const pair_case& c) {
    return c.name == "block diagonal 8..64";
  });
  const auto first = run_tiled(block.a, block.b, T(1), tile_arithmetic::native);
  const auto second = run_tiled(block.a, block.b, T(1), tile_arithmetic::native);
  CHECK(spade::testing::bits_equal(first.values(), second.values()));
}

// 3xTF32 splits x into two TF32 parts; where the small one would fall below fp32's normal range
// (|x| < 2^-102) the tensor cores would lose it, an error of up to 2^-11 relative (bayer03 in
// float, paired with entries near 1e8). Such tile pairs are summed with FMAs instead.
TEST_CASE_TEMPLATE("tiled_spgemm keeps fp32 precision for values near fp32's underflow", T, float,
                   double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const int tiny_exponent : {-103, -110, -120, -126, -135}) {
    CAPTURE(tiny_exponent);
    auto scaled = [&](const spade::csr<T, cpu>& m) {
      std::vector<T> values = m.values();
      for (std::size_t k = 0; k < values.size(); ++k)
        values[k] = static_cast<T>(
            std::ldexp(static_cast<double>(values[k]), k % 3 == 0 ? tiny_exponent : 24));
      return spade::csr<T, cpu>(spade::unchecked, m.rows(), m.cols(), m.row_ptr(), m.col_idx(),
                                std::move(values));
    };
    const auto a = scaled(random_csr<T>(96, 80, 0.3, rng));
    const auto b = scaled(random_csr<T>(80, 72, 0.3, rng));
    check_product("mixed magnitudes", run_tiled(a, b, T(1), tile_arithmetic::native), a, b, 1.0,
                  arithmetic_tolerance<T>(tile_arithmetic::native));
  }
}

TEST_CASE_TEMPLATE("tiled_spgemm vs Eigen: A*A and A*transpose(A) on every real matrix", T, float,
                   double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  for (const auto& path : spade::testing::real_matrices()) {
    const std::string name = path.filename().string();
    CAPTURE(name);
    const auto a = spade::read_matrix_market<T>(path);
    const auto at = transposed(a);
    const double tolerance = arithmetic_tolerance<T>(tile_arithmetic::native);
    if (a.rows() == a.cols())
      check_product("A*A", run_tiled(a, a, T(1), tile_arithmetic::native), a, a, 1.0, tolerance);
    check_product("A*transpose(A)", run_tiled(a, at, T(1), tile_arithmetic::native), a, at, 1.0,
                  tolerance);
  }
}

// Every array of two tiled results, compared bit for bit.
template <class T>
void check_same_tiles(const spade::tiled<T, gpu>& got, const spade::tiled<T, gpu>& want) {
  CHECK(got.tile_row().to_host() == want.tile_row().to_host());
  CHECK(got.tile_col().to_host() == want.tile_col().to_host());
  CHECK(got.tile_offset().to_host() == want.tile_offset().to_host());
  CHECK(got.bitmap().to_host() == want.bitmap().to_host());
  const std::vector<T> got_values = got.values().to_host();
  const std::vector<T> want_values = want.values().to_host();
  REQUIRE(got_values.size() == want_values.size());
  CHECK(std::memcmp(got_values.data(), want_values.data(), got_values.size() * sizeof(T)) == 0);
}

// A task list longer than tuning().tiled_max_batch_pairs runs in batches of whole tile rows; a
// batch that runs out of memory is split and retried. Either way C holds the bits of one batch.
TEST_CASE_TEMPLATE("tiled_spgemm in batches returns one batch's C bit for bit", T, float, double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  struct pair_case {
    std::string name;
    spade::csr<T, cpu> a, b;
    bool one_pair_batches = true;  // also a batch per tile row (every launch per batch: slow
                                   // under compute-sanitizer for the real matrices)
  };
  std::vector<pair_case> cases;
  cases.push_back({"1000x1000 * 1000x1000 at 1 %", random_csr<T>(1000, 1000, 0.01, rng),
                   random_csr<T>(1000, 1000, 0.01, rng)});
  cases.push_back({"33x31 * 31x1000", random_csr<T>(33, 31, 0.3, rng, 0.9),
                   random_csr<T>(31, 1000, 0.02, rng, 0.9)});
  // Tile rows 2-9 of A empty: batches skip them and C has no tiles there.
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < 200; ++i) {
    if (i < 16 || i >= 80)
      for (index_t j = (i * 7) % 5; j < 150; j += 5) {
        col_idx.push_back(j);
        values.push_back(static_cast<T>(0.5 + 0.01 * (i + j)));
      }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  cases.push_back({"200x150 with empty tile rows * 150x300",
                   spade::csr<T, cpu>(200, 150, row_ptr, col_idx, values),
                   random_csr<T>(150, 300, 0.05, rng)});
  for (const auto& path : spade::testing::real_matrices()) {
    auto a = spade::read_matrix_market<T>(path);
    if (a.rows() == a.cols() && a.nnz() <= 100'000)
      cases.push_back({path.filename().string(), a, std::move(a), false});
  }
  for (const auto& [name, a, b, one_pair_batches] : cases) {
    CAPTURE(name);
    const auto a_t = spade::convert<spade::tiled>(spade::to_gpu(a));
    const auto b_t = spade::convert<spade::tiled>(spade::to_gpu(b));
    spade::device::tiled_spgemm_report whole_report;
    const auto whole =
        spade::device::tiled_spgemm(T(1), a_t, b_t, tile_arithmetic::native, &whole_report);
    CHECK(whole_report.batches == 1);
    for (const std::int64_t max_pairs : {whole_report.tile_pairs / 5 + 1, std::int64_t{1}}) {
      if (max_pairs == 1 && !one_pair_batches) continue;
      CAPTURE(max_pairs);
      spade::thresholds small = spade::tuning();
      small.tiled_max_batch_pairs = max_pairs;
      spade::detail::tuning_override override(small);
      poison_pool(std::size_t{1} << 26);
      spade::device::tiled_spgemm_report report;
      const auto batched =
          spade::device::tiled_spgemm(T(1), a_t, b_t, tile_arithmetic::native, &report);
      CHECK(report.batches >= 2);
      CHECK(report.tile_pairs == whole_report.tile_pairs);
      CHECK(report.culled_pairs == whole_report.culled_pairs);
      CHECK(report.tiles == whole_report.tiles);
      CHECK(report.nnz == whole_report.nnz);
      check_same_tiles(batched, whole);
    }
  }

  // Out of memory: under a cap at about half of what one batch used, the batch splits itself.
  auto& ctx = spade::default_context();
  const auto& [name, a, b, one_pair_batches] = cases.front();
  const auto a_t = spade::convert<spade::tiled>(spade::to_gpu(a));
  const auto b_t = spade::convert<spade::tiled>(spade::to_gpu(b));
  ctx.synchronize();
  const std::size_t in_use = ctx.bytes_in_use();
  ctx.pool_bytes_peak(true);
  const std::size_t pool_before = ctx.pool_bytes_in_use();
  const auto whole = spade::device::tiled_spgemm(T(1), a_t, b_t);
  const std::size_t used = ctx.pool_bytes_peak() - pool_before;
  struct limit_guard {
    ~limit_guard() { spade::default_context().set_memory_limit(0); }
  } restore_limit;
  ctx.set_memory_limit(in_use + used * 11 / 20);
  spade::device::tiled_spgemm_report report;
  const auto split = spade::device::tiled_spgemm(T(1), a_t, b_t, tile_arithmetic::native, &report);
  CHECK(report.batches >= 2);
  check_same_tiles(split, whole);
  // Nothing fits: out_of_memory, not a crash or a partial C.
  ctx.set_memory_limit(in_use + 1024);
  CHECK_THROWS_AS(spade::device::tiled_spgemm(T(1), a_t, b_t), spade::out_of_memory);
}

TEST_CASE_TEMPLATE("the tile census counts tiles, products and tile pairs", T, float, double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  std::vector<std::pair<spade::csr<T, cpu>, spade::csr<T, cpu>>> cases;
  cases.emplace_back(random_csr<T>(101, 67, 0.05, rng, 0.8), random_csr<T>(67, 90, 0.1, rng));
  cases.emplace_back(spade::generate::block_diagonal<T>(30, 3, 20, seed),
                     spade::generate::block_diagonal<T>(30, 3, 20, seed));
  const auto g = spade::generate::rmat<T>(10, 8, seed);
  cases.emplace_back(g, transposed(g));
  for (const auto& [a, b] : cases) {
    // Independent host count: tiles as a set of (tile row, tile column), products and pairs
    // by loops over the csr arrays.
    auto tiles_of = [](const spade::csr<T, cpu>& m) {
      std::map<std::pair<index_t, index_t>, int> tiles;
      for (index_t i = 0; i < m.rows(); ++i)
        for (index_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
          ++tiles[{i / 8, m.col_idx()[k] / 8}];
      return tiles;
    };
    const auto a_tiles = tiles_of(a);
    const auto b_tiles = tiles_of(b);
    std::map<index_t, std::int64_t> b_row_tiles;
    for (const auto& [key, count] : b_tiles)
      ++b_row_tiles[key.first];
    std::int64_t products = 0, pairs = 0;
    for (index_t i = 0; i < a.rows(); ++i)
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
        products += b.row_ptr()[a.col_idx()[k] + 1] - b.row_ptr()[a.col_idx()[k]];
    for (const auto& [key, count] : a_tiles)
      pairs += b_row_tiles.count(key.second) ? b_row_tiles[key.second] : 0;
    const auto census = spade::device::count_tiles(spade::to_gpu(a), spade::to_gpu(b));
    CHECK(census.a_tiles == static_cast<std::int64_t>(a_tiles.size()));
    CHECK(census.b_tiles == static_cast<std::int64_t>(b_tiles.size()));
    CHECK(census.products == products);
    CHECK(census.tile_pairs == pairs);
  }
}

TEST_CASE_TEMPLATE("sparse x sparse plans tiled_spgemm on dense tiles, hash_spgemm otherwise", T,
                   float, double) {
  if (no_device("the tiled tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const double tolerance = arithmetic_tolerance<T>(tile_arithmetic::native);
  // Dense 16..48 blocks: 64 entries per tile, up to 512 products per tile pair.
  const auto blocks_h = spade::generate::block_diagonal<T>(600, 16, 48, seed);
  const auto blocks = spade::to_gpu(blocks_h);
  REQUIRE(static_cast<double>(blocks_h.nnz()) >= spade::tuning().tiled_min_nnz);
  const std::string chosen = spade::explain(blocks * blocks);
  CAPTURE(chosen);
  CHECK(contains(chosen, "chosen: tiled_spgemm"));
  CHECK(contains(chosen, "per pair"));
  spade::csr<T, gpu> c = T(3) * (blocks * blocks);
  check_product("3*(B*B) planned", spade::to_cpu(c), blocks_h, blocks_h, 3.0, tolerance);
  // The result may be kept as tiles.
  const spade::tiled<T, gpu> as_tiles = blocks * blocks;
  check_product("B*B into a tiled", spade::to_cpu(spade::convert<spade::csr>(as_tiles)), blocks_h,
                blocks_h, 1.0, tolerance);

  // Scattered entries: tiles of about one entry.
  const auto sparse_h = random_csr<T>(20000, 20000, 0.0005, rng);
  const auto sparse = spade::to_gpu(sparse_h);
  const std::string declined = spade::explain(sparse * sparse);
  CAPTURE(declined);
  CHECK(contains(declined, "declined: tiled_spgemm: tiles too sparse"));
  CHECK(contains(declined, "chosen: hash_spgemm"));

  // Forced kernels, transposed operands included.
  const spade::csr<T, gpu> forced = spade::eval<spade::kernels::tiled_spgemm>(sparse * sparse);
  check_product("forced tiled_spgemm", spade::to_cpu(forced), sparse_h, sparse_h, 1.0, tolerance);
  const spade::csr<T, gpu> transposes =
      spade::eval<spade::kernels::tiled_spgemm>(spade::transpose(blocks) * blocks);
  check_product("forced tiled_spgemm, A transposed", spade::to_cpu(transposes),
                transposed(blocks_h), blocks_h, 1.0, tolerance);
  const auto safe_h = fp16_safe(blocks_h);
  const auto safe = spade::to_gpu(safe_h);
  const spade::csr<T, gpu> half = spade::eval<spade::kernels::tiled_spgemm_fp16>(safe * safe);
  check_product("forced tiled_spgemm_fp16", spade::to_cpu(half), safe_h, safe_h, 1.0,
                arithmetic_tolerance<T>(tile_arithmetic::fp16));
  const std::string fp16_text = spade::explain(blocks * blocks);
  CHECK(contains(fp16_text, "tiled_spgemm_fp16"));

  // Mismatched shapes are refused before any work.
  const auto wide = spade::convert<spade::tiled>(spade::to_gpu(random_csr<T>(10, 30, 0.2, rng)));
  CHECK_THROWS_AS(spade::device::tiled_spgemm(T(1), wide, wide), spade::dimension_mismatch);
}
