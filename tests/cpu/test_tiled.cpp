// tiled on the cpu: checked construction, csr round trips, arrays by an independent build,
// conversions.
#include <doctest/doctest.h>

#include <Eigen/SparseCore>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <spade/spade.hpp>
#include <string>
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

using tiled_d = spade::tiled<double, cpu>;
using csr_d = spade::csr<double, cpu>;

using spade::testing::fresh_seed;

/// A matrix's entries keyed by (row, column), in row-major order.
using entry_map = std::map<std::pair<index_t, index_t>, double>;

/// `rows` × `cols` with each position present with probability `density`; values uniform in
/// [-1, 1), with about one entry in eight an explicit 0.0. Rows [empty_from, empty_to) stay
/// empty.
entry_map random_entries(index_t rows, index_t cols, double density, std::uint64_t seed,
                         index_t empty_from = 0, index_t empty_to = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0), value(-1.0, 1.0);
  entry_map m;
  for (index_t i = 0; i < rows; ++i) {
    if (i >= empty_from && i < empty_to) continue;
    for (index_t j = 0; j < cols; ++j)
      if (unit(rng) < density) m[{i, j}] = unit(rng) < 0.125 ? 0.0 : value(rng);
  }
  return m;
}

/// The csr of `m` through the checked constructor (the map is already in row-major order).
csr_d csr_of(index_t rows, index_t cols, const entry_map& m) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0), col_idx;
  std::vector<double> values;
  for (const auto& [pos, v] : m) {
    ++row_ptr[static_cast<std::size_t>(pos.first) + 1];
    col_idx.push_back(pos.second);
    values.push_back(v);
  }
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  return csr_d(rows, cols, row_ptr, col_idx, values);
}

/// The arrays a tiled of `m` must hold, built from the format's definition: entries grouped
/// by (tile row, tile column) in a map, each tile's entries keyed by their bit.
struct expected_tiled {
  std::vector<index_t> tile_row, tile_col, tile_offset{0};
  std::vector<std::uint64_t> bitmap;
  std::vector<double> values;
};

expected_tiled by_definition(const entry_map& m) {
  std::map<std::pair<index_t, index_t>, std::map<int, double>> tiles;
  for (const auto& [pos, v] : m)
    tiles[{pos.first / 8, pos.second / 8}][(pos.first % 8) * 8 + pos.second % 8] = v;
  expected_tiled e;
  for (const auto& [where, entries] : tiles) {
    e.tile_row.push_back(where.first);
    e.tile_col.push_back(where.second);
    std::uint64_t bits = 0;
    for (const auto& [bit, v] : entries) {
      bits |= std::uint64_t{1} << bit;
      e.values.push_back(v);
    }
    e.bitmap.push_back(bits);
    e.tile_offset.push_back(static_cast<index_t>(e.values.size()));
  }
  return e;
}

void check_arrays(const tiled_d& got, const expected_tiled& want, index_t rows, index_t cols) {
  CHECK(got.rows() == rows);
  CHECK(got.cols() == cols);
  CHECK(got.tiles() == static_cast<index_t>(want.bitmap.size()));
  CHECK(got.nnz() == static_cast<index_t>(want.values.size()));
  CHECK(got.tile_row() == want.tile_row);
  CHECK(got.tile_col() == want.tile_col);
  CHECK(got.tile_offset() == want.tile_offset);
  CHECK(got.bitmap() == want.bitmap);
  CHECK(got.values() == want.values);
}

void check_same(const csr_d& x, const csr_d& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.row_ptr() == y.row_ptr());
  CHECK(x.col_idx() == y.col_idx());
  CHECK(x.values() == y.values());
}

void check_same(const tiled_d& x, const tiled_d& y) {
  CHECK(x.rows() == y.rows());
  CHECK(x.cols() == y.cols());
  CHECK(x.tile_row() == y.tile_row());
  CHECK(x.tile_col() == y.tile_col());
  CHECK(x.tile_offset() == y.tile_offset());
  CHECK(x.bitmap() == y.bitmap());
  CHECK(x.values() == y.values());
}

