// GPU csr / dense ↔ gcoo conversions: group offsets read off row pointers, CUB radix sorts of
// packed (group, column, row) keys, and the GCOO paper's two-pass dense → gcoo (Algorithm 1).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/thread/thread_search.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "convert/instantiate.hpp"
#include "detail/cub_temp.cuh"
#include "spade/core/error.hpp"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

// Grid-stride loops: over threads for per-entry work, over warps for per-row or per-tile work.
__device__ std::int64_t first_thread() {
  return std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ std::int64_t thread_stride() {
  return std::int64_t{gridDim.x} * blockDim.x;
}
__device__ std::int64_t first_warp() {
  return first_thread() / warp_threads;
}
__device__ std::int64_t warp_stride() {
  return std::int64_t{gridDim.x} * warps_per_block;
}
__device__ int lane_id() {
  return static_cast<int>(threadIdx.x) % warp_threads;
}
__device__ int warp_in_block() {
  return static_cast<int>(threadIdx.x) / warp_threads;
}

// ---- csr → gcoo ------------------------------------------------------------------------------

struct group_range_params {
  const index_t* d_row_ptr;  // (rows + 1)
  index_t* d_group_offsets;  // (groups)
  index_t* d_group_nnz;      // (groups)
  std::int64_t rows;
  std::int64_t group_size;
  std::int64_t groups;
};

// A group's csr entries are already contiguous, so its range is two row pointers apart.
__global__ void __launch_bounds__(block_threads) group_range_kernel(group_range_params p) {
  for (std::int64_t g = first_thread(); g < p.groups; g += thread_stride()) {
    const std::int64_t first_row = g * p.group_size;
    const std::int64_t end_row = std::min(first_row + p.group_size, p.rows);
    const index_t begin = p.d_row_ptr[first_row];
    p.d_group_offsets[g] = begin;
    p.d_group_nnz[g] = p.d_row_ptr[end_row] - begin;
  }
}

struct expand_params {
  const index_t* d_row_ptr;  // (rows + 1)
  index_t* d_row_idx;        // (nnz)
  std::int64_t rows;
};

// A warp per row keeps a long row's writes coalesced.
__global__ void __launch_bounds__(block_threads) expand_rows_kernel(expand_params p) {
  for (std::int64_t row = first_warp(); row < p.rows; row += warp_stride()) {
    const std::int64_t end = p.d_row_ptr[row + 1];
    for (std::int64_t k = std::int64_t{p.d_row_ptr[row]} + lane_id(); k < end; k += warp_threads)
      p.d_row_idx[k] = static_cast<index_t>(row);
  }
}

// Keys pack (group, column, row in group) into group_bits + col_bits + row_bits bits, so one
// radix sort over only those bits puts every group in (column, row) order, groups in order.
template <class Key>
struct group_key_params {
  const index_t* d_row_ptr;  // (rows + 1)
  const index_t* d_col_idx;  // (nnz)
  Key* d_keys;               // (nnz)
  std::int64_t rows;
  std::int64_t group_size;
  int col_bits;
  int row_bits;
};

template <class Key>
__global__ void __launch_bounds__(block_threads) group_keys_kernel(group_key_params<Key> p) {
  for (std::int64_t row = first_warp(); row < p.rows; row += warp_stride()) {
    const std::int64_t group = row / p.group_size;
    const Key fixed = (static_cast<Key>(group) << (p.col_bits + p.row_bits)) |
                      static_cast<Key>(row - group * p.group_size);
    const std::int64_t end = p.d_row_ptr[row + 1];
    for (std::int64_t k = std::int64_t{p.d_row_ptr[row]} + lane_id(); k < end; k += warp_threads)
      p.d_keys[k] = fixed | (static_cast<Key>(p.d_col_idx[k]) << p.row_bits);
  }
}

template <class Key>
struct group_split_params {
  const Key* d_keys;   // (nnz), sorted
  index_t* d_row_idx;  // (nnz)
  index_t* d_col_idx;  // (nnz)
  std::int64_t count;
  std::int64_t group_size;
  int col_bits;
  int row_bits;
};

template <class Key>
__global__ void __launch_bounds__(block_threads) group_split_kernel(group_split_params<Key> p) {
  const Key row_mask = (Key{1} << p.row_bits) - 1;
  const Key col_mask = (Key{1} << p.col_bits) - 1;
  for (std::int64_t k = first_thread(); k < p.count; k += thread_stride()) {
    const Key key = p.d_keys[k];
    const auto group = static_cast<std::int64_t>(key >> (p.col_bits + p.row_bits));
    p.d_row_idx[k] =
        static_cast<index_t>(group * p.group_size + static_cast<std::int64_t>(key & row_mask));
    p.d_col_idx[k] = static_cast<index_t>((key >> p.row_bits) & col_mask);
  }
}

// The entries of `a` reordered into groups of `group_size` rows, each by (column, row).
// key_bits = group_bits + col_bits + row_bits fits Key with a bit to spare, so no shift below
// reaches Key's width.
template <class Key, class T>
void sort_into_groups(context& ctx, const csr<T, gpu>& a, index_t group_size, int col_bits,
                      int row_bits, int key_bits, device_buffer<index_t>& row_idx,
                      device_buffer<index_t>& col_idx, device_buffer<T>& values) {
  const std::size_t nnz = a.col_idx().size();
  const int count = static_cast<int>(nnz);  // csr's invariants keep nnz within index_t
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<Key> keys_a(nnz, ctx);
  device_buffer<Key> keys_b(nnz, ctx);
  device_buffer<T> values_a(nnz, ctx);
  device_buffer<T> values_b(nnz, ctx);
  const group_key_params<Key> kp{a.row_ptr().data(), a.col_idx().data(), keys_a.data(), a.rows(),
                                 group_size,         col_bits,           row_bits};
  group_keys_kernel<Key>
      <<<detail::grid_blocks(kp.rows, warps_per_block, ctx), block_threads, 0, stream>>>(kp);
  SPADE_CHECK_LAUNCH("packing csr entries into (group, column, row) keys (csr_to_gcoo)");
  // The values ride along the sort: for float as cheap as a permutation, and no gather after.
  ctx.copy_on_device(values_a.data(), a.values().data(), nnz * sizeof(T));

  cub::DoubleBuffer<Key> keys(keys_a.data(), keys_b.data());
  cub::DoubleBuffer<T> sorted(values_a.data(), values_b.data());
  if (count > 1)
    detail::cub_run(ctx, "sorting csr entries by (group, column, row) (cub::DeviceRadixSort)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys, sorted, count, 0,
                                                             key_bits, stream);
                    });

  row_idx = device_buffer<index_t>(nnz, ctx);
  col_idx = device_buffer<index_t>(nnz, ctx);
  const group_split_params<Key> sp{
      keys.Current(), row_idx.data(), col_idx.data(), static_cast<std::int64_t>(nnz),
      group_size,     col_bits,       row_bits};
  group_split_kernel<Key>
      <<<detail::grid_blocks(sp.count, block_threads, ctx), block_threads, 0, stream>>>(sp);
  SPADE_CHECK_LAUNCH("unpacking sorted keys into gcoo rows and columns (csr_to_gcoo)");
  values = sorted.Current() == values_a.data() ? std::move(values_a) : std::move(values_b);
}

