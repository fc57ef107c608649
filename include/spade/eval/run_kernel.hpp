// One function per kernel tag: runs it on storage operands that already have the formats the
// plan's conversion steps produced.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "spade/cpu/evaluate.hpp"
#include "spade/device/kernels.hpp"
#include "spade/device/vendor.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/select.hpp"
#include "spade/plan/kernels.hpp"

namespace spade::detail {

inline device::operation op(bool transposed) {
  return transposed ? device::operation::transpose : device::operation::none;
}

/// Makes `dest` a rows × cols object of its own type, keeping its storage when the shape
/// already fits (its contents then matter only when beta != 0).
template <class Dest>
void shape_destination(Dest& dest, index_t rows, index_t cols) {
  using T = typename Dest::value_type;
  using S = typename Dest::space_type;
  if constexpr (is_vector_v<Dest>) {
    if (dest.size() != rows) dest = Dest(storage<T, S>(static_cast<std::size_t>(rows)));
  } else {
    if (dest.rows() != rows || dest.cols() != cols)
      dest = Dest(unchecked, rows, cols,
                  storage<T, S>(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)));
  }
}

/// Products whose result is dense or a vector: dest = alpha·op(A)·op(B) + beta·dest.
template <class Kernel, class A, class B, class Dest, class T>
void run_product(Kernel, T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
  if constexpr (std::is_same_v<Kernel, kernels::eigen_product>) {
    if constexpr (is_coo_v<A> || is_coo_v<B>) {
      static_assert(sizeof(A) == 0, "spade: internal: eigen_product needs csr operands");
    } else {
      host::product_into(alpha, a, ta, b, tb, beta, dest);
    }
  } else if constexpr (std::is_same_v<Kernel, kernels::cublas_gemm>) {
    if (!tb) {
      device::gemm(alpha, a, op(ta), b, device::operation::none, beta, dest);
    } else {
      device::gemm(alpha, a, op(ta), b, device::operation::transpose, beta, dest);
    }
  } else if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmm>) {
    // SpMM has no op flag for the dense operand: a transposed one is a cached copy.
    ++product_uses_of(a).count;  // ellr_min_uses counts the products run on A as it is
    device::spmm(alpha, a, op(ta), tb ? cached_transpose(b) : b, beta, dest);
  } else if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm> ||
                       std::is_same_v<Kernel, kernels::gcoo_spmm_paper>) {
    // Row-major B and C only: a transposed or col-major B becomes a cached row-major copy; the
    // planner declines gcoo for a transposed A or a col-major C unless forced (then they throw).
    if constexpr (is_dense_v<Dest> && std::is_same_v<typename Dest::layout_type, row_major>) {
      if (ta)
        throw invalid_matrix(std::string(Kernel::name) +
                             ": gcoo has no transposed product; transpose the matrix first");
      using row_dense = dense<T, gpu, row_major>;
      const auto& b_seen = tb ? cached_transpose(b) : b;
      const row_dense& b_rows = cached_convert<row_dense>(b_seen);
      if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>)
        device::gcoo_spmm(alpha, a, b_rows, beta, dest);
      else
        device::gcoo_spmm_paper(alpha, a, b_rows, beta, dest);
    } else {
      // A col-major destination (forced kernel only): computed row-major, then relaid.
      using row_dense = dense<T, gpu, row_major>;
      row_dense rows_result =
          beta == T(0) ? row_dense(unchecked, dest.rows(), dest.cols(),
                                   storage<T, gpu>(static_cast<std::size_t>(dest.rows()) *
                                                   static_cast<std::size_t>(dest.cols())))
                       : convert<row_dense>(dest);
      run_product(Kernel{}, alpha, a, ta, b, tb, beta, rows_result);
      dest = convert<Dest>(rows_result);
    }
  } else if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmv>) {
    ++product_uses_of(a).count;
    device::spmv(alpha, a, op(ta), b, beta, dest);
  } else if constexpr (std::is_same_v<Kernel, kernels::ellr_spmv>) {
    // The planner declines a transposed A or B unless forced (then they throw or are copied).
    if (ta)
      throw invalid_matrix("ellr_spmv: ellr has no transposed product; transpose the matrix first");
    if constexpr (is_vector_v<Dest>)
      device::ellr_spmv(alpha, a, b, beta, dest);
    else
      device::ellr_spmm(alpha, a, tb ? cached_transpose(b) : b, beta, dest);
  } else if constexpr (std::is_same_v<Kernel, kernels::cublas_gemv>) {
    device::gemv(alpha, a, op(ta), b, beta, dest);
  } else {
    static_assert(sizeof(Kernel) == 0, "spade: internal: no dense-result runner for this kernel");
  }
}

