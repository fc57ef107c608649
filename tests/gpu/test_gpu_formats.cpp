// GPU transfers and format conversions, checked bit for bit against the host conversions.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::testing::check_same;
using spade::testing::fresh_seed;
using spade::testing::has_nan;
using spade::testing::pool_guard;
using spade::testing::random_coo_with_repeats;
using spade::testing::random_csr;
using spade::testing::random_dense;
using spade::testing::splitmix64;

namespace {

struct shape {
  index_t rows;
  index_t cols;
};

// Empty each way, one element, warp and tile ± 1, tall and wide skinny, one long row.
const std::vector<shape> edge_shapes = {{0, 0},       {1, 1},    {0, 5},    {5, 0},
                                        {31, 33},     {33, 31},  {32, 32},  {1000003, 3},
                                        {3, 1000003}, {1, 5000}, {5000, 1}, {65, 97}};

struct sparse_case {
  const char* name;
  index_t rows;
  index_t cols;
  double density;       // of a non-empty row
  double row_fraction;  // of rows that are non-empty
};

const std::vector<sparse_case> sparse_cases = {
    {"0x0", 0, 0, 0.3, 1.0},
    {"1x1", 1, 1, 1.0, 1.0},
    {"0x5", 0, 5, 0.3, 1.0},
    {"5x0", 5, 0, 0.3, 1.0},
    {"31x33", 31, 33, 0.3, 1.0},
    {"33x31", 33, 31, 0.3, 1.0},
    {"32x32", 32, 32, 0.3, 1.0},
    {"1000003x3", 1000003, 3, 0.4, 1.0},
    {"3x1000003", 3, 1000003, 0.01, 1.0},
    {"many empty rows", 200000, 64, 0.2, 0.02},
    {"one dense row of 5000", 1, 5000, 1.0, 1.0},
    {"no entries at all", 200000, 70000, 0.0, 0.0},
};

// Dense conversions of sparse cases stay below this many elements (host reference cost).
constexpr std::size_t dense_case_limit = 20'000'000;
// Real matrices are converted to dense up to this many elements.
constexpr double real_dense_limit = 2e8;

std::size_t elements(index_t rows, index_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

template <class Layout, class T>
void check_dense_round_trip(const spade::csr<T, cpu>& a, const spade::csr<T, gpu>& g) {
  const auto want = spade::host::csr_to_dense<Layout>(a);
  const auto g_dense = spade::device::csr_to_dense<T, Layout>(g);
  const auto got = spade::to_cpu(g_dense);
  check_same(got, want);
  // No NaN poison hook exists yet: at least an element the kernels never wrote must not show.
  if (!has_nan(a.values())) CHECK_FALSE(has_nan(got.values()));
  check_same(spade::to_cpu(spade::device::dense_to_csr(g_dense)), spade::host::dense_to_csr(want));
}

}  // namespace

TEST_CASE_TEMPLATE("gpu transfers: to_gpu then to_cpu gives back the same bits", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const shape s : edge_shapes) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    const auto a = random_csr<T>(s.rows, s.cols, 0.3, rng, 1.0, 0.05);
    check_same(spade::to_cpu(spade::to_gpu(a)), a);
    const auto c = spade::host::csr_to_coo(a);
    check_same(spade::to_cpu(spade::to_gpu(c)), c);
    const auto d_row = random_dense<T, row_major>(s.rows, s.cols, 0.3, rng, true);
    check_same(spade::to_cpu(spade::to_gpu(d_row)), d_row);
    const auto d_col = random_dense<T, col_major>(s.rows, s.cols, 0.3, rng, true);
    check_same(spade::to_cpu(spade::to_gpu(d_col)), d_col);
    const spade::vector<T, cpu> x(d_row.values());
    check_same(spade::to_cpu(spade::to_gpu(x)), x);
  }
}

