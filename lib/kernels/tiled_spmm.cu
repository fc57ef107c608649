// Sparse × dense on tensor cores from 8×8 bitmap tiles (issue 21). The tiles are condensed once
// into windows (cached on A): window w is tile row w, its occupied columns packed left to right
// 8 to a block, so every k of an instruction is a row of B some row of the window needs. A warp
// per (window, 32 columns of C) sums the window's blocks: fp64 on DMMA m8n8k4, fp32 as 3×TF32 (or
// plain TF32 when forced) on m16n8k8 computing Cᵀ = Bᵀ·Aᵀ, so that 16 columns of B fill the
// instruction's rows and the window's 8 rows its columns. Where those warps would leave the SMs
// short, two or four warps share each long window; where they fill the device, windows far longer
// than the mean (a power-law graph's hubs) are cut into segments summed by warps of their own.
// Where the windows do not fit in device memory, the same arithmetic runs tile by tile.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "kernels/tile_mma.cuh"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

constexpr int spmm_warps = 4;
// Columns of B and C per warp: fp64 four n8 fragments (8 accumulators per lane), fp32 two m16
// fragments (8 accumulators per lane).
constexpr int chunk_columns = 32;

// ---- where a block's entries and rows of B come from
// --------------------------------------------- A block is 8 rows of A (a window, or a tile row) by
// 8 slots; slot k multiplies row row_of_b(k) of B (outside [0, inner) for none: past the matrix's
// edge or a window's last column). Both sources give entry(row, k) (zero where none is stored) and
// stored(row, k).

// First tile whose tile row is >= r (tiles are sorted by tile row, then tile column).
__device__ std::int64_t first_tile_of(const index_t* tile_row, std::int64_t tiles, index_t r) {
  std::int64_t lo = 0, hi = tiles;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (__ldg(tile_row + mid) < r)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The tiles of A as they are: slot k of tile i is column 8·tile_col[i] + k.
template <class T>
struct tile_blocks {
  const index_t* tile_row;
  const index_t* tile_col;
  const index_t* tile_offset;
  const std::uint64_t* bitmap;
  const T* values;
  std::int64_t tiles;

  struct block {
    std::uint64_t bits;
    const T* values;
    index_t k0;
    __device__ index_t row_of_b(int k) const { return k0 + k; }
    __device__ T entry(int row, int k) const { return tile_entry(bits, tile_bit(row, k), values); }
    __device__ bool stored(int row, int k) const { return (bits >> tile_bit(row, k)) & 1u; }
  };
  __device__ std::int64_t first(index_t r) const { return first_tile_of(tile_row, tiles, r); }
  __device__ block at(std::int64_t i) const {
    return {__ldg(bitmap + i), values + __ldg(tile_offset + i), __ldg(tile_col + i) * 8};
  }
};

// The condensed windows (window_form below): slot k of block i is column block_col[8i + k].
template <class T>
struct window_blocks {
  const std::int64_t* window_block;  // tile rows + 1
  const index_t* block_col;          // 8 per block, -1 past the window's last column
  const std::uint64_t* block_bits;   // stored entries, bit tile_bit(row, k)
  const T* block_values;             // 64 per block, row-major, zero where none is stored

  struct block {
    const index_t* cols;
    const T* values;
    const std::uint64_t* bits;
    __device__ index_t row_of_b(int k) const { return __ldg(cols + k); }
    __device__ T entry(int row, int k) const { return __ldg(values + 8 * row + k); }
    __device__ bool stored(int row, int k) const { return (__ldg(bits) >> tile_bit(row, k)) & 1u; }
  };
  __device__ std::int64_t first(index_t r) const { return __ldg(window_block + r); }
  __device__ block at(std::int64_t i) const {
    return {block_col + 8 * i, block_values + 64 * i, block_bits + i};
  }
};

// A piece of a long window: blocks [begin, end) of the condensed form.
struct window_segment {
  std::int64_t begin;
  std::int64_t end;
};
// A long window and its segments first_segment .. first_segment + segments - 1.
struct long_window {
  index_t window;
  index_t first_segment;
  index_t segments;
};

// Where the long windows' segments go (tiled_spmm_segmented_kernel); none in the other kernels.
template <class T>
struct segment_params {
  const window_segment* segments = nullptr;
  std::int64_t segment_count = 0;
  // Windows of more blocks are summed in segments, so the window items skip them.
  std::int64_t long_threshold = 0;
  T* partials = nullptr;  // 256 sums per (segment, column chunk), a lane's 8 sums 32 apart
};

template <class T, class Blocks>
struct spmm_params {
  Blocks blocks;
  index_t rows;   // of A and C
  index_t inner;  // columns of A, rows of B
  index_t n;      // columns of B and C
  index_t tile_rows;
  index_t chunks;
  const T* b;
  std::int64_t b_row_step, b_col_step;  // B(k, j) = b[k·b_row_step + j·b_col_step]
  T* c;
  std::int64_t c_row_step, c_col_step;
  T alpha, beta;
  // Float B (C) row-major, its rows a multiple of 4 entries long and 16-byte aligned: four
  // neighbouring entries of a row are read (written) with one instruction.
  bool b_quads, c_quads;
  segment_params<T> seg;
};

// B(k, j), zero for a k or j outside B (a padded slot, a tile past the edge, a chunk past n).
template <class T, class Blocks>
__device__ __forceinline__ T b_at(const spmm_params<T, Blocks>& p, index_t k, index_t j) {
  return (static_cast<std::uint32_t>(k) < static_cast<std::uint32_t>(p.inner) && j < p.n)
             ? __ldg(p.b + k * p.b_row_step + j * p.b_col_step)
             : T(0);
}

// B(k, col .. col + 3) in float (col a multiple of 4), zero outside B: one 16-byte load where
// p.b_quads, else four. Each lane's columns of C are chosen (see accumulate_f32) so that a warp
// reads a row of B as 128 contiguous bytes in 8 such loads: with a load per value the gather issued
// 4 times the instructions for the same bytes, and instructions, not bytes, limit it where the
// windows' columns are full (tiled_spmm alone 8-12 % faster in the mean at N = 128 and 512 on the
// real set, up to 28 %; 2 % at N = 32, its worst matrix 9 % slower; H200). Double stays one value
// a load: two ways of reading pairs ran 1-6 % slower in the mean at N = 32 (up to 22 % on single
// matrices) and gained at most 6 % at N = 512.
template <class Blocks>
__device__ __forceinline__ void b_quad(const spmm_params<float, Blocks>& p, index_t k, index_t col,
                                       float (&x)[4]) {
  if (p.b_quads) {
    if (static_cast<std::uint32_t>(k) < static_cast<std::uint32_t>(p.inner) && col < p.n) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(p.b + k * p.b_row_step + col));
      x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
    } else {
      x[0] = x[1] = x[2] = x[3] = 0.f;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      x[i] = b_at(p, k, col + i);
  }
}

