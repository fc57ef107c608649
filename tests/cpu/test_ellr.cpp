// ellr on the cpu: layouts by hand and by definition, round trips, products, conversions, errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <spade/spade.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/ellr_reference.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::ellr_layout;
using spade::gpu;
using spade::index_t;
using spade::row_major;

using spade::testing::contains;
using spade::testing::ellr_by_definition;
using spade::testing::error_text;
using spade::testing::expected_ellr;
using spade::testing::row_length;

namespace {

using spade::testing::fresh_seed;

template <class T>
void check_equal(const spade::ellr<T, cpu>& got, const expected_ellr<T>& want,
                 const spade::csr<T, cpu>& a, ellr_layout layout) {
  CHECK(got.rows() == a.rows());
  CHECK(got.cols() == a.cols());
  CHECK(got.nnz() == a.nnz());
  CHECK(got.layout() == layout);
  CHECK(got.slice_height() == want.slice_height);
  CHECK(got.slices() ==
        static_cast<index_t>(want.slice_offsets.empty() ? 0 : want.slice_offsets.size() - 1));
  CHECK(got.width() == want.width);
  CHECK(got.row_order() == want.row_order);
  CHECK(got.row_lengths() == want.row_lengths);
  CHECK(got.slice_offsets() == want.slice_offsets);
  CHECK(got.col_idx() == want.col_idx);
  CHECK(got.values() == want.values);
  CHECK(got.padded_size() == static_cast<std::int64_t>(want.col_idx.size()));
  const double slots = static_cast<double>(want.col_idx.size());
  CHECK(got.padding() == doctest::Approx(slots > 0 ? 1.0 - a.nnz() / slots : 0.0));
}

template <class T>
void check_same(const spade::csr<T, cpu>& x, const spade::csr<T, cpu>& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.row_ptr() == y.row_ptr());
  CHECK(x.col_idx() == y.col_idx());
  CHECK(x.values() == y.values());
}

template <class T>
void check_same(const spade::ellr<T, cpu>& x, const spade::ellr<T, cpu>& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.nnz() == y.nnz());
  CHECK(x.width() == y.width());
  CHECK(x.slice_height() == y.slice_height());
  CHECK(x.layout() == y.layout());
  CHECK(x.values() == y.values());
  CHECK(x.col_idx() == y.col_idx());
  CHECK(x.row_lengths() == y.row_lengths());
  CHECK(x.slice_offsets() == y.slice_offsets());
  CHECK(x.row_order() == y.row_order());
}

template <class T>
std::map<std::pair<index_t, index_t>, T> entries_of(const spade::csr<T, cpu>& a) {
  std::map<std::pair<index_t, index_t>, T> m;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      m[{i, a.col_idx()[k]}] = a.values()[k];
  return m;
}

template <class T>
std::map<std::pair<index_t, index_t>, T> entries_of(const spade::coo<T, cpu>& a) {
  std::map<std::pair<index_t, index_t>, T> m;
  for (std::size_t k = 0; k < a.row_idx().size(); ++k)
    m[{a.row_idx()[k], a.col_idx()[k]}] += a.values()[k];
  return m;
}

/// A csr with the given row lengths filled column 0, 1, ... with values 1, 2, ...
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

/// `a` with row `full` replaced by a row holding every column (values 1, 2, ...).
template <class T>
spade::csr<T, cpu> with_full_row(const spade::csr<T, cpu>& a, index_t full) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < a.rows(); ++i) {
    if (i == full) {
      for (index_t j = 0; j < a.cols(); ++j) {
        col_idx.push_back(j);
        values.push_back(T(j + 1));
      }
    } else {
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
        col_idx.push_back(a.col_idx()[k]);
        values.push_back(a.values()[k]);
      }
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(a.rows(), a.cols(), row_ptr, col_idx, values);
}

/// The paper's arrays (entry k of row r at k·rows + r) from a plain walk over the csr: what a
/// user hands the checked constructor.
template <class T>
spade::ellr<T, cpu> paper_arrays_by_hand(const spade::csr<T, cpu>& a) {
  index_t width = 0;
  for (index_t r = 0; r < a.rows(); ++r)
    width = std::max(width, row_length(a, r));
  const auto slots = static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(width);
  std::vector<T> values(slots, T(0));
  std::vector<index_t> col_idx(slots, 0), lengths;
  for (index_t r = 0; r < a.rows(); ++r) {
    lengths.push_back(row_length(a, r));
    for (index_t k = 0; k < row_length(a, r); ++k) {
      const auto slot = static_cast<std::size_t>(k) * static_cast<std::size_t>(a.rows()) +
                        static_cast<std::size_t>(r);
      values[slot] = a.values()[static_cast<std::size_t>(a.row_ptr()[r] + k)];
      col_idx[slot] = a.col_idx()[static_cast<std::size_t>(a.row_ptr()[r] + k)];
    }
  }
  return spade::ellr<T, cpu>(a.rows(), a.cols(), width, values, col_idx, lengths);
}

const std::vector<ellr_layout> layouts{
    {},        {32, 0},   {32, 32},   {32, 1024},    {4, 8},     {1, 0},     {7, 14},
    {2, 2048}, {0, 0, 2}, {0, 0, 32}, {32, 1024, 4}, {7, 14, 8}, {1, 0, 16}, {4, 8, 2}};

/// A·B by plain loops in double, with |A|·|B| for the tolerance (B given by an accessor).
template <class T, class B>
void loop_product(const spade::csr<T, cpu>& a, index_t n, B&& b, std::vector<double>& want,
                  std::vector<double>& mag) {
  want.assign(static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(n), 0.0);
  mag = want;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      for (index_t j = 0; j < n; ++j) {
        const double term = double(a.values()[k]) * double(b(a.col_idx()[k], j));
        want[static_cast<std::size_t>(i * n + j)] += term;
        mag[static_cast<std::size_t>(i * n + j)] += std::abs(term);
      }
}

/// Summation error bound k·ε·Σ|terms| (k the longest sum); the inputs are exact in double.
template <class T>
bool close(double got, double want, double mag, index_t terms) {
  const double eps = std::numeric_limits<T>::epsilon();
  return std::abs(got - want) <= 2.0 * (terms + 1) * eps * mag + 1e-300;
}

}  // namespace

