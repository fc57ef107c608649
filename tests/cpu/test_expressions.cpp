// Every expression kind on cpu types against an independent double-precision reference
// (plain loops over the stored arrays, then Eigen dense products in double): products of every
// pairing, transposes, sums, scaling, nesting, dot/norm, result types, assignment into existing
// storage, aliasing, fused forms, NaN-poisoned outputs, dimension_mismatch, real matrices.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <spade/spade.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::index_t;
using spade::row_major;

using spade::testing::contains;

namespace {

using ref_t = Eigen::MatrixXd;

using spade::testing::fresh_seed;

// ---- the reference: double copies read straight from the stored arrays ----------------------

template <class T, class L>
ref_t ref(const spade::dense<T, cpu, L>& a) {
  ref_t r(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t j = 0; j < a.cols(); ++j)
      r(i, j) = a(i, j);
  return r;
}
template <class T>
ref_t ref(const spade::csr<T, cpu>& a) {
  ref_t r = ref_t::Zero(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      r(i, a.col_idx()[k]) += a.values()[k];
  return r;
}
template <class T>
ref_t ref(const spade::coo<T, cpu>& a) {
  ref_t r = ref_t::Zero(a.rows(), a.cols());
  for (index_t k = 0; k < a.nnz(); ++k)
    r(a.row_idx()[k], a.col_idx()[k]) += a.values()[k];  // repeats sum
  return r;
}
template <class T>
ref_t ref(const spade::vector<T, cpu>& v) {
  ref_t r(v.size(), 1);
  for (index_t i = 0; i < v.size(); ++i)
    r(i, 0) = v[i];
  return r;
}

ref_t abs(const ref_t& a) {
  return a.cwiseAbs();
}
double dot(const ref_t& a, const ref_t& b) {
  return a.cwiseProduct(b).sum();
}

bool same(const ref_t& a, const ref_t& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

/// ‖got − want‖ ≤ 16·k·ε·‖magnitude‖ + tiny (Frobenius), and nothing is NaN or infinite.
template <class T>
void check_close(const ref_t& got, const ref_t& want, const ref_t& magnitude, index_t k) {
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == want.cols());
  const double eps = std::numeric_limits<T>::epsilon();
  const double error = (got - want).norm();
  const double bound =
      16.0 * static_cast<double>(std::max<index_t>(k, 1)) * eps * magnitude.norm() +
      std::numeric_limits<T>::min();
  CAPTURE(error);
  CAPTURE(bound);
  CHECK(got.allFinite());
  CHECK(error <= bound);
}

template <class M>
const void* storage_of(const M& m) {
  return m.values().data();
}

/// A dense matrix or vector of the given shape, every element NaN.
template <class R>
R nan_filled(index_t rows, index_t cols) {
  R r = [&] {
    if constexpr (spade::is_vector_v<R>)
      return R(rows);
    else
      return R(rows, cols);
  }();
  for (auto& v : r.values())
    v = std::numeric_limits<typename R::value_type>::quiet_NaN();
  return r;
}

/// Evaluates `e` three ways — spade::eval, construction, and assignment over a NaN-filled
/// destination of the right shape (whose storage must be reused: the expression does not read
/// it) — checks they agree bit for bit, and returns the result as a reference matrix.
// Out of line, so the CHECKs expand once rather than once per expression type.
void check_same_result(const ref_t& got, const ref_t& natural) {
  CHECK(same(got, natural));
}
void check_storage_reused(const void* after, const void* before) {
  CHECK(after == before);
}

template <class E>
ref_t evaluated(const E& e) {
  const auto natural = spade::eval(e);
  using R = std::remove_const_t<decltype(natural)>;
  const ref_t result = ref(natural);
  const R constructed = e;
  check_same_result(ref(constructed), result);
  if constexpr (!spade::sparse_matrix<R>) {
    R target = nan_filled<R>(e.rows(), e.cols());
    const void* before = storage_of(target);
    target = e;
    check_storage_reused(storage_of(target), before);
    check_same_result(ref(target), result);
  }
  return result;
}

template <class E>
void check_expr(const E& e, const ref_t& want, const ref_t& magnitude, index_t k) {
  check_close<typename E::value_type>(evaluated(e), want, magnitude, k);
}

/// e must be op(A)·op(B) where a, b are the references of op(A), op(B).
template <class E>
void check_product(const E& e, const ref_t& a, const ref_t& b) {
  check_expr(e, a * b, abs(a) * abs(b), a.cols());
}

/// The csr result stores exactly the positions where `magnitude` (|A|·|B| or |A| + |B| of
/// operands without stored zeros) is nonzero, each row sorted by column.
template <class T>
void check_pattern(const spade::csr<T, cpu>& c, const ref_t& magnitude) {
  REQUIRE(c.rows() == magnitude.rows());
  REQUIRE(c.cols() == magnitude.cols());
  index_t stored = 0, expected = 0, misplaced = 0, unsorted = 0;
  for (index_t i = 0; i < c.rows(); ++i)
    for (index_t k = c.row_ptr()[i]; k < c.row_ptr()[i + 1]; ++k) {
      ++stored;
      if (!(magnitude(i, c.col_idx()[k]) > 0)) ++misplaced;
      if (k > c.row_ptr()[i] && c.col_idx()[k] <= c.col_idx()[k - 1]) ++unsorted;
    }
  for (Eigen::Index i = 0; i < magnitude.size(); ++i)
    expected += magnitude.data()[i] > 0;
  CHECK(stored == expected);
  CHECK(misplaced == 0);
  CHECK(unsorted == 0);
}

// ---- inputs -------------------------------------------------------------------------------

/// The same matrix as a coo with some entries split into two repeats (halves, so the sum is
/// exact) and all entries shuffled.
template <class T>
spade::coo<T, cpu> messy_coo(const spade::csr<T, cpu>& a, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  struct entry {
    index_t row, col;
    T value;
  };
  std::vector<entry> entries;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const T v = a.values()[k];
      if (rng() % 3 == 0) {
        entries.push_back({i, a.col_idx()[k], v / 2});
        entries.push_back({i, a.col_idx()[k], v - v / 2});
      } else {
        entries.push_back({i, a.col_idx()[k], v});
      }
    }
  std::shuffle(entries.begin(), entries.end(), rng);
  std::vector<index_t> rows, cols;
  std::vector<T> values;
  for (const auto& x : entries) {
    rows.push_back(x.row);
    cols.push_back(x.col);
    values.push_back(x.value);
  }
  return spade::coo<T, cpu>(a.rows(), a.cols(), std::move(rows), std::move(cols),
                            std::move(values));
}

/// rows × cols with row `full` completely filled and every other row empty.
template <class T>
spade::csr<T, cpu> one_dense_row(index_t rows, index_t cols, index_t full, std::uint64_t seed) {
  const auto row = spade::random_sparse<T>(1, cols, 1.0, seed);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  for (index_t i = full + 1; i <= rows; ++i)
    row_ptr[static_cast<std::size_t>(i)] = cols;
  return spade::csr<T, cpu>(rows, cols, std::move(row_ptr), row.col_idx(), row.values());
}

/// Sparse patterns of one shape: sparse with empty rows, fairly full, no entries, one dense row.
template <class T>
std::vector<spade::csr<T, cpu>> sparse_cases(index_t rows, index_t cols, std::uint64_t seed) {
  std::vector<spade::csr<T, cpu>> cases;
  cases.push_back(spade::random_sparse<T>(rows, cols, 0.1, seed));
  cases.push_back(spade::random_sparse<T>(rows, cols, 0.6, seed + 1));
  cases.push_back(spade::csr<T, cpu>(rows, cols));
  if (rows > 0 && cols > 0) cases.push_back(one_dense_row<T>(rows, cols, rows / 2, seed + 2));
  return cases;
}

struct shape {
  index_t m, k, n;  // op(A) is m × k, op(B) is k × n
};
// 0, 1, warp − 1, warp, warp + 1, empty inner dimension, empty results.
const std::vector<shape> edge_shapes = {{0, 0, 0},    {1, 1, 1},  {31, 33, 32}, {33, 31, 32},
                                        {32, 32, 32}, {4, 0, 3},  {0, 5, 2},    {3, 5, 0},
                                        {1, 33, 31},  {33, 31, 1}};

template <class F>
void for_each_layout(F&& f) {
  f(row_major{});
  f(col_major{});
}

template <class F>
std::string mismatch_message(F&& f) {
  try {
    f();
  } catch (const spade::dimension_mismatch& e) {
    return e.what();
  }
  return "(no dimension_mismatch thrown)";
}

}  // namespace

