// GPU csr / dense ↔ gcoo conversions, checked bit for bit against a brute-force grouping.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spade/device/convert.hpp>
#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::testing::bits_equal;
using spade::testing::check_same;
using spade::testing::fresh_seed;
using spade::testing::has_nan;
using spade::testing::pool_guard;
using spade::testing::random_csr;
using spade::testing::random_dense;
using spade::testing::splitmix64;

namespace {

// The paper's p = 4 and its neighbours, one that divides nothing, a warp, and groups taller
// than most test matrices.
const std::vector<index_t> group_sizes = {1, 2, 4, 7, 32, 256};

// ---- the reference: group by hand, sort by (column, row) ------------------------------------

struct entry {
  index_t row;
  index_t col;
  std::size_t at;  // position in the caller's value array
};

// The gcoo of entries given in any order with unique positions: bucket by group, order each
// bucket by (column, row). Built with the checked constructor, so the reference itself is
// known to satisfy gcoo's invariants.
template <class T>
spade::gcoo<T, cpu> group_by_hand(index_t rows, index_t cols, index_t p, std::vector<entry> entries,
                                  const std::vector<T>& values) {
  std::sort(entries.begin(), entries.end(), [p](const entry& a, const entry& b) {
    return std::tuple(a.row / p, a.col, a.row) < std::tuple(b.row / p, b.col, b.row);
  });
  const auto groups = static_cast<std::size_t>(spade::detail::group_count(rows, p));
  std::vector<index_t> offsets(groups, 0), counts(groups, 0), row_idx, col_idx;
  std::vector<T> sorted_values;
  for (const entry& e : entries) {
    ++counts[static_cast<std::size_t>(e.row / p)];
    row_idx.push_back(e.row);
    col_idx.push_back(e.col);
    sorted_values.push_back(values[e.at]);
  }
  for (std::size_t g = 1; g < groups; ++g)
    offsets[g] = offsets[g - 1] + counts[g - 1];
  return spade::gcoo<T, cpu>(rows, cols, p, std::move(sorted_values), std::move(offsets),
                             std::move(counts), std::move(row_idx), std::move(col_idx));
}

// Every stored entry of `a`, stored zeros included: csr → gcoo moves the pattern unchanged.
template <class T>
spade::gcoo<T, cpu> reference_gcoo(const spade::csr<T, cpu>& a, index_t p) {
  std::vector<entry> entries;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      entries.push_back({i, a.col_idx()[k], static_cast<std::size_t>(k)});
  return group_by_hand(a.rows(), a.cols(), p, std::move(entries), a.values());
}

// The elements unequal to zero (NaN kept, -0.0 dropped), as dense → csr keeps them.
template <class T>
spade::gcoo<T, cpu> reference_gcoo(const spade::dense<T, cpu, row_major>& d, index_t p) {
  std::vector<entry> entries;
  for (index_t i = 0; i < d.rows(); ++i)
    for (index_t j = 0; j < d.cols(); ++j)
      if (d(i, j) != T(0)) entries.push_back({i, j, d.offset(i, j)});
  return group_by_hand(d.rows(), d.cols(), p, std::move(entries), d.values());
}

template <class Layout, class T>
spade::dense<T, cpu, Layout> reference_dense(const spade::gcoo<T, cpu>& a) {
  spade::dense<T, cpu, Layout> d(a.rows(), a.cols());
  for (std::size_t k = 0; k < a.values().size(); ++k)
    d(a.row_idx()[k], a.col_idx()[k]) = a.values()[k];
  return d;
}

// ---- moving gcoo between spaces (the way transfer.hpp moves csr) ------------------------------

// Downloads through the checked constructor: a result that breaks an invariant (group bounds,
// order, offsets, an index never written) throws invalid_matrix naming the first bad entry.
template <class T>
spade::gcoo<T, cpu> download(const spade::gcoo<T, gpu>& g) {
  return spade::gcoo<T, cpu>(g.rows(), g.cols(), g.group_size(), g.values().to_host(),
                             g.group_offsets().to_host(), g.group_nnz().to_host(),
                             g.row_idx().to_host(), g.col_idx().to_host());
}

template <class T>
spade::gcoo<T, gpu> upload(const spade::gcoo<T, cpu>& h) {
  return spade::gcoo<T, gpu>(
      spade::unchecked, h.rows(), h.cols(), h.group_size(), spade::device_buffer<T>(h.values()),
      spade::device_buffer<index_t>(h.group_offsets()),
      spade::device_buffer<index_t>(h.group_nnz()), spade::device_buffer<index_t>(h.row_idx()),
      spade::device_buffer<index_t>(h.col_idx()));
}

template <class T>
void check_same_gcoo(const spade::gcoo<T, cpu>& got, const spade::gcoo<T, cpu>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.group_size() == want.group_size());
  CHECK(got.group_offsets() == want.group_offsets());
  CHECK(got.group_nnz() == want.group_nnz());
  CHECK(got.row_idx() == want.row_idx());
  CHECK(got.col_idx() == want.col_idx());
  CHECK(bits_equal(got.values(), want.values()));
}