// ---- the type ---------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("ellr is a value type with empty defaults", T, float, double) {
  const spade::ellr<T, cpu> empty;
  CHECK(empty.rows() == 0);
  CHECK(empty.nnz() == 0);
  CHECK(empty.slices() == 0);
  CHECK(empty.padded_size() == 0);
  CHECK(empty.padding() == 0.0);
  CHECK(spade::convert<spade::csr>(empty).row_ptr() == std::vector<index_t>{0});

  spade::ellr<T, cpu> a(2, 3, 2, {T(1), T(3), T(2), T(0)}, {0, 1, 2, 0}, {2, 1});
  spade::ellr<T, cpu> copy = a;
  copy.values()[0] = T(9);
  CHECK(a.values()[0] == T(1));
  const spade::ellr<T, cpu> moved = std::move(copy);
  CHECK(moved.values()[0] == T(9));
  static_assert(spade::is_ellr_v<spade::ellr<T, cpu>> && spade::sparse_matrix<spade::ellr<T, gpu>>);
  static_assert(!spade::is_ellr_v<spade::csr<T, cpu>> && !spade::is_csr_v<spade::ellr<T, cpu>>);
  static_assert(!spade::is_gcoo_v<spade::ellr<T, cpu>> && !spade::is_dense_v<spade::ellr<T, cpu>>);
  static_assert(
      std::is_same_v<spade::rebind_space_t<spade::ellr<T, cpu>, gpu>, spade::ellr<T, gpu>>);
  CHECK(std::string(spade::expr::format_name<spade::ellr<T, gpu>>()) == "ellr");
}

// ---- a hand-checked example --------------------------------------------------------------------

// A 5x4 matrix with an empty row and rows of lengths 2, 0, 1, 3, 1:
//   row 0: (0,0)=1 (0,2)=2
//   row 1: -
//   row 2: (2,1)=3
//   row 3: (3,0)=4 (3,1)=5 (3,3)=6
//   row 4: (4,3)=7
TEST_CASE_TEMPLATE("a 5x4 example by hand: the paper's layout and sliced, sorted layouts", T, float,
                   double) {
  const spade::csr<T, cpu> a(5, 4, {0, 2, 2, 3, 6, 7}, {0, 2, 1, 0, 1, 3, 3},
                             {T(1), T(2), T(3), T(4), T(5), T(6), T(7)});

  SUBCASE("paper layout: one slice of 32 rows, 3 wide, entry k of row r at 32k + r") {
    const auto e = spade::convert<spade::ellr>(a);
    static_assert(std::is_same_v<std::remove_const_t<decltype(e)>, spade::ellr<T, cpu>>);
    CHECK(e.rows() == 5);
    CHECK(e.cols() == 4);
    CHECK(e.nnz() == 7);
    CHECK(e.width() == 3);
    CHECK(e.slice_height() == 32);
    CHECK(e.slices() == 1);
    CHECK(e.layout() == ellr_layout{});
    CHECK(e.row_order().empty());
    CHECK(e.row_lengths() == std::vector<index_t>{2, 0, 1, 3, 1});
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 96});
    CHECK(e.padded_size() == 96);
    CHECK(e.padding() == doctest::Approx(1.0 - 7.0 / 96.0));
    std::vector<T> values(96, T(0));
    std::vector<index_t> cols(96, 0);
    values[0] = T(1), cols[0] = 0;    // k 0, row 0
    values[2] = T(3), cols[2] = 1;    // k 0, row 2
    values[3] = T(4), cols[3] = 0;    // k 0, row 3
    values[4] = T(7), cols[4] = 3;    // k 0, row 4
    values[32] = T(2), cols[32] = 2;  // k 1, row 0
    values[35] = T(5), cols[35] = 1;  // k 1, row 3
    values[67] = T(6), cols[67] = 3;  // k 2, row 3
    CHECK(e.values() == values);
    CHECK(e.col_idx() == cols);
    check_same(spade::convert<spade::csr>(e), a);
  }

  SUBCASE("slices of 2 rows after sorting windows of 4: rows 3 0 | 2 1 | 4") {
    const auto e = spade::convert<spade::ellr>(a, ellr_layout{2, 4});
    CHECK(e.layout() == ellr_layout{2, 4});
    CHECK(e.slice_height() == 2);
    CHECK(e.slices() == 3);
    CHECK(e.width() == 3);
    CHECK(e.nnz() == 7);
    // Window {0,1,2,3} has lengths 2,0,1,3 → 3,0,2,1; window {4} stays.
    CHECK(e.row_order() == std::vector<index_t>{3, 0, 2, 1, 4});
    CHECK(e.row_lengths() == std::vector<index_t>{3, 2, 1, 0, 1});
    // Widths 3, 1, 1 times 2 rows; the last slice is padded to the full height.
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 6, 8, 10});
    CHECK(e.values() == std::vector<T>{T(4), T(1), T(5), T(2), T(6), T(0), T(3), T(0), T(7), T(0)});
    CHECK(e.col_idx() == std::vector<index_t>{0, 0, 1, 2, 3, 0, 1, 0, 3, 0});
    CHECK(e.padding() == doctest::Approx(0.3));
    check_same(spade::convert<spade::csr>(e), a);
  }

  SUBCASE("slices of 2 rows, no sorting: rows 0 1 | 2 3 | 4") {
    const auto e = spade::convert<spade::ellr>(a, ellr_layout{2, 0});
    CHECK(e.row_order().empty());
    CHECK(e.row_lengths() == std::vector<index_t>{2, 0, 1, 3, 1});
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 4, 10, 12});
    CHECK(e.values() ==
          std::vector<T>{T(1), T(0), T(2), T(0), T(3), T(4), T(0), T(5), T(0), T(6), T(7), T(0)});
    CHECK(e.col_idx() == std::vector<index_t>{0, 0, 2, 0, 1, 0, 0, 1, 0, 3, 3, 0});
    check_same(spade::convert<spade::csr>(e), a);
  }

  SUBCASE("slices of 2 rows, 2 lanes: a row's entries in pairs, widths rounded to pairs") {
    const auto e = spade::convert<spade::ellr>(a, ellr_layout{2, 0, 2});
    CHECK(e.lanes() == 2);
    CHECK(e.width() == 3);
    CHECK(e.row_lengths() == std::vector<index_t>{2, 0, 1, 3, 1});
    // Slice 0 (rows 0, 1): width 2 → one pair group of 2 rows × 2 lanes = 4 slots. Slice 1
    // (rows 2, 3): width 3 → 2 groups = 8 slots. Slice 2 (row 4 + padding): width 1 → 4.
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 4, 12, 16});
    // Slice 1: group 0 = row 2 {k0, k1}, row 3 {k0, k1}; group 1 = row 2 {k2, k3}, row 3 {k2, k3}.
    CHECK(e.values() == std::vector<T>{T(1), T(2), T(0), T(0), T(3), T(0), T(4), T(5), T(0), T(0),
                                       T(6), T(0), T(7), T(0), T(0), T(0)});
    CHECK(e.col_idx() == std::vector<index_t>{0, 2, 0, 0, 1, 0, 0, 1, 0, 0, 3, 0, 3, 0, 0, 0});
    CHECK(e.padding() == doctest::Approx(1.0 - 7.0 / 16.0));
    check_same(spade::convert<spade::csr>(e), a);
  }

  SUBCASE("equal lengths keep their order (stable sort)") {
    const auto b = csr_with_row_lengths<T>(3, {1, 2, 1, 2, 0, 2});
    const auto e = spade::convert<spade::ellr>(b, ellr_layout{1, 6});
    CHECK(e.row_order() == std::vector<index_t>{1, 3, 5, 0, 2, 4});
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 2, 4, 6, 7, 8, 8});
    check_same(spade::convert<spade::csr>(e), b);
  }

  SUBCASE("the user's paper arrays through the checked constructor") {
    // Entry k of row r at 5k + r, width 3.
    const spade::ellr<T, cpu> e(
        5, 4, 3,
        {T(1), T(0), T(3), T(4), T(7), T(2), T(0), T(0), T(5), T(0), T(0), T(0), T(0), T(6), T(0)},
        {0, 0, 1, 0, 3, 2, 0, 0, 1, 0, 0, 0, 0, 3, 0}, {2, 0, 1, 3, 1});
    CHECK(e.nnz() == 7);
    CHECK(e.width() == 3);
    CHECK(e.slice_height() == 5);
    CHECK(e.slices() == 1);
    CHECK(e.slice_offsets() == std::vector<std::int64_t>{0, 15});
    CHECK(e.row_order().empty());
    check_same(spade::convert<spade::csr>(e), a);
    // Padding is never read, whatever it holds.
    const spade::ellr<T, cpu> junk(
        5, 4, 3,
        {T(1), T(9), T(3), T(4), T(7), T(2), T(9), T(9), T(5), T(9), T(9), T(9), T(9), T(6), T(9)},
        {0, 3, 1, 0, 3, 2, 3, 2, 1, 1, 1, 1, 1, 3, 2}, {2, 0, 1, 3, 1});
    check_same(spade::convert<spade::csr>(junk), a);
  }
}

