// csr, coo, dense and vector on the cpu: invariant checks, value semantics, conversions.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <spade/spade.hpp>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

using spade::cpu;
using spade::index_t;

using spade::testing::error_text;

namespace {

using spade::testing::fresh_seed;

/// The matrix as an ordered map (i, j) → summed value: an independent reference built
/// without any of the conversions under test.
template <class T>
std::map<std::pair<index_t, index_t>, T> entries_of_triplets(const std::vector<index_t>& r,
                                                             const std::vector<index_t>& c,
                                                             const std::vector<T>& v) {
  std::map<std::pair<index_t, index_t>, T> m;
  for (std::size_t k = 0; k < r.size(); ++k)
    m[{r[k], c[k]}] += v[k];
  return m;
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
void check_csr_invariants(const spade::csr<T, cpu>& a) {
  // The checked constructor re-validates everything the unchecked path promised.
  std::vector<index_t> row_ptr = a.row_ptr();
  if (row_ptr.empty()) row_ptr.assign(static_cast<std::size_t>(a.rows()) + 1, 0);
  CHECK_NOTHROW(spade::csr<T, cpu>(a.rows(), a.cols(), row_ptr, a.col_idx(), a.values()));
}

}  // namespace

TEST_CASE("csr constructor names the first broken invariant") {
  using M = spade::csr<double, cpu>;
  CHECK(error_text([] {
          M(2, 3, {0, 1}, {0}, {1.0});
        }).find("row_ptr has 2 entries") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {1, 1, 1}, {0}, {1.0});
        }).find("row_ptr[0] = 1") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {0, 2, 1}, {0}, {1.0});
        }).find("row_ptr[2] = 1 is less than") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {0, 1, 2}, {0}, {1.0});
        }).find("but there are 1 entries") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {0, 1, 2}, {0, 3}, {1.0, 2.0});
        }).find("col_idx[1] = 3 (row 1) is out of range [0, 3)") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {0, 1, 2}, {0, -1}, {1.0, 2.0});
        }).find("col_idx[1] = -1") != std::string::npos);
  CHECK(error_text([] {
          M(1, 3, {0, 2}, {2, 1}, {1.0, 2.0});
        }).find("columns out of order") != std::string::npos);
  CHECK(error_text([] {
          M(1, 3, {0, 2}, {1, 1}, {1.0, 2.0});
        }).find("duplicate column") != std::string::npos);
  CHECK(error_text([] {
          M(1, 3, {0, 2}, {0, 1}, {1.0});
        }).find("values has 1") != std::string::npos);
  CHECK(error_text([] { M(-1, 3); }).find("negative size") != std::string::npos);
  CHECK(error_text([] {
          M(2, 3, {0, 1, 3}, {0, 1}, {1.0, 2.0});
        }).find("row_ptr[2] = 3") != std::string::npos);
}

TEST_CASE("csr column_order::sort sorts rows and sums repeated columns in stored order") {
  spade::csr<double, cpu> a(2, 4, {0, 4, 5}, {3, 1, 3, 0, 2}, {1.0, 2.0, 10.0, 4.0, 5.0},
                            spade::column_order::sort);
  CHECK(a.nnz() == 4);
  CHECK(a.row_ptr() == std::vector<index_t>{0, 3, 4});
  CHECK(a.col_idx() == std::vector<index_t>{0, 1, 3, 2});
  CHECK(a.values() == std::vector<double>{4.0, 2.0, 11.0, 5.0});
}

TEST_CASE("coo constructor checks lengths and ranges") {
  using M = spade::coo<float, cpu>;
  CHECK(error_text([] {
          M(2, 2, {0, 1}, {0}, {1.f, 2.f});
        }).find("must match") != std::string::npos);
  CHECK(error_text([] {
          M(2, 2, {0, 2}, {0, 0}, {1.f, 2.f});
        }).find("row_idx[1] = 2 is out of range [0, 2)") != std::string::npos);
  CHECK(error_text([] {
          M(2, 2, {0, 1}, {0, 5}, {1.f, 2.f});
        }).find("col_idx[1] = 5") != std::string::npos);
}

