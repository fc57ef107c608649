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
template <scalar T, space Space = gpu, layout Layout = row_major>
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
    return std::is_same_v<Layout, row_major> ? static_cast<std::size_t>(i) * cols_ + j
                                             : static_cast<std::size_t>(j) * rows_ + i;
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

  /// Element access, cpu only.
  T& operator()(index_t i, index_t j) requires std::is_same_v<Space, cpu> {
    cache_.clear();
    return values_[offset(i, j)];
  }
  const T& operator()(index_t i, index_t j) const requires std::is_same_v<Space, cpu> {
    return values_[offset(i, j)];
  }

  /// Conversions and transposed copies the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
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