// ---- round trips ------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("csr → ellr matches the definition and round-trips, random and edge shapes", T,
                   float, double) {
  const std::vector<std::pair<index_t, index_t>> shapes{
      {0, 0}, {0, 5}, {5, 0}, {1, 1}, {31, 33}, {33, 31}, {32, 32}, {7, 64}, {130, 9}, {257, 40}};
  for (auto [rows, cols] : shapes)
    for (double density : {0.0, 0.1, 0.5, 1.0})
      for (const ellr_layout& layout : layouts) {
        const std::uint64_t seed = fresh_seed();
        CAPTURE(rows);
        CAPTURE(cols);
        CAPTURE(density);
        CAPTURE(layout.slice_height);
        CAPTURE(layout.sort_window);
        CAPTURE(layout.lanes);
        CAPTURE(seed);
        const auto a = spade::random_sparse<T>(rows, cols, density, seed);
        const auto e = spade::convert<spade::ellr>(a, layout);
        check_equal(e, ellr_by_definition(a, layout), a, layout);
        check_same(spade::convert<spade::csr>(e), a);
        check_same(spade::host::ellr_to_csr(spade::host::csr_to_ellr(a, layout)), a);
      }
}

TEST_CASE_TEMPLATE("empty rows, one very long row, all rows empty", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  // Empty rows at the start, around slice borders of 2, 4 and 32, and at the end.
  std::vector<index_t> lengths{0, 0, 0, 3, 1, 0, 0, 5, 0, 0, 2, 0};
  lengths.resize(70, 0);
  lengths[33] = 4;
  lengths[63] = 1;
  const auto scattered = csr_with_row_lengths<T>(6, lengths);
  // One full row of 5000 columns among 200 sparse ones: the paper's layout pads every row to it.
  const auto long_row = with_full_row(spade::random_sparse<T>(200, 5000, 0.001, seed), 117);
  const auto none = spade::random_sparse<T>(50, 20, 0.0, seed + 1);
  for (const auto* a : {&scattered, &long_row, &none})
    for (const ellr_layout& layout : layouts) {
      CAPTURE(a->rows());
      CAPTURE(layout.slice_height);
      CAPTURE(layout.sort_window);
      const auto e = spade::convert<spade::ellr>(*a, layout);
      check_equal(e, ellr_by_definition(*a, layout), *a, layout);
      check_same(spade::convert<spade::csr>(e), *a);
    }
  CHECK(spade::convert<spade::ellr>(long_row).width() == 5000);
  CHECK(spade::convert<spade::ellr>(long_row).padded_size() == 224 * 5000);
  // Sorted into the first slice, the long row costs one slice of padding, not all of them.
  const auto sliced = spade::convert<spade::ellr>(long_row, ellr_layout{32, 256});
  CHECK(sliced.row_order()[0] == 117);
  CHECK(sliced.slice_offsets()[1] == 32 * 5000);
  const auto blank = spade::convert<spade::ellr>(none);
  CHECK(blank.width() == 0);
  CHECK(blank.nnz() == 0);
  CHECK(blank.slice_offsets() == std::vector<std::int64_t>{0, 0});
  CHECK(blank.padding() == 0.0);
}

