// GPU dense conversions: csr → dense scatter, dense → csr count / scan / fill, tiled relayout.
#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "convert/instantiate.hpp"
#include "detail/cub_temp.cuh"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr unsigned int full_warp = 0xffffffffu;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

// Transpose tiles are tile_dim × tile_dim, moved by a tile_dim × tile_rows block (each thread
// carries tile_dim / tile_rows elements); the padding column keeps the column-wise reads of
// the shared tile free of bank conflicts.
constexpr int tile_dim = 32;
constexpr int tile_rows = 8;
constexpr int transpose_threads = tile_dim * tile_rows;

// The first warp index of this thread and the warp stride of a grid-stride loop over rows.
__device__ std::int64_t first_warp() {
  return (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
}
__device__ std::int64_t warp_stride() {
  return std::int64_t{gridDim.x} * warps_per_block;
}

// ---- relayout: out = inᵀ on row-major storage ------------------------------------------------

template <class T>
struct transpose_params {
  const T* d_in;  // (rows, cols) row-major
  T* d_out;       // (cols, rows) row-major
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t tiles_across;  // tiles along a row of d_in
  std::int64_t tiles;
};

template <class T>
__device__ void transpose_tile(const transpose_params<T>& p, T (&tile)[tile_dim][tile_dim + 1],
                               std::int64_t t) {
  const std::int64_t row0 = t / p.tiles_across * tile_dim;
  const std::int64_t col0 = t % p.tiles_across * tile_dim;
  for (int r = threadIdx.y; r < tile_dim; r += tile_rows) {
    const std::int64_t i = row0 + r;
    const std::int64_t j = col0 + threadIdx.x;
    if (i < p.rows && j < p.cols) tile[r][threadIdx.x] = p.d_in[i * p.cols + j];
  }
  __syncthreads();
  for (int c = threadIdx.y; c < tile_dim; c += tile_rows) {
    const std::int64_t i = row0 + threadIdx.x;
    const std::int64_t j = col0 + c;
    if (i < p.rows && j < p.cols) p.d_out[j * p.rows + i] = tile[threadIdx.x][c];
  }
  __syncthreads();  // the block's next tile overwrites `tile`
}

template <class T>
__global__ void __launch_bounds__(transpose_threads) transpose_kernel(transpose_params<T> p) {
  __shared__ T tile[tile_dim][tile_dim + 1];
  for (std::int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x)
    transpose_tile(p, tile, t);
}

// d_out (cols, rows) = d_in (rows, cols)ᵀ, both row-major; rows, cols > 0.
template <class T>
void transpose(context& ctx, const T* d_in, index_t rows, index_t cols, T* d_out) {
  const std::int64_t tiles_down = (std::int64_t{rows} + tile_dim - 1) / tile_dim;
  const std::int64_t tiles_across = (std::int64_t{cols} + tile_dim - 1) / tile_dim;
  const transpose_params<T> p{d_in, d_out, rows, cols, tiles_across, tiles_down * tiles_across};
  transpose_kernel<T><<<detail::grid_blocks(p.tiles, 1, ctx), dim3(tile_dim, tile_rows), 0,
                        detail::stream_of(ctx)>>>(p);
  SPADE_CHECK_LAUNCH("transposing a dense matrix between layouts (relayout)");
}

// ---- csr → dense -----------------------------------------------------------------------------

template <class T>
struct scatter_params {
  const index_t* d_row_ptr;  // (rows + 1)
  const index_t* d_col_idx;  // (nnz)
  const T* d_values;         // (nnz)
  T* d_out;                  // (rows, cols) in Layout, zero-filled
  std::int64_t rows;
  std::int64_t cols;
};

// A warp per row: the row's entries are read coalesced, and no two rows write one element.
template <class T, class Layout>
__device__ void scatter_row(const scatter_params<T>& p, std::int64_t row, int lane) {
  const std::int64_t end = p.d_row_ptr[row + 1];
  for (std::int64_t k = std::int64_t{p.d_row_ptr[row]} + lane; k < end; k += warp_threads) {
    const std::int64_t col = p.d_col_idx[k];
    const std::int64_t at =
        std::is_same_v<Layout, row_major> ? row * p.cols + col : col * p.rows + row;
    p.d_out[at] = p.d_values[k];
  }
}

template <class T, class Layout>
__global__ void __launch_bounds__(block_threads) scatter_kernel(scatter_params<T> p) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  for (std::int64_t row = first_warp(); row < p.rows; row += warp_stride())
    scatter_row<T, Layout>(p, row, lane);
}

