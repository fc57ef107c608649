// The GPU context: device, stream, stream-ordered memory pool, library handles, properties.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace spade {

/// What Spade reads of the device once, to size kernels at run time.
struct device_properties {
  int ordinal = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t shared_memory_per_sm = 0;
  std::size_t shared_memory_per_block_optin = 0;
  std::size_t reserved_shared_memory_per_block = 0;  ///< taken by the runtime from every block
  int max_blocks_per_sm = 0;
  std::size_t l2_cache_bytes = 0;
};

/// Owns one device's stream, its stream-ordered memory pool (cudaMallocAsync on a
/// cudaMemPool), the cuBLAS/cuSPARSE handles (created on first use) and the device properties.
/// Every gpu object allocates through a context and frees back into it on the same stream.
/// Not copyable; a context must outlive every buffer allocated from it (the default one does).
class context {
 public:
  /// Opens `device`; throws spade::no_device (with the CUDA error text) when there is none.
  explicit context(int device = 0);
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  const device_properties& properties() const noexcept;
  /// The cudaStream_t all work of this context is ordered on (opaque to host code).
  void* stream() const noexcept;
  /// The cublasHandle_t / cusparseHandle_t bound to stream(), created on first call.
  void* cublas_handle();
  void* cusparse_handle();

  /// Stream-ordered allocation from the pool; throws spade::out_of_memory naming `what`.
  void* allocate(std::size_t bytes, const char* what);
  /// Stream-ordered free back into the pool. Never throws.
  void deallocate(void* ptr, std::size_t bytes) noexcept;

  /// Host → device, device → device copies and zero fill, ordered on stream() (asynchronous
  /// with respect to the host except where CUDA stages pageable memory).
  void copy_to_device(void* dst, const void* src, std::size_t bytes);
  void copy_on_device(void* dst, const void* src, std::size_t bytes);
  void fill_zero(void* dst, std::size_t bytes);
  /// Device → host copy; returns once the bytes are on the host.
  void copy_to_host(void* dst, const void* src, std::size_t bytes);
  /// Waits for all work queued on stream().
  void synchronize();

  /// Bytes currently allocated through this context and not yet freed (exact, ours).
  std::size_t bytes_in_use() const noexcept;
  /// The pool's own count of bytes in use (cudaMemPoolAttrUsedMemCurrent), after a sync.
  std::size_t pool_bytes_in_use();
  /// The pool's peak bytes in use since it last restarted (cudaMemPoolAttrUsedMemHigh), after a
  /// sync; `restart` then restarts the peak from the bytes in use now.
  std::size_t pool_bytes_peak(bool restart = false);

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

/// The process-wide context for device 0 (or $SPADE_DEVICE), created on first use and kept
/// until exit. Throws spade::no_device when no usable device exists.
context& default_context();

/// True when a CUDA device can be used; otherwise false and, if `reason` is given, why
/// (the CUDA error text, or that Spade was built without CUDA).
bool device_available(std::string* reason = nullptr);

/// True when this build of Spade has its CUDA library (SPADE_WITH_CUDA was on).
bool built_with_cuda() noexcept;

}  // namespace spade
