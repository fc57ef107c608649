// gcoo on the cpu: invariant checks, the paper's example, conversions against a brute-force
// grouping, round trips over edge shapes and group sizes, conversion counts, conversion paths.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <spade/spade.hpp>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;

using spade::testing::contains;
using spade::testing::error_text;

namespace {

using spade::testing::fresh_seed;

/// The arrays a gcoo must hold, built straight from the definition: entries keyed by
/// (group, column, row) in an ordered map, so the map's order is the format's order.
template <class T>
struct expected_gcoo {
  std::vector<index_t> group_offsets, group_nnz, row_idx, col_idx;
  std::vector<T> values;
};

template <class T>
expected_gcoo<T> brute_force_grouping(index_t rows,
                                      const std::map<std::pair<index_t, index_t>, T>& entries,
                                      index_t p) {
  std::map<std::tuple<index_t, index_t, index_t>, T> keyed;
  for (const auto& [pos, v] : entries)
    keyed[{pos.first / p, pos.second, pos.first}] = v;
  const index_t groups = rows == 0 ? 0 : (rows + p - 1) / p;
  expected_gcoo<T> e;
  e.group_nnz.assign(static_cast<std::size_t>(groups), 0);
  for (const auto& [key, v] : keyed) {
    ++e.group_nnz[static_cast<std::size_t>(std::get<0>(key))];
    e.row_idx.push_back(std::get<2>(key));
    e.col_idx.push_back(std::get<1>(key));
    e.values.push_back(v);
  }
  index_t offset = 0;
  for (index_t n : e.group_nnz) {
    e.group_offsets.push_back(offset);
    offset += n;
  }
  return e;
}

template <class T>
std::map<std::pair<index_t, index_t>, T> entries_of(const spade::csr<T, cpu>& a) {
  std::map<std::pair<index_t, index_t>, T> m;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      m[{i, a.col_idx()[k]}] = a.values()[k];
  return m;
}

template <class T, class L>
std::map<std::pair<index_t, index_t>, T> nonzeros_of(const spade::dense<T, cpu, L>& d) {
  std::map<std::pair<index_t, index_t>, T> m;
  for (index_t i = 0; i < d.rows(); ++i)
    for (index_t j = 0; j < d.cols(); ++j)
      if (d(i, j) != T(0)) m[{i, j}] = d(i, j);
  return m;
}

template <class T>
void check_equal(const spade::gcoo<T, cpu>& got, const expected_gcoo<T>& want) {
  CHECK(got.group_offsets() == want.group_offsets);
  CHECK(got.group_nnz() == want.group_nnz);
  CHECK(got.row_idx() == want.row_idx);
  CHECK(got.col_idx() == want.col_idx);
  CHECK(got.values() == want.values);
}

template <class T>
void check_same(const spade::gcoo<T, cpu>& x, const spade::gcoo<T, cpu>& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.group_size() == y.group_size());
  CHECK(x.group_offsets() == y.group_offsets());
  CHECK(x.group_nnz() == y.group_nnz());
  CHECK(x.row_idx() == y.row_idx());
  CHECK(x.col_idx() == y.col_idx());
  CHECK(x.values() == y.values());
}

template <class T>
void check_same(const spade::csr<T, cpu>& x, const spade::csr<T, cpu>& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.row_ptr() == y.row_ptr());
  CHECK(x.col_idx() == y.col_idx());
  CHECK(x.values() == y.values());
}

/// The checked constructor re-validates what a conversion built unchecked.
template <class T>
void check_gcoo_invariants(const spade::gcoo<T, cpu>& a) {
  CHECK_NOTHROW(spade::gcoo<T, cpu>(a.rows(), a.cols(), a.group_size(), a.values(),
                                    a.group_offsets(), a.group_nnz(), a.row_idx(), a.col_idx()));
}

/// A csr with the given row lengths filled column 0, 1, ... (for empty rows and groups).
template <class T>
spade::csr<T, cpu> csr_with_row_lengths(index_t cols, const std::vector<index_t>& lengths) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t n : lengths) {
    for (index_t j = 0; j < n; ++j) {
      col_idx.push_back(j);
      values.push_back(T(static_cast<int>(values.size()) + 1));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(static_cast<index_t>(lengths.size()), cols, row_ptr, col_idx, values);
}

const std::vector<index_t> group_sizes{1, 2, 3, 4, 8, 32};

}  // namespace

