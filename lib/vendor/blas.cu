// Dense BLAS on the GPU: cuBLAS GEMM / GEMV / GEAM / DOT / NRM2 / SCAL, and our axpby kernel.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "detail/library_support.cuh"
#include "instantiate.hpp"

namespace spade::device {

namespace {

constexpr int block_threads = 256;

// ---- typed cuBLAS entry points: one overload per scalar, so errors name the real call -------

void xgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
           const float* alpha, const float* a, int lda, const float* b, int ldb, const float* beta,
           float* c, int ldc) {
  SPADE_CUBLAS_TRY(cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
                   "multiplying dense matrices (gemm)");
}
void xgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
           const double* alpha, const double* a, int lda, const double* b, int ldb,
           const double* beta, double* c, int ldc) {
  SPADE_CUBLAS_TRY(cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc),
                   "multiplying dense matrices (gemm)");
}

void xgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const float* alpha, const float* a,
           int lda, const float* x, int incx, const float* beta, float* y) {
  SPADE_CUBLAS_TRY(cublasSgemv(h, t, m, n, alpha, a, lda, x, incx, beta, y, 1),
                   "multiplying a dense matrix by a vector (gemv)");
}
void xgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const double* alpha,
           const double* a, int lda, const double* x, int incx, const double* beta, double* y) {
  SPADE_CUBLAS_TRY(cublasDgemv(h, t, m, n, alpha, a, lda, x, incx, beta, y, 1),
                   "multiplying a dense matrix by a vector (gemv)");
}

void xgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
           const float* alpha, const float* a, int lda, const float* beta, const float* b, int ldb,
           float* c, int ldc) {
  SPADE_CUBLAS_TRY(cublasSgeam(h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc),
                   "adding dense matrices (geam)");
}
void xgeam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
           const double* alpha, const double* a, int lda, const double* beta, const double* b,
           int ldb, double* c, int ldc) {
  SPADE_CUBLAS_TRY(cublasDgeam(h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc),
                   "adding dense matrices (geam)");
}

void xdot(cublasHandle_t h, int n, const float* x, const float* y, float* result) {
  SPADE_CUBLAS_TRY(cublasSdot(h, n, x, 1, y, 1, result), "computing a dot product (dot)");
}
void xdot(cublasHandle_t h, int n, const double* x, const double* y, double* result) {
  SPADE_CUBLAS_TRY(cublasDdot(h, n, x, 1, y, 1, result), "computing a dot product (dot)");
}

void xnrm2(cublasHandle_t h, int n, const float* x, float* result) {
  SPADE_CUBLAS_TRY(cublasSnrm2(h, n, x, 1, result), "computing a 2-norm (nrm2)");
}
void xnrm2(cublasHandle_t h, int n, const double* x, double* result) {
  SPADE_CUBLAS_TRY(cublasDnrm2(h, n, x, 1, result), "computing a 2-norm (nrm2)");
}

void xscal(cublasHandle_t h, std::int64_t n, const float* s, float* x, const char* doing) {
  SPADE_CUBLAS_TRY(cublasSscal_64(h, n, s, x, 1), doing);
}
void xscal(cublasHandle_t h, std::int64_t n, const double* s, double* x, const char* doing) {
  SPADE_CUBLAS_TRY(cublasDscal_64(h, n, s, x, 1), doing);
}

// cuBLAS is column-major, and row-major storage of X is column-major storage of Xᵀ. An operand
// stored in the other layout than the result is therefore handed over as its transpose, which
// one more transposition flag undoes.
cublasOperation_t cublas_op(operation op, bool same_layout_as_result) {
  return detail::transposed(op) == same_layout_as_result ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// cuBLAS rejects a leading dimension of 0 even where no element is read.
int ld_of(index_t leading_dimension) {
  return std::max<index_t>(leading_dimension, 1);
}

// ---- axpby ---------------------------------------------------------------------------------

template <class T>
struct axpby_params {
  T a;
  const T* d_x;  // (n)
  T b;
  const T* d_y;  // (n)
  T* d_z;        // (n), may be d_x or d_y: each element is read before it is written
  std::int64_t n;
};

template <class T>
__global__ void __launch_bounds__(block_threads) axpby_kernel(axpby_params<T> p) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < p.n; i += stride)
    p.d_z[i] = p.a * p.d_x[i] + p.b * p.d_y[i];
}

}  // namespace

