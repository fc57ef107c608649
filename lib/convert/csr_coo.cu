// GPU csr ↔ coo conversions: row-pointer expansion, and CUB sort / reduce-by-key / scan.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "convert/instantiate.hpp"
#include "detail/cub_temp.cuh"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

// ---- csr → coo -------------------------------------------------------------------------------

struct expand_params {
  const index_t* d_row_ptr;  // (rows + 1)
  index_t* d_row_idx;        // (nnz)
  index_t rows;
};

// A warp per row keeps the writes of a long row coalesced; rows are independent.
__device__ void expand_row(const expand_params& p, index_t row, int lane) {
  const std::int64_t end = p.d_row_ptr[row + 1];
  for (std::int64_t k = std::int64_t{p.d_row_ptr[row]} + lane; k < end; k += warp_threads)
    p.d_row_idx[k] = row;
}

__global__ void __launch_bounds__(block_threads) expand_row_ptr_kernel(expand_params p) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = std::int64_t{gridDim.x} * warps_per_block;
  for (std::int64_t row = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
       row < p.rows; row += stride)
    expand_row(p, static_cast<index_t>(row), lane);
}

// ---- coo → csr -------------------------------------------------------------------------------

// Keys pack (row, col) as row << col_bits | col, so ascending keys are row-major order and the
// radix sort needs only the bits a row or column index of this shape can have.
struct key_params {
  const index_t* d_row_idx;  // (nnz)
  const index_t* d_col_idx;  // (nnz)
  std::uint64_t* d_keys;     // (nnz)
  std::int64_t count;
  int col_bits;
};

__global__ void __launch_bounds__(block_threads) make_keys_kernel(key_params p) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < p.count;
       k += stride)
    p.d_keys[k] = (std::uint64_t{static_cast<std::uint32_t>(p.d_row_idx[k])} << p.col_bits) |
                  static_cast<std::uint32_t>(p.d_col_idx[k]);
}

struct split_params {
  const std::uint64_t* d_keys;  // (unique)
  index_t* d_rows;              // (unique)
  index_t* d_col_idx;           // (unique)
  std::int64_t count;
  int col_bits;
};

__global__ void __launch_bounds__(block_threads) split_keys_kernel(split_params p) {
  const std::uint64_t col_mask = (std::uint64_t{1} << p.col_bits) - 1;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < p.count;
       k += stride) {
    const std::uint64_t key = p.d_keys[k];
    p.d_rows[k] = static_cast<index_t>(key >> p.col_bits);
    p.d_col_idx[k] = static_cast<index_t>(key & col_mask);
  }
}

// Run-length encoding gives the length of each non-empty row; empty rows keep the zero fill.
struct scatter_params {
  const index_t* d_run_rows;     // (runs)
  const index_t* d_run_lengths;  // (runs)
  const int* d_runs;             // the run count, read on the device: no second host sync
  index_t* d_row_counts;         // (rows + 1)
};

__global__ void __launch_bounds__(block_threads) scatter_row_counts_kernel(scatter_params p) {
  const std::int64_t runs = *p.d_runs;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t r = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; r < runs; r += stride)
    p.d_row_counts[p.d_run_rows[r]] = p.d_run_lengths[r];
}

}  // namespace

template <scalar T>
coo<T, gpu> csr_to_coo(const csr<T, gpu>& a) {
  const std::size_t nnz = a.col_idx().size();
  if (nnz == 0) return coo<T, gpu>(unchecked, a.rows(), a.cols(), {}, {}, {});
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<index_t> row_idx(nnz, ctx);
  const expand_params p{a.row_ptr().data(), row_idx.data(), a.rows()};
  expand_row_ptr_kernel<<<detail::grid_blocks(a.rows(), warps_per_block, ctx), block_threads, 0,
                          stream>>>(p);
  SPADE_CHECK_LAUNCH("expanding csr row pointers to coo row indices (csr_to_coo)");

  device_buffer<index_t> col_idx(nnz, ctx);
  ctx.copy_on_device(col_idx.data(), a.col_idx().data(), nnz * sizeof(index_t));
  device_buffer<T> values(nnz, ctx);
  ctx.copy_on_device(values.data(), a.values().data(), nnz * sizeof(T));
  return coo<T, gpu>(unchecked, a.rows(), a.cols(), std::move(row_idx), std::move(col_idx),
                     std::move(values));
}