// The exact sum of one block's products into C(row, col) with FMAs over its stored entries, in
// slot order: the path of a block whose tensor-core form would be wrong (an Inf or NaN in B
// meeting a zero of the block, or a float outside 3×TF32's exact range). Rare, so kept out of
// line.
template <class T, class Blocks>
__device__ __noinline__ T block_dot(const spmm_params<T, Blocks>& p,
                                    const typename Blocks::block& blk, int local_row, index_t col) {
  T sum = T(0);
  for (int k = 0; k < 8; ++k)
    if (blk.stored(local_row, k))
      sum = fma(blk.entry(local_row, k), b_at(p, blk.row_of_b(k), col), sum);
  return sum;
}

template <class T, class Blocks>
__device__ __forceinline__ void store_c(const spmm_params<T, Blocks>& p, index_t row, index_t col,
                                        T acc) {
  if (row >= p.rows || col >= p.n) return;
  T* at = p.c + row * p.c_row_step + col * p.c_col_step;
  // beta = 0 never reads C, so a NaN left there does not survive (BLAS semantics).
  *at = p.beta == T(0) ? p.alpha * acc : fma(p.alpha, acc, p.beta * *at);
}

// C(row, col .. col + 3) = alpha·sums + beta·C in float (col a multiple of 4): one 16-byte store
// where p.c_quads, else four.
template <class Blocks>
__device__ __forceinline__ void store_c_quad(const spmm_params<float, Blocks>& p, index_t row,
                                             index_t col, const float (&sums)[4]) {
  if (!p.c_quads) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      store_c(p, row, col + i, sums[i]);
    return;
  }
  if (row >= p.rows || col >= p.n) return;
  float4* at = reinterpret_cast<float4*>(p.c + row * p.c_row_step + col);
  float4 v =
      make_float4(p.alpha * sums[0], p.alpha * sums[1], p.alpha * sums[2], p.alpha * sums[3]);
  if (p.beta != 0.f) {
    // beta = 0 never reads C, as store_c.
    const float4 old = *at;
    v = make_float4(fmaf(p.alpha, sums[0], p.beta * old.x), fmaf(p.alpha, sums[1], p.beta * old.y),
                    fmaf(p.alpha, sums[2], p.beta * old.z), fmaf(p.alpha, sums[3], p.beta * old.w));
  }
  *at = v;
}

__device__ __forceinline__ bool finite(double x) {
  return isfinite(x);
}

// What one lane reads of a block before its instructions: the block's entries and the rows of B
// they multiply.
struct f64_operands {
  double a[2];     // A(g, 4h + t)
  double b[2][4];  // B(row of slot 4h + t, n0 + 8j + g)
};

template <class Blocks>
__device__ __forceinline__ void load_f64(const spmm_params<double, Blocks>& p,
                                         const typename Blocks::block& blk, index_t n0, int g,
                                         int t, f64_operands& o) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    o.a[h] = blk.entry(g, 4 * h + t);
    const index_t k = blk.row_of_b(4 * h + t);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      o.b[h][j] = b_at(p, k, n0 + 8 * j + g);
  }
}

// fp64: rows 8r..8r+7 of C, columns n0..n0+31 as four m8n8k4 fragments; lane (g, t) holds
// C(8r + g, n0 + 8j + 2t + u) in acc[2j + u]. Adds blocks begin, begin + Step, ... below end.
// Unlike fp32 it does not read the next block ahead: the extra 20 registers cost fp64 more
// occupancy than the overlap gave (s1rmq4m1 and mhd3200a 9 % slower at N = 128, H200).
template <int Step, class Blocks>
__device__ void accumulate_f64(const spmm_params<double, Blocks>& p, index_t n0, std::int64_t begin,
                               std::int64_t end, double (&acc)[8]) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  for (std::int64_t i = begin; i < end; i += Step) {
    const typename Blocks::block blk = p.blocks.at(i);
    f64_operands now;
    load_f64(p, blk, n0, g, t, now);
    bool ok = true;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        ok &= finite(now.b[h][j]);
    if (__all_sync(0xffffffffu, ok)) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          double(&fragment)[2] = *reinterpret_cast<double(*)[2]>(acc + 2 * j);
          mma_f64_free(fragment, now.a[h], now.b[h][j]);
        }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int u = 0; u < 2; ++u)
          acc[2 * j + u] += block_dot(p, blk, g, n0 + 8 * j + 2 * t + u);
    }
  }
}

template <class Blocks>
__device__ void store_f64(const spmm_params<double, Blocks>& p, index_t r, index_t n0,
                          const double (&acc)[8]) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int u = 0; u < 2; ++u)
      store_c(p, 8 * r + g, n0 + 8 * j + 2 * t + u, acc[2 * j + u]);
}

