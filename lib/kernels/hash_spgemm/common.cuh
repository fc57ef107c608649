// hash_spgemm's shared pieces: constants, operands, table hashing, walking the products.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

// A key no column can take (columns are < cols ≤ INT_MAX): empty slots sort after every entry.
constexpr index_t empty_key = INT_MAX;

// Threads per block of the setup, binning and long-row kernels.
constexpr int setup_threads = 256;
constexpr int long_threads = 256;
constexpr int compact_threads = 1024;

// ---- device helpers ---------------------------------------------------------------------------

// Multiplicative hashing then a multiply-high range reduction: any table size (not only powers
// of two) gets a uniform slot without a division.
__device__ __forceinline__ unsigned slot_of(index_t key, unsigned size) {
  return __umulhi(static_cast<unsigned>(key) * 2654435761u, size);
}

__device__ __forceinline__ unsigned next_slot(unsigned h, unsigned size) {
  return h + 1 == size ? 0u : h + 1;
}

// Single-access insertion (the paper's Algorithm 4): one atomicCAS per probe. Returns true when
// the key was new. The caller guarantees a free slot (bins bound products by the table size).
__device__ __forceinline__ bool insert_key(index_t* table, unsigned size, index_t key) {
  unsigned h = slot_of(key, size);
  while (true) {
    const index_t old = atomicCAS(table + h, empty_key, key);
    if (old == empty_key) return true;
    if (old == key) return false;
    h = next_slot(h, size);
  }
}

// The paper's Algorithm 5: the slot that holds (or now takes) the key gets the product added.
template <class T>
__device__ __forceinline__ void accumulate(index_t* keys, T* values, unsigned size, index_t key,
                                           T value) {
  unsigned h = slot_of(key, size);
  while (true) {
    const index_t old = atomicCAS(keys + h, empty_key, key);
    if (old == empty_key || old == key) {
      atomicAdd(values + h, value);
      return;
    }
    h = next_slot(h, size);
  }
}

__device__ __forceinline__ index_t row_at(const index_t* bins, std::int64_t i) {
  return bins ? bins[i] : static_cast<index_t>(i);
}

template <class T>
struct operands {
  const index_t* __restrict__ a_row_ptr;
  const index_t* __restrict__ a_col_idx;
  const T* __restrict__ a_values;
  const index_t* __restrict__ b_row_ptr;
  const index_t* __restrict__ b_col_idx;
  const T* __restrict__ b_values;
  index_t rows;
  index_t cols;  // of B (and C)
  T alpha;
};

// Every product of A's entries [begin, end) with B's rows, `lanes` cooperating threads, groups of
// `per_entry` of them on one entry of A (sized to B's mean row so short rows of B waste few
// lanes). visit(j, q): entry j of A times entry q of B.
template <class T, class Visit>
__device__ __forceinline__ void for_each_product(const operands<T>& p, std::int64_t begin,
                                                 std::int64_t end, int lane, int lanes,
                                                 int per_entry, Visit&& visit) {
  const int inner = lane & (per_entry - 1);
  const int entry_stride = lanes / per_entry;
  for (std::int64_t j = begin + lane / per_entry; j < end; j += entry_stride) {
    const index_t k = __ldg(p.a_col_idx + j);
    const index_t q_end = __ldg(p.b_row_ptr + k + 1);
    for (index_t q = __ldg(p.b_row_ptr + k) + inner; q < q_end; q += per_entry)
      visit(j, q);
  }
}

// Threads per entry of A for a group of `lanes` threads working on a row of `length` entries of
// A: as many as the row's entries leave (a power of two), at least `min_lanes` (sized to B's
// mean row). A row of C with thousands of entries often has a handful of entries of A, one of
// them a hub of a power-law graph: min_lanes alone would leave all but a few threads idle.
__device__ __forceinline__ int lanes_per_entry(std::int64_t length, int lanes, int min_lanes) {
  int t = min_lanes;
  while (t < lanes && std::int64_t{t} * 2 * length <= lanes)
    t *= 2;
  return t;
}

