// What `spade info` reports about a matrix: shape, symmetry, row lengths, band, tiles, bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include <spade/spade.hpp>

namespace spade::tool {

/// Facts about one matrix; summarize(csr) computes them in O(rows + cols + nnz) time and
/// memory, summarize_entries in O(nnz log nnz) time and O(nnz) memory.
struct matrix_summary {
  index_t rows = 0;
  index_t cols = 0;
  std::uint64_t nnz = 0;
  bool square = false;
  bool pattern_symmetric = false;
  bool value_symmetric = false;
  bool skew_symmetric = false;
  double density = 0;
  index_t row_min = 0;
  index_t row_max = 0;
  double row_mean = 0;
  double row_stddev = 0;
  index_t empty_rows = 0;
  index_t bandwidth = 0;        ///< max |i − j| over entries
  index_t lower_bandwidth = 0;  ///< max i − j over entries below the diagonal
  index_t upper_bandwidth = 0;  ///< max j − i over entries above the diagonal
  std::uint64_t tiles = 0;      ///< all 8×8 tiles, ceil(rows/8)·ceil(cols/8)
  std::uint64_t nonempty_tiles = 0;
};

inline constexpr index_t tile_edge = 8;
/// Rows per GCOO group, as in the paper's benchmarks (p = 4).
inline constexpr std::uint64_t gcoo_group_rows = 4;
/// ELLPACK-R pads its column-major arrays to whole warps of rows.
inline constexpr std::uint64_t ellr_row_padding = 32;

template <class T>
matrix_summary summarize(const csr<T, cpu>& a) {
  matrix_summary s;
  s.rows = a.rows();
  s.cols = a.cols();
  s.nnz = static_cast<std::uint64_t>(a.nnz());
  s.square = a.rows() == a.cols();
  const double cells = static_cast<double>(a.rows()) * static_cast<double>(a.cols());
  s.density = cells > 0 ? static_cast<double>(s.nnz) / cells : 0.0;
  const auto& row_ptr = a.row_ptr();
  const auto& col_idx = a.col_idx();

  double sum_sq = 0;
  s.row_min = a.rows() > 0 ? a.cols() : 0;
  for (index_t i = 0; i < a.rows(); ++i) {
    const index_t length = row_ptr[i + 1] - row_ptr[i];
    s.row_min = std::min(s.row_min, length);
    s.row_max = std::max(s.row_max, length);
    s.empty_rows += length == 0;
    sum_sq += static_cast<double>(length) * length;
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      s.lower_bandwidth = std::max(s.lower_bandwidth, i - col_idx[k]);
      s.upper_bandwidth = std::max(s.upper_bandwidth, col_idx[k] - i);
    }
  }
  s.bandwidth = std::max(s.lower_bandwidth, s.upper_bandwidth);
  if (a.rows() > 0) {
    s.row_mean = static_cast<double>(s.nnz) / a.rows();
    s.row_stddev = std::sqrt(std::max(0.0, sum_sq / a.rows() - s.row_mean * s.row_mean));
  }