TEST_CASE_TEMPLATE("the checked constructor takes the paper's arrays of any csr", T, float,
                   double) {
  for (auto [rows, cols] : std::vector<std::pair<index_t, index_t>>{
           {0, 0}, {0, 4}, {4, 0}, {1, 1}, {31, 33}, {33, 31}, {100, 17}})
    for (double density : {0.0, 0.2, 1.0}) {
      const std::uint64_t seed = fresh_seed();
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(density);
      CAPTURE(seed);
      const auto a = spade::random_sparse<T>(rows, cols, density, seed);
      const auto e = paper_arrays_by_hand(a);
      CHECK(e.nnz() == a.nnz());
      CHECK(e.layout() == ellr_layout{});
      check_same(spade::convert<spade::csr>(e), a);
      // Re-laid out by a conversion it matches the definition.
      check_equal(spade::convert<spade::ellr>(e, ellr_layout{4, 8}),
                  ellr_by_definition(a, ellr_layout{4, 8}), a, ellr_layout{4, 8});
    }
}

TEST_CASE("every real matrix round-trips in the paper's layout and in {32, 1024}") {
  const std::filesystem::path dir = SPADE_TEST_MATRIX_DIR;
  if (!std::filesystem::is_directory(dir)) {
    MESSAGE("no matrix folder at " << dir.string() << "; the bundled matrices stand in");
  }
  // The paper's layout pads every row to the longest: skewed graphs would need gigabytes.
  constexpr double max_paper_slots = 3e7;
  std::size_t checked = 0, paper_skipped = 0;
  for (const auto& path : spade::testing::real_matrices()) {
    CAPTURE(path.string());
    const auto a = spade::read_matrix_market<double>(path);
    index_t widest = 0;
    for (index_t r = 0; r < a.rows(); ++r)
      widest = std::max(widest, row_length(a, r));
    const double paper_slots = (a.rows() + 31.0) / 32 * 32 * widest;
    if (paper_slots <= max_paper_slots) {
      const auto e = spade::convert<spade::ellr>(a);
      check_equal(e, ellr_by_definition(a, ellr_layout{}), a, ellr_layout{});
      check_same(spade::convert<spade::csr>(e), a);
    } else {
      ++paper_skipped;
    }
    const auto sliced = spade::convert<spade::ellr>(a, ellr_layout{32, 1024});
    check_equal(sliced, ellr_by_definition(a, ellr_layout{32, 1024}), a, ellr_layout{32, 1024});
    check_same(spade::convert<spade::csr>(sliced), a);
    ++checked;
  }
  MESSAGE("real matrices checked: " << checked << " (paper layout skipped for " << paper_skipped
                                    << " with over " << max_paper_slots << " padded slots)");
  CHECK(checked > 0);
}

// ---- products ---------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("products with an ellr operand equal plain loops over the csr", T, float,
                   double) {
  for (const ellr_layout& layout : {ellr_layout{}, ellr_layout{4, 8}, ellr_layout{32, 1024}})
    for (auto [rows, cols] :
         std::vector<std::pair<index_t, index_t>>{{0, 3}, {1, 1}, {33, 31}, {70, 45}}) {
      const std::uint64_t seed = fresh_seed();
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(layout.slice_height);
      CAPTURE(layout.sort_window);
      CAPTURE(seed);
      const auto a = spade::random_sparse<T>(rows, cols, 0.2, seed);
      const auto e = spade::convert<spade::ellr>(a, layout);
      index_t widest = 0;
      for (index_t r = 0; r < rows; ++r)
        widest = std::max(widest, row_length(a, r));
      const auto x = spade::random_vector<T>(cols, seed + 1);
      const auto b = spade::random_dense<T, row_major>(cols, 5, seed + 2);
      const auto bc = spade::random_dense<T, col_major>(cols, 3, seed + 3);
      std::vector<double> want, mag;

      loop_product(
          a, 1, [&](index_t i, index_t) { return x[i]; }, want, mag);
      const spade::vector<T, cpu> y = e * x;
      const auto ref = spade::reference(e * x);
      const spade::vector<T, cpu> y2 = T(2) * (e * x);
      REQUIRE(y.size() == rows);
      REQUIRE(ref.size() == rows);
      for (index_t i = 0; i < rows; ++i) {
        CHECK(close<T>(y[i], want[i], mag[i], widest));
        CHECK(close<T>(ref[i], want[i], mag[i], widest));
        CHECK(close<T>(y2[i], 2 * want[i], 2 * mag[i], widest));
      }

      loop_product(
          a, 5, [&](index_t i, index_t j) { return b(i, j); }, want, mag);
      const spade::dense<T, cpu> c = e * b;
      REQUIRE(c.rows() == rows);
      REQUIRE(c.cols() == 5);
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < 5; ++j)
          CHECK(close<T>(c(i, j), want[i * 5 + j], mag[i * 5 + j], widest));

      loop_product(
          a, 3, [&](index_t i, index_t j) { return bc(i, j); }, want, mag);
      const spade::dense<T, cpu, col_major> cc = e * bc;
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < 3; ++j)
          CHECK(close<T>(cc(i, j), want[i * 3 + j], mag[i * 3 + j], widest));

      // Dense × ellr: (Bᵀ·A)(i, j) = Σ_r B(r, i)·A(r, j), by a loop over A's rows.
      const auto bt = spade::random_dense<T, row_major>(4, rows, seed + 4);
      std::vector<double> want_t(static_cast<std::size_t>(4 * cols), 0.0), mag_t = want_t;
      for (index_t r = 0; r < rows; ++r)
        for (index_t k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k)
          for (index_t i = 0; i < 4; ++i) {
            const double term = double(bt(i, r)) * double(a.values()[k]);
            want_t[static_cast<std::size_t>(i * cols + a.col_idx()[k])] += term;
            mag_t[static_cast<std::size_t>(i * cols + a.col_idx()[k])] += std::abs(term);
          }
      const spade::dense<T, cpu> d = bt * e;
      REQUIRE(d.rows() == 4);
      REQUIRE(d.cols() == cols);
      for (index_t i = 0; i < 4; ++i)
        for (index_t j = 0; j < cols; ++j)
          CHECK(close<T>(d(i, j), want_t[i * cols + j], mag_t[i * cols + j], rows));

      // Aᵀ·z reads A's rows as columns: the sorted layouts must map positions back to rows.
      const auto z = spade::random_vector<T>(rows, seed + 5);
      std::vector<double> want_z(static_cast<std::size_t>(cols), 0.0), mag_z = want_z;
      for (index_t r = 0; r < rows; ++r)
        for (index_t k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k) {
          const double term = double(a.values()[k]) * double(z[r]);
          want_z[static_cast<std::size_t>(a.col_idx()[k])] += term;
          mag_z[static_cast<std::size_t>(a.col_idx()[k])] += std::abs(term);
        }
      const spade::vector<T, cpu> yt = spade::transpose(e) * z;
      REQUIRE(yt.size() == cols);
      for (index_t j = 0; j < cols; ++j)
        CHECK(close<T>(yt[j], want_z[j], mag_z[j], rows));
    }
}

