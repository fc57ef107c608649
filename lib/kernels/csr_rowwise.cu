// Row-wise CSR products for small operands: one launch and no workspace, and the way around the
// cuSPARSE 12.6 wrong-last-row results on 32-row matrices (docs/vendor-bugs.md).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "spade/device/convert.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

template <scalar T>
struct csr_view {
  const index_t* row_ptr;
  const index_t* col_idx;
  const T* values;
  index_t rows;
};

template <scalar T>
csr_view<T> view_of(const csr<T, gpu>& a) {
  return {a.row_ptr().data(), a.col_idx().data(), a.values().data(), a.rows()};
}

// Element (i, j) of a packed dense matrix of either layout.
template <class Layout>
struct dense_view {
  index_t rows;
  index_t cols;
  __device__ std::int64_t at(index_t i, index_t j) const {
    if constexpr (std::is_same_v<Layout, row_major>)
      return std::int64_t{i} * cols + j;
    else
      return std::int64_t{j} * rows + i;
  }
};

// y[row] = alpha·(A·x)[row] + beta·y[row], a warp per row; the lanes' partial sums are combined
// in a fixed butterfly order, so results do not change from run to run.
template <scalar T>
__global__ void __launch_bounds__(block_threads)
    spmv_rows_kernel(csr_view<T> a, const T* x, T alpha, T beta, T* y) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = std::int64_t{gridDim.x} * warps_per_block;
  for (std::int64_t row = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
       row < a.rows; row += stride) {
    T sum = T(0);
    for (index_t k = a.row_ptr[row] + lane; k < a.row_ptr[row + 1]; k += warp_threads)
      sum += a.values[k] * x[a.col_idx[k]];
    for (int offset = warp_threads / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) y[row] = alpha * sum + (beta == T(0) ? T(0) : beta * y[row]);
  }
}

// y += alpha·Aᵀ·x after y was scaled by beta: each row of A scatters into y with atomics.
template <scalar T>
__global__ void __launch_bounds__(block_threads)
    spmv_transposed_rows_kernel(csr_view<T> a, const T* x, T alpha, T* y) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = std::int64_t{gridDim.x} * warps_per_block;
  for (std::int64_t row = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
       row < a.rows; row += stride) {
    const T scaled_x = alpha * x[row];
    for (index_t k = a.row_ptr[row] + lane; k < a.row_ptr[row + 1]; k += warp_threads)
      atomicAdd(&y[a.col_idx[k]], a.values[k] * scaled_x);
  }
}

// C(i, j) = alpha·(A·B)(i, j) + beta·C(i, j), a thread per element of C; consecutive threads take
// consecutive elements in C's layout so the stores coalesce.
template <scalar T, class LB, class LC>
__global__ void __launch_bounds__(block_threads)
    spmm_rows_kernel(csr_view<T> a, const T* b, dense_view<LB> b_shape, T alpha, T beta, T* c,
                     dense_view<LC> c_shape) {
  const std::int64_t count = std::int64_t{c_shape.rows} * c_shape.cols;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count;
       e += stride) {
    const bool row_major_c = std::is_same_v<LC, row_major>;
    const index_t i = static_cast<index_t>(row_major_c ? e / c_shape.cols : e % c_shape.rows);
    const index_t j = static_cast<index_t>(row_major_c ? e % c_shape.cols : e / c_shape.rows);
    T sum = T(0);
    for (index_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      sum += a.values[k] * b[b_shape.at(a.col_idx[k], j)];
    const std::int64_t out = c_shape.at(i, j);
    c[out] = alpha * sum + (beta == T(0) ? T(0) : beta * c[out]);
  }
}

// C += alpha·Aᵀ·B after C was scaled by beta: a thread per (row of A, column of B) scatters.
template <scalar T, class LB, class LC>
__global__ void __launch_bounds__(block_threads)
    spmm_transposed_rows_kernel(csr_view<T> a, const T* b, dense_view<LB> b_shape, T alpha, T* c,
                                dense_view<LC> c_shape) {
  const std::int64_t count = std::int64_t{a.rows} * b_shape.cols;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < count;
       e += stride) {
    const index_t row = static_cast<index_t>(e / b_shape.cols);
    const index_t j = static_cast<index_t>(e % b_shape.cols);
    const T scaled_b = alpha * b[b_shape.at(row, j)];
    for (index_t k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k)
      atomicAdd(&c[c_shape.at(a.col_idx[k], j)], a.values[k] * scaled_b);
  }
}

}  // namespace

