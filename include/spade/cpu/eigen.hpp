// Eigen interop: from_eigen / to_eigen between Eigen's types and Spade's (either space).
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <limits>
#include <type_traits>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/cpu/convert.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/transfer.hpp"
#include "spade/formats/vector.hpp"

namespace spade {

namespace detail {

template <class Scalar>
constexpr void require_spade_scalar() {
  static_assert(scalar<Scalar>,
                "spade::from_eigen: Spade stores float or double; cast the Eigen object first, "
                "e.g. m.cast<double>()");
}

inline void require_index_extents(Eigen::Index rows, Eigen::Index cols) {
  constexpr auto index_max = std::numeric_limits<index_t>::max();
  if (rows > index_max || cols > index_max)
    throw invalid_matrix("from_eigen: a " + std::to_string(rows) + "x" + std::to_string(cols) +
                         " matrix exceeds 32-bit indices");
}

template <class M>
decltype(auto) on_host(const M& a) {
  if constexpr (std::is_same_v<typename M::space_type, cpu>)
    return (a);
  else
    return to_cpu(a);
}

}  // namespace detail

/// Eigen sparse matrix (either storage order, compressed or not, or a sparse expression) →
/// csr<T, cpu>. Explicitly stored zeros are kept; rows are sorted by column if Eigen's were
/// not. O(nnz) time and one temporary copy for column-major input. Throws invalid_matrix when
/// sizes or nnz exceed the 32-bit index type.
template <class Derived>
csr<typename Derived::Scalar, cpu> from_eigen(const Eigen::SparseMatrixBase<Derived>& e) {
  using T = typename Derived::Scalar;
  detail::require_spade_scalar<T>();
  detail::require_index_extents(e.rows(), e.cols());
  Eigen::SparseMatrix<T, Eigen::RowMajor, long long> rowwise = e.derived();
  rowwise.makeCompressed();
  if (rowwise.nonZeros() > std::numeric_limits<index_t>::max())
    throw invalid_matrix("from_eigen: " + std::to_string(rowwise.nonZeros()) +
                         " entries exceed 32-bit indices");
  const auto rows = static_cast<index_t>(rowwise.rows());
  const auto nnz = static_cast<std::size_t>(rowwise.nonZeros());
  std::vector<index_t> row_ptr(rowwise.outerIndexPtr(), rowwise.outerIndexPtr() + rows + 1);
  std::vector<index_t> col_idx(rowwise.innerIndexPtr(), rowwise.innerIndexPtr() + nnz);
  std::vector<T> values(rowwise.valuePtr(), rowwise.valuePtr() + nnz);
  const column_order order =
      detail::rows_sorted(row_ptr, col_idx) ? column_order::require_sorted : column_order::sort;
  return csr<T, cpu>(rows, static_cast<index_t>(rowwise.cols()), std::move(row_ptr),
                     std::move(col_idx), std::move(values), order);
}

/// Eigen dense object → spade::vector<T, cpu> when it is a compile-time column vector,
/// otherwise dense<T, cpu, Layout> with the layout of the Eigen type (expressions are
/// evaluated). O(rows·cols).
template <class Derived>
auto from_eigen(const Eigen::DenseBase<Derived>& e) {
  using T = typename Derived::Scalar;
  detail::require_spade_scalar<T>();
  detail::require_index_extents(e.rows(), e.cols());
  if constexpr (Derived::ColsAtCompileTime == 1) {
    std::vector<T> values(static_cast<std::size_t>(e.rows()));
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(values.data(), e.rows()) = e.derived();
    return vector<T, cpu>(std::move(values));
  } else {
    constexpr bool row_order = Derived::IsRowMajor;
    using Layout = std::conditional_t<row_order, row_major, col_major>;
    using Plain = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic,
                                row_order ? Eigen::RowMajor : Eigen::ColMajor>;
    std::vector<T> values(static_cast<std::size_t>(e.rows()) * static_cast<std::size_t>(e.cols()));
    Eigen::Map<Plain>(values.data(), e.rows(), e.cols()) = e.derived();
    return dense<T, cpu, Layout>(static_cast<index_t>(e.rows()), static_cast<index_t>(e.cols()),
                                 std::move(values));
  }
}

/// csr (either space) → Eigen::SparseMatrix<T, RowMajor, int>, a deep copy.
template <class T, class Space>
Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const csr<T, Space>& a) {
  const auto& h = detail::on_host(a);
  Eigen::SparseMatrix<T, Eigen::RowMajor, int> out(h.rows(), h.cols());
  if (h.nnz() == 0) return out;
  out = Eigen::Map<const Eigen::SparseMatrix<T, Eigen::RowMajor, int>>(
      h.rows(), h.cols(), h.nnz(), h.row_ptr().data(), h.col_idx().data(), h.values().data());
  return out;
}