struct f32_operands {
  float a[2];     // Aᵀ(k, m) = A(m, k), m16n8k8's b operand: A(g, t), A(g, t + 4)
  float x[2][4];  // Bᵀ(m, k) = B(k, m), its a operand: rows g, g + 8 by slots t, t + 4
};

template <class Blocks>
__device__ __forceinline__ void load_f32(const spmm_params<float, Blocks>& p,
                                         const typename Blocks::block& blk, index_t n0, int g,
                                         int t, f32_operands& o) {
  o.a[0] = blk.entry(g, t);
  o.a[1] = blk.entry(g, t + 4);
  // Row g + 8v of fragment s is column n0 + 4g + 2s + v of B and C.
  float lo[4], hi[4];
  b_quad(p, blk.row_of_b(t), n0 + 4 * g, lo);
  b_quad(p, blk.row_of_b(t + 4), n0 + 4 * g, hi);
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    o.x[s][0] = lo[2 * s];
    o.x[s][1] = lo[2 * s + 1];
    o.x[s][2] = hi[2 * s];
    o.x[s][3] = hi[2 * s + 1];
  }
}

// A block's two entries of a lane as TF32: the big parts and, for 3×TF32 (Split), the small
// ones. Split once per block and shared by both m16 fragments.
struct tf32_entries {
  std::uint32_t big[2];
  std::uint32_t small[2];
};

template <bool Split>
__device__ __forceinline__ tf32_entries split_entries(float a0, float a1) {
  tf32_entries t{{to_tf32(a0), to_tf32(a1)}, {0u, 0u}};
  if constexpr (Split) {
    t.small[0] = to_tf32(a0 - __uint_as_float(t.big[0]));
    t.small[1] = to_tf32(a1 - __uint_as_float(t.big[1]));
  }
  return t;
}

// One m16 fragment's products of a block: 16 columns of Bᵀ (x) by the block's entries, as
// 3×TF32 when Split (the small products first, then the big one, as tiled_spgemm sums them), else
// as plain TF32.
template <bool Split>
__device__ __forceinline__ void mma_block_f32(float (&fragment)[4], const float (&x)[4],
                                              const tf32_entries& a) {
  std::uint32_t xb[4];
#pragma unroll
  for (int e = 0; e < 4; ++e)
    xb[e] = to_tf32(x[e]);
  if constexpr (Split) {
    std::uint32_t xs[4];
#pragma unroll
    for (int e = 0; e < 4; ++e)
      xs[e] = to_tf32(x[e] - __uint_as_float(xb[e]));
    mma_tf32_m16(fragment, xs[0], xs[1], xs[2], xs[3], a.big[0], a.big[1]);
    mma_tf32_m16(fragment, xb[0], xb[1], xb[2], xb[3], a.small[0], a.small[1]);
  }
  mma_tf32_m16(fragment, xb[0], xb[1], xb[2], xb[3], a.big[0], a.big[1]);
}

// A's entries below 3×TF32's exact range (tf32_split_exact; bayer03 stores 2836 of them, down
// to subnormals) are scaled by 2^48 for the tensor cores, and so is the accumulator while the
// block's products are added: every nonzero float then lies at or above 2^-101, and both
// scalings are exact, so the sums round as they would unscaled. The block costs a few multiplies
// more instead of block_dot's scalar loop (which made bayer03 4x slower in float than in double).
constexpr float tiny_a_scale = 0x1p48f;
constexpr float tiny_a_unscale = 0x1p-48f;
// What must stay finite while scaled: the largest scaled entry times the largest value of B read
// below 2^120 (the 24 products of three instructions then stay below 2^125), and the largest sum
// below 2^77 (below 2^125 scaled).
constexpr float tiny_a_max_product = 0x1p120f;
constexpr float tiny_a_max_sum = 0x1p77f;

// The sums of one lane, as the out-of-line scaled path takes them (a copy: the accumulator itself
// stays in registers).
struct f32_sums {
  float v[8];
};

// Adds a block holding entries below 3×TF32's range to `sums` on the scaled path and returns
// true, or leaves them and returns false where that path cannot keep the block exact (B outside
// 3×TF32's range, an entry of 2^79 or more, or something scaled near overflow). Warp-uniform. Out
// of line, as rare as block_dot: inlined, it cost the common path 6 registers (72 to 78 a thread,
// four warps fewer per SM).
__device__ __noinline__ bool add_tiny_a_block(f32_sums& sums, f32_operands o, bool b_exact) {
  const float a0 = o.a[0] * tiny_a_scale, a1 = o.a[1] * tiny_a_scale;
  if (!__all_sync(0xffffffffu, b_exact && tf32_split_exact(a0) && tf32_split_exact(a1)))
    return false;
  float b_max = 0.f, sum_max = 0.f;
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      b_max = fmaxf(b_max, fabsf(o.x[s][e]));
      sum_max = fmaxf(sum_max, fabsf(sums.v[4 * s + e]));
    }
  // Non-negative floats order as their bit patterns.
  const auto warp_max = [](float x) {
    return __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(x)));
  };
  if (!(warp_max(fmaxf(fabsf(a0), fabsf(a1))) * warp_max(b_max) < tiny_a_max_product &&
        warp_max(sum_max) < tiny_a_max_sum))
    return false;
  float acc[8];
#pragma unroll
  for (int e = 0; e < 8; ++e)
    acc[e] = sums.v[e] * tiny_a_scale;
  const tf32_entries a = split_entries<true>(a0, a1);
#pragma unroll
  for (int s = 0; s < 2; ++s)
    mma_block_f32<true>(*reinterpret_cast<float(*)[4]>(acc + 4 * s), o.x[s], a);
#pragma unroll
  for (int e = 0; e < 8; ++e)
    sums.v[e] = acc[e] * tiny_a_unscale;
  return true;
}