// ---- gcoo → csr ------------------------------------------------------------------------------

// Keys pack (row, column) as row << col_bits | col: ascending keys are row-major order.
template <class Key>
struct row_key_params {
  const index_t* d_row_idx;  // (nnz)
  const index_t* d_col_idx;  // (nnz)
  Key* d_keys;               // (nnz)
  std::int64_t count;
  int col_bits;
};

template <class Key>
__global__ void __launch_bounds__(block_threads) row_keys_kernel(row_key_params<Key> p) {
  for (std::int64_t k = first_thread(); k < p.count; k += thread_stride())
    p.d_keys[k] =
        (static_cast<Key>(p.d_row_idx[k]) << p.col_bits) | static_cast<Key>(p.d_col_idx[k]);
}

template <class Key>
struct col_split_params {
  const Key* d_keys;   // (nnz), sorted
  index_t* d_col_idx;  // (nnz)
  std::int64_t count;
  int col_bits;
};

template <class Key>
__global__ void __launch_bounds__(block_threads) col_split_kernel(col_split_params<Key> p) {
  const Key col_mask = (Key{1} << p.col_bits) - 1;
  for (std::int64_t k = first_thread(); k < p.count; k += thread_stride())
    p.d_col_idx[k] = static_cast<index_t>(p.d_keys[k] & col_mask);
}

