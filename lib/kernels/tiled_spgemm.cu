// Bitmap-tiled sparse × sparse product on tensor cores (paper 002, tSparse) for sm_90: task list
// of tile pairs sorted by C tile, bitmap culling, boolean bitmap products for C's pattern, then a
// warp per C tile summing its tile products on DMMA (fp64), 3×TF32 (fp32) or fp16 tensor cores.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <sstream>
#include <string>
#include <vector>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "kernels/tile_mma.cuh"
#include "spade/core/tuning.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

constexpr int setup_threads = 256;
// Warps per block of the multiplication kernel: one C tile per warp; 8 warps keep a block's
// registers (≈ 64 per thread) well inside one SM's share at full occupancy.
constexpr int multiply_warps = 8;
// Lanes per C tile in the counting kernel: most C tiles sum a handful of pairs, so a whole warp
// would idle; 8 lanes reduce their bitmaps in three shuffles.
constexpr int count_lanes = 8;

constexpr std::uint64_t byte_lsbs = 0x0101010101010101ull;

__device__ std::int64_t first_thread() {
  return std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ std::int64_t thread_stride() {
  return std::int64_t{gridDim.x} * blockDim.x;
}

// Bit j set when row j of the tile holds an entry.
__device__ __forceinline__ unsigned occupied_rows(std::uint64_t bits) {
  unsigned rows = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j)
    rows |= (((bits >> (8 * j)) & 0xffu) != 0 ? 1u : 0u) << j;
  return rows;
}

// Bit j set when column j of the tile holds an entry (the OR of its row bytes).
__device__ __forceinline__ unsigned occupied_columns(std::uint64_t bits) {
  bits |= bits >> 32;
  bits |= bits >> 16;
  bits |= bits >> 8;
  return static_cast<unsigned>(bits & 0xffu);
}

// The pattern of one tile product: row r of C is the OR of B's rows m where A(r, m) is set.
// Column m of A spread to whole bytes (0x00 / 0xff per row) masks B's row m copied to every byte.
__device__ __forceinline__ std::uint64_t boolean_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t c = 0;
#pragma unroll
  for (int m = 0; m < 8; ++m)
    c |= (((a >> m) & byte_lsbs) * 0xffu) & (((b >> (8 * m)) & 0xffu) * byte_lsbs);
  return c;
}

struct pair_operands {
  std::uint64_t a_bits, b_bits;
  index_t a_offset, b_offset;
};

__device__ __forceinline__ std::uint32_t half_pair(float low, float high) {
  const __half2 h = __floats2half2_rn(low, high);  // .x (low bits) = low
  return *reinterpret_cast<const std::uint32_t*>(&h);
}

// Accumulates tile products for one C tile in the arithmetic each specialisation names; `sum`
// holds C(g, 2t) and C(g, 2t + 1) of this lane.
template <class T, tile_arithmetic Arithmetic>
struct tile_accumulator;

template <>
struct tile_accumulator<double, tile_arithmetic::native> {
  static constexpr int pairs_per_step = 1;
  double c[2] = {0.0, 0.0};
  template <bool Checked = false>
  __device__ void add(const pair_operands* p, const double* a_values, const double* b_values, int g,
                      int t) {
    const double a_low = tile_entry(p->a_bits, tile_bit(g, t), a_values + p->a_offset);
    const double a_high = tile_entry(p->a_bits, tile_bit(g, t + 4), a_values + p->a_offset);
    const double b_low = tile_entry(p->b_bits, tile_bit(t, g), b_values + p->b_offset);
    const double b_high = tile_entry(p->b_bits, tile_bit(t + 4, g), b_values + p->b_offset);
    mma_f64(c, a_low, b_low);
    mma_f64(c, a_high, b_high);
  }
  __device__ double sum(int u) const { return c[u]; }
};

template <>
struct tile_accumulator<float, tile_arithmetic::native> {
  static constexpr int pairs_per_step = 1;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  // Checked: some value of A or B may lie outside the split's exact range (multiply_kernel
  // reads that from a flag), so each pair's entries are tested first.
  template <bool Checked = true>
  __device__ void add(const pair_operands* p, const float* a_values, const float* b_values, int g,
                      int t) {
    const float a_low = tile_entry(p->a_bits, tile_bit(g, t), a_values + p->a_offset);
    const float a_high = tile_entry(p->a_bits, tile_bit(g, t + 4), a_values + p->a_offset);
    const float b_low = tile_entry(p->b_bits, tile_bit(t, g), b_values + p->b_offset);
    const float b_high = tile_entry(p->b_bits, tile_bit(t + 4, g), b_values + p->b_offset);
    // A tile pair holding a value outside the split's range (or inf/NaN) is summed with FMAs:
    // rare in practice, and exact to fp32 where the tensor cores would lose the small parts.
    if constexpr (Checked) {
      const bool split_ok = tf32_split_exact(a_low) && tf32_split_exact(a_high) &&
                            tf32_split_exact(b_low) && tf32_split_exact(b_high);
      if (!__all_sync(0xffffffffu, split_ok)) {
        add_with_fma(p, a_values, b_values, g, t);
        return;
      }
    }
    // x = big + small with both parts exact in TF32; the small·small term is below fp32's
    // rounding and is left out (three products instead of four).
    const std::uint32_t a0 = to_tf32(a_low), a2 = to_tf32(a_high);
    const std::uint32_t b0 = to_tf32(b_low), b1 = to_tf32(b_high);
    const std::uint32_t a0s = to_tf32(a_low - __uint_as_float(a0));
    const std::uint32_t a2s = to_tf32(a_high - __uint_as_float(a2));
    const std::uint32_t b0s = to_tf32(b_low - __uint_as_float(b0));
    const std::uint32_t b1s = to_tf32(b_high - __uint_as_float(b1));
    mma_tf32(c, a0s, a2s, b0, b1);
    mma_tf32(c, a0, a2, b0s, b1s);
    mma_tf32(c, a0, a2, b0, b1);
  }
  __device__ float sum(int u) const { return c[u]; }

 private:
  // C(g, 2t + u) += sum over m of A(g, m)·B(m, 2t + u), m in increasing order, with fp32 FMAs.
  // Not inlined, with its loop rolled: inlined and unrolled, this rare path took the multiply
  // kernel from 59 to 169 registers and made it 4x slower (cage11 0.68 -> 2.83 ms).
  __device__ __noinline__ void add_with_fma(const pair_operands* p, const float* a_values,
                                            const float* b_values, int g, int t) {
    const float* av = a_values + p->a_offset;
    const float* bv = b_values + p->b_offset;
#pragma unroll 1
    for (int m = 0; m < 8; ++m) {
      const float a = tile_entry(p->a_bits, tile_bit(g, m), av);
#pragma unroll
      for (int u = 0; u < 2; ++u)
        c[u] = fmaf(a, tile_entry(p->b_bits, tile_bit(m, 2 * t + u), bv), c[u]);
    }
  }
};