// fp32: Cᵀ = Bᵀ·Aᵀ on m16n8k8 (M = 16 columns of B, N = the block's 8 rows, K = its 8 slots).
// Row g + 8v of fragment s is column n0 + 4g + 2s + v of B and C, so lane (g, t) reads B's
// columns n0 + 4g .. n0 + 4g + 3 and holds C(8r + 2t + u, n0 + 4g + 2s + v) in acc[4s + 2v + u].
// Adds blocks begin, begin + Step, ... below end, reading each block's operands while the previous
// block's instructions run (the slot's column, then B's row: two L2 round trips a warp would
// otherwise wait for per block).
template <bool Split, int Step, class Blocks>
__device__ void accumulate_f32(const spmm_params<float, Blocks>& p, index_t n0, std::int64_t begin,
                               std::int64_t end, float (&acc)[8]) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  f32_operands now{}, next{};
  if (begin < end) load_f32(p, p.blocks.at(begin), n0, g, t, now);
  for (std::int64_t i = begin; i < end; i += Step) {
    if (i + Step < end) load_f32(p, p.blocks.at(i + Step), n0, g, t, next);
    bool b_ok = true;
#pragma unroll
    for (int s = 0; s < 2; ++s)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        b_ok &= Split ? tf32_split_exact(now.x[s][e]) : isfinite(now.x[s][e]);
    const bool a_ok = Split ? tf32_split_exact(now.a[0]) && tf32_split_exact(now.a[1]) : true;
    if (__all_sync(0xffffffffu, a_ok && b_ok)) {
      const tf32_entries a = split_entries<Split>(now.a[0], now.a[1]);
#pragma unroll
      for (int s = 0; s < 2; ++s)
        mma_block_f32<Split>(*reinterpret_cast<float(*)[4]>(acc + 4 * s), now.x[s], a);
    } else {
      bool added = false;
      if constexpr (Split) {
        f32_sums sums;
#pragma unroll
        for (int e = 0; e < 8; ++e)
          sums.v[e] = acc[e];
        added = add_tiny_a_block(sums, now, b_ok);
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[e] = sums.v[e];
      }
      if (!added) {
        const typename Blocks::block blk = p.blocks.at(i);
#pragma unroll
        for (int s = 0; s < 2; ++s)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[4 * s + e] += block_dot(p, blk, 2 * t + (e & 1), n0 + 4 * g + 2 * s + (e >> 1));
      }
    }
    now = next;
  }
}

template <class Blocks>
__device__ void store_f32(const spmm_params<float, Blocks>& p, index_t r, index_t n0,
                          const float (&acc)[8]) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const float sums[4] = {acc[u], acc[2 + u], acc[4 + u], acc[6 + u]};
    store_c_quad(p, 8 * r + 2 * t + u, n0 + 4 * g, sums);
  }
}

template <class T, bool Split, int Step, class Blocks>
__device__ __forceinline__ void accumulate(const spmm_params<T, Blocks>& p, index_t n0,
                                           std::int64_t begin, std::int64_t end, T (&acc)[8]) {
  if constexpr (std::is_same_v<T, double>)
    accumulate_f64<Step>(p, n0, begin, end, acc);
  else
    accumulate_f32<Split, Step>(p, n0, begin, end, acc);
}

template <class T, class Blocks>
__device__ __forceinline__ void store(const spmm_params<T, Blocks>& p, index_t r, index_t n0,
                                      const T (&acc)[8]) {
  if constexpr (std::is_same_v<T, double>)
    store_f64(p, r, n0, acc);
  else
    store_f32(p, r, n0, acc);
}

// The parameters stay in constant memory (__grid_constant__): block_dot takes them by reference,
// and a by-value parameter whose address is taken is first copied to each thread's stack (160
// bytes), which cost up to 21 % of the time on the real set (fp64, N = 128, H200).
//
// An item is a window and 32 columns of C, summed by one warp.
template <class T, bool Split, class Blocks>
__global__ void __launch_bounds__(spmm_warps * 32)
    tiled_spmm_kernel(const __grid_constant__ spmm_params<T, Blocks> p) {
  const std::int64_t items = std::int64_t{p.tile_rows} * p.chunks;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  for (std::int64_t item = warp; item < items; item += warps) {
    // Neighbouring warps take the same window's column chunks, so its blocks stay in L1.
    const auto r = static_cast<index_t>(item / p.chunks);
    const auto n0 = static_cast<index_t>(item % p.chunks) * chunk_columns;
    T acc[8] = {};
    accumulate<T, Split, 1>(p, n0, p.blocks.first(r), p.blocks.first(r + 1), acc);
    store(p, r, n0, acc);
  }
}

// The same with Shares warps per item, for a matrix whose items alone leave the SMs short of
// warps: where a window has at least two blocks per warp, its warps take the blocks in turn and
// their sums meet in shared memory, added in warp order (deterministic), so its long windows end
// sooner; a shorter window is the first warp's alone.
template <class T, bool Split, int Shares, class Blocks>
__global__ void __launch_bounds__(spmm_warps * 32)
    tiled_spmm_shared_kernel(const __grid_constant__ spmm_params<T, Blocks> p) {
  static_assert(Shares > 1 && spmm_warps % Shares == 0);
  constexpr int items_per_block = spmm_warps / Shares;
  __shared__ T partial[spmm_warps][8][32];
  const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
  const int share = warp % Shares;
  const std::int64_t items = std::int64_t{p.tile_rows} * p.chunks;
  for (std::int64_t first = std::int64_t{blockIdx.x} * items_per_block; first < items;
       first += std::int64_t{gridDim.x} * items_per_block) {
    const std::int64_t item = first + warp / Shares;
    const bool mine = item < items;
    const auto r = static_cast<index_t>(mine ? item / p.chunks : 0);
    const auto n0 = static_cast<index_t>(mine ? item % p.chunks : 0) * chunk_columns;
    T acc[8] = {};
    if (mine) {
      const std::int64_t begin = p.blocks.first(r), end = p.blocks.first(r + 1);
      if (end - begin >= 2 * Shares)
        accumulate<T, Split, Shares>(p, n0, begin + share, end, acc);
      else if (share == 0)
        accumulate<T, Split, 1>(p, n0, begin, end, acc);
    }
    __syncthreads();  // the previous round's sums are read
#pragma unroll
    for (int e = 0; e < 8; ++e)
      partial[warp][e][lane] = acc[e];
    __syncthreads();
    if (mine && share == 0) {
      for (int w = 1; w < Shares; ++w)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[e] += partial[warp + w][e][lane];
      store(p, r, n0, acc);
    }
  }
}

