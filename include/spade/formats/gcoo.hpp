// spade::gcoo: grouped coordinate lists (GCOO, paper 000/001) in either space.
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

/// A rows × cols sparse matrix cut into groups of `group_size()` consecutive rows (the last
/// group may be shorter). Group g holds rows [g·p, min((g+1)·p, rows)); its entries sit at
/// [group_offsets[g], group_offsets[g] + group_nnz[g]) of the parallel arrays values, row_idx
/// (absolute rows) and col_idx, ordered by column and, within a column, by row — so entries
/// that share a column are adjacent and a product kernel loads that row of B once for all of
/// them. Positions are unique. These are the paper's arrays (values, rows, cols, gIdxes,
/// nnzPerGroup); group_offsets has groups() entries, like gIdxes. Value type: copies are deep.
template <scalar T, space Space = gpu>
class gcoo {
 public:
  using value_type = T;
  using space_type = Space;

  gcoo() = default;
  /// Evaluates an expression (spade/eval) and groups the result as convert<gcoo> does
  /// (tuning().gcoo_group_size, 4 unless changed).
  template <expression E>
  gcoo(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  gcoo& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }
  /// The group size conversions use when none is given: the paper's p = 4, which the kernel's
  /// register budget on sm_90 also favours (docs/benchmarks/gcoo.md).
  static constexpr index_t default_group_size = 4;

  /// A rows × cols matrix with no entries.
  gcoo(index_t rows, index_t cols, index_t group_size = default_group_size)
      : gcoo(rows, cols, group_size, {},
             std::vector<index_t>(detail::group_count(rows, group_size), 0),
             std::vector<index_t>(detail::group_count(rows, group_size), 0), {}, {}) {}
  /// From host arrays (uploaded for a gpu matrix); throws invalid_matrix naming the first
  /// entry that breaks an invariant (group bounds, column order, repeated positions, offsets).
  gcoo(index_t rows, index_t cols, index_t group_size, std::vector<T> values,
       std::vector<index_t> group_offsets, std::vector<index_t> group_nnz,
       std::vector<index_t> row_idx, std::vector<index_t> col_idx) {
    detail::check_gcoo(rows, cols, group_size, values.size(), group_offsets, group_nnz, row_idx,
                       col_idx);
    rows_ = rows;
    cols_ = cols;
    group_size_ = group_size;
    values_ = storage<T, Space>(std::move(values));
    group_offsets_ = storage<index_t, Space>(std::move(group_offsets));
    group_nnz_ = storage<index_t, Space>(std::move(group_nnz));
    row_idx_ = storage<index_t, Space>(std::move(row_idx));
    col_idx_ = storage<index_t, Space>(std::move(col_idx));
  }
  /// Takes arrays the caller guarantees to satisfy the invariants (conversions).
  gcoo(unchecked_t, index_t rows, index_t cols, index_t group_size, storage<T, Space> values,
       storage<index_t, Space> group_offsets, storage<index_t, Space> group_nnz,
       storage<index_t, Space> row_idx, storage<index_t, Space> col_idx)
      : rows_(rows),
        cols_(cols),
        group_size_(group_size),
        values_(std::move(values)),
        group_offsets_(std::move(group_offsets)),
        group_nnz_(std::move(group_nnz)),
        row_idx_(std::move(row_idx)),
        col_idx_(std::move(col_idx)) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(col_idx_.size()); }
  /// p: rows per group.
  index_t group_size() const noexcept { return group_size_; }
  index_t groups() const noexcept { return detail::group_count(rows_, group_size_); }

  const storage<T, Space>& values() const noexcept { return values_; }
  const storage<index_t, Space>& group_offsets() const noexcept { return group_offsets_; }
  const storage<index_t, Space>& group_nnz() const noexcept { return group_nnz_; }
  const storage<index_t, Space>& row_idx() const noexcept { return row_idx_; }
  const storage<index_t, Space>& col_idx() const noexcept { return col_idx_; }
  /// Writable values (the pattern stays); clears the conversions cached from this object.
  storage<T, Space>& values() noexcept {
    cache_.clear();
    return values_;
  }

  /// Conversions the planner derived from this object.
  conversion_cache& cache() const noexcept { return cache_; }

 private:
  index_t rows_ = 0;
  index_t cols_ = 0;
  index_t group_size_ = default_group_size;
  storage<T, Space> values_;
  storage<index_t, Space> group_offsets_;
  storage<index_t, Space> group_nnz_;
  storage<index_t, Space> row_idx_;
  storage<index_t, Space> col_idx_;
  mutable conversion_cache cache_;
};

}  // namespace spade