/// Products whose result is sparse: alpha·op(A)·op(B) as csr.
template <class Kernel, class A, class B, class T>
auto run_sparse_product(Kernel, T alpha, const A& a, bool ta, const B& b, bool tb) {
  if constexpr (std::is_same_v<Kernel, kernels::eigen_product>) {
    return host::sparse_product(alpha, a, ta, b, tb);
  } else if constexpr (std::is_same_v<Kernel, kernels::hash_spgemm>) {
    // Row-wise products read rows: transposed operands are cached copies; alpha scales A's
    // values as they are read.
    return device::hash_spgemm(alpha, ta ? cached_transpose(a) : a, tb ? cached_transpose(b) : b);
  } else if constexpr (std::is_same_v<Kernel, kernels::tiled_spgemm> ||
                       std::is_same_v<Kernel, kernels::tiled_spgemm_fp16>) {
    constexpr auto arithmetic = std::is_same_v<Kernel, kernels::tiled_spgemm>
                                    ? device::tile_arithmetic::native
                                    : device::tile_arithmetic::fp16;
    // The planner declines transposed operands; a forced run tiles a cached transposed csr.
    using csr_type = csr<T, gpu>;
    const auto tiled_transpose = [](const auto& m) {
      return convert<tiled>(cached_transpose(cached_convert<csr_type>(m)));
    };
    const auto multiply = [&](const auto& left, const auto& right) {
      return device::tiled_to_csr(device::tiled_spgemm(alpha, left, right, arithmetic));
    };
    if (ta && tb) return multiply(tiled_transpose(a), tiled_transpose(b));
    if (ta) return multiply(tiled_transpose(a), b);
    if (tb) return multiply(a, tiled_transpose(b));
    return multiply(a, b);
  } else {
    static_assert(std::is_same_v<Kernel, kernels::cusparse_spgemm>);
    // cuSPARSE SpGEMM supports no transposes: transposed operands are cached copies.
    auto c = device::spgemm(ta ? cached_transpose(a) : a, tb ? cached_transpose(b) : b);
    if (alpha != T(1)) device::scale(alpha, c.values().data(), c.nnz());
    return c;
  }
}

/// Sums with a dense or vector result: dest = a·op(X) + b·op(Y).
template <class Kernel, class X, class Y, class Dest, class T>
void run_sum(Kernel, T a, const X& x, bool tx, T b, const Y& y, bool ty, Dest& dest) {
  if constexpr (std::is_same_v<Kernel, kernels::eigen_sum>) {
    host::sum_into(a, x, tx, b, y, ty, dest);
  } else if constexpr (std::is_same_v<Kernel, kernels::cublas_geam>) {
    device::geam(a, x, op(tx), b, y, op(ty), dest);
  } else {
    static_assert(std::is_same_v<Kernel, kernels::spade_axpby>);
    device::axpby(a, x, b, y, dest);
  }
}

/// Sums with a sparse result: a·op(X) + b·op(Y) as csr.
template <class Kernel, class X, class Y, class T>
auto run_sparse_sum(Kernel, T a, const X& x, bool tx, T b, const Y& y, bool ty) {
  if constexpr (std::is_same_v<Kernel, kernels::eigen_sum>) {
    return host::sparse_sum(a, tx ? cached_transpose(x) : x, b, ty ? cached_transpose(y) : y);
  } else {
    static_assert(std::is_same_v<Kernel, kernels::cusparse_csr_add>);
    return device::csr_add(a, tx ? cached_transpose(x) : x, b, ty ? cached_transpose(y) : y);
  }
}

}  // namespace spade::detail
