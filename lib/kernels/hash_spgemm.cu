// Hash-based two-phase sparse × sparse product (paper 004, OpSparse), re-sized for the device it
// runs on: products per row → bins → symbolic (distinct columns per row) → bins by row length →
// numeric (values, sorted rows). docs/spgemm.md derives every size used here.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
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

// ---- setup and binning (the paper's Algorithms 1–3) -------------------------------------------

constexpr int max_bins = 16;

// Bin b takes rows whose work w satisfies upper[b-1] < w ≤ upper[b]; the last bin is open.
// Numeric binning: a row's work is its length, or its products / products_per_slot when that is
// more — a row with many products summing into few columns needs more threads, not a larger
// table (zenios: 2800 products into 200 columns took 88 products per thread of a 32-thread
// group, atomics on a few hot slots).
struct bin_ranges {
  int count = 0;
  std::int64_t upper[max_bins] = {};
  const index_t* products = nullptr;  // per row, or null
  int products_per_slot = 1;
  std::int64_t products_cap = 0;  // never past the largest table: only length sends a row long
};

__device__ __forceinline__ std::int64_t binned_work(const bin_ranges& r, std::int64_t w,
                                                    index_t row) {
  if (r.products)
    w = max(w,
            min(r.products_cap, static_cast<std::int64_t>(r.products[row] / r.products_per_slot)));
  return w;
}

// Device counters of one binning: rows per bin, the running fill position per bin, the sum of
// the work.
struct bin_counters {
  unsigned long long size[max_bins];
  unsigned long long cursor[max_bins];
  unsigned long long total;
};

// Adds this thread's row to bin `b` of the block's counters (b < 0: no row) with one shared
// atomic per bin per warp, and returns the row's rank among the block's rows of that bin. Every
// thread of the warp calls it: a shared atomic per row serialised a block's 256 rows, most of
// them in one bin, on one address.
__device__ __forceinline__ unsigned add_to_bin(unsigned* s_size, int b) {
  const unsigned peers = __match_any_sync(0xffffffffu, b);
  const int leader = __ffs(peers) - 1;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  unsigned base = 0;
  if (b >= 0 && lane == leader) base = atomicAdd(s_size + b, static_cast<unsigned>(__popc(peers)));
  base = __shfl_sync(0xffffffffu, base, leader);
  return base + static_cast<unsigned>(__popc(peers & ((1u << lane) - 1u)));
}

// The warp's sum of `v`, in every thread.
__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ int bin_of(const bin_ranges& r, std::int64_t work) {
  int b = 0;
  while (b + 1 < r.count && work > r.upper[b])
    ++b;
  return b;
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

// Rows per thread of the binning kernels: a block's bins take one global atomic each, and with a
// row per thread those atomics, on the same few addresses from every block, cost more than the
// counting (about 60 µs of the 1.6 M-row circuit matrix's binning).
constexpr int binning_rows_per_thread = 4;

// Rows of A longer than this are counted by a whole warp after the block's other rows: a thread
// walking a row of thousands of entries alone held up the whole launch (0.3 ms on a circuit
// matrix of 1.6 M rows whose few hub rows have 1000+ entries).
constexpr index_t warp_counted_entries = 64;

// Pass 1, over rows list[0, count) (null list: rows 0, 1, …). With `products`, first writes
// each row's product count (saturated at INT_MAX; the long path recounts in 64 bits) into `work`
// — C's row pointer array, which holds no offsets yet; otherwise reads the row lengths the
// symbolic phase left there. Bin sizes and the sum are gathered in shared memory (add_to_bin),
// one global atomic per bin per block.
template <class T>
__global__ void __launch_bounds__(setup_threads)
    count_bins(operands<T> p, const index_t* list, std::int64_t count, bool products, index_t* work,
               index_t* row_products, bin_ranges ranges, bin_counters* out) {
  __shared__ unsigned int s_size[max_bins];
  __shared__ unsigned long long s_total;
  __shared__ index_t s_long[setup_threads * binning_rows_per_thread];  // rows left to the warps
  __shared__ int s_long_count;
  if (threadIdx.x < max_bins) s_size[threadIdx.x] = 0;
  if (threadIdx.x == 0) {
    s_total = 0;
    s_long_count = 0;
  }
  __syncthreads();
  unsigned long long thread_total = 0;
#pragma unroll
  for (int t = 0; t < binning_rows_per_thread; ++t) {
    const std::int64_t i =
        (std::int64_t{blockIdx.x} * binning_rows_per_thread + t) * setup_threads + threadIdx.x;
    std::int64_t w = -1;  // no row, or one left to the warps
    index_t row = 0;
    if (i < count) {
      row = row_at(list, i);
      if (products) {
        const index_t begin = __ldg(p.a_row_ptr + row);
        const index_t end = __ldg(p.a_row_ptr + row + 1);
        if (end - begin > warp_counted_entries) {
          s_long[atomicAdd(&s_long_count, 1)] = row;
        } else {
          w = products_of(p, begin, end, 0, 1);
          work[row] = static_cast<index_t>(w < INT_MAX ? w : INT_MAX);
          if (row_products) row_products[row] = work[row];
        }
      } else {
        w = work[row];
      }
    }
    add_to_bin(s_size, w >= 0 ? bin_of(ranges, binned_work(ranges, w, row)) : -1);
    thread_total += w >= 0 ? static_cast<unsigned long long>(w) : 0;
  }
  const unsigned long long warp_total = warp_sum(thread_total);
  if ((threadIdx.x & 31) == 0 && warp_total) atomicAdd(&s_total, warp_total);
  __syncthreads();
  if (products) {
    const int warp = static_cast<int>(threadIdx.x) / 32;
    const int lane = static_cast<int>(threadIdx.x) & 31;
    for (int r = warp; r < s_long_count; r += setup_threads / 32) {
      const index_t row = s_long[r];
      std::int64_t w =
          products_of(p, __ldg(p.a_row_ptr + row), __ldg(p.a_row_ptr + row + 1), lane, 32);
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2)
        w += __shfl_xor_sync(0xffffffffu, w, offset);
      if (lane == 0) {  // a few rows: plain shared atomics
        work[row] = static_cast<index_t>(w < INT_MAX ? w : INT_MAX);
        if (row_products) row_products[row] = work[row];
        atomicAdd(&s_size[bin_of(ranges, w)], 1u);
        atomicAdd(&s_total, static_cast<unsigned long long>(w));
      }
    }
    __syncthreads();
  }
  if (threadIdx.x < ranges.count && s_size[threadIdx.x] != 0)
    atomicAdd(&out->size[threadIdx.x], s_size[threadIdx.x]);
  if (threadIdx.x == 0 && s_total) atomicAdd(&out->total, s_total);
}

struct bin_starts {
  std::int64_t start[max_bins] = {};
};

// Pass 2: the rows list[0, count) (null: 0, 1, …) into their bin's segment of `bins`; a block
// reserves its rows of each bin with one global atomic and places them with shared ones.
__global__ void __launch_bounds__(setup_threads)
    fill_bins(const index_t* work, const index_t* list, std::int64_t count, bin_ranges ranges,
              bin_starts starts, bin_counters* counters, index_t* bins) {
  __shared__ unsigned int s_size[max_bins];
  __shared__ unsigned long long s_base[max_bins];
  if (threadIdx.x < max_bins) s_size[threadIdx.x] = 0;
  __syncthreads();
  int b[binning_rows_per_thread];
  index_t row[binning_rows_per_thread];
  unsigned rank[binning_rows_per_thread];
#pragma unroll
  for (int t = 0; t < binning_rows_per_thread; ++t) {
    const std::int64_t i =
        (std::int64_t{blockIdx.x} * binning_rows_per_thread + t) * setup_threads + threadIdx.x;
    b[t] = -1;
    row[t] = 0;
    if (i < count) {
      row[t] = row_at(list, i);
      b[t] = bin_of(ranges, binned_work(ranges, work[row[t]], row[t]));
    }
    rank[t] = add_to_bin(s_size, b[t]);
  }
  __syncthreads();
  if (threadIdx.x < ranges.count && s_size[threadIdx.x] != 0)
    s_base[threadIdx.x] = atomicAdd(&counters->cursor[threadIdx.x], s_size[threadIdx.x]) +
                          static_cast<unsigned long long>(starts.start[threadIdx.x]);
  __syncthreads();
#pragma unroll
  for (int t = 0; t < binning_rows_per_thread; ++t)
    if (b[t] >= 0) bins[s_base[b[t]] + rank[t]] = row[t];
}

