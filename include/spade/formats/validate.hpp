// Host-side checks of sparse-format invariants, throwing invalid_matrix at the first bad entry.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"

namespace spade {

/// What a csr constructor does with columns that are out of order inside a row.
enum class column_order {
  require_sorted,  ///< strictly increasing columns in each row, else invalid_matrix
  sort,            ///< sort each row's columns, summing duplicate entries
};

namespace detail {

inline std::string entry_text(const char* array, std::size_t k, index_t value) {
  return std::string(array) + "[" + std::to_string(k) + "] = " + std::to_string(value);
}

inline void check_extents(const char* format, index_t rows, index_t cols) {
  if (rows < 0 || cols < 0)
    throw invalid_matrix(std::string(format) + ": negative size " + std::to_string(rows) + "x" +
                         std::to_string(cols));
}

/// Checks everything but column order: sizes, row pointers, column range.
inline void check_csr_structure(index_t rows, index_t cols, const std::vector<index_t>& row_ptr,
                                const std::vector<index_t>& col_idx, std::size_t value_count) {
  check_extents("csr", rows, cols);
  if (rows == 0 && row_ptr.empty() && col_idx.empty() && value_count == 0) return;
  if (row_ptr.size() != static_cast<std::size_t>(rows) + 1)
    throw invalid_matrix("csr: row_ptr has " + std::to_string(row_ptr.size()) +
                         " entries, a matrix of " + std::to_string(rows) + " rows needs " +
                         std::to_string(static_cast<std::size_t>(rows) + 1));
  if (col_idx.size() != value_count)
    throw invalid_matrix("csr: col_idx has " + std::to_string(col_idx.size()) +
                         " entries but values has " + std::to_string(value_count));
  if (row_ptr[0] != 0)
    throw invalid_matrix("csr: " + entry_text("row_ptr", 0, row_ptr[0]) + ", must be 0");
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    if (row_ptr[i] < row_ptr[i - 1])
      throw invalid_matrix("csr: " + entry_text("row_ptr", i, row_ptr[i]) + " is less than " +
                           entry_text("row_ptr", i - 1, row_ptr[i - 1]) +
                           " (row pointers must not decrease)");
  if (static_cast<std::size_t>(row_ptr.back()) != col_idx.size())
    throw invalid_matrix("csr: " + entry_text("row_ptr", row_ptr.size() - 1, row_ptr.back()) +
                         " but there are " + std::to_string(col_idx.size()) + " entries");
  for (std::size_t k = 0; k < col_idx.size(); ++k)
    if (col_idx[k] < 0 || col_idx[k] >= cols) {
      const auto row = std::upper_bound(row_ptr.begin(), row_ptr.end(), static_cast<index_t>(k)) -
                       row_ptr.begin() - 1;
      throw invalid_matrix("csr: " + entry_text("col_idx", k, col_idx[k]) + " (row " +
                           std::to_string(row) + ") is out of range [0, " + std::to_string(cols) +
                           ")");
    }
}

/// Throws at the first row whose columns are not strictly increasing.
inline void check_csr_sorted(const std::vector<index_t>& row_ptr,
                             const std::vector<index_t>& col_idx) {
  for (std::size_t i = 0; i + 1 < row_ptr.size(); ++i)
    for (auto k = static_cast<std::size_t>(row_ptr[i]) + 1;
         k < static_cast<std::size_t>(row_ptr[i + 1]); ++k)
      if (col_idx[k] <= col_idx[k - 1])
        throw invalid_matrix(
            "csr: row " + std::to_string(i) + " has " +
            (col_idx[k] == col_idx[k - 1] ? "a duplicate column: " : "columns out of order: ") +
            entry_text("col_idx", k, col_idx[k]) + " after " +
            entry_text("col_idx", k - 1, col_idx[k - 1]) +
            " (pass spade::column_order::sort to sort rows and sum duplicates)");
}

/// True when every row's columns are strictly increasing.
inline bool rows_sorted(const std::vector<index_t>& row_ptr, const std::vector<index_t>& col_idx) {
  for (std::size_t i = 0; i + 1 < row_ptr.size(); ++i)
    for (auto k = static_cast<std::size_t>(row_ptr[i]) + 1;
         k < static_cast<std::size_t>(row_ptr[i + 1]); ++k)
      if (col_idx[k] <= col_idx[k - 1]) return false;
  return true;
}

/// v[k] for an index k already checked to be in range.
template <class V>
decltype(auto) at(V& v, index_t k) {
  return v[static_cast<std::size_t>(k)];
}

/// Sorts each row by column (stable, so duplicates are summed in input order) and sums
/// duplicates, compacting the arrays in place. O(nnz log(max row length)).
template <class T>
void sort_and_sum_rows(std::vector<index_t>& row_ptr, std::vector<index_t>& col_idx,
                       std::vector<T>& values) {
  std::vector<index_t> order;
  std::vector<index_t> sorted_cols;
  std::vector<T> sorted_values;
  index_t write = 0;
  index_t row_begin = 0;
  for (std::size_t i = 0; i + 1 < row_ptr.size(); ++i) {
    const index_t row_end = row_ptr[i + 1];
    order.resize(static_cast<std::size_t>(row_end - row_begin));
    std::iota(order.begin(), order.end(), row_begin);
    std::stable_sort(order.begin(), order.end(),
                     [&](index_t a, index_t b) { return at(col_idx, a) < at(col_idx, b); });
    sorted_cols.clear();
    sorted_values.clear();
    for (index_t k : order) {
      if (!sorted_cols.empty() && sorted_cols.back() == at(col_idx, k)) {
        sorted_values.back() += at(values, k);
      } else {
        sorted_cols.push_back(at(col_idx, k));
        sorted_values.push_back(at(values, k));
      }
    }
    row_ptr[i] = write;
    std::copy(sorted_cols.begin(), sorted_cols.end(), col_idx.begin() + write);
    std::copy(sorted_values.begin(), sorted_values.end(), values.begin() + write);
    write += static_cast<index_t>(sorted_cols.size());
    row_begin = row_end;
  }
  if (!row_ptr.empty()) row_ptr.back() = write;
  col_idx.resize(static_cast<std::size_t>(write));
  values.resize(static_cast<std::size_t>(write));
}

/// Checks sizes and index ranges of a coordinate list (any order, duplicates allowed).
inline void check_coo(index_t rows, index_t cols, const std::vector<index_t>& row_idx,
                      const std::vector<index_t>& col_idx, std::size_t value_count) {
  check_extents("coo", rows, cols);
  if (row_idx.size() != col_idx.size() || row_idx.size() != value_count)
    throw invalid_matrix("coo: row_idx, col_idx and values have " + std::to_string(row_idx.size()) +
                         ", " + std::to_string(col_idx.size()) + " and " +
                         std::to_string(value_count) + " entries; they must match");
  if (row_idx.size() > static_cast<std::size_t>(2147483647))
    throw invalid_matrix("coo: " + std::to_string(row_idx.size()) +
                         " entries exceed the 32-bit index type");
  for (std::size_t k = 0; k < row_idx.size(); ++k) {
    if (row_idx[k] < 0 || row_idx[k] >= rows)
      throw invalid_matrix("coo: " + entry_text("row_idx", k, row_idx[k]) +
                           " is out of range [0, " + std::to_string(rows) + ")");
    if (col_idx[k] < 0 || col_idx[k] >= cols)
      throw invalid_matrix("coo: " + entry_text("col_idx", k, col_idx[k]) +
                           " is out of range [0, " + std::to_string(cols) + ")");
  }
}

/// Groups of p consecutive rows that cover `rows` rows (0 for a bad p: the check reports it).
inline constexpr index_t group_count(index_t rows, index_t group_size) noexcept {
  return group_size > 0 && rows > 0 ? (rows - 1) / group_size + 1 : 0;
}

/// Throws invalid_matrix unless p >= 1 (`call` names the conversion that was asked for it).
inline void check_group_size(const char* call, index_t group_size) {
  if (group_size < 1)
    throw invalid_matrix(std::string(call) + ": group size " + std::to_string(group_size) +
                         ", must be >= 1");
}

/// Checks a grouped coordinate list: p, array lengths, offsets, each entry's group, column range,
/// and the order inside each group (by column, then row; no repeated position).
inline void check_gcoo(index_t rows, index_t cols, index_t group_size, std::size_t value_count,
                       const std::vector<index_t>& group_offsets,
                       const std::vector<index_t>& group_nnz, const std::vector<index_t>& row_idx,
                       const std::vector<index_t>& col_idx) {
  check_extents("gcoo", rows, cols);
  check_group_size("gcoo", group_size);
  const auto groups = static_cast<std::size_t>(group_count(rows, group_size));
  if (group_offsets.size() != groups || group_nnz.size() != groups)
    throw invalid_matrix(
        "gcoo: group_offsets and group_nnz have " + std::to_string(group_offsets.size()) + " and " +
        std::to_string(group_nnz.size()) + " entries; " + std::to_string(rows) +
        " rows in groups of " + std::to_string(group_size) + " need " + std::to_string(groups));
  if (row_idx.size() != value_count || col_idx.size() != value_count)
    throw invalid_matrix("gcoo: row_idx, col_idx and values have " +
                         std::to_string(row_idx.size()) + ", " + std::to_string(col_idx.size()) +
                         " and " + std::to_string(value_count) + " entries; they must match");
  if (value_count > static_cast<std::size_t>(2147483647))
    throw invalid_matrix("gcoo: " + std::to_string(value_count) +
                         " entries exceed the 32-bit index type");
  std::size_t expected_offset = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    if (static_cast<std::size_t>(group_offsets[g]) != expected_offset || group_offsets[g] < 0)
      throw invalid_matrix("gcoo: " + entry_text("group_offsets", g, group_offsets[g]) +
                           ", groups must follow each other: expected " +
                           std::to_string(expected_offset));
    if (group_nnz[g] < 0 || expected_offset + static_cast<std::size_t>(group_nnz[g]) > value_count)
      throw invalid_matrix("gcoo: " + entry_text("group_nnz", g, group_nnz[g]) + " runs past the " +
                           std::to_string(value_count) + " entries");
    const index_t first_row = static_cast<index_t>(g) * group_size;
    const index_t end_row = std::min<index_t>(rows, first_row + group_size);
    const std::size_t end = expected_offset + static_cast<std::size_t>(group_nnz[g]);
    for (std::size_t k = expected_offset; k < end; ++k) {
      if (row_idx[k] < first_row || row_idx[k] >= end_row)
        throw invalid_matrix("gcoo: " + entry_text("row_idx", k, row_idx[k]) +
                             " lies outside group " + std::to_string(g) + " (rows [" +
                             std::to_string(first_row) + ", " + std::to_string(end_row) + "))");
      if (col_idx[k] < 0 || col_idx[k] >= cols)
        throw invalid_matrix("gcoo: " + entry_text("col_idx", k, col_idx[k]) +
                             " is out of range [0, " + std::to_string(cols) + ")");
      if (k > expected_offset) {
        const bool before = col_idx[k - 1] < col_idx[k] ||
                            (col_idx[k - 1] == col_idx[k] && row_idx[k - 1] < row_idx[k]);
        if (!before)
          throw invalid_matrix(
              "gcoo: entry " + std::to_string(k) + " (row " + std::to_string(row_idx[k]) +
              ", column " + std::to_string(col_idx[k]) + ") " +
              (col_idx[k - 1] == col_idx[k] && row_idx[k - 1] == row_idx[k]
                   ? "repeats the position of the entry before it"
                   : "comes before the entry ahead of it; a group's entries must be ordered by "
                     "column, then row") +
              " (group " + std::to_string(g) + ")");
      }
    }
    expected_offset = end;
  }
  if (expected_offset != value_count)
    throw invalid_matrix("gcoo: the groups hold " + std::to_string(expected_offset) +
                         " entries but there are " + std::to_string(value_count));
}

/// Checks the paper's ELLPACK-R arrays (rows × width, column-major): sizes, each row length in
/// [0, width], and each row's columns in range and strictly increasing.
inline void check_ellr(index_t rows, index_t cols, index_t width, std::size_t value_count,
                       const std::vector<index_t>& col_idx,
                       const std::vector<index_t>& row_lengths) {
  check_extents("ellr", rows, cols);
  if (width < 0) throw invalid_matrix("ellr: negative width " + std::to_string(width));
  const std::size_t slots = static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
  if (row_lengths.size() != static_cast<std::size_t>(rows))
    throw invalid_matrix("ellr: row_lengths has " + std::to_string(row_lengths.size()) +
                         " entries, a matrix of " + std::to_string(rows) + " rows needs " +
                         std::to_string(rows));
  if (col_idx.size() != slots || value_count != slots)
    throw invalid_matrix("ellr: col_idx and values have " + std::to_string(col_idx.size()) +
                         " and " + std::to_string(value_count) + " entries; " +
                         std::to_string(rows) + " rows of width " + std::to_string(width) +
                         " need " + std::to_string(slots) + " each");
  std::size_t total = 0;
  for (std::size_t r = 0; r < row_lengths.size(); ++r) {
    if (row_lengths[r] < 0 || row_lengths[r] > width)
      throw invalid_matrix("ellr: " + entry_text("row_lengths", r, row_lengths[r]) +
                           " is out of range [0, " + std::to_string(width) + "]");
    total += static_cast<std::size_t>(row_lengths[r]);
    for (index_t k = 0; k < row_lengths[r]; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * static_cast<std::size_t>(rows) + r;
      if (col_idx[at] < 0 || col_idx[at] >= cols)
        throw invalid_matrix("ellr: " + entry_text("col_idx", at, col_idx[at]) + " (row " +
                             std::to_string(r) + ", entry " + std::to_string(k) +
                             ") is out of range [0, " + std::to_string(cols) + ")");
      if (k > 0 && col_idx[at] <= col_idx[at - static_cast<std::size_t>(rows)])
        throw invalid_matrix("ellr: row " + std::to_string(r) + " has " +
                             (col_idx[at] == col_idx[at - static_cast<std::size_t>(rows)]
                                  ? "a duplicate column: "
                                  : "columns out of order: ") +
                             entry_text("col_idx", at, col_idx[at]) + " after column " +
                             std::to_string(col_idx[at - static_cast<std::size_t>(rows)]) +
                             " (each row's entries must have increasing columns)");
    }
  }
  if (total > static_cast<std::size_t>(2147483647))
    throw invalid_matrix("ellr: " + std::to_string(total) +
                         " entries exceed the 32-bit index type");
}

/// Checks tiled arrays: tiles strictly increasing by (tile row, tile column) and inside the
/// matrix, each bitmap non-zero with no bit past the matrix's last row or column, and
/// tile_offset running from 0 in steps of each bitmap's popcount to value_count.
inline void check_tiled(index_t rows, index_t cols, const std::vector<index_t>& tile_row,
                        const std::vector<index_t>& tile_col,
                        const std::vector<index_t>& tile_offset,
                        const std::vector<std::uint64_t>& bitmap, std::size_t value_count) {
  check_extents("tiled", rows, cols);
  const std::size_t tiles = tile_row.size();
  if (tile_col.size() != tiles || bitmap.size() != tiles)
    throw invalid_matrix("tiled: tile_row, tile_col and bitmap have " + std::to_string(tiles) +
                         ", " + std::to_string(tile_col.size()) + " and " +
                         std::to_string(bitmap.size()) + " entries; they must be equal");
  if (tile_offset.size() != tiles + 1 && !(tiles == 0 && tile_offset.empty()))
    throw invalid_matrix("tiled: tile_offset has " + std::to_string(tile_offset.size()) +
                         " entries, " + std::to_string(tiles) + " tiles need " +
                         std::to_string(tiles + 1));
  const std::int64_t tile_rows = (std::int64_t{rows} + 7) / 8;
  const std::int64_t tile_cols = (std::int64_t{cols} + 7) / 8;
  if (!tile_offset.empty() && tile_offset[0] != 0)
    throw invalid_matrix("tiled: " + entry_text("tile_offset", 0, tile_offset[0]) + " (must be 0)");
  for (std::size_t t = 0; t < tiles; ++t) {
    if (tile_row[t] < 0 || tile_row[t] >= tile_rows || tile_col[t] < 0 || tile_col[t] >= tile_cols)
      throw invalid_matrix(
          "tiled: tile " + std::to_string(t) + " at tile row " + std::to_string(tile_row[t]) +
          ", tile column " + std::to_string(tile_col[t]) + " lies outside the " +
          std::to_string(tile_rows) + " x " + std::to_string(tile_cols) + " tiles of a " +
          std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    if (t > 0 && (tile_row[t] < tile_row[t - 1] ||
                  (tile_row[t] == tile_row[t - 1] && tile_col[t] <= tile_col[t - 1])))
      throw invalid_matrix("tiled: tile " + std::to_string(t) + " (" + std::to_string(tile_row[t]) +
                           ", " + std::to_string(tile_col[t]) + ") comes after tile (" +
                           std::to_string(tile_row[t - 1]) + ", " +
                           std::to_string(tile_col[t - 1]) +
                           "); tiles must be strictly increasing by (tile row, tile column)");
    if (bitmap[t] == 0)
      throw invalid_matrix("tiled: tile " + std::to_string(t) +
                           " has an empty bitmap (store only tiles with entries)");
    // Bits of rows or columns past the matrix's edge (the last tile row / column is partial).
    const std::int64_t valid_rows = std::min<std::int64_t>(8, rows - std::int64_t{tile_row[t]} * 8);
    const std::int64_t valid_cols = std::min<std::int64_t>(8, cols - std::int64_t{tile_col[t]} * 8);
    std::uint64_t inside = 0;
    for (std::int64_t r = 0; r < valid_rows; ++r)
      inside |= ((valid_cols == 8 ? std::uint64_t{0xff} : ((std::uint64_t{1} << valid_cols) - 1))
                 << (8 * r));
    if ((bitmap[t] & ~inside) != 0)
      throw invalid_matrix("tiled: tile " + std::to_string(t) + " (" + std::to_string(tile_row[t]) +
                           ", " + std::to_string(tile_col[t]) +
                           ") has bits for rows or columns past the matrix's " +
                           std::to_string(rows) + " x " + std::to_string(cols));
    const std::int64_t count = __builtin_popcountll(bitmap[t]);
    if (std::int64_t{tile_offset[t + 1]} - tile_offset[t] != count)
      throw invalid_matrix("tiled: " + entry_text("tile_offset", t + 1, tile_offset[t + 1]) +
                           " after " + std::to_string(tile_offset[t]) + ", but tile " +
                           std::to_string(t) + "'s bitmap has " + std::to_string(count) +
                           " entries");
  }
  const std::size_t total = tile_offset.empty() ? 0 : static_cast<std::size_t>(tile_offset.back());
  if (total != value_count)
    throw invalid_matrix("tiled: the tiles hold " + std::to_string(total) +
                         " entries but there are " + std::to_string(value_count) + " values");
}

}  // namespace detail
}  // namespace spade