// Fills `bytes` of the context's pool with all-ones bits (NaN as float or double, -1 as an
// index) and gives them back, so the conversion that runs next most likely receives them: an
// element it forgets to write then shows as NaN or as an index the checked download rejects.
void poison_pool(std::size_t bytes) {
  if (bytes == 0) return;
  const spade::device_buffer<unsigned char> poison(std::vector<unsigned char>(bytes, 0xff));
}

template <class T>
std::size_t result_bytes(std::size_t nnz) {
  return nnz * (sizeof(T) + 2 * sizeof(index_t));
}

// ---- inputs -----------------------------------------------------------------------------------

struct sparse_case {
  const char* name;
  index_t rows;
  index_t cols;
  double density;       // of a non-empty row
  double row_fraction;  // of rows that are non-empty
};

const std::vector<sparse_case> sparse_cases = {
    {"0x0", 0, 0, 0.3, 1.0},
    {"0x5", 0, 5, 0.3, 1.0},
    {"5x0", 5, 0, 0.3, 1.0},
    {"1x1", 1, 1, 1.0, 1.0},
    {"31x33", 31, 33, 0.3, 1.0},
    {"33x31", 33, 31, 0.3, 1.0},
    {"257x95, rows not a multiple of any p but 1", 257, 95, 0.2, 1.0},
    {"1000003x3 sparse", 1000003, 3, 0.2, 1.0},
    {"3x1000003", 3, 1000003, 0.001, 1.0},
    {"one dense row of 100000", 1, 100000, 1.0, 1.0},
    {"empty rows and groups", 20000, 64, 0.2, 0.01},
    {"7x9 without entries", 7, 9, 0.0, 0.0},
};

// A rows × cols csr with at most `per_row` entries in a row, drawn without walking every column,
// so shapes like 200000 × 70000 (whose packed sort keys need 64 bits) stay cheap to make.
template <class T>
spade::csr<T, cpu> scattered_csr(index_t rows, index_t cols, index_t per_row, splitmix64& rng) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  std::vector<index_t> row_cols;
  for (index_t i = 0; i < rows; ++i) {
    row_cols.clear();
    const auto count = static_cast<index_t>(rng.below(static_cast<std::uint64_t>(per_row) + 1));
    for (index_t n = 0; n < count; ++n)
      row_cols.push_back(static_cast<index_t>(rng.below(static_cast<std::uint64_t>(cols))));
    std::sort(row_cols.begin(), row_cols.end());
    row_cols.erase(std::unique(row_cols.begin(), row_cols.end()), row_cols.end());
    for (const index_t j : row_cols) {
      col_idx.push_back(j);
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

// csr → gcoo against the reference, gcoo → csr back to `a`, both directions independently: the
// reverse starts from the uploaded reference, not from the forward result.
template <class T>
void check_csr_round_trip(const spade::csr<T, cpu>& a, const spade::csr<T, gpu>& g, index_t p) {
  CAPTURE(p);
  const auto want = reference_gcoo(a, p);
  poison_pool(result_bytes<T>(a.values().size()));
  const auto g_gcoo = spade::device::csr_to_gcoo(g, p);
  CHECK(g_gcoo.groups() == spade::detail::group_count(a.rows(), p));
  check_same_gcoo(download(g_gcoo), want);
  poison_pool(result_bytes<T>(a.values().size()));
  check_same(spade::to_cpu(spade::device::gcoo_to_csr(upload(want))), a);
  check_same(spade::to_cpu(spade::device::gcoo_to_csr(g_gcoo)), a);
}

template <class Layout, class T>
void check_to_dense(const spade::gcoo<T, cpu>& h, const spade::gcoo<T, gpu>& g) {
  poison_pool(static_cast<std::size_t>(h.rows()) * static_cast<std::size_t>(h.cols()) * sizeof(T));
  const auto got = spade::to_cpu(spade::device::gcoo_to_dense<T, Layout>(g));
  const auto want = reference_dense<Layout>(h);
  check_same(got, want);
  if (!has_nan(h.values())) CHECK_FALSE(has_nan(got.values()));
}

}  // namespace

TEST_CASE_TEMPLATE("gpu csr -> gcoo -> csr equals the brute-force grouping", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const sparse_case& c : sparse_cases) {
    CAPTURE(c.name);
    // Some stored zeros: the conversion moves the pattern, so they must stay.
    const auto a = random_csr<T>(c.rows, c.cols, c.density, rng, c.row_fraction, 0.05);
    const auto g = spade::to_gpu(a);
    for (const index_t p : group_sizes)
      check_csr_round_trip(a, g, p);
  }
  {
    // 200000 rows × 70000 columns: 18 + 17 bits of (row, column) already pass 32, so for p > 1
    // both sorts take their 64-bit keys.
    const auto a = scattered_csr<T>(200000, 70000, 3, rng);
    const auto g = spade::to_gpu(a);
    for (const index_t p : {index_t{1}, index_t{3}, index_t{64}, index_t{1024}})
      check_csr_round_trip(a, g, p);
  }
  {
    // One group taller than the matrix.
    const auto a = random_csr<T>(45, 70, 0.3, rng);
    check_csr_round_trip(a, spade::to_gpu(a), index_t{1} << 30);
  }
}