// ---- construction -----------------------------------------------------------------------------

TEST_CASE("gcoo constructor names the first broken invariant") {
  using M = spade::gcoo<double, cpu>;
  // A valid 4x4, p = 2 matrix the cases below break one array of at a time.
  const std::vector<double> v{1, 2, 3, 4};
  const std::vector<index_t> off{0, 2}, nnz{2, 2}, r{0, 1, 2, 3}, c{0, 0, 1, 2};
  CHECK_NOTHROW(M(4, 4, 2, v, off, nnz, r, c));

  CHECK(contains(error_text([&] { M(-1, 4, 2, {}, {}, {}, {}, {}); }), "gcoo: negative size"));
  CHECK(contains(error_text([&] { M(4, 4, 0, v, off, nnz, r, c); }),
                 "gcoo: group size 0, must be >= 1"));
  CHECK(contains(error_text([&] { M(4, 4, -3); }), "group size -3"));
  CHECK(contains(error_text([&] { M(4, 4, 2, v, {0}, {4}, r, c); }),
                 "group_offsets and group_nnz have 1 and 1 entries; 4 rows in groups of 2 need 2"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, {2, 2, 0}, r, c);
                 }),
                 "group_offsets and group_nnz have 2 and 3 entries"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, {0, 1, 2}, c);
                 }),
                 "row_idx, col_idx and values have 3, 4 and 4 entries"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, {1, 2, 3}, off, nnz, r, c);
                 }),
                 "row_idx, col_idx and values have 4, 4 and 3 entries"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {0, 1}, nnz, r, c);
                 }),
                 "group_offsets[1] = 1, groups must follow each other: expected 2"));
  CHECK(contains(error_text([&] { M(4, 4, 2, v, {1, 2}, nnz, r, c); }), "group_offsets[0] = 1"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, {2, 3}, r, c);
                 }),
                 "group_nnz[1] = 3 runs past the 4 entries"));
  CHECK(contains(error_text([&] { M(4, 4, 2, v, off, {-1, 2}, r, c); }), "group_nnz[0] = -1"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, {2, 1}, r, c);
                 }),
                 "the groups hold 3 entries but there are 4"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, {0, 2, 2, 3}, {0, 0, 1, 2});
                 }),
                 "row_idx[1] = 2 lies outside group 0 (rows [0, 2))"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, {0, 1, 1, 3}, c);
                 }),
                 "row_idx[2] = 1 lies outside group 1 (rows [2, 4))"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, r, {0, 0, 4, 2});
                 }),
                 "col_idx[2] = 4 is out of range [0, 4)"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, r, {0, -1, 1, 2});
                 }),
                 "col_idx[1] = -1 is out of range"));
  // Column order inside a group: (row 0, column 1) before (row 1, column 0).
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, r, {1, 0, 1, 2});
                 }),
                 "entry 1 (row 1, column 0) comes before the entry ahead of it; a group's entries "
                 "must be ordered by column, then row (group 0)"));
  // Row order within one column: row 1 then row 0.
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, off, nnz, {1, 0, 2, 3}, c);
                 }),
                 "entry 1 (row 0, column 0) comes before the entry ahead of it"));
  CHECK(
      contains(error_text([&] {
                 M(4, 4, 2, v, off, nnz, {0, 0, 2, 3}, c);
               }),
               "entry 1 (row 0, column 0) repeats the position of the entry before it (group 0)"));
  // The order resets at a group boundary: group 1 may start at a lower column.
  CHECK_NOTHROW(M(4, 4, 2, v, off, nnz, r, {2, 3, 0, 1}));
}

