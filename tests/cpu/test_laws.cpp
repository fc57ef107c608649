// Algebraic laws on random inputs: (A·B)ᵀ = Bᵀ·Aᵀ for every product pairing, A·(B·C) = (A·B)·C,
// A + B = B + A, A·(B + C) = A·B + A·C, to_dense(to_csr(D)) = D, and the same result whatever
// way the kernel is chosen (eval<eigen_product>, eval, reference).
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <spade/spade.hpp>

#include <type_traits>
#include <vector>
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::index_t;
using spade::row_major;

namespace {

using ref_t = Eigen::MatrixXd;

using spade::testing::fresh_seed;

// Double copies read from the stored arrays (magnitudes for the tolerances, exact comparisons).
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
    r(a.row_idx()[k], a.col_idx()[k]) += a.values()[k];
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

bool same(const ref_t& a, const ref_t& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

/// Two evaluations of the same value: ‖x − y‖ ≤ 16·k·ε·‖magnitude‖ + tiny.
template <class T>
void check_close(const ref_t& x, const ref_t& y, const ref_t& magnitude, index_t k) {
  REQUIRE(x.rows() == y.rows());
  REQUIRE(x.cols() == y.cols());
  const double error = (x - y).norm();
  const double bound = 16.0 * static_cast<double>(std::max<index_t>(k, 1)) *
                           std::numeric_limits<T>::epsilon() * magnitude.norm() +
                       std::numeric_limits<T>::min();
  CAPTURE(error);
  CAPTURE(bound);
  CHECK(x.allFinite());
  CHECK(error <= bound);
}

/// Same type, same shape, same stored arrays, bit for bit.
template <class M>
bool identical(const M& x, const M& y) {
  if (x.rows() != y.rows() || x.cols() != y.cols() || x.values() != y.values()) return false;
  if constexpr (spade::is_csr_v<M>) return x.row_ptr() == y.row_ptr() && x.col_idx() == y.col_idx();
  return true;
}
template <class T>
bool identical(const spade::vector<T, cpu>& x, const spade::vector<T, cpu>& y) {
  return x.values() == y.values();
}

/// (A·B)ᵀ = Bᵀ·Aᵀ: both sides evaluated by Spade, compared to the product's tolerance. The
/// transposed product keeps its natural type; the right side may have another layout.
template <class A, class B>
void check_transpose_law(const A& a, const B& b) {
  using T = typename A::value_type;
  const auto left = spade::eval(spade::transpose(a * b));
  const auto right = spade::eval(spade::transpose(b) * spade::transpose(a));
  const ref_t mag = (abs(ref(a)) * abs(ref(b))).transpose();
  check_close<T>(ref(left), ref(right), mag, a.cols());
}

/// The kernel forced with eval<K>, chosen by eval, or run by reference: the same bits.
template <class K, class E>
void check_same_whatever_kernel(const E& e) {
  const auto natural = spade::eval(e);
  const auto forced = spade::eval<K>(e);
  const auto referenced = spade::reference(e);
  static_assert(std::is_same_v<decltype(natural), decltype(forced)>);
  static_assert(std::is_same_v<decltype(natural), decltype(referenced)>);
  CHECK(identical(natural, forced));
  CHECK(identical(natural, referenced));
}

struct sizes {
  index_t m, k, n;
};
const std::vector<sizes> law_sizes = {{1, 1, 1}, {7, 5, 3}, {31, 33, 32}, {33, 32, 31}, {0, 4, 3}};

}  // namespace

TEST_CASE_TEMPLATE("(A*B)^T = B^T * A^T for every product pairing", T, float, double) {
  for (const sizes& s : law_sizes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const auto dr = spade::random_dense<T, row_major>(s.m, s.k, seed);
    const auto dc = spade::random_dense<T, col_major>(s.m, s.k, seed + 1);
    const auto er = spade::random_dense<T, row_major>(s.k, s.n, seed + 2);
    const auto ec = spade::random_dense<T, col_major>(s.k, s.n, seed + 3);
    const auto sa = spade::random_sparse<T>(s.m, s.k, 0.3, seed + 4);
    const auto sb = spade::random_sparse<T>(s.k, s.n, 0.3, seed + 5);
    const auto ca = spade::convert<spade::coo>(sa);
    const auto cb = spade::convert<spade::coo>(sb);
    check_transpose_law(dr, er);
    check_transpose_law(dr, ec);
    check_transpose_law(dc, er);
    check_transpose_law(dc, ec);
    check_transpose_law(sa, er);
    check_transpose_law(ca, ec);
    check_transpose_law(dr, sb);
    check_transpose_law(dc, cb);
    check_transpose_law(sa, sb);
    check_transpose_law(ca, sb);
    check_transpose_law(sa, cb);
    // Matrix × vector: (A·x)ᵀ has no vector form; A·x = (xᵀ·Aᵀ)ᵀ is checked as Aᵀᵀ·x.
    const auto x = spade::random_vector<T>(s.k, seed + 6);
    check_close<T>(ref(spade::eval(sa * x)),
                   ref(spade::eval(spade::transpose(spade::transpose(sa)) * x)),
                   abs(ref(sa)) * abs(ref(x)), s.k);
    check_close<T>(ref(spade::eval(dc * x)),
                   ref(spade::eval(spade::transpose(spade::transpose(dc)) * x)),
                   abs(ref(dc)) * abs(ref(x)), s.k);
  }
}

TEST_CASE_TEMPLATE("A*(B*C) = (A*B)*C and A*(B + C) = A*B + A*C", T, float, double) {
  for (const sizes& s : law_sizes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const index_t l = s.n + 2;
    const auto a = spade::random_sparse<T>(s.m, s.k, 0.3, seed);
    const auto ad = spade::random_dense<T, col_major>(s.m, s.k, seed + 1);
    const auto b = spade::convert<spade::coo>(spade::random_sparse<T>(s.k, s.n, 0.3, seed + 2));
    const auto bd = spade::random_dense<T, row_major>(s.k, s.n, seed + 3);
    const auto c = spade::random_dense<T, row_major>(s.n, l, seed + 4);
    const auto cs = spade::random_sparse<T>(s.n, l, 0.3, seed + 5);
    const auto x = spade::random_vector<T>(s.n, seed + 6);
    auto assoc = [&](const auto& p, const auto& q, const auto& r) {
      const ref_t mag = abs(ref(p)) * abs(ref(q)) * abs(ref(r));
      const auto left = spade::eval(p * (q * r));
      const auto right = spade::eval((p * q) * r);
      check_close<T>(ref(left), ref(right), mag, p.cols() + q.cols());
    };
    assoc(a, b, c);
    assoc(a, bd, c);
    assoc(ad, b, c);
    assoc(ad, bd, c);
    assoc(a, b, cs);
    assoc(ad, b, cs);
    assoc(a, bd, x);
    assoc(ad, b, x);

    const auto b2 = spade::random_sparse<T>(s.k, s.n, 0.3, seed + 7);
    const auto bd2 = spade::random_dense<T, col_major>(s.k, s.n, seed + 8);
    const ref_t mag_s = abs(ref(a)) * (abs(ref(b)) + abs(ref(b2)));
    check_close<T>(ref(spade::eval(a * (b + b2))), ref(spade::eval(a * b + a * b2)), mag_s, s.k);
    const ref_t mag_d = abs(ref(ad)) * (abs(ref(bd)) + abs(ref(bd2)));
    check_close<T>(ref(spade::eval(ad * (bd - bd2))), ref(spade::eval(ad * bd - ad * bd2)), mag_d,
                   s.k);
    // Scalars commute with products: (s·A)·B = s·(A·B) = A·(s·B).
    const ref_t mag_ab = 3 * abs(ref(a)) * abs(ref(bd));
    check_close<T>(ref(spade::eval((T(3) * a) * bd)), ref(spade::eval(T(3) * (a * bd))), mag_ab,
                   s.k);
    check_close<T>(ref(spade::eval(a * (bd * T(3)))), ref(spade::eval(T(3) * (a * bd))), mag_ab,
                   s.k);
  }
}

TEST_CASE_TEMPLATE("A + B = B + A and A - B = A + (-1)*B, exactly", T, float, double) {
  for (const sizes& s : law_sizes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(seed);
    const auto dr = spade::random_dense<T, row_major>(s.m, s.k, seed);
    const auto dc = spade::random_dense<T, col_major>(s.m, s.k, seed + 1);
    const auto sa = spade::random_sparse<T>(s.m, s.k, 0.3, seed + 2);
    const auto sb = spade::convert<spade::coo>(spade::random_sparse<T>(s.m, s.k, 0.3, seed + 3));
    const auto x = spade::random_vector<T>(s.m, seed + 4);
    const auto y = spade::random_vector<T>(s.m, seed + 5);
    CHECK(same(ref(spade::eval(dr + dc)), ref(spade::eval(dc + dr))));
    CHECK(same(ref(spade::eval(dr + dr)), ref(spade::eval(T(2) * dr))));
    CHECK(identical(spade::eval(sa + sb), spade::eval(sb + sa)));
    CHECK(identical(spade::eval(x + y), spade::eval(y + x)));
    CHECK(same(ref(spade::eval(dr - dc)), ref(spade::eval(dr + T(-1) * dc))));
    CHECK(identical(spade::eval(sa - sb), spade::eval(sa + T(-1) * sb)));
    CHECK(identical(spade::eval(x - y), spade::eval(-y + x)));
    CHECK(same(ref(spade::eval(spade::transpose(dr + dc))),
               ref(spade::eval(spade::transpose(dc) + spade::transpose(dr)))));
  }
}

TEST_CASE_TEMPLATE("to_dense(to_csr(D)) = D and to_csr(to_dense(S)) = S, both layouts", T, float,
                   double) {
  for (const sizes& s : law_sizes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(seed);
    // A dense matrix with exact zeros in it: the csr drops them, the dense gets them back.
    const auto pattern = spade::random_sparse<T>(s.m, s.k, 0.4, seed);
    const auto dr = spade::convert<spade::dense<T, cpu, row_major>>(pattern);
    const auto dc = spade::convert<spade::dense<T, cpu, col_major>>(pattern);
    const auto back_r =
        spade::convert<spade::dense<T, cpu, row_major>>(spade::convert<spade::csr>(dr));
    const auto back_c =
        spade::convert<spade::dense<T, cpu, col_major>>(spade::convert<spade::csr>(dc));
    CHECK(identical(back_r, dr));
    CHECK(identical(back_c, dc));
    CHECK(identical(spade::convert<spade::csr>(dr), pattern));
    CHECK(identical(spade::convert<spade::csr>(spade::convert<spade::coo>(pattern)), pattern));
    // And through expressions: eval of a transpose twice is the identity.
    CHECK(identical(spade::eval(spade::transpose(spade::transpose(dc))), dc));
    CHECK(
        identical(spade::eval(spade::transpose(spade::eval(spade::transpose(pattern)))), pattern));
  }
}

TEST_CASE_TEMPLATE("the same result whatever kernel is forced: eval<K>, eval, reference", T, float,
                   double) {
  using product = spade::kernels::eigen_product;
  using sum = spade::kernels::eigen_sum;
  for (const sizes& s : law_sizes) {
    const std::uint64_t seed = fresh_seed();
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    CAPTURE(seed);
    const auto dr = spade::random_dense<T, row_major>(s.m, s.k, seed);
    const auto ec = spade::random_dense<T, col_major>(s.k, s.n, seed + 1);
    const auto sa = spade::random_sparse<T>(s.m, s.k, 0.3, seed + 2);
    const auto ca = spade::convert<spade::coo>(sa);
    const auto sb = spade::random_sparse<T>(s.k, s.n, 0.3, seed + 3);
    const auto x = spade::random_vector<T>(s.k, seed + 4);
    check_same_whatever_kernel<product>(dr * ec);
    check_same_whatever_kernel<product>(sa * ec);
    check_same_whatever_kernel<product>(ca * ec);
    check_same_whatever_kernel<product>(dr * sb);
    check_same_whatever_kernel<product>(sa * sb);
    check_same_whatever_kernel<product>(ca * sb);
    check_same_whatever_kernel<product>(sa * x);
    check_same_whatever_kernel<product>(dr * x);
    check_same_whatever_kernel<product>(T(2) * spade::transpose(ca) * dr);
    check_same_whatever_kernel<product>(ca * (sb * spade::transpose(ec)));
    check_same_whatever_kernel<sum>(dr + spade::transpose(spade::transpose(dr)));
    check_same_whatever_kernel<sum>(sa - ca);
    check_same_whatever_kernel<sum>(T(2) * (x + x));
  }
}