/// Same shape, same stored positions in the same order, same values (explicit zeros count).
void check_same(const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& x,
                const Eigen::SparseMatrix<double, Eigen::RowMajor, int>& y) {
  REQUIRE(x.rows() == y.rows());
  REQUIRE(x.cols() == y.cols());
  REQUIRE(x.nonZeros() == y.nonZeros());
  for (Eigen::Index i = 0; i < x.outerSize(); ++i) {
    Eigen::SparseMatrix<double, Eigen::RowMajor, int>::InnerIterator a(x, i), b(y, i);
    for (; a && b; ++a, ++b) {
      CHECK(a.col() == b.col());
      CHECK(a.value() == b.value());
    }
    CHECK(!a);
    CHECK(!b);
  }
}

std::size_t hops(auto&& f) {
  const std::size_t before = spade::conversion_counter().load();
  f();
  return spade::conversion_counter().load() - before;
}

}  // namespace

// ---- the type ---------------------------------------------------------------------------------

TEST_CASE("tiled is a sparse format with value semantics and empty defaults") {
  static_assert(spade::is_tiled_v<tiled_d> && spade::sparse_matrix<spade::tiled<float, gpu>>);
  static_assert(!spade::is_tiled_v<csr_d> && !spade::is_csr_v<tiled_d>);
  static_assert(!spade::is_ellr_v<tiled_d> && !spade::is_dense_v<tiled_d>);
  static_assert(std::is_same_v<spade::rebind_space_t<tiled_d, gpu>, spade::tiled<double, gpu>>);
  CHECK(std::string(spade::expr::format_name<spade::tiled<double, gpu>>()) == "tiled");

  const tiled_d empty;
  CHECK(empty.rows() == 0);
  CHECK(empty.tiles() == 0);
  CHECK(empty.mean_fill() == 0.0);
  CHECK(spade::convert<spade::csr>(empty).row_ptr() == std::vector<index_t>{0});

  // (0,0)=1, (1,2)=2 in one tile of a 3x3.
  tiled_d a(3, 3, {0}, {0}, {0, 2}, {(std::uint64_t{1} << 0) | (std::uint64_t{1} << 10)},
            {1.0, 2.0});
  tiled_d copy = a;
  copy.values()[0] = 9.0;
  CHECK(a.values()[0] == 1.0);
  const tiled_d moved = std::move(copy);
  CHECK(moved.values()[0] == 9.0);
}

// ---- checked construction ---------------------------------------------------------------------