/// A whole dense matrix or vector as a strided operand.
template <scalar T, layout L>
strided_operand<T> strided_of(const dense<T, gpu, L>& a) {
  return {
      a.data(),          a.rows(), a.cols(), a.leading_dimension(), std::is_same_v<L, row_major>,
      a.values().owner()};
}
template <scalar T>
strided_operand<T> strided_of(const vector<T, gpu>& x) {
  return {x.data(), x.size(), 1, 1, true, x.values().owner()};
}

template <scalar T, layout LC>
void gemm_strided(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& b,
                  operation op_b, T beta, dense<T, gpu, LC>& c) {
  const bool ta = detail::transposed(op_a);
  const bool tb = detail::transposed(op_b);
  const index_t m = c.rows();
  const index_t n = c.cols();
  const index_t k = ta ? a.rows : a.cols;
  const index_t a_rows = ta ? a.cols : a.rows;
  const index_t b_rows = tb ? b.cols : b.rows;
  const index_t b_cols = tb ? b.rows : b.cols;
  detail::require_shapes(a_rows == m && b_rows == k && b_cols == n, "gemm",
                         "op(A) is " + detail::shape_text(a_rows, k) + ", op(B) is " +
                             detail::shape_text(b_rows, b_cols) + ", C is " +
                             detail::shape_text(m, n));
  if (m == 0 || n == 0) return;
  context& ctx = a.owner ? *a.owner : b.owner ? *b.owner : detail::context_of(c.values());
  if (k == 0) {  // an empty sum: C = beta·C, which cuBLAS is not asked to do with k = 0
    detail::scale_or_zero(ctx, beta, c.data(), static_cast<std::int64_t>(c.element_count()),
                          "scaling C by beta for an empty inner dimension (gemm)");
    return;
  }
  constexpr bool c_row_major = std::is_same_v<LC, row_major>;
  const cublasHandle_t handle = detail::cublas_of(ctx);
  const cublasOperation_t op_of_a = cublas_op(op_a, a.row_major == c_row_major);
  const cublasOperation_t op_of_b = cublas_op(op_b, b.row_major == c_row_major);
  const int lda = ld_of(static_cast<index_t>(a.ld));
  const int ldb = ld_of(static_cast<index_t>(b.ld));
  const int ldc = ld_of(c.leading_dimension());
  if constexpr (!c_row_major)
    xgemm(handle, op_of_a, op_of_b, m, n, k, &alpha, a.data, lda, b.data, ldb, &beta, c.data(),
          ldc);
  else  // cuBLAS writes Cᵀ (n×m, column-major) = op(B)ᵀ·op(A)ᵀ
    xgemm(handle, op_of_b, op_of_a, n, m, k, &alpha, b.data, ldb, a.data, lda, &beta, c.data(),
          ldc);
}

template <scalar T, layout LA, layout LB, layout LC>
void gemm(T alpha, const dense<T, gpu, LA>& a, operation op_a, const dense<T, gpu, LB>& b,
          operation op_b, T beta, dense<T, gpu, LC>& c) {
  gemm_strided(alpha, strided_of(a), op_a, strided_of(b), op_b, beta, c);
}

template <scalar T>
void gemv_strided(T alpha, const strided_operand<T>& a, operation op_a, const strided_operand<T>& x,
                  T beta, vector<T, gpu>& y) {
  const bool ta = detail::transposed(op_a);
  const index_t m = ta ? a.cols : a.rows;
  const index_t k = ta ? a.rows : a.cols;
  detail::require_shapes(x.rows == k && y.size() == m, "gemv",
                         "op(A) is " + detail::shape_text(m, k) + ", x has " +
                             std::to_string(x.rows) + " elements, y has " +
                             std::to_string(y.size()));
  if (m == 0) return;
  context& ctx = a.owner ? *a.owner : x.owner ? *x.owner : detail::context_of(y.values());
  if (k == 0) {
    detail::scale_or_zero(ctx, beta, y.data(), m,
                          "scaling y by beta for an empty inner dimension (gemv)");
    return;
  }
  // The column-major matrix cuBLAS sees: A itself, or Aᵀ for row-major storage.
  const int stored_rows = a.row_major ? a.cols : a.rows;
  const int stored_cols = a.row_major ? a.rows : a.cols;
  xgemv(detail::cublas_of(ctx), cublas_op(op_a, !a.row_major), stored_rows, stored_cols, &alpha,
        a.data, ld_of(static_cast<index_t>(a.ld)), x.data, static_cast<int>(x.ld), &beta, y.data());
}