TEST_CASE_TEMPLATE("sparse × sparse with ellr operands, and assignment to an ellr", T, float,
                   double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(23, 17, 0.3, seed);
  const auto b = spade::random_sparse<T>(17, 11, 0.3, seed + 1);
  const auto ea = spade::convert<spade::ellr>(a, ellr_layout{4, 8});
  const auto eb = spade::convert<spade::ellr>(b);
  std::map<std::pair<index_t, index_t>, double> want, mag;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t m = a.col_idx()[k];
      for (index_t l = b.row_ptr()[m]; l < b.row_ptr()[m + 1]; ++l) {
        const double term = double(a.values()[k]) * double(b.values()[l]);
        want[{i, b.col_idx()[l]}] += term;
        mag[{i, b.col_idx()[l]}] += std::abs(term);
      }
    }
  const spade::csr<T, cpu> p = ea * eb;
  const auto got = entries_of(p);
  // The product keeps every structural position: random values cancel to zero with probability 0.
  CHECK(got.size() == want.size());
  for (const auto& [pos, v] : want) {
    CAPTURE(pos.first);
    CAPTURE(pos.second);
    REQUIRE(got.count(pos) == 1);
    CHECK(close<T>(got.at(pos), v, mag.at(pos), 17));
  }
  // A sum of ellr operands: doubling is exact, so the entries are exactly 2·A.
  const spade::csr<T, cpu> twice = ea + ea;
  CHECK(twice.row_ptr() == a.row_ptr());
  CHECK(twice.col_idx() == a.col_idx());
  for (std::size_t k = 0; k < a.values().size(); ++k)
    CHECK(twice.values()[k] == T(2) * a.values()[k]);
  // Assigned to an ellr the result is laid out as the paper's ELLPACK-R of the csr product.
  const spade::ellr<T, cpu> as_ellr = ea * eb;
  CHECK(as_ellr.layout() == ellr_layout{});
  check_equal(as_ellr, ellr_by_definition(p, ellr_layout{}), p, ellr_layout{});
}

TEST_CASE_TEMPLATE("an ellr operand is converted once; writing its values drops the cache", T,
                   float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(40, 30, 0.2, seed);
  auto e = spade::convert<spade::ellr>(a, ellr_layout{8, 16});
  const auto x = spade::random_vector<T>(30, seed + 1);
  const std::size_t before = spade::conversion_counter().load();
  const spade::vector<T, cpu> y = e * x;
  CHECK(spade::conversion_counter().load() - before == 1);  // ellr → csr for Eigen
  const spade::vector<T, cpu> again = e * x;
  CHECK(spade::conversion_counter().load() - before == 1);
  CHECK(again.values() == y.values());
  const std::string plan = spade::explain(e * x);
  CAPTURE(plan);
  CHECK(contains(plan, "ellr"));

  // Position 0 holds row row_order[0]: doubling every stored value doubles the product.
  for (auto& v : e.values())
    v = T(2) * v;
  const spade::vector<T, cpu> doubled = e * x;
  CHECK(spade::conversion_counter().load() - before == 2);
  for (index_t i = 0; i < 40; ++i)
    CHECK(doubled[i] == T(2) * y[i]);
}

// ---- conversions through other formats ---------------------------------------------------------

TEST_CASE_TEMPLATE("ellr from and to coo, dense, gcoo; to_eigen; Matrix Market", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(37, 29, 0.15, seed);
  const ellr_layout sliced{4, 16};
  const auto want_paper = ellr_by_definition(a, ellr_layout{});
  const auto want_sliced = ellr_by_definition(a, sliced);
  // random_sparse stores no zeros, so dense sources hold the same entries.
  spade::dense<T, cpu> d(a.rows(), a.cols());
  spade::dense<T, cpu, col_major> dc(a.rows(), a.cols());
  std::vector<index_t> ri, ci;
  std::vector<T> vi;
  for (const auto& [pos, v] : entries_of(a)) {
    d(pos.first, pos.second) = v;
    dc(pos.first, pos.second) = v;
    ri.push_back(pos.first);
    ci.push_back(pos.second);
    vi.push_back(v);
  }
  // The coo lists its entries backwards: the conversion must sort them.
  std::reverse(ri.begin(), ri.end());
  std::reverse(ci.begin(), ci.end());
  std::reverse(vi.begin(), vi.end());
  const spade::coo<T, cpu> c(a.rows(), a.cols(), ri, ci, vi);

  check_equal(spade::convert<spade::ellr>(c), want_paper, a, ellr_layout{});
  check_equal(spade::convert<spade::ellr>(d), want_paper, a, ellr_layout{});
  check_equal(spade::convert<spade::ellr>(dc), want_paper, a, ellr_layout{});
  check_equal(spade::convert<spade::ellr>(c, sliced), want_sliced, a, sliced);
  check_equal(spade::convert<spade::ellr>(d, sliced), want_sliced, a, sliced);
  check_equal(spade::convert<spade::ellr>(dc, sliced), want_sliced, a, sliced);
  check_equal(spade::convert<spade::ellr<T, cpu>>(a), want_paper, a, ellr_layout{});

  for (const ellr_layout& layout : {ellr_layout{}, sliced}) {
    CAPTURE(layout.slice_height);
    const auto e = spade::convert<spade::ellr>(a, layout);
    CHECK(spade::convert<spade::dense>(e).values() == d.values());
    CHECK(spade::convert<spade::dense<T, cpu, col_major>>(e).values() == dc.values());
    CHECK(entries_of(spade::convert<spade::coo>(e)) == entries_of(a));
    const auto g = spade::convert<spade::gcoo>(spade::convert<spade::csr>(e), 3);
    check_same(spade::convert<spade::csr>(g), a);
    check_equal(spade::convert<spade::ellr>(g, layout), ellr_by_definition(a, layout), a, layout);

    const Eigen::SparseMatrix<T, Eigen::RowMajor, int> m = spade::to_eigen(e);
    CHECK(m.rows() == a.rows());
    CHECK(m.cols() == a.cols());
    CHECK(m.nonZeros() == a.nnz());
    for (const auto& [pos, v] : entries_of(a))
      CHECK(m.coeff(pos.first, pos.second) == v);

    const auto path =
        std::filesystem::temp_directory_path() / ("spade_test_ellr_" + std::to_string(seed) + "_" +
                                                  std::to_string(layout.slice_height) + ".mtx");
    spade::write_matrix_market(path, e);
    const auto read = spade::read_matrix_market<T>(path);
    std::filesystem::remove(path);
    check_same(read, a);
  }
}