TEST_CASE("the checked constructor names each broken invariant") {
  // A 12x20 matrix: 2 tile rows (the second 4 rows high), 3 tile columns (the last 4 wide).
  const std::uint64_t bit00 = 1, bit11 = std::uint64_t{1} << 9;
  auto build = [](std::vector<index_t> tr, std::vector<index_t> tc, std::vector<index_t> off,
                  std::vector<std::uint64_t> bits, std::vector<double> values) {
    return error_text([&] { tiled_d(12, 20, tr, tc, off, bits, values); });
  };
  // A valid one first, so each failure below is the one change it makes.
  CHECK(build({0, 0, 1}, {0, 2, 1}, {0, 1, 3, 4}, {bit00, bit00 | bit11, bit00}, {1, 2, 3, 4}) ==
        "<no invalid_matrix thrown>");

  SUBCASE("negative size") {
    const std::string text = error_text([] { tiled_d(-1, 4, {}, {}, {}, {}, {}); });
    CHECK(contains(text, "tiled: negative size -1x4"));
  }
  SUBCASE("tile row or column outside the matrix") {
    std::string text = build({0, 2}, {0, 0}, {0, 1, 2}, {bit00, bit00}, {1, 2});
    CHECK(contains(text, "tile 1 at tile row 2, tile column 0 lies outside the 2 x 3 tiles"));
    text = build({0}, {3}, {0, 1}, {bit00}, {1});
    CHECK(contains(text, "tile 0 at tile row 0, tile column 3 lies outside"));
    text = build({-1}, {0}, {0, 1}, {bit00}, {1});
    CHECK(contains(text, "tile 0 at tile row -1"));
  }
  SUBCASE("tiles out of order") {
    std::string text = build({0, 0}, {2, 1}, {0, 1, 2}, {bit00, bit00}, {1, 2});
    CHECK(contains(text, "tile 1 (0, 1) comes after tile (0, 2)"));
    text = build({1, 0}, {0, 2}, {0, 1, 2}, {bit00, bit00}, {1, 2});
    CHECK(contains(text, "tile 1 (0, 2) comes after tile (1, 0)"));
  }
  SUBCASE("a duplicate tile") {
    const std::string text = build({1, 1}, {1, 1}, {0, 1, 2}, {bit00, bit00}, {1, 2});
    CHECK(contains(text, "tile 1 (1, 1) comes after tile (1, 1)"));
    CHECK(contains(text, "strictly increasing"));
  }
  SUBCASE("an empty bitmap") {
    const std::string text = build({0, 0}, {0, 1}, {0, 1, 1}, {bit00, 0}, {1});
    CHECK(contains(text, "tile 1 has an empty bitmap"));
  }
  SUBCASE("a bit past the edge of a partial tile") {
    // Tile (1, 0) has rows 8..11: local row 4 is row 12, past the last.
    std::string text = build({1}, {0}, {0, 1}, {std::uint64_t{1} << (4 * 8)}, {1});
    CHECK(contains(text, "tile 0 (1, 0) has bits for rows or columns past the matrix's 12 x 20"));
    // Tile (0, 2) has columns 16..19: local column 4 is column 20.
    text = build({0}, {2}, {0, 1}, {std::uint64_t{1} << 4}, {1});
    CHECK(contains(text, "tile 0 (0, 2) has bits for rows or columns past"));
    // The last bit of the corner tile (1, 2) is far outside both.
    text = build({1}, {2}, {0, 1}, {std::uint64_t{1} << 63}, {1});
    CHECK(contains(text, "tile 0 (1, 2) has bits"));
    // The bits just inside the corner are accepted.
    CHECK(build({1}, {2}, {0, 1}, {std::uint64_t{1} << (3 * 8 + 3)}, {1}) ==
          "<no invalid_matrix thrown>");
  }
  SUBCASE("offsets that do not step by the popcounts") {
    std::string text = build({0, 0}, {0, 1}, {0, 2, 3}, {bit00, bit00}, {1, 2, 3});
    CHECK(contains(text, "tile_offset[1] = 2 after 0, but tile 0's bitmap has 1 entries"));
    text = build({0, 0}, {0, 1}, {1, 2, 3}, {bit00, bit00}, {1, 2, 3});
    CHECK(contains(text, "tile_offset[0] = 1 (must be 0)"));
  }
  SUBCASE("values that do not match the offsets") {
    std::string text = build({0}, {0}, {0, 2}, {bit00 | bit11}, {1, 2, 3});
    CHECK(contains(text, "the tiles hold 2 entries but there are 3 values"));
    text = error_text([] { tiled_d(8, 8, {}, {}, {0}, {}, {1.0}); });
    CHECK(contains(text, "the tiles hold 0 entries but there are 1 values"));
  }
  SUBCASE("arrays of mismatched sizes") {
    std::string text = build({0, 0}, {0}, {0, 1, 2}, {bit00, bit00}, {1, 2});
    CHECK(contains(text, "tile_row, tile_col and bitmap have 2, 1 and 2 entries"));
    text = build({0}, {0}, {0, 1}, {bit00, bit00}, {1});
    CHECK(contains(text, "have 1, 1 and 2 entries"));
    text = build({0}, {0}, {0}, {bit00}, {1});
    CHECK(contains(text, "tile_offset has 1 entries, 1 tiles need 2"));
  }
}

// ---- csr_to_tiled by definition, round trips ---------------------------------------------------

TEST_CASE("csr -> tiled matches an independent build and round-trips, random and edge shapes") {
  const std::vector<std::pair<index_t, index_t>> shapes{{0, 0},   {1, 1},   {8, 8}, {9, 17},
                                                        {31, 33}, {33, 31}, {0, 5}, {5, 0}};
  for (auto [rows, cols] : shapes)
    for (double density : {0.0, 0.05, 0.3, 1.0}) {
      const std::uint64_t seed = fresh_seed();
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(density);
      CAPTURE(seed);
      const entry_map m = random_entries(rows, cols, density, seed);
      const csr_d a = csr_of(rows, cols, m);
      const tiled_d t = spade::host::csr_to_tiled(a);
      check_arrays(t, by_definition(m), rows, cols);
      check_same(spade::host::tiled_to_csr(t), a);
      // The same through spade::convert, and through the checked constructor's eyes.
      check_same(spade::convert<spade::csr>(spade::convert<spade::tiled>(a)), a);
      const auto e = by_definition(m);
      check_same(tiled_d(rows, cols, e.tile_row, e.tile_col, e.tile_offset, e.bitmap, e.values), t);
    }
}

