// spade-bench's baselines: cuSPARSE and cuBLAS called directly, on Spade's own input buffers,
// with handles, descriptors, workspaces and *_preprocess done once, outside the timed region.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.hpp"

namespace spade::bench {

/// A workspace of at least one byte: a null buffer asks some cuSPARSE calls for a size.
inline raw_buffer workspace(std::size_t bytes, cudaStream_t stream) {
  return raw_buffer(std::max<std::size_t>(bytes, 1), stream);
}

/// Stream-ordered memory of the baselines comes from the device's default pool; it keeps
/// freed memory (as Spade's pool does) so neither side pays the driver on each call.
inline void keep_default_pool() {
  cudaMemPool_t pool = nullptr;
  check_cuda(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep = ~std::uint64_t{0};
  check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
             "cudaMemPoolSetAttribute");
}
/// Gives the default pool's unused memory back (between matrices).
inline void trim_default_pool() {
  cudaMemPool_t pool = nullptr;
  if (cudaDeviceGetDefaultMemPool(&pool, 0) == cudaSuccess) cudaMemPoolTrimTo(pool, 0);
}

inline cusparse_handle make_cusparse(cudaStream_t stream) {
  cusparse_handle h;
  check_cusparse(cusparseCreate(h.out()), "cusparseCreate");
  check_cusparse(cusparseSetStream(h.get(), stream), "cusparseSetStream");
  check_cusparse(cusparseSetPointerMode(h.get(), CUSPARSE_POINTER_MODE_HOST),
                 "cusparseSetPointerMode");
  return h;
}

inline cublas_handle make_cublas(cudaStream_t stream) {
  cublas_handle h;
  check_cublas(cublasCreate(h.out()), "cublasCreate");
  check_cublas(cublasSetStream(h.get(), stream), "cublasSetStream");
  check_cublas(cublasSetPointerMode(h.get(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  return h;  // default math mode: no TF32 (BENCHMARKS.md's SGEMM figures are without it)
}

template <class T>
void describe_csr(const_sp_mat& d, const csr<T, gpu>& a) {
  check_cusparse(cusparseCreateConstCsr(d.out(), a.rows(), a.cols(), a.nnz(), a.row_ptr().data(),
                                        a.col_idx().data(), a.values().data(), CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, cuda_type<T>),
                 "cusparseCreateConstCsr");
}

/// One configuration of a baseline; `error` is set when the library refused it.
struct variant_status {
  std::string name;
  std::string error;
};

// ---- SpMV: y = A·x, CSR ALG1 and ALG2 ----------------------------------------------------------

template <class T>
class spmv_baseline {
 public:
  struct variant {
    variant_status status;
    cusparseSpMVAlg_t alg{};
    const_sp_mat a;
    const_dn_vec x;
    dn_vec y;
    raw_buffer work;
  };

  spmv_baseline(const csr<T, gpu>& a, const vector<T, gpu>& x, vector<T, gpu>& y,
                cudaStream_t stream)
      : handle_(make_cusparse(stream)) {
    add(a, x, y, stream, "cusparse_spmv_csr_alg1", CUSPARSE_SPMV_CSR_ALG1);
    add(a, x, y, stream, "cusparse_spmv_csr_alg2", CUSPARSE_SPMV_CSR_ALG2);
  }
  std::vector<variant>& variants() noexcept { return variants_; }

  void run(variant& v) {
    check_cusparse(cusparseSpMV(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, v.a.get(),
                                v.x.get(), &zero_, v.y.get(), cuda_type<T>, v.alg, v.work.get()),
                   "cusparseSpMV");
  }

 private:
  void add(const csr<T, gpu>& a, const vector<T, gpu>& x, vector<T, gpu>& y, cudaStream_t stream,
           const char* name, cusparseSpMVAlg_t alg) {
    variant& v = variants_.emplace_back();
    v.status.name = name;
    v.alg = alg;
    try {
      describe_csr(v.a, a);
      check_cusparse(cusparseCreateConstDnVec(v.x.out(), x.size(), x.data(), cuda_type<T>),
                     "cusparseCreateConstDnVec");
      check_cusparse(cusparseCreateDnVec(v.y.out(), y.size(), y.data(), cuda_type<T>),
                     "cusparseCreateDnVec");
      std::size_t bytes = 0;
      check_cusparse(
          cusparseSpMV_bufferSize(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, v.a.get(),
                                  v.x.get(), &zero_, v.y.get(), cuda_type<T>, alg, &bytes),
          "cusparseSpMV_bufferSize");
      v.work = workspace(bytes, stream);
      // Optional analysis; an algorithm without one reports NOT_SUPPORTED and runs anyway.
      const cusparseStatus_t pre =
          cusparseSpMV_preprocess(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, v.a.get(),
                                  v.x.get(), &zero_, v.y.get(), cuda_type<T>, alg, v.work.get());
      if (pre != CUSPARSE_STATUS_NOT_SUPPORTED) check_cusparse(pre, "cusparseSpMV_preprocess");
    } catch (const std::exception& e) {
      v.status.error = e.what();
    }
  }

  cusparse_handle handle_;
  std::vector<variant> variants_;
  T one_ = T(1);
  T zero_ = T(0);
};

// ---- SpMM: C = A·B, B and C row-major (Spade's default layout), CSR ALG1, ALG2, ALG3 -----------

template <class T>
class spmm_baseline {
 public:
  struct variant {
    variant_status status;
    cusparseSpMMAlg_t alg{};
    const_sp_mat a;
    const_dn_mat b;
    dn_mat c;
    raw_buffer work;
  };

  spmm_baseline(const csr<T, gpu>& a, const dense<T, gpu>& b, dense<T, gpu>& c, cudaStream_t stream)
      : handle_(make_cusparse(stream)) {
    add(a, b, c, stream, "cusparse_spmm_csr_alg1", CUSPARSE_SPMM_CSR_ALG1);
    add(a, b, c, stream, "cusparse_spmm_csr_alg2", CUSPARSE_SPMM_CSR_ALG2);
    add(a, b, c, stream, "cusparse_spmm_csr_alg3", CUSPARSE_SPMM_CSR_ALG3);
  }
  std::vector<variant>& variants() noexcept { return variants_; }

  void run(variant& v) {
    check_cusparse(cusparseSpMM(handle_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, v.a.get(), v.b.get(),
                                &zero_, v.c.get(), cuda_type<T>, v.alg, v.work.get()),
                   "cusparseSpMM");
  }

 private:
  void add(const csr<T, gpu>& a, const dense<T, gpu>& b, dense<T, gpu>& c, cudaStream_t stream,
           const char* name, cusparseSpMMAlg_t alg) {
    variant& v = variants_.emplace_back();
    v.status.name = name;
    v.alg = alg;
    try {
      describe_csr(v.a, a);
      check_cusparse(cusparseCreateConstDnMat(v.b.out(), b.rows(), b.cols(), b.cols(), b.data(),
                                              cuda_type<T>, CUSPARSE_ORDER_ROW),
                     "cusparseCreateConstDnMat");
      check_cusparse(cusparseCreateDnMat(v.c.out(), c.rows(), c.cols(), c.cols(), c.data(),
                                         cuda_type<T>, CUSPARSE_ORDER_ROW),
                     "cusparseCreateDnMat");
      std::size_t bytes = 0;
      const auto none = CUSPARSE_OPERATION_NON_TRANSPOSE;
      check_cusparse(cusparseSpMM_bufferSize(handle_.get(), none, none, &one_, v.a.get(), v.b.get(),
                                             &zero_, v.c.get(), cuda_type<T>, alg, &bytes),
                     "cusparseSpMM_bufferSize");
      v.work = workspace(bytes, stream);
      const cusparseStatus_t pre =
          cusparseSpMM_preprocess(handle_.get(), none, none, &one_, v.a.get(), v.b.get(), &zero_,
                                  v.c.get(), cuda_type<T>, alg, v.work.get());
      if (pre != CUSPARSE_STATUS_NOT_SUPPORTED) check_cusparse(pre, "cusparseSpMM_preprocess");
    } catch (const std::exception& e) {
      v.status.error = e.what();
    }
  }

  cusparse_handle handle_;
  std::vector<variant> variants_;
  T one_ = T(1);
  T zero_ = T(0);
};

// ---- SpGEMM: C = A·B with cusparseSpGEMM (DEFAULT; ALG3, the chunked low-memory one) ---------

/// The whole SpGEMM pipeline per run (work estimation, compute, nnz(C) to the host, C's arrays
/// allocated, copy): nnz(C) is unknown until it has run, so none of it can move out of the
/// timed region. A and B's descriptors and the handle are made once.
template <class T>
class spgemm_baseline {
 public:
  struct variant {
    variant_status status;
    cusparseSpGEMMAlg_t alg{};
  };

  spgemm_baseline(const csr<T, gpu>& a, const csr<T, gpu>& b, cudaStream_t stream,
                  bool all_algorithms)
      : stream_(stream),
        handle_(make_cusparse(stream)),
        rows_(a.rows()),
        cols_(b.cols()),
        row_ptr_(sizeof(index_t) * (static_cast<std::size_t>(a.rows()) + 1), stream) {
    describe_csr(a_, a);
    describe_csr(b_, b);
    variants_.push_back({{"cusparse_spgemm_default", {}}, CUSPARSE_SPGEMM_DEFAULT});
    variants_.push_back({{"cusparse_spgemm_alg3", {}}, CUSPARSE_SPGEMM_ALG3});
    if (all_algorithms) variants_.push_back({{"cusparse_spgemm_alg2", {}}, CUSPARSE_SPGEMM_ALG2});
  }
  std::vector<variant>& variants() noexcept { return variants_; }

  void run(const variant& v) {
    const auto none = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseHandle_t h = handle_.get();
    const cudaDataType_t type = cuda_type<T>;
    col_idx_.release();
    values_.release();
    nnz_ = 0;
    sp_mat c;
    check_cusparse(
        cusparseCreateCsr(c.out(), rows_, cols_, 0, row_ptr_.get(), nullptr, nullptr,
                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
        "cusparseCreateCsr (C)");
    spgemm_descr d;
    check_cusparse(cusparseSpGEMM_createDescr(d.out()), "cusparseSpGEMM_createDescr");
    std::size_t bytes1 = 0;
    check_cusparse(cusparseSpGEMM_workEstimation(h, none, none, &one_, a_.get(), b_.get(), &zero_,
                                                 c.get(), type, v.alg, d.get(), &bytes1, nullptr),
                   "cusparseSpGEMM_workEstimation (size)");
    raw_buffer work1 = workspace(bytes1, stream_);
    check_cusparse(
        cusparseSpGEMM_workEstimation(h, none, none, &one_, a_.get(), b_.get(), &zero_, c.get(),
                                      type, v.alg, d.get(), &bytes1, work1.get()),
        "cusparseSpGEMM_workEstimation");
    raw_buffer work2;
    std::size_t bytes2 = 0;
    if (v.alg == CUSPARSE_SPGEMM_ALG2 || v.alg == CUSPARSE_SPGEMM_ALG3) {
      std::size_t bytes3 = 0;
      check_cusparse(cusparseSpGEMM_estimateMemory(h, none, none, &one_, a_.get(), b_.get(), &zero_,
                                                   c.get(), type, v.alg, d.get(), chunk_fraction,
                                                   &bytes3, nullptr, nullptr),
                     "cusparseSpGEMM_estimateMemory (size)");
      raw_buffer work3 = workspace(bytes3, stream_);
      check_cusparse(cusparseSpGEMM_estimateMemory(h, none, none, &one_, a_.get(), b_.get(), &zero_,
                                                   c.get(), type, v.alg, d.get(), chunk_fraction,
                                                   &bytes3, work3.get(), &bytes2),
                     "cusparseSpGEMM_estimateMemory");
      work3.release();
      work2 = workspace(bytes2, stream_);
    } else {
      check_cusparse(cusparseSpGEMM_compute(h, none, none, &one_, a_.get(), b_.get(), &zero_,
                                            c.get(), type, v.alg, d.get(), &bytes2, nullptr),
                     "cusparseSpGEMM_compute (size)");
      work2 = workspace(bytes2, stream_);
    }
    check_cusparse(cusparseSpGEMM_compute(h, none, none, &one_, a_.get(), b_.get(), &zero_, c.get(),
                                          type, v.alg, d.get(), &bytes2, work2.get()),
                   "cusparseSpGEMM_compute");
    std::int64_t r = 0;
    std::int64_t k = 0;
    std::int64_t nnz = 0;
    check_cusparse(cusparseSpMatGetSize(c.get(), &r, &k, &nnz), "cusparseSpMatGetSize");
    if (nnz > 2147483647)
      throw library_failure(
          "cusparseSpGEMM: nnz(C) = " + std::to_string(nnz) + " exceeds 32-bit indices", -1);
    col_idx_ = workspace(sizeof(index_t) * static_cast<std::size_t>(nnz), stream_);
    values_ = workspace(sizeof(T) * static_cast<std::size_t>(nnz), stream_);
    check_cusparse(cusparseCsrSetPointers(c.get(), row_ptr_.get(), col_idx_.get(), values_.get()),
                   "cusparseCsrSetPointers");
    check_cusparse(cusparseSpGEMM_copy(h, none, none, &one_, a_.get(), b_.get(), &zero_, c.get(),
                                       type, v.alg, d.get()),
                   "cusparseSpGEMM_copy");
    nnz_ = nnz;
  }

  /// The last run's C on the host (waits for it).
  csr<T, cpu> result() const {
    std::vector<index_t> row_ptr(static_cast<std::size_t>(rows_) + 1);
    std::vector<index_t> col_idx(static_cast<std::size_t>(nnz_));
    std::vector<T> values(static_cast<std::size_t>(nnz_));
    check_cuda(cudaMemcpyAsync(row_ptr.data(), row_ptr_.get(), row_ptr.size() * sizeof(index_t),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync");
    if (nnz_) {
      check_cuda(cudaMemcpyAsync(col_idx.data(), col_idx_.get(), col_idx.size() * sizeof(index_t),
                                 cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync");
      check_cuda(cudaMemcpyAsync(values.data(), values_.get(), values.size() * sizeof(T),
                                 cudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync");
    }
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return csr<T, cpu>(unchecked, rows_, cols_, std::move(row_ptr), std::move(col_idx),
                       std::move(values));
  }

  /// ALG2/ALG3's share of the products computed per chunk (cuSPARSE's sample uses 0.2).
  static constexpr float chunk_fraction = 0.2f;

 private:
  cudaStream_t stream_;
  cusparse_handle handle_;
  index_t rows_;
  index_t cols_;
  const_sp_mat a_;
  const_sp_mat b_;
  raw_buffer row_ptr_;
  raw_buffer col_idx_;
  raw_buffer values_;
  std::int64_t nnz_ = 0;
  std::vector<variant> variants_;
  T one_ = T(1);
  T zero_ = T(0);
};

// ---- cuBLAS: y = A·x (GEMV) and C = A·B (GEMM), row-major operands --------------------------

inline cublasStatus_t gemv_call(cublasHandle_t h, cublasOperation_t op, int m, int n,
                                const float* alpha, const float* a, int lda, const float* x,
                                const float* beta, float* y) {
  return cublasSgemv(h, op, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
inline cublasStatus_t gemv_call(cublasHandle_t h, cublasOperation_t op, int m, int n,
                                const double* alpha, const double* a, int lda, const double* x,
                                const double* beta, double* y) {
  return cublasDgemv(h, op, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
inline cublasStatus_t gemm_call(cublasHandle_t h, int m, int n, int k, const float* alpha,
                                const float* a, int lda, const float* b, int ldb, const float* beta,
                                float* c, int ldc) {
  return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline cublasStatus_t gemm_call(cublasHandle_t h, int m, int n, int k, const double* alpha,
                                const double* a, int lda, const double* b, int ldb,
                                const double* beta, double* c, int ldc) {
  return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <class T>
class dense_baseline {
 public:
  explicit dense_baseline(cudaStream_t stream) : handle_(make_cublas(stream)) {}

  /// y = A·x for row-major A (m × k): column-major Aᵀ (k × m, ld k), so GEMV with op T.
  void gemv(const dense<T, gpu>& a, const vector<T, gpu>& x, vector<T, gpu>& y) {
    check_cublas(gemv_call(handle_.get(), CUBLAS_OP_T, a.cols(), a.rows(), &one_, a.data(),
                           std::max<index_t>(a.cols(), 1), x.data(), &zero_, y.data()),
                 "cublas gemv");
  }
  /// C = A·B, all row-major: column-major Cᵀ = Bᵀ·Aᵀ.
  void gemm(const dense<T, gpu>& a, const dense<T, gpu>& b, dense<T, gpu>& c) {
    check_cublas(gemm_call(handle_.get(), b.cols(), a.rows(), a.cols(), &one_, b.data(),
                           std::max<index_t>(b.cols(), 1), a.data(), std::max<index_t>(a.cols(), 1),
                           &zero_, c.data(), std::max<index_t>(c.cols(), 1)),
                 "cublas gemm");
  }

 private:
  cublas_handle handle_;
  T one_ = T(1);
  T zero_ = T(0);
};

}  // namespace spade::bench
