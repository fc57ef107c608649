// GPU suite for hash_spgemm (paper 004): C = alpha·A·B against Eigen in double on every bin, the
// long-row path, edge shapes and every real matrix (A·A and A·Aᵀ), and the planner's choice.
#include <doctest/doctest.h>

#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <spade/device/kernels.hpp>
#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "spgemm_check.hpp"
#include "test_support.hpp"

using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::testing::check_product;
using spade::testing::contains;
using spade::testing::fresh_seed;
using spade::testing::no_device;
using spade::testing::poison_pool;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::splitmix64;
using spade::testing::transposed;
using spade::testing::with_long_rows;

namespace {

template <class T>
spade::csr<T, cpu> run_hash(const spade::csr<T, cpu>& a, const spade::csr<T, cpu>& b, T alpha,
                            spade::device::hash_spgemm_report* report = nullptr,
                            std::int64_t dense_row_min = -1) {
  const auto a_d = spade::to_gpu(a);
  const auto b_d = spade::to_gpu(b);
  const std::size_t guess = (static_cast<std::size_t>(a.rows()) + 1) * 4 +
                            static_cast<std::size_t>(a.nnz() + b.nnz()) * 2 * (4 + sizeof(T));
  poison_pool(std::min<std::size_t>(guess, std::size_t{1} << 28));
  return spade::to_cpu(spade::device::hash_spgemm(alpha, a_d, b_d, report, false, dense_row_min));
}

}  // namespace

TEST_CASE_TEMPLATE("hash_spgemm vs Eigen: edge shapes, empty rows, rectangular operands", T, float,
                   double) {
  if (no_device("the hash_spgemm tests")) return;
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
  cases.push_back({"5x3 * 3x0", random_csr<T>(5, 3, 0.5, rng), spade::csr<T, cpu>(3, 0)});
  cases.push_back({"1x1 * 1x1", random_csr<T>(1, 1, 1.0, rng), random_csr<T>(1, 1, 1.0, rng)});
  cases.push_back({"31x33 * 33x31", random_csr<T>(31, 33, 0.2, rng, 0.8, 0.05),
                   random_csr<T>(33, 31, 0.2, rng, 0.8, 0.05)});
  cases.push_back({"33x31 * 31x1000 (rectangular)", random_csr<T>(33, 31, 0.3, rng, 0.9),
                   random_csr<T>(31, 1000, 0.02, rng, 0.9)});
  cases.push_back(
      {"70x20 without entries * 20x9", spade::csr<T, cpu>(70, 20), random_csr<T>(20, 9, 0.4, rng)});
  cases.push_back({"200x50 * 50x40 without entries", random_csr<T>(200, 50, 0.1, rng),
                   spade::csr<T, cpu>(50, 40)});
  // Products that cancel exactly still leave their position in the pattern (Eigen keeps it).
  cases.push_back({"257x95 with explicit zeros", random_csr<T>(257, 95, 0.1, rng, 0.7, 0.2),
                   random_csr<T>(95, 257, 0.1, rng, 0.7, 0.2)});
  if (std::getenv("SPADE_SKIP_TALL") == nullptr)
    cases.push_back({"1000003x5 with empty rows * 5x7", random_csr<T>(1000003, 5, 0.3, rng, 0.6),
                     random_csr<T>(5, 7, 0.5, rng)});
  for (const auto& c : cases) {
    CAPTURE(c.name);
    for (const T alpha : {T(1), T(-2.5)})
      check_product(c.name, run_hash(c.a, c.b, alpha), c.a, c.b, alpha);
  }
}