template <scalar T>
void rowwise_spmv(T alpha, const csr<T, gpu>& a, operation op_a, const vector<T, gpu>& x, T beta,
                  vector<T, gpu>& y) {
  const bool ta = detail::transposed(op_a);
  const index_t m = ta ? a.cols() : a.rows();
  const index_t k = ta ? a.rows() : a.cols();
  detail::require_shapes(x.size() == k && y.size() == m, "rowwise_spmv",
                         "op(A) is " + detail::shape_text(m, k) + ", x has " +
                             std::to_string(x.size()) + " elements, y has " +
                             std::to_string(y.size()));
  if (m == 0) return;
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), x.values(), y.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  if (a.rows() == 0 || a.nnz() == 0 || ta) {
    detail::scale_or_zero(ctx, beta, y.data(), m, "scaling y by beta (rowwise_spmv)");
    if (a.rows() == 0 || a.nnz() == 0) return;
  }
  const unsigned int blocks = detail::grid_blocks(a.rows(), warps_per_block, ctx);
  if (ta) {
    spmv_transposed_rows_kernel<T>
        <<<blocks, block_threads, 0, stream>>>(view_of(a), x.data(), alpha, y.data());
    SPADE_CHECK_LAUNCH("scattering the rows of A into y (rowwise_spmv, transposed)");
  } else {
    spmv_rows_kernel<T>
        <<<blocks, block_threads, 0, stream>>>(view_of(a), x.data(), alpha, beta, y.data());
    SPADE_CHECK_LAUNCH("multiplying the rows of A by x (rowwise_spmv)");
  }
}

template <scalar T, layout LB, layout LC>
void rowwise_spmm(T alpha, const csr<T, gpu>& a, operation op_a, const dense<T, gpu, LB>& b, T beta,
                  dense<T, gpu, LC>& c) {
  const bool ta = detail::transposed(op_a);
  const index_t m = ta ? a.cols() : a.rows();
  const index_t k = ta ? a.rows() : a.cols();
  detail::require_shapes(b.rows() == k && c.rows() == m && c.cols() == b.cols(), "rowwise_spmm",
                         "op(A) is " + detail::shape_text(m, k) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()) + ", C is " +
                             detail::shape_text(c.rows(), c.cols()));
  if (c.element_count() == 0) return;
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.values(), c.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  const auto c_count = static_cast<std::int64_t>(c.element_count());
  if (a.nnz() == 0 || ta) {
    detail::scale_or_zero(ctx, beta, c.data(), c_count, "scaling C by beta (rowwise_spmm)");
    if (a.nnz() == 0) return;
  }
  const dense_view<LB> b_shape{b.rows(), b.cols()};
  const dense_view<LC> c_shape{c.rows(), c.cols()};
  if (ta) {
    const std::int64_t items = std::int64_t{a.rows()} * b.cols();
    spmm_transposed_rows_kernel<T, LB, LC>
        <<<detail::grid_blocks(items, block_threads, ctx), block_threads, 0, stream>>>(
            view_of(a), b.data(), b_shape, alpha, c.data(), c_shape);
    SPADE_CHECK_LAUNCH("scattering the rows of A times B into C (rowwise_spmm, transposed)");
  } else {
    spmm_rows_kernel<T, LB, LC>
        <<<detail::grid_blocks(c_count, block_threads, ctx), block_threads, 0, stream>>>(
            view_of(a), b.data(), b_shape, alpha, beta, c.data(), c_shape);
    SPADE_CHECK_LAUNCH("multiplying the rows of A by B (rowwise_spmm)");
  }
}

template <scalar T>
csr<T, gpu> transpose_by_sort(const csr<T, gpu>& a) {
  const coo<T, gpu> entries = csr_to_coo(a);
  // Aᵀ's entries are A's with the index arrays swapped; coo_to_csr sorts them by (column, row).
  const coo<T, gpu> swapped(unchecked, a.cols(), a.rows(), entries.col_idx(), entries.row_idx(),
                            entries.values());
  return coo_to_csr(swapped);
}

SPADE_KERNELS_ROWWISE_INSTANTIATIONS(float)
SPADE_KERNELS_ROWWISE_INSTANTIATIONS(double)

}  // namespace spade::device