template <scalar T>
csr<T, gpu> coo_to_csr(const coo<T, gpu>& a) {
  const index_t rows = a.rows();
  const index_t cols = a.cols();
  const std::size_t nnz = a.row_idx().size();
  context& ctx = detail::context_of(a.row_idx(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  if (nnz == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), {}, {});
  }
  // nnz fits index_t: coo's constructors check it.
  const int count = static_cast<int>(nnz);
  const int col_bits = detail::bits_for(cols);
  const int key_bits = detail::bits_for(rows) + col_bits;

  device_buffer<index_t> entry_rows;  // row of each unique position, row-major order
  device_buffer<index_t> col_idx;
  device_buffer<T> values;
  {
    device_buffer<std::uint64_t> keys_a(nnz, ctx);
    device_buffer<std::uint64_t> keys_b(nnz, ctx);
    device_buffer<T> values_a(nnz, ctx);
    device_buffer<T> values_b(nnz, ctx);
    const key_params kp{a.row_idx().data(), a.col_idx().data(), keys_a.data(),
                        static_cast<std::int64_t>(nnz), col_bits};
    make_keys_kernel<<<detail::grid_blocks(kp.count, block_threads, ctx), block_threads, 0,
                       stream>>>(kp);
    SPADE_CHECK_LAUNCH("packing coo (row, column) pairs into sort keys (coo_to_csr)");
    ctx.copy_on_device(values_a.data(), a.values().data(), nnz * sizeof(T));

    cub::DoubleBuffer<std::uint64_t> keys(keys_a.data(), keys_b.data());
    cub::DoubleBuffer<T> sorted_values(values_a.data(), values_b.data());
    // Radix sort is stable: repeated positions stay in stored order for the reduction below.
    // With no key bits every key is 0 and the list is already in order.
    if (key_bits > 0 && count > 1)
      detail::cub_run(ctx, "sorting coo entries by (row, column) (cub::DeviceRadixSort::SortPairs)",
                      [&](void* d_temp, std::size_t& bytes) {
                        return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys, sorted_values,
                                                               count, 0, key_bits, stream);
                      });

    // ReduceByKey's outputs may not overlap its inputs: they go to the alternate buffers.
    std::uint64_t* const d_unique_keys = keys.Alternate();
    T* const d_sums = sorted_values.Alternate();
    device_buffer<int> unique_count(1, ctx);
    detail::cub_run(ctx, "summing repeated coo positions (cub::DeviceReduce::ReduceByKey)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceReduce::ReduceByKey(
                          d_temp, bytes, keys.Current(), d_unique_keys, sorted_values.Current(),
                          d_sums, unique_count.data(), ::cuda::std::plus<>{}, count, stream);
                    });
    int unique = 0;
    ctx.copy_to_host(&unique, unique_count.data(), sizeof(int));  // the one host sync

    const std::size_t nnz_out = static_cast<std::size_t>(unique);
    entry_rows = device_buffer<index_t>(nnz_out, ctx);
    col_idx = device_buffer<index_t>(nnz_out, ctx);
    values = device_buffer<T>(nnz_out, ctx);
    const split_params sp{d_unique_keys, entry_rows.data(), col_idx.data(),
                          static_cast<std::int64_t>(nnz_out), col_bits};
    split_keys_kernel<<<detail::grid_blocks(sp.count, block_threads, ctx), block_threads, 0,
                        stream>>>(sp);
    SPADE_CHECK_LAUNCH("splitting sorted keys into rows and columns (coo_to_csr)");
    ctx.copy_on_device(values.data(), d_sums, nnz_out * sizeof(T));
  }  // keys and unsorted values go back to the pool before the row pointers are built

  const int unique = static_cast<int>(col_idx.size());
  {
    device_buffer<index_t> run_rows(col_idx.size(), ctx);
    device_buffer<index_t> run_lengths(col_idx.size(), ctx);
    device_buffer<int> run_count(1, ctx);
    detail::cub_run(ctx, "counting entries per row (cub::DeviceRunLengthEncode::Encode)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceRunLengthEncode::Encode(d_temp, bytes, entry_rows.data(),
                                                                run_rows.data(), run_lengths.data(),
                                                                run_count.data(), unique, stream);
                    });
    row_ptr.fill_zero();
    const scatter_params sc{run_rows.data(), run_lengths.data(), run_count.data(), row_ptr.data()};
    scatter_row_counts_kernel<<<detail::grid_blocks(unique, block_threads, ctx), block_threads, 0,
                                stream>>>(sc);
    SPADE_CHECK_LAUNCH("scattering row lengths (coo_to_csr)");
  }
  // rows + 1 counts (the last is zero), so the exclusive sum ends with nnz in row_ptr[rows].
  detail::cub_run(ctx, "turning row lengths into row pointers (cub::DeviceScan::ExclusiveSum)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, row_ptr.data(),
                                                         std::int64_t{rows} + 1, stream);
                  });
  return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

SPADE_CONVERT_CSR_COO_INSTANTIATIONS(float)
SPADE_CONVERT_CSR_COO_INSTANTIATIONS(double)

}  // namespace spade::device