// ---- shared-memory tables ---------------------------------------------------------------------

// One launch of a bin: rows bins[first, first + count) (or rows first… when bins is null), each
// with a table of `table_size` slots in dynamic shared memory.
struct bin_launch {
  const index_t* bins;
  std::int64_t first;
  std::int64_t count;
  unsigned table_size;
  int per_entry;
};

// Symbolic phase: distinct columns of each row into `row_nnz` (C's row pointer array). Group =
// threads per row: below a warp, several rows share a block (the paper's kernel0); at the block
// size, one row per block.
template <class T, int Block, int Group>
__global__ void __launch_bounds__(Block, 2048 / Block)
    symbolic_shared(operands<T> p, bin_launch l, index_t* row_nnz) {
  extern __shared__ index_t s_keys[];
  __shared__ int s_count;
  __shared__ unsigned s_masks[Group <= 32 ? 1 : Block / 32];
  constexpr int rows_per_block = Block / Group;
  const int group = threadIdx.x / Group;
  const int lane = threadIdx.x % Group;
  const std::int64_t i = std::int64_t{blockIdx.x} * rows_per_block + group;
  for (unsigned s = threadIdx.x; s < rows_per_block * l.table_size; s += Block)
    s_keys[s] = empty_key;
  if (threadIdx.x == 0) s_count = 0;
  __syncthreads();
  index_t* table = s_keys + group * l.table_size;
  int count = 0;
  index_t row = 0;
  auto insert = [&](std::int64_t, index_t q) {
    count += insert_key(table, l.table_size, __ldg(p.b_col_idx + q));
  };
  if (i < l.count) {  // the same in every thread of a block-per-row kernel
    row = row_at(l.bins, l.first + i);
    const index_t begin = __ldg(p.a_row_ptr + row);
    const index_t end = __ldg(p.a_row_ptr + row + 1);
    if constexpr (Group <= 32)
      for_each_product(p, begin, end, lane, Group, lanes_per_entry(end - begin, Group, l.per_entry),
                       insert);
    else
      for_each_product_block<Block>(p, begin, end, l.per_entry, s_masks, insert);
  }
  if constexpr (Group <= 32) {
#pragma unroll
    for (int offset = Group / 2; offset > 0; offset /= 2)
      count += __shfl_xor_sync(0xffffffffu, count, offset, Group);
    if (lane == 0 && i < l.count) row_nnz[row] = count;
  } else {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
      count += __shfl_xor_sync(0xffffffffu, count, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(&s_count, count);
    __syncthreads();
    if (threadIdx.x == 0) row_nnz[row] = s_count;
  }
}

// In-place bitonic sort of `n` (a power of two) keys with their values, ascending.
template <class T, int Block>
__device__ void bitonic_sort(index_t* keys, T* values, unsigned n) {
  for (unsigned k = 2; k <= n; k <<= 1) {
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      for (unsigned t = threadIdx.x; t < n / 2; t += Block) {
        const unsigned lo = ((t & ~(j - 1)) << 1) | (t & (j - 1));
        const unsigned hi = lo + j;
        const bool ascending = (lo & k) == 0;
        const index_t a = keys[lo];
        const index_t b = keys[hi];
        if ((a > b) == ascending) {
          keys[lo] = b;
          keys[hi] = a;
          const T v = values[lo];
          values[lo] = values[hi];
          values[hi] = v;
        }
      }
      __syncthreads();
    }
  }
}

// Counting sort of a block's gathered row: keys[0, n) hold n distinct columns, values[0, n) their
// values; they come out sorted in keys[n, 2n) and values[n, 2n) (free: a numeric table holds at
// most half its slots). A bit per column of C in keys[n, n + words) gives each entry its rank,
// the number of the row's columns below it: bits set, each entry's count below it in its own
// word kept in bits 26–30 of its key, the words turned into their exclusive prefix sums in place,
// then rank = prefix + count. The caller guarantees words ≤ table − n and columns < 2^26. Every
// thread of the block calls it; a barrier separates every phase. About 15 shared-memory accesses
// per entry and 3 per word, 6 + 2·⌈words/Block⌉ barriers (a padded bitonic sort: ~5 accesses per
// compare-exchange, log²(padded)/2 passes, a barrier each).
template <class T, int Block>
__device__ void bitmap_sort(index_t* keys, T* values, unsigned n, unsigned words,
                            unsigned* s_warp) {
  constexpr unsigned below_shift = 26;
  constexpr unsigned column_mask = (1u << below_shift) - 1u;
  unsigned* bits = reinterpret_cast<unsigned*>(keys + n);
  for (unsigned w = threadIdx.x; w < words; w += Block)
    bits[w] = 0u;
  __syncthreads();
  for (unsigned e = threadIdx.x; e < n; e += Block) {
    const unsigned c = static_cast<unsigned>(keys[e]);
    atomicOr(bits + (c >> 5), 1u << (c & 31));
  }
  __syncthreads();
  for (unsigned e = threadIdx.x; e < n; e += Block) {
    const unsigned c = static_cast<unsigned>(keys[e]);
    const unsigned below = __popc(bits[c >> 5] & ((1u << (c & 31)) - 1u));
    keys[e] = static_cast<index_t>(c | below << below_shift);
  }
  __syncthreads();
  // Exclusive prefix sums of the words' counts, in place, Block words at a time.
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warp_lane = static_cast<int>(threadIdx.x) & 31;
  unsigned running = 0;
  for (unsigned base = 0; base < words; base += Block) {
    const unsigned w = base + threadIdx.x;
    const unsigned count = w < words ? static_cast<unsigned>(__popc(bits[w])) : 0u;
    unsigned inclusive = count;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, d);
      if (warp_lane >= d) inclusive += up;
    }
    if (warp_lane == 31) s_warp[warp] = inclusive;
    __syncthreads();
    unsigned offset = inclusive - count;
    unsigned total = 0;
    for (int v = 0; v < Block / 32; ++v) {
      const unsigned c = s_warp[v];
      offset += v < warp ? c : 0u;
      total += c;
    }
    if (w < words) bits[w] = running + offset;
    running += total;
    __syncthreads();  // s_warp is rewritten by the next chunk
  }
  // Values to their rank; each entry keeps its rank (exact in T: ranks < 2^24) in its value slot.
  T* sorted_values = values + n;
  for (unsigned e = threadIdx.x; e < n; e += Block) {
    const unsigned packed = static_cast<unsigned>(keys[e]);
    const unsigned c = packed & column_mask;
    const unsigned rank = bits[c >> 5] + (packed >> below_shift);
    sorted_values[rank] = values[e];
    keys[e] = static_cast<index_t>(c);
    values[e] = static_cast<T>(rank);
  }
  __syncthreads();
  // Keys to their rank, over the prefix sums (no longer read).
  index_t* sorted_keys = keys + n;
  for (unsigned e = threadIdx.x; e < n; e += Block)
    sorted_keys[static_cast<unsigned>(values[e])] = keys[e];
  __syncthreads();
}