TEST_CASE_TEMPLATE("convert<ellr>(ellr, layout) re-lays out; the same layout is a copy", T, float,
                   double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(75, 20, 0.2, seed);
  for (const ellr_layout& from : layouts)
    for (const ellr_layout& to : layouts) {
      CAPTURE(from.slice_height);
      CAPTURE(from.sort_window);
      CAPTURE(to.slice_height);
      CAPTURE(to.sort_window);
      const auto e = spade::convert<spade::ellr>(a, from);
      check_equal(spade::convert<spade::ellr>(e, to), ellr_by_definition(a, to), a, to);
    }
  // Without a layout an ellr source keeps its own, as a gcoo keeps its p.
  const auto sorted = spade::convert<spade::ellr>(a, ellr_layout{4, 8});
  check_same(spade::convert<spade::ellr>(sorted), sorted);

  auto hops = [](auto&& f) {
    const std::size_t before = spade::conversion_counter().load();
    f();
    return spade::conversion_counter().load() - before;
  };
  const auto c = spade::convert<spade::coo>(a);
  const auto d = spade::convert<spade::dense>(a);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(a); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(a, ellr_layout{4, 8}); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(c); }) == 2);  // coo → csr → ellr
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(d); }) == 2);  // dense → csr → ellr
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(sorted); }) == 0);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(sorted, ellr_layout{4, 8}); }) == 0);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(sorted, ellr_layout{}); }) == 2);
  CHECK(hops([&] { (void)spade::convert<spade::csr>(sorted); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::coo>(sorted); }) == 2);
  CHECK(hops([&] { (void)spade::convert<spade::dense>(sorted); }) == 2);
}

// ---- errors -----------------------------------------------------------------------------------

TEST_CASE("ellr constructor names the first broken invariant") {
  using M = spade::ellr<double, cpu>;
  // A valid 4x4 of width 2 (entry k of row r at 4k + r): rows {0, 2}, {1}, {}, {0, 3}.
  const std::vector<double> v{1, 3, 0, 4, 2, 0, 0, 5};
  const std::vector<index_t> c{0, 1, 0, 0, 2, 0, 0, 3}, len{2, 1, 0, 2};
  CHECK_NOTHROW(M(4, 4, 2, v, c, len));

  CHECK(contains(error_text([&] { M(-1, 4, 0, {}, {}, {}); }), "ellr: negative size -1x4"));
  CHECK(contains(error_text([&] { M(4, 4, -1, v, c, len); }), "ellr: negative width -1"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, c, {2, 1, 0});
                 }),
                 "ellr: row_lengths has 3 entries, a matrix of 4 rows needs 4"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, c, {2, 1, 0, 2, 0});
                 }),
                 "row_lengths has 5 entries"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, {1, 3, 0, 4, 2, 0, 0}, c, len);
                 }),
                 "ellr: col_idx and values have 8 and 7 entries; 4 rows of width 2 need 8 each"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {0, 1, 0, 0, 2, 0, 0}, len);
                 }),
                 "col_idx and values have 7 and 8 entries"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, c, {2, 3, 0, 2});
                 }),
                 "ellr: row_lengths[1] = 3 is out of range [0, 2]"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, c, {2, 1, -1, 2});
                 }),
                 "ellr: row_lengths[2] = -1 is out of range [0, 2]"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {0, 1, 0, 0, 4, 0, 0, 3}, len);
                 }),
                 "ellr: col_idx[4] = 4 (row 0, entry 1) is out of range [0, 4)"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {0, -1, 0, 0, 2, 0, 0, 3}, len);
                 }),
                 "ellr: col_idx[1] = -1 (row 1, entry 0) is out of range"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {0, 1, 0, 3, 2, 0, 0, 1}, len);
                 }),
                 "ellr: row 3 has columns out of order: col_idx[7] = 1 after column 3"));
  CHECK(contains(error_text([&] {
                   M(4, 4, 2, v, {2, 1, 0, 0, 2, 0, 0, 3}, len);
                 }),
                 "ellr: row 0 has a duplicate column: col_idx[4] = 2 after column 2"));
  // Padding (past a row's length) is not checked: kernels never read it.
  CHECK_NOTHROW(M(4, 4, 2, v, {0, 1, 7, 0, 2, -5, 9, 3}, len));
  CHECK_NOTHROW(M(0, 3, 5, {}, {}, {}));
  CHECK_NOTHROW(M(3, 0, 0, {}, {}, {0, 0, 0}));
}

TEST_CASE_TEMPLATE("layouts no conversion makes are refused, naming the problem", T, float,
                   double) {
  const auto a = spade::random_sparse<T>(10, 10, 0.3, fresh_seed());
  const auto e = spade::convert<spade::ellr>(a);
  const auto d = spade::convert<spade::dense>(a);
  const auto bad = [&](ellr_layout layout) {
    return error_text([&] { (void)spade::convert<spade::ellr>(a, layout); });
  };
  CHECK(contains(bad({-1, 0}), "spade::convert<ellr>: negative slice height -1 or sort window 0"));
  CHECK(contains(bad({32, -4}), "negative slice height 32 or sort window -4"));
  CHECK(contains(bad({0, 64}), "spade::convert<ellr>: sort window 64 without a slice height"));
  CHECK(contains(bad({0, 0, 3}), "spade::convert<ellr>: 3 lanes; choose 1, 2, 4, 8, 16 or 32"));
  CHECK(contains(bad({32, 1024, 0}), "0 lanes; choose"));
  CHECK(contains(bad({32, 1024, 64}), "64 lanes; choose"));
  CHECK(contains(bad({32, 48}),
                 "spade::convert<ellr>: sort window 48 must be a multiple of the slice height 32 "
                 "and at most 2048"));
  CHECK(contains(bad({32, spade::detail::ellr_max_sort_window + 32}),
                 "sort window 2080 must be a multiple of the slice height 32 and at most 2048"));
  CHECK(contains(error_text([&] {
                   (void)spade::convert<spade::ellr>(e, ellr_layout{0, 64});
                 }),
                 "sort window 64 without a slice height"));
  CHECK(contains(error_text([&] {
                   (void)spade::convert<spade::ellr>(d, ellr_layout{-2, 0});
                 }),
                 "negative slice height -2"));
  CHECK(contains(error_text([&] {
                   (void)spade::host::csr_to_ellr(a, ellr_layout{32, 48});
                 }),
                 "csr_to_ellr: sort window 48"));
  // The largest window is allowed; a window of 0 or 1, or of one slice, sorts nothing.
  CHECK_NOTHROW(
      (void)spade::convert<spade::ellr>(a, ellr_layout{32, spade::detail::ellr_max_sort_window}));
  CHECK(spade::convert<spade::ellr>(a, ellr_layout{0, 1}).row_order().empty());
  CHECK(spade::convert<spade::ellr>(a, ellr_layout{5, 1}).row_order().empty());
  CHECK(spade::convert<spade::ellr>(a, ellr_layout{5, 5}).row_order().empty());
}