TEST_CASE_TEMPLATE("gcoo is a value type with empty defaults", T, float, double) {
  const spade::gcoo<T, cpu> empty;
  CHECK(empty.rows() == 0);
  CHECK(empty.nnz() == 0);
  CHECK(empty.groups() == 0);
  const spade::gcoo<T, cpu> blank(7, 5, 3);
  CHECK(blank.groups() == 3);
  CHECK(blank.group_offsets() == std::vector<index_t>{0, 0, 0});
  CHECK(blank.group_nnz() == std::vector<index_t>{0, 0, 0});
  check_gcoo_invariants(blank);

  spade::gcoo<T, cpu> a(3, 3, 2, {T(1), T(2), T(3)}, {0, 2}, {2, 1}, {1, 0, 2}, {0, 2, 1});
  spade::gcoo<T, cpu> copy = a;
  copy.values()[0] = T(9);
  CHECK(a.values()[0] == T(1));
  const spade::gcoo<T, cpu> moved = std::move(copy);
  CHECK(moved.values()[0] == T(9));
  CHECK(moved.group_size() == 2);
  static_assert(spade::is_gcoo_v<spade::gcoo<T, cpu>> && spade::sparse_matrix<spade::gcoo<T, gpu>>);
  static_assert(!spade::is_gcoo_v<spade::coo<T, cpu>> && !spade::is_coo_v<spade::gcoo<T, cpu>>);
  static_assert(
      std::is_same_v<spade::rebind_space_t<spade::gcoo<T, cpu>, gpu>, spade::gcoo<T, gpu>>);
  CHECK(std::string(spade::expr::format_name<spade::gcoo<T, gpu>>()) == "gcoo");
}

// ---- the paper's example ----------------------------------------------------------------------

// Fig. 2 of the GCOO paper: A = [7 0 0 8; 0 10 0 0; 9 0 0 0; 0 0 6 3].
// Grouped by rows with p = 2 (as Spade does), by hand from the definition:
//   group 0 = rows 0-1, entries (0,0)=7 (0,3)=8 (1,1)=10; by column then row: 7, 10, 8.
//   group 1 = rows 2-3, entries (2,0)=9 (3,2)=6 (3,3)=3; already in column order.
TEST_CASE_TEMPLATE("the paper's 4x4 example grouped by rows, p = 2", T, float, double) {
  spade::dense<T, cpu> a(4, 4);
  a(0, 0) = T(7);
  a(0, 3) = T(8);
  a(1, 1) = T(10);
  a(2, 0) = T(9);
  a(3, 2) = T(6);
  a(3, 3) = T(3);
  const expected_gcoo<T> want{{0, 3},
                              {3, 3},
                              {0, 1, 0, 2, 3, 3},
                              {0, 1, 3, 0, 2, 3},
                              {T(7), T(10), T(8), T(9), T(6), T(3)}};

  const auto from_dense = spade::convert<spade::gcoo>(a, 2);
  static_assert(std::is_same_v<std::remove_const_t<decltype(from_dense)>, spade::gcoo<T, cpu>>);
  CHECK(from_dense.rows() == 4);
  CHECK(from_dense.cols() == 4);
  CHECK(from_dense.group_size() == 2);
  CHECK(from_dense.groups() == 2);
  CHECK(from_dense.nnz() == 6);
  check_equal(from_dense, want);
  check_equal(spade::convert<spade::gcoo>(spade::convert<spade::csr>(a), 2), want);
  check_equal(spade::convert<spade::gcoo>(spade::convert<spade::coo>(a), 2), want);
  check_equal(spade::convert<spade::gcoo>(spade::convert<spade::dense<T, cpu, col_major>>(a), 2),
              want);

  // The hand-written arrays are accepted by the checked constructor and mean A.
  const spade::gcoo<T, cpu> by_hand(4, 4, 2, want.values, want.group_offsets, want.group_nnz,
                                    want.row_idx, want.col_idx);
  CHECK(spade::convert<spade::dense>(by_hand).values() == a.values());
  const auto as_csr = spade::convert<spade::csr>(by_hand);
  CHECK(as_csr.row_ptr() == std::vector<index_t>{0, 2, 3, 4, 6});
  CHECK(as_csr.col_idx() == std::vector<index_t>{0, 3, 1, 0, 2, 3});
  CHECK(as_csr.values() == std::vector<T>{T(7), T(8), T(10), T(9), T(6), T(3)});

  // Fig. 2 itself groups columns: that is the row grouping of Aᵀ with the index arrays
  // swapped, and reproduces the paper's printed arrays.
  const auto at = spade::convert<spade::dense<T, cpu, row_major>>(
      spade::dense<T, cpu, col_major>(spade::unchecked, 4, 4, a.values()));
  const auto columns = spade::convert<spade::gcoo>(at, 2);
  CHECK(columns.values() == std::vector<T>{T(7), T(10), T(9), T(8), T(6), T(3)});
  CHECK(columns.col_idx() == std::vector<index_t>{0, 1, 2, 0, 3, 3});  // the paper's rows
  CHECK(columns.row_idx() == std::vector<index_t>{0, 1, 0, 3, 2, 3});  // the paper's cols
  CHECK(columns.group_offsets() == std::vector<index_t>{0, 3});        // gIdxes
  CHECK(columns.group_nnz() == std::vector<index_t>{3, 3});            // nnzPerGroup
}