TEST_CASE("1000x1000 with empty rows and empty tile rows round-trips") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  // Rows 100..299 are empty (25 whole tile rows); rows 500..503 are empty inside tile row 62.
  entry_map m = random_entries(1000, 1000, 0.01, seed, 100, 300);
  for (index_t i = 500; i < 504; ++i)
    for (index_t j = 0; j < 1000; ++j)
      m.erase({i, j});
  m[{999, 999}] = 0.5;  // the corner of the matrix: last bit of the last tile
  const csr_d a = csr_of(1000, 1000, m);
  const tiled_d t = spade::convert<spade::tiled>(a);
  check_arrays(t, by_definition(m), 1000, 1000);
  // Tile rows 13..36 (rows 104..295) lie wholly inside the empty band.
  for (index_t k = 0; k < t.tiles(); ++k)
    CHECK((t.tile_row()[k] < 13 || t.tile_row()[k] > 36));
  CHECK(t.tile_row().back() == 124);
  CHECK(t.tile_col().back() == 124);
  CHECK((t.bitmap().back() >> 63) == 1);
  check_same(spade::convert<spade::csr>(t), a);
}

TEST_CASE("a full 16x16 block: four full tiles") {
  entry_map m;
  for (index_t i = 0; i < 16; ++i)
    for (index_t j = 0; j < 16; ++j)
      m[{i, j}] = 1.0 + i * 16 + j;
  const csr_d a = csr_of(16, 16, m);
  const tiled_d t = spade::convert<spade::tiled>(a);
  CHECK(t.tiles() == 4);
  CHECK(t.tile_row() == std::vector<index_t>{0, 0, 1, 1});
  CHECK(t.tile_col() == std::vector<index_t>{0, 1, 0, 1});
  CHECK(t.tile_offset() == std::vector<index_t>{0, 64, 128, 192, 256});
  CHECK(t.bitmap() == std::vector<std::uint64_t>(4, ~std::uint64_t{0}));
  CHECK(t.mean_fill() == 64.0);
  // Tile (0, 1) holds rows 0..7, columns 8..15, row after row.
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      CHECK(t.values()[static_cast<std::size_t>(64 + r * 8 + c)] == 1.0 + r * 16 + (8 + c));
  check_arrays(t, by_definition(m), 16, 16);
  check_same(spade::convert<spade::csr>(t), a);
}

TEST_CASE("explicit zeros are kept both ways") {
  // (0,0)=0 (0,9)=0 (3,3)=2 (8,1)=0 in a 10x10: three tiles, one holding only a zero.
  const csr_d a(10, 10, {0, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4}, {0, 9, 3, 1}, {0.0, 0.0, 2.0, 0.0});
  const tiled_d t = spade::convert<spade::tiled>(a);
  CHECK(t.nnz() == 4);
  CHECK(t.tile_row() == std::vector<index_t>{0, 0, 1});
  CHECK(t.tile_col() == std::vector<index_t>{0, 1, 0});
  CHECK(t.bitmap() == std::vector<std::uint64_t>{1 | (std::uint64_t{1} << 27), 2, 2});
  CHECK(t.values() == std::vector<double>{0.0, 2.0, 0.0, 0.0});
  check_same(spade::convert<spade::csr>(t), a);
}

TEST_CASE("mean_fill, tiles and tile counts on known matrices") {
  SUBCASE("identity 16x16: 2 diagonal tiles of 8") {
    entry_map m;
    for (index_t i = 0; i < 16; ++i)
      m[{i, i}] = 1.0;
    const tiled_d t = spade::convert<spade::tiled>(csr_of(16, 16, m));
    CHECK(t.tiles() == 2);
    CHECK(t.mean_fill() == 8.0);
    CHECK(t.tile_rows() == 2);
    CHECK(t.tile_cols() == 2);
    CHECK(t.bitmap() == std::vector<std::uint64_t>(2, 0x8040201008040201ull));
  }
  SUBCASE("17x9 with 3 entries in 2 tiles") {
    const tiled_d t = spade::convert<spade::tiled>(
        csr_of(17, 9, entry_map{{{0, 0}, 1.0}, {{0, 8}, 2.0}, {{7, 8}, 3.0}}));
    CHECK(t.tile_rows() == 3);
    CHECK(t.tile_cols() == 2);
    CHECK(t.tiles() == 2);
    CHECK(t.mean_fill() == 1.5);
  }
}