// Row pointers by binary search in entries sorted by row (the row is the key's top part):
// balanced however the rows are filled, and no counts, atomics or scan. K is the sorted element
// type; row r starts at the first element not below r << shift.
template <class K>
struct row_ptr_params {
  const K* d_sorted;   // (count), non-decreasing
  index_t* d_row_ptr;  // (rows + 1)
  std::int64_t rows;
  index_t count;
  int shift;
};

template <class K>
__global__ void __launch_bounds__(block_threads) row_ptr_kernel(row_ptr_params<K> p) {
  for (std::int64_t r = first_thread(); r <= p.rows; r += thread_stride())
    p.d_row_ptr[r] =
        r == p.rows ? p.count : cub::LowerBound(p.d_sorted, p.count, static_cast<K>(r) << p.shift);
}

template <class K>
void fill_row_ptr(context& ctx, const K* d_sorted, index_t rows, index_t count, int shift,
                  index_t* d_row_ptr) {
  const row_ptr_params<K> p{d_sorted, d_row_ptr, rows, count, shift};
  row_ptr_kernel<K><<<detail::grid_blocks(std::int64_t{rows} + 1, block_threads, ctx),
                      block_threads, 0, detail::stream_of(ctx)>>>(p);
  SPADE_CHECK_LAUNCH("searching row starts in row-sorted entries (gcoo_to_csr)");
}

// The entries of `a` in row-major order; key_bits = row_bits + col_bits is below Key's width.
template <class Key, class T>
void sort_row_major(context& ctx, const gcoo<T, gpu>& a, int col_bits, int key_bits,
                    device_buffer<index_t>& row_ptr, device_buffer<index_t>& col_idx,
                    device_buffer<T>& values) {
  const std::size_t nnz = a.col_idx().size();
  const int count = static_cast<int>(nnz);  // gcoo's invariants keep nnz within index_t
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<Key> keys_a(nnz, ctx);
  device_buffer<Key> keys_b(nnz, ctx);
  device_buffer<T> values_a(nnz, ctx);
  device_buffer<T> values_b(nnz, ctx);
  const row_key_params<Key> kp{a.row_idx().data(), a.col_idx().data(), keys_a.data(),
                               static_cast<std::int64_t>(nnz), col_bits};
  row_keys_kernel<Key>
      <<<detail::grid_blocks(kp.count, block_threads, ctx), block_threads, 0, stream>>>(kp);
  SPADE_CHECK_LAUNCH("packing gcoo (row, column) pairs into sort keys (gcoo_to_csr)");
  ctx.copy_on_device(values_a.data(), a.values().data(), nnz * sizeof(T));

  cub::DoubleBuffer<Key> keys(keys_a.data(), keys_b.data());
  cub::DoubleBuffer<T> sorted(values_a.data(), values_b.data());
  if (count > 1)
    detail::cub_run(ctx, "sorting gcoo entries by (row, column) (cub::DeviceRadixSort)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys, sorted, count, 0,
                                                             key_bits, stream);
                    });

  col_idx = device_buffer<index_t>(nnz, ctx);
  const col_split_params<Key> sp{keys.Current(), col_idx.data(), static_cast<std::int64_t>(nnz),
                                 col_bits};
  col_split_kernel<Key>
      <<<detail::grid_blocks(sp.count, block_threads, ctx), block_threads, 0, stream>>>(sp);
  SPADE_CHECK_LAUNCH("unpacking sorted keys into csr columns (gcoo_to_csr)");
  fill_row_ptr<Key>(ctx, keys.Current(), a.rows(), count, col_bits, row_ptr.data());
  values = sorted.Current() == values_a.data() ? std::move(values_a) : std::move(values_b);
}

