// spade::vector: a dense column vector in either space.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/error.hpp"
#include "spade/core/expression.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"

namespace spade {

/// A dense column vector of n elements. Value type: copies are deep.
template <scalar T, space Space = gpu>
class vector {
 public:
  using value_type = T;
  using space_type = Space;

  vector() = default;
  /// Evaluates an expression (spade/eval): `spade::vector<T> r = A * B;`.
  template <expression E>
  vector(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  vector& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }
  /// n zeros. Throws invalid_matrix on a negative size.
  explicit vector(index_t n) : n_(checked(n)) {
    if constexpr (std::is_same_v<Space, cpu>) {
      values_.assign(static_cast<std::size_t>(n), T(0));
    } else {
      values_ = device_buffer<T>(static_cast<std::size_t>(n));
      values_.fill_zero();
    }
  }
  /// Takes the values as they are; the size is values.size().
  explicit vector(storage<T, Space> values)
      : n_(checked_count(values.size())), values_(std::move(values)) {}

  index_t size() const noexcept { return n_; }
  T* data() noexcept {
    cache_.clear();
    return values_.data();
  }
  const T* data() const noexcept { return values_.data(); }
  /// Writable values; clears the conversions cached from this object.
  storage<T, Space>& values() noexcept {
    cache_.clear();
    return values_;
  }
  const storage<T, Space>& values() const noexcept { return values_; }

  T& operator[](index_t i) requires std::is_same_v<Space, cpu> {
    cache_.clear();
    return values_[static_cast<std::size_t>(i)];
  }
  const T& operator[](index_t i) const requires std::is_same_v<Space, cpu> {
    return values_[static_cast<std::size_t>(i)];
  }
  T& operator()(index_t i) requires std::is_same_v<Space, cpu> {
    cache_.clear();
    return values_[static_cast<std::size_t>(i)];
  }
  const T& operator()(index_t i) const requires std::is_same_v<Space, cpu> {
    return values_[static_cast<std::size_t>(i)];
  }

  /// Conversions and transposed copies the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
  static index_t checked(index_t n) {
    if (n < 0) throw invalid_matrix("vector: negative size " + std::to_string(n));
    return n;
  }
  static index_t checked_count(std::size_t n) {
    if (n > static_cast<std::size_t>(index_max))
      throw invalid_matrix("vector: " + std::to_string(n) + " elements exceed the index type");
    return static_cast<index_t>(n);
  }
  static constexpr index_t index_max = 2147483647;

  index_t n_ = 0;
  storage<T, Space> values_;
  mutable conversion_cache cache_;
};

}  // namespace spade
