// Kernel tags: the names plans, explain() and eval<K>() use for each way to compute a node.
#pragma once

#include "spade/core/space.hpp"

namespace spade::kernels {

/// How a kernel reads an operand the expression transposes: through an op flag of its own, or
/// from a transposed copy (of sparse operands only: copy_if_sparse) that the evaluator makes first
/// — cached on the operand, counted in conversion_counter() and listed by explain as a step.
enum class transposed_read { op_flag, copy, copy_if_sparse };

/// What a kernel's raw result needs before it is the node's result: nothing, a relayout (the
/// kernel writes row-major only; a col-major destination gets a row-major result converted), or
/// a conversion from tiles to csr.
enum class result_copy { none, from_row_major, from_tiles };

/// The defaults of a kernel tag: both operands through op flags, the result as it is. Tags derive
/// from reads<...> to say which transposed operands they need copied.
template <transposed_read Lhs, transposed_read Rhs, result_copy Result = result_copy::none>
struct reads {
  static constexpr transposed_read lhs_transposed = Lhs;
  static constexpr transposed_read rhs_transposed = Rhs;
  static constexpr result_copy result = Result;
};
using op_flags = reads<transposed_read::op_flag, transposed_read::op_flag>;
using transposed_rhs_copied = reads<transposed_read::op_flag, transposed_read::copy>;
using transposed_copied = reads<transposed_read::copy, transposed_read::copy>;

// Eigen on the host: the cpu path and the reference for every GPU result.
struct eigen_product : op_flags {
  static constexpr const char* name = "eigen_product";
  using space = cpu;
};
struct eigen_sum : reads<transposed_read::copy_if_sparse, transposed_read::copy_if_sparse> {
  static constexpr const char* name = "eigen_sum";
  using space = cpu;
};

// Vendor libraries on the GPU.
struct cublas_gemm : op_flags {
  static constexpr const char* name = "cublas_gemm";
  using space = gpu;
};
struct cublas_gemv : op_flags {
  static constexpr const char* name = "cublas_gemv";
  using space = gpu;
};
struct cublas_geam : op_flags {
  static constexpr const char* name = "cublas_geam";
  using space = gpu;
};
struct cusparse_spmv : op_flags {
  static constexpr const char* name = "cusparse_spmv";
  using space = gpu;
};
struct cusparse_spmm : transposed_rhs_copied {
  static constexpr const char* name = "cusparse_spmm";
  using space = gpu;
};
struct cusparse_spgemm : transposed_copied {
  static constexpr const char* name = "cusparse_spgemm";
  using space = gpu;
};
struct cusparse_csr_add : transposed_copied {
  static constexpr const char* name = "cusparse_csr_add";
  using space = gpu;
};
// SDDMM, S ∘ (X·Yᵀ) sampled at S's entries: Eigen on the host (a dot product per entry), Spade's
// kernel and cusparseSDDMM (which samples the pattern only; S's values are multiplied in after).
struct eigen_sddmm : op_flags {
  static constexpr const char* name = "eigen_sddmm";
  using space = cpu;
};
struct sddmm : op_flags {
  static constexpr const char* name = "sddmm";
  using space = gpu;
};
struct cusparse_sddmm : op_flags {
  static constexpr const char* name = "cusparse_sddmm";
  using space = gpu;
};
// Ours: GCOO sparse × row-major dense (paper 000/001, re-designed for sm_90), and the paper's
// Algorithm 2 as published (the baseline; chosen only when forced).
struct gcoo_spmm
    : reads<transposed_read::copy, transposed_read::copy, result_copy::from_row_major> {
  static constexpr const char* name = "gcoo_spmm";
  using space = gpu;
};
struct gcoo_spmm_paper
    : reads<transposed_read::copy, transposed_read::copy, result_copy::from_row_major> {
  static constexpr const char* name = "gcoo_spmm_paper";
  using space = gpu;
};
// Ours: ELLPACK-R sparse × vector (paper 003) — the paper's thread per row, ELLR-T, sliced
// SELL-C-σ — also for up to 8 right-hand sides at once.
struct ellr_spmv : transposed_copied {
  static constexpr const char* name = "ellr_spmv";
  using space = gpu;
};
// Ours: small csr operands row by row (a warp per row for × vector, a thread per element of C
// for × dense), one launch without workspace, where cuSPARSE's setup costs as much as the
// product and 12.6 returned wrong rows for some 32-row matrices (docs/vendor-bugs.md).
struct csr_rowwise : transposed_rhs_copied {
  static constexpr const char* name = "csr_rowwise";
  using space = gpu;
};
// Ours: hash-based two-phase sparse × sparse (paper 004, OpSparse), tables sized for the device.
struct hash_spgemm : transposed_copied {
  static constexpr const char* name = "hash_spgemm";
  using space = gpu;
};
// Ours: bitmap-tiled sparse × sparse on tensor cores (paper 002, tSparse) in the scalar's own
// precision (fp64 DMMA, fp32 as 3×TF32), and the paper's fp16-input mode, lossy, chosen only
// when forced.
struct tiled_spgemm : reads<transposed_read::copy, transposed_read::copy, result_copy::from_tiles> {
  static constexpr const char* name = "tiled_spgemm";
  using space = gpu;
};
struct tiled_spgemm_fp16
    : reads<transposed_read::copy, transposed_read::copy, result_copy::from_tiles> {
  static constexpr const char* name = "tiled_spgemm_fp16";
  using space = gpu;
};
// Ours: sparse × dense over 8×8 bitmap tiles on tensor cores (fp64 DMMA, fp32 as 3×TF32), B
// and C of either layout, and its plain-TF32 mode, lossy, chosen only when forced.
struct tiled_spmm : transposed_copied {
  static constexpr const char* name = "tiled_spmm";
  using space = gpu;
};
struct tiled_spmm_tf32 : transposed_copied {
  static constexpr const char* name = "tiled_spmm_tf32";
  using space = gpu;
};
// Ours: z = a·x + b·y in one pass.
struct spade_axpby : op_flags {
  static constexpr const char* name = "spade_axpby";
  using space = gpu;
};

}  // namespace spade::kernels
