// Scalar and index types Spade accepts, as concepts.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "spade/core/half.hpp"

namespace spade {

/// Index type of every sparse format: 32-bit signed, as cuSPARSE's CUSPARSE_INDEX_32I.
using index_t = std::int32_t;

/// The floating-point types every kernel is instantiated for.
template <class T>
concept scalar = std::same_as<T, float> || std::same_as<T, double>;

/// The 16-bit types dense matrices and vectors may also hold: storage only, converted with
/// spade::cast<U> (no arithmetic runs on them).
template <class T>
concept reduced_precision = std::same_as<T, half> || std::same_as<T, bfloat16>;

/// What a dense matrix or vector may hold.
template <class T>
concept storage_scalar = scalar<T> || reduced_precision<T>;

/// The scalar's name in messages, printing and explain.
template <storage_scalar T>
constexpr const char* scalar_name() {
  if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, half>)
    return "half";
  else
    return "bfloat16";
}

}  // namespace spade
