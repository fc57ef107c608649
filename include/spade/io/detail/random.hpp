// The portable PRNG behind Spade's generators: splitmix64-seeded xoshiro256**, integer sampling.
#pragma once

#include <cstdint>
#include <limits>

#include "spade/core/scalar.hpp"

namespace spade::detail {

// GCC and Clang both have it on every 64-bit target; __extension__ keeps -Wpedantic quiet.
__extension__ using uint128 = unsigned __int128;

/// One step of splitmix64 (Steele, Lea, Flood 2014; Vigna's reference splitmix64.c). Used only
/// to expand a 64-bit seed into xoshiro's 256-bit state, as the xoshiro authors recommend, so
/// that nearby seeds (0, 1, 2, ...) still give unrelated streams.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// xoshiro256** 1.0 (Blackman, Vigna; reference xoshiro256starstar.c). Only fixed-width
/// integer arithmetic, so a seed gives the same stream on every compiler and platform; the
/// generators rely on that, which std::mt19937 plus std distributions would not give them.
class xoshiro256 {
 public:
  explicit constexpr xoshiro256(std::uint64_t seed) noexcept {
    std::uint64_t sm = seed;
    for (auto& word : state_)
      word = splitmix64_next(sm);
  }

  constexpr std::uint64_t operator()() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, n) for n > 0, without modulo bias: Lemire's multiply-shift with rejection
  /// ("Fast random integer generation in an interval", 2019). The threshold -n % n is computed
  /// only when the low half lands in the biased zone, so most draws cost one multiply.
  constexpr std::uint64_t below(std::uint64_t n) noexcept {
    uint128 m = static_cast<uint128>((*this)()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<uint128>((*this)()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform in [-1, 1) on the grid of T's full mantissa: k · 2^(1-b) − 1 for the top b bits k
  /// of one draw (b = 53 for double, 24 for float). Every result is exact in T, so no rounding
  /// mode or FMA contraction can change it, and it never rounds up to 1.
  template <scalar T>
  constexpr T uniform_signed() noexcept {
    constexpr int bits = std::numeric_limits<T>::digits;
    const auto k = static_cast<std::int64_t>((*this)() >> (64 - bits));
    constexpr T step = T(1) / static_cast<T>(std::int64_t(1) << (bits - 1));
    return static_cast<T>(k - (std::int64_t(1) << (bits - 1))) * step;
  }

  /// As uniform_signed but never exactly 0 (a draw of 0 is redrawn), so that a generated
  /// sparse matrix stores no explicit zeros.
  template <scalar T>
  constexpr T uniform_nonzero() noexcept {
    T v = uniform_signed<T>();
    while (v == T(0))
      v = uniform_signed<T>();
    return v;
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }

  std::uint64_t state_[4] = {};
};

}  // namespace spade::detail
