// The gpu back end's runners (eval/run_kernel.hpp): cuBLAS, cuSPARSE and Spade's kernels.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "spade/device/convert.hpp"
#include "spade/device/facts.hpp"
#include "spade/device/kernels.hpp"
#include "spade/device/vendor.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/formats/convert.hpp"
#include "spade/plan/kernels.hpp"

namespace spade::detail {

inline device::operation op(bool transposed) {
  return transposed ? device::operation::transpose : device::operation::none;
}

template <>
struct runner<kernels::cublas_gemm> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    device::gemm(alpha, a, op(ta), b, op(tb), beta, dest);
  }
};

template <>
struct runner<kernels::cublas_gemv> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool, T beta, Dest& dest) {
    device::gemv(alpha, a, op(ta), b, beta, dest);
  }
};

template <>
struct runner<kernels::cusparse_spmm> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    // SpMM has no op flag for the dense operand: a transposed one is a cached copy.
    ++product_uses_of(a).count;  // ellr_min_uses counts the products run on A as it is
    device::spmm(alpha, a, op(ta), tb ? cached_transpose(b) : b, beta, dest);
  }
};

/// Small csr operands: Spade's row-wise kernels (device/kernels.hpp), op(A) by flag; a
/// transposed B is a cached copy. Counted as a product on A as it is, like cuSPARSE's.
template <>
struct runner<kernels::csr_rowwise> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    ++product_uses_of(a).count;
    if constexpr (is_vector_v<Dest>)
      device::rowwise_spmv(alpha, a, op(ta), b, beta, dest);
    else
      device::rowwise_spmm(alpha, a, op(ta), tb ? cached_transpose(b) : b, beta, dest);
  }
};

template <>
struct runner<kernels::cusparse_spmv> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool, T beta, Dest& dest) {
    ++product_uses_of(a).count;
    device::spmv(alpha, a, op(ta), b, beta, dest);
  }
};

/// gcoo_spmm and the paper's kernel: row-major B and C only. A transposed or col-major B becomes
/// a cached row-major copy; the planner declines gcoo for a transposed A or a col-major C unless
/// forced (then a transposed A throws and a col-major C is computed row-major, then relaid).
template <class Kernel>
struct gcoo_runner {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    using row_dense = dense<T, gpu, row_major>;
    if constexpr (is_dense_v<Dest> && std::is_same_v<typename Dest::layout_type, row_major>) {
      if (ta)
        throw invalid_matrix(std::string(Kernel::name) +
                             ": gcoo has no transposed product; transpose the matrix first");
      const auto& b_seen = tb ? cached_transpose(b) : b;
      const row_dense& b_rows = cached_convert<row_dense>(b_seen);
      if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>)
        device::gcoo_spmm(alpha, a, b_rows, beta, dest);
      else
        device::gcoo_spmm_paper(alpha, a, b_rows, beta, dest);
    } else {
      row_dense rows_result =
          beta == T(0) ? row_dense(unchecked, dest.rows(), dest.cols(),
                                   storage<T, gpu>(static_cast<std::size_t>(dest.rows()) *
                                                   static_cast<std::size_t>(dest.cols())))
                       : convert<row_dense>(dest);
      product(alpha, a, ta, b, tb, beta, rows_result);
      dest = convert<Dest>(rows_result);
    }
  }
};
template <>
struct runner<kernels::gcoo_spmm> : gcoo_runner<kernels::gcoo_spmm> {};
template <>
struct runner<kernels::gcoo_spmm_paper> : gcoo_runner<kernels::gcoo_spmm_paper> {};

template <>
struct runner<kernels::ellr_spmv> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    // The planner declines a transposed A or B unless forced (then they throw or are copied).
    if (ta)
      throw invalid_matrix("ellr_spmv: ellr has no transposed product; transpose the matrix first");
    if constexpr (is_vector_v<Dest>)
      device::ellr_spmv(alpha, a, b, beta, dest);
    else
      device::ellr_spmm(alpha, a, tb ? cached_transpose(b) : b, beta, dest);
  }
};

template <>
struct runner<kernels::hash_spgemm> {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool ta, const B& b, bool tb) {
    // Row-wise products read rows: transposed operands are cached copies; alpha scales A's
    // values as they are read.
    return device::hash_spgemm(alpha, ta ? cached_transpose(a) : a, tb ? cached_transpose(b) : b);
  }
};

/// tiled_spgemm in the scalar's own precision or with fp16 inputs. The planner declines
/// transposed operands; a forced run tiles a cached transposed csr.
template <device::tile_arithmetic Arithmetic>
struct tiled_runner {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool ta, const B& b, bool tb) {
    using csr_type = csr<T, gpu>;
    const auto tiled_transpose = [](const auto& m) {
      return convert<tiled>(cached_transpose(cached_convert<csr_type>(m)));
    };
    const auto multiply = [&](const auto& left, const auto& right) {
      return device::tiled_to_csr(device::tiled_spgemm(alpha, left, right, Arithmetic));
    };
    if (ta && tb) return multiply(tiled_transpose(a), tiled_transpose(b));
    if (ta) return multiply(tiled_transpose(a), b);
    if (tb) return multiply(a, tiled_transpose(b));
    return multiply(a, b);
  }
};
template <>
struct runner<kernels::tiled_spgemm> : tiled_runner<device::tile_arithmetic::native> {};
template <>
struct runner<kernels::tiled_spgemm_fp16> : tiled_runner<device::tile_arithmetic::fp16> {};

template <>
struct runner<kernels::cusparse_spgemm> {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool ta, const B& b, bool tb) {
    // cuSPARSE SpGEMM supports no transposes: transposed operands are cached copies.
    auto c = device::spgemm(ta ? cached_transpose(a) : a, tb ? cached_transpose(b) : b);
    if (alpha != T(1)) device::scale(alpha, c.values().data(), c.nnz());
    return c;
  }
};

template <>
struct runner<kernels::cublas_geam> {
  template <class X, class Y, class Dest, class T>
  static void sum(T a, const X& x, bool tx, T b, const Y& y, bool ty, Dest& dest) {
    device::geam(a, x, op(tx), b, y, op(ty), dest);
  }
};

template <>
struct runner<kernels::spade_axpby> {
  template <class X, class Y, class Dest, class T>
  static void sum(T a, const X& x, bool, T b, const Y& y, bool, Dest& dest) {
    device::axpby(a, x, b, y, dest);
  }
};

template <>
struct runner<kernels::cusparse_csr_add> {
  template <class X, class Y, class T>
  static auto sparse_sum(T a, const X& x, bool tx, T b, const Y& y, bool ty) {
    return device::csr_add(a, tx ? cached_transpose(x) : x, b, ty ? cached_transpose(y) : y);
  }
};

template <>
struct vector_kernels<gpu> {
  template <class T>
  static void scale(T s, T* values, std::int64_t count) {
    device::scale(s, values, count);
  }
  template <class V>
  static auto dot(const V& u, const V& v) {
    return device::dot(u, v);
  }
  template <class V>
  static auto norm(const V& u) {
    return device::nrm2(u);
  }
};

}  // namespace spade::detail