// ---- products -------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("dense x dense: all four layout pairs, transposes, edge shapes", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    for_each_layout([&](auto la) {
      for_each_layout([&](auto lb) {
        using LA = decltype(la);
        using LB = decltype(lb);
        CAPTURE(LA::name);
        CAPTURE(LB::name);
        const auto a = spade::random_dense<T, LA>(s.m, s.k, seed);
        const auto b = spade::random_dense<T, LB>(s.k, s.n, seed + 1);
        const auto at = spade::random_dense<T, LA>(s.k, s.m, seed + 2);
        const auto bt = spade::random_dense<T, LB>(s.n, s.k, seed + 3);
        check_product(a * b, ref(a), ref(b));
        check_product(spade::transpose(at) * b, ref(at).transpose(), ref(b));
        check_product(a * spade::transpose(bt), ref(a), ref(bt).transpose());
        check_product(spade::transpose(at) * spade::transpose(bt), ref(at).transpose(),
                      ref(bt).transpose());
        const ref_t ab = ref(a) * ref(b);
        check_expr(spade::transpose(a * b), ab.transpose(), (abs(ref(a)) * abs(ref(b))).transpose(),
                   s.k);
      });
    });
  }
}

TEST_CASE_TEMPLATE("sparse (csr, coo) x dense: both layouts, patterns, transposes", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const auto cases = sparse_cases<T>(s.m, s.k, seed);
    const auto transposed_cases = sparse_cases<T>(s.k, s.m, seed + 10);
    for (std::size_t c = 0; c < cases.size(); ++c) {
      CAPTURE(c);
      const auto& a = cases[c];
      const auto a_coo = messy_coo(a, seed + 20);
      const auto& at = transposed_cases[std::min(c, transposed_cases.size() - 1)];
      const auto at_coo = messy_coo(at, seed + 21);
      for_each_layout([&](auto lb) {
        using LB = decltype(lb);
        const auto b = spade::random_dense<T, LB>(s.k, s.n, seed + 30);
        const auto bt = spade::random_dense<T, LB>(s.n, s.k, seed + 31);
        check_product(a * b, ref(a), ref(b));
        check_product(a_coo * b, ref(a_coo), ref(b));
        check_product(spade::transpose(at_coo) * b, ref(at_coo).transpose(), ref(b));
        check_product(a * spade::transpose(bt), ref(a), ref(bt).transpose());
        check_expr(spade::transpose(a_coo * b), (ref(a_coo) * ref(b)).transpose(),
                   (abs(ref(a_coo)) * abs(ref(b))).transpose(), s.k);
      });
    }
  }
}

