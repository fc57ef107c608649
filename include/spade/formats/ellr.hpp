// spade::ellr: ELLPACK-R (paper 003) and its sliced, length-sorted form, in either space.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/expression.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"
#include "spade/core/tuning.hpp"
#include "spade/formats/validate.hpp"

namespace spade {

/// How an ellr lays out its rows. `slice_height` 0: the paper's ELLPACK-R, one slice as tall
/// as the matrix (rows rounded up to 32, so every column of the padded block starts on a
/// 128-byte boundary). Otherwise SELL-C-σ: slices of `slice_height` rows, each as wide as its
/// own longest row, after the rows inside each window of `sort_window` rows were sorted by
/// length, longest first. sort_window is 0 or 1 (no sorting) or a multiple of slice_height
/// (equal to it: no sorting either). `lanes` (1, 2, 4, 8, 16 or 32): a row's entries are
/// stored in groups of `lanes` side by side, so the `lanes` threads ELLR-T gives one row read
/// one contiguous run per step, as one thread per row does with lanes = 1 (the paper's
/// column-major layout); each slice's width is rounded up to a multiple of `lanes`.
struct ellr_layout {
  index_t slice_height = 0;
  index_t sort_window = 0;
  index_t lanes = 1;
  friend bool operator==(const ellr_layout&, const ellr_layout&) = default;
};

namespace detail {

/// The longest sort window a conversion takes: the GPU sorts each window inside one thread
/// block (256 threads × 8 keys).
inline constexpr index_t ellr_max_sort_window = 2048;
/// The most threads ELLR-T gives one row (a warp), and so the most lanes a layout interleaves.
inline constexpr index_t ellr_max_lanes = 32;

/// Where entry k of the row at local position i of a slice lies, counted from the slice's
/// start: groups of `lanes` consecutive entries side by side, the slice's rows one group after
/// another (lanes = 1: column-major, entry k of every row adjacent).
constexpr std::int64_t ellr_slot(std::int64_t height, std::int64_t lanes, std::int64_t i,
                                 std::int64_t k) {
  return (k / lanes) * height * lanes + i * lanes + k % lanes;
}

/// ELLR-T's threads per row for `rows` rows of `mean` entries on a device of
/// `resident_threads` (measured on an H100, docs/benchmarks/ellr.md): doubled while the
/// threads stay within spade::tuning().ellr_lanes_max_resident_share (3/4) of the resident ones
/// and under the mean row length rounded up to a power of two (small matrices are latency-bound:
/// more threads per row shorten each row's chain of dependent loads); then doubled while each
/// thread still walks ellr_lanes_min_entries_per_lane (32) entries or more.
inline index_t ellr_threads_per_row(std::int64_t rows, double mean, std::int64_t resident_threads) {
  const auto& tune = tuning();
  index_t t = 1;
  while (t < ellr_max_lanes &&
         static_cast<double>(rows * (2 * t)) <=
             static_cast<double>(resident_threads) * tune.ellr_lanes_max_resident_share &&
         t < mean)
    t *= 2;
  while (t < ellr_max_lanes && mean / t >= tune.ellr_lanes_min_entries_per_lane)
    t *= 2;
  return t;
}

/// Most columns of X one ellr_spmm pass takes: 8 summed by one thread, 16 or 32 only split
/// over 2 or 4 threads of at most 8 each (column_groups).
inline constexpr int ellr_max_split_vectors = 32;

/// Sums one pass of ellr_spmm carries for X of `vectors` columns (1 to ellr_max_split_vectors):
/// 1, 2, 4, 8, 16 or 32, the kernel's register tiles over its column groups; a narrower X
/// leaves the rest of its pass idle.
inline int ellr_pass_vectors(int vectors) {
  return vectors <= 1    ? 1
         : vectors <= 2  ? 2
         : vectors <= 4  ? 4
         : vectors <= 8  ? 8
         : vectors <= 16 ? 16
                         : 32;
}

/// Whether ellr_spmm can split X's `vectors` columns over `column_groups` threads at
/// `threads_per_row` threads per row: groups of 1, 2 or 4, each summing at most 8 columns of
/// the pass and, when split, at least 2, with the row's threads still sharing a warp.
inline bool ellr_split_possible(int threads_per_row, int column_groups, int vectors) {
  if (column_groups != 1 && column_groups != 2 && column_groups != 4) return false;
  if (vectors > ellr_max_split_vectors) return false;
  const int piece = ellr_pass_vectors(vectors) / column_groups;
  return piece <= 8 && (column_groups == 1 || piece >= 2) &&
         threads_per_row * column_groups <= ellr_max_lanes;
}

/// Threads that split one row's columns of X past 8 columns when ellr_spmm chooses them: one for
/// every 8 of the pass (2 for 9–16 columns, 4 for 17–32), the fewest that hold them, except
/// double at 9–16 columns, 4 threads of 4 where the row's threads stay within a warp: 8 doubles a
/// thread cost registers and occupancy (H200, 22 real matrices at N = 16: best cuSPARSE /
/// ellr_spmm geomean 1.094 against 0.980 with 2 threads of 8;
/// docs/benchmarks/spmm-ellr-16-2026-11-29.md).
inline int ellr_wide_column_groups(int threads_per_row, int vectors, bool fp64) {
  const int pass = ellr_pass_vectors(vectors);
  if (fp64 && pass == 16 && 4 * threads_per_row <= ellr_max_lanes) return 4;
  return pass / 8;
}

/// Threads per row ellr_spmm runs past 8 columns when the caller gives none, from `lanes` (the
/// layout's, or detail::ellr_threads_per_row's) and `column_groups` threads a row for X's
/// columns: at most a warp over the groups, halved where each thread then still has few
/// entries to walk: on a matrix of at least spade::tuning().ellr_wide_half_threads_min_rows
/// (6000) rows, from 4 threads a row (never below 2), while rows of `mean` entries leave each
/// at most ellr_wide_half_max_entries_per_thread (16). There each thread's 4–8 sums pay for the
/// longer walk; smaller matrices stay latency-bound, and long rows of random columns (the
/// paper's squares, 70–1400 a row) ran up to 1.35× slower in double when halved.
inline int ellr_wide_threads_per_row(int lanes, int column_groups, std::int64_t rows, double mean) {
  const auto& t = tuning();
  int threads = std::max(1, std::min(lanes, static_cast<int>(ellr_max_lanes) / column_groups));
  if (rows >= t.ellr_wide_half_threads_min_rows && threads >= 4 &&
      mean <= t.ellr_wide_half_max_entries_per_thread * (threads / 2))
    threads /= 2;
  return threads;
}

/// ellr_spmm's launch past 8 columns when the caller gives no threads per row: the column groups
/// asked for (0: ellr_wide_column_groups' own) and ellr_wide_threads_per_row's threads for them.
/// The kernel runs it and the planner's explain names it, so both read it from here.
struct ellr_wide_launch {
  int column_groups = 0;
  int threads_per_row = 0;
};
inline ellr_wide_launch ellr_wide_default_launch(int lanes, int vectors, bool fp64,
                                                 std::int64_t rows, double mean,
                                                 int column_groups = 0) {
  const int groups = column_groups > 0 ? column_groups : ellr_wide_column_groups(1, vectors, fp64);
  return {groups, ellr_wide_threads_per_row(lanes, groups, rows, mean)};
}

/// Threads that split one row's columns of X when ellr_spmm runs with `threads_per_row` threads
/// per row on X of `vectors` columns (`wide_rows`: row-major, rows of whole 16-byte vectors;
/// `fp64`: of double). Up to 8 columns: 2, each summing 4 columns, for 8 columns at up to
/// spade::tuning().ellr_split_max_threads_per_row (1) thread per row in float and
/// ellr_split_max_threads_per_row_fp64 (16) in double, else 1. Each thread then carries half the
/// sums and reads half of each X row, its neighbour the other half of the same row
/// (H200, docs/benchmarks/spmm-ellr-split-2026-11-29.md: at one thread per row faster on every
/// matrix in both precisions; at 2–16 threads per row faster in double and not in float; slower
/// at 3–7 columns). Past 8 columns a split is the only way: ellr_wide_column_groups.
inline int ellr_column_groups(int threads_per_row, int vectors, bool wide_rows, bool fp64) {
  if (vectors > 8) return ellr_wide_column_groups(threads_per_row, vectors, fp64);
  const auto& t = tuning();
  const int most = fp64 ? t.ellr_split_max_threads_per_row_fp64 : t.ellr_split_max_threads_per_row;
  // A row's threads, split, must still share a warp, whatever the tuning says.
  return wide_rows && vectors == 8 && threads_per_row <= most &&
                 2 * threads_per_row <= ellr_max_lanes
             ? 2
             : 1;
}

/// Throws invalid_matrix unless `layout` is one a conversion can make (`call` names it).
inline void check_ellr_layout(const char* call, const ellr_layout& layout) {
  const std::string where = std::string(call) + ": ";
  if (layout.lanes < 1 || layout.lanes > ellr_max_lanes || (layout.lanes & (layout.lanes - 1)) != 0)
    throw invalid_matrix(where + std::to_string(layout.lanes) +
                         " lanes; choose 1, 2, 4, 8, 16 or 32");
  if (layout.slice_height < 0 || layout.sort_window < 0)
    throw invalid_matrix(where + "negative slice height " + std::to_string(layout.slice_height) +
                         " or sort window " + std::to_string(layout.sort_window));
  if (layout.sort_window <= 1) return;
  if (layout.slice_height == 0)
    throw invalid_matrix(where + "sort window " + std::to_string(layout.sort_window) +
                         " without a slice height: the paper's layout keeps rows in order");
  if (layout.sort_window % layout.slice_height != 0 || layout.sort_window > ellr_max_sort_window)
    throw invalid_matrix(where + "sort window " + std::to_string(layout.sort_window) +
                         " must be a multiple of the slice height " +
                         std::to_string(layout.slice_height) + " and at most " +
                         std::to_string(ellr_max_sort_window));
}

/// Rows per slice for `layout`: the paper's layout rounds the rows up to 32 (aligned columns).
inline index_t ellr_slice_height(index_t rows, const ellr_layout& layout) {
  if (layout.slice_height > 0) return layout.slice_height;
  const std::int64_t rounded = std::max<std::int64_t>(32, (std::int64_t{rows} + 31) / 32 * 32);
  return rounded > 2147483647 ? rows : static_cast<index_t>(rounded);
}

/// Whether `layout` reorders rows (a sort window longer than one slice).
inline bool ellr_sorts(const ellr_layout& layout) {
  return layout.slice_height > 0 && layout.sort_window > layout.slice_height;
}

/// Where each row goes and how wide each slice is, from the row lengths (the host reference
/// of the GPU conversion, and the planner's padding estimate).
struct ellr_shape {
  index_t slice_height = 0;
  std::vector<index_t> row_order;           ///< empty: position q holds row q
  std::vector<std::int64_t> slice_offsets;  ///< slices + 1 entries; none for no rows
  index_t width = 0;
  std::int64_t nnz = 0;
  double padding() const {
    const std::int64_t slots = slice_offsets.empty() ? 0 : slice_offsets.back();
    return slots > 0 ? 1.0 - static_cast<double>(nnz) / static_cast<double>(slots) : 0.0;
  }
};

/// The shape of `rows` rows of lengths length_of(r) under `layout`. Sorting is stable,
/// longest first, inside each window of sort_window rows.
template <class LengthOf>
ellr_shape plan_ellr_shape(index_t rows, const ellr_layout& layout, LengthOf&& length_of) {
  ellr_shape shape;
  shape.slice_height = ellr_slice_height(rows, layout);
  if (rows == 0) return shape;
  if (ellr_sorts(layout)) {
    shape.row_order.resize(static_cast<std::size_t>(rows));
    std::iota(shape.row_order.begin(), shape.row_order.end(), index_t{0});
    for (std::int64_t first = 0; first < rows; first += layout.sort_window) {
      const std::int64_t last = std::min<std::int64_t>(rows, first + layout.sort_window);
      std::stable_sort(shape.row_order.begin() + first, shape.row_order.begin() + last,
                       [&](index_t a, index_t b) { return length_of(a) > length_of(b); });
    }
  }
  const auto row_at = [&](std::int64_t q) {
    return shape.row_order.empty() ? static_cast<index_t>(q)
                                   : shape.row_order[static_cast<std::size_t>(q)];
  };
  const std::int64_t height = shape.slice_height;
  const std::int64_t slices = (rows + height - 1) / height;
  shape.slice_offsets.assign(static_cast<std::size_t>(slices) + 1, 0);
  for (std::int64_t s = 0; s < slices; ++s) {
    index_t widest = 0;
    for (std::int64_t q = s * height; q < std::min<std::int64_t>(rows, (s + 1) * height); ++q) {
      const index_t length = length_of(row_at(q));
      widest = std::max(widest, length);
      shape.nnz += length;
    }
    shape.width = std::max(shape.width, widest);
    const std::int64_t padded_width =
        (std::int64_t{widest} + layout.lanes - 1) / layout.lanes * layout.lanes;
    shape.slice_offsets[static_cast<std::size_t>(s) + 1] =
        shape.slice_offsets[static_cast<std::size_t>(s)] + padded_width * height;
  }
  return shape;
}

}  // namespace detail

/// A rows × cols sparse matrix as padded column-major slices plus row lengths (ELLPACK-R).
/// Rows are stored at positions 0 … rows−1; position q holds row row_order[q] (row q itself
/// when row_order is empty). Position q lies in slice s = q / slice_height at local row
/// i = q mod slice_height; its k-th entry (k < row_lengths[q]) sits at slice_offsets[s] +
/// detail::ellr_slot(slice_height, lanes, i, k) of values and col_idx — k·slice_height + i for
/// one lane — in increasing column order.
/// Slots past a row's length are padding (value 0, column 0) that kernels never read: each
/// thread stops at its own row's length (the "-R" of ELLPACK-R). Value type: copies are deep.
template <scalar T, space Space = gpu>
class ellr {
 public:
  using value_type = T;
  using space_type = Space;

