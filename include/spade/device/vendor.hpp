// Declarations of the cuBLAS / cuSPARSE calls (and small kernels of ours) defined in lib/vendor.
#pragma once

#include <cstdint>
#include <string>

#include "spade/core/context.hpp"
#include "spade/core/strided.hpp"
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
/// spmm_algorithm::automatic picks ALG3 or ALG2 from the shapes (plan::spmm_alg2_preferred,
/// with the cut-offs in spade::tuning()); a planned product passes the planner's choice, which
/// also reads A's longest row (detail::planned_spmm_alg2) and takes ALG1 for narrow B over
/// large skewed matrices (detail::planned_spmm_alg1).
enum class spmv_algorithm { csr_alg1, csr_alg2 };
enum class spmm_algorithm { csr_alg1, csr_alg2, csr_alg3, automatic };

/// C = alpha·op(A)·op(B) + beta·C with cuBLAS GEMM; any layouts, no copies (row-major operands
/// are handled by transposition identities). beta = 0 ignores C's contents (NaN included).
template <scalar T, layout LA, layout LB, layout LC>
void gemm(T alpha, const dense<T, gpu, LA>& a, operation op_a, const dense<T, gpu, LB>& b,
          operation op_b, T beta, dense<T, gpu, LC>& c);

/// y = alpha·op(A)·x + beta·y with cuBLAS GEMV.
template <scalar T, layout L>
void gemv(T alpha, const dense<T, gpu, L>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y);

/// gemm with A and B read in place through their leading dimensions (either may be a view).
template <scalar T, layout LC>
void gemm_strided(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& b,
                  operation op_b, T beta, dense<T, gpu, LC>& c);

/// gemv with A read through its leading dimension and x through its increment x.ld.
template <scalar T>
void gemv_strided(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& x,
                  T beta, vector<T, gpu>& y);

/// gemm and gemv on strided operands under the names the runners call (device/run.hpp).
template <scalar T, layout LC>
void gemm(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& b,
          operation op_b, T beta, dense<T, gpu, LC>& c) {
  gemm_strided(alpha, a, op_a, b, op_b, beta, c);
}
template <scalar T>
void gemv(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& x, T beta,
          vector<T, gpu>& y) {
  gemv_strided(alpha, a, op_a, x, beta, y);
}

/// y = alpha·op(A)·x + beta·y with cusparseSpMV on CSR. The workspace comes from the pool.
/// An A that plan::rowwise_preferred names (spade::tuning().rowwise_max_extent rows and columns)
/// runs rowwise_spmv instead, whatever `algorithm` says (docs/vendor-bugs.md).
template <scalar T>
void spmv(T alpha, const csr<T, gpu>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y, spmv_algorithm algorithm = spmv_algorithm::csr_alg1);

/// C = alpha·op(A)·B + beta·C with cusparseSpMM on CSR; B and C dense in any layout.
/// ALG2/ALG3 run cusparseSpMM_preprocess once per operation, algorithm and dense shapes
/// (cached on A, whatever B's and C's addresses). ALG1 runs without it: planned ALG1 products
/// ran within 3 % of spade-bench's ALG1 baseline, which is preprocessed
/// (docs/benchmarks/spmm-narrow-2026-11-28.md). An A that plan::rowwise_preferred names runs
/// rowwise_spmm instead, whatever `algorithm` says.
template <scalar T, layout LB, layout LC>
void spmm(T alpha, const csr<T, gpu>& a, operation op_a, const dense<T, gpu, LB>& b, T beta,
          dense<T, gpu, LC>& c, spmm_algorithm algorithm = spmm_algorithm::automatic);

/// How many cuSPARSE SpMM descriptors spmm has prepared (buffer-size query, workspace and, for
/// ALG2/ALG3, cusparseSpMM_preprocess) in this process. A csr keeps its last one while the
/// operation, algorithm and the dense operands' shapes, leading dimensions and orders stay the
/// same, whatever their addresses; tests read this to check that repeated products reuse it.
std::uint64_t cusparse_spmm_preparations() noexcept;

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