TEST_CASE_TEMPLATE("dense x sparse (csr, coo): both layouts, patterns, transposes", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const auto cases = sparse_cases<T>(s.k, s.n, seed);
    for (std::size_t c = 0; c < cases.size(); ++c) {
      CAPTURE(c);
      const auto& b = cases[c];
      const auto b_coo = messy_coo(b, seed + 20);
      const auto bt = spade::random_sparse<T>(s.n, s.k, 0.3, seed + 21);
      for_each_layout([&](auto la) {
        using LA = decltype(la);
        const auto a = spade::random_dense<T, LA>(s.m, s.k, seed + 30);
        const auto at = spade::random_dense<T, LA>(s.k, s.m, seed + 31);
        check_product(a * b, ref(a), ref(b));
        check_product(a * b_coo, ref(a), ref(b_coo));
        check_product(spade::transpose(at) * b_coo, ref(at).transpose(), ref(b_coo));
        check_product(a * spade::transpose(bt), ref(a), ref(bt).transpose());
        check_expr(spade::transpose(a * b), (ref(a) * ref(b)).transpose(),
                   (abs(ref(a)) * abs(ref(b))).transpose(), s.k);
      });
    }
  }
}

TEST_CASE_TEMPLATE("sparse x vector and dense x vector, transposed matrices too", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(seed);
    const auto x = spade::random_vector<T>(s.k, seed);
    for (const auto& a : sparse_cases<T>(s.m, s.k, seed + 1)) {
      const auto a_coo = messy_coo(a, seed + 2);
      check_product(a * x, ref(a), ref(x));
      check_product(a_coo * x, ref(a_coo), ref(x));
    }
    const auto at = spade::random_sparse<T>(s.k, s.m, 0.3, seed + 3);
    check_product(spade::transpose(at) * x, ref(at).transpose(), ref(x));
    check_product(spade::transpose(messy_coo(at, seed + 4)) * x, ref(at).transpose(), ref(x));
    for_each_layout([&](auto la) {
      using LA = decltype(la);
      const auto d = spade::random_dense<T, LA>(s.m, s.k, seed + 5);
      const auto dt = spade::random_dense<T, LA>(s.k, s.m, seed + 6);
      check_product(d * x, ref(d), ref(x));
      check_product(spade::transpose(dt) * x, ref(dt).transpose(), ref(x));
    });
  }
}

TEST_CASE_TEMPLATE("sparse x sparse: csr result, pattern and values, transposes", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const auto lhs_cases = sparse_cases<T>(s.m, s.k, seed);
    const auto rhs_cases = sparse_cases<T>(s.k, s.n, seed + 10);
    for (std::size_t c = 0; c < lhs_cases.size(); ++c) {
      CAPTURE(c);
      const auto& a = lhs_cases[c];
      const auto& b = rhs_cases[std::min(c, rhs_cases.size() - 1)];
      const auto a_coo = messy_coo(a, seed + 20);
      const auto b_coo = messy_coo(b, seed + 21);
      const ref_t ra = ref(a), rb = ref(b), mag = abs(ra) * abs(rb);
      check_product(a * b, ra, rb);
      check_product(a * b_coo, ra, rb);
      check_product(a_coo * b, ra, rb);
      check_product(a_coo * b_coo, ra, rb);
      check_pattern(spade::eval(a * b), mag);
      check_pattern(spade::eval(a_coo * b_coo), mag);
      // Transposes on either side and of the product.
      const auto at = spade::random_sparse<T>(s.k, s.m, 0.3, seed + 30);
      const auto bt = spade::random_sparse<T>(s.n, s.k, 0.3, seed + 31);
      check_product(spade::transpose(at) * b, ref(at).transpose(), rb);
      check_product(a_coo * spade::transpose(bt), ra, ref(bt).transpose());
      check_pattern(spade::eval(spade::transpose(at) * spade::transpose(bt)),
                    abs(ref(at)).transpose() * abs(ref(bt)).transpose());
      check_expr(spade::transpose(a * b_coo), (ra * rb).transpose(), mag.transpose(), s.k);
      check_pattern(spade::eval(spade::transpose(a * b)), mag.transpose());
      // A coo destination takes the csr result through one conversion.
      const spade::coo<T, cpu> into_coo = a * b;
      CHECK(same(ref(into_coo), ref(spade::eval(a * b))));
    }
  }
}

