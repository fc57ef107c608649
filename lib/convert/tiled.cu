// GPU csr ↔ tiled conversions: one CUB radix sort by (tile, bit) into tiles, and back through
// bitmap popcounts, scans and a by-key scan that places each tile's part of a row.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convert/instantiate.hpp"
#include "detail/cub_temp.cuh"
#include "spade/core/error.hpp"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {

constexpr int block_threads = 256;

__device__ std::int64_t first_thread() {
  return std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ std::int64_t thread_stride() {
  return std::int64_t{gridDim.x} * blockDim.x;
}

// ---- csr → tiled ------------------------------------------------------------------------------

struct key_params {
  const index_t* d_row_ptr;
  const index_t* d_col_idx;
  std::uint64_t* d_keys;  // (nnz): tile number · 64 + bit
  std::int64_t rows;
  std::int64_t tile_cols;
};

// A warp per row keeps long rows from serialising on one thread.
__global__ void __launch_bounds__(block_threads) entry_keys_kernel(key_params p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = thread_stride() / 32;
  for (std::int64_t r = first_thread() / 32; r < p.rows; r += warps) {
    const std::uint64_t tile_row_base = static_cast<std::uint64_t>(r >> 3) * p.tile_cols;
    const int local_row = static_cast<int>(r & 7);
    for (index_t e = p.d_row_ptr[r] + lane; e < p.d_row_ptr[r + 1]; e += 32) {
      const index_t c = p.d_col_idx[e];
      p.d_keys[e] = ((tile_row_base + static_cast<std::uint64_t>(c >> 3)) << 6) |
                    static_cast<std::uint64_t>(tile_bit(local_row, c & 7));
    }
  }
}

__global__ void __launch_bounds__(block_threads)
    tile_numbers_kernel(const std::uint64_t* d_keys, std::uint64_t* d_tiles, std::int64_t nnz) {
  for (std::int64_t e = first_thread(); e < nnz; e += thread_stride())
    d_tiles[e] = d_keys[e] >> 6;
}

struct tile_params {
  const std::uint64_t* d_keys;         // (nnz), sorted
  const std::uint64_t* d_tile_number;  // (tiles), unique tile numbers in order
  const index_t* d_tile_offset;        // (tiles + 1)
  index_t* d_tile_row;
  index_t* d_tile_col;
  std::uint64_t* d_bitmap;
  std::int64_t tiles;
  std::int64_t tile_cols;
};

__global__ void __launch_bounds__(block_threads) tile_fill_kernel(tile_params p) {
  for (std::int64_t t = first_thread(); t < p.tiles; t += thread_stride()) {
    const std::uint64_t number = p.d_tile_number[t];
    p.d_tile_row[t] = static_cast<index_t>(number / static_cast<std::uint64_t>(p.tile_cols));
    p.d_tile_col[t] = static_cast<index_t>(number % static_cast<std::uint64_t>(p.tile_cols));
    std::uint64_t bits = 0;
    for (index_t e = p.d_tile_offset[t]; e < p.d_tile_offset[t + 1]; ++e)
      bits |= std::uint64_t{1} << (p.d_keys[e] & 63);
    p.d_bitmap[t] = bits;
  }
}

// ---- tiled → csr ------------------------------------------------------------------------------

struct row_count_params {
  const index_t* d_tile_row;
  const std::uint64_t* d_bitmap;
  index_t* d_row_lengths;     // (rows + 1), zeroed
  std::uint32_t* d_part_row;  // (8 · tiles), byte-major: the csr row of byte j of tile t
  index_t* d_part_count;      // (8 · tiles): entries of that byte
  std::int64_t tiles;
};

__global__ void __launch_bounds__(block_threads) row_count_kernel(row_count_params p) {
  for (std::int64_t t = first_thread(); t < p.tiles; t += thread_stride()) {
    const std::uint64_t bits = p.d_bitmap[t];
    const std::uint32_t first_row = static_cast<std::uint32_t>(p.d_tile_row[t]) * 8u;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int count = __popcll((bits >> (8 * j)) & 0xff);
      p.d_part_row[j * p.tiles + t] = first_row + static_cast<std::uint32_t>(j);
      p.d_part_count[j * p.tiles + t] = count;
      if (count > 0) atomicAdd(p.d_row_lengths + first_row + j, count);
    }
  }
}