template <class T>
struct tile_accumulator<T, tile_arithmetic::fp16> {
  static constexpr int pairs_per_step = 2;
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  // p[1] may be a pair of empty tiles (an odd count): its zeros add nothing.
  template <bool Checked = false>
  __device__ void add(const pair_operands* p, const T* a_values, const T* b_values, int g, int t) {
    std::uint32_t a[2], b[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const T* av = a_values + p[h].a_offset;
      const T* bv = b_values + p[h].b_offset;
      a[h] = half_pair(static_cast<float>(tile_entry(p[h].a_bits, tile_bit(g, 2 * t), av)),
                       static_cast<float>(tile_entry(p[h].a_bits, tile_bit(g, 2 * t + 1), av)));
      b[h] = half_pair(static_cast<float>(tile_entry(p[h].b_bits, tile_bit(2 * t, g), bv)),
                       static_cast<float>(tile_entry(p[h].b_bits, tile_bit(2 * t + 1, g), bv)));
    }
    mma_f16(c, a[0], a[1], b[0], b[1]);
  }
  __device__ float sum(int u) const {
    return c[u];
  }
};

// ---- task list --------------------------------------------------------------------------------

struct row_start_params {
  const index_t* d_tile_row;  // (tiles), sorted
  index_t* d_row_start;       // (tile_rows + 1): first tile of each tile row
  std::int64_t tiles;
  std::int64_t tile_rows;
};

__global__ void __launch_bounds__(setup_threads) tile_row_start_kernel(row_start_params p) {
  for (std::int64_t r = first_thread(); r <= p.tile_rows; r += thread_stride()) {
    std::int64_t low = 0, high = p.tiles;
    while (low < high) {
      const std::int64_t mid = (low + high) / 2;
      if (p.d_tile_row[mid] < r)
        low = mid + 1;
      else
        high = mid;
    }
    p.d_row_start[r] = static_cast<index_t>(low);
  }
}

struct pair_count_params {
  const index_t* d_a_tile_col;
  const index_t* d_b_row_start;
  std::int64_t* d_counts;  // (a_tiles + 1)
  std::int64_t a_tiles;
};

__global__ void __launch_bounds__(setup_threads) pair_count_kernel(pair_count_params p) {
  for (std::int64_t t = first_thread(); t <= p.a_tiles; t += thread_stride()) {
    if (t == p.a_tiles) {
      p.d_counts[t] = 0;
    } else {
      const index_t k = p.d_a_tile_col[t];
      p.d_counts[t] = p.d_b_row_start[k + 1] - p.d_b_row_start[k];
    }
  }
}

struct expand_params {
  const index_t* d_a_tile_row;
  const index_t* d_a_tile_col;
  const std::uint64_t* d_a_bitmap;
  const index_t* d_b_tile_col;
  const std::uint64_t* d_b_bitmap;
  const index_t* d_b_row_start;
  const std::int64_t* d_pair_offset;
  std::uint64_t* d_keys;         // C tile number, or `culled` for an empty product
  std::uint64_t* d_pairs;        // a · 2^32 + b
  unsigned long long* d_culled;  // culled pairs
  std::int64_t a_first;          // this batch's A tiles: [a_first, a_last), whole tile rows
  std::int64_t a_last;
  std::int64_t pair_base;    // pair_offset[a_first]: the batch's pairs are numbered from 0
  std::int64_t c_row_first;  // the batch's first tile row: keys count from it, so they sort in
                             // fewer bits
  std::int64_t c_tile_cols;
  std::uint64_t culled;
};

// A warp per A tile; its lanes walk the B tiles of the matching tile row.
__global__ void __launch_bounds__(setup_threads) expand_kernel(expand_params p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = thread_stride() / 32;
  unsigned long long culled = 0;
  for (std::int64_t a = p.a_first + first_thread() / 32; a < p.a_last; a += warps) {
    const index_t k = p.d_a_tile_col[a];
    const unsigned a_columns = occupied_columns(p.d_a_bitmap[a]);
    const std::uint64_t c_row_base = static_cast<std::uint64_t>(p.d_a_tile_row[a] - p.c_row_first) *
                                     static_cast<std::uint64_t>(p.c_tile_cols);
    const index_t first = p.d_b_row_start[k];
    const index_t last = p.d_b_row_start[k + 1];
    const std::int64_t out = p.d_pair_offset[a] - p.pair_base - first;
    for (index_t b = first + lane; b < last; b += 32) {
      const bool meets = (a_columns & occupied_rows(p.d_b_bitmap[b])) != 0;
      p.d_keys[out + b] =
          meets ? c_row_base + static_cast<std::uint64_t>(p.d_b_tile_col[b]) : p.culled;
      p.d_pairs[out + b] = (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b);
      culled += meets ? 0 : 1;
    }
  }
  for (int step = 16; step > 0; step /= 2)
    culled += __shfl_down_sync(0xffffffffu, culled, step);
  if (lane == 0 && culled > 0) atomicAdd(p.d_culled, culled);
}

// ---- counting kernel: C's bitmaps -------------------------------------------------------------

struct count_params {
  const std::uint64_t* d_c_keys;        // (cap): C tile numbers, then garbage
  const std::int64_t* d_c_pair_offset;  // (cap + 1)
  const std::uint64_t* d_pairs;         // sorted by C tile
  const std::uint64_t* d_a_bitmap;
  const std::uint64_t* d_b_bitmap;
  index_t* d_c_tile_row;               // (cap)
  index_t* d_c_tile_col;               // (cap)
  std::uint64_t* d_c_bitmap;           // (cap)
  std::int64_t* d_c_count;             // (cap + 1): entries per C tile, 0 past the last
  const std::int64_t* d_runs;          // runs of the sorted keys (C tiles + a culled run)
  const unsigned long long* d_culled;  // culled pairs (they form the last run)
  std::int64_t cap;
  std::int64_t c_row_first;  // the batch's first tile row (keys count from it)
  std::int64_t c_tile_cols;
};

// C's tile count from the run-length encoding: every run but the culled pairs' one.
__device__ std::int64_t tiles_of_c(const std::int64_t* d_runs, const unsigned long long* d_culled) {
  return *d_runs - (*d_culled > 0 ? 1 : 0);
}