// Numeric phase: each row's products summed in a table of (key, value) slots, the row's entries
// gathered at the front of the table, then written to C in column order — by rank counting
// within a group (a few hundred entries at most); for a block's row of the 512- and 1024-thread
// shapes (tables of 4096 slots and up) by a counting sort over a bitmap of C's columns when the
// bitmap fits beside the row (bitmap_sort), otherwise (and for smaller blocks) by a bitonic sort
// padded to a power of two, which the table's power-of-two size leaves room for.
template <class T, int Block, int Group>
__global__ void __launch_bounds__(Block, 2048 / Block)
    numeric_shared(operands<T> p, bin_launch l, const index_t* __restrict__ c_row_ptr,
                   index_t* __restrict__ c_col_idx, T* __restrict__ c_values) {
  extern __shared__ __align__(16) unsigned char s_raw[];
  // A block's row: deferred entries of A (a bit each), then the gather's counts per warp.
  __shared__ unsigned s_warp[Group <= 32 ? 1 : Block / 32];
  constexpr int rows_per_block = Block / Group;
  T* s_values = reinterpret_cast<T*>(s_raw);
  index_t* s_keys = reinterpret_cast<index_t*>(s_values + rows_per_block * l.table_size);
  const int group = threadIdx.x / Group;
  const int lane = threadIdx.x % Group;
  const std::int64_t i = std::int64_t{blockIdx.x} * rows_per_block + group;
  for (unsigned s = threadIdx.x; s < rows_per_block * l.table_size; s += Block) {
    s_keys[s] = empty_key;
    s_values[s] = T(0);
  }
  __syncthreads();
  index_t* keys = s_keys + group * l.table_size;
  T* values = s_values + group * l.table_size;
  index_t row = 0;
  if (i < l.count) {
    row = row_at(l.bins, l.first + i);
    T a_value = T(0);
    std::int64_t a_entry = -1;
    auto add = [&](std::int64_t j, index_t q) {
      if (j != a_entry) {
        a_entry = j;
        a_value = p.alpha * __ldg(p.a_values + j);
      }
      accumulate(keys, values, l.table_size, __ldg(p.b_col_idx + q),
                 a_value * __ldg(p.b_values + q));
    };
    const index_t begin = __ldg(p.a_row_ptr + row);
    const index_t end = __ldg(p.a_row_ptr + row + 1);
    if constexpr (Group <= 32)
      for_each_product(p, begin, end, lane, Group, lanes_per_entry(end - begin, Group, l.per_entry),
                       add);
    else  // the same in every thread: a block per row
      for_each_product_block<Block>(p, begin, end, l.per_entry, s_warp, add);
  }
  __syncthreads();
  // The row's entries move to the front of its table in slot order (in place: an entry only
  // moves down, to a slot already read), so the sort touches the row's n entries, not the
  // whole table.
  index_t n = 0;
  if constexpr (Group <= 32) {
    // Warp-synchronous: every group of the warp walks the same number of chunks.
    const int group_shift = (threadIdx.x & 31) & ~(Group - 1);
    const unsigned group_bits = Group == 32 ? 0xffffffffu : ((1u << Group) - 1) << group_shift;
    for (unsigned base = 0; base < l.table_size; base += Group) {
      const unsigned s = base + lane;
      const index_t key = s < l.table_size ? keys[s] : empty_key;
      const T value = s < l.table_size ? values[s] : T(0);
      const bool valid = key != empty_key;
      const unsigned mine = (__ballot_sync(0xffffffffu, valid) & group_bits) >> group_shift;
      const int before = __popc(mine & ((1u << lane) - 1));
      __syncwarp();
      if (valid) {
        keys[n + before] = key;
        values[n + before] = value;
      }
      n += __popc(mine);
      __syncwarp();
    }
    if (i >= l.count) return;
    // Rank by counting: at most a few hundred entries, read by broadcast four keys at a time
    // (the group's tables are multiples of four slots: make_shapes), two entries per thread at a
    // time; one key per read made circuit_4M_6 (2.4 M rows in these tables) 3 % slower. The
    // keys past n are padded with empty_key, which counts below no entry; the table has room
    // (n ≤ table/2).
    if (lane < 4) keys[n + lane] = empty_key;
    __syncwarp(group_bits);
    const int4* keys4 = reinterpret_cast<const int4*>(keys);
    const index_t quads = (n + 3) / 4;
    const index_t start = c_row_ptr[row];
    for (index_t e = lane; e < n; e += 2 * Group) {
      const bool second = e + Group < n;
      const index_t key0 = keys[e];
      const index_t key1 = second ? keys[e + Group] : index_t{0};
      index_t rank0 = 0;
      index_t rank1 = 0;
      for (index_t t = 0; t < quads; ++t) {
        const int4 k = keys4[t];
        rank0 += (k.x < key0) + (k.y < key0) + (k.z < key0) + (k.w < key0);
        rank1 += (k.x < key1) + (k.y < key1) + (k.z < key1) + (k.w < key1);
      }
      c_col_idx[start + rank0] = key0;
      c_values[start + rank0] = values[e];
      if (second) {
        c_col_idx[start + rank1] = key1;
        c_values[start + rank1] = values[e + Group];
      }
    }
  } else {
    const int warp = threadIdx.x / 32;
    const int warp_lane = threadIdx.x & 31;
    for (unsigned base = 0; base < l.table_size; base += Block) {
      const unsigned s = base + threadIdx.x;
      const index_t key = s < l.table_size ? keys[s] : empty_key;
      const T value = s < l.table_size ? values[s] : T(0);
      const bool valid = key != empty_key;
      const unsigned ballot = __ballot_sync(0xffffffffu, valid);
      if (warp_lane == 0) s_warp[warp] = __popc(ballot);
      __syncthreads();
      int offset = __popc(ballot & ((1u << warp_lane) - 1));
      int total = 0;
      for (int w = 0; w < Block / 32; ++w) {
        const int c = static_cast<int>(s_warp[w]);
        offset += w < warp ? c : 0;
        total += c;
      }
      if (valid) {
        keys[n + offset] = key;
        values[n + offset] = value;
      }
      n += total;
      __syncthreads();
    }
    if constexpr (Block >= 512) {
      const unsigned words = (static_cast<unsigned>(p.cols) + 31u) / 32u;
      // The sorted row goes to [n, 2n) (n ≤ table/2, the bins' limit), the bitmap to [n, n + W).
      if (p.cols <= (index_t{1} << 26) && 2u * static_cast<unsigned>(n) <= l.table_size &&
          words <= l.table_size - static_cast<unsigned>(n)) {
        bitmap_sort<T, Block>(keys, values, static_cast<unsigned>(n), words, s_warp);
        const index_t start = c_row_ptr[row];
        const index_t* sorted_keys = keys + n;
        const T* sorted_values = values + n;
        for (index_t s = threadIdx.x; s < n; s += Block) {
          c_col_idx[start + s] = sorted_keys[s];
          c_values[start + s] = sorted_values[s];
        }
        return;
      }
    }
    unsigned padded = 1;
    while (padded < static_cast<unsigned>(n))
      padded <<= 1;
    for (unsigned s = n + threadIdx.x; s < padded; s += Block)
      keys[s] = empty_key;
    __syncthreads();
    bitonic_sort<T, Block>(keys, values, padded);
    const index_t start = c_row_ptr[row];
    for (index_t s = threadIdx.x; s < n; s += Block) {
      c_col_idx[start + s] = keys[s];
      c_values[start + s] = values[s];
    }
  }
}

// ---- rows of at most 32 products: sorted in registers, no table -------------------------------

// A row of at most `Width` products (Width = 4, 8, 16 or 32) takes a group of Width threads:
// thread t holds the row's product t as (column, value), the group sorts them with a bitonic
// network of shuffles and sums the runs of equal columns. Nothing to clear, scan or gather in
// shared memory: on short-row matrices (circuits, road networks, meshes) the table kernels spent
// most of their time there, not on the products (docs/spgemm.md, rows sorted in registers).
// Each group takes several rows at once, step by step side by side, so a thread has that many
// chains of dependent loads in flight: one row at a time left the kernel waiting on memory
// latency. The numeric phase holds values too: fewer rows keep it below 64 registers.
constexpr int sorted_threads = 256;
constexpr int sorted_symbolic_rows = 4;
constexpr int sorted_numeric_rows = 2;
constexpr std::array<int, 4> sorted_widths = {4, 8, 16, 32};
constexpr unsigned full_warp = 0xffffffffu;

// A group's rows: where each starts and ends in A, and thread `lane`'s product of each.
template <class T, int Rows>
struct sorted_group {
  index_t row[Rows];
  index_t begin[Rows];
  index_t end[Rows];
  bool valid[Rows];
  index_t key[Rows];
  T value[Rows];
};

struct sorted_rows {
  const index_t* rows;  // the bin's rows (null: rows first, first + 1, …)
  std::int64_t first;
  std::int64_t count;
};

// The rows of this thread's group, and the number of chunks of Width entries of A the longest
// row of the warp has (every thread of the warp loops that many times).
template <class T, int Width, int Rows>
__device__ __forceinline__ int load_rows(const operands<T>& p, const sorted_rows& l,
                                         sorted_group<T, Rows>& g) {
  const std::int64_t group = (std::int64_t{blockIdx.x} * sorted_threads + threadIdx.x) / Width;
  unsigned chunks = 0;
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const std::int64_t i = group * Rows + r;
    g.valid[r] = i < l.count;
    g.row[r] = g.valid[r] ? row_at(l.rows, l.first + i) : 0;
  }
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    g.begin[r] = g.valid[r] ? __ldg(p.a_row_ptr + g.row[r]) : 0;
    g.end[r] = g.valid[r] ? __ldg(p.a_row_ptr + g.row[r] + 1) : 0;
    chunks = max(chunks, static_cast<unsigned>((g.end[r] - g.begin[r] + Width - 1) / Width));
  }
  return static_cast<int>(__reduce_max_sync(full_warp, chunks));
}