  // Symmetry: build Aᵀ by a counting sort over columns (row by row, so its rows come out
  // sorted) and compare arrays; equal patterns and values mean A = Aᵀ.
  if (s.square) {
    std::vector<index_t> t_ptr(static_cast<std::size_t>(a.cols()) + 1, 0);
    for (index_t j : col_idx)
      ++t_ptr[static_cast<std::size_t>(j) + 1];
    for (std::size_t j = 0; j + 1 < t_ptr.size(); ++j)
      t_ptr[j + 1] += t_ptr[j];
    std::vector<index_t> t_col(col_idx.size());
    std::vector<T> t_val(col_idx.size());
    std::vector<index_t> next(t_ptr.begin(), t_ptr.end() - 1);
    for (index_t i = 0; i < a.rows(); ++i)
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(col_idx[k])]++);
        t_col[at] = i;
        t_val[at] = a.values()[k];
      }
    s.pattern_symmetric = (a.rows() == 0 || t_ptr == row_ptr) && t_col == col_idx;
    if (s.pattern_symmetric) {
      s.value_symmetric = t_val == a.values();
      s.skew_symmetric = true;
      for (std::size_t k = 0; k < t_val.size() && s.skew_symmetric; ++k)
        s.skew_symmetric = t_val[k] == -a.values()[k];
    }
  }

  // Non-empty 8×8 tiles: per band of 8 rows, stamp each tile column the first time it is hit.
  const auto tile_rows = (static_cast<std::uint64_t>(a.rows()) + tile_edge - 1) / tile_edge;
  const auto tile_cols = (static_cast<std::uint64_t>(a.cols()) + tile_edge - 1) / tile_edge;
  s.tiles = tile_rows * tile_cols;
  std::vector<std::uint64_t> stamp(tile_cols, 0);
  for (std::uint64_t band = 0; band < tile_rows; ++band) {
    const auto first = static_cast<index_t>(band * tile_edge);
    const index_t last = std::min<index_t>(first + tile_edge, a.rows());
    for (index_t k = row_ptr[first]; k < row_ptr[last]; ++k) {
      auto& mark = stamp[static_cast<std::size_t>(col_idx[k] / tile_edge)];
      if (mark != band + 1) {
        mark = band + 1;
        ++s.nonempty_tiles;
      }
    }
  }
  return s;
}

/// One entry of a matrix given as a list, for summarize_entries.
template <class T>
struct summary_entry {
  index_t row;
  index_t col;
  T value;
};

/// The same facts as summarize(csr) for the matrix whose entries are `entries` (in file order;
/// repeated positions are summed in that order, as the reader does), without any per-row or
/// per-column array: O(nnz log nnz) time and O(nnz) memory, whatever rows and cols claim.
template <class T>
matrix_summary summarize_entries(index_t rows, index_t cols,
                                 std::vector<summary_entry<T>> entries) {
  auto by_position = [](const summary_entry<T>& a, const summary_entry<T>& b) {
    return std::tie(a.row, a.col) < std::tie(b.row, b.col);
  };
  std::stable_sort(entries.begin(), entries.end(), by_position);
  std::size_t write = 0;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (write > 0 && entries[write - 1].row == entries[k].row &&
        entries[write - 1].col == entries[k].col)
      entries[write - 1].value += entries[k].value;
    else
      entries[write++] = entries[k];
  }
  entries.resize(write);

  matrix_summary s;
  s.rows = rows;
  s.cols = cols;
  s.nnz = entries.size();
  s.square = rows == cols;
  const double cells = static_cast<double>(rows) * static_cast<double>(cols);
  s.density = cells > 0 ? static_cast<double>(s.nnz) / cells : 0.0;

  double sum_sq = 0;
  std::uint64_t nonempty_rows = 0;
  index_t shortest = cols;
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = begin;
    while (end < entries.size() && entries[end].row == entries[begin].row)
      ++end;
    const auto length = static_cast<index_t>(end - begin);
    ++nonempty_rows;
    shortest = std::min(shortest, length);
    s.row_max = std::max(s.row_max, length);
    sum_sq += static_cast<double>(length) * length;
    begin = end;
  }
  for (const auto& e : entries) {
    s.lower_bandwidth = std::max(s.lower_bandwidth, e.row - e.col);
    s.upper_bandwidth = std::max(s.upper_bandwidth, e.col - e.row);
  }
  s.bandwidth = std::max(s.lower_bandwidth, s.upper_bandwidth);
  s.empty_rows = static_cast<index_t>(static_cast<std::uint64_t>(rows) - nonempty_rows);
  s.row_min = rows == 0 || s.empty_rows > 0 ? 0 : shortest;
  if (rows > 0) {
    s.row_mean = static_cast<double>(s.nnz) / rows;
    s.row_stddev = std::sqrt(std::max(0.0, sum_sq / rows - s.row_mean * s.row_mean));
  }

  if (s.square) {
    std::vector<summary_entry<T>> transposed(entries.size());
    for (std::size_t k = 0; k < entries.size(); ++k)
      transposed[k] = {entries[k].col, entries[k].row, entries[k].value};
    std::sort(transposed.begin(), transposed.end(), by_position);
    s.pattern_symmetric = true;
    for (std::size_t k = 0; k < entries.size() && s.pattern_symmetric; ++k)
      s.pattern_symmetric =
          transposed[k].row == entries[k].row && transposed[k].col == entries[k].col;
    if (s.pattern_symmetric) {
      s.value_symmetric = true;
      s.skew_symmetric = true;
      for (std::size_t k = 0; k < entries.size(); ++k) {
        s.value_symmetric = s.value_symmetric && transposed[k].value == entries[k].value;
        s.skew_symmetric = s.skew_symmetric && transposed[k].value == -entries[k].value;
      }
    }
  }

  const auto tile_rows = (static_cast<std::uint64_t>(rows) + tile_edge - 1) / tile_edge;
  const auto tile_cols = (static_cast<std::uint64_t>(cols) + tile_edge - 1) / tile_edge;
  s.tiles = tile_rows * tile_cols;
  std::vector<std::uint64_t> keys(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k)
    keys[k] = static_cast<std::uint64_t>(entries[k].row / tile_edge) * tile_cols +
              static_cast<std::uint64_t>(entries[k].col / tile_edge);
  std::sort(keys.begin(), keys.end());
  s.nonempty_tiles =
      static_cast<std::uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  return s;
}

