// Sparse × dense on tensor cores over 8×8 bitmap tiles (issue 21): a warp per (tile row, 32
// columns of C) sums its row's tile products, fp64 on DMMA m8n8k4, fp32 as 3×TF32 (or plain TF32
// when forced) on m16n8k8 computing Cᵀ = Bᵀ·Aᵀ so that 16 columns of B fill the instruction's
// rows and the tile's 8 rows its columns.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

template <class T>
struct spmm_params {
  const index_t* tile_row;
  const index_t* tile_col;
  const index_t* tile_offset;
  const std::uint64_t* bitmap;
  const T* values;
  std::int64_t tiles;
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
};

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

template <class T>
__device__ __forceinline__ T b_at(const spmm_params<T>& p, index_t k, index_t j) {
  return (k < p.inner && j < p.n) ? __ldg(p.b + k * p.b_row_step + j * p.b_col_step) : T(0);
}

// The exact sum of one tile's products into C(row, col) with FMAs, in column order: the path of
// a tile whose tensor-core form would be wrong (an Inf or NaN in B meeting a zero of the tile,
// or a float outside 3×TF32's exact range). Rare, so kept out of line.
template <class T>
__device__ __noinline__ T tile_dot(const spmm_params<T>& p, std::uint64_t bits, const T* values,
                                   index_t k0, int local_row, index_t col) {
  T sum = T(0);
  for (int k = 0; k < 8; ++k)
    if ((bits >> tile_bit(local_row, k)) & 1u)
      sum = fma(tile_entry(bits, tile_bit(local_row, k), values), b_at(p, k0 + k, col), sum);
  return sum;
}

template <class T>
__device__ __forceinline__ void store_c(const spmm_params<T>& p, index_t row, index_t col, T acc) {
  if (row >= p.rows || col >= p.n) return;
  T* at = p.c + row * p.c_row_step + col * p.c_col_step;
  // beta = 0 never reads C, so a NaN left there does not survive (BLAS semantics).
  *at = p.beta == T(0) ? p.alpha * acc : fma(p.alpha, acc, p.beta * *at);
}

__device__ __forceinline__ bool finite(double x) {
  return isfinite(x);
}

// fp64: rows 8r..8r+7 of C, columns n0..n0+31 as four m8n8k4 fragments; lane (g, t) holds
// C(8r + g, n0 + 8j + 2t + u).
__device__ void tile_row_f64(const spmm_params<double>& p, index_t r, index_t n0,
                             std::int64_t begin, std::int64_t end) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  double acc[4][2] = {};
  for (std::int64_t i = begin; i < end; ++i) {
    const std::uint64_t bits = __ldg(p.bitmap + i);
    const double* values = p.values + __ldg(p.tile_offset + i);
    const index_t k0 = __ldg(p.tile_col + i) * 8;
    double a[2], b[2][4];
    bool ok = true;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      a[h] = tile_entry(bits, tile_bit(g, 4 * h + t), values);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        b[h][j] = b_at(p, k0 + 4 * h + t, n0 + 8 * j + g);
        ok &= finite(b[h][j]);
      }
    }
    if (__all_sync(0xffffffffu, ok)) {
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          mma_f64_free(acc[j], a[h], b[h][j]);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int u = 0; u < 2; ++u)
          acc[j][u] += tile_dot(p, bits, values, k0, g, n0 + 8 * j + 2 * t + u);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int u = 0; u < 2; ++u)
      store_c(p, 8 * r + g, n0 + 8 * j + 2 * t + u, acc[j][u]);
}

