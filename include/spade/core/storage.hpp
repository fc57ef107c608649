// The array type each memory space stores its elements in.
#pragma once

#include <type_traits>
#include <vector>

#include "spade/core/device_buffer.hpp"
#include "spade/core/space.hpp"

namespace spade {

/// std::vector<T> on the cpu, device_buffer<T> on the gpu: both expose data() and size().
template <class T, space Space>
using storage = std::conditional_t<std::is_same_v<Space, cpu>, std::vector<T>, device_buffer<T>>;

/// Tag for internal constructors that take arrays already known to satisfy the invariants.
struct unchecked_t {
  explicit unchecked_t() = default;
};
inline constexpr unchecked_t unchecked{};

}  // namespace spade
