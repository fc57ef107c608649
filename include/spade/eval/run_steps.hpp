// run_steps: one candidate of a node run as its whole plan — the format conversions, the
// transposed copies its kernel has no op flag for, the kernel, and its result's conversion —
// each copy cached where it can be and counted in conversion_counter(), the same list explain
// prints (plan/copies.hpp).
#pragma once

#include <type_traits>

#include "spade/core/storage.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/formats/convert.hpp"
#include "spade/formats/traits.hpp"
#include "spade/plan/copies.hpp"

namespace spade::detail {

/// `m` as a kernel whose tag says `Read` reads it: a transposed operand it has no op flag for
/// becomes its cached transposed copy, and `transposed` is cleared (plan::copies_for lists the
/// same copy for explain, on the same predicate).
template <kernels::transposed_read Read, class M>
const M& as_kernel_reads(const M& m, bool& transposed) {
  if constexpr (!is_vector_v<M>) {  // a vector operand is never transposed
    if (transposed && plan::copies_transposed(Read, sparse_matrix<M>)) {
      transposed = false;
      return cached_transpose(m);
    }
  }
  return m;
}

/// dest = alpha·op(A)·op(B) + beta·dest (dense or vector dest) by candidate C.
template <class C, class A, class B, class Dest, class T>
void run_product_steps(C, T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
  using K = typename C::kernel;
  const auto& a2 = apply_steps<plan::lhs>(a, typename C::conversions{});
  const auto& b2 = apply_steps<plan::rhs>(b, typename C::conversions{});
  const auto& a3 = as_kernel_reads<K::lhs_transposed>(a2, ta);
  const auto& b3 = as_kernel_reads<K::rhs_transposed>(b2, tb);
  if constexpr (K::result == kernels::result_copy::from_row_major && is_col_major_v<Dest>) {
    // The kernel writes row-major only: C in a row-major copy (of dest when beta reads it),
    // relaid into dest after.
    using row_dense = dense<T, typename Dest::space_type, row_major>;
    row_dense rows_result = beta == T(0) ? row_dense(unchecked, dest.rows(), dest.cols(),
                                                     storage<T, typename Dest::space_type>(
                                                         static_cast<std::size_t>(dest.rows()) *
                                                         static_cast<std::size_t>(dest.cols())))
                                         : convert<row_dense>(dest);
    runner<K>::product(alpha, a3, ta, b3, tb, beta, rows_result);
    dest = convert<Dest>(rows_result);
  } else {
    runner<K>::product(alpha, a3, ta, b3, tb, beta, dest);
  }
}

/// alpha·op(A)·op(B) as csr by candidate C.
template <class C, class A, class B, class T>
auto run_sparse_product_steps(C, T alpha, const A& a, bool ta, const B& b, bool tb) {
  using K = typename C::kernel;
  const auto& a2 = apply_steps<plan::lhs>(a, typename C::conversions{});
  const auto& b2 = apply_steps<plan::rhs>(b, typename C::conversions{});
  const auto& a3 = as_kernel_reads<K::lhs_transposed>(a2, ta);
  const auto& b3 = as_kernel_reads<K::rhs_transposed>(b2, tb);
  if constexpr (K::result == kernels::result_copy::from_tiles) {
    using csr_type = csr<T, typename A::space_type>;
    return convert<csr_type>(runner<K>::sparse_product(alpha, a3, ta, b3, tb));
  } else {
    return runner<K>::sparse_product(alpha, a3, ta, b3, tb);
  }
}

/// dest = a·op(X) + b·op(Y) (dense or vector dest) by candidate C.
template <class C, class X, class Y, class Dest, class T>
void run_sum_steps(C, T a, const X& x, bool tx, T b, const Y& y, bool ty, Dest& dest) {
  using K = typename C::kernel;
  const auto& x2 = apply_steps<plan::lhs>(x, typename C::conversions{});
  const auto& y2 = apply_steps<plan::rhs>(y, typename C::conversions{});
  const auto& x3 = as_kernel_reads<K::lhs_transposed>(x2, tx);
  const auto& y3 = as_kernel_reads<K::rhs_transposed>(y2, ty);
  runner<K>::sum(a, x3, tx, b, y3, ty, dest);
}

/// a·op(X) + b·op(Y) as csr by candidate C.
template <class C, class X, class Y, class T>
auto run_sparse_sum_steps(C, T a, const X& x, bool tx, T b, const Y& y, bool ty) {
  using K = typename C::kernel;
  const auto& x2 = apply_steps<plan::lhs>(x, typename C::conversions{});
  const auto& y2 = apply_steps<plan::rhs>(y, typename C::conversions{});
  const auto& x3 = as_kernel_reads<K::lhs_transposed>(x2, tx);
  const auto& y3 = as_kernel_reads<K::rhs_transposed>(y2, ty);
  return runner<K>::sparse_sum(a, x3, tx, b, y3, ty);
}

}  // namespace spade::detail
