// Host conversions among csr, coo, gcoo, ellr, tiled and dense (the reference for the GPU ones).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/formats/convert.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"

namespace spade::detail {

/// One past the last row of group g (64-bit: g·p + p may pass the index type near its limit).
inline index_t group_end_row(index_t rows, index_t group_size, index_t g) {
  const std::int64_t end = (static_cast<std::int64_t>(g) + 1) * group_size;
  return static_cast<index_t>(std::min<std::int64_t>(end, rows));
}

}  // namespace spade::detail

namespace spade::host {

/// csr → coo, entries in row-major order. O(nnz).
template <scalar T>
coo<T, cpu> csr_to_coo(const csr<T, cpu>& a) {
  std::vector<index_t> row_idx(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      row_idx[k] = i;
  return coo<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_idx), a.col_idx(), a.values());
}

/// coo → csr: a stable counting sort by row, then each row sorted by column with repeated
/// positions summed in stored order. O(nnz log(max row length)), deterministic.
template <scalar T>
csr<T, cpu> coo_to_csr(const coo<T, cpu>& a) {
  const std::size_t nnz = static_cast<std::size_t>(a.nnz());
  std::vector<index_t> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (index_t r : a.row_idx())
    ++row_ptr[static_cast<std::size_t>(r) + 1];
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  std::vector<index_t> next(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<index_t> col_idx(nnz);
  std::vector<T> values(nnz);
  for (std::size_t k = 0; k < nnz; ++k) {
    const index_t slot = next[static_cast<std::size_t>(a.row_idx()[k])]++;
    col_idx[slot] = a.col_idx()[k];
    values[slot] = a.values()[k];
  }
  detail::sort_and_sum_rows(row_ptr, col_idx, values);
  return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// csr → dense in the requested layout; explicitly stored zeros become plain zeros.
template <layout Layout, scalar T>
dense<T, cpu, Layout> csr_to_dense(const csr<T, cpu>& a) {
  dense<T, cpu, Layout> d(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      d(i, a.col_idx()[k]) = a.values()[k];
  return d;
}

/// dense → csr keeping every entry that compares unequal to zero (NaN is kept, -0.0 dropped).
/// Throws invalid_matrix when the nonzeros exceed the 32-bit index type.
template <scalar T, layout Layout>
csr<T, cpu> dense_to_csr(const dense<T, cpu, Layout>& d) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(d.rows()) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  std::size_t count = 0;
  for (index_t i = 0; i < d.rows(); ++i) {
    for (index_t j = 0; j < d.cols(); ++j) {
      const T v = d.values()[d.offset(i, j)];  // in range: no check
      if (v != T(0)) {
        col_idx.push_back(j);
        values.push_back(v);
      }
    }
    count = col_idx.size();
    if (count > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
      throw invalid_matrix("dense_to_csr: more than 2^31-1 nonzeros do not fit 32-bit indices");
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(count);
  }
  return csr<T, cpu>(unchecked, d.rows(), d.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// csr → gcoo with groups of `group_size` rows. A group's entries are the csr entries of its
/// rows (already contiguous), reordered by (column, row) with one sort per group; positions
/// are unique, so the order is total and the result deterministic. O(nnz log(max group nnz))
/// time, extra memory 12 bytes per entry of the largest group. Explicit zeros are kept.
/// Throws invalid_matrix for group_size < 1.
template <scalar T>
gcoo<T, cpu> csr_to_gcoo(const csr<T, cpu>& a, index_t group_size) {
  detail::check_group_size("csr_to_gcoo", group_size);
  struct position {
    index_t col, row, source;
  };
  const index_t groups = detail::group_count(a.rows(), group_size);
  const auto nnz = static_cast<std::size_t>(a.nnz());
  std::vector<index_t> group_offsets(static_cast<std::size_t>(groups));
  std::vector<index_t> group_nnz(static_cast<std::size_t>(groups));
  std::vector<index_t> row_idx(nnz);
  std::vector<index_t> col_idx(nnz);
  std::vector<T> values(nnz);
  std::vector<position> group;
  for (index_t g = 0; g < groups; ++g) {
    const index_t first_row = g * group_size;
    const index_t end_row = detail::group_end_row(a.rows(), group_size, g);
    const index_t begin = a.row_ptr()[first_row];
    group_offsets[g] = begin;
    group_nnz[g] = a.row_ptr()[end_row] - begin;
    group.clear();
    for (index_t i = first_row; i < end_row; ++i)
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
        group.push_back({a.col_idx()[k], i, k});
    // One row is already in column order; a merge of several needs the sort.
    if (end_row - first_row > 1)
      std::sort(group.begin(), group.end(), [](const position& x, const position& y) {
        return x.col < y.col || (x.col == y.col && x.row < y.row);
      });
    for (std::size_t k = 0; k < group.size(); ++k) {
      const std::size_t out = static_cast<std::size_t>(begin) + k;
      row_idx[out] = group[k].row;
      col_idx[out] = group[k].col;
      values[out] = a.values()[group[k].source];
    }
  }
  return gcoo<T, cpu>(unchecked, a.rows(), a.cols(), group_size, std::move(values),
                      std::move(group_offsets), std::move(group_nnz), std::move(row_idx),
                      std::move(col_idx));
}

/// gcoo → csr. Each row lies in one group, whose entries are in column order for every row, so
/// a counting sort by row (stable) leaves each row's columns sorted: no comparison sort.
/// O(rows + nnz) time, no extra memory beyond the result; deterministic.
template <scalar T>
csr<T, cpu> gcoo_to_csr(const gcoo<T, cpu>& a) {
  const auto nnz = static_cast<std::size_t>(a.nnz());
  std::vector<index_t> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (index_t r : a.row_idx())
    ++row_ptr[static_cast<std::size_t>(r) + 1];
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  std::vector<index_t> next(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<index_t> col_idx(nnz);
  std::vector<T> values(nnz);
  for (std::size_t k = 0; k < nnz; ++k) {
    const index_t slot = next[static_cast<std::size_t>(a.row_idx()[k])]++;
    col_idx[slot] = a.col_idx()[k];
    values[slot] = a.values()[k];
  }
  return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// gcoo → dense in the requested layout (zero fill, then one scatter); explicitly stored zeros
/// become plain zeros. O(rows·cols + nnz).
template <layout Layout, scalar T>
dense<T, cpu, Layout> gcoo_to_dense(const gcoo<T, cpu>& a) {
  dense<T, cpu, Layout> d(a.rows(), a.cols());
  for (index_t k = 0; k < a.nnz(); ++k)
    d(a.row_idx()[k], a.col_idx()[k]) = a.values()[k];
  return d;
}

/// dense → gcoo with groups of `group_size` rows, the paper's Algorithm 1 in one pass: each
/// group's columns are walked in order and, within a column, the group's rows, so entries come
/// out in (column, row) order. Keeps every entry that compares unequal to zero (NaN kept, -0.0
/// dropped), as dense_to_csr. O(rows·cols). Throws invalid_matrix for group_size < 1 and when
/// the nonzeros exceed the 32-bit index type.
template <scalar T, layout Layout>
gcoo<T, cpu> dense_to_gcoo(const dense<T, cpu, Layout>& d, index_t group_size) {
  detail::check_group_size("dense_to_gcoo", group_size);
  const index_t groups = detail::group_count(d.rows(), group_size);
  std::vector<index_t> group_offsets(static_cast<std::size_t>(groups));
  std::vector<index_t> group_nnz(static_cast<std::size_t>(groups));
  std::vector<index_t> row_idx;
  std::vector<index_t> col_idx;
  std::vector<T> values;
  for (index_t g = 0; g < groups; ++g) {
    const index_t first_row = g * group_size;
    const index_t end_row = detail::group_end_row(d.rows(), group_size, g);
    const std::size_t begin = col_idx.size();
    for (index_t j = 0; j < d.cols(); ++j)
      for (index_t i = first_row; i < end_row; ++i) {
        const T v = d(i, j);
        if (v != T(0)) {
          row_idx.push_back(i);
          col_idx.push_back(j);
          values.push_back(v);
        }
      }
    if (col_idx.size() > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
      throw invalid_matrix("dense_to_gcoo: more than 2^31-1 nonzeros do not fit 32-bit indices");
    group_offsets[g] = static_cast<index_t>(begin);
    group_nnz[g] = static_cast<index_t>(col_idx.size() - begin);
  }
  return gcoo<T, cpu>(unchecked, d.rows(), d.cols(), group_size, std::move(values),
                      std::move(group_offsets), std::move(group_nnz), std::move(row_idx),
                      std::move(col_idx));
}

/// The same matrix in the other layout. O(rows·cols).
template <layout To, scalar T, layout From>
dense<T, cpu, To> relayout(const dense<T, cpu, From>& d) {
  if constexpr (std::is_same_v<To, From>) {
    return d;
  } else {
    dense<T, cpu, To> out(d.rows(), d.cols());
    for (index_t j = 0; j < d.cols(); ++j)
      for (index_t i = 0; i < d.rows(); ++i)
        out(i, j) = d(i, j);
    return out;
  }
}

/// csr → ellr in `layout` (spade::ellr_layout): slices planned by detail::plan_ellr_shape,
/// each row's entries copied in column order, padding zeroed. O(slots + rows log sort_window).
/// Throws out_of_memory when the padded arrays cannot be allocated.
template <scalar T>
ellr<T, cpu> csr_to_ellr(const csr<T, cpu>& a, ellr_layout layout = {}) {
  detail::check_ellr_layout("csr_to_ellr", layout);
  const auto& row_ptr = a.row_ptr();
  const auto length_of = [&](index_t r) {
    return row_ptr[static_cast<std::size_t>(r) + 1] - row_ptr[static_cast<std::size_t>(r)];
  };
  detail::ellr_shape shape = detail::plan_ellr_shape(a.rows(), layout, length_of);
  const std::int64_t slots = shape.slice_offsets.empty() ? 0 : shape.slice_offsets.back();
  std::vector<T> values;
  std::vector<index_t> col_idx;
  try {
    values.assign(static_cast<std::size_t>(slots), T(0));
    col_idx.assign(static_cast<std::size_t>(slots), 0);
  } catch (const std::bad_alloc&) {
    throw out_of_memory("csr_to_ellr: " + std::to_string(slots) + " padded slots (" +
                        std::to_string(a.nnz()) + " entries, longest row " +
                        std::to_string(shape.width) + ") do not fit in host memory");
  }
  std::vector<index_t> row_lengths(static_cast<std::size_t>(a.rows()));
  const std::int64_t height = shape.slice_height;
  for (std::int64_t q = 0; q < a.rows(); ++q) {
    const index_t r = shape.row_order.empty() ? static_cast<index_t>(q)
                                              : shape.row_order[static_cast<std::size_t>(q)];
    const index_t begin = row_ptr[static_cast<std::size_t>(r)];
    const index_t length = length_of(r);
    row_lengths[static_cast<std::size_t>(q)] = length;
    const std::int64_t base = shape.slice_offsets[static_cast<std::size_t>(q / height)];
    for (index_t k = 0; k < length; ++k) {
      const auto at =
          static_cast<std::size_t>(base + detail::ellr_slot(height, layout.lanes, q % height, k));
      values[at] = a.values()[static_cast<std::size_t>(begin + k)];
      col_idx[at] = a.col_idx()[static_cast<std::size_t>(begin + k)];
    }
  }
  return ellr<T, cpu>(unchecked, a.rows(), a.cols(), a.nnz(), shape.width, shape.slice_height,
                      layout, std::move(values), std::move(col_idx), std::move(row_lengths),
                      std::move(shape.slice_offsets), std::move(shape.row_order));
}

/// ellr → csr: row pointers from the row lengths (in row order), entries copied back.
/// O(rows + nnz).
template <scalar T>
csr<T, cpu> ellr_to_csr(const ellr<T, cpu>& a) {
  const auto rows = static_cast<std::size_t>(a.rows());
  const auto& order = a.row_order();
  const auto row_at = [&](std::size_t q) {
    return order.empty() ? q : static_cast<std::size_t>(order[q]);
  };
  std::vector<index_t> row_ptr(rows + 1, 0);
  for (std::size_t q = 0; q < rows; ++q)
    row_ptr[row_at(q) + 1] = a.row_lengths()[q];
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(static_cast<std::size_t>(a.nnz()));
  const std::int64_t height = a.slice_height();
  for (std::size_t q = 0; q < rows; ++q) {
    const std::int64_t base = a.slice_offsets()[q / static_cast<std::size_t>(height)];
    const std::int64_t i = static_cast<std::int64_t>(q) % height;
    const index_t first = row_ptr[row_at(q)];
    for (index_t k = 0; k < a.row_lengths()[q]; ++k) {
      const auto at = static_cast<std::size_t>(base + detail::ellr_slot(height, a.lanes(), i, k));
      col_idx[static_cast<std::size_t>(first + k)] = a.col_idx()[at];
      values[static_cast<std::size_t>(first + k)] = a.values()[at];
    }
  }
  if (rows == 0) row_ptr.assign(1, 0);
  return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// csr → tiled: tiles in (tile row, tile column) order, each tile's values in bit order;
/// explicit zeros kept. Each band of 8 rows is an 8-way merge of its rows by tile column: the
/// rows' columns are already sorted, so taking every row's entries of the smallest pending
/// tile column, row after row, yields that tile's values in bit order and the tiles in column
/// order without a sort. tile_offset has tiles + 1 entries, also without tiles. O(rows + nnz)
/// time (tiles ≤ nnz); no extra memory beyond the result; deterministic. The counts fit: the
/// tiles hold the csr's nnz, which fits index_t.
template <scalar T>
tiled<T, cpu> csr_to_tiled(const csr<T, cpu>& a) {
  const auto& row_ptr = a.row_ptr();
  const auto& col_idx = a.col_idx();
  std::vector<index_t> tile_row, tile_col, tile_offset{0};
  std::vector<std::uint64_t> bitmap;
  std::vector<T> values;
  values.reserve(static_cast<std::size_t>(a.nnz()));
  std::array<index_t, tile_extent> next{}, end{};
  const index_t bands = (a.rows() + tile_extent - 1) / tile_extent;
  for (index_t band = 0; band < bands; ++band) {
    const index_t first_row = band * tile_extent;
    const auto band_rows =
        static_cast<std::size_t>(std::min<index_t>(tile_extent, a.rows() - first_row));
    for (std::size_t r = 0; r < band_rows; ++r) {
      next[r] = row_ptr[static_cast<std::size_t>(first_row) + r];
      end[r] = row_ptr[static_cast<std::size_t>(first_row) + r + 1];
    }
    while (true) {
      index_t column_tile = -1;
      for (std::size_t r = 0; r < band_rows; ++r)
        if (next[r] < end[r]) {
          const index_t t = col_idx[static_cast<std::size_t>(next[r])] / tile_extent;
          if (column_tile < 0 || t < column_tile) column_tile = t;
        }
      if (column_tile < 0) break;
      std::uint64_t bits = 0;
      for (std::size_t r = 0; r < band_rows; ++r)
        for (; next[r] < end[r]; ++next[r]) {
          const index_t c = col_idx[static_cast<std::size_t>(next[r])];
          if (c / tile_extent != column_tile) break;
          bits |= std::uint64_t{1}
                  << tile_bit(static_cast<int>(r), static_cast<int>(c % tile_extent));
          values.push_back(a.values()[static_cast<std::size_t>(next[r])]);
        }
      tile_row.push_back(band);
      tile_col.push_back(column_tile);
      bitmap.push_back(bits);
      tile_offset.push_back(static_cast<index_t>(values.size()));
    }
  }
  return tiled<T, cpu>(unchecked, a.rows(), a.cols(), std::move(tile_row), std::move(tile_col),
                       std::move(tile_offset), std::move(bitmap), std::move(values));
}

/// tiled → csr: row lengths from the popcounts of each tile's bitmap bytes, then each tile's
/// rows appended to theirs. Tiles come in column order within a tile row and bits in column
/// order within a byte, so each row fills in column order without a sort. Explicit zeros kept.
/// O(rows + tiles + nnz); deterministic.
template <scalar T>
csr<T, cpu> tiled_to_csr(const tiled<T, cpu>& a) {
  const auto rows = static_cast<std::size_t>(a.rows());
  const auto tiles = static_cast<std::size_t>(a.tiles());
  std::vector<index_t> row_ptr(rows + 1, 0);
  for (std::size_t t = 0; t < tiles; ++t) {
    const auto first_row = static_cast<std::size_t>(a.tile_row()[t]) * tile_extent;
    for (std::size_t r = 0; r < tile_extent; ++r)
      if (const auto byte = static_cast<std::uint8_t>(a.bitmap()[t] >> (8 * r)); byte != 0)
        row_ptr[first_row + r + 1] += std::popcount(byte);
  }
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  std::vector<index_t> next(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<index_t> col_idx(static_cast<std::size_t>(a.nnz()));
  std::vector<T> values(static_cast<std::size_t>(a.nnz()));
  for (std::size_t t = 0; t < tiles; ++t) {
    const auto first_row = static_cast<std::size_t>(a.tile_row()[t]) * tile_extent;
    const index_t first_col = a.tile_col()[t] * tile_extent;
    // Bit order is row-major inside the tile, so the tile's values are read in sequence.
    auto from = static_cast<std::size_t>(a.tile_offset()[t]);
    for (std::uint64_t bits = a.bitmap()[t]; bits != 0; bits &= bits - 1) {
      const int bit = std::countr_zero(bits);
      const auto slot = static_cast<std::size_t>(next[first_row + bit / 8]++);
      col_idx[slot] = first_col + bit % 8;
      values[slot] = a.values()[from++];
    }
  }
  return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

// The float and double instantiations, compiled once into the library (see
// SPADE_HOST_INSTANCES in cpu/evaluate.hpp for why); SPADE_HEADER_ONLY turns this off.
#define SPADE_HOST_CONVERT_INSTANCES(PREFIX, T)                                              \
  PREFIX template coo<T, cpu> csr_to_coo<T>(const csr<T, cpu>&);                             \
  PREFIX template csr<T, cpu> coo_to_csr<T>(const coo<T, cpu>&);                             \
  PREFIX template dense<T, cpu, row_major> csr_to_dense<row_major, T>(const csr<T, cpu>&);   \
  PREFIX template dense<T, cpu, col_major> csr_to_dense<col_major, T>(const csr<T, cpu>&);   \
  PREFIX template csr<T, cpu> dense_to_csr<T, row_major>(const dense<T, cpu, row_major>&);   \
  PREFIX template csr<T, cpu> dense_to_csr<T, col_major>(const dense<T, cpu, col_major>&);   \
  PREFIX template dense<T, cpu, col_major> relayout<col_major, T, row_major>(                \
      const dense<T, cpu, row_major>&);                                                      \
  PREFIX template dense<T, cpu, row_major> relayout<row_major, T, col_major>(                \
      const dense<T, cpu, col_major>&);                                                      \
  PREFIX template gcoo<T, cpu> csr_to_gcoo<T>(const csr<T, cpu>&, index_t);                  \
  PREFIX template csr<T, cpu> gcoo_to_csr<T>(const gcoo<T, cpu>&);                           \
  PREFIX template dense<T, cpu, row_major> gcoo_to_dense<row_major, T>(const gcoo<T, cpu>&); \
  PREFIX template dense<T, cpu, col_major> gcoo_to_dense<col_major, T>(const gcoo<T, cpu>&); \
  PREFIX template gcoo<T, cpu> dense_to_gcoo<T, row_major>(const dense<T, cpu, row_major>&,  \
                                                           index_t);                         \
  PREFIX template gcoo<T, cpu> dense_to_gcoo<T, col_major>(const dense<T, cpu, col_major>&,  \
                                                           index_t);                         \
  PREFIX template ellr<T, cpu> csr_to_ellr<T>(const csr<T, cpu>&, ellr_layout);              \
  PREFIX template csr<T, cpu> ellr_to_csr<T>(const ellr<T, cpu>&);                           \
  PREFIX template tiled<T, cpu> csr_to_tiled<T>(const csr<T, cpu>&);                         \
  PREFIX template csr<T, cpu> tiled_to_csr<T>(const tiled<T, cpu>&);
#ifndef SPADE_HEADER_ONLY
SPADE_HOST_CONVERT_INSTANCES(extern, float)
SPADE_HOST_CONVERT_INSTANCES(extern, double)
#endif

}  // namespace spade::host

namespace spade::detail {

/// spade::convert<>()'s direct edges on the host (host::); formats/convert.hpp walks the
/// conversion graph and counts each edge.
template <>
struct conversion_backend<cpu> {
  template <scalar T>
  static coo<T, cpu> csr_to_coo(const csr<T, cpu>& a) {
    return host::csr_to_coo(a);
  }
  template <scalar T>
  static csr<T, cpu> coo_to_csr(const coo<T, cpu>& a) {
    return host::coo_to_csr(a);
  }
  template <layout L, scalar T>
  static dense<T, cpu, L> csr_to_dense(const csr<T, cpu>& a) {
    return host::csr_to_dense<L>(a);
  }
  template <scalar T, layout L>
  static csr<T, cpu> dense_to_csr(const dense<T, cpu, L>& d) {
    return host::dense_to_csr(d);
  }
  template <layout To, scalar T, layout From>
  static dense<T, cpu, To> relayout(const dense<T, cpu, From>& d) {
    return host::relayout<To>(d);
  }
  template <scalar T>
  static gcoo<T, cpu> csr_to_gcoo(const csr<T, cpu>& a, index_t group_size) {
    return host::csr_to_gcoo(a, group_size);
  }
  template <scalar T>
  static csr<T, cpu> gcoo_to_csr(const gcoo<T, cpu>& a) {
    return host::gcoo_to_csr(a);
  }
  template <scalar T, layout L>
  static gcoo<T, cpu> dense_to_gcoo(const dense<T, cpu, L>& d, index_t group_size) {
    return host::dense_to_gcoo(d, group_size);
  }
  template <layout L, scalar T>
  static dense<T, cpu, L> gcoo_to_dense(const gcoo<T, cpu>& a) {
    return host::gcoo_to_dense<L>(a);
  }
  template <scalar T>
  static ellr<T, cpu> csr_to_ellr(const csr<T, cpu>& a, ellr_layout layout) {
    return host::csr_to_ellr(a, layout);
  }
  template <scalar T>
  static csr<T, cpu> ellr_to_csr(const ellr<T, cpu>& a) {
    return host::ellr_to_csr(a);
  }
  template <scalar T>
  static tiled<T, cpu> csr_to_tiled(const csr<T, cpu>& a) {
    return host::csr_to_tiled(a);
  }
  template <scalar T>
  static csr<T, cpu> tiled_to_csr(const tiled<T, cpu>& a) {
    return host::tiled_to_csr(a);
  }
};

}  // namespace spade::detail