template <scalar T, layout L>
void gemv(T alpha, const dense<T, gpu, L>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y) {
  gemv_strided(alpha, strided_of(a), op_a, strided_of(x), beta, y);
}

template <scalar T, layout L>
void geam(T alpha, const dense<T, gpu, L>& a, operation op_a, T beta, const dense<T, gpu, L>& b,
          operation op_b, dense<T, gpu, L>& c) {
  const bool ta = detail::transposed(op_a);
  const bool tb = detail::transposed(op_b);
  const index_t a_rows = ta ? a.cols() : a.rows();
  const index_t a_cols = ta ? a.rows() : a.cols();
  const index_t b_rows = tb ? b.cols() : b.rows();
  const index_t b_cols = tb ? b.rows() : b.cols();
  detail::require_shapes(
      a_rows == c.rows() && a_cols == c.cols() && b_rows == c.rows() && b_cols == c.cols(), "geam",
      "op(A) is " + detail::shape_text(a_rows, a_cols) + ", op(B) is " +
          detail::shape_text(b_rows, b_cols) + ", C is " + detail::shape_text(c.rows(), c.cols()));
  if (c.element_count() == 0) return;
  context& ctx = detail::context_of(a.values(), b.values(), c.values());
  // All three share a layout, so for row-major storage cuBLAS computes Cᵀ = α·op(A)ᵀ + β·op(B)ᵀ
  // on the same flags: only the extents swap.
  constexpr bool col = std::is_same_v<L, col_major>;
  const int m = col ? c.rows() : c.cols();
  const int n = col ? c.cols() : c.rows();
  xgeam(detail::cublas_of(ctx), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m,
        n, &alpha, a.data(), ld_of(a.leading_dimension()), &beta, b.data(),
        ld_of(b.leading_dimension()), c.data(), ld_of(c.leading_dimension()));
}

template <scalar T>
void axpby(T a, const vector<T, gpu>& x, T b, const vector<T, gpu>& y, vector<T, gpu>& z) {
  detail::require_shapes(x.size() == y.size() && y.size() == z.size(), "axpby",
                         "x, y and z have " + std::to_string(x.size()) + ", " +
                             std::to_string(y.size()) + " and " + std::to_string(z.size()) +
                             " elements");
  if (z.size() == 0) return;
  context& ctx = detail::context_of(x.values(), y.values(), z.values());
  const axpby_params<T> p{a, x.data(), b, y.data(), z.data(), z.size()};
  axpby_kernel<T>
      <<<detail::grid_blocks(p.n, block_threads, ctx), block_threads, 0, detail::stream_of(ctx)>>>(
          p);
  SPADE_CHECK_LAUNCH("computing z = a·x + b·y (axpby)");
}

template <scalar T>
T dot(const vector<T, gpu>& x, const vector<T, gpu>& y) {
  detail::require_shapes(
      x.size() == y.size(), "dot",
      "x has " + std::to_string(x.size()) + " elements, y has " + std::to_string(y.size()));
  T result = T(0);
  if (x.size() == 0) return result;
  context& ctx = detail::context_of(x.values(), y.values());
  xdot(detail::cublas_of(ctx), x.size(), x.data(), y.data(), &result);  // waits for the result
  return result;
}

template <scalar T>
T nrm2(const vector<T, gpu>& x) {
  T result = T(0);
  if (x.size() == 0) return result;
  context& ctx = detail::context_of(x.values());
  xnrm2(detail::cublas_of(ctx), x.size(), x.data(), &result);  // waits for the result
  return result;
}

template <scalar T>
void scale(T s, T* d_values, std::int64_t count) {
  if (count <= 0) return;
  // A bare pointer does not say which context owns it: the default one is the only guess.
  detail::scale_on(default_context(), s, d_values, count, "scaling values in place (scale)");
}

SPADE_VENDOR_BLAS_INSTANTIATIONS(float)
SPADE_VENDOR_BLAS_INSTANTIATIONS(double)

}  // namespace spade::device

namespace spade::detail {

template <scalar T>
void scale_on(context& ctx, T s, T* d_values, std::int64_t count, const char* doing) {
  if (count <= 0) return;
  device::xscal(cublas_of(ctx), count, &s, d_values, doing);
}

template void scale_on<float>(context&, float, float*, std::int64_t, const char*);
template void scale_on<double>(context&, double, double*, std::int64_t, const char*);

}  // namespace spade::detail
