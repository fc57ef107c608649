// hash_spgemm's long rows: dense accumulators in global memory, a row split across blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "kernels/hash_spgemm/common.cuh"

namespace spade::device {

namespace {

// ---- the long-row path: dense accumulators in global memory, rows split across blocks ---------

// Blocks a long row gets: one per `products_per_block` products, at most one per entry of A; a
// warp per row (a long row of C often comes from a long row of A). Symbolic: also zeroes the
// row's count, which the blocks then add to.
template <class T>
__global__ void __launch_bounds__(setup_threads)
    long_row_blocks(operands<T> p, const index_t* bins, std::int64_t first, std::int64_t count,
                    std::int64_t products_per_block, index_t* blocks, index_t* zero_counts) {
  const std::int64_t i = (std::int64_t{blockIdx.x} * setup_threads + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  if (i >= count) return;  // whole warps: count is per warp
  const index_t row = row_at(bins, first + i);
  const index_t begin = __ldg(p.a_row_ptr + row);
  const index_t end = __ldg(p.a_row_ptr + row + 1);
  std::int64_t products = products_of(p, begin, end, lane, 32);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    products += __shfl_xor_sync(0xffffffffu, products, offset);
  if (lane != 0) return;
  const std::int64_t wanted = (products + products_per_block - 1) / products_per_block;
  const std::int64_t most = end - begin > 1 ? end - begin : 1;
  blocks[i] = static_cast<index_t>(wanted < 1 ? 1 : wanted > most ? most : wanted);
  if (zero_counts) zero_counts[row] = 0;
}

// One batch of long rows: rows bins[first + r] for r in [r_begin, r_end), each owning slot
// r − r_begin of the workspace; block b of the launch is work item item_offsets[r_begin] + b.
struct long_batch {
  const index_t* bins;
  std::int64_t first;
  const index_t* item_offsets;  // (long rows + 1): exclusive sum of blocks per row
  std::int64_t r_begin;
  std::int64_t r_end;
  int per_entry;
  std::int64_t words;  // 32-bit bitmap words per slot
};

struct long_item {
  index_t row;
  std::int64_t slot;
  std::int64_t begin;  // A entries of this block
  std::int64_t end;
};

__device__ long_item locate_item(const long_batch& l, const index_t* a_row_ptr) {
  const std::int64_t item = std::int64_t{l.item_offsets[l.r_begin]} + blockIdx.x;
  std::int64_t lo = l.r_begin;
  std::int64_t hi = l.r_end - 1;
  while (lo < hi) {  // the last r with item_offsets[r] <= item
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (l.item_offsets[mid] <= item)
      lo = mid;
    else
      hi = mid - 1;
  }
  long_item it;
  it.row = row_at(l.bins, l.first + lo);
  it.slot = lo - l.r_begin;
  const std::int64_t pieces = l.item_offsets[lo + 1] - l.item_offsets[lo];
  const std::int64_t piece = item - l.item_offsets[lo];
  const std::int64_t a_begin = a_row_ptr[it.row];
  const std::int64_t a_length = a_row_ptr[it.row + 1] - a_begin;
  it.begin = a_begin + a_length * piece / pieces;
  it.end = a_begin + a_length * (piece + 1) / pieces;
  return it;
}

// Symbolic: a bit per column of C's row; a block counts the bits it was first to set.
template <class T>
__global__ void __launch_bounds__(long_threads, 6)  // at most 40 registers: no spills
    symbolic_long(operands<T> p, long_batch l, unsigned* bitmaps, index_t* row_nnz) {
  __shared__ int s_count;
  __shared__ unsigned s_masks[long_threads / 32];
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  const long_item it = locate_item(l, p.a_row_ptr);
  unsigned* bits = bitmaps + it.slot * l.words;
  int count = 0;
  for_each_product_block<long_threads>(p, it.begin, it.end, l.per_entry, s_masks,
                                       [&](std::int64_t, index_t q) {
                                         const index_t c = __ldg(p.b_col_idx + q);
                                         const unsigned mask = 1u << (c & 31);
                                         if (bits[c >> 5] & mask) return;
                                         count += (atomicOr(bits + (c >> 5), mask) & mask) == 0;
                                       });
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    count += __shfl_xor_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0 && count) atomicAdd(&s_count, count);
  __syncthreads();
  if (threadIdx.x == 0 && s_count) atomicAdd(row_nnz + it.row, s_count);
}

// Numeric: a value per column of C's row and the bitmap of the columns present.
template <class T>
__global__ void __launch_bounds__(long_threads)
    numeric_long(operands<T> p, long_batch l, T* dense_values, unsigned* bitmaps) {
  __shared__ unsigned s_masks[long_threads / 32];
  const long_item it = locate_item(l, p.a_row_ptr);
  T* values = dense_values + it.slot * std::int64_t{p.cols};
  unsigned* bits = bitmaps + it.slot * l.words;
  T a_value = T(0);
  std::int64_t a_entry = -1;
  for_each_product_block<long_threads>(p, it.begin, it.end, l.per_entry, s_masks,
                                       [&](std::int64_t j, index_t q) {
                                         if (j != a_entry) {
                                           a_entry = j;
                                           a_value = p.alpha * __ldg(p.a_values + j);
                                         }
                                         const index_t c = __ldg(p.b_col_idx + q);
                                         const unsigned mask = 1u << (c & 31);
                                         if (!(bits[c >> 5] & mask))
                                           atomicOr(bits + (c >> 5), mask);
                                         atomicAdd(values + c, a_value * __ldg(p.b_values + q));
                                       });
}

// Bitmap words per block of the compaction: a long row of C is cut into chunks of this many
// words, compacted by blocks of their own (one block per row took 140 µs a row on 1.6 M
// columns: circuit_1.6M_4.8, H200, 2026-11-27).
constexpr std::int64_t compact_chunk_words = 2048;

// The columns in each chunk of each slot's bitmap: block b counts chunk b % chunks of slot
// b / chunks into chunk_counts[b].
__global__ void __launch_bounds__(compact_threads)
    count_long_chunks(long_batch l, const unsigned* bitmaps, std::int64_t chunks,
                      index_t* chunk_counts) {
  using reduce = cub::BlockReduce<int, compact_threads>;
  __shared__ typename reduce::TempStorage temp;
  const std::int64_t slot = blockIdx.x / chunks;
  const std::int64_t w0 = (blockIdx.x % chunks) * compact_chunk_words;
  const std::int64_t w1 = w0 + compact_chunk_words < l.words ? w0 + compact_chunk_words : l.words;
  const unsigned* bits = bitmaps + slot * l.words;
  int count = 0;
  for (std::int64_t w = w0 + threadIdx.x; w < w1; w += compact_threads)
    count += __popc(bits[w]);
  const int total = reduce(temp).Sum(count);
  if (threadIdx.x == 0) chunk_counts[blockIdx.x] = total;
}

// A block per chunk of a long row walks its bitmap words in column order, so the row comes out
// sorted with no sort, starting where the row's earlier chunks end; it clears what it read,
// leaving the slot zeroed for the next batch.
template <class T>
__global__ void __launch_bounds__(compact_threads)
    compact_long(long_batch l, index_t cols, T* dense_values, unsigned* bitmaps,
                 std::int64_t chunks, const index_t* __restrict__ chunk_counts,
                 const index_t* __restrict__ c_row_ptr, index_t* __restrict__ c_col_idx,
                 T* __restrict__ c_values) {
  using scan = cub::BlockScan<int, compact_threads>;
  __shared__ typename scan::TempStorage temp;
  __shared__ std::int64_t s_start;
  const std::int64_t slot = blockIdx.x / chunks;
  const std::int64_t chunk = blockIdx.x % chunks;
  const index_t row = row_at(l.bins, l.first + l.r_begin + slot);
  if (threadIdx.x == 0) {
    std::int64_t start = c_row_ptr[row];
    for (std::int64_t k = slot * chunks; k < slot * chunks + chunk; ++k)
      start += chunk_counts[k];
    s_start = start;
  }
  __syncthreads();
  T* values = dense_values + slot * std::int64_t{cols};
  unsigned* bits = bitmaps + slot * l.words;
  std::int64_t out = s_start;
  const std::int64_t w0 = chunk * compact_chunk_words;
  const std::int64_t w1 = w0 + compact_chunk_words < l.words ? w0 + compact_chunk_words : l.words;
  for (std::int64_t base = w0; base < w1; base += compact_threads) {
    const std::int64_t w = base + threadIdx.x;
    unsigned word = w < w1 ? bits[w] : 0u;
    int offset = 0;
    int total = 0;
    scan(temp).ExclusiveSum(__popc(word), offset, total);
    std::int64_t at = out + offset;
    if (word) bits[w] = 0u;
    while (word) {
      const int bit = __ffs(word) - 1;
      word &= word - 1;
      const index_t c = static_cast<index_t>(w * 32 + bit);
      c_col_idx[at] = c;
      c_values[at] = values[c];
      values[c] = T(0);
      ++at;
    }
    out += total;
    __syncthreads();  // temp is reused by the next scan
  }
}

}  // namespace

}  // namespace spade::device