__global__ void __launch_bounds__(setup_threads)
    close_runs_kernel(std::int64_t* d_run_lengths, const std::int64_t* d_runs,
                      const unsigned long long* d_culled, std::int64_t cap) {
  const std::int64_t c_tiles = tiles_of_c(d_runs, d_culled);
  for (std::int64_t i = c_tiles + first_thread(); i <= cap; i += thread_stride())
    d_run_lengths[i] = 0;
}

__global__ void __launch_bounds__(setup_threads) count_kernel(count_params p) {
  const int lane = static_cast<int>(threadIdx.x % count_lanes);
  const std::int64_t groups = thread_stride() / count_lanes;
  const std::int64_t c_tiles = tiles_of_c(p.d_runs, p.d_culled);
  // Every group runs the same number of iterations, so the shuffles below see all 8 lanes.
  const std::int64_t rounds = (p.cap + 1 + groups - 1) / groups;
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::int64_t c = first_thread() / count_lanes + round * groups;
    std::uint64_t bits = 0;
    if (c < c_tiles) {
      for (std::int64_t q = p.d_c_pair_offset[c] + lane; q < p.d_c_pair_offset[c + 1];
           q += count_lanes) {
        const std::uint64_t pair = p.d_pairs[q];
        bits |= boolean_product(p.d_a_bitmap[pair >> 32], p.d_b_bitmap[pair & 0xffffffffu]);
      }
    }
    for (int step = count_lanes / 2; step > 0; step /= 2)
      bits |= __shfl_xor_sync(0xffffffffu, bits, step, count_lanes);
    if (lane == 0 && c < c_tiles) {
      const std::uint64_t key = p.d_c_keys[c];
      p.d_c_tile_row[c] = static_cast<index_t>(
          p.c_row_first +
          static_cast<std::int64_t>(key / static_cast<std::uint64_t>(p.c_tile_cols)));
      p.d_c_tile_col[c] = static_cast<index_t>(key % static_cast<std::uint64_t>(p.c_tile_cols));
      p.d_c_bitmap[c] = bits;
      p.d_c_count[c] = __popcll(bits);
    } else if (lane == 0 && c <= p.cap) {
      p.d_c_count[c] = 0;
    }
  }
}

// The first pair of each tile row of A (batches are cut between tile rows).
__global__ void __launch_bounds__(setup_threads)
    row_pair_offset_kernel(const index_t* d_row_start, const std::int64_t* d_pair_offset,
                           std::int64_t* d_row_pair_offset, std::int64_t tile_rows) {
  for (std::int64_t r = first_thread(); r <= tile_rows; r += thread_stride())
    d_row_pair_offset[r] = d_pair_offset[d_row_start[r]];
}

// A batch's tile offsets moved past the entries of the batches before it.
__global__ void __launch_bounds__(setup_threads)
    shift_offsets_kernel(const index_t* d_from, index_t* d_to, std::int64_t count, index_t base) {
  for (std::int64_t i = first_thread(); i < count; i += thread_stride())
    d_to[i] = d_from[i] + base;
}

__global__ void __launch_bounds__(setup_threads)
    narrow_offsets_kernel(const std::int64_t* d_wide, index_t* d_narrow, std::int64_t count) {
  for (std::int64_t i = first_thread(); i < count; i += thread_stride())
    d_narrow[i] = static_cast<index_t>(d_wide[i]);
}

// ---- multiplication kernel --------------------------------------------------------------------

template <class T>
struct multiply_params {
  const std::int64_t* d_c_pair_offset;
  const std::uint64_t* d_pairs;
  const std::uint64_t* d_a_bitmap;
  const index_t* d_a_offset;
  const T* d_a_values;
  const std::uint64_t* d_b_bitmap;
  const index_t* d_b_offset;
  const T* d_b_values;
  const std::uint64_t* d_c_bitmap;
  const index_t* d_c_offset;
  T* d_c_values;
  T alpha;
  std::int64_t c_tiles;
  // fp32 3xTF32 only: nonzero when some value of A or B lies outside the split's exact range.
  const int* d_outside_split_range;
};

// Writes this lane's two entries of a C tile, C(g, 2t) and C(g, 2t + 1), where the bitmap has them.
template <class T, class Accumulator>
__device__ __forceinline__ void store_tile(const Accumulator& acc, std::uint64_t bits, T* c_values,
                                           T alpha, int g, int t) {
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const int bit = tile_bit(g, 2 * t + u);
    if ((bits >> bit) & 1u)
      c_values[__popcll(bits & ((std::uint64_t{1} << bit) - 1))] =
          alpha * static_cast<T>(acc.sum(u));
  }
}

// A warp per C tile: the lanes load 32 pairs' bitmaps and offsets at once, then every lane
// takes each pair's operands by shuffle and gathers its fragment entries.
template <class T, tile_arithmetic Arithmetic, bool Checked>
__device__ __forceinline__ void multiply_tiles(const multiply_params<T>& p) {
  using accumulator = tile_accumulator<T, Arithmetic>;
  constexpr int step = accumulator::pairs_per_step;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const std::int64_t warps = thread_stride() / 32;
  for (std::int64_t c = first_thread() / 32; c < p.c_tiles; c += warps) {
    accumulator acc;
    const std::int64_t first = p.d_c_pair_offset[c];
    const std::int64_t last = p.d_c_pair_offset[c + 1];
    for (std::int64_t base = first; base < last; base += 32) {
      const int count = static_cast<int>((last - base < 32 ? last - base : 32));
      pair_operands mine{0, 0, 0, 0};
      if (lane < count) {
        const std::uint64_t pair = p.d_pairs[base + lane];
        const auto a = static_cast<std::int64_t>(pair >> 32);
        const auto b = static_cast<std::int64_t>(pair & 0xffffffffu);
        mine = {p.d_a_bitmap[a], p.d_b_bitmap[b], p.d_a_offset[a], p.d_b_offset[b]};
      }
#pragma unroll 2
      for (int q = 0; q < count; q += step) {
        pair_operands ops[step];
#pragma unroll
        for (int h = 0; h < step; ++h) {
          // Past `count` the source lane holds empty tiles (zero bitmaps): zeros are added.
          const int from = (q + h) & 31;
          ops[h].a_bits = __shfl_sync(0xffffffffu, mine.a_bits, from);
          ops[h].b_bits = __shfl_sync(0xffffffffu, mine.b_bits, from);
          ops[h].a_offset = __shfl_sync(0xffffffffu, mine.a_offset, from);
          ops[h].b_offset = __shfl_sync(0xffffffffu, mine.b_offset, from);
          if (q + h >= count) ops[h] = {0, 0, 0, 0};
        }
        acc.template add<Checked>(ops, p.d_a_values, p.d_b_values, g, t);
      }
    }
    store_tile(acc, p.d_c_bitmap[c], p.d_c_values + p.d_c_offset[c], p.alpha, g, t);
  }
}

