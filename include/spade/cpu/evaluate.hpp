// The cpu kernels: Eigen maps over Spade's storage (no copies) for products and sums.
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <type_traits>

#include "spade/cpu/eigen.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/vector.hpp"

namespace spade::host {

/// A read-only Eigen view of a cpu operand: Map<const SparseMatrix<T, RowMajor, int>> for csr,
/// Map<const Matrix<..., Layout>> for dense, Map<const VectorX> for vector.
template <class T>
auto eigen_view(const csr<T, cpu>& a) {
  // A matrix with no rows may hold no row pointers; Eigen still reads outer[0].
  static const int no_rows[1] = {0};
  const int* outer = a.row_ptr().empty() ? no_rows : a.row_ptr().data();
  return Eigen::Map<const Eigen::SparseMatrix<T, Eigen::RowMajor, int>>(
      a.rows(), a.cols(), a.nnz(), outer, a.col_idx().data(), a.values().data());
}
template <class T, class L>
auto eigen_view(const dense<T, cpu, L>& a) {
  constexpr int order = std::is_same_v<L, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, order>>(
      a.data(), a.rows(), a.cols());
}
template <class T>
auto eigen_view(const vector<T, cpu>& v) {
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(v.data(), v.size());
}

/// A writable Eigen view of a dense or vector destination.
template <class T, class L>
auto eigen_target(dense<T, cpu, L>& d) {
  constexpr int order = std::is_same_v<L, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
  return Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, order>>(d.data(), d.rows(),
                                                                             d.cols());
}
template <class T>
auto eigen_target(vector<T, cpu>& v) {
  return Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(v.data(), v.size());
}

/// Applies op(X) = X or Xᵀ and calls f with the Eigen expression.
template <class View, class F>
decltype(auto) with_op(const View& view, bool transposed, F&& f) {
  if constexpr (View::ColsAtCompileTime == 1) {
    return f(view);  // vectors are never transposed (the operators refuse it)
  } else {
    if (transposed) return f(view.transpose());
    return f(view);
  }
}

/// dest = alpha·op(A)·op(B) + beta·dest for a dense or vector destination of the right shape.
/// beta = 0 ignores dest's contents (NaN included), as BLAS does.
template <class A, class B, class Dest, class T>
void product_into(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
  auto target = eigen_target(dest);
  const auto va = eigen_view(a);
  const auto vb = eigen_view(b);
  with_op(va, ta, [&](const auto& x) {
    return with_op(vb, tb, [&](const auto& y) {
      if (beta == T(0)) {
        target.setZero();
        target.noalias() += alpha * (x * y);
      } else {
        target *= beta;
        target.noalias() += alpha * (x * y);
      }
      return 0;
    });
  });
}

/// alpha·op(A)·op(B) for two csr operands, as a csr (sorted; explicit zeros Eigen keeps stay).
template <class T>
csr<T, cpu> sparse_product(T alpha, const csr<T, cpu>& a, bool ta, const csr<T, cpu>& b, bool tb) {
  Eigen::SparseMatrix<T, Eigen::RowMajor, int> result;
  with_op(eigen_view(a), ta, [&](const auto& x) {
    return with_op(eigen_view(b), tb, [&](const auto& y) {
      result = (x * y) * alpha;
      return 0;
    });
  });
  return from_eigen(result);
}

/// dest = a·op(X) + b·op(Y) for dense or vector operands of one shape.
template <class X, class Y, class Dest, class T>
void sum_into(T a, const X& x, bool tx, T b, const Y& y, bool ty, Dest& dest) {
  auto target = eigen_target(dest);
  with_op(eigen_view(x), tx, [&](const auto& u) {
    return with_op(eigen_view(y), ty, [&](const auto& v) {
      target = a * u + b * v;
      return 0;
    });
  });
}

/// a·X + b·Y for two csr operands, as a csr (transposed operands come as copies: Eigen adds
/// only sparse matrices of one storage order).
template <class T>
csr<T, cpu> sparse_sum(T a, const csr<T, cpu>& x, T b, const csr<T, cpu>& y) {
  Eigen::SparseMatrix<T, Eigen::RowMajor, int> result = a * eigen_view(x) + b * eigen_view(y);
  return from_eigen(result);
}

// The float and double instantiations of the kernels above for every operand combination the
// planner produces (natural result types), compiled once into the library: Eigen's product
// templates cost seconds of compile time per user translation unit otherwise.
// SPADE_HEADER_ONLY turns this off.
namespace instance_types {
template <class T>
using drow = dense<T, cpu, row_major>;
template <class T>
using dcol = dense<T, cpu, col_major>;
template <class T>
using hcsr = csr<T, cpu>;
template <class T>
using hvec = vector<T, cpu>;
}  // namespace instance_types

#define SPADE_HOST_PRODUCT(PREFIX, T, A, B, D)                                       \
  PREFIX template void                                                               \
  product_into<instance_types::A<T>, instance_types::B<T>, instance_types::D<T>, T>( \
      T, const instance_types::A<T>&, bool, const instance_types::B<T>&, bool, T,    \
      instance_types::D<T>&);
#define SPADE_HOST_SUM(PREFIX, T, X, Y, D)                                                        \
  PREFIX template void sum_into<instance_types::X<T>, instance_types::Y<T>, instance_types::D<T>, \
                                T>(T, const instance_types::X<T>&, bool, T,                       \
                                   const instance_types::Y<T>&, bool, instance_types::D<T>&);
#define SPADE_HOST_INSTANCES(PREFIX, T)                                                          \
  SPADE_HOST_PRODUCT(PREFIX, T, drow, drow, drow)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, drow, dcol, drow)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, dcol, drow, dcol)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, dcol, dcol, dcol)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, hcsr, drow, drow)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, hcsr, dcol, dcol)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, drow, hcsr, drow)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, dcol, hcsr, dcol)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, hcsr, hvec, hvec)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, drow, hvec, hvec)                                                \
  SPADE_HOST_PRODUCT(PREFIX, T, dcol, hvec, hvec)                                                \
  SPADE_HOST_SUM(PREFIX, T, drow, drow, drow)                                                    \
  SPADE_HOST_SUM(PREFIX, T, drow, dcol, drow)                                                    \
  SPADE_HOST_SUM(PREFIX, T, dcol, drow, dcol)                                                    \
  SPADE_HOST_SUM(PREFIX, T, dcol, dcol, dcol)                                                    \
  SPADE_HOST_SUM(PREFIX, T, hvec, hvec, hvec)                                                    \
  PREFIX template csr<T, cpu> sparse_product<T>(T, const csr<T, cpu>&, bool, const csr<T, cpu>&, \
                                                bool);                                           \
  PREFIX template csr<T, cpu> sparse_sum<T>(T, const csr<T, cpu>&, T, const csr<T, cpu>&);
#ifndef SPADE_HEADER_ONLY
SPADE_HOST_INSTANCES(extern, float)
SPADE_HOST_INSTANCES(extern, double)
#endif

}  // namespace spade::host
