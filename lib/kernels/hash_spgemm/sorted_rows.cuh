// hash_spgemm's rows of at most 32 products, sorted in registers with no table.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "kernels/hash_spgemm/common.cuh"

namespace spade::device {

namespace {

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

// Adds every thread's `counted` to *nnz_total: a warp sum, one shared atomic per warp into
// s_total (zeroed and synchronised at the kernel's start), one global atomic per block.
__device__ __forceinline__ void add_block_total(unsigned counted, unsigned long long& s_total,
                                                unsigned long long* nnz_total) {
  const unsigned warp_total = __reduce_add_sync(full_warp, counted);
  if ((threadIdx.x & 31u) == 0 && warp_total) atomicAdd(&s_total, warp_total);
  __syncthreads();
  if (threadIdx.x == 0 && s_total) atomicAdd(nnz_total, s_total);
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
  add_block_total(counted, s_total, nnz_total);
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

// ---- staged: the short rows' values computed once, in the symbolic phase ---------------------

// Only rows of 17–32 products are staged, and only where they carry at least
// 1/staged_min_share of all products (counted at 17 a row). Staging moves work into the symbolic
// phase and out of the numeric one, which on circuit matrices ends on a few long rows anyway;
// the move pays where the staged rows are the bulk of the work. H200, medians of 20, same run
// (fp32, then fp64; the share in brackets): circuit_1.6M_4.8 (≥ 40 %) 1.72/1.64 → 1.59/1.59 ms
// and 1.87/1.87 → 1.81/1.80; circuit_1M_3 (≥ 14 %) 0.54/0.54 → 0.56/0.55 and 0.60/0.61 →
// 0.64/0.63; circuit_4M_6 (≥ 16 %) 5.61/5.60 → 5.66/5.69 and 6.83/7.05 → 6.40/6.38. Staging
// every width made circuit_1M_3 5 % slower in fp32: narrow rows count cheaply (four a group, no
// values).
constexpr int staged_min_width = 32;
constexpr std::int64_t staged_min_share = 4;

// Where a width's rows keep their finished entries until C's offsets are known: row i of the
// width's bin owns the Width slots from `base + i·Width` (a row has at most Width entries).
struct staging_area {
  index_t* cols;
  std::int64_t base;
};

// Symbolic with values: the numeric kernel's gather, sort and run sums, done once. Each row's
// entries go to its slots of the staging area in column order and its length to `row_nnz`, as
// symbolic_sorted does; copy_staged moves them into C after the scan. The gather — not the sort —
// is what these rows cost, and it was paid twice (symbolic, then numeric).
template <class T, int Width>
__global__ void __launch_bounds__(sorted_threads)
    staged_sorted(operands<T> p, sorted_rows l, staging_area area, T* __restrict__ area_values,
                  index_t* row_nnz, unsigned long long* nnz_total) {
  constexpr int Rows = sorted_numeric_rows;
  __shared__ unsigned long long s_total;
  if (threadIdx.x == 0) s_total = 0;
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x) % Width;
  const std::int64_t group = (std::int64_t{blockIdx.x} * sorted_threads + threadIdx.x) / Width;
  sorted_group<T, Rows> g;
  const int chunks = load_rows<T, Width, Rows>(p, l, g);
  gather_products<T, Width, Rows, true>(p, chunks, lane, g);
  sort_rows<T, Width, Rows, true>(lane, g);
  sum_runs<T, Width, Rows>(lane, g);
  unsigned counted = 0;
#pragma unroll
  for (int r = 0; r < Rows; ++r) {
    const unsigned heads = run_heads<Width>(lane, g.key[r]);
    if (!g.valid[r]) continue;
    if ((heads >> lane) & 1u) {
      const std::int64_t at =
          area.base + (group * Rows + r) * Width + __popc(heads & ((1u << lane) - 1u));
      area.cols[at] = g.key[r];
      area_values[at] = g.value[r];
    }
    if (lane == 0) {
      const auto nnz = static_cast<unsigned>(__popc(heads));
      row_nnz[g.row[r]] = static_cast<index_t>(nnz);
      counted += nnz;
    }
  }
  add_block_total(counted, s_total, nnz_total);
}

// Numeric for staged rows: each row's entries copied from its slots to its offset in C, a
// thread per slot. A copy is all latency (row → its offsets → the store), so each group takes
// copy_rows rows side by side, and the slots are read before the offsets are known (every slot
// lies inside the area; the ones past a row's length are read and dropped).
constexpr int copy_rows = 4;

template <class T, int Width>
__global__ void __launch_bounds__(sorted_threads)
    copy_staged(sorted_rows l, staging_area area, const T* __restrict__ area_values,
                const index_t* __restrict__ c_row_ptr, index_t* __restrict__ c_col_idx,
                T* __restrict__ c_values) {
  const std::int64_t group = (std::int64_t{blockIdx.x} * sorted_threads + threadIdx.x) / Width;
  const int lane = static_cast<int>(threadIdx.x) % Width;
  index_t row[copy_rows];
  index_t col[copy_rows];
  T value[copy_rows];
#pragma unroll
  for (int r = 0; r < copy_rows; ++r) {
    const std::int64_t i = group * copy_rows + r;
    if (i >= l.count) continue;
    const std::int64_t from = area.base + i * Width + lane;
    row[r] = row_at(l.rows, l.first + i);
    col[r] = area.cols[from];
    value[r] = area_values[from];
  }
  index_t start[copy_rows];
  index_t length[copy_rows];
#pragma unroll
  for (int r = 0; r < copy_rows; ++r) {
    if (group * copy_rows + r >= l.count) continue;
    start[r] = c_row_ptr[row[r]];
    length[r] = c_row_ptr[row[r] + 1] - start[r];
  }
#pragma unroll
  for (int r = 0; r < copy_rows; ++r) {
    if (group * copy_rows + r >= l.count || lane >= length[r]) continue;
    c_col_idx[start[r] + lane] = col[r];
    c_values[start[r] + lane] = value[r];
  }
}

template <class T>
struct sorted_kernels {
  void (*symbolic)(operands<T>, sorted_rows, index_t*, unsigned long long*);
  void (*numeric)(operands<T>, sorted_rows, const index_t*, index_t*, T*);
  void (*staged)(operands<T>, sorted_rows, staging_area, T*, index_t*, unsigned long long*);
  void (*copy)(sorted_rows, staging_area, const T*, const index_t*, index_t*, T*);
};

template <class T, int Width>
constexpr sorted_kernels<T> sorted_kernels_of() {
  return {symbolic_sorted<T, Width>, numeric_sorted<T, Width>, staged_sorted<T, Width>,
          copy_staged<T, Width>};
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

}  // namespace

}  // namespace spade::device
