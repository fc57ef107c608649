// Run-time compiled kernels (NVRTC, defined in lib/jit): compile, cache in memory and on disk,
// launch; and the counters and cache directory users and tests can read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spade/core/context.hpp"
#include "spade/core/tuned.hpp"

namespace spade {

/// What the kernel cache did in this process since it started (or since the last reset).
struct jit_statistics {
  std::uint64_t compiled = 0;       ///< sources compiled by NVRTC
  std::uint64_t memory_hits = 0;    ///< launches of a kernel already loaded in this process
  std::uint64_t disk_hits = 0;      ///< kernels loaded from the disk cache without compiling
  std::uint64_t disk_writes = 0;    ///< cache files written
  std::uint64_t disk_rejected = 0;  ///< cache files found corrupt or stale, then recompiled
  std::uint64_t disk_failures = 0;  ///< cache files that could not be written (e.g. read-only)
  std::uint64_t launches = 0;       ///< kernels launched through the cache
};

/// The counters of this process.
jit_statistics jit_stats() noexcept;
/// Sets every counter back to 0.
void reset_jit_stats() noexcept;

/// The directory compiled kernels are cached in: spade::cache_directory() ($SPADE_CACHE_DIR,
/// else $XDG_CACHE_HOME/spade, else $HOME/.cache/spade, read at each use, so a program may change
/// it); "" when none of these is set. A directory that cannot be created or written only
/// disables the disk cache. The tune files of `spade tune` live there too (core/tuned.hpp).
inline std::string jit_cache_directory() {
  return cache_directory();
}

/// Unloads the kernels this process loaded (the disk cache stays): the next use of each reads
/// the disk cache, or compiles. For tests and for programs that generate many one-off kernels.
void jit_forget_loaded_kernels();

namespace device {

/// Where a kernel came from.
enum class jit_origin { memory, disk, compiled };

/// "in memory", "from the disk cache", "compiled".
inline const char* jit_origin_text(jit_origin origin) noexcept {
  switch (origin) {
    case jit_origin::memory:
      return "in memory";
    case jit_origin::disk:
      return "from the disk cache";
    case jit_origin::compiled:
      return "compiled";
  }
  return "?";
}

/// Finds the kernel `entry` of CUDA source `source` for ctx's device — loaded already, in the
/// disk cache, or compiled now with NVRTC (then written to the disk cache atomically; a corrupt
/// or stale file is recompiled and replaced) — and launches it on ctx's stream with
/// `grid` × `block` threads and the kernel arguments `args`. Throws cuda_error carrying
/// NVRTC's log when the source does not compile, and cuda_error when the launch fails.
jit_origin jit_launch(context& ctx, const std::string& source, const char* entry, unsigned grid,
                      unsigned block, void** args);

/// Where `source` would come from on a device of compute capability `arch` (e.g. 90): memory,
/// disk or compiled. Loads and compiles nothing.
jit_origin jit_lookup(const std::string& source, int arch);

/// Compiles `source` for compute capability `arch` through the disk cache, without a device and
/// without loading it: returns where the binary came from (disk or compiled) and its size in
/// `binary_bytes`. Throws cuda_error with NVRTC's log on a compile error.
jit_origin jit_compile(const std::string& source, int arch, std::size_t* binary_bytes = nullptr);

/// The key of `source` in the caches (a hash of the source, the architecture and the NVRTC
/// version), as it appears in the cache file's name.
std::string jit_key(const std::string& source, int arch);

}  // namespace device

}  // namespace spade
