// spade::csr: compressed sparse rows with sorted, unique column indices, in either space.
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
#include "spade/formats/validate.hpp"

namespace spade {

/// A rows × cols sparse matrix in compressed sparse row form (32-bit indices, zero-based).
/// Invariants: row_ptr has rows + 1 non-decreasing entries from 0 to nnz (a matrix with no
/// rows may hold none); within each row the column indices are strictly increasing and lie in
/// [0, cols). Explicitly stored zeros are kept. Value type: copies are deep.
template <scalar T, space Space = gpu>
class csr {
 public:
  using value_type = T;
  using space_type = Space;

  csr() = default;
  /// Evaluates an expression (spade/eval): `spade::csr<T> r = A * B;`.
  template <expression E>
  csr(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  csr& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }
  /// A rows × cols matrix with no entries.
  csr(index_t rows, index_t cols)
      : csr(rows, cols, std::vector<index_t>(static_cast<std::size_t>(rows < 0 ? 0 : rows) + 1, 0),
            {}, {}) {}
  /// From host arrays (for a gpu matrix they are checked on the host, then uploaded).
  /// Throws invalid_matrix naming the first entry that breaks an invariant. With
  /// column_order::sort, rows are sorted by column and duplicates summed first.
  csr(index_t rows, index_t cols, std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
      std::vector<T> values, column_order order = column_order::require_sorted) {
    detail::check_csr_structure(rows, cols, row_ptr, col_idx, values.size());
    if (order == column_order::sort)
      detail::sort_and_sum_rows(row_ptr, col_idx, values);
    else
      detail::check_csr_sorted(row_ptr, col_idx);
    rows_ = rows;
    cols_ = cols;
    row_ptr_ = storage<index_t, Space>(std::move(row_ptr));
    col_idx_ = storage<index_t, Space>(std::move(col_idx));
    values_ = storage<T, Space>(std::move(values));
  }
  /// Takes arrays the caller guarantees to satisfy the invariants (conversions, kernels).
  csr(unchecked_t, index_t rows, index_t cols, storage<index_t, Space> row_ptr,
      storage<index_t, Space> col_idx, storage<T, Space> values)
      : rows_(rows),
        cols_(cols),
        row_ptr_(std::move(row_ptr)),
        col_idx_(std::move(col_idx)),
        values_(std::move(values)) {}

  /// The n × n identity: n stored ones on the diagonal (a gpu one is made on the host and copied
  /// once). Throws invalid_matrix on a negative size.
  static csr identity(index_t n) {
    if (n < 0) throw invalid_matrix("csr: negative size " + std::to_string(n));
    const auto count = static_cast<std::size_t>(n);
    std::vector<index_t> row_ptr(count + 1);
    std::vector<index_t> col_idx(count);
    for (std::size_t i = 0; i < count; ++i) {
      row_ptr[i] = static_cast<index_t>(i);
      col_idx[i] = static_cast<index_t>(i);
    }
    row_ptr[count] = n;
    return csr(unchecked, n, n, storage<index_t, Space>(std::move(row_ptr)),
               storage<index_t, Space>(std::move(col_idx)),
               storage<T, Space>(std::vector<T>(count, T(1))));
  }

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(col_idx_.size()); }

  const storage<index_t, Space>& row_ptr() const noexcept { return row_ptr_; }
  const storage<index_t, Space>& col_idx() const noexcept { return col_idx_; }
  const storage<T, Space>& values() const noexcept { return values_; }
  /// Values may be changed in place; the pattern may not.
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
  storage<index_t, Space> row_ptr_;
  storage<index_t, Space> col_idx_;
  storage<T, Space> values_;
  mutable conversion_cache cache_;
};

}  // namespace spade