/// Bytes each format needs for a matrix with these facts, with 32-bit indices and values of
/// `value_bytes` bytes. The later formats follow their papers' layouts.
struct format_bytes {
  // In double: a header may claim shapes whose dense size passes 2^64 bytes (2e9 x 2e9 in
  // double is 3.2e19); exact up to 2^53 bytes, far past any real matrix.
  double csr = 0;    ///< row pointers + (column, value) per entry
  double coo = 0;    ///< (row, column, value) per entry
  double dense = 0;  ///< every element
  double gcoo = 0;   ///< COO per group of p rows + group offsets + entries per group
  double ellr = 0;   ///< padded rows × max row length × (value + index) + row lengths
  double tiled = 0;  ///< per non-empty tile: row, column, offset, 64-bit mask; values
};

inline format_bytes bytes_of(const matrix_summary& s, std::uint64_t value_size) {
  constexpr double index_bytes = 4;
  const auto value_bytes = static_cast<double>(value_size);
  const auto rows = static_cast<double>(s.rows);
  const auto cols = static_cast<double>(s.cols);
  const auto nnz = static_cast<double>(s.nnz);
  format_bytes b;
  b.csr = (rows + 1) * index_bytes + nnz * (index_bytes + value_bytes);
  b.coo = nnz * (2 * index_bytes + value_bytes);
  b.dense = rows * cols * value_bytes;
  const auto groups = static_cast<double>(
      (static_cast<std::uint64_t>(s.rows) + gcoo_group_rows - 1) / gcoo_group_rows);
  b.gcoo = nnz * (2 * index_bytes + value_bytes) + 2 * groups * index_bytes;
  const auto padded_rows =
      static_cast<double>((static_cast<std::uint64_t>(s.rows) + ellr_row_padding - 1) /
                          ellr_row_padding * ellr_row_padding);
  b.ellr = padded_rows * static_cast<double>(s.row_max) * (value_bytes + index_bytes) +
           rows * index_bytes;
  b.tiled = static_cast<double>(s.nonempty_tiles) * (3 * index_bytes + 8) + nnz * value_bytes;
  return b;
}

}  // namespace spade::tool
