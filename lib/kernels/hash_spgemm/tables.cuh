// hash_spgemm's shared-memory tables: the symbolic and numeric kernels, their sorts and shapes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "detail/cuda_check.hpp"
#include "kernels/hash_spgemm/common.cuh"

namespace spade::device {

namespace {

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

}  // namespace

}  // namespace spade::device