  ellr() = default;
  /// Evaluates an expression (spade/eval) and stores the result as the paper's ELLPACK-R.
  template <expression E>
  ellr(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  ellr& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }

  /// The paper's arrays from the host (uploaded for a gpu matrix): `values` and `col_idx`
  /// are rows × width column-major (entry k of row r at k·rows + r), `row_lengths` has one
  /// entry per row. Throws invalid_matrix naming the first entry that breaks an invariant
  /// (length out of [0, width], column out of range or not increasing within its row).
  ellr(index_t rows, index_t cols, index_t width, std::vector<T> values,
       std::vector<index_t> col_idx, std::vector<index_t> row_lengths) {
    detail::check_ellr(rows, cols, width, values.size(), col_idx, row_lengths);
    std::int64_t nnz = 0;
    for (const index_t length : row_lengths)
      nnz += length;
    rows_ = rows;
    cols_ = cols;
    nnz_ = static_cast<index_t>(nnz);
    width_ = width;
    slice_height_ = rows;
    layout_ = ellr_layout{};
    values_ = storage<T, Space>(std::move(values));
    col_idx_ = storage<index_t, Space>(std::move(col_idx));
    row_lengths_ = storage<index_t, Space>(std::move(row_lengths));
    if (rows > 0)
      slice_offsets_ = storage<std::int64_t, Space>(
          std::vector<std::int64_t>{0, static_cast<std::int64_t>(rows) * width});
  }
  /// Takes arrays the caller guarantees to satisfy the invariants (conversions).
  ellr(unchecked_t, index_t rows, index_t cols, index_t nnz, index_t width, index_t slice_height,
       ellr_layout layout, storage<T, Space> values, storage<index_t, Space> col_idx,
       storage<index_t, Space> row_lengths, storage<std::int64_t, Space> slice_offsets,
       storage<index_t, Space> row_order)
      : rows_(rows),
        cols_(cols),
        nnz_(nnz),
        width_(width),
        slice_height_(slice_height),
        layout_(layout),
        values_(std::move(values)),
        col_idx_(std::move(col_idx)),
        row_lengths_(std::move(row_lengths)),
        slice_offsets_(std::move(slice_offsets)),
        row_order_(std::move(row_order)) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  /// Stored entries (padding not counted).
  index_t nnz() const noexcept { return nnz_; }
  /// The longest row.
  index_t width() const noexcept { return width_; }
  /// Rows per slice (the whole padded matrix for the paper's layout).
  index_t slice_height() const noexcept { return slice_height_; }
  index_t slices() const noexcept {
    return slice_height_ > 0 ? (rows_ + slice_height_ - 1) / slice_height_ : 0;
  }
  /// What the conversion was asked for.
  ellr_layout layout() const noexcept { return layout_; }
  /// Entries of a row stored side by side (ellr_layout::lanes).
  index_t lanes() const noexcept { return layout_.lanes; }
  /// Slots including padding (the size of values and col_idx).
  std::int64_t padded_size() const noexcept { return static_cast<std::int64_t>(col_idx_.size()); }
  /// Share of the slots that are padding (0 for no slots).
  double padding() const noexcept {
    return padded_size() > 0 ? 1.0 - static_cast<double>(nnz_) / static_cast<double>(padded_size())
                             : 0.0;
  }

  const storage<T, Space>& values() const noexcept { return values_; }
  const storage<index_t, Space>& col_idx() const noexcept { return col_idx_; }
  const storage<index_t, Space>& row_lengths() const noexcept { return row_lengths_; }
  /// slices() + 1 entries (none for no rows): where each slice starts in values and col_idx,
  /// then the total.
  const storage<std::int64_t, Space>& slice_offsets() const noexcept { return slice_offsets_; }
  /// The row stored at each position; empty when position q holds row q.
  const storage<index_t, Space>& row_order() const noexcept { return row_order_; }
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
  index_t nnz_ = 0;
  index_t width_ = 0;
  index_t slice_height_ = 0;
  ellr_layout layout_{};
  storage<T, Space> values_;
  storage<index_t, Space> col_idx_;
  storage<index_t, Space> row_lengths_;
  storage<std::int64_t, Space> slice_offsets_;
  storage<index_t, Space> row_order_;
  mutable conversion_cache cache_;
};

}  // namespace spade
