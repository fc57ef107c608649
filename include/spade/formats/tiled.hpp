// spade::tiled: 8×8 bitmap tiles stored COO-style (paper 002, tSparse), in either space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/expression.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"
#include "spade/formats/validate.hpp"

namespace spade {

/// Rows and columns of one tile: 8×8 fits a 64-bit bitmap and Hopper's fp64 tensor-core
/// shape (m8n8k4), whose 8×8 accumulator is exactly one tile of C.
inline constexpr index_t tile_extent = 8;

/// The bit of a tile's bitmap that stands for local row `r` and local column `c` (row-major:
/// byte r of the bitmap is row r of the tile).
constexpr int tile_bit(int r, int c) noexcept {
  return r * 8 + c;
}

/// A rows × cols sparse matrix cut into 8×8 tiles; only tiles holding entries are stored.
/// Tile t covers rows 8·tile_row[t] … +7 and columns 8·tile_col[t] … +7; bit tile_bit(r, c)
/// of bitmap[t] is set when its local (r, c) holds an entry; its entries are values
/// [tile_offset[t], tile_offset[t + 1]) in bit order (row-major inside the tile). Invariants:
/// tiles strictly increasing by (tile row, tile column), no empty bitmap, no bit past the
/// matrix's edge, tile_offset from 0 in steps of the bitmaps' popcounts (tiles + 1 entries; a
/// matrix with no tiles may hold none). Explicit zeros are kept. Value type: copies are deep.
template <scalar T, space Space = gpu>
class tiled {
 public:
  using value_type = T;
  using space_type = Space;

  tiled() = default;
  /// Evaluates an expression (spade/eval) and stores the result as tiles.
  template <expression E>
  tiled(const E& e) {
    assign_expression(*this, e);
  }
  template <expression E>
  tiled& operator=(const E& e) {
    assign_expression(*this, e);
    return *this;
  }

  /// From host arrays (uploaded for a gpu matrix). Throws invalid_matrix naming the first
  /// tile that breaks an invariant.
  tiled(index_t rows, index_t cols, std::vector<index_t> tile_row, std::vector<index_t> tile_col,
        std::vector<index_t> tile_offset, std::vector<std::uint64_t> bitmap,
        std::vector<T> values) {
    detail::check_tiled(rows, cols, tile_row, tile_col, tile_offset, bitmap, values.size());
    rows_ = rows;
    cols_ = cols;
    tile_row_ = storage<index_t, Space>(std::move(tile_row));
    tile_col_ = storage<index_t, Space>(std::move(tile_col));
    tile_offset_ = storage<index_t, Space>(std::move(tile_offset));
    bitmap_ = storage<std::uint64_t, Space>(std::move(bitmap));
    values_ = storage<T, Space>(std::move(values));
  }
  /// Takes arrays the caller guarantees to satisfy the invariants (conversions, kernels).
  tiled(unchecked_t, index_t rows, index_t cols, storage<index_t, Space> tile_row,
        storage<index_t, Space> tile_col, storage<index_t, Space> tile_offset,
        storage<std::uint64_t, Space> bitmap, storage<T, Space> values)
      : rows_(rows),
        cols_(cols),
        tile_row_(std::move(tile_row)),
        tile_col_(std::move(tile_col)),
        tile_offset_(std::move(tile_offset)),
        bitmap_(std::move(bitmap)),
        values_(std::move(values)) {}

  index_t rows() const noexcept { return rows_; }
  index_t cols() const noexcept { return cols_; }
  index_t nnz() const noexcept { return static_cast<index_t>(values_.size()); }
  /// Stored (non-empty) tiles.
  index_t tiles() const noexcept { return static_cast<index_t>(bitmap_.size()); }
  /// Tiles down and across the whole matrix (the last ones partial when 8 does not divide).
  index_t tile_rows() const noexcept { return (rows_ + tile_extent - 1) / tile_extent; }
  index_t tile_cols() const noexcept { return (cols_ + tile_extent - 1) / tile_extent; }
  /// Entries per stored tile (the paper's bitmap density; 0 without tiles).
  double mean_fill() const noexcept {
    return tiles() > 0 ? static_cast<double>(nnz()) / static_cast<double>(tiles()) : 0.0;
  }

  const storage<index_t, Space>& tile_row() const noexcept { return tile_row_; }
  const storage<index_t, Space>& tile_col() const noexcept { return tile_col_; }
  const storage<index_t, Space>& tile_offset() const noexcept { return tile_offset_; }
  const storage<std::uint64_t, Space>& bitmap() const noexcept { return bitmap_; }
  const storage<T, Space>& values() const noexcept { return values_; }
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
  storage<index_t, Space> tile_row_;
  storage<index_t, Space> tile_col_;
  storage<index_t, Space> tile_offset_;
  storage<std::uint64_t, Space> bitmap_;
  storage<T, Space> values_;
  mutable conversion_cache cache_;
};

}  // namespace spade