// ---- dense (row-major) → gcoo ----------------------------------------------------------------

// Both passes cut each group into tiles of one warp's width of columns, a lane per column: the
// warp reads rows of the tile coalesced, and the tiles of a group are independent work, so one
// wide group (1 × 10^6) fills the device as well as many narrow ones. Tiles are numbered group
// by group, left to right — the gcoo order — so an exclusive scan of per-tile counts is each
// tile's first write position.
struct tile_shape {
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t group_size;
  std::int64_t tiles_across;  // tiles per group
  std::int64_t tiles;

  __device__ std::int64_t first_row(std::int64_t tile) const {
    return tile / tiles_across * group_size;
  }
  __device__ std::int64_t end_row(std::int64_t tile) const {
    return std::min(first_row(tile) + group_size, rows);
  }
  __device__ std::int64_t column(std::int64_t tile, int lane) const {
    return tile % tiles_across * warp_threads + lane;
  }
};

using warp_sum = cub::WarpReduce<std::int64_t>;
using warp_scan = cub::WarpScan<std::int64_t>;

template <class T>
struct tile_count_params {
  const T* d_in;                // (rows, cols) row-major
  std::int64_t* d_tile_counts;  // (tiles + 1): entries per tile, the last left alone
  tile_shape shape;
};

// `v != 0` keeps NaN and drops -0.0, as dense_to_csr and the host conversion do.
template <class T>
__device__ std::int64_t count_column(const T* d_in, const tile_shape& s, std::int64_t tile,
                                     std::int64_t col) {
  std::int64_t count = 0;
  if (col < s.cols)
    for (std::int64_t r = s.first_row(tile), end = s.end_row(tile); r < end; ++r)
      count += d_in[r * s.cols + col] != T(0) ? 1 : 0;
  return count;
}

template <class T>
__device__ void count_tile(const tile_count_params<T>& p, warp_sum::TempStorage& storage,
                           std::int64_t tile, int lane) {
  const std::int64_t count = count_column(p.d_in, p.shape, tile, p.shape.column(tile, lane));
  const std::int64_t total = warp_sum(storage).Sum(count);
  if (lane == 0) p.d_tile_counts[tile] = total;
}

template <class T>
__global__ void __launch_bounds__(block_threads) count_tiles_kernel(tile_count_params<T> p) {
  __shared__ warp_sum::TempStorage storage[warps_per_block];
  const int lane = lane_id();
  for (std::int64_t tile = first_warp(); tile < p.shape.tiles; tile += warp_stride())
    count_tile(p, storage[warp_in_block()], tile, lane);
}

struct group_from_tiles_params {
  const std::int64_t* d_tile_offsets;  // (tiles + 1), exclusive sum of the tile counts
  index_t* d_group_offsets;            // (groups)
  index_t* d_group_nnz;                // (groups)
  std::int64_t groups;
  std::int64_t tiles_across;
};

__global__ void __launch_bounds__(block_threads)
    group_from_tiles_kernel(group_from_tiles_params p) {
  for (std::int64_t g = first_thread(); g < p.groups; g += thread_stride()) {
    const std::int64_t begin = p.d_tile_offsets[g * p.tiles_across];
    p.d_group_offsets[g] = static_cast<index_t>(begin);
    p.d_group_nnz[g] = static_cast<index_t>(p.d_tile_offsets[(g + 1) * p.tiles_across] - begin);
  }
}

template <class T>
struct tile_fill_params {
  const T* d_in;                       // (rows, cols) row-major
  const std::int64_t* d_tile_offsets;  // (tiles + 1)
  index_t* d_row_idx;                  // (nnz)
  index_t* d_col_idx;                  // (nnz)
  T* d_values;                         // (nnz)
  tile_shape shape;
};

