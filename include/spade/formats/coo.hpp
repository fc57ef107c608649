// spade::coo: a coordinate list (row, column, value triplets) in either space.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/expression.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"
#include "spade/formats/validate.hpp"

namespace spade {

/// A rows × cols sparse matrix as parallel arrays of row indices, column indices and values.
/// Entries may come in any order and repeat a position: every conversion sums repeated
/// entries (in stored order). Conversions from other formats produce row-major sorted,
/// duplicate-free lists. Value type: copies are deep.
template <scalar T, space Space = gpu>
class coo {
 public:
  using value_type = T;
  using space_type = Space;

  coo() = default;
  /// Evaluates an expression (spade/eval): `spade::coo<T> r = A * B;`.
  template <expression E>
  coo(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  coo& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }
  /// A rows × cols matrix with no entries.
  coo(index_t rows, index_t cols) : coo(rows, cols, {}, {}, {}) {}
  /// From host arrays (uploaded for a gpu matrix); throws invalid_matrix naming the first
  /// entry out of range or the arrays whose lengths differ.
  coo(index_t rows, index_t cols, std::vector<index_t> row_idx, std::vector<index_t> col_idx,
      std::vector<T> values) {
    detail::check_coo(rows, cols, row_idx, col_idx, values.size());
    rows_ = rows;
    cols_ = cols;
    row_idx_ = storage<index_t, Space>(std::move(row_idx));
    col_idx_ = storage<index_t, Space>(std::move(col_idx));
    values_ = storage<T, Space>(std::move(values));
  }
  /// Takes arrays the caller guarantees to be consistent and in range.
  coo(unchecked_t, index_t rows, index_t cols, storage<index_t, Space> row_idx,
      storage<index_t, Space> col_idx, storage<T, Space> values)
      : rows_(rows),
        cols_(cols),
        row_idx_(std::move(row_idx)),
        col_idx_(std::move(col_idx)),
        values_(std::move(values)) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  /// Stored entries, repeats included.
  index_t nnz() const noexcept { return static_cast<index_t>(row_idx_.size()); }

  const storage<index_t, Space>& row_idx() const noexcept { return row_idx_; }
  const storage<index_t, Space>& col_idx() const noexcept { return col_idx_; }
  const storage<T, Space>& values() const noexcept { return values_; }
  /// Writable values; clears the conversions cached from this object.
  storage<T, Space>& values() noexcept {
    cache_.clear();
    return values_;
  }

  /// Conversions and transposed copies the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
  index_t rows_ = 0;
  index_t cols_ = 0;
  storage<index_t, Space> row_idx_;
  storage<index_t, Space> col_idx_;
  storage<T, Space> values_;
  mutable conversion_cache cache_;
};

}  // namespace spade