template <class T>
struct scatter_params {
  const index_t* d_tile_col;
  const index_t* d_tile_offset;
  const std::uint64_t* d_bitmap;
  const T* d_values;
  const index_t* d_tile_row;
  const index_t* d_row_ptr;
  const index_t* d_part_start;  // (8 · tiles): entries of the same row in earlier tiles
  index_t* d_col_idx;
  T* d_out_values;
  std::int64_t tiles;
};

// A warp per tile, a lane per two bit positions: the lanes holding one row's entries write
// one contiguous run of that row, so a store instruction touches at most 8 row runs.
template <class T>
__global__ void __launch_bounds__(block_threads) scatter_kernel(scatter_params<T> p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = thread_stride() / 32;
  for (std::int64_t t = first_thread() / 32; t < p.tiles; t += warps) {
    const std::uint64_t bits = p.d_bitmap[t];
    const index_t first_row = p.d_tile_row[t] * 8;
    const index_t first_col = p.d_tile_col[t] * 8;
    const index_t source = p.d_tile_offset[t];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int bit = lane + 32 * half;
      if (((bits >> bit) & 1u) == 0) continue;
      const int row = bit >> 3;
      const int column = bit & 7;
      const auto row_bits = static_cast<unsigned>((bits >> (8 * row)) & 0xffu);
      const index_t dest = p.d_row_ptr[first_row + row] + p.d_part_start[row * p.tiles + t] +
                           __popc(row_bits & ((1u << column) - 1u));
      p.d_col_idx[dest] = first_col + column;
      p.d_out_values[dest] = p.d_values[source + __popcll(bits & ((std::uint64_t{1} << bit) - 1))];
    }
  }
}

}  // namespace

template <scalar T>
tiled<T, gpu> csr_to_tiled(const csr<T, gpu>& a) {
  const std::int64_t nnz = a.nnz();
  const std::int64_t tile_cols = (std::int64_t{a.cols()} + 7) / 8;
  const std::int64_t tile_rows = (std::int64_t{a.rows()} + 7) / 8;
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  if (nnz == 0) {
    device_buffer<index_t> tile_offset(1, ctx);
    tile_offset.fill_zero();
    return tiled<T, gpu>(unchecked, a.rows(), a.cols(), {}, {}, std::move(tile_offset), {}, {});
  }
  device_buffer<std::uint64_t> keys(static_cast<std::size_t>(nnz), ctx);
  {
    const key_params kp{a.row_ptr().data(), a.col_idx().data(), keys.data(), a.rows(), tile_cols};
    entry_keys_kernel<<<detail::grid_blocks(std::int64_t{a.rows()} * 32, block_threads, ctx),
                        block_threads, 0, stream>>>(kp);
    SPADE_CHECK_LAUNCH("keying entries by (tile, bit) (csr_to_tiled)");
  }
  // Tile numbers stay below tile_rows · tile_cols, so only the bits they use are sorted.
  const auto key_bits = static_cast<int>(
      std::bit_width(static_cast<std::uint64_t>(tile_rows * tile_cols) * 64u - 1u));
  device_buffer<std::uint64_t> sorted_keys(static_cast<std::size_t>(nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(nnz), ctx);
  detail::cub_run(ctx, "sorting entries by (tile, bit) (cub::DeviceRadixSort)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys.data(),
                                                           sorted_keys.data(), a.values().data(),
                                                           values.data(), nnz, 0, key_bits, stream);
                  });
  // keys now holds each sorted entry's tile number (the run-length encoder's input).
  tile_numbers_kernel<<<detail::grid_blocks(nnz, block_threads, ctx), block_threads, 0, stream>>>(
      sorted_keys.data(), keys.data(), nnz);
  SPADE_CHECK_LAUNCH("reading tile numbers off the keys (csr_to_tiled)");
  device_buffer<std::uint64_t> tile_numbers(static_cast<std::size_t>(nnz), ctx);
  device_buffer<index_t> counts(static_cast<std::size_t>(nnz) + 1, ctx);
  device_buffer<index_t> tile_count(1, ctx);
  detail::cub_run(
      ctx, "finding the tiles (cub::DeviceRunLengthEncode)", [&](void* d_temp, std::size_t& bytes) {
        return cub::DeviceRunLengthEncode::Encode(d_temp, bytes, keys.data(), tile_numbers.data(),
                                                  counts.data(), tile_count.data(), nnz, stream);
      });
  const std::int64_t tiles = tile_count.to_host()[0];
  SPADE_CUDA_TRY(cudaMemsetAsync(counts.data() + tiles, 0, sizeof(index_t), stream),
                 "closing the tile counts (csr_to_tiled)");
  device_buffer<index_t> tile_offset(static_cast<std::size_t>(tiles) + 1, ctx);
  detail::cub_run(ctx, "scanning tile counts into offsets (cub::DeviceScan)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, counts.data(),
                                                         tile_offset.data(), tiles + 1, stream);
                  });
  device_buffer<index_t> tile_row(static_cast<std::size_t>(tiles), ctx);
  device_buffer<index_t> tile_col(static_cast<std::size_t>(tiles), ctx);
  device_buffer<std::uint64_t> bitmap(static_cast<std::size_t>(tiles), ctx);
  const tile_params tp{sorted_keys.data(),
                       tile_numbers.data(),
                       tile_offset.data(),
                       tile_row.data(),
                       tile_col.data(),
                       bitmap.data(),
                       tiles,
                       tile_cols};
  tile_fill_kernel<<<detail::grid_blocks(tiles, block_threads, ctx), block_threads, 0, stream>>>(
      tp);
  SPADE_CHECK_LAUNCH("writing tile coordinates and bitmaps (csr_to_tiled)");
  return tiled<T, gpu>(unchecked, a.rows(), a.cols(), std::move(tile_row), std::move(tile_col),
                       std::move(tile_offset), std::move(bitmap), std::move(values));
}