TEST_CASE_TEMPLATE("transpose alone, of every matrix format and of expressions", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto dr = spade::random_dense<T, row_major>(5, 3, seed);
  const auto dc = spade::random_dense<T, col_major>(5, 3, seed + 1);
  const auto s = spade::random_sparse<T>(6, 4, 0.4, seed + 2);
  const auto c = messy_coo(s, seed + 3);
  const ref_t zero3 = ref_t::Zero(3, 5), zero4 = ref_t::Zero(4, 6);
  check_close<T>(evaluated(spade::transpose(dr)), ref(dr).transpose(), zero3, 1);
  check_close<T>(evaluated(spade::transpose(dc)), ref(dc).transpose(), zero3, 1);
  check_close<T>(evaluated(spade::transpose(s)), ref(s).transpose(), zero4, 1);
  check_close<T>(evaluated(spade::transpose(c)), ref(c).transpose(), zero4, 1);
  check_close<T>(evaluated(spade::transpose(spade::transpose(c))), ref(c), zero4.transpose(), 1);
  static_assert(std::is_same_v<decltype(spade::eval(spade::transpose(c))), spade::coo<T, cpu>>);
  static_assert(
      std::is_same_v<decltype(spade::eval(spade::transpose(dc))), spade::dense<T, cpu, col_major>>);
  check_expr(spade::transpose(dr + dc), (ref(dr) + ref(dc)).transpose(),
             (abs(ref(dr)) + abs(ref(dc))).transpose(), 1);
  check_expr(T(2) * spade::transpose(s - c), ref_t::Zero(4, 6), 4 * abs(ref(s)).transpose(), 1);
}

// ---- sums, scaling, nesting ---------------------------------------------------------------

TEST_CASE_TEMPLATE("sums and differences: dense (mixed layouts), sparse, vectors", T, float,
                   double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(seed);
    const auto dr = spade::random_dense<T, row_major>(s.m, s.k, seed);
    const auto dc = spade::random_dense<T, col_major>(s.m, s.k, seed + 1);
    const auto dt = spade::random_dense<T, col_major>(s.k, s.m, seed + 2);
    const ref_t r = ref(dr), c = ref(dc), t = ref(dt).transpose();
    check_expr(dr + dc, r + c, abs(r) + abs(c), 1);
    check_expr(dc + dr, c + r, abs(r) + abs(c), 1);
    check_expr(dr - dc, r - c, abs(r) + abs(c), 1);
    check_expr(dc - dc, ref_t::Zero(s.m, s.k), 2 * abs(c), 1);
    check_expr(dr + spade::transpose(dt), r + t, abs(r) + abs(t), 1);
    check_expr(spade::transpose(dt) - dr, t - r, abs(r) + abs(t), 1);
    for (const auto& a : sparse_cases<T>(s.m, s.k, seed + 3)) {
      const auto b = spade::random_sparse<T>(s.m, s.k, 0.3, seed + 4);
      const auto b_coo = messy_coo(b, seed + 5);
      const auto a_coo = messy_coo(a, seed + 6);
      const ref_t ra = ref(a), rb = ref(b);
      check_expr(a + b_coo, ra + rb, abs(ra) + abs(rb), 1);
      check_expr(a - b_coo, ra - rb, abs(ra) + abs(rb), 1);
      check_expr(b_coo - a, rb - ra, abs(ra) + abs(rb), 1);
      check_expr(a_coo + b_coo, ra + rb, abs(ra) + abs(rb), 1);
      check_pattern(spade::eval(a + b_coo), abs(ra) + abs(rb));
      const auto bt = spade::random_sparse<T>(s.k, s.m, 0.3, seed + 7);
      check_expr(a + spade::transpose(bt), ra + ref(bt).transpose(),
                 abs(ra) + abs(ref(bt)).transpose(), 1);
    }
    const auto x = spade::random_vector<T>(s.m, seed + 8);
    const auto y = spade::random_vector<T>(s.m, seed + 9);
    check_expr(x + y, ref(x) + ref(y), abs(ref(x)) + abs(ref(y)), 1);
    check_expr(x - y, ref(x) - ref(y), abs(ref(x)) + abs(ref(y)), 1);
  }
}

TEST_CASE_TEMPLATE("scalar scaling on either side, nested, and unary minus", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto d = spade::random_dense<T, col_major>(7, 5, seed);
  const auto b = spade::random_dense<T, row_major>(5, 4, seed + 1);
  const auto s = spade::random_sparse<T>(7, 5, 0.3, seed + 2);
  const auto c = messy_coo(s, seed + 3);
  const auto x = spade::random_vector<T>(5, seed + 4);
  const ref_t rd = ref(d), rb = ref(b), rs = ref(s), rx = ref(x);
  check_expr(T(2) * d, 2 * rd, 2 * abs(rd), 1);
  check_expr(d * T(2), 2 * rd, 2 * abs(rd), 1);
  check_expr(T(2) * (T(3) * d), 6 * rd, 6 * abs(rd), 1);
  check_expr(-d, -rd, abs(rd), 1);
  check_expr(-(-d), rd, abs(rd), 1);
  check_expr(T(-0.5) * s, -0.5 * rs, 0.5 * abs(rs), 1);
  check_expr(c * T(3), 3 * rs, 3 * abs(rs), 1);
  check_expr(T(2) * (T(3) * c), 6 * rs, 6 * abs(rs), 1);
  check_expr(-c, -rs, abs(rs), 1);
  check_expr(T(2) * x, 2 * rx, 2 * abs(rx), 1);
  check_expr(-x, -rx, abs(rx), 1);
  check_expr(T(2) * (d * b), 2 * rd * rb, 2 * abs(rd) * abs(rb), 5);
  check_expr((s * b) * T(2), 2 * rs * rb, 2 * abs(rs) * abs(rb), 5);
  check_expr(T(2) * (T(3) * (c * b)), 6 * rs * rb, 6 * abs(rs) * abs(rb), 5);
  check_expr((T(2) * c) * (T(3) * b), 6 * rs * rb, 6 * abs(rs) * abs(rb), 5);
  check_expr(-(d * x), -(rd * rx), abs(rd) * abs(rx), 5);
  check_expr(-(T(2) * s) * x, -2 * rs * rx, 2 * abs(rs) * abs(rx), 5);
  check_expr(T(2) * d - T(3) * d * T(0) + d, 3 * rd, 3 * abs(rd), 5);
  // Scaling sparse by zero keeps the pattern with zero values.
  const auto zero = spade::eval(T(0) * s);
  CHECK(zero.nnz() == s.nnz());
  CHECK(same(ref(zero), ref_t::Zero(7, 5)));
}