// ---- spaces -----------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("to_gpu / to_cpu for ellr: empty objects without a device, round trip with one",
                   T, float, double) {
  const spade::ellr<T, cpu> none;
  const spade::ellr<T, gpu> empty_on_device = spade::to_gpu(none);  // no data: no device needed
  CHECK(empty_on_device.nnz() == 0);
  const auto e = spade::convert<spade::ellr>(spade::random_sparse<T>(13, 11, 0.3, fresh_seed()),
                                             ellr_layout{4, 8});
  std::string reason;
  if (!spade::device_available(&reason)) {
    CHECK_THROWS_AS((void)spade::to_gpu(e), spade::no_device);
    return;
  }
  const spade::ellr<T, gpu> on_device = spade::to_gpu(e);
  CHECK(on_device.layout() == e.layout());
  CHECK(on_device.slice_height() == e.slice_height());
  check_same(spade::to_cpu(on_device), e);
}

// ---- the conversion graph ---------------------------------------------------------------------

namespace {

template <class T, class S>
void ellr_conversion_paths() {
  using spade::plan::conversion_path_t;
  using spade::plan::convert;
  using spade::plan::lhs;
  using spade::plan::rhs;
  using spade::plan::steps;
  using coo = spade::coo<T, S>;
  using csr = spade::csr<T, S>;
  using gcoo = spade::gcoo<T, S>;
  using ellr = spade::ellr<T, S>;
  using drow = spade::dense<T, S, row_major>;
  using dcol = spade::dense<T, S, col_major>;
  static_assert(spade::plan::format_id<ellr>() == 5);
  // ellr joins only csr: everything else reaches it, and leaves it, through csr.
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, ellr>, steps<>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, csr, ellr>, steps<convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, csr>, steps<convert<lhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<rhs, ellr, csr>, steps<convert<rhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, drow, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, dcol, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, drow>,
                               steps<convert<lhs, csr>, convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, dcol>,
                               steps<convert<lhs, csr>, convert<lhs, dcol>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, gcoo>,
                               steps<convert<lhs, csr>, convert<lhs, gcoo>>>);
  // Paths between the other formats never pass through ellr.
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, gcoo>,
                               steps<convert<lhs, csr>, convert<lhs, gcoo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, drow>,
                               steps<convert<lhs, csr>, convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, csr, drow>, steps<convert<lhs, drow>>>);
}

}  // namespace

TEST_CASE_TEMPLATE("conversion graph: ellr's paths in both spaces", T, float, double) {
  ellr_conversion_paths<T, cpu>();
  ellr_conversion_paths<T, gpu>();
  // Every step of the paths through ellr is a conversion spade::convert implements (compiles).
  const auto a = spade::random_sparse<T>(9, 6, 0.4, fresh_seed());
  const auto e = spade::convert<spade::ellr>(spade::convert<spade::coo>(a));
  const auto back = spade::convert<spade::ellr>(spade::convert<spade::dense<T, cpu, col_major>>(
      spade::convert<spade::dense>(spade::convert<spade::coo>(e))));
  check_same(spade::convert<spade::csr>(back), a);
}

TEST_CASE("ELLR-T threads per row: fill 3/4 of the device up to the mean, more for long rows") {
  using spade::detail::ellr_threads_per_row;
  constexpr std::int64_t h100 = 132 * 2048;  // resident threads of an H100 SXM
  // 15606 rows of 5.9: the next power of two over the mean (8) fits the device.
  CHECK(ellr_threads_per_row(15606, 5.9, h100) == 8);
  // A million rows fill the device with one thread each.
  CHECK(ellr_threads_per_row(1000000, 26.5, h100) == 1);
  // 14000 rows: 8 threads fill 3/4 of the device; 280 entries keep 16 threads at 17 each.
  CHECK(ellr_threads_per_row(14000, 280.0, h100) == 16);
  // 8000 rows of 800: a warp per row.
  CHECK(ellr_threads_per_row(8000, 800.0, h100) == 32);
  // Short rows cap the threads: 3000 rows of 10 get 16, 2000 rows of 2 get 2.
  CHECK(ellr_threads_per_row(3000, 10.0, h100) == 16);
  CHECK(ellr_threads_per_row(2000, 2.0, h100) == 2);
  // No rows, no entries: one thread.
  CHECK(ellr_threads_per_row(0, 0.0, h100) == 1);
  CHECK(ellr_threads_per_row(100, 0.0, h100) == 1);
}

