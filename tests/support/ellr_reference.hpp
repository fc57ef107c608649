// The ellr layout by definition: the one reference the cpu and gpu ellr suites check against.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <spade/spade.hpp>

namespace spade::testing {

template <class T>
index_t row_length(const csr<T, cpu>& a, index_t r) {
  return a.row_ptr()[static_cast<std::size_t>(r) + 1] - a.row_ptr()[static_cast<std::size_t>(r)];
}

template <class T>
index_t longest_row(const csr<T, cpu>& a) {
  index_t widest = 0;
  for (index_t r = 0; r < a.rows(); ++r)
    widest = std::max(widest, row_length(a, r));
  return widest;
}

/// The arrays an ellr must hold, built from the layout's definition in ellr.hpp rather than from
/// the library's code: positions sorted by length inside each sort window with buckets keyed
/// longest first, each filled in row order (a stable sort by length without calling a sort).
template <class T>
struct expected_ellr {
  index_t slice_height = 0;
  index_t width = 0;
  std::vector<index_t> row_order, row_lengths, col_idx;
  std::vector<std::int64_t> slice_offsets;
  std::vector<T> values;
};

template <class T>
expected_ellr<T> ellr_by_definition(const csr<T, cpu>& a, ellr_layout layout) {
  const index_t rows = a.rows();
  expected_ellr<T> e;
  e.slice_height = layout.slice_height > 0
                       ? layout.slice_height
                       : std::max<index_t>(32, static_cast<index_t>((rows + 31) / 32 * 32));
  if (rows == 0) return e;
  std::vector<index_t> at(static_cast<std::size_t>(rows));
  for (index_t q = 0; q < rows; ++q)
    at[static_cast<std::size_t>(q)] = q;
  if (layout.slice_height > 0 && layout.sort_window > layout.slice_height) {
    for (index_t first = 0; first < rows; first += layout.sort_window) {
      const index_t last = std::min(rows, first + layout.sort_window);
      std::map<index_t, std::vector<index_t>, std::greater<>> by_length;
      for (index_t r = first; r < last; ++r)
        by_length[row_length(a, r)].push_back(r);
      index_t q = first;
      for (const auto& [length, bucket] : by_length)
        for (const index_t r : bucket)
          at[static_cast<std::size_t>(q++)] = r;
    }
    e.row_order = at;
  }
  const index_t h = e.slice_height;
  const index_t slices = (rows + h - 1) / h;
  e.slice_offsets.push_back(0);
  for (index_t s = 0; s < slices; ++s) {
    index_t widest = 0;
    for (index_t q = s * h; q < std::min(rows, (s + 1) * h); ++q)
      widest = std::max(widest, row_length(a, at[static_cast<std::size_t>(q)]));
    e.width = std::max(e.width, widest);
    // Each slice's width rounded up to whole groups of `lanes` entries.
    const index_t groups = (widest + layout.lanes - 1) / layout.lanes;
    e.slice_offsets.push_back(e.slice_offsets.back() + std::int64_t{groups} * layout.lanes * h);
  }
  e.values.assign(static_cast<std::size_t>(e.slice_offsets.back()), T(0));
  e.col_idx.assign(static_cast<std::size_t>(e.slice_offsets.back()), 0);
  for (index_t q = 0; q < rows; ++q) {
    const index_t r = at[static_cast<std::size_t>(q)];
    e.row_lengths.push_back(row_length(a, r));
    for (index_t k = 0; k < row_length(a, r); ++k) {
      // Group k / lanes of the slice holds every row's entries of that group, `lanes` apiece.
      const std::int64_t group_start = std::int64_t{k / layout.lanes} * h * layout.lanes;
      const auto slot =
          static_cast<std::size_t>(e.slice_offsets[static_cast<std::size_t>(q / h)] + group_start +
                                   (q % h) * layout.lanes + k % layout.lanes);
      const auto from = static_cast<std::size_t>(a.row_ptr()[static_cast<std::size_t>(r)] + k);
      e.values[slot] = a.values()[from];
      e.col_idx[slot] = a.col_idx()[from];
    }
  }
  return e;
}

}  // namespace spade::testing