TEST_CASE_TEMPLATE("gpu objects: copies are deep, moves leave the source empty", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  const auto twice_plus_one = [](std::vector<T>& values) {
    for (T& v : values)
      v = v * T(2) + T(1);
  };

  SUBCASE("csr") {
    const auto h = random_csr<T>(31, 33, 0.3, rng);
    REQUIRE(h.nnz() > 0);
    const spade::csr<T, gpu> g = spade::to_gpu(h);
    spade::csr<T, gpu> copy = g;
    CHECK(copy.row_ptr().data() != g.row_ptr().data());
    CHECK(copy.col_idx().data() != g.col_idx().data());
    CHECK(copy.values().data() != g.values().data());
    auto changed = spade::to_cpu(copy);
    twice_plus_one(changed.values());
    copy.values() = spade::device_buffer<T>(changed.values());
    check_same(spade::to_cpu(g), h);
    check_same(spade::to_cpu(copy), changed);

    spade::csr<T, gpu> moved = std::move(copy);
    CHECK(copy.row_ptr().empty());
    CHECK(copy.col_idx().empty());
    CHECK(copy.values().empty());
    check_same(spade::to_cpu(moved), changed);
    spade::csr<T, gpu> assigned;
    assigned = std::move(moved);
    CHECK(moved.values().empty());
    check_same(spade::to_cpu(assigned), changed);
    spade::csr<T, gpu> copy_assigned;
    copy_assigned = g;
    CHECK(copy_assigned.values().data() != g.values().data());
    check_same(spade::to_cpu(copy_assigned), h);
  }
  SUBCASE("coo") {
    const auto h = spade::host::csr_to_coo(random_csr<T>(33, 31, 0.3, rng));
    REQUIRE(h.nnz() > 0);
    const spade::coo<T, gpu> g = spade::to_gpu(h);
    spade::coo<T, gpu> copy = g;
    CHECK(copy.row_idx().data() != g.row_idx().data());
    CHECK(copy.values().data() != g.values().data());
    auto changed = spade::to_cpu(copy);
    twice_plus_one(changed.values());
    copy.values() = spade::device_buffer<T>(changed.values());
    check_same(spade::to_cpu(g), h);
    check_same(spade::to_cpu(copy), changed);

    spade::coo<T, gpu> moved = std::move(copy);
    CHECK(copy.row_idx().empty());
    CHECK(copy.col_idx().empty());
    CHECK(copy.values().empty());
    check_same(spade::to_cpu(moved), changed);
  }
  SUBCASE("dense, both layouts") {
    const auto h_row = random_dense<T, row_major>(31, 33, 0.3, rng);
    const spade::dense<T, gpu, row_major> g_row = spade::to_gpu(h_row);
    spade::dense<T, gpu, row_major> copy_row = g_row;
    CHECK(copy_row.data() != g_row.data());
    auto changed_row = spade::to_cpu(copy_row);
    twice_plus_one(changed_row.values());
    copy_row.values() = spade::device_buffer<T>(changed_row.values());
    check_same(spade::to_cpu(g_row), h_row);
    check_same(spade::to_cpu(copy_row), changed_row);
    spade::dense<T, gpu, row_major> moved_row = std::move(copy_row);
    CHECK(copy_row.values().empty());
    check_same(spade::to_cpu(moved_row), changed_row);

    const auto h_col = random_dense<T, col_major>(33, 31, 0.3, rng);
    const spade::dense<T, gpu, col_major> g_col = spade::to_gpu(h_col);
    spade::dense<T, gpu, col_major> copy_col = g_col;
    CHECK(copy_col.data() != g_col.data());
    auto changed_col = spade::to_cpu(copy_col);
    twice_plus_one(changed_col.values());
    copy_col.values() = spade::device_buffer<T>(changed_col.values());
    check_same(spade::to_cpu(g_col), h_col);
    check_same(spade::to_cpu(copy_col), changed_col);
    spade::dense<T, gpu, col_major> moved_col = std::move(copy_col);
    CHECK(copy_col.values().empty());
    check_same(spade::to_cpu(moved_col), changed_col);
  }
  SUBCASE("vector") {
    const spade::vector<T, cpu> h(random_dense<T, row_major>(1, 1000, 0.0, rng).values());
    const spade::vector<T, gpu> g = spade::to_gpu(h);
    spade::vector<T, gpu> copy = g;
    CHECK(copy.data() != g.data());
    auto changed = spade::to_cpu(copy);
    twice_plus_one(changed.values());
    copy.values() = spade::device_buffer<T>(changed.values());
    check_same(spade::to_cpu(g), h);
    check_same(spade::to_cpu(copy), changed);
    spade::vector<T, gpu> moved = std::move(copy);
    CHECK(copy.values().empty());
    check_same(spade::to_cpu(moved), changed);
  }
}