TEST_CASE(
    "ellr_spmm splits 8 columns of X over 2 threads: 1 thread per row in float, 16 in double") {
  using spade::detail::ellr_column_groups;
  // A row-major X of 8 columns in 16-byte rows: two threads of 4 columns each, at one thread per
  // row in float and up to 16 in double.
  CHECK(ellr_column_groups(1, 8, true, false) == 2);
  CHECK(ellr_column_groups(2, 8, true, false) == 1);
  CHECK(ellr_column_groups(1, 8, true, true) == 2);
  CHECK(ellr_column_groups(16, 8, true, true) == 2);
  CHECK(ellr_column_groups(32, 8, true, true) == 1);
  // Fewer columns, or rows not of whole 16-byte vectors: no split.
  for (const int vectors : {1, 2, 3, 4, 5, 6, 7}) {
    CHECK(ellr_column_groups(1, vectors, true, false) == 1);
    CHECK(ellr_column_groups(4, vectors, true, true) == 1);
  }
  CHECK(ellr_column_groups(1, 8, false, false) == 1);
  CHECK(ellr_column_groups(4, 8, false, true) == 1);
  // The bounds are the device's tuning.
  spade::thresholds& t = spade::tuning();
  const spade::thresholds saved = t;
  t.ellr_split_max_threads_per_row = 4;
  t.ellr_split_max_threads_per_row_fp64 = 2;
  CHECK(ellr_column_groups(4, 8, true, false) == 2);
  CHECK(ellr_column_groups(8, 8, true, false) == 1);
  CHECK(ellr_column_groups(2, 8, true, true) == 2);
  CHECK(ellr_column_groups(4, 8, true, true) == 1);
  // A bound past 16 still keeps a split row within a warp.
  t.ellr_split_max_threads_per_row_fp64 = 32;
  CHECK(ellr_column_groups(16, 8, true, true) == 2);
  CHECK(ellr_column_groups(32, 8, true, true) == 1);
  t = saved;
}

TEST_CASE(
    "ellr_spmm past 8 columns: one pass of 16 or 32, only split, at most 8 columns a thread") {
  using spade::detail::ellr_column_groups;
  using spade::detail::ellr_pass_vectors;
  using spade::detail::ellr_split_possible;
  const std::pair<int, int> passes[] = {{1, 1},  {2, 2},   {3, 4},   {4, 4},   {5, 8},  {8, 8},
                                        {9, 16}, {16, 16}, {17, 32}, {31, 32}, {32, 32}};
  for (const auto& [vectors, pass] : passes) {
    CAPTURE(vectors);
    CHECK(ellr_pass_vectors(vectors) == pass);
  }
  // Past 8 columns: a thread for every 8 of the pass whatever the layout or the tuning, except
  // double at 9-16 columns: 4 threads of 4 while the row's threads fit a warp.
  for (const bool wide : {true, false}) {
    CHECK(ellr_column_groups(1, 9, wide, false) == 2);
    CHECK(ellr_column_groups(8, 16, wide, false) == 2);
    CHECK(ellr_column_groups(16, 16, wide, false) == 2);
    CHECK(ellr_column_groups(1, 9, wide, true) == 4);
    CHECK(ellr_column_groups(8, 16, wide, true) == 4);
    CHECK(ellr_column_groups(16, 16, wide, true) == 2);  // 4 x 16 threads would pass a warp
    for (const bool fp64 : {true, false}) {
      CHECK(ellr_column_groups(1, 17, wide, fp64) == 4);
      CHECK(ellr_column_groups(8, 32, wide, fp64) == 4);
    }
  }
  // Up to 8 columns: any split keeping 2 columns a thread; past 8: at most 8 columns a thread.
  CHECK(ellr_split_possible(32, 1, 8));
  CHECK(ellr_split_possible(16, 2, 8));
  CHECK_FALSE(ellr_split_possible(16, 4, 8));  // 64 threads a row
  CHECK_FALSE(ellr_split_possible(1, 4, 4));   // 1 column a thread
  CHECK_FALSE(ellr_split_possible(1, 3, 8));
  CHECK_FALSE(ellr_split_possible(1, 1, 16));  // 16 columns in one thread
  CHECK(ellr_split_possible(16, 2, 16));
  CHECK(ellr_split_possible(8, 4, 16));
  CHECK_FALSE(ellr_split_possible(1, 2, 32));
  CHECK(ellr_split_possible(8, 4, 32));
  CHECK_FALSE(ellr_split_possible(16, 4, 32));
  CHECK_FALSE(ellr_split_possible(1, 4, 33));
  CHECK(spade::detail::ellr_max_split_vectors == 32);
}

TEST_CASE("ellr_spmm past 8 columns: threads per row within a warp, halved on large matrices") {
  using spade::detail::ellr_wide_threads_per_row;
  spade::thresholds& t = spade::tuning();
  const spade::thresholds saved = t;
  t = spade::default_thresholds;
  REQUIRE(t.ellr_wide_half_threads_min_rows == 6000);
  REQUIRE(t.ellr_wide_half_max_entries_per_thread == 16.0);
  // Below 6000 rows: the layout's lanes, at most 32 over the groups.
  CHECK(ellr_wide_threads_per_row(8, 2, 5999, 6.0) == 8);
  CHECK(ellr_wide_threads_per_row(32, 2, 100, 40.0) == 16);
  CHECK(ellr_wide_threads_per_row(32, 4, 100, 40.0) == 8);
  CHECK(ellr_wide_threads_per_row(1, 4, 100, 1.0) == 1);
  // From 6000 rows: half of that from 4 threads on (never below 2) ...
  CHECK(ellr_wide_threads_per_row(8, 2, 6000, 6.0) == 4);
  CHECK(ellr_wide_threads_per_row(4, 2, 49152, 4.0) == 2);
  CHECK(ellr_wide_threads_per_row(32, 2, 1 << 20, 30.0) == 8);
  CHECK(ellr_wide_threads_per_row(16, 4, 10000, 13.0) == 4);
  CHECK(ellr_wide_threads_per_row(2, 2, 65536, 6.0) == 2);
  CHECK(ellr_wide_threads_per_row(1, 2, 1 << 22, 5.0) == 1);
  // ... while each thread then walks at most 16 entries of a mean row: 8 threads halved to 4
  // take rows of up to 64.
  CHECK(ellr_wide_threads_per_row(8, 4, 8000, 64.0) == 4);
  CHECK(ellr_wide_threads_per_row(8, 4, 8000, 64.5) == 8);
  CHECK(ellr_wide_threads_per_row(32, 4, 14000, 1400.0) == 8);
  // The bounds are the device's tuning.
  t.ellr_wide_half_threads_min_rows = 100;
  CHECK(ellr_wide_threads_per_row(8, 2, 100, 6.0) == 4);
  CHECK(ellr_wide_threads_per_row(8, 2, 99, 6.0) == 8);
  t.ellr_wide_half_max_entries_per_thread = 1.0;
  CHECK(ellr_wide_threads_per_row(8, 2, 100, 6.0) == 8);
  t = saved;
}
