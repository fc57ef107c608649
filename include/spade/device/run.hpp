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

/// cusparseSpMM's algorithm number (1–3) as the device enum.
inline device::spmm_algorithm spmm_algorithm_of(int number) {
  return number == 1   ? device::spmm_algorithm::csr_alg1
         : number == 2 ? device::spmm_algorithm::csr_alg2
                       : device::spmm_algorithm::csr_alg3;
}

/// cusparseSpMM's algorithm for a planned product C = op(A)·B: a tuned one, else the rules
/// (planned_spmm_algorithm_choice, eval/operands.hpp).
template <class A, class B, class Dest>
device::spmm_algorithm planned_spmm_algorithm(const A& a, bool ta, const B&, const Dest& dest) {
  return spmm_algorithm_of(
      planned_spmm_algorithm_choice(a, ta, !is_col_major_v<B> && !is_col_major_v<Dest>, dest.rows(),
                                    dest.cols())
          .number);
}

template <>
struct runner<kernels::cusparse_spmm> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool, T beta, Dest& dest) {
    // SpMM has no op flag for the dense operand: run_steps passed a transposed one as a copy.
    ++product_uses_of(a).count;  // ellr_min_uses counts the products run on A as it is
    device::spmm(alpha, a, op(ta), b, beta, dest, planned_spmm_algorithm(a, ta, b, dest));
  }
};

/// Small csr operands: Spade's row-wise kernels (device/kernels.hpp), op(A) by flag (a
/// transposed B comes as a copy). Counted as a product on A as it is, like cuSPARSE's.
template <>
struct runner<kernels::csr_rowwise> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool, T beta, Dest& dest) {
    ++product_uses_of(a).count;
    if constexpr (is_vector_v<Dest>)
      device::rowwise_spmv(alpha, a, op(ta), b, beta, dest);
    else
      device::rowwise_spmm(alpha, a, op(ta), b, beta, dest);
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

/// gcoo_spmm and the paper's kernel: row-major B and C only. The plan converts a col-major B
/// (a cached row-major copy); run_steps transposes operands and relays a col-major C. The planner
/// declines gcoo for a transposed A or a col-major C unless forced.
template <class Kernel>
struct gcoo_runner {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool, const B& b, bool, T beta, Dest& dest) {
    static_assert(std::is_same_v<typename B::layout_type, row_major> &&
                      std::is_same_v<typename Dest::layout_type, row_major>,
                  "spade: internal: gcoo_spmm runs on row-major B and C (run_steps makes them)");
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>)
      device::gcoo_spmm(alpha, a, b, beta, dest);
    else
      device::gcoo_spmm_paper(alpha, a, b, beta, dest);
  }
};
template <>
struct runner<kernels::gcoo_spmm> : gcoo_runner<kernels::gcoo_spmm> {};
template <>
struct runner<kernels::gcoo_spmm_paper> : gcoo_runner<kernels::gcoo_spmm_paper> {};

template <>
struct runner<kernels::ellr_spmv> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool, const B& b, bool, T beta, Dest& dest) {
    // The planner declines a transposed A or B unless forced; run_steps then passes copies.
    if constexpr (is_vector_v<Dest>)
      device::ellr_spmv(alpha, a, b, beta, dest);
    else
      device::ellr_spmm(alpha, a, b, beta, dest);
  }
};

template <>
struct runner<kernels::hash_spgemm> {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool, const B& b, bool) {
    // Row-wise products read rows (run_steps passes transposed operands as copies); alpha
    // scales A's values as they are read.
    return device::hash_spgemm(alpha, a, b);
  }
};

/// tiled_spgemm in the scalar's own precision or with fp16 inputs: C as tiles, which run_steps
/// converts to csr. The planner declines transposed operands; a forced run gets cached
/// transposed tiles from run_steps.
template <device::tile_arithmetic Arithmetic>
struct tiled_runner {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool, const B& b, bool) {
    return device::tiled_spgemm(alpha, a, b, Arithmetic);
  }
};
template <>
struct runner<kernels::tiled_spgemm> : tiled_runner<device::tile_arithmetic::native> {};
template <>
struct runner<kernels::tiled_spgemm_fp16> : tiled_runner<device::tile_arithmetic::fp16> {};

/// tiled_spmm: any layout of B and C. The planner declines a transposed A; a forced run gets
/// cached transposed tiles from run_steps.
template <device::spmm_arithmetic Arithmetic>
struct tiled_spmm_runner {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool, const B& b, bool, T beta, Dest& dest) {
    device::tiled_spmm(alpha, a, b, beta, dest, Arithmetic);
  }
};
template <>
struct runner<kernels::tiled_spmm> : tiled_spmm_runner<device::spmm_arithmetic::native> {};
template <>
struct runner<kernels::tiled_spmm_tf32> : tiled_spmm_runner<device::spmm_arithmetic::tf32> {};

template <>
struct runner<kernels::cusparse_spgemm> {
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool, const B& b, bool) {
    // cuSPARSE SpGEMM supports no transposes: run_steps passes transposed operands as copies.
    auto c = device::spgemm(a, b);
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
  static auto sparse_sum(T a, const X& x, bool, T b, const Y& y, bool) {
    return device::csr_add(a, x, b, y);  // transposed operands come as copies
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