TEST_CASE_TEMPLATE("nested products A*(B*W) and (A*B)*W over every operand kind", T, float,
                   double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const index_t m = 17, k = 33, l = 31, n = 5;
  const auto a = spade::random_sparse<T>(m, k, 0.2, seed);
  const auto a_coo = messy_coo(a, seed + 1);
  const auto ad = spade::random_dense<T, col_major>(m, k, seed + 2);
  const auto b = spade::random_sparse<T>(k, l, 0.2, seed + 3);
  const auto bd = spade::random_dense<T, row_major>(k, l, seed + 4);
  const auto w = spade::random_dense<T, row_major>(l, n, seed + 5);
  const auto x = spade::random_vector<T>(l, seed + 6);
  const ref_t ra = ref(a), rad = ref(ad), rb = ref(b), rbd = ref(bd), rw = ref(w), rx = ref(x);
  auto check3 = [&](const auto& e, const ref_t& p, const ref_t& q, const ref_t& r) {
    check_expr(e, p * q * r, abs(p) * abs(q) * abs(r), k + l);
  };
  check3(a * (b * w), ra, rb, rw);
  check3((a * b) * w, ra, rb, rw);
  check3(a_coo * (bd * w), ra, rbd, rw);
  check3((a_coo * bd) * w, ra, rbd, rw);
  check3(ad * (b * w), rad, rb, rw);
  check3((ad * b) * w, rad, rb, rw);
  check3(ad * (bd * w), rad, rbd, rw);
  check3(a * (b * x), ra, rb, rx);
  check3((ad * bd) * x, rad, rbd, rx);
  check3(a * (b * spade::transpose(spade::transpose(w))), ra, rb, rw);
  check3(spade::transpose(spade::transpose(b) * spade::transpose(a)) * w, ra, rb, rw);
  check3((a * b) * (T(2) * w), ra, rb, 2 * rw);
  check3(a_coo * (b * x) + T(0) * (ad * (bd * x)), ra, rb, rx);
}

TEST_CASE_TEMPLATE("dot and norm, of vectors and of expressions", T, float, double) {
  for (const index_t n : {0, 1, 31, 32, 33, 1000}) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(n);
    CAPTURE(seed);
    const auto x = spade::random_vector<T>(n, seed);
    const auto y = spade::random_vector<T>(n, seed + 1);
    const auto a = spade::random_sparse<T>(n, n, 0.1, seed + 2);
    const ref_t rx = ref(x), ry = ref(y), rax = ref(a) * rx;
    const double eps = std::numeric_limits<T>::epsilon();
    const double tiny = std::numeric_limits<T>::min();
    auto close = [&](double got, double want, double magnitude, double terms) {
      CAPTURE(got);
      CAPTURE(want);
      CHECK(std::abs(got - want) <= 16.0 * std::max(terms, 1.0) * eps * magnitude + tiny);
    };
    static_assert(std::is_same_v<decltype(spade::dot(x, y)), T>);
    static_assert(std::is_same_v<decltype(spade::norm(x)), T>);
    const double xy = dot(abs(rx), abs(ry));
    close(spade::dot(x, y), dot(rx, ry), xy, n);
    close(spade::dot(y, x), dot(rx, ry), xy, n);
    close(spade::dot(T(2) * x, -y), -2 * dot(rx, ry), 2 * xy, n);
    close(spade::dot(a * x, y), dot(rax, ry), dot(abs(ref(a)) * abs(rx), abs(ry)), 2 * n);
    close(spade::dot(x, x + y), dot(rx, rx + ry), dot(abs(rx), abs(rx) + abs(ry)), n);
    close(spade::norm(x), rx.norm(), rx.norm(), n);
    close(spade::norm(T(-3) * x), 3 * rx.norm(), 3 * rx.norm(), n);
    close(spade::norm(a * x), rax.norm(), (abs(ref(a)) * abs(rx)).norm(), 2 * n);
    close(spade::norm(x - y), (rx - ry).norm(), (abs(rx) + abs(ry)).norm(), n);
  }
  const spade::vector<T, cpu> u(13), v(24);
  const std::string message = mismatch_message([&] { (void)spade::dot(u, v); });
  CAPTURE(message);
  CHECK(contains(message, "13"));
  CHECK(contains(message, "24"));
}

// ---- result types, storage, aliasing, fused forms --------------------------------------------