// A lane owns one column of the tile: it counts the column's entries, a warp scan turns the
// counts into each column's first position (columns in order, rows in order within a column),
// and the lane writes its column. While a group has at most 32 rows, the count also records
// which rows are kept, so the write step reads only the kept values, not the whole column again.
template <class T>
__device__ void fill_tile(const tile_fill_params<T>& p, warp_scan::TempStorage& storage,
                          std::int64_t tile, int lane) {
  const tile_shape& s = p.shape;
  const std::int64_t col = s.column(tile, lane);
  const std::int64_t first_row = s.first_row(tile);
  const std::int64_t end_row = s.end_row(tile);
  const bool short_group = end_row - first_row <= warp_threads;
  std::int64_t count = 0;
  unsigned int kept_rows = 0;  // bit r: row first_row + r kept (short groups only)
  if (col < s.cols)
    for (std::int64_t r = first_row; r < end_row; ++r) {
      const bool keep = p.d_in[r * s.cols + col] != T(0);
      count += keep ? 1 : 0;
      if (short_group && keep) kept_rows |= 1u << (r - first_row);
    }
  std::int64_t before = 0;
  warp_scan(storage).ExclusiveSum(count, before);
  std::int64_t at = p.d_tile_offsets[tile] + before;
  const auto put = [&](std::int64_t r, T v) {
    p.d_row_idx[at] = static_cast<index_t>(r);
    p.d_col_idx[at] = static_cast<index_t>(col);
    p.d_values[at] = v;
    ++at;
  };
  if (short_group) {
    for (; kept_rows != 0; kept_rows &= kept_rows - 1) {
      const std::int64_t r = first_row + __ffs(static_cast<int>(kept_rows)) - 1;
      put(r, p.d_in[r * s.cols + col]);
    }
  } else if (count > 0) {
    for (std::int64_t r = first_row; r < end_row; ++r) {
      const T v = p.d_in[r * s.cols + col];
      if (v != T(0)) put(r, v);
    }
  }
}

template <class T>
__global__ void __launch_bounds__(block_threads) fill_tiles_kernel(tile_fill_params<T> p) {
  __shared__ warp_scan::TempStorage storage[warps_per_block];
  const int lane = lane_id();
  for (std::int64_t tile = first_warp(); tile < p.shape.tiles; tile += warp_stride())
    fill_tile(p, storage[warp_in_block()], tile, lane);
}

// ---- gcoo → dense ----------------------------------------------------------------------------

template <class T>
struct scatter_params {
  const index_t* d_row_idx;  // (nnz)
  const index_t* d_col_idx;  // (nnz)
  const T* d_values;         // (nnz)
  T* d_out;                  // (rows, cols) in Layout, zero-filled
  std::int64_t count;
  std::int64_t rows;
  std::int64_t cols;
};

// Positions are unique, so no two entries write one element.
template <class T, class Layout>
__global__ void __launch_bounds__(block_threads) scatter_kernel(scatter_params<T> p) {
  for (std::int64_t k = first_thread(); k < p.count; k += thread_stride()) {
    const std::int64_t row = p.d_row_idx[k];
    const std::int64_t col = p.d_col_idx[k];
    const std::int64_t at =
        std::is_same_v<Layout, row_major> ? row * p.cols + col : col * p.rows + row;
    p.d_out[at] = p.d_values[k];
  }
}

}  // namespace