TEST_CASE_TEMPLATE("gpu csr -> coo -> csr equals the host conversions", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const sparse_case& c : sparse_cases) {
    CAPTURE(c.name);
    // Some stored zeros: csr ↔ coo must keep them.
    const auto a = random_csr<T>(c.rows, c.cols, c.density, rng, c.row_fraction, 0.05);
    const auto g = spade::to_gpu(a);
    const auto g_coo = spade::device::csr_to_coo(g);
    const auto want_coo = spade::host::csr_to_coo(a);
    check_same(spade::to_cpu(g_coo), want_coo);
    check_same(spade::to_cpu(spade::device::coo_to_csr(g_coo)), spade::host::coo_to_csr(want_coo));
    // The public entry point dispatches to the same kernels.
    check_same(spade::to_cpu(spade::convert<spade::csr>(spade::convert<spade::coo>(g))), a);
  }
}

TEST_CASE_TEMPLATE("gpu coo -> csr sorts and sums repeated positions like the host", T, float,
                   double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};

  SUBCASE("many repeats, random order") {
    struct repeat_case {
      const char* name;
      index_t rows;
      index_t cols;
      std::size_t entries;
      std::size_t positions;
    };
    const std::vector<repeat_case> cases = {
        {"0x0", 0, 0, 0, 0},
        {"0x5", 0, 5, 0, 0},
        {"5x0", 5, 0, 0, 0},
        {"7x9 without entries", 7, 9, 0, 0},
        {"1x1", 1, 1, 1000, 1},
        {"31x33", 31, 33, 3000, 200},
        {"33x31", 33, 31, 3000, 900},
        {"32x32", 32, 32, 5000, 1024},
        {"1000003x3", 1000003, 3, 2000000, 1000000},
        {"many empty rows", 1000000, 1000, 50000, 20000},
        {"one long row", 1, 5000, 20000, 5000},
        {"one position 10^5 times", 1000, 1000, 100000, 1},
    };
    for (const repeat_case& c : cases) {
      CAPTURE(c.name);
      const auto a = random_coo_with_repeats<T>(c.rows, c.cols, c.entries, c.positions, rng);
      const auto got = spade::to_cpu(spade::device::coo_to_csr(spade::to_gpu(a)));
      check_same(got, spade::host::coo_to_csr(a));
    }
  }
  SUBCASE("pairs of arbitrary values, random order") {
    for (const sparse_case& c : sparse_cases) {
      CAPTURE(c.name);
      const auto a = spade::testing::shuffled_coo_with_pairs(
          random_csr<T>(c.rows, c.cols, c.density, rng, c.row_fraction), rng);
      const auto got = spade::to_cpu(spade::device::coo_to_csr(spade::to_gpu(a)));
      check_same(got, spade::host::coo_to_csr(a));
    }
  }
}

TEST_CASE_TEMPLATE("gpu csr -> dense -> csr equals the host in both layouts", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const sparse_case& c : sparse_cases) {
    if (elements(c.rows, c.cols) > dense_case_limit) continue;
    CAPTURE(c.name);
    // Stored zeros become plain zeros in dense and are dropped on the way back.
    const auto a = random_csr<T>(c.rows, c.cols, c.density, rng, c.row_fraction, 0.05);
    const auto g = spade::to_gpu(a);
    check_dense_round_trip<row_major>(a, g);
    check_dense_round_trip<col_major>(a, g);
  }
}

TEST_CASE_TEMPLATE("gpu dense -> csr keeps NaN and drops -0.0 like the host", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const shape s : edge_shapes) {
    for (const double zero_fraction : {0.0, 0.5, 0.97, 1.0}) {
      CAPTURE(s.rows);
      CAPTURE(s.cols);
      CAPTURE(zero_fraction);
      const auto d_row = random_dense<T, row_major>(s.rows, s.cols, zero_fraction, rng, true);
      check_same(spade::to_cpu(spade::device::dense_to_csr(spade::to_gpu(d_row))),
                 spade::host::dense_to_csr(d_row));
      const auto d_col = random_dense<T, col_major>(s.rows, s.cols, zero_fraction, rng, true);
      check_same(spade::to_cpu(spade::device::dense_to_csr(spade::to_gpu(d_col))),
                 spade::host::dense_to_csr(d_col));
    }
  }
  SUBCASE("one completely dense row of 5000 among sparse rows") {
    auto d = random_dense<T, row_major>(9, 5000, 0.999, rng);
    for (index_t j = 0; j < d.cols(); ++j)
      d(4, j) = spade::testing::nonzero_value<T>(rng);
    const auto got = spade::to_cpu(spade::device::dense_to_csr(spade::to_gpu(d)));
    check_same(got, spade::host::dense_to_csr(d));
    CHECK(got.row_ptr()[5] - got.row_ptr()[4] == 5000);
  }
}