TEST_CASE("a real matrix (cage10) round-trips and matches the independent build") {
  const auto path = spade::testing::data_dir() / "matrices" / "cage10.mtx.gz";
  REQUIRE(std::filesystem::exists(path));
  const csr_d a = spade::read_matrix_market<double>(path);
  entry_map m;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      m[{i, a.col_idx()[k]}] = a.values()[k];
  const tiled_d t = spade::convert<spade::tiled>(a);
  CHECK(t.nnz() == a.nnz());
  check_arrays(t, by_definition(m), a.rows(), a.cols());
  check_same(spade::convert<spade::csr>(t), a);
  CHECK(t.mean_fill() > 1.0);
}

// ---- Eigen, Matrix Market, other formats -------------------------------------------------------

TEST_CASE("to_eigen of a tiled equals the source Eigen matrix") {
  for (auto [rows, cols] : std::vector<std::pair<index_t, index_t>>{{0, 0}, {1, 1}, {33, 31}}) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(seed);
    std::vector<Eigen::Triplet<double, int>> triplets;
    for (const auto& [pos, v] : random_entries(rows, cols, 0.2, seed))
      triplets.emplace_back(pos.first, pos.second, v);
    Eigen::SparseMatrix<double, Eigen::RowMajor, int> source(rows, cols);
    source.setFromTriplets(triplets.begin(), triplets.end());
    const tiled_d t = spade::convert<spade::tiled>(spade::from_eigen(source));
    check_same(spade::to_eigen(t), source);
  }
}

TEST_CASE("Matrix Market: a tiled writes the csr it stands for") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d a = csr_of(20, 13, random_entries(20, 13, 0.3, seed));
  const auto path = std::filesystem::temp_directory_path() /
                    ("spade_test_tiled_" + std::to_string(seed) + ".mtx");
  spade::write_matrix_market(path, spade::convert<spade::tiled>(a));
  const csr_d read = spade::read_matrix_market<double>(path);
  std::filesystem::remove(path);
  check_same(read, a);
}

TEST_CASE("convert<tiled> from coo, dense, gcoo and ellr equals from csr; hops counted once each") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  // No explicit zeros: a dense source drops them.
  entry_map m = random_entries(29, 37, 0.2, seed);
  std::erase_if(m, [](const auto& entry) { return entry.second == 0.0; });
  const csr_d a = csr_of(29, 37, m);
  const tiled_d want = spade::convert<spade::tiled>(a);
  check_arrays(want, by_definition(m), 29, 37);

  std::vector<index_t> ri, ci;
  std::vector<double> vi;
  for (auto it = m.rbegin(); it != m.rend(); ++it) {  // backwards: the conversion must sort
    ri.push_back(it->first.first);
    ci.push_back(it->first.second);
    vi.push_back(it->second);
  }
  const spade::coo<double, cpu> c(29, 37, ri, ci, vi);
  spade::dense<double, cpu> d(29, 37);
  spade::dense<double, cpu, col_major> dc(29, 37);
  for (const auto& [pos, v] : m) {
    d(pos.first, pos.second) = v;
    dc(pos.first, pos.second) = v;
  }
  const auto g = spade::convert<spade::gcoo>(a, 3);
  const auto e = spade::convert<spade::ellr>(a);

  check_same(spade::convert<spade::tiled>(c), want);
  check_same(spade::convert<spade::tiled>(d), want);
  check_same(spade::convert<spade::tiled>(dc), want);
  check_same(spade::convert<spade::tiled>(g), want);
  check_same(spade::convert<spade::tiled>(e), want);
  check_same(spade::convert<tiled_d>(a), want);
  check_same(spade::convert<tiled_d>(c), want);

  // And back out to every format.
  CHECK(spade::convert<spade::dense>(want).values() == d.values());
  CHECK(spade::convert<spade::dense<double, cpu, col_major>>(want).values() == dc.values());
  const auto back_coo = spade::convert<spade::coo>(want);
  CHECK(back_coo.row_idx() == std::vector<index_t>(ri.rbegin(), ri.rend()));
  CHECK(back_coo.col_idx() == std::vector<index_t>(ci.rbegin(), ci.rend()));
  CHECK(back_coo.values() == std::vector<double>(vi.rbegin(), vi.rend()));
  check_same(spade::convert<spade::csr>(spade::convert<spade::gcoo>(want, 3)), a);
  check_same(spade::convert<spade::csr>(spade::convert<spade::ellr>(want)), a);

  CHECK(hops([&] { (void)spade::convert<spade::tiled>(a); }) == 1);
  CHECK(hops([&] { (void)spade::convert<tiled_d>(a); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::csr>(want); }) == 1);
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(want); }) == 0);
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(c); }) == 2);   // coo → csr → tiled
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(d); }) == 2);   // dense → csr → tiled
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(dc); }) == 2);  // dense_col → csr → tiled
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(g); }) == 2);   // gcoo → csr → tiled
  CHECK(hops([&] { (void)spade::convert<spade::tiled>(e); }) == 2);   // ellr → csr → tiled
  CHECK(hops([&] { (void)spade::convert<spade::coo>(want); }) == 2);  // tiled → csr → coo
  CHECK(hops([&] { (void)spade::convert<spade::dense>(want); }) == 2);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(want); }) == 2);
  CHECK(hops([&] { (void)spade::convert<spade::gcoo>(want, 3); }) == 2);
  CHECK(hops([&] { (void)spade::convert<spade::ellr>(want); }) == 2);
}

