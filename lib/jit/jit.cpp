// The run-time kernel cache: NVRTC compiles generated CUDA source to a cubin for the device's
// architecture; cubins are kept on disk (one file per source, written atomically) and loaded
// kernels in memory; launches go through the CUDA runtime's library API (no libcuda link).
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "detail/cuda_check.hpp"
#include "spade/core/error.hpp"
#include "spade/device/jit.hpp"

namespace spade {

namespace {

struct counters {
  std::atomic<std::uint64_t> compiled{0}, memory_hits{0}, disk_hits{0}, disk_writes{0},
      disk_rejected{0}, disk_failures{0}, launches{0};
};
counters& stats() {
  static counters c;
  return c;
}

std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string nvrtc_version_text() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "nvrtc";
  return "nvrtc" + std::to_string(major) + "." + std::to_string(minor);
}

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// ---- the disk cache ------------------------------------------------------------------------
// A file holds: a magic line, the source's and the cubin's sizes, a checksum of the cubin, the
// source itself (so a hash collision is told apart) and the cubin. Anything that does not
// match is "rejected": recompiled and written again.

constexpr char magic[] = "SPADE-JIT-1\n";

struct file_header {
  std::uint64_t source_bytes = 0;
  std::uint64_t binary_bytes = 0;
  std::uint64_t binary_checksum = 0;
};

std::optional<std::vector<char>> read_cache_file(const std::filesystem::path& path,
                                                 const std::string& source) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // absent or unreadable: not a rejection
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t head = sizeof magic - 1 + sizeof(file_header);
  file_header h;
  bool ok = bytes.size() >= head && std::memcmp(bytes.data(), magic, sizeof magic - 1) == 0;
  if (ok) {
    std::memcpy(&h, bytes.data() + sizeof magic - 1, sizeof h);
    ok = h.source_bytes == source.size() &&
         bytes.size() == head + h.source_bytes + h.binary_bytes && h.binary_bytes > 0 &&
         std::memcmp(bytes.data() + head, source.data(), source.size()) == 0 &&
         fnv1a(bytes.data() + head + h.source_bytes, h.binary_bytes) == h.binary_checksum;
  }
  if (!ok) {
    ++stats().disk_rejected;
    return std::nullopt;
  }
  return std::vector<char>(bytes.begin() + static_cast<std::ptrdiff_t>(head + h.source_bytes),
                           bytes.end());
}

// Written to a file of a unique name in the same directory, then renamed over the final name:
// readers in other processes see the old file, no file, or the whole new one.
void write_cache_file(const std::filesystem::path& path, const std::string& source,
                      const std::vector<char>& binary) {
  static std::atomic<unsigned> sequence{0};
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const auto temporary =
      path.parent_path() / (path.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(sequence++));
  file_header h{source.size(), binary.size(), fnv1a(binary.data(), binary.size())};
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (out) {
      out.write(magic, sizeof magic - 1);
      out.write(reinterpret_cast<const char*>(&h), sizeof h);
      out.write(source.data(), static_cast<std::streamsize>(source.size()));
      out.write(binary.data(), static_cast<std::streamsize>(binary.size()));
      out.close();
    }
    if (!out) {
      std::filesystem::remove(temporary, ec);
      ++stats().disk_failures;
      return;
    }
  }
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    ++stats().disk_failures;
    return;
  }
  ++stats().disk_writes;
}

std::filesystem::path cache_file(const std::string& source, int arch) {
  const std::string dir = jit_cache_directory();
  if (dir.empty()) return {};
  return std::filesystem::path(dir) / (device::jit_key(source, arch) + ".cubin");
}

// ---- NVRTC ---------------------------------------------------------------------------------