// fp32 on the tensor cores tests each pair's entries against 3xTF32's exact range only when a
// value outside it exists (split_range_kernel's flag, one branch per warp for the whole
// kernel): testing every pair of every product made the multiply 15–33 % slower (cage11,
// stencil27 100^3) for a case real matrices rarely hold (bayer03).
template <class T, tile_arithmetic Arithmetic>
__global__ void __launch_bounds__(multiply_warps * 32) multiply_kernel(multiply_params<T> p) {
  if constexpr (std::is_same_v<T, float> && Arithmetic == tile_arithmetic::native) {
    if (*p.d_outside_split_range)
      multiply_tiles<T, Arithmetic, true>(p);
    else
      multiply_tiles<T, Arithmetic, false>(p);
  } else {
    multiply_tiles<T, Arithmetic, false>(p);
  }
}

// Sets *outside when any of the `count` values lies outside 3xTF32's exact range.
__global__ void __launch_bounds__(setup_threads)
    split_range_kernel(const float* __restrict__ values, std::int64_t count, int* outside) {
  bool found = false;
  for (std::int64_t i = first_thread(); i < count; i += thread_stride())
    found |= !tf32_split_exact(__ldg(values + i));
  if (__any_sync(0xffffffffu, found) && threadIdx.x % 32 == 0) *outside = 1;
}

template <class T, tile_arithmetic Arithmetic>
__global__ void probe_kernel(const std::uint64_t* d_bits, const T* d_a, const T* d_b, T* d_c) {
  const int lane = static_cast<int>(threadIdx.x);
  const int g = lane / 4, t = lane % 4;
  tile_accumulator<T, Arithmetic> acc;
  pair_operands ops[2] = {{d_bits[0], d_bits[1], 0, 0}, {0, 0, 0, 0}};
  acc.add(ops, d_a, d_b, g, t);
  store_tile(acc, d_bits[2], d_c, T(1), g, t);
}

// ---- host side ---------------------------------------------------------------------------------

template <class T>
class tiled_product {
 public:
  tiled_product(T alpha, const tiled<T, gpu>& a, const tiled<T, gpu>& b, context& ctx,
                tile_arithmetic arithmetic, tiled_spgemm_report* report, bool time_phases)
      : alpha_(alpha),
        a_(a),
        b_(b),
        ctx_(ctx),
        stream_(detail::stream_of(ctx)),
        arithmetic_(arithmetic),
        report_(report),
        time_phases_(time_phases) {}

