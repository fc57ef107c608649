// cwise_product of two csr matrices: the entries stored in both (the intersection of the
// patterns), each the product of the two values.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <utility>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

template <scalar T>
struct csr_arrays {
  const index_t* row_ptr;
  const index_t* col_idx;
  const T* values;
};

template <scalar T>
csr_arrays<T> arrays_of(const csr<T, gpu>& m) {
  return {m.row_ptr().data(), m.col_idx().data(), m.values().data()};
}

// One warp per row. The lanes take the entries of the shorter of the two rows in order, 32 at a
// time, and binary-search each one's column in the other row (columns are sorted and unique in
// a csr). Counting (Write = false): out_row_ptr[row] = the number found. Writing: the entries
// found go to out_row_ptr[row] onwards in column order, each lane's place from a ballot, so the
// result is sorted and the same on every run.
template <scalar T, bool Write>
__global__ void __launch_bounds__(block_threads)
    intersect_rows_kernel(csr_arrays<T> a, csr_arrays<T> b, index_t rows, index_t* out_row_ptr,
                          index_t* out_col_idx, T* out_values) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = std::int64_t{gridDim.x} * warps_per_block;
  for (std::int64_t row = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
       row < rows; row += stride) {
    const index_t a_begin = a.row_ptr[row], a_end = a.row_ptr[row + 1];
    const index_t b_begin = b.row_ptr[row], b_end = b.row_ptr[row + 1];
    const bool a_shorter = a_end - a_begin <= b_end - b_begin;
    const index_t s_begin = a_shorter ? a_begin : b_begin, s_end = a_shorter ? a_end : b_end;
    const index_t l_begin = a_shorter ? b_begin : a_begin, l_end = a_shorter ? b_end : a_end;
    const index_t* s_cols = a_shorter ? a.col_idx : b.col_idx;
    const index_t* l_cols = a_shorter ? b.col_idx : a.col_idx;
    index_t found_before = 0;
    const index_t base = Write ? out_row_ptr[row] : 0;
    for (index_t first = s_begin; first < s_end; first += warp_threads) {
      const index_t k = first + lane;
      bool found = false;
      index_t col = 0, at = 0;
      if (k < s_end) {
        col = s_cols[k];
        index_t lo = l_begin, hi = l_end;
        while (lo < hi) {
          const index_t mid = lo + (hi - lo) / 2;
          if (l_cols[mid] < col)
            lo = mid + 1;
          else
            hi = mid;
        }
        at = lo;
        found = lo < l_end && l_cols[lo] == col;
      }
      const unsigned mask = __ballot_sync(0xffffffffu, found);
      if constexpr (Write) {
        if (found) {
          const index_t place = base + found_before + __popc(mask & ((1u << lane) - 1u));
          out_col_idx[place] = col;
          out_values[place] = a_shorter ? a.values[k] * b.values[at] : a.values[at] * b.values[k];
        }
      }
      found_before += __popc(mask);
    }
    if constexpr (!Write) {
      if (lane == 0) out_row_ptr[row] = found_before;
    }
  }
}

}  // namespace

template <scalar T>
csr<T, gpu> cwise_intersection(const csr<T, gpu>& a, const csr<T, gpu>& b) {
  const index_t rows = a.rows();
  context* owner = a.row_ptr().owner() ? a.row_ptr().owner() : b.row_ptr().owner();
  context& ctx = owner ? *owner : default_context();
  const cudaStream_t stream = detail::stream_of(ctx);
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  row_ptr.fill_zero();
  if (a.nnz() == 0 || b.nnz() == 0 || rows == 0)
    return csr<T, gpu>(unchecked, rows, a.cols(), std::move(row_ptr), device_buffer<index_t>(),
                       device_buffer<T>());
  const unsigned blocks =
      detail::grid_blocks(std::int64_t{rows} * warp_threads, block_threads, ctx);
  intersect_rows_kernel<T, false><<<blocks, block_threads, 0, stream>>>(
      arrays_of(a), arrays_of(b), rows, row_ptr.data(), nullptr, nullptr);
  SPADE_CHECK_LAUNCH("counting the entries two csr patterns share (cwise_product)");
  // rows + 1 counts (the last is zero), so the exclusive sum ends with nnz in row_ptr[rows].
  detail::cub_run(ctx, "turning row counts into row pointers (cub::DeviceScan::ExclusiveSum)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, row_ptr.data(),
                                                         std::int64_t{rows} + 1, stream);
                  });
  index_t nnz = 0;
  ctx.copy_to_host(&nnz, row_ptr.data() + rows, sizeof(index_t));
  device_buffer<index_t> col_idx(static_cast<std::size_t>(nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(nnz), ctx);
  if (nnz > 0) {
    intersect_rows_kernel<T, true><<<blocks, block_threads, 0, stream>>>(
        arrays_of(a), arrays_of(b), rows, row_ptr.data(), col_idx.data(), values.data());
    SPADE_CHECK_LAUNCH("writing the entries two csr patterns share (cwise_product)");
  }
  return csr<T, gpu>(unchecked, rows, a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

SPADE_KERNELS_INTERSECTION_INSTANTIATIONS(float)
SPADE_KERNELS_INTERSECTION_INSTANTIATIONS(double)

}  // namespace spade::device