// Thread `lane` takes product `lane` of each row: the row's entries of A a chunk of Width at a
// time (a row may have more entries than products when rows of B are empty), B's row lengths
// summed across the group, and each thread finds the entry that holds its product by a binary
// search over those sums.
template <class T, int Width, int Rows, bool Values>
__device__ __forceinline__ void gather_products(const operands<T>& p, int chunks, int lane,
                                                sorted_group<T, Rows>& g) {
  int base[Rows];  // products of the earlier chunks
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    g.key[r] = empty_key;
    g.value[r] = T(0);
    base[r] = 0;
  }
  for (int c = 0; c < chunks; ++c) {
    index_t b_begin[Rows];
    int length[Rows];
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const index_t j = g.begin[r] + c * Width + lane;
      const index_t k = j < g.end[r] ? __ldg(p.a_col_idx + j) : -1;
      b_begin[r] = k >= 0 ? __ldg(p.b_row_ptr + k) : 0;
      length[r] = k >= 0 ? __ldg(p.b_row_ptr + k + 1) - b_begin[r] : 0;
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      int inclusive = length[r];
#pragma unroll
      for (int d = 1; d < Width; d <<= 1) {
        const int up = __shfl_up_sync(full_warp, inclusive, d, Width);
        if (lane >= d) inclusive += up;
      }
      const int total = __shfl_sync(full_warp, inclusive, Width - 1, Width);
      const int s = lane - base[r];  // this thread's product among the chunk's
      int entry = 0;                 // the first entry whose inclusive sum passes s
#pragma unroll
      for (int step = Width / 2; step > 0; step /= 2)
        if (__shfl_sync(full_warp, inclusive, entry + step - 1, Width) <= s) entry += step;
      const int entry_inclusive = __shfl_sync(full_warp, inclusive, entry, Width);
      const int entry_length = __shfl_sync(full_warp, length[r], entry, Width);
      const index_t entry_b_begin = __shfl_sync(full_warp, b_begin[r], entry, Width);
      if (s >= 0 && s < total) {
        const index_t q = entry_b_begin + (s - (entry_inclusive - entry_length));
        g.key[r] = __ldg(p.b_col_idx + q);
        if constexpr (Values)
          g.value[r] =
              p.alpha * __ldg(p.a_values + g.begin[r] + c * Width + entry) * __ldg(p.b_values + q);
      }
      base[r] += total;
    }
  }
}

// Ascending bitonic sort of each row's (key, value) pairs, one per thread; empty keys last.
template <class T, int Width, int Rows, bool Values>
__device__ __forceinline__ void sort_rows(int lane, sorted_group<T, Rows>& g) {
#pragma unroll
  for (int k = 2; k <= Width; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const bool ascending = (lane & k) == 0;
      const bool lower = (lane & j) == 0;
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        const index_t other = __shfl_xor_sync(full_warp, g.key[r], j, Width);
        T other_value{};
        if constexpr (Values) other_value = __shfl_xor_sync(full_warp, g.value[r], j, Width);
        if (lower == ascending ? other < g.key[r] : other > g.key[r]) {
          g.key[r] = other;
          if constexpr (Values) g.value[r] = other_value;
        }
      }
    }
  }
}

// After the sort: the threads holding the first of a run of equal columns (the row's entries of
// C), as bits of the group, one per thread.
template <int Width>
__device__ __forceinline__ unsigned run_heads(int lane, index_t key) {
  const index_t previous = __shfl_up_sync(full_warp, key, 1, Width);
  const bool head = key != empty_key && (lane == 0 || previous != key);
  const unsigned shift = (threadIdx.x & 31u) & ~static_cast<unsigned>(Width - 1);
  const unsigned bits = Width == 32 ? full_warp : ((1u << Width) - 1u) << shift;
  return (__ballot_sync(full_warp, head) & bits) >> shift;
}

// Each row's runs of equal columns summed: a suffix scan within the run, so the first thread of
// every run ends with its sum.
template <class T, int Width, int Rows>
__device__ __forceinline__ void sum_runs(int lane, sorted_group<T, Rows>& g) {
#pragma unroll
  for (int d = 1; d < Width; d <<= 1) {
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const T below = __shfl_down_sync(full_warp, g.value[r], d, Width);
      const index_t below_key = __shfl_down_sync(full_warp, g.key[r], d, Width);
      if (lane + d < Width && below_key == g.key[r]) g.value[r] += below;
    }
  }
}

// Symbolic: each row's distinct columns into `row_nnz`, and their sum over the launch into
// `nnz_total` (C's size: these rows skip the numeric binning that sums the others).
template <class T, int Width>
__global__ void __launch_bounds__(sorted_threads)
    symbolic_sorted(operands<T> p, sorted_rows l, index_t* row_nnz, unsigned long long* nnz_total) {
  constexpr int Rows = sorted_symbolic_rows;
  __shared__ unsigned long long s_total;
  if (threadIdx.x == 0) s_total = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % Width;
  sorted_group<T, Rows> g;
  const int chunks = load_rows<T, Width, Rows>(p, l, g);
  gather_products<T, Width, Rows, false>(p, chunks, lane, g);
  sort_rows<T, Width, Rows, false>(lane, g);
  unsigned counted = 0;
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const unsigned nnz = static_cast<unsigned>(__popc(run_heads<Width>(lane, g.key[r])));
    if (lane == 0 && g.valid[r]) {
      row_nnz[g.row[r]] = static_cast<index_t>(nnz);
      counted += nnz;
    }
  }
  const unsigned warp_total = __reduce_add_sync(full_warp, counted);
  if ((threadIdx.x & 31u) == 0 && warp_total) atomicAdd(&s_total, warp_total);
  __syncthreads();
  if (threadIdx.x == 0 && s_total) atomicAdd(nnz_total, s_total);
}

// Numeric: each row's runs summed (a suffix scan within the run: every head ends with its
// run's sum) and written in column order at C's row offset.
template <class T, int Width>
__global__ void __launch_bounds__(sorted_threads)
    numeric_sorted(operands<T> p, sorted_rows l, const index_t* __restrict__ c_row_ptr,
                   index_t* __restrict__ c_col_idx, T* __restrict__ c_values) {
  constexpr int Rows = sorted_numeric_rows;
  const int lane = static_cast<int>(threadIdx.x) % Width;
  sorted_group<T, Rows> g;
  const int chunks = load_rows<T, Width, Rows>(p, l, g);
  index_t start[Rows];
#pragma unroll
  for (int r = 0; r < Rows; ++r)  // loaded early: its latency hides behind the gather
    start[r] = g.valid[r] ? c_row_ptr[g.row[r]] : 0;
  gather_products<T, Width, Rows, true>(p, chunks, lane, g);
  sort_rows<T, Width, Rows, true>(lane, g);
  sum_runs<T, Width, Rows>(lane, g);
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const unsigned heads = run_heads<Width>(lane, g.key[r]);
    if (g.valid[r] && ((heads >> lane) & 1u)) {
      const index_t at = start[r] + __popc(heads & ((1u << lane) - 1u));
      c_col_idx[at] = g.key[r];
      c_values[at] = g.value[r];
    }
  }
}

template <class T>
struct sorted_kernels {
  void (*symbolic)(operands<T>, sorted_rows, index_t*, unsigned long long*);
  void (*numeric)(operands<T>, sorted_rows, const index_t*, index_t*, T*);
};

template <class T, int Width>
constexpr sorted_kernels<T> sorted_kernels_of() {
  return {symbolic_sorted<T, Width>, numeric_sorted<T, Width>};
}

template <class T>
sorted_kernels<T> sorted_kernels_for(int width) {
  switch (width) {
    case 4:
      return sorted_kernels_of<T, 4>();
    case 8:
      return sorted_kernels_of<T, 8>();
    case 16:
      return sorted_kernels_of<T, 16>();
    default:
      return sorted_kernels_of<T, 32>();
  }
}

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