template <scalar T>
gcoo<T, gpu> csr_to_gcoo(const csr<T, gpu>& a, index_t group_size) {
  detail::check_group_size("csr_to_gcoo", group_size);
  const index_t rows = a.rows();
  const index_t cols = a.cols();
  const index_t groups = detail::group_count(rows, group_size);
  if (groups == 0) return gcoo<T, gpu>(unchecked, rows, cols, group_size, {}, {}, {}, {}, {});
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<index_t> group_offsets(static_cast<std::size_t>(groups), ctx);
  device_buffer<index_t> group_nnz(static_cast<std::size_t>(groups), ctx);
  const group_range_params gp{
      a.row_ptr().data(), group_offsets.data(), group_nnz.data(), rows, group_size, groups};
  group_range_kernel<<<detail::grid_blocks(groups, block_threads, ctx), block_threads, 0, stream>>>(
      gp);
  SPADE_CHECK_LAUNCH("reading group ranges off csr row pointers (csr_to_gcoo)");

  const std::size_t nnz = a.col_idx().size();
  device_buffer<index_t> row_idx;
  device_buffer<index_t> col_idx;
  device_buffer<T> values;
  const int row_bits = detail::bits_for(std::min(group_size, rows));
  if (nnz == 0) {
    // No entries to move.
  } else if (row_bits == 0) {
    // One row per group: a row's csr order (by column) is already the group's order.
    row_idx = device_buffer<index_t>(nnz, ctx);
    const expand_params ep{a.row_ptr().data(), row_idx.data(), rows};
    expand_rows_kernel<<<detail::grid_blocks(rows, warps_per_block, ctx), block_threads, 0,
                         stream>>>(ep);
    SPADE_CHECK_LAUNCH("expanding csr row pointers to gcoo row indices (csr_to_gcoo)");
    col_idx = a.col_idx();
    values = a.values();
  } else {
    const int col_bits = detail::bits_for(cols);
    const int key_bits = detail::bits_for(groups) + col_bits + row_bits;
    if (key_bits < 32)
      sort_into_groups<std::uint32_t>(ctx, a, group_size, col_bits, row_bits, key_bits, row_idx,
                                      col_idx, values);
    else
      sort_into_groups<std::uint64_t>(ctx, a, group_size, col_bits, row_bits, key_bits, row_idx,
                                      col_idx, values);
  }
  return gcoo<T, gpu>(unchecked, rows, cols, group_size, std::move(values),
                      std::move(group_offsets), std::move(group_nnz), std::move(row_idx),
                      std::move(col_idx));
}