// ---- conversions against the brute-force grouping ----------------------------------------------

TEST_CASE_TEMPLATE("csr and dense → gcoo agree with a brute-force grouping; round trips", T, float,
                   double) {
  const std::vector<std::pair<index_t, index_t>> shapes{{0, 0},   {0, 5},   {5, 0},  {1, 1},
                                                        {31, 33}, {33, 31}, {7, 64}, {130, 9}};
  for (auto [rows, cols] : shapes)
    for (double density : {0.0, 0.1, 0.5, 1.0})
      for (index_t p : group_sizes) {
        const std::uint64_t seed = fresh_seed();
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(density);
        CAPTURE(p);
        CAPTURE(seed);
        const auto a = spade::random_sparse<T>(rows, cols, density, seed);
        const auto want = brute_force_grouping(rows, entries_of(a), p);

        const auto g = spade::convert<spade::gcoo>(a, p);
        CHECK(g.rows() == rows);
        CHECK(g.cols() == cols);
        CHECK(g.group_size() == p);
        CHECK(g.groups() == static_cast<index_t>(want.group_nnz.size()));
        check_equal(g, want);
        check_gcoo_invariants(g);
        check_same(spade::convert<spade::csr>(g), a);

        const auto row_dense = spade::convert<spade::dense>(a);
        const auto col_dense = spade::convert<spade::dense<T, cpu, col_major>>(a);
        const auto dense_want = brute_force_grouping(rows, nonzeros_of(row_dense), p);
        const auto from_row = spade::convert<spade::gcoo>(row_dense, p);
        const auto from_col = spade::convert<spade::gcoo>(col_dense, p);
        check_equal(from_row, dense_want);
        check_equal(from_col, dense_want);
        check_gcoo_invariants(from_row);
        CHECK(spade::convert<spade::dense>(from_row).values() == row_dense.values());
        CHECK(spade::convert<spade::dense<T, cpu, col_major>>(from_col).values() ==
              col_dense.values());
        CHECK(spade::convert<spade::dense>(g).values() == row_dense.values());

        const auto via_coo = spade::convert<spade::gcoo>(spade::convert<spade::coo>(a), p);
        check_equal(via_coo, want);
        const auto back_coo = spade::convert<spade::coo>(g);
        check_same(spade::convert<spade::csr>(back_coo), a);
      }
}

TEST_CASE_TEMPLATE("empty rows, empty groups and a short last group", T, float, double) {
  // Rows 0-3 empty (groups 0 and 1 of p = 2 are empty), a dense row 5, a short last group.
  const auto a = csr_with_row_lengths<T>(6, {0, 0, 0, 0, 2, 6, 0, 1, 0});
  for (index_t p : group_sizes) {
    CAPTURE(p);
    const auto want = brute_force_grouping(a.rows(), entries_of(a), p);
    const auto g = spade::convert<spade::gcoo>(a, p);
    check_equal(g, want);
    check_gcoo_invariants(g);
    check_same(spade::convert<spade::csr>(g), a);
  }
  const auto g2 = spade::convert<spade::gcoo>(a, 2);
  CHECK(g2.groups() == 5);
  CHECK(g2.group_nnz() == std::vector<index_t>{0, 0, 8, 1, 0});
  CHECK(g2.group_offsets() == std::vector<index_t>{0, 0, 0, 8, 9});
  // Row 4 = columns 0-1, row 5 = columns 0-5: by column, then row.
  CHECK(g2.row_idx() == std::vector<index_t>{4, 5, 4, 5, 5, 5, 5, 5, 7});
  CHECK(g2.col_idx() == std::vector<index_t>{0, 0, 1, 1, 2, 3, 4, 5, 0});
  CHECK(g2.values() == std::vector<T>{T(1), T(3), T(2), T(4), T(5), T(6), T(7), T(8), T(9)});
  // p larger than the matrix: one group holding everything.
  const auto big = spade::convert<spade::gcoo>(a, 1000);
  CHECK(big.groups() == 1);
  CHECK(big.group_nnz() == std::vector<index_t>{9});
}

