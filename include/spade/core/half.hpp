// spade::half and spade::bfloat16: 16-bit floating-point storage types, converted with cast<U>.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>

namespace spade {

namespace detail {

/// `d` rounded to float toward zero, with the last bit set when the rounding dropped anything
/// (round to odd). Rounding that float to nearest at 16 bits then rounds `d` correctly: float
/// keeps more than two bits beyond either target's precision, so no double rounding can occur.
inline float round_to_odd_float(double d) {
  constexpr double largest = static_cast<double>(std::numeric_limits<float>::max());
  if (std::isnan(d) || std::isinf(d)) return static_cast<float>(d);
  // Past float's range the truncation is its largest value, already odd.
  if (std::fabs(d) > largest) return static_cast<float>(std::copysign(largest, d));
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

/// IEEE binary16 bits of `f`, rounded to nearest even (subnormals kept, NaN stays NaN).
inline std::uint16_t half_bits_of(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7fffu;  // NaN: the canonical one, as CUDA gives
  if (magnitude >= 0x477ff000u)                 // 65520 and above round to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a multiple of 2^-24, the 24-bit significand m shifted right by 126 minus the
    // exponent (at least 14), rounded to even in integers (no dependence on the FPU's rounding
    // mode); 1024 is the smallest normal's bit pattern. Float subnormals round to zero.
    const std::uint32_t exponent = magnitude >> 23;
    const std::uint32_t shift = 126u - exponent;
    if (exponent == 0 || shift > 24u) return sign;
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    std::uint32_t units = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1u), tie = 1u << (shift - 1u);
    if (rest > tie || (rest == tie && (units & 1u))) ++units;
    return static_cast<std::uint16_t>(sign | units);
  }
  // Normal: round the 13 dropped mantissa bits to even, then rebias the exponent (127 - 15).
  const std::uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u) - 0x38000000u;
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

/// The float equal to binary16 bits `h` (exact).
inline float float_of_half_bits(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// bfloat16 bits of `f`, rounded to nearest even (NaN stays NaN).
inline std::uint16_t bfloat16_bits_of(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN: the canonical one
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

inline float float_of_bfloat16_bits(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace detail

struct bfloat16;

/// IEEE binary16 (CUDA's __half), a storage type: dense matrices and vectors hold it, and
/// spade::cast<U> converts to and from it; arithmetic runs on float or double (cast first).
/// Conversions round to nearest even, from double without rounding through float twice.
struct half {
  std::uint16_t bits = 0;

  constexpr half() = default;
  explicit half(float f) : bits(detail::half_bits_of(f)) {}
  explicit half(double d) : bits(detail::half_bits_of(detail::round_to_odd_float(d))) {}
  explicit half(int i) : half(static_cast<double>(i)) {}
  explicit half(bfloat16 b);
  static constexpr half from_bits(std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return detail::float_of_half_bits(bits); }
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  /// Same bits (so NaN == NaN and -0 != +0): equality of stored values, not of numbers.
  friend constexpr bool operator==(half a, half b) = default;
};

/// bfloat16 (CUDA's __nv_bfloat16): float's exponent with 8 mantissa bits. A storage type, as
/// spade::half.
struct bfloat16 {
  std::uint16_t bits = 0;

  constexpr bfloat16() = default;
  explicit bfloat16(float f) : bits(detail::bfloat16_bits_of(f)) {}
  explicit bfloat16(double d) : bits(detail::bfloat16_bits_of(detail::round_to_odd_float(d))) {}
  explicit bfloat16(int i) : bfloat16(static_cast<double>(i)) {}
  /// Through float, which holds every half exactly: one rounding.
  explicit bfloat16(half h) : bfloat16(static_cast<float>(h)) {}
  static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return detail::float_of_bfloat16_bits(bits); }
  explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  friend constexpr bool operator==(bfloat16 a, bfloat16 b) = default;
};

inline half::half(bfloat16 b) : half(static_cast<float>(b)) {}

/// Prints the value as its float would print.
inline std::ostream& operator<<(std::ostream& out, half h) {
  return out << static_cast<float>(h);
}
inline std::ostream& operator<<(std::ostream& out, bfloat16 h) {
  return out << static_cast<float>(h);
}

}  // namespace spade
