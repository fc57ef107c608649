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
template <storage_scalar T, space Space = gpu>
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

  /// n zeros, n ones, n copies of `value` (a gpu vector is filled on the host and copied once).
  /// Throw invalid_matrix on a negative size.
  static vector zeros(index_t n) { return vector(n); }
  static vector ones(index_t n) { return constant(n, T(1)); }
  static vector constant(index_t n, T value) {
    return vector(storage<T, Space>(std::vector<T>(static_cast<std::size_t>(checked(n)), value)));
  }

  /// Element i of a cpu vector, to read or write; dimension_mismatch when i lies outside it. A
  /// gpu vector has no element access (one static_assert names spade::to_cpu).
  template <class S = Space>
  T& operator[](index_t i) {
    static_assert(
        std::is_same_v<S, cpu>,
        "spade::vector: x(i) and x[i] read and write elements of a cpu vector only, so copy a "
        "gpu one to the host with spade::to_cpu first");
    if constexpr (std::is_same_v<S, cpu>) {
      cache_.clear();
      return values_[checked_index(i)];
    } else {
      return *values_.data();  // not reached: the static_assert has failed
    }
  }
  template <class S = Space>
  const T& operator[](index_t i) const {
    static_assert(
        std::is_same_v<S, cpu>,
        "spade::vector: x(i) and x[i] read and write elements of a cpu vector only, so copy a "
        "gpu one to the host with spade::to_cpu first");
    if constexpr (std::is_same_v<S, cpu>)
      return values_[checked_index(i)];
    else
      return *values_.data();  // not reached: the static_assert has failed
  }
  /// x(i): the same as x[i] (Eigen's spelling).
  template <class S = Space>
  T& operator()(index_t i) {
    return this->template operator[]<S>(i);
  }
  template <class S = Space>
  const T& operator()(index_t i) const {
    return this->template operator[]<S>(i);
  }

  /// Conversions and transposed copies the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
  std::size_t checked_index(index_t i) const {
    if (i < 0 || i >= n_)
      throw dimension_mismatch("vector: element " + std::to_string(i) + " is outside the " +
                               std::to_string(n_) + "-element vector");
    return static_cast<std::size_t>(i);
  }
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