template <scalar T>
csr<T, gpu> gcoo_to_csr(const gcoo<T, gpu>& a) {
  const index_t rows = a.rows();
  const index_t cols = a.cols();
  const std::size_t nnz = a.col_idx().size();
  context& ctx = detail::context_of(a.group_offsets(), a.row_idx(), a.col_idx(), a.values());

  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  if (nnz == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), {}, {});
  }
  device_buffer<index_t> col_idx;
  device_buffer<T> values;
  if (detail::bits_for(std::min(a.group_size(), rows)) == 0) {
    // One row per group: entries are already in row-major order and their rows ascend.
    col_idx = a.col_idx();
    values = a.values();
    fill_row_ptr<index_t>(ctx, a.row_idx().data(), rows, a.nnz(), 0, row_ptr.data());
  } else {
    const int col_bits = detail::bits_for(cols);
    const int key_bits = detail::bits_for(rows) + col_bits;
    if (key_bits < 32)
      sort_row_major<std::uint32_t>(ctx, a, col_bits, key_bits, row_ptr, col_idx, values);
    else
      sort_row_major<std::uint64_t>(ctx, a, col_bits, key_bits, row_ptr, col_idx, values);
  }
  return csr<T, gpu>(unchecked, rows, cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

template <scalar T>
gcoo<T, gpu> dense_to_gcoo(const dense<T, gpu, row_major>& d, index_t group_size) {
  detail::check_group_size("dense_to_gcoo", group_size);
  const index_t rows = d.rows();
  const index_t cols = d.cols();
  const index_t groups = detail::group_count(rows, group_size);
  if (groups == 0) return gcoo<T, gpu>(unchecked, rows, cols, group_size, {}, {}, {}, {}, {});
  context& ctx = detail::context_of(d.values());
  const cudaStream_t stream = detail::stream_of(ctx);

  device_buffer<index_t> group_offsets(static_cast<std::size_t>(groups), ctx);
  device_buffer<index_t> group_nnz(static_cast<std::size_t>(groups), ctx);
  if (d.element_count() == 0) {
    group_offsets.fill_zero();
    group_nnz.fill_zero();
    return gcoo<T, gpu>(unchecked, rows, cols, group_size, {}, std::move(group_offsets),
                        std::move(group_nnz), {}, {});
  }

  const std::int64_t tiles_across = (std::int64_t{cols} + warp_threads - 1) / warp_threads;
  const tile_shape shape{rows, cols, group_size, tiles_across, groups * tiles_across};
  // 64-bit offsets: the total may pass 2^31 - 1, which must be reported, not wrapped.
  device_buffer<std::int64_t> tile_offsets(static_cast<std::size_t>(shape.tiles) + 1, ctx);
  const tile_count_params<T> cp{d.data(), tile_offsets.data(), shape};
  count_tiles_kernel<T>
      <<<detail::grid_blocks(shape.tiles, warps_per_block, ctx), block_threads, 0, stream>>>(cp);
  SPADE_CHECK_LAUNCH("counting nonzeros per dense tile (dense_to_gcoo)");
  ctx.fill_zero(tile_offsets.data() + shape.tiles, sizeof(std::int64_t));
  detail::cub_run(ctx, "turning tile counts into offsets (cub::DeviceScan::ExclusiveSum)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, tile_offsets.data(),
                                                         shape.tiles + 1, stream);
                  });
  const group_from_tiles_params gp{tile_offsets.data(), group_offsets.data(), group_nnz.data(),
                                   groups, tiles_across};
  group_from_tiles_kernel<<<detail::grid_blocks(groups, block_threads, ctx), block_threads, 0,
                            stream>>>(gp);
  SPADE_CHECK_LAUNCH("reading group ranges off tile offsets (dense_to_gcoo)");
  std::int64_t nnz = 0;
  ctx.copy_to_host(&nnz, tile_offsets.data() + shape.tiles, sizeof(nnz));  // the one host sync
  if (nnz > std::numeric_limits<index_t>::max())
    throw invalid_matrix("dense_to_gcoo: " + std::to_string(nnz) + " nonzeros in a " +
                         std::to_string(rows) + "x" + std::to_string(cols) +
                         " matrix exceed the 32-bit index type (at most 2147483647)");

  device_buffer<index_t> row_idx(static_cast<std::size_t>(nnz), ctx);
  device_buffer<index_t> col_idx(static_cast<std::size_t>(nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(nnz), ctx);
  if (nnz > 0) {
    const tile_fill_params<T> fp{d.data(),       tile_offsets.data(), row_idx.data(),
                                 col_idx.data(), values.data(),       shape};
    fill_tiles_kernel<T>
        <<<detail::grid_blocks(shape.tiles, warps_per_block, ctx), block_threads, 0, stream>>>(fp);
    SPADE_CHECK_LAUNCH("writing gcoo entries from dense tiles (dense_to_gcoo)");
  }
  return gcoo<T, gpu>(unchecked, rows, cols, group_size, std::move(values),
                      std::move(group_offsets), std::move(group_nnz), std::move(row_idx),
                      std::move(col_idx));
}

template <scalar T, layout Layout>
dense<T, gpu, Layout> gcoo_to_dense(const gcoo<T, gpu>& a) {
  const std::size_t count = static_cast<std::size_t>(a.rows()) * static_cast<std::size_t>(a.cols());
  if (count == 0) return dense<T, gpu, Layout>(unchecked, a.rows(), a.cols(), {});
  context& ctx = detail::context_of(a.group_offsets(), a.row_idx(), a.col_idx(), a.values());
  device_buffer<T> out(count, ctx);
  out.fill_zero();
  if (a.nnz() > 0) {
    const scatter_params<T> p{a.row_idx().data(),
                              a.col_idx().data(),
                              a.values().data(),
                              out.data(),
                              a.nnz(),
                              a.rows(),
                              a.cols()};
    scatter_kernel<T, Layout><<<detail::grid_blocks(p.count, block_threads, ctx), block_threads, 0,
                                detail::stream_of(ctx)>>>(p);
    SPADE_CHECK_LAUNCH("scattering gcoo entries into a dense matrix (gcoo_to_dense)");
  }
  return dense<T, gpu, Layout>(unchecked, a.rows(), a.cols(), std::move(out));
}

SPADE_CONVERT_GCOO_INSTANTIATIONS(float)
SPADE_CONVERT_GCOO_INSTANTIATIONS(double)

}  // namespace spade::device
