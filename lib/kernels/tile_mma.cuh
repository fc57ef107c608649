// Tensor-core fragments shared by the tiled kernels (tiled_spgemm, tiled_spmm): the mma
// instructions, 3xTF32's split and the value at one bit of an 8x8 bitmap tile.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "spade/core/scalar.hpp"

namespace spade::device {

namespace {

// The entry at `bit` of a tile whose values start at `values` (zero where the bitmap is clear).
template <class T>
__device__ __forceinline__ T tile_entry(std::uint64_t bits, int bit, const T* values) {
  if (((bits >> bit) & 1u) == 0) return T(0);
  return __ldg(values + __popcll(bits & ((std::uint64_t{1} << bit) - 1)));
}

// ---- tensor-core tile products -----------------------------------------------------------------
// Fragment layouts (PTX ISA, warp-level mma), g = lane / 4, t = lane % 4:
//   m8n8k4 f64:   A(g, t)  B(t, g)  C(g, 2t), C(g, 2t + 1)
//   m16n8k8 tf32: A(g, t), A(g, t + 4) [rows g + 8 unused]  B(t, g), B(t + 4, g)  C as above
//   m16n8k16 f16: A(g, 2t..2t+1), A(g, 2t+8..2t+9)  B(2t..2t+1, g), B(2t+8..2t+9, g)
// tiled_spgemm: for the first two a lane reads A(g, t), A(g, t + 4), B(t, g), B(t + 4, g) of
// each tile pair; for f16 the k range 8..15 carries a second pair, so one instruction sums two
// tile products. tiled_spmm fills all 16 rows of m16n8k8 (mma_tf32_m16): A(g + 8, t) and
// A(g + 8, t + 4) are its a1 and a3.

__device__ __forceinline__ void mma_f64(double (&c)[2], double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a), "d"(b));
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], std::uint32_t a0, std::uint32_t a2,
                                         std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

// m16n8k8 TF32 with every row of A given: a0 = A(g, t), a1 = A(g + 8, t), a2 = A(g, t + 4),
// a3 = A(g + 8, t + 4); C(g, 2t), C(g, 2t + 1), C(g + 8, 2t), C(g + 8, 2t + 1) in c[0..3].
__device__ __forceinline__ void mma_tf32_m16(float (&c)[4], std::uint32_t a0, std::uint32_t a1,
                                             std::uint32_t a2, std::uint32_t a3, std::uint32_t b0,
                                             std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// m8n8k4 fp64 without `volatile`, so loads of the next operands may move above it.
__device__ __forceinline__ void mma_f64_free(double (&c)[2], double a, double b) {
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
      : "+d"(c[0]), "+d"(c[1])
      : "d"(a), "d"(b));
}

__device__ __forceinline__ void mma_f16(float (&c)[4], std::uint32_t a0, std::uint32_t a2,
                                        std::uint32_t b0, std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}

// 3xTF32 keeps fp32's precision for x = 0 and 2^-102 <= |x| < 2^127: the small part
// x - tf32(x), at least |x|·2^-24 when not zero, stays a normal number (the tensor cores would
// flush it below 2^-126, an error of 2^-11 relative: bayer03 in float), and rounding to TF32
// cannot overflow.
__device__ __forceinline__ bool tf32_split_exact(float x) {
  const float m = fabsf(x);
  return m == 0.f || (m >= 0x1p-102f && m < 0x1p127f);
}

__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return bits;
}

}  // namespace

}  // namespace spade::device