TEST_CASE_TEMPLATE("explicit zeros: csr → gcoo keeps them, dense → gcoo drops them", T, float,
                   double) {
  const spade::csr<T, cpu> a(2, 3, {0, 2, 3}, {0, 2, 1}, {T(0), T(5), T(-0.0)});
  const auto g = spade::convert<spade::gcoo>(a, 2);
  CHECK(g.nnz() == 3);
  CHECK(g.col_idx() == std::vector<index_t>{0, 1, 2});
  const auto from_dense = spade::convert<spade::gcoo>(spade::convert<spade::dense>(g), 2);
  CHECK(from_dense.nnz() == 1);
  CHECK(from_dense.values() == std::vector<T>{T(5)});
  // NaN is not equal to zero: kept, as dense → csr keeps it.
  spade::dense<T, cpu> d(1, 2, std::vector<T>{std::numeric_limits<T>::quiet_NaN(), T(0)});
  const auto n = spade::convert<spade::gcoo>(d, 4);
  REQUIRE(n.nnz() == 1);
  CHECK(std::isnan(n.values()[0]));
}

// ---- group sizes, regrouping, the tuned default, conversion counts ------------------------------

TEST_CASE_TEMPLATE("group sizes: the tuned default, regrouping, and bad sizes", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(23, 17, 0.3, seed);

  CHECK(spade::convert<spade::gcoo>(a).group_size() == spade::tuning().gcoo_group_size);
  const spade::thresholds saved = spade::tuning();
  spade::tuning().gcoo_group_size = 3;
  const auto tuned = spade::convert<spade::gcoo>(a);
  const auto tuned_dense = spade::convert<spade::gcoo>(spade::convert<spade::dense>(a));
  spade::tuning().gcoo_group_size = 0;
  const std::string bad_tuning = error_text([&] { (void)spade::convert<spade::gcoo>(a); });
  spade::tuning() = saved;
  CHECK(tuned.group_size() == 3);
  CHECK(tuned_dense.group_size() == 3);
  check_equal(tuned, brute_force_grouping(a.rows(), entries_of(a), 3));
  CHECK(contains(bad_tuning, "group size 0, must be >= 1"));

  // A gcoo source keeps its grouping under convert<gcoo>; an explicit p regroups it.
  check_same(spade::convert<spade::gcoo>(tuned), tuned);
  check_same(spade::convert<spade::gcoo>(tuned, 3), tuned);
  for (index_t p : group_sizes) {
    CAPTURE(p);
    const auto regrouped = spade::convert<spade::gcoo>(tuned, p);
    check_equal(regrouped, brute_force_grouping(a.rows(), entries_of(a), p));
    check_same(spade::convert<spade::gcoo<T, cpu>>(a, p), regrouped);
  }

  CHECK(contains(error_text([&] { (void)spade::convert<spade::gcoo>(a, 0); }),
                 "spade::convert<gcoo>: group size 0, must be >= 1"));
  CHECK(
      contains(error_text([&] { (void)spade::convert<spade::gcoo>(tuned, -2); }), "group size -2"));
  CHECK(contains(error_text([&] { (void)spade::host::csr_to_gcoo(a, 0); }),
                 "csr_to_gcoo: group size 0"));
  CHECK(
      contains(error_text([&] { (void)spade::host::dense_to_gcoo(spade::dense<T, cpu>(2, 2), 0); }),
               "dense_to_gcoo: group size 0"));
}

TEST_CASE_TEMPLATE("each conversion hop to or from gcoo counts once", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(12, 10, 0.3, seed);
  const auto c = spade::convert<spade::coo>(a);
  const auto d = spade::convert<spade::dense>(a);
  const auto dc = spade::convert<spade::dense<T, cpu, col_major>>(a);
  const auto g = spade::convert<spade::gcoo>(a, 2);
  auto hops = [](auto&& f) {
    const std::size_t before = spade::conversion_counter().load();
    f();
    return spade::conversion_counter().load() - before;
  };
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(a); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(a, 3); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(c); }) == 2);  // coo → csr → gcoo
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(d, 3); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(dc); }) == 1);  // the host reads any layout
  CHECK(hops([&] { (void)spade::convert<spade::csr>(g); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::coo>(g); }) == 2);  // gcoo → csr → coo
  CHECK(hops([&] { (void)spade::convert<spade::dense>(g); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::dense<T, cpu, col_major>>(g); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(g); }) == 0);     // a copy
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(g, 2); }) == 0);  // same p: a copy
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(g, 5); }) == 2);  // through csr
}