// A block per long row walks its bitmap in column order, so the row comes out sorted with no
// sort; it clears what it read, leaving the slot zeroed for the next batch.
template <class T>
__global__ void __launch_bounds__(compact_threads)
    compact_long(long_batch l, index_t cols, T* dense_values, unsigned* bitmaps,
                 const index_t* __restrict__ c_row_ptr, index_t* __restrict__ c_col_idx,
                 T* __restrict__ c_values) {
  using scan = cub::BlockScan<int, compact_threads>;
  __shared__ typename scan::TempStorage temp;
  const std::int64_t r = l.r_begin + blockIdx.x;
  const index_t row = row_at(l.bins, l.first + r);
  const std::int64_t slot = r - l.r_begin;
  T* values = dense_values + slot * std::int64_t{cols};
  unsigned* bits = bitmaps + slot * l.words;
  std::int64_t out = c_row_ptr[row];
  for (std::int64_t base = 0; base < l.words; base += compact_threads) {
    const std::int64_t w = base + threadIdx.x;
    unsigned word = w < l.words ? bits[w] : 0u;
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

// ---- configuration from the device ------------------------------------------------------------

enum class phase { symbolic, numeric };

// One shared-memory kernel shape: `block` threads, `group` of them per row, a table of
// `table_size` slots per row, `blocks_per_sm` resident blocks (full occupancy, except the last
// shape, which takes all shared memory at half occupancy to keep more rows off the long path).
struct table_shape {
  int block = 0;
  int group = 0;
  int blocks_per_sm = 0;
  unsigned table_size = 0;
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
  std::int64_t max_work = 0;     // largest products (symbolic) or row length (numeric) taken
};

// Shapes, smallest first. The symbolic tables hold 4-byte keys and take rows up to
// table/symbolic_load products (distinct columns ≤ products, so they never fill); the numeric
// tables hold key + value and take rows up to table/numeric_load entries (exact, from the
// symbolic phase). Block tables in the numeric phase are powers of two for the bitonic sort.
constexpr double symbolic_load = 1.2;  // the paper's Sym_1.2x
constexpr double numeric_load = 2.0;   // the paper's Num_2x
constexpr std::array<std::array<int, 2>, 7> block_group = {
    {{256, 8}, {256, 32}, {64, 64}, {128, 128}, {256, 256}, {512, 512}, {1024, 1024}}};

std::vector<table_shape> make_shapes(const device_properties& d, phase ph,
                                     std::size_t value_bytes) {
  const std::size_t slot_bytes = sizeof(index_t) + (ph == phase::numeric ? value_bytes : 0);
  const std::size_t reserved = d.reserved_shared_memory_per_block;
  const int max_blocks = std::max(d.max_blocks_per_sm, 1);
  const int threads = std::max(d.max_threads_per_sm, 1);
  std::vector<table_shape> shapes;
  auto add = [&](int block, int group, int blocks_per_sm) {
    table_shape s;
    s.block = block;
    s.group = group;
    s.blocks_per_sm = blocks_per_sm;
    // The kernels' own counters, and a word per warp for a block-per-row kernel.
    const std::size_t static_bytes =
        64 + (group == block ? 4 * static_cast<std::size_t>(block / 32) : 0);
    std::size_t per_block = d.shared_memory_per_sm / blocks_per_sm;
    per_block = per_block > reserved + static_bytes ? per_block - reserved - static_bytes : 0;
    per_block = std::min(per_block, d.shared_memory_per_block_optin - static_bytes);
    const int rows = block / group;
    std::size_t table = per_block / rows / slot_bytes;
    if (ph == phase::numeric && group == block)
      table = table ? std::size_t{1} << (63 - __builtin_clzll(table)) : 0;  // power of two
    else if (ph == phase::numeric)
      table &= ~std::size_t{3};  // whole 16-byte words: the rank counting reads keys by four
    if (table < 8) return;
    s.table_size = static_cast<unsigned>(table);
    s.shared_bytes = table * rows * slot_bytes;
    const double load = ph == phase::symbolic ? symbolic_load : numeric_load;
    s.max_work = static_cast<std::int64_t>(static_cast<double>(table) / load);
    if (!shapes.empty() && s.max_work <= shapes.back().max_work) return;
    shapes.push_back(s);
  };
  for (const auto& [block, group] : block_group)
    add(block, group, std::clamp(threads / block, 1, max_blocks));
  add(1024, 1024, 1);  // all shared memory for one block: the largest table
  return shapes;
}

// Kernels of one shape as function pointers, so a shape table drives every launch.
template <class T>
struct shape_kernels {
  void (*symbolic)(operands<T>, bin_launch, index_t*);
  void (*numeric)(operands<T>, bin_launch, const index_t*, index_t*, T*);
};

template <class T>
shape_kernels<T> kernels_for(int block, int group) {
  if (block == 256 && group == 8) return {symbolic_shared<T, 256, 8>, numeric_shared<T, 256, 8>};
  if (block == 256 && group == 32) return {symbolic_shared<T, 256, 32>, numeric_shared<T, 256, 32>};
  if (block == 64) return {symbolic_shared<T, 64, 64>, numeric_shared<T, 64, 64>};
  if (block == 128) return {symbolic_shared<T, 128, 128>, numeric_shared<T, 128, 128>};
  if (block == 256) return {symbolic_shared<T, 256, 256>, numeric_shared<T, 256, 256>};
  if (block == 512) return {symbolic_shared<T, 512, 512>, numeric_shared<T, 512, 512>};
  return {symbolic_shared<T, 1024, 1024>, numeric_shared<T, 1024, 1024>};
}

// Lets a kernel take more than 48 KB of dynamic shared memory and prefer shared memory over L1.
// Set before every launch: two shapes share the 1024-thread kernels with different sizes.
template <class Kernel>
void allow_shared(Kernel kernel, std::size_t bytes) {
  SPADE_CUDA_TRY(
      cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
      "sizing the shared memory of a hash_spgemm kernel");
  SPADE_CUDA_TRY(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                      cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared),
                 "preferring shared memory for a hash_spgemm kernel");
}

// ---- streams: bins run concurrently, the longest launched first -------------------------------

constexpr int side_stream_count = 3;

// Per device, made once and kept for the process: the side streams bins are spread over and
// the events that fork them from, and join them back to, the context's stream.
struct side_streams {
  std::mutex mutex;
  cudaStream_t streams[side_stream_count] = {};
  cudaEvent_t fork = nullptr;
  cudaEvent_t joins[side_stream_count] = {};
};

side_streams& side_streams_of(int device) {
  static std::mutex table_mutex;
  static std::vector<std::unique_ptr<side_streams>> table;
  std::lock_guard<std::mutex> lock(table_mutex);
  if (table.size() <= static_cast<std::size_t>(device)) table.resize(device + 1);
  auto& entry = table[device];
  if (!entry) {
    auto made = std::make_unique<side_streams>();
    for (auto& s : made->streams)
      SPADE_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                     "creating the hash_spgemm side streams");
    SPADE_CUDA_TRY(cudaEventCreateWithFlags(&made->fork, cudaEventDisableTiming),
                   "creating the hash_spgemm events");
    for (auto& e : made->joins)
      SPADE_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                     "creating the hash_spgemm events");
    entry = std::move(made);
  }
  return *entry;
}

// Launches on the context stream and the side streams in turn between fork() and join(); the
// work queued on the context stream before fork() comes first on all of them, and everything
// after join() waits for all of them.
class stream_fan {
 public:
  stream_fan(cudaStream_t main, int device) : main_(main), sides_(side_streams_of(device)) {}
  void fork() {
    SPADE_CUDA_TRY(cudaEventRecord(sides_.fork, main_), "forking the hash_spgemm streams");
    for (auto s : sides_.streams)
      SPADE_CUDA_TRY(cudaStreamWaitEvent(s, sides_.fork, 0), "forking the hash_spgemm streams");
    next_ = 0;
  }
  cudaStream_t next() {
    const int k = next_++ % (side_stream_count + 1);
    return k == 0 ? main_ : sides_.streams[k - 1];
  }
  cudaStream_t next_side() { return sides_.streams[next_++ % side_stream_count]; }
  void join() {
    for (int k = 0; k < side_stream_count; ++k) {
      SPADE_CUDA_TRY(cudaEventRecord(sides_.joins[k], sides_.streams[k]),
                     "joining the hash_spgemm streams");
      SPADE_CUDA_TRY(cudaStreamWaitEvent(main_, sides_.joins[k], 0),
                     "joining the hash_spgemm streams");
    }
  }
  std::mutex& mutex() { return sides_.mutex; }

 private:
  cudaStream_t main_;
  side_streams& sides_;
  int next_ = 0;
};

// ---- the product ------------------------------------------------------------------------------

// Numeric binning counts a row's products / this as its length when that is more (bin_ranges).
constexpr int numeric_products_per_slot = 8;
// Products per block of the long-row path (docs/spgemm.md).
constexpr std::int64_t long_products_per_block = 16384;
// A numeric row goes to the dense accumulator only when it holds at least this share of C's
// columns, so walking its bitmap costs at most 2 words per entry.
constexpr std::int64_t dense_fill_divisor = 64;

