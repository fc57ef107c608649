// Helpers shared by the test suites: where the data lives, which real matrices exist, messages.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <spade/core/error.hpp>

namespace spade::testing {

/// tests/data in the source tree.
inline std::filesystem::path data_dir() {
  return SPADE_TEST_DATA_DIR;
}

/// Every real matrix (*.mtx.gz) of $SPADE_MATRIX_DIR, else of ../shared/matrices, sorted by
/// name. When neither exists the bundled tests/data/matrices stand in, so a clone without
/// shared/ still checks real files.
inline std::vector<std::filesystem::path> real_matrices() {
  std::filesystem::path dir = SPADE_TEST_MATRIX_DIR;
  if (const char* env = std::getenv("SPADE_MATRIX_DIR")) dir = env;
  if (!std::filesystem::is_directory(dir)) dir = data_dir() / "matrices";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".mtx.gz") || name.ends_with(".mtx")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The message of the spade::invalid_matrix that f() throws (a marker text when none is thrown).
template <class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const invalid_matrix& e) {
    return e.what();
  }
  return "<no invalid_matrix thrown>";
}

}  // namespace spade::testing