// An entry of A whose row of B is longer than this many times its group's threads, and than the
// whole block, is left out of the groups' pass and taken by the whole block afterwards. Below a
// block's length a deferred row would leave threads idle in its one pass: with rows of B of 400
// entries (the GCOO paper's n = 4000 at 0.9) deferring every entry made the product 1.5x slower.
constexpr int heavy_factor = 8;

// Every product of A's entries [begin, end) with B's rows, by a whole block of `Block` threads
// (the same arguments in every thread; every thread must call it). Groups of threads take an
// entry each, sized so the row's entries fill the block (any group size, not only powers of
// two); entries whose row of B is longer than heavy_factor × the group and the block (the hubs of a
// power-law graph next to many short rows) are skipped there and then taken one at a time by all
// `Block` threads. `s_masks`: Block/32 words of shared memory.
template <int Block, class T, class Visit>
__device__ __forceinline__ void for_each_product_block(const operands<T>& p, std::int64_t begin,
                                                       std::int64_t end, int min_lanes,
                                                       unsigned* s_masks, Visit&& visit) {
  const std::int64_t length = end - begin;
  const int lanes = static_cast<int>(std::min<std::int64_t>(
      Block, std::max<std::int64_t>(min_lanes, length > 0 ? Block / length : Block)));
  const int groups = Block / lanes;
  const int group = static_cast<int>(threadIdx.x) / lanes;
  const int inner = static_cast<int>(threadIdx.x) - group * lanes;
  const index_t heavy = groups > 1 ? std::max(heavy_factor * lanes, Block) : INT_MAX;
  bool deferred = false;
  if (group < groups) {
    for (std::int64_t j = begin + group; j < end; j += groups) {
      const index_t k = __ldg(p.a_col_idx + j);
      const index_t q_begin = __ldg(p.b_row_ptr + k);
      const index_t q_end = __ldg(p.b_row_ptr + k + 1);
      if (q_end - q_begin > heavy) {
        deferred = true;
        continue;
      }
      for (index_t q = q_begin + inner; q < q_end; q += lanes)
        visit(j, q);
    }
  }
  if (!__syncthreads_or(deferred)) return;
  // The deferred entries, a chunk of Block entries at a time: a bit per entry in s_masks, then
  // every thread walks the same bits.
  const int warp = static_cast<int>(threadIdx.x) / 32;
  for (std::int64_t base = begin; base < end; base += Block) {
    const std::int64_t j = base + threadIdx.x;
    bool is_heavy = false;
    if (j < end) {
      const index_t k = __ldg(p.a_col_idx + j);
      is_heavy = __ldg(p.b_row_ptr + k + 1) - __ldg(p.b_row_ptr + k) > heavy;
    }
    const unsigned ballot = __ballot_sync(0xffffffffu, is_heavy);
    if ((threadIdx.x & 31) == 0) s_masks[warp] = ballot;
    __syncthreads();
    for (int w = 0; w < Block / 32; ++w) {
      unsigned mask = s_masks[w];
      while (mask) {
        const std::int64_t h = base + w * 32 + (__ffs(mask) - 1);
        mask &= mask - 1;
        const index_t k = __ldg(p.a_col_idx + h);
        const index_t q_end = __ldg(p.b_row_ptr + k + 1);
        for (index_t q = __ldg(p.b_row_ptr + k) + static_cast<index_t>(threadIdx.x); q < q_end;
             q += Block)
          visit(h, q);
      }
    }
    __syncthreads();  // s_masks is rewritten by the next chunk
  }
}

// Products of A's entries [begin, end): B's row lengths summed by the `lanes` threads from
// `lane`, four loads in flight per thread.
template <class T>
__device__ __forceinline__ std::int64_t products_of(const operands<T>& p, index_t begin,
                                                    index_t end, int lane, int lanes) {
  std::int64_t w = 0;
#pragma unroll 4
  for (index_t j = begin + lane; j < end; j += lanes) {
    const index_t k = __ldg(p.a_col_idx + j);
    w += __ldg(p.b_row_ptr + k + 1) - __ldg(p.b_row_ptr + k);
  }
  return w;
}

}  // namespace

}  // namespace spade::device