TEST_CASE_TEMPLATE("eval returns each expression's natural result type", T, float, double) {
  using dr = spade::dense<T, cpu, row_major>;
  using dc = spade::dense<T, cpu, col_major>;
  using csr = spade::csr<T, cpu>;
  using coo = spade::coo<T, cpu>;
  using vec = spade::vector<T, cpu>;
  const dr r(2, 2);
  const dc c(2, 2);
  const csr s(2, 2);
  const coo o(2, 2);
  const vec x(2);
  using spade::eval;
  using spade::transpose;
  static_assert(std::is_same_v<decltype(eval(r * c)), dr>);
  static_assert(std::is_same_v<decltype(eval(c * r)), dc>);
  static_assert(std::is_same_v<decltype(eval(s * c)), dc>);
  static_assert(std::is_same_v<decltype(eval(o * r)), dr>);
  static_assert(std::is_same_v<decltype(eval(c * o)), dc>);
  static_assert(std::is_same_v<decltype(eval(r * s)), dr>);
  static_assert(std::is_same_v<decltype(eval(s * x)), vec>);
  static_assert(std::is_same_v<decltype(eval(o * x)), vec>);
  static_assert(std::is_same_v<decltype(eval(c * x)), vec>);
  static_assert(std::is_same_v<decltype(eval(s * o)), csr>);
  static_assert(std::is_same_v<decltype(eval(o * o)), csr>);
  static_assert(std::is_same_v<decltype(eval(r + c)), dr>);
  static_assert(std::is_same_v<decltype(eval(c - r)), dc>);
  static_assert(std::is_same_v<decltype(eval(o + s)), csr>);
  static_assert(std::is_same_v<decltype(eval(o - o)), csr>);
  static_assert(std::is_same_v<decltype(eval(x + x)), vec>);
  static_assert(std::is_same_v<decltype(eval(T(2) * o)), coo>);
  static_assert(std::is_same_v<decltype(eval(-x)), vec>);
  static_assert(std::is_same_v<decltype(eval(transpose(c))), dc>);
  static_assert(std::is_same_v<decltype(eval(transpose(s))), csr>);
  static_assert(std::is_same_v<decltype(eval(s * (o * c))), dc>);
  static_assert(std::is_same_v<decltype(eval((s * o) * x)), vec>);
  static_assert(std::is_same_v<decltype(eval(transpose(s * c))), dc>);
  static_assert(std::is_same_v<decltype(eval(r)), dr>);
  CHECK(eval(s * (o * c)).rows() == 2);
}

// Storage, aliasing and error semantics do not depend on the scalar type: double only.
TEST_CASE("assignment reuses storage when the shape fits, reallocates otherwise") {
  using T = double;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_dense<T, row_major>(6, 4, seed);
  const auto b = spade::random_dense<T, col_major>(4, 3, seed + 1);
  const auto s = spade::random_sparse<T>(6, 4, 0.5, seed + 2);
  const auto x = spade::random_vector<T>(4, seed + 3);
  const ref_t want = ref(a) * ref(b);
  const ref_t mag = abs(ref(a)) * abs(ref(b));

  auto fits = nan_filled<spade::dense<T, cpu, row_major>>(6, 3);
  const void* before = storage_of(fits);
  fits = a * b;
  CHECK(storage_of(fits) == before);
  check_close<T>(ref(fits), want, mag, 4);
  const auto br = spade::convert<spade::dense<T, cpu, row_major>>(b);
  fits = s * br;  // another rule, same destination type
  CHECK(storage_of(fits) == before);
  check_close<T>(ref(fits), ref(s) * ref(b), abs(ref(s)) * abs(ref(b)), 4);

  auto wrong = nan_filled<spade::dense<T, cpu, row_major>>(7, 3);
  const void* old = storage_of(wrong);
  wrong = a * b;
  CHECK(storage_of(wrong) != old);
  CHECK(wrong.rows() == 6);
  CHECK(wrong.cols() == 3);
  check_close<T>(ref(wrong), want, mag, 4);

  auto y = nan_filled<spade::vector<T, cpu>>(6, 1);
  const void* y_before = storage_of(y);
  y = s * x;
  CHECK(storage_of(y) == y_before);
  check_close<T>(ref(y), ref(s) * ref(x), abs(ref(s)) * abs(ref(x)), 4);
  auto short_y = nan_filled<spade::vector<T, cpu>>(2, 1);
  y_before = storage_of(short_y);
  short_y = a * x;
  CHECK(storage_of(short_y) != y_before);
  check_close<T>(ref(short_y), ref(a) * ref(x), abs(ref(a)) * abs(ref(x)), 4);

  auto z = nan_filled<spade::vector<T, cpu>>(4, 1);
  const void* z_before = storage_of(z);
  z = x + x;
  CHECK(storage_of(z) == z_before);
  check_close<T>(ref(z), 2 * ref(x), 2 * abs(ref(x)), 1);

  // A destination of another layout or format gets the converted result.
  spade::dense<T, cpu, col_major> other = a * b;
  check_close<T>(ref(other), want, mag, 4);
  spade::csr<T, cpu> sparse_dest = s + s;
  check_close<T>(ref(sparse_dest), 2 * ref(s), 2 * abs(ref(s)), 1);
}