// ---- dense (row-major) → csr -----------------------------------------------------------------

template <class T>
struct count_params {
  const T* d_in;           // (rows, cols) row-major
  std::int64_t* d_counts;  // (rows + 1): nonzeros per row, the last left alone
  std::int64_t rows;
  std::int64_t cols;
};

// `v != 0` is what keeps NaN and drops -0.0, as the host conversion does.
template <class T>
__device__ void count_row(const count_params<T>& p, std::int64_t row, int lane) {
  const T* values = p.d_in + row * p.cols;
  int count = 0;
  for (std::int64_t j = lane; j < p.cols; j += warp_threads)
    count += values[j] != T(0) ? 1 : 0;
  for (int offset = warp_threads / 2; offset > 0; offset /= 2)
    count += __shfl_xor_sync(full_warp, count, offset);
  if (lane == 0) p.d_counts[row] = count;
}

template <class T>
__global__ void __launch_bounds__(block_threads) count_kernel(count_params<T> p) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  for (std::int64_t row = first_warp(); row < p.rows; row += warp_stride())
    count_row(p, row, lane);
}

template <class T>
struct fill_params {
  const T* d_in;                  // (rows, cols) row-major
  const std::int64_t* d_offsets;  // (rows + 1): exclusive sum of the row counts
  index_t* d_row_ptr;             // (rows + 1)
  index_t* d_col_idx;             // (nnz)
  T* d_values;                    // (nnz)
  std::int64_t rows;
  std::int64_t cols;
};

// The warp walks its row 32 columns at a time; a ballot tells each lane how many kept entries
// precede it in the chunk, so entries land in column order without a second pass.
template <class T>
__device__ void fill_row(const fill_params<T>& p, std::int64_t row, int lane) {
  const T* values = p.d_in + row * p.cols;
  const unsigned int lanes_below = (1u << lane) - 1u;
  std::int64_t next = p.d_offsets[row];
  if (lane == 0) {
    p.d_row_ptr[row] = static_cast<index_t>(next);
    if (row == p.rows - 1) p.d_row_ptr[p.rows] = static_cast<index_t>(p.d_offsets[p.rows]);
  }
  for (std::int64_t chunk = 0; chunk < p.cols; chunk += warp_threads) {
    const std::int64_t j = chunk + lane;
    const T v = j < p.cols ? values[j] : T(0);
    const bool keep = v != T(0);
    const unsigned int kept = __ballot_sync(full_warp, keep);
    if (keep) {
      const std::int64_t at = next + __popc(kept & lanes_below);
      p.d_col_idx[at] = static_cast<index_t>(j);
      p.d_values[at] = v;
    }
    next += __popc(kept);
  }
}

template <class T>
__global__ void __launch_bounds__(block_threads) fill_kernel(fill_params<T> p) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  for (std::int64_t row = first_warp(); row < p.rows; row += warp_stride())
    fill_row(p, row, lane);
}

}  // namespace

template <scalar T, layout Layout>
dense<T, gpu, Layout> csr_to_dense(const csr<T, gpu>& a) {
  const std::size_t count = static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(a.cols());
  if (count == 0) return dense<T, gpu, Layout>(unchecked, a.rows(), a.cols(), {});
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  device_buffer<T> out(count, ctx);
  out.fill_zero();
  if (a.nnz() > 0) {
    const scatter_params<T> p{a.row_ptr().data(), a.col_idx().data(), a.values().data(),
                              out.data(),         a.rows(),           a.cols()};
    scatter_kernel<T, Layout><<<detail::grid_blocks(p.rows, warps_per_block, ctx), block_threads, 0,
                                detail::stream_of(ctx)>>>(p);
    SPADE_CHECK_LAUNCH("scattering csr entries into a dense matrix (csr_to_dense)");
  }
  return dense<T, gpu, Layout>(unchecked, a.rows(), a.cols(), std::move(out));
}