int per_entry_for(double mean_b_row) {
  int t = 1;
  while (t < 32 && t < mean_b_row)
    t *= 2;
  return t;
}

template <class T>
class product_run {
 public:
  product_run(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b, context& ctx,
              hash_spgemm_report* report, bool timed, std::int64_t dense_row_min)
      : a_(a), b_(b), ctx_(ctx), stream_(detail::stream_of(ctx)), report_(report), timed_(timed) {
    // An error left by earlier, unrelated CUDA calls of this thread is not ours to report.
    (void)cudaGetLastError();
    p_ = operands<T>{a.row_ptr().data(), a.col_idx().data(), a.values().data(),
                     b.row_ptr().data(), b.col_idx().data(), b.values().data(),
                     a.rows(),           b.cols(),           alpha};
    const auto& d = ctx.properties();
    symbolic_shapes_ = make_shapes(d, phase::symbolic, sizeof(T));
    // Rows of up to sorted_widths.back() products are sorted in registers, not hashed.
    std::erase_if(symbolic_shapes_,
                  [](const table_shape& s) { return s.max_work <= sorted_widths.back(); });
    numeric_shapes_ = make_shapes(d, phase::numeric, sizeof(T));
    route_long_rows_dense(dense_row_min < 0 ? hash_spgemm_dense_row_min : dense_row_min);
    per_entry_ = per_entry_for(b.rows() > 0 ? static_cast<double>(b.nnz()) / b.rows() : 0.0);
    if (report_) {
      *report_ = hash_spgemm_report{};
      for (const auto& s : symbolic_shapes_)
        report_->symbolic_tables.push_back(s.table_size);
      for (const auto& s : numeric_shapes_)
        report_->numeric_tables.push_back(s.table_size);
      report_->sorted_widths.assign(sorted_widths.begin(), sorted_widths.end());
    }
  }