TEST_CASE_TEMPLATE("gpu relayout both ways equals the host", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  for (const shape s : edge_shapes) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    // Without NaN in the input, a NaN in the output would be an element never written.
    const auto d_row = random_dense<T, row_major>(s.rows, s.cols, 0.1, rng);
    const auto g_col = spade::device::relayout<T, row_major, col_major>(spade::to_gpu(d_row));
    const auto got_col = spade::to_cpu(g_col);
    check_same(got_col, spade::host::relayout<col_major>(d_row));
    CHECK_FALSE(has_nan(got_col.values()));
    check_same(spade::to_cpu(spade::device::relayout<T, col_major, row_major>(g_col)), d_row);

    // With NaN and -0.0 in the input: the bits move unchanged.
    const auto d_col = random_dense<T, col_major>(s.rows, s.cols, 0.1, rng, true);
    const auto g_row = spade::device::relayout<T, col_major, row_major>(spade::to_gpu(d_col));
    check_same(spade::to_cpu(g_row), spade::host::relayout<row_major>(d_col));
    check_same(spade::to_cpu(spade::convert<spade::dense<T, gpu, col_major>>(g_row)), d_col);
  }
}

TEST_CASE_TEMPLATE("gpu conversions of every real matrix equal the host", T, float, double) {
  pool_guard guard;
  const auto files = spade::testing::real_matrices();
  REQUIRE_FALSE(files.empty());
  std::size_t dense_checked = 0;
  for (const std::filesystem::path& path : files) {
    const std::string name = path.filename().string();
    CAPTURE(name);
    const auto a = spade::read_matrix_market<T>(path);
    const auto g = spade::to_gpu(a);
    const auto g_coo = spade::device::csr_to_coo(g);
    const auto want_coo = spade::host::csr_to_coo(a);
    check_same(spade::to_cpu(g_coo), want_coo);
    check_same(spade::to_cpu(spade::device::coo_to_csr(g_coo)), spade::host::coo_to_csr(want_coo));
    if (static_cast<double>(a.rows()) * static_cast<double>(a.cols()) <= real_dense_limit) {
      // Alternate layouts so both are exercised on real patterns without doubling the cost.
      if (dense_checked++ % 2 == 0)
        check_dense_round_trip<row_major>(a, g);
      else
        check_dense_round_trip<col_major>(a, g);
    }
  }
}

TEST_CASE_TEMPLATE("gpu out_of_memory is thrown and leaves the context usable", T, float, double) {
  pool_guard guard;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  // 200000² elements: 160 GB in float, 320 GB in double, more than any one device holds.
  constexpr index_t n = 200000;
  CHECK_THROWS_AS((spade::dense<T, gpu>(n, n)), spade::out_of_memory);

  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1, 3);
  row_ptr[0] = 0;
  const spade::csr<T, cpu> huge(n, n, std::move(row_ptr), {1, 7, n - 1}, {T(1), T(2), T(3)});
  const auto g_huge = spade::to_gpu(huge);
  CHECK_THROWS_AS((spade::device::csr_to_dense<T, row_major>(g_huge)), spade::out_of_memory);
  CHECK_THROWS_AS((spade::device::csr_to_dense<T, col_major>(g_huge)), spade::out_of_memory);

  const auto a = random_csr<T>(31, 33, 0.3, rng);
  const auto g = spade::to_gpu(a);
  check_same(spade::to_cpu(spade::device::coo_to_csr(spade::device::csr_to_coo(g))), a);
  check_dense_round_trip<row_major>(a, g);
  check_dense_round_trip<col_major>(a, g);
}