TEST_CASE_TEMPLATE("gpu csr -> gcoo -> csr for every real matrix", T, float, double) {
  pool_guard guard;
  const auto files = spade::testing::real_matrices();
  REQUIRE_FALSE(files.empty());
  for (const std::filesystem::path& path : files) {
    const std::string name = path.filename().string();
    CAPTURE(name);
    const auto a = spade::read_matrix_market<T>(path);
    const auto g = spade::to_gpu(a);
    for (const index_t p : group_sizes)
      check_csr_round_trip(a, g, p);
  }
}

TEST_CASE_TEMPLATE("gpu dense -> gcoo keeps NaN and drops -0.0 like the reference", T, float,
                   double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  struct shape {
    index_t rows;
    index_t cols;
  };
  const std::vector<shape> shapes = {{0, 0},      {0, 5},       {5, 0},     {1, 1},
                                     {31, 33},    {33, 31},     {65, 97},   {1000003, 3},
                                     {1, 100000}, {1, 1000000}, {2100, 300}};
  for (const shape s : shapes) {
    for (const double zero_fraction : {0.0, 0.5, 0.97, 1.0}) {
      CAPTURE(s.rows);
      CAPTURE(s.cols);
      CAPTURE(zero_fraction);
      const auto d = random_dense<T, row_major>(s.rows, s.cols, zero_fraction, rng, true);
      const auto g = spade::to_gpu(d);
      // 1024 rows per group: a lane walks its column over many more rows than a warp's width.
      for (const index_t p : {index_t{1}, index_t{2}, index_t{4}, index_t{7}, index_t{32},
                              index_t{33}, index_t{256}, index_t{1024}}) {
        CAPTURE(p);
        const auto want = reference_gcoo(d, p);
        poison_pool(result_bytes<T>(want.values().size()));
        check_same_gcoo(download(spade::device::dense_to_gcoo(g, p)), want);
      }
    }
  }
  SUBCASE("empty groups between full ones") {
    // Rows 0..49 and 80..119 zero: with p = 4 and 7, whole groups are empty, others full.
    auto d = random_dense<T, row_major>(150, 45, 0.0, rng, true);
    for (index_t i = 0; i < d.rows(); ++i)
      if (i < 50 || (i >= 80 && i < 120))
        for (index_t j = 0; j < d.cols(); ++j)
          d(i, j) = T(0);
    const auto g = spade::to_gpu(d);
    for (const index_t p : group_sizes) {
      CAPTURE(p);
      const auto got = download(spade::device::dense_to_gcoo(g, p));
      check_same_gcoo(got, reference_gcoo(d, p));
      if (p == 4) CHECK(got.group_nnz()[0] == 0);
    }
  }
}

TEST_CASE_TEMPLATE("gpu gcoo -> dense equals the reference in both layouts", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  constexpr std::size_t dense_case_limit = 20'000'000;
  for (const sparse_case& c : sparse_cases) {
    if (static_cast<std::size_t>(c.rows) * static_cast<std::size_t>(c.cols) > dense_case_limit)
      continue;
    CAPTURE(c.name);
    const auto a = random_csr<T>(c.rows, c.cols, c.density, rng, c.row_fraction);
    for (const index_t p : group_sizes) {
      CAPTURE(p);
      const auto h = reference_gcoo(a, p);
      const auto g = upload(h);
      check_to_dense<row_major>(h, g);
      check_to_dense<col_major>(h, g);
    }
  }
  SUBCASE("NaN and -0.0 values move unchanged") {
    const auto d = random_dense<T, row_major>(37, 29, 0.5, rng, true);
    const auto h = reference_gcoo(d, 4);
    const auto g = upload(h);
    check_to_dense<row_major>(h, g);
    check_to_dense<col_major>(h, g);
    // dense → gcoo → dense: -0.0 was dropped, so it comes back as +0.0.
    auto want = d;
    for (T& x : want.values())
      if (x == T(0)) x = T(0);
    check_same(spade::to_cpu(spade::device::gcoo_to_dense<T, row_major>(
                   spade::device::dense_to_gcoo(spade::to_gpu(d), 4))),
               want);
  }
}

TEST_CASE_TEMPLATE("gpu gcoo conversions reject a group size below 1", T, float, double) {
  pool_guard guard;
  const spade::csr<T, cpu> a(3, 4, {0, 1, 1, 2}, {2, 0}, {T(1), T(2)});
  const auto g = spade::to_gpu(a);
  const auto d = spade::device::csr_to_dense<T, row_major>(g);
  for (const index_t p : {index_t{0}, index_t{-3}, std::numeric_limits<index_t>::min()}) {
    CAPTURE(p);
    CHECK_THROWS_AS(spade::device::csr_to_gcoo(g, p), spade::invalid_matrix);
    CHECK_THROWS_AS(spade::device::dense_to_gcoo(d, p), spade::invalid_matrix);
  }
  // Still usable afterwards.
  check_same_gcoo(download(spade::device::csr_to_gcoo(g, 2)), reference_gcoo(a, 2));
}