// ---- interop: Eigen, Matrix Market, expressions, spaces
// ------------------------------------------

TEST_CASE_TEMPLATE("to_eigen, write_matrix_market and assignment from expressions", T, float,
                   double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(19, 14, 0.25, seed);
  const auto g = spade::convert<spade::gcoo>(a, 4);
  const Eigen::SparseMatrix<T, Eigen::RowMajor, int> e = spade::to_eigen(g);
  CHECK(e.nonZeros() == a.nnz());
  CHECK((Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>(e) -
         Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>(spade::to_eigen(a)))
            .norm() == T(0));

  const auto path =
      std::filesystem::temp_directory_path() / ("spade_test_gcoo_" + std::to_string(seed) + ".mtx");
  spade::write_matrix_market(path, g);
  const auto read = spade::read_matrix_market<T>(path);
  std::filesystem::remove(path);
  check_same(read, a);

  // A sparse product assigned to a gcoo is grouped with the tuned p.
  const auto b = spade::random_sparse<T>(14, 9, 0.3, seed + 1);
  const spade::gcoo<T, cpu> product = a * b;
  const spade::csr<T, cpu> reference = a * b;
  CHECK(product.group_size() == spade::tuning().gcoo_group_size);
  check_same(spade::convert<spade::csr>(product), reference);
}

TEST_CASE_TEMPLATE("sparse_view: a mostly-zero dense operand runs as gcoo, converted once", T,
                   float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  // A dense matrix with about 5% nonzeros, an empty row and an empty column.
  const auto sparse = spade::random_sparse<T>(37, 29, 0.05, seed);
  spade::dense<T, cpu> d = spade::convert<spade::dense>(sparse);
  for (index_t j = 0; j < d.cols(); ++j)
    d.values()[static_cast<std::size_t>(5 * d.cols() + j)] = T(0);
  for (index_t i = 0; i < d.rows(); ++i)
    d.values()[static_cast<std::size_t>(i * d.cols() + 3)] = T(0);
  const auto b = spade::random_dense<T>(29, 6, seed + 1);

  const std::size_t before = spade::conversion_counter().load();
  const spade::dense<T, cpu> c = spade::sparse_view(d) * b;
  const std::size_t first = spade::conversion_counter().load() - before;
  const spade::dense<T, cpu> again = T(2) * (spade::sparse_view(d) * b);
  // dense -> gcoo (and, for Eigen on the host, gcoo -> csr), each cached: the second product
  // converts nothing.
  CHECK(first >= 1);
  CHECK(spade::conversion_counter().load() - before == first);
  const spade::dense<T, cpu> want = d * b;
  REQUIRE(c.values().size() == want.values().size());
  for (std::size_t k = 0; k < want.values().size(); ++k) {
    CHECK(std::abs(double(c.values()[k]) - double(want.values()[k])) <=
          1e-5 * (1 + std::abs(double(want.values()[k]))));
    CHECK(std::abs(double(again.values()[k]) - 2 * double(want.values()[k])) <=
          2e-5 * (1 + std::abs(double(want.values()[k]))));
  }
  // Assigned to a gcoo it is the conversion itself; the reference path agrees.
  const spade::gcoo<T, cpu> g = spade::sparse_view(d);
  check_same(spade::convert<spade::csr>(g), spade::convert<spade::csr>(d));
  const auto ref = spade::reference(spade::sparse_view(d) * b);
  for (std::size_t k = 0; k < want.values().size(); ++k)
    CHECK(std::abs(double(ref.values()[k]) - double(want.values()[k])) <=
          1e-5 * (1 + std::abs(double(want.values()[k]))));
  // explain names the view and the gcoo it stands for.
  const std::string plan = spade::explain(spade::sparse_view(d) * b);
  CAPTURE(plan);
  CHECK(plan.find("sparse view") != std::string::npos);
  CHECK(plan.find("gcoo") != std::string::npos);
  // Changing d drops the cached conversion: the next product sees the new values.
  d.values()[0] = T(3);
  const spade::dense<T, cpu> changed = spade::sparse_view(d) * b;
  const spade::dense<T, cpu> changed_want = d * b;
  for (std::size_t k = 0; k < changed_want.values().size(); ++k)
    CHECK(std::abs(double(changed.values()[k]) - double(changed_want.values()[k])) <=
          1e-5 * (1 + std::abs(double(changed_want.values()[k]))));
}