  csr<T, gpu> run(bool values) {
    const index_t m = a_.rows();
    const index_t n = b_.cols();
    device_buffer<index_t> row_ptr(static_cast<std::size_t>(m) + 1, ctx_);
    if (m == 0 || n == 0 || a_.nnz() == 0 || b_.nnz() == 0) {
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    mark("start");
    // Setup: products per row into C's row pointers, bins counted (Algorithm 1).
    const bin_ranges sym_ranges = ranges_of(symbolic_shapes_, true);
    device_buffer<bin_counters> counters(2, ctx_);
    counters.fill_zero();
    SPADE_CUDA_TRY(cudaMemsetAsync(row_ptr.data() + m, 0, sizeof(index_t), stream_),
                   "clearing C's last row pointer (hash_spgemm)");
    device_buffer<index_t> row_products(static_cast<std::size_t>(m), ctx_);
    count_bins<T><<<binning_blocks(m), setup_threads, 0, stream_>>>(
        p_, nullptr, m, true, row_ptr.data(), row_products.data(), sym_ranges, counters.data());
    SPADE_CHECK_LAUNCH("counting the products per row (hash_spgemm)");
    mark("products per row");
    // Allocated while the count runs (the paper's overlap of allocation and kernels).
    device_buffer<index_t> bins(static_cast<std::size_t>(m), ctx_);
    bin_counters sym{};
    ctx_.copy_to_host(&sym, counters.data(), sizeof(sym));
    constexpr int sorted_bins = static_cast<int>(sorted_widths.size());
    std::int64_t sorted_count = 0;  // rows sorted in registers: the first bins' segments
    for (int w = 0; w < sorted_bins; ++w)
      sorted_count += static_cast<std::int64_t>(sym.size[w]);
    if (report_) {
      report_->products = static_cast<std::int64_t>(sym.total);
      report_->sorted_rows.assign(sym.size, sym.size + sorted_bins);
      report_->symbolic_bins.assign(sym.size + sorted_bins, sym.size + sym_ranges.count);
    }
    if (sym.total == 0) {  // no products: every row of C is empty
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    const bin_starts sym_starts =
        place(sym_ranges, sym, row_ptr.data(), nullptr, m, counters.data(), bins);
    const index_t* sym_rows = bins_or_identity(bins);
    mark("symbolic binning");

    // The sorted rows add their lengths to the numeric counters' total (nnz(C)) themselves.
    symbolic(sym, sym_starts, sym_rows, row_ptr.data(), &counters.data()[1].total);
    mark("symbolic");

    // Numeric binning by row length (pass 1) of the rows not sorted in registers — the symbolic
    // bins after the sorted ones, in their own bin array — nnz(C) to the host, then C's arrays.
    bin_ranges num_ranges = ranges_of(numeric_shapes_, false);
    if (!numeric_shapes_.empty()) {
      num_ranges.products = row_products.data();
      num_ranges.products_per_slot = numeric_products_per_slot;
      num_ranges.products_cap = numeric_shapes_.back().max_work;
    }
    const std::int64_t hashed_count = m - sorted_count;
    const index_t* hashed_list = sorted_count && hashed_count ? sym_rows + sorted_count : nullptr;
    device_buffer<index_t> hashed_bins(
        sorted_count && hashed_count ? static_cast<std::size_t>(hashed_count) : std::size_t{0},
        ctx_);
    device_buffer<index_t>& num_bin_array = sorted_count ? hashed_bins : bins;
    if (hashed_count) {
      count_bins<T><<<binning_blocks(hashed_count), setup_threads, 0, stream_>>>(
          p_, hashed_list, hashed_count, false, row_ptr.data(), nullptr, num_ranges,
          counters.data() + 1);
      SPADE_CHECK_LAUNCH("counting the row lengths of C (hash_spgemm)");
    }
    bin_counters num{};
    ctx_.copy_to_host(&num, counters.data() + 1, sizeof(num));
    if (report_) {
      report_->nnz = static_cast<std::int64_t>(num.total);
      report_->numeric_bins.assign(num.size, num.size + num_ranges.count);
    }
    if (num.total > static_cast<unsigned long long>(INT_MAX))
      throw invalid_matrix("hash_spgemm: " + std::to_string(num.total) + " nonzeros in the " +
                           detail::shape_text(m, n) +
                           " product exceed the 32-bit index type (at most 2147483647)");
    const auto nnz = static_cast<std::size_t>(num.total);
    c_bytes_ =
        nnz * (sizeof(index_t) + sizeof(T)) + (static_cast<std::size_t>(m) + 1) * sizeof(index_t);
    if (!values) {
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    device_buffer<index_t> col_idx(nnz, ctx_);
    device_buffer<T> c_values(nnz, ctx_);
    const bin_starts num_starts = place(num_ranges, num, row_ptr.data(), hashed_list, hashed_count,
                                        counters.data() + 1, num_bin_array);
    // Identity over a list is the list itself.
    const index_t* num_rows = identity_ ? hashed_list : num_bin_array.data();
    mark("numeric binning");
    detail::cub_run(ctx_, "summing C's row lengths (hash_spgemm)", [&](void* temp, std::size_t& b) {
      return cub::DeviceScan::ExclusiveSum(temp, b, row_ptr.data(), row_ptr.data(), m + 1, stream_);
    });
    mark("row offsets");

    numeric(sym, sym_starts, sym_rows, num, num_starts, num_rows, row_ptr.data(), col_idx.data(),
            c_values.data());
    mark("numeric");
    finish_report(nnz);
    return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), std::move(col_idx),
                       std::move(c_values));
  }

 private:
  // Numeric rows of at least `row_min` entries that also fill at least 1/dense_fill_divisor of
  // C's columns take the dense accumulator, which writes them sorted without a sort; the shared
  // tables stop below that length. 0: only rows too long for shared memory do.
  void route_long_rows_dense(std::int64_t row_min) {
    if (row_min <= 0) return;
    const std::int64_t cut =
        std::max(row_min, (std::int64_t{b_.cols()} + dense_fill_divisor - 1) / dense_fill_divisor);
    for (std::size_t k = 0; k < numeric_shapes_.size(); ++k) {
      if (numeric_shapes_[k].max_work >= cut) {
        numeric_shapes_[k].max_work = cut - 1;
        numeric_shapes_.resize(k + 1);
        break;
      }
    }
    if (report_) {
      report_->numeric_tables.clear();
      for (const auto& s : numeric_shapes_)
        report_->numeric_tables.push_back(s.table_size);
    }
  }

  static unsigned binning_blocks(std::int64_t rows) {
    constexpr std::int64_t per_block = std::int64_t{setup_threads} * binning_rows_per_thread;
    return static_cast<unsigned>((rows + per_block - 1) / per_block);
  }

  unsigned blocks_for(std::int64_t items) const {
    return static_cast<unsigned>((items + setup_threads - 1) / setup_threads);
  }

  // Symbolic (`sorted`): the register-sorted widths first, then the tables, then the long path.
  static bin_ranges ranges_of(const std::vector<table_shape>& shapes, bool sorted) {
    bin_ranges r;
    if (sorted)
      for (const int w : sorted_widths)
        r.upper[r.count++] = w;
    for (const auto& s : shapes)
      r.upper[r.count++] = s.max_work;
    r.upper[r.count++] = std::numeric_limits<std::int64_t>::max();  // the long-row path
    return r;
  }

  // Pass 2 (Algorithm 2) unless one bin holds every row, when bins are the identity (Algorithm
  // 3's case, without even its kernel).
  bin_starts place(const bin_ranges& ranges, const bin_counters& c, const index_t* work,
                   const index_t* list, std::int64_t count, bin_counters* d_counters,
                   device_buffer<index_t>& bins) {
    bin_starts starts;
    std::int64_t at = 0;
    int filled = 0;
    for (int b = 0; b < ranges.count; ++b) {
      starts.start[b] = at;
      at += static_cast<std::int64_t>(c.size[b]);
      filled += c.size[b] != 0;
    }
    identity_ = filled <= 1;
    if (!identity_) {
      fill_bins<<<binning_blocks(count), setup_threads, 0, stream_>>>(
          work, list, count, ranges, starts, d_counters, bins.data());
      SPADE_CHECK_LAUNCH("placing rows into bins (hash_spgemm)");
    }
    return starts;
  }

  const index_t* bins_or_identity(const device_buffer<index_t>& bins) const {
    return identity_ ? nullptr : bins.data();
  }

  // Runs the launches of one phase: `jobs` — the tables from the largest down, then the sorted
  // rows — spread over the context stream and the side streams. With a long path, the jobs go
  // to the side streams only and the long path then runs on the context stream, which owns its
  // workspace: it reads its split back to the host, and the jobs queued before it run meanwhile
  // (queued after it, they waited for that synchronisation, 0.3 ms on a circuit matrix).
  void launch_jobs(std::vector<std::function<void(cudaStream_t)>>& jobs,
                   const std::function<void()>& long_path) {
    if (jobs.empty() && !long_path) return;
    if (jobs.empty() || (jobs.size() == 1 && !long_path)) {  // no streams to fork
      if (!jobs.empty()) jobs.front()(stream_);
      if (long_path) long_path();
      return;
    }
    stream_fan fan(stream_, ctx_.properties().ordinal);
    std::lock_guard<std::mutex> lock(fan.mutex());
    fan.fork();
    for (auto& job : jobs)
      job(long_path ? fan.next_side() : fan.next());
    if (long_path) long_path();
    fan.join();
  }

  // The sorted-row launches of a phase, widest first, for the symbolic bins' first segments.
  template <class Launch>
  void add_sorted_jobs(std::vector<std::function<void(cudaStream_t)>>& jobs,
                       const bin_counters& sym, const bin_starts& sym_starts,
                       const index_t* sym_rows, Launch launch) {
    for (int w = static_cast<int>(sorted_widths.size()) - 1; w >= 0; --w) {
      const auto count = static_cast<std::int64_t>(sym.size[w]);
      if (count == 0) continue;
      const int width = sorted_widths[static_cast<std::size_t>(w)];
      const sorted_rows l{sym_rows, sym_starts.start[w], count};
      jobs.emplace_back([=](cudaStream_t s) { launch(sorted_kernels_for<T>(width), width, l, s); });
    }
  }

  // Blocks for `rows` rows of `width` threads, `rows_per_group` rows per group.
  static unsigned sorted_blocks(std::int64_t rows, int width, int rows_per_group) {
    const std::int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
    return static_cast<unsigned>((groups * width + sorted_threads - 1) / sorted_threads);
  }

  void symbolic(const bin_counters& c, const bin_starts& starts, const index_t* bin_rows,
                index_t* row_nnz, unsigned long long* sorted_nnz) {
    const int sorted_bins = static_cast<int>(sorted_widths.size());
    const int long_bin = sorted_bins + static_cast<int>(symbolic_shapes_.size());
    std::function<void()> long_path;
    if (c.size[long_bin])
      long_path = [&] {
        long_rows(bin_rows, starts.start[long_bin], static_cast<std::int64_t>(c.size[long_bin]),
                  /*numeric=*/false, row_nnz, nullptr, nullptr, nullptr);
      };
    std::vector<std::function<void(cudaStream_t)>> jobs;
    for (int b = long_bin - 1; b >= sorted_bins; --b) {
      if (c.size[b] == 0) continue;
      jobs.emplace_back([=, this](cudaStream_t s) {
        const table_shape& sh = symbolic_shapes_[static_cast<std::size_t>(b - sorted_bins)];
        const auto k = kernels_for<T>(sh.block, sh.group);
        allow_shared(k.symbolic, sh.shared_bytes);
        const auto rows = static_cast<std::int64_t>(c.size[b]);
        const int per_block = sh.block / sh.group;
        const bin_launch l{bin_rows, starts.start[b], rows, sh.table_size,
                           std::min(per_entry_, sh.group)};
        k.symbolic<<<static_cast<unsigned>((rows + per_block - 1) / per_block), sh.block,
                     sh.shared_bytes, s>>>(p_, l, row_nnz);
        SPADE_CHECK_LAUNCH("counting the columns of C's rows (hash_spgemm symbolic)");
      });
    }
    add_sorted_jobs(
        jobs, c, starts, bin_rows,
        [=, this](const sorted_kernels<T>& k, int width, sorted_rows l, cudaStream_t s) {
          k.symbolic<<<sorted_blocks(l.count, width, sorted_symbolic_rows), sorted_threads, 0, s>>>(
              p_, l, row_nnz, sorted_nnz);
          SPADE_CHECK_LAUNCH("counting the columns of C's short rows (hash_spgemm symbolic)");
        });
    launch_jobs(jobs, long_path);
  }

  void numeric(const bin_counters& sym, const bin_starts& sym_starts, const index_t* sym_rows,
               const bin_counters& c, const bin_starts& starts, const index_t* bin_rows,
               const index_t* c_row_ptr, index_t* c_col_idx, T* c_values) {
    const int long_bin = static_cast<int>(numeric_shapes_.size());
    std::function<void()> long_path;
    if (c.size[long_bin])
      long_path = [&] {
        long_rows(bin_rows, starts.start[long_bin], static_cast<std::int64_t>(c.size[long_bin]),
                  /*numeric=*/true, nullptr, c_row_ptr, c_col_idx, c_values);
      };
    std::vector<std::function<void(cudaStream_t)>> jobs;
    for (int b = long_bin - 1; b >= 0; --b) {
      if (c.size[b] == 0) continue;
      jobs.emplace_back([=, this](cudaStream_t s) {
        const table_shape& sh = numeric_shapes_[static_cast<std::size_t>(b)];
        const auto k = kernels_for<T>(sh.block, sh.group);
        allow_shared(k.numeric, sh.shared_bytes);
        const auto rows = static_cast<std::int64_t>(c.size[b]);
        const int per_block = sh.block / sh.group;
        const bin_launch l{bin_rows, starts.start[b], rows, sh.table_size,
                           std::min(per_entry_, sh.group)};
        k.numeric<<<static_cast<unsigned>((rows + per_block - 1) / per_block), sh.block,
                    sh.shared_bytes, s>>>(p_, l, c_row_ptr, c_col_idx, c_values);
        SPADE_CHECK_LAUNCH("computing the values of C's rows (hash_spgemm numeric)");
      });
    }
    add_sorted_jobs(
        jobs, sym, sym_starts, sym_rows,
        [=, this](const sorted_kernels<T>& k, int width, sorted_rows l, cudaStream_t s) {
          k.numeric<<<sorted_blocks(l.count, width, sorted_numeric_rows), sorted_threads, 0, s>>>(
              p_, l, c_row_ptr, c_col_idx, c_values);
          SPADE_CHECK_LAUNCH("computing the values of C's short rows (hash_spgemm numeric)");
        });
    launch_jobs(jobs, long_path);
  }

  // The long-row path for `count` rows bins[first…]: blocks per row by products, then batches of
  // as many rows as the workspace budget has slots for.
  void long_rows(const index_t* bin_rows, std::int64_t first, std::int64_t count, bool numeric,
                 index_t* row_nnz, const index_t* c_row_ptr, index_t* c_col_idx, T* c_values) {
    const cudaStream_t s = stream_;
    const std::int64_t words = (std::int64_t{b_.cols()} + 31) / 32;
    const std::size_t slot_bytes =
        static_cast<std::size_t>(words) * 4 +
        (numeric ? static_cast<std::size_t>(b_.cols()) * sizeof(T) : std::size_t{0});
    // Budget: symbolic 16 bytes per row of A (O(rows)); numeric a quarter of C's bytes. At least
    // one slot, and never more than half the free memory.
    std::size_t budget = numeric ? c_bytes_ / 4 : static_cast<std::size_t>(a_.rows()) * 16;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      budget = std::min(budget, free_bytes / 2);
    const std::int64_t slots = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(budget / slot_bytes), 1, std::max<std::int64_t>(count, 1));
    if (slot_bytes > free_bytes && free_bytes != 0)
      throw out_of_memory("hash_spgemm: a long row of C needs a dense accumulator of " +
                          std::to_string(slot_bytes) + " bytes (" + std::to_string(b_.cols()) +
                          " columns); " + std::to_string(free_bytes) + " bytes are free");

    device_buffer<index_t> offsets(static_cast<std::size_t>(count) + 1, ctx_);
    long_row_blocks<T><<<blocks_for(count * 32), setup_threads, 0, s>>>(
        p_, bin_rows, first, count, long_products_per_block, offsets.data(),
        numeric ? nullptr : row_nnz);
    SPADE_CHECK_LAUNCH("splitting long rows across blocks (hash_spgemm)");
    SPADE_CUDA_TRY(cudaMemsetAsync(offsets.data() + count, 0, sizeof(index_t), s),
                   "splitting long rows across blocks (hash_spgemm)");
    detail::cub_run(ctx_, "splitting long rows across blocks (hash_spgemm)",
                    [&](void* temp, std::size_t& bytes) {
                      return cub::DeviceScan::ExclusiveSum(temp, bytes, offsets.data(),
                                                           offsets.data(), count + 1, s);
                    });
    std::vector<index_t> host_offsets(static_cast<std::size_t>(count) + 1);
    SPADE_CUDA_TRY(
        cudaMemcpyAsync(host_offsets.data(), offsets.data(), host_offsets.size() * sizeof(index_t),
                        cudaMemcpyDeviceToHost, s),
        "reading the long-row split (hash_spgemm)");
    SPADE_CUDA_TRY(cudaStreamSynchronize(s), "reading the long-row split (hash_spgemm)");

    const std::size_t workspace_bytes = static_cast<std::size_t>(slots) * slot_bytes;
    device_buffer<std::byte> workspace(workspace_bytes, ctx_);
    const std::size_t value_bytes =
        numeric ? static_cast<std::size_t>(slots) * b_.cols() * sizeof(T) : 0;
    T* dense_values = numeric ? reinterpret_cast<T*>(workspace.data()) : nullptr;
    auto* bitmaps = reinterpret_cast<unsigned*>(workspace.data() + value_bytes);
    if (numeric)  // cleared once: compact_long leaves every slot zeroed behind it
      SPADE_CUDA_TRY(cudaMemsetAsync(workspace.data(), 0, workspace_bytes, s),
                     "clearing the long-row workspace (hash_spgemm)");
    if (report_) {
      report_->long_rows[numeric ? 1 : 0] = count;
      report_->long_batches[numeric ? 1 : 0] = (count + slots - 1) / slots;
      report_->workspace_bytes = std::max(report_->workspace_bytes, workspace_bytes);
    }
    for (std::int64_t r = 0; r < count; r += slots) {
      const std::int64_t r_end = std::min(count, r + slots);
      const long_batch l{bin_rows, first, offsets.data(), r, r_end, per_entry_, words};
      const std::int64_t items = host_offsets[r_end] - host_offsets[r];
      if (!numeric) {
        SPADE_CUDA_TRY(
            cudaMemsetAsync(bitmaps, 0, static_cast<std::size_t>(r_end - r) * words * 4, s),
            "clearing the long-row bitmaps (hash_spgemm)");
        symbolic_long<T>
            <<<static_cast<unsigned>(items), long_threads, 0, s>>>(p_, l, bitmaps, row_nnz);
        SPADE_CHECK_LAUNCH("counting the columns of long rows (hash_spgemm symbolic)");
      } else {
        numeric_long<T>
            <<<static_cast<unsigned>(items), long_threads, 0, s>>>(p_, l, dense_values, bitmaps);
        SPADE_CHECK_LAUNCH("computing the values of long rows (hash_spgemm numeric)");
        compact_long<T><<<static_cast<unsigned>(r_end - r), compact_threads, 0, s>>>(
            l, b_.cols(), dense_values, bitmaps, c_row_ptr, c_col_idx, c_values);
        SPADE_CHECK_LAUNCH("writing long rows in column order (hash_spgemm numeric)");
      }
    }
  }

