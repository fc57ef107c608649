// Reading a matrix file for the spade tool: Matrix Market, with a progress line for big files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <spade/spade.hpp>

#include "report.hpp"

namespace spade::tool {

/// Reading a big .mtx.gz takes seconds; a line on stderr says the tool is not hung.
inline constexpr std::uintmax_t progress_threshold_bytes = 50ull * 1000 * 1000;

/// read_matrix_market<T>(path, info), first saying on stderr that a file over
/// progress_threshold_bytes is being read. Throws what read_matrix_market throws.
template <scalar T>
csr<T, cpu> load_matrix(const std::filesystem::path& path, matrix_market_info* info = nullptr) {
  std::error_code size_error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  if (!size_error && file_bytes > progress_threshold_bytes)
    std::cerr << "reading " << path.string() << " (" << file_bytes / (1000 * 1000) << " MB)..."
              << std::endl;
  return read_matrix_market<T>(path, info);
}

}  // namespace spade::tool

namespace spade::tool {

/// A Matrix Market file read for `spade info`: the csr when its shape is modest, else only
/// the entries (see per_row_budget), and the counts before duplicates are summed.
struct loaded_entries {
  matrix_market_info info;
  /// Entries after symmetric expansion (array zeros skipped), before repeats are summed.
  std::uint64_t expanded_entries = 0;
  bool has_csr = false;
  csr<double, cpu> a;                             ///< when has_csr
  std::vector<detail::mm::chunk<double>> chunks;  ///< when !has_csr: the parsed entries
  detail::mm::header h;
};

/// Per-row and per-column arrays (row pointers, the transpose's pointers, tile stamps: about
/// 4·rows + 16·cols bytes) are used only while rows + cols ≤ 8·entries + 2^24; a header that
/// claims a larger shape (2e9 × 2e9 with one entry would need ~48 GB) is summarized from its
/// sorted entries instead, in O(entries) memory.
inline bool per_row_arrays_fit(const detail::mm::header& h, std::uint64_t entries) {
  const auto shape = static_cast<std::uint64_t>(h.rows) + static_cast<std::uint64_t>(h.cols);
  return shape <= 8 * entries + (std::uint64_t{1} << 24);
}

/// Reads `path` as read_matrix_market<double> does (same errors, same csr), printing progress
/// on stderr for long loads: files over progress_threshold_bytes or claiming over
/// progress_threshold_entries entries.
inline loaded_entries load_entries(const std::filesystem::path& path) {
  namespace mm = detail::mm;
  using T = double;
  constexpr std::uint64_t progress_threshold_entries = 20ull * 1000 * 1000;
  const std::string name = path.string();
  const std::string text = mm::read_file_text(path);
  loaded_entries out;
  const mm::header h = mm::parse_header(text, name);
  out.h = h;
  out.info = mm::info_of(h);
  const std::string_view data = std::string_view(text).substr(h.data_offset);
  const bool progress =
      text.size() > progress_threshold_bytes || h.entries > progress_threshold_entries;
  if (progress)
    std::cerr << "reading " << name << " (" << text.size() / (1000 * 1000) << " MB, " << h.entries
              << " entries claimed)..." << std::endl;

  // Chunks of at most 64 MB, parsed a batch of `cores` at a time so progress can be shown.
  const std::size_t cores = mm::default_chunk_count(data.size());
  const std::size_t piece_bytes = std::size_t{64} << 20;
  const std::size_t n = std::max(cores, (data.size() + piece_bytes - 1) / piece_bytes);
  const auto bounds = mm::split_at_newlines(data, n);
  auto part = [&](std::size_t k) { return data.substr(bounds[k], bounds[k + 1] - bounds[k]); };
  std::vector<mm::chunk<T>> chunks(n);
  const bool parallel = data.size() >= mm::min_parallel_bytes;
  std::uint64_t read = 0;
  for (std::size_t first = 0; first < n; first += cores) {
    const std::size_t count = std::min(cores, n - first);
    mm::run_tasks(count, parallel, [&](std::size_t k) {
      mm::parse_chunk(h, part(first + k), data.size(), h.entries, chunks[first + k]);
    });
    for (std::size_t k = first; k < first + count; ++k)
      read += chunks[k].entries;
    if (progress && first + count < n)
      std::cerr << "  read " << fixed(static_cast<double>(read) / 1e6, 1) << " M of "
                << fixed(static_cast<double>(h.entries) / 1e6, 1) << " M entries" << std::endl;
  }

  // Errors exactly as mm::parse_text reports them.
  mm::throw_first_error(h, chunks, data, part, name);
  mm::for_each_entry(h, chunks, [&](index_t, index_t, T) { ++out.expanded_entries; });
  const std::uint64_t max_entries = std::numeric_limits<index_t>::max();
  if (out.expanded_entries > max_entries)
    throw io_error(name, h.size_line,
                   "the matrix has " + std::to_string(out.expanded_entries) +
                       " entries after symmetric expansion, too many for the 32-bit index type "
                       "(at most " +
                       std::to_string(max_entries) + ")");
  if (per_row_arrays_fit(h, out.expanded_entries)) {
    out.a = mm::assemble(h, chunks, name, parallel ? cores : 1, max_entries);
    out.has_csr = true;
  } else {
    out.chunks = std::move(chunks);
  }
  return out;
}

}  // namespace spade::tool