// fp32: Cᵀ = Bᵀ·Aᵀ on m16n8k8 (M = 16 columns of B, N = the tile's 8 rows, K = its 8 columns).
// Lane (g, t) holds C(8r + 2t + u, n0 + 16s + g + 8v) in acc[s][2v + u].
template <bool Split>
__device__ void tile_row_f32(const spmm_params<float>& p, index_t r, index_t n0, std::int64_t begin,
                             std::int64_t end) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  float acc[2][4] = {};
  for (std::int64_t i = begin; i < end; ++i) {
    const std::uint64_t bits = __ldg(p.bitmap + i);
    const float* values = p.values + __ldg(p.tile_offset + i);
    const index_t k0 = __ldg(p.tile_col + i) * 8;
    // Aᵀ(k, m) = A(m, k): the b operand is A(g, t), A(g, t + 4).
    const float a0 = tile_entry(bits, tile_bit(g, t), values);
    const float a1 = tile_entry(bits, tile_bit(g, t + 4), values);
    // Bᵀ(m, k) = B(k, m): the a operand is B(t, g), B(t, g + 8), B(t + 4, g), B(t + 4, g + 8).
    float x[2][4];
    bool ok = Split ? tf32_split_exact(a0) && tf32_split_exact(a1) : true;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const index_t col = n0 + 16 * s + g;
      x[s][0] = b_at(p, k0 + t, col);
      x[s][1] = b_at(p, k0 + t, col + 8);
      x[s][2] = b_at(p, k0 + t + 4, col);
      x[s][3] = b_at(p, k0 + t + 4, col + 8);
#pragma unroll
      for (int e = 0; e < 4; ++e)
        ok &= Split ? tf32_split_exact(x[s][e]) : isfinite(x[s][e]);
    }
    if (__all_sync(0xffffffffu, ok)) {
      const std::uint32_t a0b = to_tf32(a0), a1b = to_tf32(a1);
      std::uint32_t a0s = 0, a1s = 0;
      if constexpr (Split) {
        a0s = to_tf32(a0 - __uint_as_float(a0b));
        a1s = to_tf32(a1 - __uint_as_float(a1b));
      }
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        std::uint32_t xb[4];
#pragma unroll
        for (int e = 0; e < 4; ++e)
          xb[e] = to_tf32(x[s][e]);
        if constexpr (Split) {
          std::uint32_t xs[4];
#pragma unroll
          for (int e = 0; e < 4; ++e)
            xs[e] = to_tf32(x[s][e] - __uint_as_float(xb[e]));
          // The small products first, then the big one (as tiled_spgemm sums them).
          mma_tf32_m16(acc[s], xs[0], xs[1], xs[2], xs[3], a0b, a1b);
          mma_tf32_m16(acc[s], xb[0], xb[1], xb[2], xb[3], a0s, a1s);
        }
        mma_tf32_m16(acc[s], xb[0], xb[1], xb[2], xb[3], a0b, a1b);
      }
    } else {
#pragma unroll
      for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[s][e] +=
              tile_dot(p, bits, values, k0, 2 * t + (e & 1), n0 + 16 * s + g + 8 * (e >> 1));
    }
  }
#pragma unroll
  for (int s = 0; s < 2; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      store_c(p, 8 * r + 2 * t + (e & 1), n0 + 16 * s + g + 8 * (e >> 1), acc[s][e]);
}

template <class T, bool Split>
__global__ void __launch_bounds__(spmm_warps * 32) tiled_spmm_kernel(spmm_params<T> p) {
  const std::int64_t items = std::int64_t{p.tile_rows} * p.chunks;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  for (std::int64_t item = warp; item < items; item += warps) {
    // Neighbouring warps take the same tile row's column chunks, so its tiles stay in L1.
    const auto r = static_cast<index_t>(item / p.chunks);
    const auto n0 = static_cast<index_t>(item % p.chunks) * chunk_columns;
    const std::int64_t begin = first_tile_of(p.tile_row, p.tiles, r);
    const std::int64_t end = first_tile_of(p.tile_row, p.tiles, r + 1);
    if constexpr (std::is_same_v<T, double>)
      tile_row_f64(p, r, n0, begin, end);
    else
      tile_row_f32<Split>(p, r, n0, begin, end);
  }
}

template <class Layout>
constexpr std::int64_t row_step(index_t rows, index_t cols) {
  return std::is_same_v<Layout, row_major> ? std::int64_t{cols} : 1;
}
template <class Layout>
constexpr std::int64_t col_step(index_t rows, index_t cols) {
  return std::is_same_v<Layout, row_major> ? 1 : std::int64_t{rows};
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
  const cudaStream_t stream = detail::stream_of(ctx);
  const spmm_params<T> p{a.tile_row().data(),
                         a.tile_col().data(),
                         a.tile_offset().data(),
                         a.bitmap().data(),
                         a.values().data(),
                         a.tiles(),
                         a.rows(),
                         a.cols(),
                         b.cols(),
                         a.tile_rows(),
                         (b.cols() + chunk_columns - 1) / chunk_columns,
                         b.data(),
                         row_step<LB>(b.rows(), b.cols()),
                         col_step<LB>(b.rows(), b.cols()),
                         c.data(),
                         row_step<LC>(c.rows(), c.cols()),
                         col_step<LC>(c.rows(), c.cols()),
                         alpha,
                         beta};
  const std::int64_t items = std::int64_t{p.tile_rows} * p.chunks;
  const unsigned blocks = detail::grid_blocks(items, spmm_warps, ctx);
  if (arithmetic == spmm_arithmetic::tf32 && std::is_same_v<T, float>)
    tiled_spmm_kernel<T, false><<<blocks, spmm_warps * 32, 0, stream>>>(p);
  else
    tiled_spmm_kernel<T, true><<<blocks, spmm_warps * 32, 0, stream>>>(p);
  SPADE_CHECK_LAUNCH("multiplying tiles of A by B on tensor cores (tiled_spmm)");
}

SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(float)
SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(double)

}  // namespace spade::device