TEST_CASE("dense and vector check their sizes") {
  CHECK(error_text([] {
          spade::dense<double, cpu>(2, 2, std::vector<double>(3));
        }).find("needs 4 values, got 3") != std::string::npos);
  CHECK(error_text([] { spade::dense<double, cpu>(-2, 2); }).find("negative rows") !=
        std::string::npos);
  CHECK(error_text([] { spade::vector<double, cpu>(-1); }).find("negative size") !=
        std::string::npos);
}

TEST_CASE_TEMPLATE("cpu types are values: deep copies, cheap moves, empty defaults", T, float,
                   double) {
  spade::csr<T, cpu> a(2, 2, {0, 1, 2}, {1, 0}, {T(1), T(2)});
  spade::csr<T, cpu> copy = a;
  copy.values()[0] = T(7);
  CHECK(a.values()[0] == T(1));
  spade::csr<T, cpu> moved = std::move(copy);
  CHECK(moved.values()[0] == T(7));
  spade::csr<T, cpu> empty;
  CHECK(empty.rows() == 0);
  CHECK(empty.nnz() == 0);
  spade::dense<T, cpu, spade::col_major> d(2, 3);
  d(1, 2) = T(5);
  CHECK(d.values()[2 * 2 + 1] == T(5));
  CHECK(d.leading_dimension() == 2);
  auto d2 = d;
  d2(1, 2) = T(6);
  CHECK(d(1, 2) == T(5));
  spade::vector<T, cpu> v(3);
  v[2] = T(4);
  CHECK(v.size() == 3);
  CHECK(v(2) == T(4));
}

TEST_CASE_TEMPLATE("coo → csr sorts and sums repeated positions in stored order", T, float,
                   double) {
  const std::vector<index_t> r{2, 0, 2, 0, 2, 1};
  const std::vector<index_t> c{1, 3, 1, 0, 0, 2};
  const std::vector<T> v{T(0.5), T(1), T(0.25), T(2), T(3), T(-1)};
  spade::coo<T, cpu> a(3, 4, r, c, v);
  auto b = spade::convert<spade::csr>(a);
  CHECK(b.row_ptr() == std::vector<index_t>{0, 2, 3, 5});
  CHECK(b.col_idx() == std::vector<index_t>{0, 3, 2, 0, 1});
  CHECK(b.values() == std::vector<T>{T(2), T(1), T(-1), T(3), T(0.75)});
  check_csr_invariants(b);
}

TEST_CASE_TEMPLATE("conversions agree with an independent triplet reference", T, float, double) {
  // Shapes from the brief's edge list: empty, 1x1, warp +-1, empty rows, one dense row, tall.
  const std::vector<std::pair<index_t, index_t>> shapes{{0, 0},   {0, 5},   {5, 0},   {1, 1},
                                                        {31, 33}, {33, 31}, {32, 32}, {1000003, 3}};
  for (auto [rows, cols] : shapes) {
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      if (static_cast<double>(rows) * cols > 4e6 && density > 0.05) continue;
      const std::uint64_t seed = fresh_seed();
      CAPTURE(rows);
      CAPTURE(cols);
      CAPTURE(density);
      CAPTURE(seed);
      const auto a = spade::random_sparse<T>(rows, cols, density, seed);
      check_csr_invariants(a);
      const auto reference = entries_of(a);

      const auto as_coo = spade::convert<spade::coo>(a);
      CHECK(entries_of_triplets(as_coo.row_idx(), as_coo.col_idx(), as_coo.values()) == reference);
      const auto back = spade::convert<spade::csr>(as_coo);
      CHECK(back.row_ptr() == a.row_ptr());
      CHECK(back.col_idx() == a.col_idx());
      CHECK(back.values() == a.values());

      const auto row_dense = spade::convert<spade::dense>(a);
      const auto col_dense = spade::convert<spade::dense<T, cpu, spade::col_major>>(a);
      bool dense_matches = true;
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < cols; ++j) {
          auto it = reference.find({i, j});
          const T expected = it == reference.end() ? T(0) : it->second;
          dense_matches =
              dense_matches && row_dense(i, j) == expected && col_dense(i, j) == expected;
        }
      CHECK(dense_matches);
      for (const auto& sparse :
           {spade::convert<spade::csr>(row_dense), spade::convert<spade::csr>(col_dense)}) {
        CHECK(sparse.row_ptr() == a.row_ptr());
        CHECK(sparse.col_idx() == a.col_idx());
        CHECK(sparse.values() == a.values());
      }
      const auto relaid = spade::convert<spade::dense<T, cpu, spade::row_major>>(col_dense);
      CHECK(relaid.values() == row_dense.values());
      const auto dense_coo = spade::convert<spade::coo>(row_dense);
      CHECK(entries_of_triplets(dense_coo.row_idx(), dense_coo.col_idx(), dense_coo.values()) ==
            reference);
    }
  }
}