std::vector<char> compile(const std::string& source, int arch) {
  nvrtcProgram program = nullptr;
  if (nvrtcResult r =
          nvrtcCreateProgram(&program, source.c_str(), "spade_fused.cu", 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    throw cuda_error(std::string("spade: NVRTC could not create a program: ") +
                     nvrtcGetErrorString(r));
  const std::string arch_option = "--gpu-architecture=sm_" + std::to_string(arch);
  const char* options[] = {arch_option.c_str(), "--std=c++17",
                           "--device-as-default-execution-space"};
  const nvrtcResult compiled = nvrtcCompileProgram(program, 3, options);
  std::string log;
  std::size_t log_bytes = 0;
  if (nvrtcGetProgramLogSize(program, &log_bytes) == NVRTC_SUCCESS && log_bytes > 1) {
    log.resize(log_bytes);
    nvrtcGetProgramLog(program, log.data());
    log.resize(log_bytes - 1);
  }
  if (compiled != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    throw cuda_error(std::string("spade: NVRTC failed to compile a generated kernel for sm_") +
                     std::to_string(arch) + " (" + nvrtcGetErrorString(compiled) + "):\n" + log +
                     "\nsource:\n" + source);
  }
  std::size_t bytes = 0;
  std::vector<char> binary;
  if (nvrtcGetCUBINSize(program, &bytes) == NVRTC_SUCCESS && bytes > 0) {
    binary.resize(bytes);
    nvrtcGetCUBIN(program, binary.data());
  }
  nvrtcDestroyProgram(&program);
  if (binary.empty())
    throw cuda_error("spade: NVRTC produced no binary for sm_" + std::to_string(arch));
  ++stats().compiled;
  return binary;
}

/// The cubin of `source` for `arch`: from the disk cache when a valid file is there, else
/// compiled (and written to the cache). `origin` says which.
std::vector<char> binary_for(const std::string& source, int arch, device::jit_origin* origin,
                             bool skip_disk = false) {
  const auto path = cache_file(source, arch);
  if (!path.empty() && !skip_disk) {
    if (auto binary = read_cache_file(path, source)) {
      ++stats().disk_hits;
      *origin = device::jit_origin::disk;
      return std::move(*binary);
    }
  }
  auto binary = compile(source, arch);
  if (!path.empty()) write_cache_file(path, source, binary);
  *origin = device::jit_origin::compiled;
  return binary;
}

// ---- loaded kernels ------------------------------------------------------------------------

struct loaded_kernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

struct loaded_table {
  std::mutex mutex;
  std::unordered_map<std::string, loaded_kernel> kernels;  // key: arch, entry, source
};
loaded_table& loaded() {
  static auto* table = new loaded_table;  // never destroyed: the runtime may be gone at exit
  return *table;
}

bool load(const std::vector<char>& binary, const char* entry, loaded_kernel* out) {
  if (cudaLibraryLoadData(&out->library, binary.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) !=
      cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (cudaLibraryGetKernel(&out->kernel, out->library, entry) != cudaSuccess) {
    cudaGetLastError();
    cudaLibraryUnload(out->library);
    return false;
  }
  return true;
}

}  // namespace

jit_statistics jit_stats() noexcept {
  auto& c = stats();
  return {c.compiled.load(),      c.memory_hits.load(),   c.disk_hits.load(), c.disk_writes.load(),
          c.disk_rejected.load(), c.disk_failures.load(), c.launches.load()};
}

void reset_jit_stats() noexcept {
  auto& c = stats();
  c.compiled = 0;
  c.memory_hits = 0;
  c.disk_hits = 0;
  c.disk_writes = 0;
  c.disk_rejected = 0;
  c.disk_failures = 0;
  c.launches = 0;
}

void jit_forget_loaded_kernels() {
  auto& table = loaded();
  std::lock_guard lock(table.mutex);
  for (auto& [key, k] : table.kernels)
    cudaLibraryUnload(k.library);
  table.kernels.clear();
}

namespace device {

std::string jit_key(const std::string& source, int arch) {
  const std::string version = nvrtc_version_text();
  std::uint64_t h = fnv1a(source.data(), source.size());
  h = fnv1a(version.data(), version.size(), h);
  return "fused-" + hex(h) + "-sm" + std::to_string(arch) + "-" + version;
}

jit_origin jit_lookup(const std::string& source, int arch) {
  {
    auto& table = loaded();
    std::lock_guard lock(table.mutex);
    for (const auto& [key, k] : table.kernels)
      if (key.size() >= source.size() &&
          key.compare(key.size() - source.size(), source.size(), source) == 0 &&
          key.rfind(std::to_string(arch) + "\n", 0) == 0)
        return jit_origin::memory;
  }
  const auto path = cache_file(source, arch);
  std::error_code ec;
  if (!path.empty() && std::filesystem::exists(path, ec)) return jit_origin::disk;
  return jit_origin::compiled;
}

jit_origin jit_compile(const std::string& source, int arch, std::size_t* binary_bytes) {
  jit_origin origin = jit_origin::compiled;
  const auto binary = binary_for(source, arch, &origin);
  if (binary_bytes) *binary_bytes = binary.size();
  return origin;
}

jit_origin jit_launch(context& ctx, const std::string& source, const char* entry, unsigned grid,
                      unsigned block, void** args) {
  const auto& props = ctx.properties();
  const int arch = props.compute_major * 10 + props.compute_minor;
  const std::string key = std::to_string(arch) + "\n" + entry + "\n" + source;
  auto& table = loaded();
  jit_origin origin = jit_origin::memory;
  loaded_kernel kernel;
  {
    // Held while compiling too: two threads that want one new kernel compile it once.
    std::lock_guard lock(table.mutex);
    if (auto it = table.kernels.find(key); it != table.kernels.end()) {
      kernel = it->second;
      ++stats().memory_hits;
    } else {
      auto binary = binary_for(source, arch, &origin);
      if (!load(binary, entry, &kernel)) {
        if (origin == jit_origin::disk) {
          // A file that passed its checksum but does not load (another toolkit wrote it):
          // compile afresh and replace it.
          ++stats().disk_rejected;
          binary = binary_for(source, arch, &origin, /*skip_disk=*/true);
        }
        if (!load(binary, entry, &kernel))
          throw cuda_error("spade: the CUDA runtime could not load a generated kernel (" +
                           std::string(entry) + ", sm_" + std::to_string(arch) + ")");
      }
      table.kernels.emplace(key, kernel);
    }
  }
  SPADE_CUDA_TRY(cudaSetDevice(props.ordinal), "selecting the device for a generated kernel");
  SPADE_CUDA_TRY(cudaLaunchKernel(reinterpret_cast<const void*>(kernel.kernel), dim3(grid),
                                  dim3(block), args, 0, static_cast<cudaStream_t>(ctx.stream())),
                 "launching a generated (fused element-wise) kernel");
  ++stats().launches;
  return origin;
}

}  // namespace device

}  // namespace spade