TEST_CASE_TEMPLATE("hash_spgemm vs Eigen: rows of at most 32 products, sorted in registers", T,
                   float, double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // B: rows 0–99 empty, rows 100–199 of one entry in column 7 (every product of them lands on
  // one column), rows 200–399 of 1–4 random columns.
  const index_t n = 400;
  std::vector<index_t> b_ptr{0}, b_col;
  std::vector<T> b_val;
  for (index_t k = 0; k < n; ++k) {
    const index_t length = k < 100 ? 0 : k < 200 ? 1 : 1 + static_cast<index_t>(rng.next() % 4);
    std::vector<index_t> cols;
    if (k >= 100 && k < 200) cols.push_back(7);
    while (static_cast<index_t>(cols.size()) < length) {
      const auto c = static_cast<index_t>(rng.next() % n);
      if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
    }
    std::sort(cols.begin(), cols.end());
    for (const index_t c : cols) {
      b_col.push_back(c);
      b_val.push_back(spade::testing::nonzero_value<T>(rng));
    }
    b_ptr.push_back(static_cast<index_t>(b_col.size()));
  }
  const spade::csr<T, cpu> b(n, n, std::move(b_ptr), std::move(b_col), std::move(b_val));
  // A: 3000 rows of 0–40 entries (products 0 to ~100, so every width and the first table get
  // rows), some of them mostly over B's empty rows (more entries than products: several chunks
  // of a group), some only over the one-column rows (up to 32 products summed into one entry).
  std::vector<index_t> a_ptr{0}, a_col;
  std::vector<T> a_val;
  for (index_t i = 0; i < 3000; ++i) {
    const int kind = static_cast<int>(i % 4);
    const index_t length = static_cast<index_t>(rng.next() % (kind == 1 ? 80 : 33));
    std::vector<index_t> cols;
    while (static_cast<index_t>(cols.size()) < length) {
      index_t c = static_cast<index_t>(rng.next() % n);
      if (kind == 1 && cols.size() % 16 != 0) c = static_cast<index_t>(rng.next() % 100);
      if (kind == 2) c = 100 + static_cast<index_t>(rng.next() % 100);
      if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
    }
    std::sort(cols.begin(), cols.end());
    for (const index_t c : cols) {
      a_col.push_back(c);
      a_val.push_back(spade::testing::nonzero_value<T>(rng));
    }
    a_ptr.push_back(static_cast<index_t>(a_col.size()));
  }
  const spade::csr<T, cpu> a(3000, n, std::move(a_ptr), std::move(a_col), std::move(a_val));
  spade::device::hash_spgemm_report report;
  check_product("short rows", run_hash(a, b, T(-1.5), &report), a, b, T(-1.5));
  CAPTURE(report.describe());
  REQUIRE(report.sorted_rows.size() == 4u);
  for (const std::int64_t rows : report.sorted_rows)
    CHECK(rows > 0);
  CHECK(report.symbolic_bins.front() > 0);  // and the first table
}