TEST_CASE("dense → csr keeps NaN and drops negative zero") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  spade::dense<double, cpu> d(1, 3, std::vector<double>{-0.0, nan, 2.0});
  auto a = spade::convert<spade::csr>(d);
  REQUIRE(a.nnz() == 2);
  CHECK(a.col_idx() == std::vector<index_t>{1, 2});
  CHECK(std::isnan(a.values()[0]));
}

TEST_CASE_TEMPLATE("one dense row among empty rows survives every conversion", T, float, double) {
  const index_t rows = 100, cols = 5000;
  std::vector<index_t> row_ptr(rows + 1, 0);
  for (index_t i = 51; i <= rows; ++i)
    row_ptr[i] = cols;
  std::vector<index_t> col_idx(cols);
  std::vector<T> values(cols);
  for (index_t j = 0; j < cols; ++j) {
    col_idx[j] = j;
    values[j] = T(j + 1);
  }
  spade::csr<T, cpu> a(rows, cols, row_ptr, col_idx, values);
  const auto back = spade::convert<spade::csr>(spade::convert<spade::coo>(a));
  CHECK(back.row_ptr() == a.row_ptr());
  const auto from_dense = spade::convert<spade::csr>(spade::convert<spade::dense>(a));
  CHECK(from_dense.values() == a.values());
}

TEST_CASE("gpu types without a device: empty objects exist, data needs a device") {
  std::string reason;
  if (spade::device_available(&reason)) {
    MESSAGE("a CUDA device is present; the no-device behaviour is not exercised here");
    return;
  }
  spade::csr<double, spade::gpu> empty;
  CHECK(empty.nnz() == 0);
  spade::csr<double, cpu> a(1, 1, {0, 1}, {0}, {1.0});
  try {
    auto g = spade::to_gpu(a);
    FAIL("to_gpu without a device did not throw");
  } catch (const spade::no_device& e) {
    CHECK(std::string(e.what()).find("no usable CUDA device") != std::string::npos);
  }
  using gpu_dense = spade::dense<float, spade::gpu>;
  CHECK_THROWS_AS(gpu_dense(4, 4), spade::no_device);
}

TEST_CASE("csr ↔ coo ↔ dense round trips on every real matrix") {
  std::size_t checked = 0;
  for (const auto& path : spade::testing::real_matrices()) {
    CAPTURE(path.string());
    const auto a = spade::read_matrix_market<double>(path);
    check_csr_invariants(a);
    const auto back = spade::convert<spade::csr>(spade::convert<spade::coo>(a));
    CHECK(back.row_ptr() == a.row_ptr());
    CHECK(back.col_idx() == a.col_idx());
    CHECK(back.values() == a.values());
    // Dense only where it stays small; explicit zeros in the file legitimately vanish there.
    if (static_cast<double>(a.rows()) * a.cols() <= 3e7) {
      const auto through_dense = spade::convert<spade::csr>(
          spade::convert<spade::dense<double, cpu, spade::col_major>>(a));
      auto expected = entries_of(a);
      std::erase_if(expected, [](const auto& kv) { return kv.second == 0.0; });
      CHECK(entries_of(through_dense) == expected);
    }
    ++checked;
  }
  MESSAGE("real matrices checked: " << checked);
  CHECK(checked > 0);
}

