// The picture `spade info --plot` writes: a spy plot of a matrix and its row-length histogram, as
// PNG.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <spade/spade.hpp>

namespace spade::tool {

/// A spy plot downsampled to at most `side` pixels on the longer edge (each pixel counts the
/// entries of the block of cells it covers; darker = more, on a log scale), and below it the
/// histogram of row lengths in power-of-two bins (0, 1, 2–3, 4–7, …; bar height linear in the
/// number of rows). Memory: one counter per pixel and per bin, whatever the matrix's shape.
class sparsity_plot {
 public:
  static constexpr int default_side = 512;
  static constexpr int histogram_height = 128;
  static constexpr int gap = 8;

  sparsity_plot(index_t rows, index_t cols, int side = default_side) : rows_(rows), cols_(cols) {
    const double longer = static_cast<double>(std::max<index_t>({rows, cols, 1}));
    spy_width_ = std::max(1, static_cast<int>(std::lround(side * (cols / longer))));
    spy_height_ = std::max(1, static_cast<int>(std::lround(side * (rows / longer))));
    // Never more pixels than cells: a 3x5 matrix is drawn 3x5, not stretched.
    spy_width_ = static_cast<int>(std::min<index_t>(spy_width_, std::max<index_t>(cols, 1)));
    spy_height_ = static_cast<int>(std::min<index_t>(spy_height_, std::max<index_t>(rows, 1)));
    counts_.assign(static_cast<std::size_t>(spy_width_) * static_cast<std::size_t>(spy_height_), 0);
    // A matrix smaller than the picture: each cell becomes a square of zoom_ x zoom_ pixels.
    zoom_ = std::max(1, side / std::max(spy_width_, spy_height_));
  }

  /// One stored entry at (i, j), 0 <= i < rows, 0 <= j < cols.
  void add_entry(index_t i, index_t j) {
    const auto x = static_cast<std::size_t>(static_cast<std::int64_t>(j) * spy_width_ / cols_);
    const auto y = static_cast<std::size_t>(static_cast<std::int64_t>(i) * spy_height_ / rows_);
    ++counts_[y * static_cast<std::size_t>(spy_width_) + x];
  }

  /// `count` rows of `length` entries each.
  void add_rows(std::uint64_t length, std::uint64_t count = 1) {
    const std::size_t bin = length == 0 ? 0 : static_cast<std::size_t>(std::bit_width(length));
    if (bins_.size() <= bin) bins_.resize(bin + 1, 0);
    bins_[bin] += count;
  }

  /// The spy plot's size in pixels on the picture (its counting grid times the zoom).
  int spy_width() const noexcept { return spy_width_ * zoom_; }
  int spy_height() const noexcept { return spy_height_ * zoom_; }
  /// The spy plot's counting grid: each of its cells covers rows/down x cols/across of A's.
  int spy_cells_across() const noexcept { return spy_width_; }
  int spy_cells_down() const noexcept { return spy_height_; }
  int width() const noexcept { return std::max(spy_width(), histogram_width()); }
  int height() const noexcept { return spy_height() + gap + histogram_height; }
  /// Rows per histogram bin: bin 0 holds empty rows, bin b >= 1 rows of 2^(b-1) .. 2^b - 1.
  const std::vector<std::uint64_t>& bins() const noexcept { return bins_; }
  /// Stored entries counted in the spy plot's pixel (x, y).
  std::uint64_t pixel_count(int x, int y) const {
    return counts_[static_cast<std::size_t>(y) * static_cast<std::size_t>(spy_width_) +
                   static_cast<std::size_t>(x)];
  }

  /// "0", "1", "2-3", "4-7", ...: the row lengths of histogram bin `b`.
  static std::string bin_label(std::size_t b) {
    if (b <= 1) return std::to_string(b);
    const std::uint64_t low = std::uint64_t{1} << (b - 1);
    return std::to_string(low) + "-" + std::to_string(2 * low - 1);
  }