TEST_CASE_TEMPLATE("hash_spgemm: short rows are summed again when their staging area does not fit",
                   T, float, double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // Every row of A has 8 entries over B's rows of 4 entries among columns 0–7: 32 products per
  // row of C for at most 8 entries, so the staging area (32 slots a row) is 4× C or more.
  const index_t m = 20000, k = 5000, n = 64;
  auto rows_of = [&](index_t rows, index_t cols, index_t length, index_t column_range) {
    std::vector<index_t> ptr{0}, col;
    std::vector<T> val;
    for (index_t i = 0; i < rows; ++i) {
      std::vector<index_t> picked;
      while (static_cast<index_t>(picked.size()) < length) {
        const auto c = static_cast<index_t>(rng.next() % static_cast<std::uint64_t>(column_range));
        if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
      }
      std::sort(picked.begin(), picked.end());
      for (const index_t c : picked) {
        col.push_back(c);
        val.push_back(spade::testing::nonzero_value<T>(rng));
      }
      ptr.push_back(static_cast<index_t>(col.size()));
    }
    return spade::csr<T, cpu>(rows, cols, std::move(ptr), std::move(col), std::move(val));
  };
  const auto a = rows_of(m, k, 8, k);
  const auto b = rows_of(k, n, 4, 8);
  const auto a_d = spade::to_gpu(a);
  const auto b_d = spade::to_gpu(b);
  auto& ctx = spade::default_context();
  ctx.synchronize();
  const std::size_t in_use = ctx.bytes_in_use();
  spade::device::hash_spgemm_report report;
  poison_pool(std::size_t{64} << 20);
  const auto staged = spade::to_cpu(spade::device::hash_spgemm(T(1), a_d, b_d, &report));
  check_product("staged", staged, a, b);
  REQUIRE(report.sorted_rows.size() == 4u);
  CHECK(report.sorted_rows.back() == m);
  CHECK(report.sorted_staged);  // summed once, kept until C's offsets are known

  // What the product holds at once: C's row pointers, the row products and the bins (4 bytes a
  // row each), then the staging area, then C; 64 KiB covers the counters and the scan's scratch.
  const std::size_t entry = sizeof(index_t) + sizeof(T);
  const std::size_t fixed = (static_cast<std::size_t>(m) + 1) * 4 + std::size_t{2} * m * 4;
  const std::size_t stage = static_cast<std::size_t>(m) * 32 * entry;
  const std::size_t c_bytes = static_cast<std::size_t>(staged.nnz()) * entry;
  const std::size_t slack = 64 * 1024;
  REQUIRE(stage > c_bytes + 2 * slack);
  REQUIRE(c_bytes / 2 > slack);
  struct limit_guard {
    ~limit_guard() { spade::default_context().set_memory_limit(0); }
  } restore_limit;
  // Under a memory limit, on NaN-poisoned memory.
  auto product_under = [&](std::size_t limit) {
    ctx.set_memory_limit(0);
    poison_pool(fixed + stage + c_bytes + 2 * slack);
    ctx.set_memory_limit(limit);
    return spade::to_cpu(spade::device::hash_spgemm(T(1), a_d, b_d, &report));
  };
  // No room for the staging area at all: the symbolic phase only counts.
  ctx.set_memory_limit(in_use + fixed + c_bytes + 2 * slack);
  check_product("no staging area",
                spade::to_cpu(spade::device::hash_spgemm(T(1), a_d, b_d, &report)), a, b);
  CHECK_FALSE(report.sorted_staged);
  // Room for the staging area but not for C beside it: the area goes, the rows are summed again.
  check_product("staging area dropped for C",
                product_under(in_use + fixed + stage + slack + c_bytes / 2), a, b);
  CHECK_FALSE(report.sorted_staged);
  // Not even C fits: out_of_memory.
  CHECK_THROWS_AS(product_under(in_use + fixed + c_bytes / 2), spade::out_of_memory);
}

