// Scalar and index types Spade accepts, as concepts.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace spade {

/// Index type of every sparse format: 32-bit signed, as cuSPARSE's CUSPARSE_INDEX_32I.
using index_t = std::int32_t;

/// The floating-point types every kernel is instantiated for.
template <class T>
concept scalar = std::same_as<T, float> || std::same_as<T, double>;

}  // namespace spade