  tiled<T, gpu> run() {
    if (a_.tiles() == 0 || b_.tiles() == 0) return empty_result();
    start_phase();

    // Where each of B's tile rows starts, then pairs per A tile and their offsets.
    b_row_start_ = device_buffer<index_t>(static_cast<std::size_t>(b_.tile_rows()) + 1, ctx_);
    tile_row_start_kernel<<<detail::grid_blocks(b_.tile_rows() + 1, setup_threads, ctx_),
                            setup_threads, 0, stream_>>>(
        {b_.tile_row().data(), b_row_start_.data(), b_.tiles(), b_.tile_rows()});
    SPADE_CHECK_LAUNCH("finding B's tile rows (tiled_spgemm)");
    const std::int64_t a_tiles = a_.tiles();
    device_buffer<std::int64_t> pair_counts(static_cast<std::size_t>(a_tiles) + 1, ctx_);
    pair_count_kernel<<<detail::grid_blocks(a_tiles + 1, setup_threads, ctx_), setup_threads, 0,
                        stream_>>>(
        {a_.tile_col().data(), b_row_start_.data(), pair_counts.data(), a_tiles});
    SPADE_CHECK_LAUNCH("counting tile pairs (tiled_spgemm)");
    pair_offset_ = device_buffer<std::int64_t>(static_cast<std::size_t>(a_tiles) + 1, ctx_);
    detail::cub_run(ctx_, "scanning tile pairs per A tile (cub::DeviceScan)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceScan::ExclusiveSum(d_temp, bytes, pair_counts.data(),
                                                           pair_offset_.data(), a_tiles + 1,
                                                           stream_);
                    });
    std::int64_t pairs = 0;
    SPADE_CUDA_TRY(cudaMemcpyAsync(&pairs, pair_offset_.data() + a_tiles, sizeof(pairs),
                                   cudaMemcpyDeviceToHost, stream_),
                   "reading the tile pair count (tiled_spgemm)");
    SPADE_CUDA_TRY(cudaStreamSynchronize(stream_), "reading the tile pair count (tiled_spgemm)");
    if (report_) report_->tile_pairs = pairs;
    if (pairs == 0) return empty_result();
    pair_counts = device_buffer<std::int64_t>();

    // One batch holds every pair unless there are more than tuning().tiled_max_batch_pairs: then
    // batches of whole tile rows of A (so of C), each sorted and multiplied on its own, and C
    // assembled from their parts. A batch that runs out of memory is split in two and retried.
    const batch whole{0, c_tile_rows(), 0, a_tiles, 0, pairs};
    std::vector<c_part> parts;
    if (pairs <= std::max<std::int64_t>(1, tuning().tiled_max_batch_pairs)) {
      run_batch(whole, parts);
    } else {
      find_tile_rows();
      for (const batch& b : split(whole, tuning().tiled_max_batch_pairs))
        run_batch(b, parts);
    }
    b_row_start_ = device_buffer<index_t>();
    pair_offset_ = device_buffer<std::int64_t>();
    return assemble(std::move(parts));
  }

 private:
  // A's tiles [a_first, a_last) of tile rows [row_first, row_last), pairs [pair_first,
  // pair_last) of the task list.
  struct batch {
    std::int64_t row_first, row_last, a_first, a_last, pair_first, pair_last;
    std::int64_t pairs() const { return pair_last - pair_first; }
  };
  // The tiles of C one batch produced (its tile rows), offsets counted from its own first entry.
  struct c_part {
    std::int64_t tiles = 0, nnz = 0, culled_pairs = 0;
    device_buffer<index_t> tile_row, tile_col, offset;
    device_buffer<std::uint64_t> bitmap;
    device_buffer<T> values;
  };

  std::int64_t c_tile_rows() const { return a_.tile_rows(); }

  // Host copies of A's first tile and first pair per tile row (once, only when batching).
  void find_tile_rows() {
    if (!row_start_.empty()) return;
    const std::int64_t rows = c_tile_rows();
    device_buffer<index_t> row_start(static_cast<std::size_t>(rows) + 1, ctx_);
    tile_row_start_kernel<<<detail::grid_blocks(rows + 1, setup_threads, ctx_), setup_threads, 0,
                            stream_>>>({a_.tile_row().data(), row_start.data(), a_.tiles(), rows});
    SPADE_CHECK_LAUNCH("finding A's tile rows (tiled_spgemm batches)");
    device_buffer<std::int64_t> row_pair_offset(static_cast<std::size_t>(rows) + 1, ctx_);
    row_pair_offset_kernel<<<detail::grid_blocks(rows + 1, setup_threads, ctx_), setup_threads, 0,
                             stream_>>>(row_start.data(), pair_offset_.data(),
                                        row_pair_offset.data(), rows);
    SPADE_CHECK_LAUNCH("finding the first pair of A's tile rows (tiled_spgemm batches)");
    row_start_ = row_start.to_host();
    row_pair_offset_ = row_pair_offset.to_host();
  }

  // `b` cut between tile rows into batches of at most `max_pairs` pairs (a single tile row may
  // hold more: it is one batch).
  std::vector<batch> split(const batch& b, std::int64_t max_pairs) const {
    max_pairs = std::max<std::int64_t>(1, max_pairs);
    std::vector<batch> out;
    std::int64_t first = b.row_first;
    while (first < b.row_last) {
      const auto begin = static_cast<std::size_t>(first);
      std::int64_t last = first + 1;
      while (last < b.row_last &&
             row_pair_offset_[static_cast<std::size_t>(last) + 1] - row_pair_offset_[begin] <=
                 max_pairs)
        ++last;
      const auto end = static_cast<std::size_t>(last);
      if (row_pair_offset_[end] > row_pair_offset_[begin])
        out.push_back({first, last, row_start_[begin], row_start_[end], row_pair_offset_[begin],
                       row_pair_offset_[end]});
      first = last;
    }
    return out;
  }

  void run_batch(const batch& b, std::vector<c_part>& parts) {
    try {
      c_part part = multiply_batch(b);
      if (report_) {
        ++report_->batches;
        report_->culled_pairs += part.culled_pairs;
        report_->tiles += part.tiles;
        report_->nnz += part.nnz;
      }
      if (part.tiles > 0) parts.push_back(std::move(part));
    } catch (const out_of_memory&) {
      if (b.row_last - b.row_first < 2) throw;
      // Freed by the unwinding; the halves' buffers are half the size.
      find_tile_rows();
      for (const batch& half : split(b, (b.pairs() + 1) / 2))
        run_batch(half, parts);
    }
  }

  c_part multiply_batch(const batch& range) {
    const std::int64_t pairs = range.pairs();
    const std::int64_t c_tile_cols = b_.tile_cols();
    // The task list: C tile number per pair, counted from the batch's first tile row (culled
    // pairs get a number past every tile, so they sort last and form one run), sorted stably,
    // so each C tile's pairs stay in order of k.
    const std::uint64_t culled_key =
        static_cast<std::uint64_t>((range.row_last - range.row_first) * c_tile_cols);
    const int key_bits = std::max(1, static_cast<int>(std::bit_width(culled_key)));
    device_buffer<std::uint64_t> keys(static_cast<std::size_t>(pairs), ctx_);
    device_buffer<std::uint64_t> task(static_cast<std::size_t>(pairs), ctx_);
    device_buffer<unsigned long long> culled(1, ctx_);
    culled.fill_zero();
    const expand_params ep{
        a_.tile_row().data(), a_.tile_col().data(), a_.bitmap().data(),  b_.tile_col().data(),
        b_.bitmap().data(),   b_row_start_.data(),  pair_offset_.data(), keys.data(),
        task.data(),          culled.data(),        range.a_first,       range.a_last,
        range.pair_first,     range.row_first,      c_tile_cols,         culled_key};
    expand_kernel<<<detail::grid_blocks((range.a_last - range.a_first) * 32, setup_threads, ctx_),
                    setup_threads, 0, stream_>>>(ep);
    SPADE_CHECK_LAUNCH("listing tile pairs (tiled_spgemm)");
    end_phase("task list");

    device_buffer<std::uint64_t> sorted_keys(static_cast<std::size_t>(pairs), ctx_);
    device_buffer<std::uint64_t> sorted_task(static_cast<std::size_t>(pairs), ctx_);
    detail::cub_run(ctx_, "sorting tile pairs by C tile (cub::DeviceRadixSort)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceRadixSort::SortPairs(
                          d_temp, bytes, keys.data(), sorted_keys.data(), task.data(),
                          sorted_task.data(), pairs, 0, key_bits, stream_);
                    });
    task = device_buffer<std::uint64_t>();
    // keys is reused for the C tile numbers (the runs).
    device_buffer<std::int64_t> run_lengths(static_cast<std::size_t>(pairs) + 1, ctx_);
    device_buffer<std::int64_t> run_count(1, ctx_);
    detail::cub_run(ctx_, "finding C's tiles (cub::DeviceRunLengthEncode)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceRunLengthEncode::Encode(d_temp, bytes, sorted_keys.data(),
                                                                keys.data(), run_lengths.data(),
                                                                run_count.data(), pairs, stream_);
                    });
    // C has at most `pairs` tiles: its per-tile arrays are sized by that bound, so the counting
    // kernel runs before the tile count reaches the host and one synchronisation returns the
    // tile count, the culled pairs and nnz(C) together.
    const std::int64_t cap = pairs;
    close_runs_kernel<<<detail::grid_blocks(cap + 1, setup_threads, ctx_), setup_threads, 0,
                        stream_>>>(run_lengths.data(), run_count.data(), culled.data(), cap);
    SPADE_CHECK_LAUNCH("closing the runs past C's last tile (tiled_spgemm)");
    device_buffer<std::int64_t> c_pair_offset(static_cast<std::size_t>(cap) + 1, ctx_);
    detail::cub_run(ctx_, "scanning pairs per C tile (cub::DeviceScan)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceScan::ExclusiveSum(d_temp, bytes, run_lengths.data(),
                                                           c_pair_offset.data(), cap + 1, stream_);
                    });
    run_lengths = device_buffer<std::int64_t>();
    sorted_keys = device_buffer<std::uint64_t>();
    end_phase("sort");

    // Counting kernel: C's bitmaps from boolean tile products; entries per tile → offsets.
    device_buffer<index_t> tile_row_bound(static_cast<std::size_t>(cap), ctx_);
    device_buffer<index_t> tile_col_bound(static_cast<std::size_t>(cap), ctx_);
    device_buffer<std::uint64_t> bitmap_bound(static_cast<std::size_t>(cap), ctx_);
    device_buffer<std::int64_t> c_count(static_cast<std::size_t>(cap) + 1, ctx_);
    const count_params cp{keys.data(),           c_pair_offset.data(), sorted_task.data(),
                          a_.bitmap().data(),    b_.bitmap().data(),   tile_row_bound.data(),
                          tile_col_bound.data(), bitmap_bound.data(),  c_count.data(),
                          run_count.data(),      culled.data(),        cap,
                          range.row_first,       c_tile_cols};
    count_kernel<<<detail::grid_blocks((cap + 1) * count_lanes, setup_threads, ctx_), setup_threads,
                   0, stream_>>>(cp);
    SPADE_CHECK_LAUNCH("counting C's entries from bitmap products (tiled_spgemm)");
    keys = device_buffer<std::uint64_t>();
    device_buffer<std::int64_t> c_wide_offset(static_cast<std::size_t>(cap) + 1, ctx_);
    detail::cub_run(ctx_, "scanning C's tile entries into offsets (cub::DeviceScan)",
                    [&](void* d_temp, std::size_t& bytes) {
                      return cub::DeviceScan::ExclusiveSum(d_temp, bytes, c_count.data(),
                                                           c_wide_offset.data(), cap + 1, stream_);
                    });
    std::int64_t counts[3] = {0, 0, 0};  // runs, culled pairs, nnz(C)
    SPADE_CUDA_TRY(cudaMemcpyAsync(&counts[0], run_count.data(), sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream_),
                   "reading C's tile count (tiled_spgemm)");
    SPADE_CUDA_TRY(cudaMemcpyAsync(&counts[1], culled.data(), sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream_),
                   "reading the culled pair count (tiled_spgemm)");
    SPADE_CUDA_TRY(cudaMemcpyAsync(&counts[2], c_wide_offset.data() + cap, sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream_),
                   "reading nnz(C) (tiled_spgemm)");
    SPADE_CUDA_TRY(cudaStreamSynchronize(stream_), "reading C's size (tiled_spgemm)");
    const std::int64_t culled_pairs = counts[1];
    c_part part;
    part.tiles = counts[0] - (culled_pairs > 0 ? 1 : 0);
    part.nnz = counts[2];
    part.culled_pairs = culled_pairs;
    if (part.tiles == 0) return part;
    if (part.nnz > INT_MAX)
      throw invalid_matrix("tiled_spgemm: C would hold " + std::to_string(part.nnz) +
                           " entries, more than the 32-bit index type allows");
    c_count = device_buffer<std::int64_t>();
    part.offset = device_buffer<index_t>(static_cast<std::size_t>(part.tiles) + 1, ctx_);
    narrow_offsets_kernel<<<detail::grid_blocks(part.tiles + 1, setup_threads, ctx_), setup_threads,
                            0, stream_>>>(c_wide_offset.data(), part.offset.data(), part.tiles + 1);
    SPADE_CHECK_LAUNCH("narrowing C's tile offsets (tiled_spgemm)");
    c_wide_offset = device_buffer<std::int64_t>();
    const auto tiles = static_cast<std::size_t>(part.tiles);
    part.tile_row = device_buffer<index_t>(tiles, ctx_);
    part.tile_col = device_buffer<index_t>(tiles, ctx_);
    part.bitmap = device_buffer<std::uint64_t>(tiles, ctx_);
    ctx_.copy_on_device(part.tile_row.data(), tile_row_bound.data(), tiles * sizeof(index_t));
    ctx_.copy_on_device(part.tile_col.data(), tile_col_bound.data(), tiles * sizeof(index_t));
    ctx_.copy_on_device(part.bitmap.data(), bitmap_bound.data(), tiles * sizeof(std::uint64_t));
    end_phase("count");

    part.values = device_buffer<T>(static_cast<std::size_t>(part.nnz), ctx_);
    multiply_params<T> mp{c_pair_offset.data(),
                          sorted_task.data(),
                          a_.bitmap().data(),
                          a_.tile_offset().data(),
                          a_.values().data(),
                          b_.bitmap().data(),
                          b_.tile_offset().data(),
                          b_.values().data(),
                          part.bitmap.data(),
                          part.offset.data(),
                          part.values.data(),
                          alpha_,
                          part.tiles,
                          nullptr};
    if constexpr (std::is_same_v<T, float>) {
      if (arithmetic_ == tile_arithmetic::native) mp.d_outside_split_range = outside_split_range();
    }
    const auto blocks = static_cast<unsigned int>(std::min<std::int64_t>(
        (part.tiles + multiply_warps - 1) / multiply_warps, std::int64_t{1} << 30));
    if (arithmetic_ == tile_arithmetic::fp16)
      multiply_kernel<T, tile_arithmetic::fp16><<<blocks, multiply_warps * 32, 0, stream_>>>(mp);
    else
      multiply_kernel<T, tile_arithmetic::native><<<blocks, multiply_warps * 32, 0, stream_>>>(mp);
    SPADE_CHECK_LAUNCH("multiplying tiles on tensor cores (tiled_spgemm)");
    end_phase("multiply");
    return part;
  }

  // fp32 3xTF32: the flag the multiplication kernel reads (tested once for all batches).
  const int* outside_split_range() {
    if (outside_split_range_.size() == 1) return outside_split_range_.data();
    outside_split_range_ = device_buffer<int>(1, ctx_);
    outside_split_range_.fill_zero();
    for (const tiled<T, gpu>* operand : {&a_, &b_}) {
      const auto count = static_cast<std::int64_t>(operand->values().size());
      if (count == 0) continue;
      if constexpr (std::is_same_v<T, float>) {
        split_range_kernel<<<detail::grid_blocks(count, setup_threads, ctx_), setup_threads, 0,
                             stream_>>>(operand->values().data(), count,
                                        outside_split_range_.data());
        SPADE_CHECK_LAUNCH("testing tile values against 3xTF32's range (tiled_spgemm)");
      }
    }
    return outside_split_range_.data();
  }

  // C from the batches' parts, in tile-row order (one part: C itself, no copy).
  tiled<T, gpu> assemble(std::vector<c_part> parts) {
    if (parts.empty()) return empty_result();
    if (parts.size() == 1) {
      c_part& c = parts.front();
      return tiled<T, gpu>(unchecked, a_.rows(), b_.cols(), std::move(c.tile_row),
                           std::move(c.tile_col), std::move(c.offset), std::move(c.bitmap),
                           std::move(c.values));
    }
    std::int64_t tiles = 0, nnz = 0;
    for (const c_part& part : parts) {
      tiles += part.tiles;
      nnz += part.nnz;
    }
    if (nnz > INT_MAX)
      throw invalid_matrix("tiled_spgemm: C would hold " + std::to_string(nnz) +
                           " entries, more than the 32-bit index type allows");
    device_buffer<index_t> tile_row(static_cast<std::size_t>(tiles), ctx_);
    device_buffer<index_t> tile_col(static_cast<std::size_t>(tiles), ctx_);
    device_buffer<index_t> offset(static_cast<std::size_t>(tiles) + 1, ctx_);
    device_buffer<std::uint64_t> bitmap(static_cast<std::size_t>(tiles), ctx_);
    device_buffer<T> values(static_cast<std::size_t>(nnz), ctx_);
    std::int64_t tile = 0, entry = 0;
    for (c_part& part : parts) {
      const auto count = static_cast<std::size_t>(part.tiles);
      const auto at = static_cast<std::size_t>(tile);
      ctx_.copy_on_device(tile_row.data() + at, part.tile_row.data(), count * sizeof(index_t));
      ctx_.copy_on_device(tile_col.data() + at, part.tile_col.data(), count * sizeof(index_t));
      ctx_.copy_on_device(bitmap.data() + at, part.bitmap.data(), count * sizeof(std::uint64_t));
      ctx_.copy_on_device(values.data() + entry, part.values.data(),
                          static_cast<std::size_t>(part.nnz) * sizeof(T));
      // Every part's offsets but its closing one; the last part's closing one is nnz(C).
      shift_offsets_kernel<<<detail::grid_blocks(part.tiles + 1, setup_threads, ctx_),
                             setup_threads, 0, stream_>>>(
          part.offset.data(), offset.data() + at, part.tiles + 1, static_cast<index_t>(entry));
      SPADE_CHECK_LAUNCH("joining C's batches (tiled_spgemm)");
      tile += part.tiles;
      entry += part.nnz;
      part = c_part{};  // back to the pool as soon as it is copied
    }
    end_phase("join batches");
    return tiled<T, gpu>(unchecked, a_.rows(), b_.cols(), std::move(tile_row), std::move(tile_col),
                         std::move(offset), std::move(bitmap), std::move(values));
  }

  tiled<T, gpu> empty_result() {
    device_buffer<index_t> offset(1, ctx_);
    offset.fill_zero();
    return tiled<T, gpu>(unchecked, a_.rows(), b_.cols(), {}, {}, std::move(offset), {}, {});
  }
  void start_phase() {
    if (!time_phases_ || !report_) return;
    SPADE_CUDA_TRY(cudaStreamSynchronize(stream_), "timing tiled_spgemm's phases");
    phase_start_ = std::chrono::steady_clock::now();
  }
  // Batches add their time to the phase of the same name.
  void end_phase(const char* name) {
    if (!time_phases_ || !report_) return;
    SPADE_CUDA_TRY(cudaStreamSynchronize(stream_), "timing tiled_spgemm's phases");
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - phase_start_).count();
    auto& phases = report_->phase_ms;
    const auto same = std::find_if(phases.begin(), phases.end(),
                                   [&](const auto& phase) { return phase.first == name; });
    if (same == phases.end())
      phases.emplace_back(name, ms);
    else
      same->second += ms;
    phase_start_ = now;
  }

  T alpha_;
  const tiled<T, gpu>& a_;
  const tiled<T, gpu>& b_;
  context& ctx_;
  cudaStream_t stream_;
  tile_arithmetic arithmetic_;
  tiled_spgemm_report* report_;
  bool time_phases_;
  std::chrono::steady_clock::time_point phase_start_{};
  device_buffer<index_t> b_row_start_;         // (B's tile rows + 1)
  device_buffer<std::int64_t> pair_offset_;    // (A's tiles + 1): first pair of each A tile
  device_buffer<int> outside_split_range_;     // fp32 native only
  std::vector<index_t> row_start_;             // host, when batching: A's first tile per tile row
  std::vector<std::int64_t> row_pair_offset_;  // host, when batching: first pair per tile row
};

