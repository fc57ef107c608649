// Declarations of the cuBLAS / cuSPARSE calls (and small kernels of ours) defined in lib/vendor.
#pragma once

#include <cstdint>
#include <string>

#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/vector.hpp"

/// Every function runs on the context that owns its operands (default_context() for empty
/// ones), is asynchronous with respect to the host unless it says otherwise, and throws
/// spade::cuda_error naming the failing library call. Shapes are the caller's responsibility
/// (the evaluator checks them and throws dimension_mismatch first); each function still checks
/// them with SPADE_ASSERT-level cost (a comparison) and throws dimension_mismatch.
namespace spade::device {

/// op(X): X itself or its transpose.
enum class operation { none, transpose };

/// cuSPARSE SpMV / SpMM algorithm choices (CUSPARSE_SPMV_CSR_ALG1/2, CUSPARSE_SPMM_CSR_ALG1/2/3).
/// spmm_algorithm::automatic picks ALG3 or ALG2 from the shape of C (see below).
enum class spmv_algorithm { csr_alg1, csr_alg2 };
enum class spmm_algorithm { csr_alg1, csr_alg2, csr_alg3, automatic };

/// spmm_algorithm::automatic: ALG2 when B has at least spmm_alg2_min_columns columns and C at
/// least spmm_alg2_min_elements (float) / spmm_alg2_min_elements_fp64 (double) elements, or
/// when B has at least spmm_alg2_wide_columns columns and A from spmm_alg2_wide_min_mean_row to
/// below spmm_alg2_wide_max_mean_row entries per row on average; else ALG3.
/// From spade-bench spmm on the H100: at N = 32 ALG3 won on every real and synthetic matrix,
/// rmat's 1 M rows included (ALG2 there ran 0.67×). At N = 128 ALG2 won in float from 5·10⁶
/// elements of C (ct2010, nh2010, cage11, soc-Slashdot0902; ALG3 still won at 4.4–4.7·10⁶) and
/// in double from about 2·10⁶ (Dubcova1, astro-ph, as-caida: ALG3 lost up to 1.5×). At N = 512
/// ALG2 won on the real matrices with ≥ 8 entries per row (bayer03 1.65×, mhd3200a 1.45×,
/// s1rmq4m1 1.44×) except the power-law ego-Facebook (ALG3 1.24× faster) and wiki-Vote (1.08×),
/// ALG3 on shorter rows; at N = 256 ALG3 still won on all of them (zenios 1.8×). Random rows of
/// 80–800 entries (the paper's squares at density 0.02–0.1) went back to ALG3 (up to 1.7×).
/// docs/benchmarks/spmm-real-2026-11-22d.csv, spmm-real-fp64-2026-11-22d.csv,
/// spmm-real-wide-2026-11-22d.csv, spmm-paper-2026-11-22d.csv.
inline constexpr std::int64_t spmm_alg2_min_columns = 64;
inline constexpr std::int64_t spmm_alg2_min_elements = 5'000'000;
inline constexpr std::int64_t spmm_alg2_min_elements_fp64 = 1'800'000;
inline constexpr std::int64_t spmm_alg2_wide_columns = 512;
inline constexpr std::int64_t spmm_alg2_wide_min_mean_row = 8;
inline constexpr std::int64_t spmm_alg2_wide_max_mean_row = 64;
/// fp64 on short rows (mean < 6 entries) with C past the L2 cache: ALG2 from 16 columns.
/// circuit_1M_3 / circuit_1.6M_4.8 (3 and 4.8 per row) at N = 32: ALG2 0.417 / 0.829 ms,
/// ALG3 0.749 / 1.353; at N = 16 ALG2 0.331 / 0.674, ALG3 0.387 / 0.698. At 6.96 per row
/// (stencil7_160^3, N = 16) and 16–27 per row ALG3 won, and so did L2-resident Cs of short rows
/// (ct2010, 67578 x 32). fp32 kept ALG3 at N = 16–32 on the same circuits. H100, 2026-11-24.
inline constexpr std::int64_t spmm_alg2_short_row_max_mean = 6;
inline constexpr std::int64_t spmm_alg2_short_row_min_columns_fp64 = 16;
inline constexpr std::int64_t spmm_alg2_short_row_min_elements_fp64 = 8'000'000;

/// C = alpha·op(A)·op(B) + beta·C with cuBLAS GEMM; any layouts, no copies (row-major operands
/// are handled by transposition identities). beta = 0 ignores C's contents (NaN included).
template <scalar T, layout LA, layout LB, layout LC>
void gemm(T alpha, const dense<T, gpu, LA>& a, operation op_a, const dense<T, gpu, LB>& b,
          operation op_b, T beta, dense<T, gpu, LC>& c);

/// y = alpha·op(A)·x + beta·y with cuBLAS GEMV.
template <scalar T, layout L>
void gemv(T alpha, const dense<T, gpu, L>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y);

/// y = alpha·op(A)·x + beta·y with cusparseSpMV on CSR. The workspace comes from the pool.
/// An A of at most rowwise_max_extent rows and columns (kernels.hpp) runs rowwise_spmv instead,
/// whatever `algorithm` says (docs/vendor-bugs.md).
template <scalar T>
void spmv(T alpha, const csr<T, gpu>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y, spmv_algorithm algorithm = spmv_algorithm::csr_alg1);

/// C = alpha·op(A)·B + beta·C with cusparseSpMM on CSR; B and C dense in any layout.
/// ALG2/ALG3 run cusparseSpMM_preprocess once per operand set (cached on A). An A of at most
/// rowwise_max_extent rows and columns (kernels.hpp) runs rowwise_spmm instead, whatever
/// `algorithm` says.
template <scalar T, layout LB, layout LC>
void spmm(T alpha, const csr<T, gpu>& a, operation op_a, const dense<T, gpu, LB>& b, T beta,
          dense<T, gpu, LC>& c, spmm_algorithm algorithm = spmm_algorithm::automatic);

/// C = A·B (both CSR, sorted) with cusparseSpGEMM (reuse variant when available); the handle
/// is the context's. Synchronises to learn nnz(C). Throws out_of_memory when the workspace
/// does not fit.
template <scalar T>
csr<T, gpu> spgemm(const csr<T, gpu>& a, const csr<T, gpu>& b);

/// C = alpha·A + beta·B for CSR of equal shape (cusparse csrgeam2). Synchronises for nnz(C).
template <scalar T>
csr<T, gpu> csr_add(T alpha, const csr<T, gpu>& a, T beta, const csr<T, gpu>& b);

/// C = alpha·op(A) + beta·op(B) with cuBLAS GEAM (C may alias A or B when op is none).
template <scalar T, layout L>
void geam(T alpha, const dense<T, gpu, L>& a, operation op_a, T beta, const dense<T, gpu, L>& b,
          operation op_b, dense<T, gpu, L>& c);

/// z = a·x + b·y in one kernel of ours (z may alias x or y).
template <scalar T>
void axpby(T a, const vector<T, gpu>& x, T b, const vector<T, gpu>& y, vector<T, gpu>& z);

/// x·y and ‖x‖₂ with cuBLAS; synchronous (the scalar is returned to the host).
template <scalar T>
T dot(const vector<T, gpu>& x, const vector<T, gpu>& y);
template <scalar T>
T nrm2(const vector<T, gpu>& x);

/// Aᵀ as CSR (cusparseCsr2cscEx2): the cached transposed copy the planner uses when an
/// operation flag is not supported or slower.
template <scalar T>
csr<T, gpu> transpose(const csr<T, gpu>& a);

/// X·s for every element, in place (cuBLAS SCAL); used for scaled sparse results.
template <scalar T>
void scale(T s, T* d_values, std::int64_t count);

}  // namespace spade::device