// Facts about a pair of operands (the planner's tile census) are cached on one of them, keyed by
// the other's cache identity: it must change whenever the other's values may have changed.
TEST_CASE("a matrix's cache identity changes on value writes, copies and assignments") {
  struct pair_fact {};
  spade::csr<double, cpu> a = spade::random_sparse<double>(20, 20, 0.2, 1);
  spade::csr<double, cpu> b = spade::random_sparse<double>(20, 20, 0.2, 2);
  int made = 0;
  auto fact = [&] {
    return a.cache().get_or_make_for<pair_fact, int>(b.cache().identity(), [&] { return ++made; });
  };
  CHECK(fact() == 1);
  CHECK(fact() == 1);  // cached
  const std::uint64_t before = b.cache().identity();
  (void)static_cast<const spade::csr<double, cpu>&>(b).values();  // a read changes nothing
  CHECK(b.cache().identity() == before);
  b.values()[0] = 7.0;  // a writable access may change values
  CHECK(b.cache().identity() != before);
  CHECK(fact() == 2);
  const spade::csr<double, cpu> copy = b;
  CHECK(copy.cache().identity() != b.cache().identity());
  const std::uint64_t moved_from = b.cache().identity();
  spade::csr<double, cpu> moved = std::move(b);
  CHECK(moved.cache().identity() == moved_from);  // the same contents, moved
  CHECK(b.cache().identity() != moved_from);
  // A write to the owner forgets its pair facts too.
  a.values()[0] = 3.0;
  CHECK(a.cache().size() == 0);
  // At most pair_entries_per_key partners per fact.
  std::vector<spade::csr<double, cpu>> partners(12, spade::csr<double, cpu>(20, 20));
  for (const auto& p : partners)
    a.cache().get_or_make_for<pair_fact, int>(p.cache().identity(), [] { return 0; });
  CHECK(a.cache().size() == spade::conversion_cache::pair_entries_per_key);
}

namespace {

// Every (From, To) of the conversion graph on the host: convert<To>(from) counts one hop per
// step of the planner's path (the hops and the plan come from one graph, but convert<> walks it
// itself), and the entries survive. A same-type gcoo or ellr is a copy: no hop.
template <class T, int From, int To>
void check_graph_pair(const spade::csr<T, cpu>& a) {
  using spade::conversion_graph::node_t;
  using from_t = node_t<T, cpu, From>;
  using to_t = node_t<T, cpu, To>;
  CAPTURE(From);
  CAPTURE(To);
  const from_t source = spade::convert<from_t>(a);
  const std::size_t before = spade::conversion_counter().load();
  const to_t target = spade::convert<to_t>(source);
  const std::size_t hops = spade::conversion_counter().load() - before;
  constexpr int planned = spade::plan::conversion_path_t<spade::plan::lhs, from_t, to_t>::size;
  CHECK(hops == static_cast<std::size_t>(planned));
  const auto back = spade::convert<spade::csr<T, cpu>>(target);
  CHECK(entries_of(back) == entries_of(a));
}

template <class T, int From, int... To>
void check_graph_row(const spade::csr<T, cpu>& a, std::integer_sequence<int, To...>) {
  (check_graph_pair<T, From, To>(a), ...);
}

template <class T, int... From>
void check_graph(const spade::csr<T, cpu>& a, std::integer_sequence<int, From...> nodes) {
  (check_graph_row<T, From>(a, nodes), ...);
}

}  // namespace

TEST_CASE_TEMPLATE("convert<> walks the planner's conversion graph, one counted hop per step", T,
                   float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  // No explicit zeros: dense sources drop them, so every format holds the same entries.
  const auto a = spade::random_sparse<T>(37, 29, 0.2, seed);
  check_graph(a, std::make_integer_sequence<int, spade::conversion_graph::node_count>{});
  // The host reads col-major dense into gcoo directly; the device relays it out first.
  using dcol = spade::dense<T, cpu, spade::col_major>;
  static_assert(spade::plan::conversion_path_t<spade::plan::lhs, dcol, spade::gcoo<T, cpu>>::size ==
                1);
  static_assert(spade::plan::conversion_path_t<spade::plan::lhs,
                                               spade::dense<T, spade::gpu, spade::col_major>,
                                               spade::gcoo<T, spade::gpu>>::size == 2);
}