// ---- tile census (planner) ---------------------------------------------------------------------

struct census_params {
  const index_t* d_row_ptr;
  const index_t* d_col_idx;
  std::int64_t rows;
  index_t* d_tiles_per_tile_row;     // (tile rows) or null: this operand's tiles per tile row
  const index_t* d_other_row_tiles;  // B's tiles per tile row, or null (census of B itself)
  const index_t* d_other_row_ptr;    // B's row pointers, or null
  unsigned long long* d_totals;      // tiles, tile pairs, products
};

// True when an entry of rows [first_row, row) of the csr lies in columns [lo, lo + 8).
__device__ bool earlier_row_has(const census_params& p, std::int64_t first_row, std::int64_t row,
                                index_t lo) {
  for (std::int64_t r = first_row; r < row; ++r) {
    index_t low = p.d_row_ptr[r], high = p.d_row_ptr[r + 1];
    while (low < high) {
      const index_t mid = low + (high - low) / 2;
      if (p.d_col_idx[mid] < lo)
        low = mid + 1;
      else
        high = mid;
    }
    if (low < p.d_row_ptr[r + 1] && p.d_col_idx[low] < lo + 8) return true;
  }
  return false;
}

__global__ void __launch_bounds__(setup_threads) census_kernel(census_params p) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = thread_stride() / 32;
  unsigned long long tiles = 0, tile_pairs = 0, products = 0;
  for (std::int64_t r = first_thread() / 32; r < p.rows; r += warps) {
    unsigned long long row_tiles = 0;
    const index_t start = p.d_row_ptr[r];
    for (index_t e = start + lane; e < p.d_row_ptr[r + 1]; e += 32) {
      const index_t c = p.d_col_idx[e];
      if (p.d_other_row_ptr) products += p.d_other_row_ptr[c + 1] - p.d_other_row_ptr[c];
      const bool first_in_row = e == start || (p.d_col_idx[e - 1] >> 3) != (c >> 3);
      if (first_in_row && !earlier_row_has(p, r & ~std::int64_t{7}, r, c & ~7)) {
        ++row_tiles;
        if (p.d_other_row_tiles) tile_pairs += p.d_other_row_tiles[c >> 3];
      }
    }
    for (int step = 16; step > 0; step /= 2)
      row_tiles += __shfl_down_sync(0xffffffffu, row_tiles, step);
    if (lane == 0 && row_tiles > 0) {
      tiles += row_tiles;
      if (p.d_tiles_per_tile_row)
        atomicAdd(p.d_tiles_per_tile_row + (r >> 3), static_cast<index_t>(row_tiles));
    }
  }
  for (int step = 16; step > 0; step /= 2) {
    tile_pairs += __shfl_down_sync(0xffffffffu, tile_pairs, step);
    products += __shfl_down_sync(0xffffffffu, products, step);
  }
  if (lane == 0) {
    if (tiles) atomicAdd(p.d_totals, tiles);
    if (tile_pairs) atomicAdd(p.d_totals + 1, tile_pairs);
    if (products) atomicAdd(p.d_totals + 2, products);
  }
}

}  // namespace