/// coo (either space) → Eigen::SparseMatrix<T, RowMajor, int>; repeated entries are summed.
template <class T, class Space>
Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const coo<T, Space>& a) {
  const auto& h = detail::on_host(a);
  std::vector<Eigen::Triplet<T, int>> triplets;
  triplets.reserve(static_cast<std::size_t>(h.nnz()));
  for (index_t k = 0; k < h.nnz(); ++k)
    triplets.emplace_back(h.row_idx()[k], h.col_idx()[k], h.values()[k]);
  Eigen::SparseMatrix<T, Eigen::RowMajor, int> out(h.rows(), h.cols());
  out.setFromTriplets(triplets.begin(), triplets.end());
  return out;
}

/// gcoo (either space) → Eigen::SparseMatrix<T, RowMajor, int>, through a host csr (the
/// entries regrouped by row). O(rows + nnz).
template <class T, class Space>
Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const gcoo<T, Space>& a) {
  return to_eigen(host::gcoo_to_csr(detail::on_host(a)));
}

/// ellr (either space) → Eigen::SparseMatrix<T, RowMajor, int>, through a host csr.
/// O(rows + nnz).
template <class T, class Space>
Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const ellr<T, Space>& a) {
  return to_eigen(host::ellr_to_csr(detail::on_host(a)));
}

/// tiled (either space) → Eigen::SparseMatrix<T, RowMajor, int>, through a host csr.
/// O(rows + tiles + nnz).
template <class T, class Space>
Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const tiled<T, Space>& a) {
  return to_eigen(host::tiled_to_csr(detail::on_host(a)));
}

/// dense (either space) → Eigen::Matrix of the same storage order, a deep copy.
template <class T, class Space, class Layout>
auto to_eigen(const dense<T, Space, Layout>& a) {
  constexpr int order = std::is_same_v<Layout, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
  using Plain = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, order>;
  const auto& h = detail::on_host(a);
  return Plain(Eigen::Map<const Plain>(h.data(), h.rows(), h.cols()));
}

/// vector (either space) → Eigen::Matrix<T, Dynamic, 1>, a deep copy.
template <class T, class Space>
Eigen::Matrix<T, Eigen::Dynamic, 1> to_eigen(const vector<T, Space>& v) {
  const auto& h = detail::on_host(v);
  return Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(h.data(), h.size());
}

// The float and double instances of the sparse conversions above for Eigen's default sparse
// types and every Spade format, in both spaces, compiled once into the library
// (lib/host/instantiations.cpp). SPADE_HEADER_ONLY turns this off. Only conversions that return
// an Eigen::SparseMatrix (allocated with malloc and new[]) or a Spade type are here: a dense
// Eigen object allocated in the library and freed in a user's file compiled with other flags
// (-mavx, -march=native, -fsanitize=address change Eigen's aligned allocator) would be freed by
// the wrong function, so to_eigen of a dense matrix or a vector stays in the user's file.
#define SPADE_EIGEN_SPACE_INSTANCES(PREFIX, T, S)                                           \
  PREFIX template Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const csr<T, S>&);  \
  PREFIX template Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const coo<T, S>&);  \
  PREFIX template Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const gcoo<T, S>&); \
  PREFIX template Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const ellr<T, S>&); \
  PREFIX template Eigen::SparseMatrix<T, Eigen::RowMajor, int> to_eigen(const tiled<T, S>&);
#define SPADE_EIGEN_INSTANCES(PREFIX, T)                                             \
  PREFIX template csr<T, cpu> from_eigen(                                            \
      const Eigen::SparseMatrixBase<Eigen::SparseMatrix<T, Eigen::RowMajor, int>>&); \
  PREFIX template csr<T, cpu> from_eigen(                                            \
      const Eigen::SparseMatrixBase<Eigen::SparseMatrix<T, Eigen::ColMajor, int>>&); \
  SPADE_EIGEN_SPACE_INSTANCES(PREFIX, T, cpu)                                        \
  SPADE_EIGEN_SPACE_INSTANCES(PREFIX, T, gpu)
#ifndef SPADE_HEADER_ONLY
SPADE_EIGEN_INSTANCES(extern, float)
SPADE_EIGEN_INSTANCES(extern, double)
#endif

}  // namespace spade
