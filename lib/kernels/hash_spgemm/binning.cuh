// hash_spgemm's binning: rows counted and placed into bins by their work (Algorithms 1-3).
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kernels/hash_spgemm/common.cuh"

namespace spade::device {

namespace {

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

}  // namespace

}  // namespace spade::device