template <scalar T>
csr<T, gpu> tiled_to_csr(const tiled<T, gpu>& a) {
  const index_t rows = a.rows();
  const std::int64_t tiles = a.tiles();
  context& ctx = detail::context_of(a.bitmap(), a.tile_offset(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  if (tiles == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, rows, a.cols(), std::move(row_ptr), {}, {});
  }
  // The last tile row may reach past the matrix's rows; its bytes there are empty, so the
  // counts get rows + 8 slots and only the first rows + 1 are scanned.
  device_buffer<index_t> row_lengths(static_cast<std::size_t>(rows) + 8, ctx);
  row_lengths.fill_zero();
  const std::int64_t parts = 8 * tiles;
  device_buffer<std::uint32_t> part_row(static_cast<std::size_t>(parts), ctx);
  device_buffer<index_t> part_count(static_cast<std::size_t>(parts), ctx);
  const row_count_params rp{a.tile_row().data(), a.bitmap().data(), row_lengths.data(),
                            part_row.data(),     part_count.data(), tiles};
  row_count_kernel<<<detail::grid_blocks(tiles, block_threads, ctx), block_threads, 0, stream>>>(
      rp);
  SPADE_CHECK_LAUNCH("counting each row's entries off the bitmaps (tiled_to_csr)");
  detail::cub_run(ctx, "scanning row lengths into row pointers (cub::DeviceScan)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, row_lengths.data(),
                                                         row_ptr.data(), rows + 1, stream);
                  });
  // Byte-major parts: consecutive parts with one row are that row's tiles left to right, so a
  // scan by row gives each part the entries of its row in earlier tiles.
  device_buffer<index_t> part_start(static_cast<std::size_t>(parts), ctx);
  detail::cub_run(ctx, "placing each tile's part of a row (cub::DeviceScan::ExclusiveSumByKey)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSumByKey(
                        d_temp, bytes, part_row.data(), part_count.data(), part_start.data(), parts,
                        cuda::std::equal_to<>{}, stream);
                  });
  const auto nnz = static_cast<std::size_t>(a.nnz());
  device_buffer<index_t> col_idx(nnz, ctx);
  device_buffer<T> values(nnz, ctx);
  const scatter_params<T> sp{a.tile_col().data(), a.tile_offset().data(),
                             a.bitmap().data(),   a.values().data(),
                             a.tile_row().data(), row_ptr.data(),
                             part_start.data(),   col_idx.data(),
                             values.data(),       tiles};
  scatter_kernel<T>
      <<<detail::grid_blocks(tiles * 32, block_threads, ctx), block_threads, 0, stream>>>(sp);
  SPADE_CHECK_LAUNCH("scattering tile entries into csr rows (tiled_to_csr)");
  return csr<T, gpu>(unchecked, rows, a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

SPADE_CONVERT_TILED_INSTANTIATIONS(float)
SPADE_CONVERT_TILED_INSTANTIATIONS(double)

}  // namespace spade::device