// ---- spaces -----------------------------------------------------------------------------------

TEST_CASE("to_gpu / to_cpu for tiled: empty objects without a device, round trip with one") {
  const tiled_d none;
  const spade::tiled<double, gpu> empty_on_device = spade::to_gpu(none);  // no data: no device
  CHECK(empty_on_device.tiles() == 0);
  CHECK(spade::to_cpu(empty_on_device).rows() == 0);
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const tiled_d t = spade::convert<spade::tiled>(csr_of(13, 11, random_entries(13, 11, 0.3, seed)));
  std::string reason;
  if (!spade::device_available(&reason)) {
    CHECK_THROWS_AS((void)spade::to_gpu(t), spade::no_device);
    return;
  }
  const spade::tiled<double, gpu> on_device = spade::to_gpu(t);
  CHECK(on_device.tiles() == t.tiles());
  check_same(spade::to_cpu(on_device), t);
}

// ---- the conversion graph ---------------------------------------------------------------------

namespace {

template <class S>
void tiled_conversion_paths() {
  using spade::plan::conversion_path_t;
  using spade::plan::convert;
  using spade::plan::lhs;
  using spade::plan::rhs;
  using spade::plan::steps;
  using coo = spade::coo<double, S>;
  using csr = spade::csr<double, S>;
  using gcoo = spade::gcoo<double, S>;
  using ellr = spade::ellr<double, S>;
  using tiled = spade::tiled<double, S>;
  using drow = spade::dense<double, S, row_major>;
  using dcol = spade::dense<double, S, col_major>;
  static_assert(spade::plan::format_node_count == 7);
  static_assert(spade::plan::format_id<tiled>() == 6);
  static_assert(spade::plan::edge_cost[1][6] == 3 && spade::plan::edge_cost[6][1] == 2);
  // tiled joins only csr: everything else reaches it, and leaves it, through csr.
  static_assert(std::is_same_v<conversion_path_t<lhs, tiled, tiled>, steps<>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, csr, tiled>, steps<convert<lhs, tiled>>>);
  static_assert(std::is_same_v<conversion_path_t<rhs, tiled, csr>, steps<convert<rhs, csr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, tiled>,
                               steps<convert<lhs, csr>, convert<lhs, tiled>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, dcol, tiled>,
                               steps<convert<lhs, csr>, convert<lhs, tiled>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, ellr, tiled>,
                               steps<convert<lhs, csr>, convert<lhs, tiled>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, tiled, gcoo>,
                               steps<convert<lhs, csr>, convert<lhs, gcoo>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, tiled, drow>,
                               steps<convert<lhs, csr>, convert<lhs, drow>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, tiled, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  // Paths between the other formats never pass through tiled.
  static_assert(std::is_same_v<conversion_path_t<lhs, coo, ellr>,
                               steps<convert<lhs, csr>, convert<lhs, ellr>>>);
  static_assert(std::is_same_v<conversion_path_t<lhs, gcoo, coo>,
                               steps<convert<lhs, csr>, convert<lhs, coo>>>);
}

}  // namespace

TEST_CASE("conversion graph: tiled's paths in both spaces") {
  tiled_conversion_paths<cpu>();
  tiled_conversion_paths<gpu>();
  // The steps of a path through tiled are conversions spade::convert implements (compiles).
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d a = csr_of(9, 6, random_entries(9, 6, 0.4, seed));
  const auto t = spade::convert<spade::tiled>(spade::convert<spade::coo>(a));
  const auto back =
      spade::convert<spade::tiled>(spade::convert<spade::dense<double, cpu, col_major>>(
          spade::convert<spade::dense>(spade::convert<spade::ellr>(t))));
  // The dense hops drop explicit zeros: compare with a's nonzeros.
  check_same(spade::convert<spade::csr>(back),
             spade::convert<spade::csr>(spade::convert<spade::dense>(a)));
}

// ---- products with a tiled operand ------------------------------------------------------------

namespace {

template <class... Cs>
using candidates = spade::plan::candidates<Cs...>;
template <class K, class... Steps>
using candidate = spade::plan::candidate<K, spade::plan::steps<Steps...>>;
template <class E, class Expected>
constexpr bool plans = std::is_same_v<typename spade::plan_of<E>::candidates, Expected>;

}  // namespace

TEST_CASE("planner cells with a tiled operand") {
  using spade::plan::convert;
  using spade::plan::lhs;
  using spade::plan::rhs;
  namespace kernels = spade::kernels;
  const tiled_d t;
  const csr_d c;
  const spade::vector<double, cpu> x;
  const spade::dense<double, cpu> d;
  // On the cpu Eigen takes csr: a tiled operand is converted back, once.
  using eigen = kernels::eigen_product;
  static_assert(plans<decltype(t * x), candidates<candidate<eigen, convert<lhs, csr_d>>>>);
  static_assert(plans<decltype(t * d), candidates<candidate<eigen, convert<lhs, csr_d>>>>);
  static_assert(plans<decltype(d * t), candidates<candidate<eigen, convert<rhs, csr_d>>>>);
  static_assert(plans<decltype(t * c), candidates<candidate<eigen, convert<lhs, csr_d>>>>);
  static_assert(plans<decltype(t * t),
                      candidates<candidate<eigen, convert<lhs, csr_d>, convert<rhs, csr_d>>>>);
  // On the gpu two tiled operands go to the tiled SpGEMM as they are.
  using tiled_g = spade::tiled<double, gpu>;
  using csr_g = spade::csr<double, gpu>;
  const tiled_g tg;
  static_assert(
      plans<decltype(tg * tg),
            candidates<
                candidate<kernels::tiled_spgemm>,
                candidate<kernels::hash_spgemm, convert<lhs, csr_g>, convert<rhs, csr_g>>,
                candidate<kernels::tiled_spgemm_fp16>,
                candidate<kernels::cusparse_spgemm, convert<lhs, csr_g>, convert<rhs, csr_g>>>>);
}

TEST_CASE("cpu products with a tiled operand equal those of its csr") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d a = csr_of(23, 19, random_entries(23, 19, 0.2, seed));
  const csr_d b = csr_of(19, 21, random_entries(19, 21, 0.2, seed + 1));
  const tiled_d ta = spade::convert<spade::tiled>(a);
  const tiled_d tb = spade::convert<spade::tiled>(b);
  const auto x = spade::random_vector<double>(19, seed + 2);
  const auto d = spade::random_dense<double, row_major>(19, 4, seed + 3);
  // The same Eigen kernel runs on the same csr, so the results are bitwise equal.
  const spade::vector<double, cpu> y = ta * x, want_y = a * x;
  CHECK(y.values() == want_y.values());
  const spade::dense<double, cpu> p = ta * d, want_p = a * d;
  CHECK(p.values() == want_p.values());
  const csr_d s = ta * tb, want_s = a * b;
  check_same(s, want_s);
  // The csr made for the first product is cached on the operand.
  CHECK(hops([&] { const spade::vector<double, cpu> again = ta * x; }) == 0);
}