// Sums of one (8 rows, 32 columns) item: 8 per lane, stored with the lanes contiguous (sum e of
// lane l at 32e + l) so that a warp's stores and loads are whole 128-byte lines.
constexpr int item_sums = 8 * 32;

// Blocks an SM the segmented kernel keeps: once B was read four floats at a time, float's
// 3xTF32 took 86 registers there (5 blocks) without the bound, and takes 76 with it (double 72
// instead of 80), without spilling.
constexpr int segmented_min_blocks_per_sm = 6;

// One warp per item, where the long windows are cut into segments: the items are first every
// (segment, column chunk), whose sums are parked in p.seg.partials (the segments start first,
// as they belong to the longest windows), then every (window, column chunk) as in
// tiled_spmm_kernel, skipping the long windows. tiled_spmm_segment_sums_kernel then adds each
// long window's segments in order, so the results repeat bit for bit on one device (a window
// summed whole, on a device with more SMs or without room for the workspace, rounds differently).
template <class T, bool Split, class Blocks>
__global__ void __launch_bounds__(spmm_warps * 32, segmented_min_blocks_per_sm)
    tiled_spmm_segmented_kernel(const __grid_constant__ spmm_params<T, Blocks> p) {
  const std::int64_t segment_items = p.seg.segment_count * p.chunks;
  const std::int64_t items = segment_items + std::int64_t{p.tile_rows} * p.chunks;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t item = warp; item < items; item += warps) {
    T acc[8] = {};
    if (item < segment_items) {
      const window_segment segment = p.seg.segments[item / p.chunks];
      const auto n0 = static_cast<index_t>(item % p.chunks) * chunk_columns;
      accumulate<T, Split, 1>(p, n0, segment.begin, segment.end, acc);
      T* out = p.seg.partials + item * item_sums;
#pragma unroll
      for (int e = 0; e < 8; ++e)
        out[32 * e + lane] = acc[e];
    } else {
      const std::int64_t window_item = item - segment_items;
      const auto r = static_cast<index_t>(window_item / p.chunks);
      const auto n0 = static_cast<index_t>(window_item % p.chunks) * chunk_columns;
      const std::int64_t begin = p.blocks.first(r), end = p.blocks.first(r + 1);
      if (end - begin > p.seg.long_threshold) continue;  // summed in segments
      accumulate<T, Split, 1>(p, n0, begin, end, acc);
      store(p, r, n0, acc);
    }
  }
}

// A warp per (long window, column chunk): its segments' sums added in segment order, then C.
template <class T, class Blocks>
__global__ void __launch_bounds__(spmm_warps * 32)
    tiled_spmm_segment_sums_kernel(const __grid_constant__ spmm_params<T, Blocks> p,
                                   const long_window* windows, std::int64_t window_count) {
  const std::int64_t items = window_count * p.chunks;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t item = warp; item < items; item += warps) {
    const long_window w = windows[item / p.chunks];
    const std::int64_t chunk = item % p.chunks;
    T acc[8] = {};
    for (index_t s = 0; s < w.segments; ++s) {
      const T* in =
          p.seg.partials + ((std::int64_t{w.first_segment} + s) * p.chunks + chunk) * item_sums;
#pragma unroll
      for (int e = 0; e < 8; ++e)
        acc[e] += in[32 * e + lane];
    }
    store(p, w.window, static_cast<index_t>(chunk) * chunk_columns, acc);
  }
}

// ---- the condensed windows
// ------------------------------------------------------------------------

// Bit c set when local column c of a tile holds an entry (the OR of its 8 row bytes).
__device__ __forceinline__ unsigned column_mask(std::uint64_t bits) {
  bits |= bits >> 32;
  bits |= bits >> 16;
  bits |= bits >> 8;
  return static_cast<unsigned>(bits & 0xffu);
}

// A window is long when it holds more than long_window_mean_factor times the mean window's
// blocks, and more than long_window_min_blocks. Where one warp per window fills the device, such
// a window (a power-law graph's hub rows: as-caida, email-Enron, soc-Slashdot0902) would keep
// its warp busy long after the others are done, so it is cut into segments of about
// segment_blocks blocks, each summed by a warp of its own.
constexpr std::int64_t long_window_min_blocks = 32;
constexpr std::int64_t long_window_mean_factor = 8;
constexpr std::int64_t segment_blocks = 16;

template <class T>
struct window_form {
  std::int64_t blocks = 0;
  std::int64_t longest = 0;  // blocks of the longest window
  device_buffer<std::int64_t> window_block;
  device_buffer<index_t> block_col;
  device_buffer<std::uint64_t> block_bits;
  device_buffer<T> block_values;
  // The long windows and their segments (none when no window is long).
  std::int64_t long_threshold = 0;
  device_buffer<window_segment> segments;
  device_buffer<long_window> long_windows;
};
template <class T>
struct window_form_key {};

struct window_count_params {
  const index_t* tile_row;
  const std::uint64_t* bitmap;
  std::int64_t tiles;
  index_t tile_rows;
  std::int64_t* window_blocks;  // tile rows + 1; the last is left alone
  unsigned long long* longest;  // the most blocks of one window
};