std::string tiled_spgemm_report::describe() const {
  std::ostringstream out;
  out << tile_pairs << " tile pairs, " << culled_pairs << " culled by bitmaps, " << tiles
      << " C tiles, nnz(C) " << nnz;
  if (batches > 1) out << " in " << batches << " batches";
  for (const auto& [name, ms] : phase_ms)
    out << "; " << name << " " << ms << " ms";
  return out.str();
}

template <scalar T>
tiled<T, gpu> tiled_spgemm(T alpha, const tiled<T, gpu>& a, const tiled<T, gpu>& b,
                           tile_arithmetic arithmetic, tiled_spgemm_report* report,
                           bool time_phases) {
  detail::require_shapes(a.cols() == b.rows(), "tiled_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.bitmap(), a.tile_offset(), b.bitmap(), b.tile_offset());
  if (report) *report = tiled_spgemm_report{};
  tiled_product<T> run(alpha, a, b, ctx, arithmetic, report, time_phases);
  return run.run();
}

template <scalar T>
tile_census count_tiles(const csr<T, gpu>& a, const csr<T, gpu>& b) {
  detail::require_shapes(a.cols() == b.rows(), "tiled_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), b.row_ptr(), b.col_idx());
  const cudaStream_t stream = detail::stream_of(ctx);
  tile_census census;
  census.a_nnz = a.nnz();
  census.b_nnz = b.nnz();
  if (a.nnz() == 0 || b.nnz() == 0) return census;
  const std::int64_t b_tile_rows = (std::int64_t{b.rows()} + 7) / 8;
  device_buffer<index_t> b_row_tiles(static_cast<std::size_t>(b_tile_rows), ctx);
  b_row_tiles.fill_zero();
  device_buffer<unsigned long long> totals(6, ctx);  // B: tiles, -, -; A: tiles, pairs, products
  totals.fill_zero();
  const census_params bp{
      b.row_ptr().data(), b.col_idx().data(), b.rows(), b_row_tiles.data(), nullptr, nullptr,
      totals.data()};
  census_kernel<<<detail::grid_blocks(std::int64_t{b.rows()} * 32, setup_threads, ctx),
                  setup_threads, 0, stream>>>(bp);
  SPADE_CHECK_LAUNCH("counting B's tiles (tile census)");
  const census_params ap{a.row_ptr().data(), a.col_idx().data(), a.rows(),         nullptr,
                         b_row_tiles.data(), b.row_ptr().data(), totals.data() + 3};
  census_kernel<<<detail::grid_blocks(std::int64_t{a.rows()} * 32, setup_threads, ctx),
                  setup_threads, 0, stream>>>(ap);
  SPADE_CHECK_LAUNCH("counting A's tiles and tile pairs (tile census)");
  const std::vector<unsigned long long> host = totals.to_host();
  census.b_tiles = static_cast<std::int64_t>(host[0]);
  census.a_tiles = static_cast<std::int64_t>(host[3]);
  census.tile_pairs = static_cast<std::int64_t>(host[4]);
  census.products = static_cast<std::int64_t>(host[5]);
  return census;
}

template <scalar T>
std::int64_t count_own_tiles(const csr<T, gpu>& a) {
  if (a.nnz() == 0) return 0;
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx());
  const cudaStream_t stream = detail::stream_of(ctx);
  device_buffer<unsigned long long> totals(3, ctx);
  totals.fill_zero();
  // census_kernel's B pass without the per-tile-row counts: the tiles of the matrix it is given.
  const census_params params{
      a.row_ptr().data(), a.col_idx().data(), a.rows(), nullptr, nullptr, nullptr, totals.data()};
  census_kernel<<<detail::grid_blocks(std::int64_t{a.rows()} * 32, setup_threads, ctx),
                  setup_threads, 0, stream>>>(params);
  SPADE_CHECK_LAUNCH("counting the tiles of A (tiled_spmm's tile fill)");
  return static_cast<std::int64_t>(totals.to_host()[0]);
}

template <scalar T>
std::vector<T> tile_product_probe(const std::vector<T>& a, const std::vector<T>& b,
                                  tile_arithmetic arithmetic) {
  if (a.size() != 64 || b.size() != 64)
    throw dimension_mismatch("tile_product_probe: tiles are 8x8 (64 values each)");
  // Packed values in bit order, as a tiled stores them; C's bitmap is the boolean product.
  std::uint64_t bits[3] = {0, 0, 0};
  std::vector<T> a_packed, b_packed;
  for (int bit = 0; bit < 64; ++bit) {
    if (a[bit] != T(0)) {
      bits[0] |= std::uint64_t{1} << bit;
      a_packed.push_back(a[bit]);
    }
    if (b[bit] != T(0)) {
      bits[1] |= std::uint64_t{1} << bit;
      b_packed.push_back(b[bit]);
    }
  }
  for (int r = 0; r < 8; ++r)
    for (int m = 0; m < 8; ++m)
      if ((bits[0] >> tile_bit(r, m)) & 1u) bits[2] |= ((bits[1] >> (8 * m)) & 0xffu) << (8 * r);
  const int c_count = std::popcount(bits[2]);
  a_packed.push_back(T(0));  // never empty: device_buffer of zero elements has no pointer
  b_packed.push_back(T(0));
  context& ctx = default_context();
  device_buffer<std::uint64_t> d_bits(std::vector<std::uint64_t>(bits, bits + 3));
  device_buffer<T> d_a(a_packed), d_b(b_packed);
  device_buffer<T> d_c(static_cast<std::size_t>(c_count) + 1, ctx);
  const cudaStream_t stream = detail::stream_of(ctx);
  if (arithmetic == tile_arithmetic::fp16)
    probe_kernel<T, tile_arithmetic::fp16>
        <<<1, 32, 0, stream>>>(d_bits.data(), d_a.data(), d_b.data(), d_c.data());
  else
    probe_kernel<T, tile_arithmetic::native>
        <<<1, 32, 0, stream>>>(d_bits.data(), d_a.data(), d_b.data(), d_c.data());
  SPADE_CHECK_LAUNCH("multiplying one tile pair (tile_product_probe)");
  const std::vector<T> packed = d_c.to_host();
  std::vector<T> result(64, T(0));
  for (int bit = 0, k = 0; bit < 64; ++bit)
    if ((bits[2] >> bit) & 1u) result[static_cast<std::size_t>(bit)] = packed[k++];
  return result;
}

SPADE_KERNELS_TILED_INSTANTIATIONS(float)
SPADE_KERNELS_TILED_INSTANTIATIONS(double)

}  // namespace spade::device
