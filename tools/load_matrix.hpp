// Reading a matrix file for the spade tool: Matrix Market, with a progress line for big files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <spade/spade.hpp>

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