// A warp per tile row: its occupied columns, rounded up to whole blocks.
__global__ void __launch_bounds__(spmm_warps * 32) count_windows_kernel(window_count_params p) {
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = warp; r < p.tile_rows; r += warps) {
    const std::int64_t begin = first_tile_of(p.tile_row, p.tiles, static_cast<index_t>(r));
    const std::int64_t end = first_tile_of(p.tile_row, p.tiles, static_cast<index_t>(r + 1));
    unsigned columns = 0;
    for (std::int64_t i = begin + lane; i < end; i += 32)
      columns += __popc(column_mask(__ldg(p.bitmap + i)));
    columns = __reduce_add_sync(0xffffffffu, columns);
    if (lane == 0) {
      p.window_blocks[r] = (columns + 7) / 8;
      atomicMax(p.longest, static_cast<unsigned long long>((columns + 7) / 8));
    }
  }
}

template <class T>
struct window_fill_params {
  tile_blocks<T> tiles;
  index_t tile_rows;
  const std::int64_t* window_block;
  index_t* block_col;
  std::uint64_t* block_bits;
  T* block_values;
};

// A warp per tile row, 32 tiles at a time: each lane places its tile's occupied columns after
// those of the tiles before it (a warp scan of their counts), with their entries and bits.
template <class T>
__global__ void __launch_bounds__(spmm_warps * 32) fill_windows_kernel(window_fill_params<T> p) {
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = warp; r < p.tile_rows; r += warps) {
    const std::int64_t begin = p.tiles.first(static_cast<index_t>(r));
    const std::int64_t end = p.tiles.first(static_cast<index_t>(r + 1));
    std::int64_t slot = __ldg(p.window_block + r) * 8;  // the next free slot of the window
    for (std::int64_t base = begin; base < end; base += 32) {
      const std::int64_t i = base + lane;
      const std::uint64_t bits = i < end ? __ldg(p.tiles.bitmap + i) : 0;
      const unsigned columns = column_mask(bits);
      const int count = __popc(columns);
      int before = count;  // inclusive scan of the counts over the warp
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int other = __shfl_up_sync(0xffffffffu, before, d);
        if (lane >= d) before += other;
      }
      const int total = __shfl_sync(0xffffffffu, before, 31);
      before -= count;
      if (i < end) {
        const typename tile_blocks<T>::block tile = p.tiles.at(i);
        std::int64_t at = slot + before;
        for (unsigned m = columns; m != 0; m &= m - 1, ++at) {
          const int c = __ffs(m) - 1;
          const std::int64_t blk = at / 8;
          const int k = static_cast<int>(at % 8);
          p.block_col[at] = tile.row_of_b(c);
          std::uint64_t stored = 0;
          for (int row = 0; row < 8; ++row)
            if (tile.stored(row, c)) {
              p.block_values[64 * blk + 8 * row + k] = tile.entry(row, c);
              stored |= std::uint64_t{1} << tile_bit(row, k);
            }
          atomicOr(reinterpret_cast<unsigned long long*>(p.block_bits + blk),
                   static_cast<unsigned long long>(stored));
        }
      }
      slot += total;
    }
  }
}

// Lists the windows of more than w.long_threshold blocks and cuts each into segments of about
// segment_blocks blocks, of equal size within one window. The block offsets are read back only
// when the longest window is long, so other matrices pay nothing for it.
template <class T>
void find_long_windows(window_form<T>& w, std::int64_t tile_rows, context& ctx) {
  const std::int64_t mean = (w.blocks + tile_rows - 1) / tile_rows;
  w.long_threshold = std::max(long_window_min_blocks, long_window_mean_factor * mean);
  if (w.longest <= w.long_threshold) return;
  std::vector<std::int64_t> first(static_cast<std::size_t>(tile_rows) + 1);
  ctx.copy_to_host(first.data(), w.window_block.data(), first.size() * sizeof(std::int64_t));
  std::vector<window_segment> segments;
  std::vector<long_window> windows;
  for (std::int64_t r = 0; r < tile_rows; ++r) {
    const std::int64_t begin = first[static_cast<std::size_t>(r)];
    const std::int64_t length = first[static_cast<std::size_t>(r) + 1] - begin;
    if (length <= w.long_threshold) continue;
    const std::int64_t pieces = (length + segment_blocks - 1) / segment_blocks;
    windows.push_back({static_cast<index_t>(r), static_cast<index_t>(segments.size()),
                       static_cast<index_t>(pieces)});
    for (std::int64_t s = 0; s < pieces; ++s)
      segments.push_back({begin + length * s / pieces, begin + length * (s + 1) / pieces});
  }
  try {
    w.segments = device_buffer<window_segment>(segments.size(), ctx);
    w.long_windows = device_buffer<long_window>(windows.size(), ctx);
  } catch (const out_of_memory&) {
    // The windows serve whole, as where none is long.
    w.segments = {};
    w.long_windows = {};
    return;
  }
  ctx.copy_to_device(w.segments.data(), segments.data(), segments.size() * sizeof(window_segment));
  ctx.copy_to_device(w.long_windows.data(), windows.data(), windows.size() * sizeof(long_window));
  ctx.synchronize();  // the host vectors die here
}