  // Phase boundaries as events on the context stream when timing was asked for.
  void mark(const char* name) {
    if (!report_ || !timed_) return;
    cudaEvent_t e = nullptr;
    SPADE_CUDA_TRY(cudaEventCreate(&e), "timing hash_spgemm phases");
    SPADE_CUDA_TRY(cudaEventRecord(e, stream_), "timing hash_spgemm phases");
    events_.push_back(e);
    names_.push_back(name);
  }

  void finish_report(std::size_t nnz) {
    if (!report_) return;
    if (timed_ && !events_.empty()) {
      SPADE_CUDA_TRY(cudaEventSynchronize(events_.back()), "timing hash_spgemm phases");
      for (std::size_t i = 1; i < events_.size(); ++i) {
        float ms = 0;
        cudaEventElapsedTime(&ms, events_[i - 1], events_[i]);
        report_->phase_ms.emplace_back(names_[i], ms);
      }
    }
    for (auto e : events_)
      cudaEventDestroy(e);
    events_.clear();
    report_->nnz = static_cast<std::int64_t>(nnz);
  }

 private:
  std::size_t c_bytes_ = 0;
  const csr<T, gpu>& a_;
  const csr<T, gpu>& b_;
  context& ctx_;
  cudaStream_t stream_;
  hash_spgemm_report* report_;
  bool timed_;
  operands<T> p_{};
  std::vector<table_shape> symbolic_shapes_;
  std::vector<table_shape> numeric_shapes_;
  int per_entry_ = 1;
  bool identity_ = false;

  std::vector<cudaEvent_t> events_;
  std::vector<std::string> names_;
};

}  // namespace

std::string hash_spgemm_report::describe() const {
  std::ostringstream out;
  out << products << " products, nnz(C) " << nnz << ", compression ratio " << compression_ratio();
  auto bins = [&](const char* what, const std::vector<std::int64_t>& rows,
                  const std::vector<unsigned>& tables, std::int64_t long_count,
                  std::int64_t batches) {
    out << "; " << what << " bins (rows per table size):";
    for (std::size_t b = 0; b < rows.size(); ++b) {
      if (b < tables.size())
        out << " " << tables[b] << ":" << rows[b];
      else
        out << " long:" << rows[b];
    }
    if (long_count) out << " (" << batches << " batch(es) of dense accumulators)";
  };
  out << "; rows sorted in registers (rows per width):";
  for (std::size_t w = 0; w < sorted_rows.size() && w < sorted_widths.size(); ++w)
    out << " " << sorted_widths[w] << ":" << sorted_rows[w];
  bins("symbolic", symbolic_bins, symbolic_tables, long_rows[0], long_batches[0]);
  bins("numeric", numeric_bins, numeric_tables, long_rows[1], long_batches[1]);
  for (const auto& [name, ms] : phase_ms)
    out << "; " << name << " " << ms << " ms";
  return out.str();
}

template <scalar T>
csr<T, gpu> hash_spgemm(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b,
                        hash_spgemm_report* report, bool time_phases, std::int64_t dense_row_min) {
  detail::require_shapes(a.cols() == b.rows(), "hash_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  product_run<T> run(alpha, a, b, ctx, report, time_phases, dense_row_min);
  return run.run(true);
}

template <scalar T>
hash_spgemm_report hash_spgemm_profile(const csr<T, gpu>& a, const csr<T, gpu>& b) {
  detail::require_shapes(a.cols() == b.rows(), "hash_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  hash_spgemm_report report;
  product_run<T> run(T(1), a, b, ctx, &report, false, -1);
  run.run(false);
  return report;
}

SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(float)
SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(double)

}  // namespace spade::device
