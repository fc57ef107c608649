// Kernel tags: the names plans, explain() and eval<K>() use for each way to compute a node.
#pragma once

#include "spade/core/space.hpp"

namespace spade::kernels {

// Eigen on the host: the cpu path and the reference for every GPU result.
struct eigen_product {
  static constexpr const char* name = "eigen_product";
  using space = cpu;
};
struct eigen_sum {
  static constexpr const char* name = "eigen_sum";
  using space = cpu;
};

// Vendor libraries on the GPU.
struct cublas_gemm {
  static constexpr const char* name = "cublas_gemm";
  using space = gpu;
};
struct cublas_gemv {
  static constexpr const char* name = "cublas_gemv";
  using space = gpu;
};
struct cublas_geam {
  static constexpr const char* name = "cublas_geam";
  using space = gpu;
};
struct cusparse_spmv {
  static constexpr const char* name = "cusparse_spmv";
  using space = gpu;
};
struct cusparse_spmm {
  static constexpr const char* name = "cusparse_spmm";
  using space = gpu;
};
struct cusparse_spgemm {
  static constexpr const char* name = "cusparse_spgemm";
  using space = gpu;
};
struct cusparse_csr_add {
  static constexpr const char* name = "cusparse_csr_add";
  using space = gpu;
};
// Ours: GCOO sparse × row-major dense (paper 000/001, re-designed for sm_90), and the paper's
// Algorithm 2 as published (the baseline; chosen only when forced).
struct gcoo_spmm {
  static constexpr const char* name = "gcoo_spmm";
  using space = gpu;
};
struct gcoo_spmm_paper {
  static constexpr const char* name = "gcoo_spmm_paper";
  using space = gpu;
};
// Ours: ELLPACK-R sparse × vector (paper 003) — the paper's thread per row, ELLR-T, sliced
// SELL-C-σ — also for up to 8 right-hand sides at once.
struct ellr_spmv {
  static constexpr const char* name = "ellr_spmv";
  using space = gpu;
};
// Ours: small csr operands row by row (a warp per row for × vector, a thread per element of C
// for × dense), one launch without workspace, where cuSPARSE's setup costs as much as the
// product and 12.6 returned wrong rows for some 32-row matrices (docs/vendor-bugs.md).
struct csr_rowwise {
  static constexpr const char* name = "csr_rowwise";
  using space = gpu;
};
// Ours: hash-based two-phase sparse × sparse (paper 004, OpSparse), tables sized for the device.
struct hash_spgemm {
  static constexpr const char* name = "hash_spgemm";
  using space = gpu;
};
// Ours: bitmap-tiled sparse × sparse on tensor cores (paper 002, tSparse) in the scalar's own
// precision (fp64 DMMA, fp32 as 3×TF32), and the paper's fp16-input mode, lossy, chosen only
// when forced.
struct tiled_spgemm {
  static constexpr const char* name = "tiled_spgemm";
  using space = gpu;
};
struct tiled_spgemm_fp16 {
  static constexpr const char* name = "tiled_spgemm_fp16";
  using space = gpu;
};
// Ours: z = a·x + b·y in one pass.
struct spade_axpby {
  static constexpr const char* name = "spade_axpby";
  using space = gpu;
};

}  // namespace spade::kernels