template <class T>
window_form<T> make_window_form(const tiled<T, gpu>& a, context& ctx) {
  const cudaStream_t stream = detail::stream_of(ctx);
  const std::int64_t tile_rows = a.tile_rows();
  window_form<T> w;
  w.window_block = device_buffer<std::int64_t>(static_cast<std::size_t>(tile_rows) + 1, ctx);
  // The windows' block counts, a zero for the scan's total, and the longest window's count.
  device_buffer<std::int64_t> counts(static_cast<std::size_t>(tile_rows) + 2, ctx);
  counts.fill_zero();
  const window_count_params cp{
      a.tile_row().data(), a.bitmap().data(),
      a.tiles(),           a.tile_rows(),
      counts.data(),       reinterpret_cast<unsigned long long*>(counts.data() + tile_rows + 1)};
  count_windows_kernel<<<detail::grid_blocks(tile_rows, spmm_warps, ctx), spmm_warps * 32, 0,
                         stream>>>(cp);
  SPADE_CHECK_LAUNCH("counting each window's columns (tiled_spmm)");
  detail::cub_run(ctx, "scanning window blocks (cub::DeviceScan)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(
                        d_temp, bytes, counts.data(), w.window_block.data(), tile_rows + 1, stream);
                  });
  SPADE_CUDA_TRY(cudaMemcpyAsync(&w.blocks, w.window_block.data() + tile_rows, sizeof(std::int64_t),
                                 cudaMemcpyDeviceToHost, stream),
                 "reading the window blocks' total (tiled_spmm)");
  SPADE_CUDA_TRY(cudaMemcpyAsync(&w.longest, counts.data() + tile_rows + 1, sizeof(std::int64_t),
                                 cudaMemcpyDeviceToHost, stream),
                 "reading the longest window (tiled_spmm)");
  SPADE_CUDA_TRY(cudaStreamSynchronize(stream), "reading the window blocks' total (tiled_spmm)");
  if (w.blocks > 0) find_long_windows(w, tile_rows, ctx);
  const auto blocks = static_cast<std::size_t>(w.blocks);
  w.block_col = device_buffer<index_t>(8 * blocks, ctx);
  w.block_bits = device_buffer<std::uint64_t>(blocks, ctx);
  w.block_values = device_buffer<T>(64 * blocks, ctx);
  if (blocks == 0) return w;
  // -1 (all bytes 0xff) marks the slots past a window's last column.
  SPADE_CUDA_TRY(cudaMemsetAsync(w.block_col.data(), 0xff, 8 * blocks * sizeof(index_t), stream),
                 "marking empty window slots (tiled_spmm)");
  w.block_bits.fill_zero();
  w.block_values.fill_zero();
  const window_fill_params<T> fp{{a.tile_row().data(), a.tile_col().data(), a.tile_offset().data(),
                                  a.bitmap().data(), a.values().data(), a.tiles()},
                                 a.tile_rows(),
                                 w.window_block.data(),
                                 w.block_col.data(),
                                 w.block_bits.data(),
                                 w.block_values.data()};
  fill_windows_kernel<T>
      <<<detail::grid_blocks(tile_rows, spmm_warps, ctx), spmm_warps * 32, 0, stream>>>(fp);
  SPADE_CHECK_LAUNCH("condensing tiles into windows (tiled_spmm)");
  return w;
}

template <class Layout>
constexpr std::int64_t row_step(index_t rows, index_t cols) {
  return std::is_same_v<Layout, row_major> ? std::int64_t{cols} : 1;
}
template <class Layout>
constexpr std::int64_t col_step(index_t rows, index_t cols) {
  return std::is_same_v<Layout, row_major> ? 1 : std::int64_t{rows};
}

// Warps per item: one while the items alone give every SM busy_warps_per_sm warps, else two or
// four, so that a small matrix's long windows are summed by several warps in parallel, where the
// longest window gives each warp at least four blocks. Splitting costs the windows shorter than
// two blocks per warp, which one warp sums while the others wait: on matrices whose windows are
// all short, dw4096 and fe_4elt2 (N = 32) ran 1.2-1.4x slower split (H200).
constexpr std::int64_t busy_warps_per_sm = 24;
constexpr std::int64_t split_min_blocks_per_warp = 4;

int warps_per_item(std::int64_t items, std::int64_t longest_window, const context& ctx) {
  const std::int64_t busy =
      std::max<std::int64_t>(ctx.properties().sm_count, 1) * busy_warps_per_sm;
  int per_item = 1;
  while (per_item < spmm_warps && per_item * items < busy &&
         longest_window >= 2 * per_item * split_min_blocks_per_warp)
    per_item *= 2;
  return per_item;
}

// The long windows of a window form and its longest window, as launch_spmm takes them (none
// for the tiles, which are never split across warps).
struct long_windows_of_a {
  const window_segment* segments = nullptr;
  std::int64_t segment_count = 0;
  const long_window* windows = nullptr;
  std::int64_t window_count = 0;
  std::int64_t threshold = 0;
  std::int64_t blocks = 0;   // of all windows
  std::int64_t longest = 0;  // blocks of the longest window
};

template <class T>
long_windows_of_a long_windows_of(const window_form<T>& w) {
  return {w.segments.data(),
          static_cast<std::int64_t>(w.segments.size()),
          w.long_windows.data(),
          static_cast<std::int64_t>(w.long_windows.size()),
          w.long_threshold,
          w.blocks,
          w.longest};
}

// Whether the longest window would set the launch's time: it holds more blocks than each of the
// device's busy warps sums anyway (all blocks times the column chunks, over busy_warps_per_sm
// warps per SM). Otherwise segments only add their partial sums: soc-Slashdot0902 at N = 512 in
// float (16 chunks: 575 blocks a warp on 132 SMs, its longest window 384) ran 8 % slower in
// segments, while as-caida, email-Enron and Chem97ZtZ, whose longest windows exceed their share,
// ran 1.2-2.0x faster (H200).
bool longest_window_sets_time(const long_windows_of_a& longs, index_t chunks, const context& ctx) {
  const std::int64_t busy =
      std::max<std::int64_t>(ctx.properties().sm_count, 1) * busy_warps_per_sm;
  return longs.longest * busy > longs.blocks * chunks;
}

// Whether a dense operand is read and written four entries at a time (spmm_params::b_quads).
template <class T, layout L>
bool quads_fit(const dense<T, gpu, L>& m) {
  return std::is_same_v<T, float> && std::is_same_v<L, row_major> && m.cols() % 4 == 0 &&
         reinterpret_cast<std::uintptr_t>(m.data()) % 16 == 0;
}