  /// RGB pixels, row by row, top to bottom.
  std::vector<std::uint8_t> pixels() const {
    const auto w = static_cast<std::size_t>(width());
    std::vector<std::uint8_t> rgb(w * static_cast<std::size_t>(height()) * 3, 255);
    auto put = [&](int x, int y, std::array<std::uint8_t, 3> c) {
      const std::size_t at = (static_cast<std::size_t>(y) * w + static_cast<std::size_t>(x)) * 3;
      rgb[at] = c[0];
      rgb[at + 1] = c[1];
      rgb[at + 2] = c[2];
    };
    const std::uint64_t most =
        counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
    const double scale = most > 0 ? std::log1p(static_cast<double>(most)) : 1.0;
    for (int y = 0; y < spy_height_; ++y) {
      for (int x = 0; x < spy_width_; ++x) {
        const std::uint64_t c = pixel_count(x, y);
        // Any entry shows (grey 200 at most); the fullest pixel is black.
        const auto grey = static_cast<std::uint8_t>(
            c == 0 ? 255 : std::lround(200.0 * (1.0 - std::log1p(static_cast<double>(c)) / scale)));
        for (int dy = 0; dy < zoom_; ++dy)
          for (int dx = 0; dx < zoom_; ++dx)
            put(x * zoom_ + dx, y * zoom_ + dy, {grey, grey, grey});
      }
    }
    // A light frame marks the spy plot's edge when it is narrower than the picture.
    for (int y = 0; y < spy_height() && spy_width() < width(); ++y)
      put(spy_width(), y, {220, 220, 220});
    const std::uint64_t tallest = bins_.empty() ? 0 : *std::max_element(bins_.begin(), bins_.end());
    const int top = spy_height() + gap;
    const int bar = bar_width();
    for (std::size_t b = 0; b < bins_.size(); ++b) {
      if (bins_[b] == 0) continue;
      const int h = std::max(
          1, static_cast<int>(std::lround(histogram_height * static_cast<double>(bins_[b]) /
                                          static_cast<double>(tallest))));
      for (int x = static_cast<int>(b) * bar; x < (static_cast<int>(b) + 1) * bar - 1; ++x)
        for (int y = top + histogram_height - h; y < top + histogram_height; ++y)
          put(x, y, {70, 110, 170});
    }
    for (int x = 0; x < histogram_width(); ++x)  // the axis
      put(x, top + histogram_height - 1, {60, 60, 60});
    return rgb;
  }

  /// Writes the picture as an 8-bit RGB PNG; io_error naming the file when it cannot.
  void write_png(const std::filesystem::path& path) const {
    const auto w = static_cast<std::size_t>(width());
    const auto h = static_cast<std::size_t>(height());
    const std::vector<std::uint8_t> rgb = pixels();
    std::vector<std::uint8_t> raw;  // each scanline: filter type 0, then the row's bytes
    raw.reserve(h * (1 + 3 * w));
    for (std::size_t y = 0; y < h; ++y) {
      raw.push_back(0);
      raw.insert(raw.end(), rgb.begin() + static_cast<std::ptrdiff_t>(y * 3 * w),
                 rgb.begin() + static_cast<std::ptrdiff_t>((y + 1) * 3 * w));
    }
    uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
    std::vector<std::uint8_t> packed(packed_size);
    if (compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 9) !=
        Z_OK)
      throw io_error(path.string(), 0, "compressing the picture failed (zlib)");
    packed.resize(packed_size);

    std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::vector<std::uint8_t> header;
    append_u32(header, static_cast<std::uint32_t>(w));
    append_u32(header, static_cast<std::uint32_t>(h));
    header.insert(header.end(), {8, 2, 0, 0, 0});  // 8 bits, RGB, deflate, filter 0, no interlace
    append_chunk(png, "IHDR", header);
    append_chunk(png, "IDAT", packed);
    append_chunk(png, "IEND", {});
    std::ofstream out(path, std::ios::binary);
    if (!out) throw io_error(path.string(), 0, "cannot open for writing");
    out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
    if (!out) throw io_error(path.string(), 0, "writing the picture failed");
  }

 private:
  int histogram_width() const noexcept { return std::max(spy_width(), 256); }
  int bar_width() const noexcept {
    return std::max(2, histogram_width() / std::max<int>(static_cast<int>(bins_.size()), 1));
  }

  static void append_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(v >> shift));
  }
  static void append_chunk(std::vector<std::uint8_t>& png, const char (&type)[5],
                           const std::vector<std::uint8_t>& data) {
    append_u32(png, static_cast<std::uint32_t>(data.size()));
    const std::size_t type_at = png.size();
    png.insert(png.end(), type, type + 4);
    png.insert(png.end(), data.begin(), data.end());
    const uLong crc = crc32(0L, png.data() + type_at, static_cast<uInt>(4 + data.size()));
    append_u32(png, static_cast<std::uint32_t>(crc));
  }

  index_t rows_;
  index_t cols_;
  int spy_width_ = 1;
  int spy_height_ = 1;
  int zoom_ = 1;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint64_t> bins_;
};

}  // namespace spade::tool
