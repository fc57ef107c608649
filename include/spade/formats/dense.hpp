// spade::dense: a dense matrix in either space, row- or column-major.
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

/// A rows × cols dense matrix stored contiguously in `Layout` order (no padding: the leading
/// dimension is cols for row_major, rows for col_major). Value type: copies are deep.
template <storage_scalar T, space Space = gpu, layout Layout = row_major>
class dense {
 public:
  using value_type = T;
  using space_type = Space;
  using layout_type = Layout;

  dense() = default;
  /// Evaluates an expression (spade/eval): `spade::dense<T> r = A * B;`.
  template <expression E>
  dense(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  dense& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }
  /// A zero-filled rows × cols matrix. Throws invalid_matrix on a negative size.
  dense(index_t rows, index_t cols) : dense(unchecked, rows, cols, make_zeroed(rows, cols)) {}
  /// Takes `values` in Layout order; throws invalid_matrix unless it holds rows × cols.
  dense(index_t rows, index_t cols, storage<T, Space> values)
      : rows_(checked_extent(rows, "rows")),
        cols_(checked_extent(cols, "cols")),
        values_(std::move(values)) {
    if (values_.size() != element_count())
      throw invalid_matrix("dense: " + std::to_string(rows) + "x" + std::to_string(cols) +
                           " matrix needs " + std::to_string(element_count()) + " values, got " +
                           std::to_string(values_.size()));
  }
  dense(unchecked_t, index_t rows, index_t cols, storage<T, Space> values)
      : rows_(rows), cols_(cols), values_(std::move(values)) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  std::size_t element_count() const noexcept {
    return static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_);
  }
  /// Distance between consecutive rows (row_major) or columns (col_major).
  index_t leading_dimension() const noexcept {
    return std::is_same_v<Layout, row_major> ? cols_ : rows_;
  }
  /// Position of element (i, j) in values().
  std::size_t offset(index_t i, index_t j) const noexcept {
    const auto at = [](index_t outer, index_t extent, index_t inner) {
      return static_cast<std::size_t>(outer) * static_cast<std::size_t>(extent) +
             static_cast<std::size_t>(inner);
    };
    return std::is_same_v<Layout, row_major> ? at(i, cols_, j) : at(j, rows_, i);
  }

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

  /// rows × cols of zeros, of ones, of `value`; the n × n identity (in Layout order, in Space:
  /// a gpu one is filled on the host and copied once). Throw invalid_matrix on a negative size.
  static dense zeros(index_t rows, index_t cols) { return dense(rows, cols); }
  static dense ones(index_t rows, index_t cols) { return constant(rows, cols, T(1)); }
  static dense constant(index_t rows, index_t cols, T value) {
    checked_extent(rows, "rows");
    checked_extent(cols, "cols");
    const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    return dense(unchecked, rows, cols, storage<T, Space>(std::vector<T>(count, value)));
  }
  static dense identity(index_t n) {
    checked_extent(n, "rows");
    std::vector<T> values(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), T(0));
    for (index_t i = 0; i < n; ++i)
      values[static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + i] = T(1);
    return dense(unchecked, n, n, storage<T, Space>(std::move(values)));
  }

  /// Element (i, j) of a cpu matrix, to read or write; dimension_mismatch when (i, j) lies
  /// outside it. A gpu matrix has no element access (one static_assert names spade::to_cpu).
  template <class S = Space>
  T& operator()(index_t i, index_t j) {
    static_assert(std::is_same_v<S, cpu>,
                  "spade::dense: D(i, j) reads and writes elements of a cpu matrix only, so copy a "
                  "gpu one to the host with spade::to_cpu first");
    if constexpr (std::is_same_v<S, cpu>) {
      cache_.clear();
      return values_[checked_offset(i, j)];
    } else {
      return *values_.data();  // not reached: the static_assert has failed
    }
  }
  template <class S = Space>
  const T& operator()(index_t i, index_t j) const {
    static_assert(std::is_same_v<S, cpu>,
                  "spade::dense: D(i, j) reads and writes elements of a cpu matrix only, so copy a "
                  "gpu one to the host with spade::to_cpu first");
    if constexpr (std::is_same_v<S, cpu>)
      return values_[checked_offset(i, j)];
    else
      return *values_.data();  // not reached: the static_assert has failed
  }

  /// Conversions and transposed copies the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
  std::size_t checked_offset(index_t i, index_t j) const {
    if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
      throw dimension_mismatch("dense: element (" + std::to_string(i) + ", " + std::to_string(j) +
                               ") is outside the " + std::to_string(rows_) + "x" +
                               std::to_string(cols_) + " matrix");
    return offset(i, j);
  }
  static index_t checked_extent(index_t n, const char* what) {
    if (n < 0)
      throw invalid_matrix(std::string("dense: negative ") + what + " " + std::to_string(n));
    return n;
  }
  static storage<T, Space> make_zeroed(index_t rows, index_t cols) {
    checked_extent(rows, "rows");
    checked_extent(cols, "cols");
    const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if constexpr (std::is_same_v<Space, cpu>) {
      return std::vector<T>(count, T(0));
    } else {
      device_buffer<T> buffer(count);
      buffer.fill_zero();
      return buffer;
    }
  }

  index_t rows_ = 0;
  index_t cols_ = 0;
  storage<T, Space> values_;
  mutable conversion_cache cache_;
};

}  // namespace spade