TEST_CASE("aliasing: C = C*A, C = A*C, x = A*x, C = transpose(C) go through a temporary") {
  using T = double;
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const index_t n = 33;
  const auto a = spade::random_dense<T, col_major>(n, n, seed);
  const auto s = spade::random_sparse<T>(n, n, 0.2, seed + 1);
  auto c = spade::random_dense<T, row_major>(n, n, seed + 2);
  ref_t rc = ref(c);
  c = c * a;
  check_close<T>(ref(c), rc * ref(a), abs(rc) * abs(ref(a)), n);
  rc = ref(c);
  c = s * c;
  check_close<T>(ref(c), ref(s) * rc, abs(ref(s)) * abs(rc), n);
  rc = ref(c);
  c = spade::transpose(c);
  CHECK(same(ref(c), rc.transpose()));
  rc = ref(c);
  c = c + spade::transpose(c);
  check_close<T>(ref(c), rc + rc.transpose(), abs(rc) + abs(rc).transpose(), 1);
  rc = ref(c);
  c = T(2) * (c * c);
  check_close<T>(ref(c), 2 * rc * rc, 2 * abs(rc) * abs(rc), n);

  auto x = spade::random_vector<T>(n, seed + 3);
  ref_t rx = ref(x);
  x = s * x;
  check_close<T>(ref(x), ref(s) * rx, abs(ref(s)) * abs(rx), n);
  rx = ref(x);
  x = spade::transpose(a) * x;
  check_close<T>(ref(x), ref(a).transpose() * rx, abs(ref(a)).transpose() * abs(rx), n);

  auto t = s;
  t = t * t;
  check_close<T>(ref(t), ref(s) * ref(s), abs(ref(s)) * abs(ref(s)), n);
  auto o = messy_coo(s, seed + 4);
  o = o * s;
  check_close<T>(ref(o), ref(s) * ref(s), abs(ref(s)) * abs(ref(s)), n);
}

TEST_CASE_TEMPLATE("fused forms run in place: C = a*(A*B) + b*C, y = a*(A*x) + b*y, z = a*x + b*y",
                   T, float, double) {
  for (const shape& s : edge_shapes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const T alpha = T(1.5), beta = T(-0.75);
    const auto a = spade::random_dense<T, col_major>(s.m, s.k, seed);
    const auto sp = spade::random_sparse<T>(s.m, s.k, 0.3, seed + 1);
    const auto sp_coo = messy_coo(sp, seed + 2);
    const auto b = spade::random_dense<T, row_major>(s.k, s.n, seed + 3);
    const auto c0 = spade::random_dense<T, row_major>(s.m, s.n, seed + 4);
    const ref_t ra = ref(a), rs = ref(sp), rb = ref(b), rc0 = ref(c0);
    auto fused = [&](auto make, const ref_t& lhs) {
      auto c = c0;
      const void* before = storage_of(c);
      make(c);
      check_storage_reused(storage_of(c), before);  // no temporary took C's place
      check_close<T>(ref(c), alpha * lhs * rb + beta * rc0,
                     std::abs(alpha) * abs(lhs) * abs(rb) + std::abs(beta) * abs(rc0), s.k + 1);
    };
    fused([&](auto& c) { c = alpha * (a * b) + beta * c; }, ra);
    fused([&](auto& c) { c = beta * c + alpha * (sp * b); }, rs);
    fused([&](auto& c) { c = (sp_coo * b) * alpha + c * beta; }, rs);
    const std::size_t conversions = spade::conversion_counter();
    fused([&](auto& c) { c = alpha * (sp_coo * b) + beta * c; }, rs);
    CHECK(spade::conversion_counter() == conversions);  // the coo's csr was cached above
    {
      auto c = c0;
      const void* before = storage_of(c);
      c = a * b + c;
      CHECK(storage_of(c) == before);
      check_close<T>(ref(c), ra * rb + rc0, abs(ra) * abs(rb) + abs(rc0), s.k + 1);
    }
    {
      // beta = 0: C's contents (NaN) are not read.
      auto c = nan_filled<spade::dense<T, cpu, row_major>>(s.m, s.n);
      c = alpha * (sp * b) + T(0) * c;
      check_close<T>(ref(c), alpha * rs * rb, std::abs(alpha) * abs(rs) * abs(rb), s.k);
    }
    {
      // The product reads C: not fusable, evaluated through a temporary, still right.
      auto c = spade::random_dense<T, row_major>(s.m, s.m, seed + 5);
      const auto q = spade::random_dense<T, col_major>(s.m, s.m, seed + 9);
      const ref_t rc = ref(c), rq = ref(q);
      c = alpha * (c * q) + beta * c;
      check_close<T>(ref(c), alpha * rc * rq + beta * rc,
                     std::abs(alpha) * abs(rc) * abs(rq) + std::abs(beta) * abs(rc), s.m + 1);
    }
    const auto x = spade::random_vector<T>(s.k, seed + 6);
    const auto y0 = spade::random_vector<T>(s.m, seed + 7);
    const ref_t rx = ref(x), ry0 = ref(y0);
    auto fused_v = [&](auto make, const ref_t& lhs) {
      auto y = y0;
      const void* before = storage_of(y);
      make(y);
      check_storage_reused(storage_of(y), before);
      check_close<T>(ref(y), alpha * lhs * rx + beta * ry0,
                     std::abs(alpha) * abs(lhs) * abs(rx) + std::abs(beta) * abs(ry0), s.k + 1);
    };
    fused_v([&](auto& y) { y = alpha * (a * x) + beta * y; }, ra);
    fused_v([&](auto& y) { y = alpha * (sp * x) + beta * y; }, rs);
    fused_v([&](auto& y) { y = beta * y + alpha * (sp_coo * x); }, rs);
    {
      auto y = nan_filled<spade::vector<T, cpu>>(s.m, 1);
      y = alpha * (a * x) + T(0) * y;
      check_close<T>(ref(y), alpha * ra * rx, std::abs(alpha) * abs(ra) * abs(rx), s.k);
    }
    const auto u = spade::random_vector<T>(s.m, seed + 8);
    const ref_t ru = ref(u);
    auto z = nan_filled<spade::vector<T, cpu>>(s.m, 1);
    const void* z_before = storage_of(z);
    z = alpha * u + beta * y0;
    CHECK(storage_of(z) == z_before);
    check_close<T>(ref(z), alpha * ru + beta * ry0,
                   std::abs(alpha) * abs(ru) + std::abs(beta) * abs(ry0), 1);
    auto w = y0;
    w = alpha * u + beta * w;  // z is y
    check_close<T>(ref(w), alpha * ru + beta * ry0,
                   std::abs(alpha) * abs(ru) + std::abs(beta) * abs(ry0), 1);
  }
}

