// Helpers shared by the test suites: data and matrix locations, fresh seeds, messages.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <spade/core/error.hpp>
#include <spade/core/tuned.hpp>
#include <spade/core/tuning.hpp>

namespace spade::testing {

/// splitmix64 (Steele, Lea, Flood 2014): tiny, and a seed fixes the whole input, so a CAPTUREd
/// seed reproduces a failure.
struct splitmix64 {
  std::uint64_t state;

  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n); 0 when n is 0.
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  bool chance(double p) { return uniform() < p; }
};

/// A new seed on every call and every run: the clock, decorrelated by a counter.
inline std::uint64_t fresh_seed() {
  static std::atomic<std::uint64_t> calls{0};
  const auto now = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  splitmix64 mix{now ^ (calls.fetch_add(1) * 0xd1b54a32d192ed03ULL)};
  return mix.next();
}

/// A fresh directory named by $SPADE_CACHE_DIR (where the JIT cache and the tune files go) while
/// the object lives, `prefix` plus the process and a fresh number; removed with what is in it.
struct scratch_cache_dir {
  std::filesystem::path dir;
  explicit scratch_cache_dir(const std::string& prefix) {
    dir = std::filesystem::temp_directory_path() /
          (prefix + std::to_string(::getpid()) + "-" + std::to_string(fresh_seed() % 1000000007));
    std::filesystem::create_directories(dir);
    ::setenv("SPADE_CACHE_DIR", dir.c_str(), 1);
  }
  scratch_cache_dir(const scratch_cache_dir&) = delete;
  scratch_cache_dir& operator=(const scratch_cache_dir&) = delete;
  ~scratch_cache_dir() {
    ::unsetenv("SPADE_CACHE_DIR");
    std::error_code ec;
    // A test may have left it read-only.
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(dir, ec);
  }
};

/// A scratch $SPADE_CACHE_DIR with $SPADE_TUNE unset and no tune table remembered, while the
/// object lives (the tune files' tests).
struct scratch_tune_cache : scratch_cache_dir {
  explicit scratch_tune_cache(const std::string& prefix) : scratch_cache_dir(prefix) {
    ::unsetenv("SPADE_TUNE");
    spade::forget_tuned_tables();
  }
  ~scratch_tune_cache() {
    ::unsetenv("SPADE_TUNE");
    spade::forget_tuned_tables();
  }
};

/// Restores spade::tuning() when the scope that changed it ends, however it ends.
struct tuning_restorer {
  spade::thresholds saved = spade::tuning();
  tuning_restorer() = default;
  tuning_restorer(const tuning_restorer&) = delete;
  tuning_restorer& operator=(const tuning_restorer&) = delete;
  ~tuning_restorer() { spade::tuning() = saved; }
};

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