template <scalar T, layout Layout>
csr<T, gpu> dense_to_csr(const dense<T, gpu, Layout>& d) {
  const index_t rows = d.rows();
  const index_t cols = d.cols();
  context& ctx = detail::context_of(d.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  if (d.element_count() == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), {}, {});
  }

  // Rows are walked along their columns, so a column-major matrix is first relaid out: one
  // coalesced transpose instead of strided reads in both passes below.
  const T* d_in = d.data();
  device_buffer<T> row_major_copy;
  if constexpr (std::is_same_v<Layout, col_major>) {
    row_major_copy = device_buffer<T>(d.element_count(), ctx);
    transpose(ctx, d.data(), cols, rows, row_major_copy.data());
    d_in = row_major_copy.data();
  }

  // 64-bit offsets: the total may pass 2^31 - 1, which must be reported, not wrapped.
  device_buffer<std::int64_t> offsets(static_cast<std::size_t>(rows) + 1, ctx);
  const count_params<T> cp{d_in, offsets.data(), rows, cols};
  count_kernel<T>
      <<<detail::grid_blocks(rows, warps_per_block, ctx), block_threads, 0, stream>>>(cp);
  SPADE_CHECK_LAUNCH("counting nonzeros per dense row (dense_to_csr)");
  ctx.fill_zero(offsets.data() + rows, sizeof(std::int64_t));
  detail::cub_run(ctx, "turning row counts into offsets (cub::DeviceScan::ExclusiveSum)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, offsets.data(),
                                                         std::int64_t{rows} + 1, stream);
                  });
  std::int64_t nnz = 0;
  ctx.copy_to_host(&nnz, offsets.data() + rows, sizeof(nnz));  // the one host sync
  if (nnz > std::numeric_limits<index_t>::max())
    throw invalid_matrix("dense_to_csr: " + std::to_string(nnz) + " nonzeros in a " +
                         std::to_string(rows) + "x" + std::to_string(cols) +
                         " matrix exceed the 32-bit index type (at most 2147483647)");

  device_buffer<index_t> col_idx(static_cast<std::size_t>(nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(nnz), ctx);
  const fill_params<T> fp{d_in, offsets.data(), row_ptr.data(), col_idx.data(), values.data(), rows,
                          cols};
  fill_kernel<T><<<detail::grid_blocks(rows, warps_per_block, ctx), block_threads, 0, stream>>>(fp);
  SPADE_CHECK_LAUNCH("writing csr entries from dense rows (dense_to_csr)");
  return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

template <scalar T, layout From, layout To>
dense<T, gpu, To> relayout(const dense<T, gpu, From>& d) {
  if constexpr (std::is_same_v<From, To>) {
    return d;
  } else {
    if (d.element_count() == 0) return dense<T, gpu, To>(unchecked, d.rows(), d.cols(), {});
    context& ctx = detail::context_of(d.values());
    device_buffer<T> out(d.element_count(), ctx);
    // Row-major storage of (rows, cols) is column-major storage of its transpose.
    if constexpr (std::is_same_v<From, row_major>)
      transpose(ctx, d.data(), d.rows(), d.cols(), out.data());
    else
      transpose(ctx, d.data(), d.cols(), d.rows(), out.data());
    return dense<T, gpu, To>(unchecked, d.rows(), d.cols(), std::move(out));
  }
}

SPADE_CONVERT_DENSE_INSTANTIATIONS(float)
SPADE_CONVERT_DENSE_INSTANTIATIONS(double)

}  // namespace spade::device