TEST_CASE("gpu dense -> csr rejects more than 2^31 - 1 nonzeros") {
  pool_guard guard;
  // 46341² = 2147488281 nonzeros, 8.6 GB of float: the device must hold it with room to spare.
  constexpr index_t n = 46341;
  const std::size_t count = elements(n, n);
  if (spade::default_context().properties().global_memory_bytes < 3 * count * sizeof(float)) {
    MESSAGE("skipped: the device has too little memory for a 46341 x 46341 float matrix");
    return;
  }
  {
    const spade::dense<float, gpu> d(n, n,
                                     spade::device_buffer<float>(std::vector<float>(count, 1.0f)));
    CHECK_THROWS_AS(spade::device::dense_to_csr(d), spade::invalid_matrix);
  }
  // Still usable afterwards.
  const spade::csr<float, cpu> a(2, 3, {0, 1, 2}, {2, 0}, {1.0f, 2.0f});
  check_same(spade::to_cpu(spade::device::dense_to_csr(
                 spade::device::csr_to_dense<float, row_major>(spade::to_gpu(a)))),
             a);
}

// ---- constructors and printing of gpu objects ---------------------------------------------------

namespace {

template <class X>
std::string printed(const X& x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

/// The text a gpu object prints is its host copy's, with "gpu" in the header.
std::string as_gpu_text(std::string host_text) {
  const auto at = host_text.find(", cpu>");
  REQUIRE(at != std::string::npos);
  return host_text.replace(at, 6, ", gpu>");
}

}  // namespace

TEST_CASE_TEMPLATE("gpu zeros, ones, constant and identity hold the host's values", T, float,
                   double) {
  pool_guard guard;
  using row_dense = spade::dense<T, gpu, row_major>;
  using col_dense = spade::dense<T, gpu, col_major>;
  CHECK(spade::to_cpu(row_dense::zeros(3, 5)).values() == std::vector<T>(15, T(0)));
  CHECK(spade::to_cpu(col_dense::ones(4, 2)).values() == std::vector<T>(8, T(1)));
  CHECK(spade::to_cpu(row_dense::constant(2, 3, T(2.5))).values() == std::vector<T>(6, T(2.5)));
  const auto id = spade::to_cpu(col_dense::identity(33));
  for (index_t i = 0; i < 33; ++i)
    for (index_t j = 0; j < 33; ++j)
      CHECK(id(i, j) == (i == j ? T(1) : T(0)));
  CHECK(spade::to_cpu(spade::vector<T, gpu>::constant(1000003, T(-3))).values() ==
        std::vector<T>(1000003, T(-3)));
  CHECK(spade::to_cpu(spade::vector<T, gpu>::zeros(31)).values() == std::vector<T>(31, T(0)));
  const auto sparse_id = spade::to_cpu(spade::csr<T, gpu>::identity(31));
  CHECK(sparse_id.row_ptr() == spade::csr<T, cpu>::identity(31).row_ptr());
  CHECK(sparse_id.col_idx() == spade::csr<T, cpu>::identity(31).col_idx());
  CHECK(sparse_id.values() == std::vector<T>(31, T(1)));
  // I·A on the device is A.
  splitmix64 rng{fresh_seed()};
  const auto a = random_csr<T>(31, 17, 0.2, rng);
  const spade::csr<T, gpu> product = spade::csr<T, gpu>::identity(31) * spade::to_gpu(a);
  check_same(spade::to_cpu(product), a);
  CHECK(row_dense::zeros(0, 0).rows() == 0);
}

TEST_CASE_TEMPLATE("a gpu object prints as its host copy does", T, float, double) {
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto h = random_csr<T>(40, 30, 0.05, rng);
  const auto d = random_dense<T, col_major>(20, 14, 0.0, rng);
  CHECK(printed(spade::to_gpu(h)) == as_gpu_text(printed(h)));
  CHECK(printed(spade::to_gpu(d)) == as_gpu_text(printed(d)));
  const auto x = spade::vector<T, cpu>::constant(5, T(0.25));
  CHECK(printed(spade::to_gpu(x)) == as_gpu_text(printed(x)));
  const auto g = spade::convert<spade::gcoo>(spade::to_gpu(h));
  CHECK(printed(g) == as_gpu_text(printed(spade::convert<spade::gcoo>(h))));
  // An expression over gpu operands prints its evaluated value.
  const auto hg = spade::to_gpu(h);
  CHECK(printed(hg + hg) == as_gpu_text(printed(h + h)));
}