TEST_CASE_TEMPLATE("hash_spgemm vs Eigen: every bin, a row touching every column, long rows", T,
                   float, double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // Row lengths from 0 to 400 against a B of 20–60 per row: products per row from 0 to ~24000
  // and row lengths of C up to the 3000 columns, so every shared-memory shape gets rows.
  std::vector<index_t> lengths;
  for (index_t i = 0; i < 3000; ++i)
    lengths.push_back(static_cast<index_t>((i * 7919) % 401) * (i % 3 == 0 ? 1 : 0) + i % 5);
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (const index_t n : lengths) {
    std::vector<index_t> cols;
    for (index_t j = 0; j < n; ++j)
      cols.push_back(static_cast<index_t>(rng.next() % 3000));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (index_t c : cols) {
      col_idx.push_back(c);
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  const spade::csr<T, cpu> a(3000, 3000, std::move(row_ptr), std::move(col_idx), std::move(values));
  const auto b = random_csr<T>(3000, 3000, 0.013, rng);
  // Long rows of C sorted in shared memory (0), the default routing, and most rows on the
  // dense accumulator (64).
  for (const std::int64_t dense_row_min : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{64}}) {
    CAPTURE(dense_row_min);
    spade::device::hash_spgemm_report report;
    check_product("graded rows", run_hash(a, b, T(1), &report, dense_row_min), a, b);
    CAPTURE(report.describe());
    std::size_t used = 0;
    for (std::size_t k = 0; k + 1 < report.numeric_bins.size(); ++k)
      used += report.numeric_bins[k] != 0;
    // Routing at 64 sends most rows to the dense accumulator, so the larger tables may stay
    // empty; the default (hash_spgemm_dense_row_min = 0) routes nothing that fits a table.
    const bool routed = dense_row_min > 0 || spade::device::hash_spgemm_dense_row_min > 0;
    CHECK(used >= (dense_row_min == 64 ? 2u : 5u));
    if (routed) CHECK(report.long_rows[1] > 0);
  }

  // Full rows of A times a B whose row 0 is full: C's rows 3 and 700 touch every one of 20000
  // columns (long in both phases: a dense accumulator, split across blocks).
  const auto wide_b = with_long_rows(random_csr<T>(2000, 20000, 0.002, rng, 0.9), {0}, 20000, rng);
  const auto wide_a =
      with_long_rows(random_csr<T>(900, 2000, 0.003, rng, 0.7), {3, 700}, 2000, rng);
  spade::device::hash_spgemm_report wide;
  const auto c = run_hash(wide_a, wide_b, T(0.5), &wide);
  CAPTURE(wide.describe());
  check_product("full rows * 20000 columns", c, wide_a, wide_b, 0.5);
  CHECK(wide.long_rows[0] >= 2);
  CHECK(wide.long_rows[1] >= 2);
  CHECK(c.row_ptr()[4] - c.row_ptr()[3] == 20000);

  // A power-law matrix: R-MAT rows from 0 to thousands of entries, squared.
  const auto g = spade::generate::rmat<T>(13, 8, seed);
  spade::device::hash_spgemm_report power;
  check_product("rmat scale 13 squared", run_hash(g, g, T(1), &power), g, g);
  CAPTURE(power.describe());
  CHECK(power.products > 0);
}

TEST_CASE_TEMPLATE("hash_spgemm vs Eigen: A*A and A*transpose(A) on every real matrix", T, float,
                   double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  for (const auto& path : spade::testing::real_matrices()) {
    const std::string name = path.filename().string();
    CAPTURE(name);
    const auto a = spade::read_matrix_market<T>(path);
    const auto at = transposed(a);
    if (a.rows() == a.cols()) check_product("A*A", run_hash(a, a, T(1)), a, a);
    check_product("A*transpose(A)", run_hash(a, at, T(1)), a, at);
  }
}

// A 500x400 and a 400x300 random operand of the planner cases (a few percent dense).
template <class T>
std::pair<spade::csr<T, cpu>, spade::csr<T, cpu>> planner_operands(splitmix64& rng) {
  auto a = random_csr<T>(500, 400, 0.02, rng, 0.9);
  auto b = random_csr<T>(400, 300, 0.03, rng, 0.9);
  return {std::move(a), std::move(b)};
}

TEST_CASE_TEMPLATE("sparse x sparse plans hash_spgemm; explain shows products and bins", T, float,
                   double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto [a_h, b_h] = planner_operands<T>(rng);
  const auto a = spade::to_gpu(a_h);
  const auto b = spade::to_gpu(b_h);
  const std::string text = spade::explain(a * b);
  CAPTURE(text);
  CHECK(contains(text, "chosen: hash_spgemm"));
  CHECK(contains(text, "products"));
  CHECK(contains(text, "compression ratio"));
  CHECK(contains(text, "symbolic bins"));
  spade::csr<T, gpu> c = T(3) * (a * b);
  check_product("3*(A*B) planned", spade::to_cpu(c), a_h, b_h, 3.0);
  c = spade::transpose(b) * spade::transpose(a);
  check_product("B^T*A^T planned", spade::to_cpu(c), transposed(b_h), transposed(a_h));
  // Mismatched shapes are refused before any work.
  CHECK_THROWS_AS(spade::device::hash_spgemm(T(1), a, a), spade::dimension_mismatch);
}

// A case of its own: cuSPARSE's SpGEMM kernels report write-write hazards under racecheck
// (docs/vendor-bugs.md), so scripts/device-test.sh leaves "*cuSPARSE*" cases out of racecheck.
TEST_CASE_TEMPLATE("the cuSPARSE SpGEMM candidate stays reachable (runs cuSPARSE's kernels)", T,
                   float, double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto [a_h, b_h] = planner_operands<T>(rng);
  const auto a = spade::to_gpu(a_h);
  const auto b = spade::to_gpu(b_h);
  const spade::csr<T, gpu> forced = spade::eval<spade::kernels::cusparse_spgemm>(a * b);
  check_product("forced cusparse_spgemm", spade::to_cpu(forced), a_h, b_h);
}

// Two table shapes share the 1024-thread kernels with different shared memory: the larger
// grant must survive a product that needed only the smaller one.
TEST_CASE_TEMPLATE("hash_spgemm: the largest tables after the next largest", T, float, double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto a = random_csr<T>(40, 400, 0.5, rng);
  const auto largest = random_csr<T>(400, 12000, 0.0133, rng);  // ~32000 products per row
  const auto next = random_csr<T>(400, 12000, 0.008, rng);      // ~19000 products per row
  for (const auto* b : {&largest, &next, &largest}) {
    spade::device::hash_spgemm_report report;
    check_product("A*B", run_hash(a, *b, T(1), &report, 0), a, *b);
    CAPTURE(report.describe());
  }
}

// Rows of C with ~1500-6400 entries: the 4096-, 8192- and 16384-slot numeric tables, over 12000
// columns (sorted by counting over a bitmap of C's columns) and over 600000 columns (the bitmap
// does not fit beside the row: the bitonic sort).
TEST_CASE_TEMPLATE("hash_spgemm: rows of thousands of entries, narrow and wide C", T, float,
                   double) {
  if (no_device("the hash_spgemm tests")) return;
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // rows x cols, row i with per_row[i % size] random columns (duplicates dropped).
  auto rows_of = [&](index_t rows, index_t cols, const std::vector<index_t>& per_row) {
    std::vector<index_t> row_ptr{0}, col_idx;
    std::vector<T> values;
    for (index_t i = 0; i < rows; ++i) {
      std::vector<index_t> picked;
      for (index_t j = 0; j < per_row[static_cast<std::size_t>(i) % per_row.size()]; ++j)
        picked.push_back(static_cast<index_t>(rng.next() % static_cast<std::uint64_t>(cols)));
      std::sort(picked.begin(), picked.end());
      picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
      for (const index_t c : picked) {
        col_idx.push_back(c);
        values.push_back(spade::testing::nonzero_value<T>(rng));
      }
      row_ptr.push_back(static_cast<index_t>(col_idx.size()));
    }
    return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx),
                              std::move(values));
  };
  // A's rows of 16, 32, 48, 64 entries times B's rows of 100: 1600-6400 products per row.
  const auto a = rows_of(96, 400, {16, 32, 48, 64});
  for (const index_t cols : {index_t{12000}, index_t{600000}}) {
    CAPTURE(cols);
    const auto b = rows_of(400, cols, {100});
    spade::device::hash_spgemm_report report;
    check_product("A*B", run_hash(a, b, T(1), &report, 0), a, b);
    CAPTURE(report.describe());
    // The three largest numeric tables (4096, 8192 and 16384 slots on the H100) all take rows.
    const std::size_t largest = report.numeric_tables.size() - 1;
    CHECK(report.numeric_bins[largest] > 0);
    CHECK(report.numeric_bins[largest - 1] > 0);
    CHECK(report.numeric_bins[largest - 2] > 0);
    CHECK(report.long_rows[1] == 0);
  }
}