// ---- errors --------------------------------------------------------------------------------

TEST_CASE("mismatched shapes throw dimension_mismatch naming both shapes") {
  using T = double;
  const spade::dense<T, cpu, row_major> a(3, 4);
  const spade::dense<T, cpu, col_major> b(5, 6);
  const spade::csr<T, cpu> s(3, 4);
  const spade::coo<T, cpu> o(4, 3);
  const spade::vector<T, cpu> x(5), y(3);
  auto both = [](const std::string& message, const char* first, const char* second) {
    CAPTURE(message);
    CHECK(contains(message, first));
    CHECK(contains(message, second));
  };
  both(mismatch_message([&] { (void)(a * b); }), "3x4", "5x6");
  both(mismatch_message([&] { (void)(s * b); }), "3x4", "5x6");
  both(mismatch_message([&] { (void)(b * s); }), "5x6", "3x4");
  both(mismatch_message([&] { (void)(a * x); }), "3x4", "5x1");
  both(mismatch_message([&] { (void)(o * x); }), "4x3", "5x1");
  both(mismatch_message([&] { (void)(s * s); }), "3x4", "3x4");
  both(mismatch_message([&] { (void)(a * (s * o)); }), "3x4", "3x3");
  both(mismatch_message([&] { (void)(a + b); }), "3x4", "5x6");
  both(mismatch_message([&] { (void)(a - spade::transpose(a)); }), "3x4", "4x3");
  both(mismatch_message([&] { (void)(s + o); }), "3x4", "4x3");
  both(mismatch_message([&] { (void)(x + y); }), "5x1", "3x1");
  auto c = spade::dense<T, cpu, row_major>(2, 2);
  both(mismatch_message([&] { c = T(2) * (a * spade::transpose(a)) + T(3) * c; }), "3x3", "2x2");
}

// ---- real matrices --------------------------------------------------------------------------

TEST_CASE_TEMPLATE("real matrices: A*B with B of width 7, A*x, csr and coo", T, float, double) {
  auto files = spade::testing::real_matrices();
  if (files.size() > 5) files.resize(5);
  REQUIRE(!files.empty());
  for (const auto& path : files) {
    const std::uint64_t seed = fresh_seed();
    const std::string name = path.filename().string();
    CAPTURE(name);
    CAPTURE(seed);
    const auto a = spade::read_matrix_market<T>(path);
    const auto b = spade::random_dense<T, row_major>(a.cols(), 7, seed);
    const auto x = spade::random_vector<T>(a.cols(), seed + 1);
    // Reference by plain loops in double: want = A·B, mag = |A|·|B|, per row.
    ref_t want = ref_t::Zero(a.rows(), 7), mag = ref_t::Zero(a.rows(), 7);
    ref_t want_x = ref_t::Zero(a.rows(), 1), mag_x = ref_t::Zero(a.rows(), 1);
    index_t widest = 1;
    for (index_t i = 0; i < a.rows(); ++i) {
      widest = std::max(widest, a.row_ptr()[i + 1] - a.row_ptr()[i]);
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
        const double v = a.values()[k];
        const index_t col = a.col_idx()[k];
        for (index_t j = 0; j < 7; ++j) {
          want(i, j) += v * b(col, j);
          mag(i, j) += std::abs(v * b(col, j));
        }
        want_x(i, 0) += v * x[col];
        mag_x(i, 0) += std::abs(v * x[col]);
      }
    }
    CAPTURE(a.rows());
    CAPTURE(a.nnz());
    const spade::dense<T, cpu, row_major> c = a * b;
    check_close<T>(ref(c), want, mag, widest);
    const auto a_coo = spade::convert<spade::coo>(a);
    const spade::dense<T, cpu, col_major> c2 =
        a_coo * spade::convert<spade::dense<T, cpu, col_major>>(b);
    check_close<T>(ref(c2), want, mag, widest);
    const spade::vector<T, cpu> y = a * x;
    check_close<T>(ref(y), want_x, mag_x, widest);
  }
}