// The segments' partial sums may take at most C's size or 4 M elements; past that the long
// windows stay whole.
constexpr std::int64_t min_partials_budget = std::int64_t{1} << 22;

template <class T, class Blocks, layout LB, layout LC>
void launch_spmm(const Blocks& blocks, const long_windows_of_a& longs, T alpha,
                 const tiled<T, gpu>& a, const dense<T, gpu, LB>& b, T beta, dense<T, gpu, LC>& c,
                 spmm_arithmetic arithmetic, context& ctx) {
  const index_t chunks = (b.cols() + chunk_columns - 1) / chunk_columns;
  const int per_item = warps_per_item(std::int64_t{a.tile_rows()} * chunks, longs.longest, ctx);
  spmm_params<T, Blocks> p{blocks,
                           a.rows(),
                           a.cols(),
                           b.cols(),
                           a.tile_rows(),
                           chunks,
                           b.data(),
                           row_step<LB>(b.rows(), b.cols()),
                           col_step<LB>(b.rows(), b.cols()),
                           c.data(),
                           row_step<LC>(c.rows(), c.cols()),
                           col_step<LC>(c.rows(), c.cols()),
                           alpha,
                           beta,
                           quads_fit(b),
                           quads_fit(c),
                           {}};
  const cudaStream_t stream = detail::stream_of(ctx);
  const bool split = !(arithmetic == spmm_arithmetic::tf32 && std::is_same_v<T, float>);
  // Segments only where one warp per item already fills the device (several warps per item
  // split every long window of a small matrix instead).
  device_buffer<T> partials;
  const std::int64_t partial_count = longs.segment_count * chunks * item_sums;
  if (per_item == 1 && longs.segment_count > 0 && longest_window_sets_time(longs, chunks, ctx) &&
      partial_count <= std::max<std::int64_t>(c.element_count(), min_partials_budget)) {
    try {
      partials = device_buffer<T>(static_cast<std::size_t>(partial_count), ctx);
    } catch (const out_of_memory&) {
      // The windows stay whole: slower on the longest ones, the same sums up to rounding.
    }
  }
  if (!partials.empty()) {
    p.seg = {longs.segments, longs.segment_count, longs.threshold, partials.data()};
    const std::int64_t items = (longs.segment_count + std::int64_t{p.tile_rows}) * p.chunks;
    const unsigned grid = detail::grid_blocks(items, spmm_warps, ctx);
    const auto launch = [&](auto kernel) { kernel<<<grid, spmm_warps * 32, 0, stream>>>(p); };
    split ? launch(tiled_spmm_segmented_kernel<T, true, Blocks>)
          : launch(tiled_spmm_segmented_kernel<T, false, Blocks>);
    SPADE_CHECK_LAUNCH("multiplying A by B on tensor cores, long windows in segments (tiled_spmm)");
    const unsigned sum_grid = detail::grid_blocks(longs.window_count * p.chunks, spmm_warps, ctx);
    tiled_spmm_segment_sums_kernel<T, Blocks>
        <<<sum_grid, spmm_warps * 32, 0, stream>>>(p, longs.windows, longs.window_count);
    SPADE_CHECK_LAUNCH("adding the long windows' segments (tiled_spmm)");
    return;
  }
  const std::int64_t items = std::int64_t{p.tile_rows} * p.chunks;
  const unsigned grid = detail::grid_blocks(items, spmm_warps / per_item, ctx);
  const auto launch = [&](auto kernel) { kernel<<<grid, spmm_warps * 32, 0, stream>>>(p); };
  if (per_item == 1)
    split ? launch(tiled_spmm_kernel<T, true, Blocks>)
          : launch(tiled_spmm_kernel<T, false, Blocks>);
  else if (per_item == 2)
    split ? launch(tiled_spmm_shared_kernel<T, true, 2, Blocks>)
          : launch(tiled_spmm_shared_kernel<T, false, 2, Blocks>);
  else
    split ? launch(tiled_spmm_shared_kernel<T, true, spmm_warps, Blocks>)
          : launch(tiled_spmm_shared_kernel<T, false, spmm_warps, Blocks>);
  SPADE_CHECK_LAUNCH("multiplying A by B on tensor cores (tiled_spmm)");
}

}  // namespace

template <scalar T, layout LB, layout LC>
void tiled_spmm(T alpha, const tiled<T, gpu>& a, const dense<T, gpu, LB>& b, T beta,
                dense<T, gpu, LC>& c, spmm_arithmetic arithmetic) {
  detail::require_shapes(a.cols() == b.rows() && c.rows() == a.rows() && c.cols() == b.cols(),
                         "tiled_spmm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()) + ", C is " +
                             detail::shape_text(c.rows(), c.cols()));
  if (c.element_count() == 0) return;
  context& ctx = detail::context_of(a.bitmap(), a.values(), b.values(), c.values());
  const window_form<T>* windows = nullptr;
  try {
    windows = &a.cache().template get_or_make<window_form_key<T>, window_form<T>>(
        [&] { return make_window_form(a, ctx); });
  } catch (const out_of_memory&) {
    // The windows hold up to 8 slots per entry of A; without room for them the tiles serve.
  }
  if (windows)
    launch_spmm(window_blocks<T>{windows->window_block.data(), windows->block_col.data(),
                                 windows->block_bits.data(), windows->block_values.data()},
                long_windows_of(*windows), alpha, a, b, beta, c, arithmetic, ctx);
  else
    launch_spmm(tile_blocks<T>{a.tile_row().data(), a.tile_col().data(), a.tile_offset().data(),
                               a.bitmap().data(), a.values().data(), a.tiles()},
                long_windows_of_a{}, alpha, a, b, beta, c, arithmetic, ctx);
}

SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(float)
SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(double)

}  // namespace spade::device