TEST_CASE_TEMPLATE("to_gpu / to_cpu for gcoo: empty objects without a device, round trip with one",
                   T, float, double) {
  const spade::gcoo<T, cpu> none;
  const spade::gcoo<T, gpu> empty_on_device = spade::to_gpu(none);  // no data: no device needed
  CHECK(empty_on_device.nnz() == 0);
  const auto g = spade::convert<spade::gcoo>(spade::random_sparse<T>(13, 11, 0.3, fresh_seed()), 3);
  std::string reason;
  if (!spade::device_available(&reason)) {
    CHECK_THROWS_AS((void)spade::to_gpu(g), spade::no_device);
    return;
  }
  const spade::gcoo<T, gpu> on_device = spade::to_gpu(g);
  CHECK(on_device.group_size() == 3);
  CHECK(on_device.groups() == g.groups());
  check_same(spade::to_cpu(on_device), g);
  // The device conversions against the host ones (exact: same order, same values).
  const auto a = spade::convert<spade::csr>(g);
  check_same(spade::to_cpu(spade::convert<spade::gcoo>(spade::to_gpu(a), 3)), g);
  check_same(spade::to_cpu(spade::convert<spade::csr>(on_device)), a);
  const auto d = spade::convert<spade::dense<T, cpu, col_major>>(a);
  check_same(spade::to_cpu(spade::convert<spade::gcoo>(spade::to_gpu(d), 3)), g);
  CHECK(spade::to_cpu(spade::convert<spade::dense<T, gpu, col_major>>(on_device)).values() ==
        d.values());
}

// ---- the conversion graph
// ------------------------------------------------------------------------

namespace {

template <class T, class S>
void gcoo_conversion_paths() {
  using spade::plan::conversion_path_t;
  using spade::plan::convert;
  using spade::plan::lhs;
  using spade::plan::steps;
  using coo = spade::coo<T, S>;
  using csr = spade::csr<T, S>;
  using gcoo = spade::gcoo<T, S>;
  using drow = spade::dense<T, S, row_major>;
  using dcol = spade::dense<T, S, col_major>;
  static_assert(spade::plan::format_id<gcoo>() == 4);
  // Into gcoo: csr and row-major dense directly, coo through csr, col-major through row-major
  // on the device.
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, gcoo>, steps<>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, csr, gcoo>, steps<convert<lhs, gcoo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, drow, gcoo>, steps<convert<lhs, gcoo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, gcoo>,
                               steps<convert<lhs, csr>, convert<lhs, gcoo>>>);
  // The host reads col-major dense directly (host::dense_to_gcoo takes either layout).
  if constexpr (std::is_same_v<S, cpu>)
    static_assert(std::is_same_v<conversion_path_t<lhs, dcol, gcoo>, steps<convert<lhs, gcoo>>>);
  else
    static_assert(std::is_same_v<conversion_path_t<lhs, dcol, gcoo>,
                                 steps<convert<lhs, drow>, convert<lhs, gcoo>>>);
  // Out of gcoo: csr and both dense layouts directly, coo through csr.
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, csr>, steps<convert<lhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, drow>, steps<convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, dcol>, steps<convert<lhs, dcol>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
  // Paths between the other formats never pass through gcoo.
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, drow>,
                               steps<convert<lhs, csr>, convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, dcol>,
                               steps<convert<lhs, csr>, convert<lhs, dcol>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, drow, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, dcol, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, drow, csr>, steps<convert<lhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, dcol, csr>, steps<convert<lhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, csr, drow>, steps<convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, csr>, steps<convert<lhs, csr>>>);
}

}  // namespace

TEST_CASE_TEMPLATE("conversion graph: gcoo's paths in both spaces", T, float, double) {
  gcoo_conversion_paths<T, cpu>();
  gcoo_conversion_paths<T, gpu>();
  // Every step of every path is a conversion spade::convert implements (compiles).
  const auto a = spade::random_sparse<T>(5, 4, 0.5, fresh_seed());
  const auto g = spade::convert<spade::gcoo>(spade::convert<spade::dense<T, cpu, col_major>>(
      spade::convert<spade::dense>(spade::convert<spade::gcoo>(spade::convert<spade::coo>(a)))));
  check_same(spade::convert<spade::csr>(g), a);
}
