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
  double memory_bandwidth = 0.0;  ///< peak DRAM bytes per second (memory clock × bus width)
};

/// Owns one device's stream, its stream-ordered memory pool (cudaMallocAsync on a
/// cudaMemPool), the cuBLAS/cuSPARSE handles (created on first use) and the device properties.
/// Every gpu object allocates through a context and frees back into it on the same stream.
/// The pool caches at most cache_limit() bytes between products (see set_cache_limit), so a
/// GPU shared with other processes or libraries gets the rest back.
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

  /// Stream-ordered allocation from the pool; when the device is full it trims the pool's cache
  /// and tries once more, then throws spade::out_of_memory naming `what`, the bytes in use,
  /// reserved and free on the device.
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
  /// Bytes the pool holds from the driver (in use + cached for reuse), after a sync.
  std::size_t bytes_reserved();
  /// Bytes free on the device for anyone (cudaMemGetInfo): other processes, other libraries
  /// and other contexts count against it, this pool's cache too.
  std::size_t device_bytes_free();

  /// Memory policy (docs/memory.md). The pool keeps freed memory for reuse while it holds at
  /// most `cache_limit()` bytes in all (in use + cached); above that, freed memory goes back to
  /// the driver at the next synchronisation, so other processes and libraries can have it.
  /// Default: 5 % of the device's memory (4 GiB on an 80 GB H100; docs/memory.md says why), or
  /// $SPADE_CACHE_LIMIT for the default context. Setting it trims the pool to it at once.
  void set_cache_limit(std::size_t bytes);
  std::size_t cache_limit() const noexcept;
  /// A hard cap on bytes_in_use(): an allocation that would pass it throws spade::out_of_memory
  /// naming the limit. 0 (the default): no cap beyond the device itself.
  void set_memory_limit(std::size_t bytes) noexcept;
  std::size_t memory_limit() const noexcept;
  /// Waits for the stream, then gives cached memory back to the driver until the pool holds at
  /// most max(`keep_bytes`, bytes in use). allocate() does this with keep_bytes = 0 and retries
  /// once before it reports out_of_memory.
  void trim(std::size_t keep_bytes = 0);
  /// The pool's own count of bytes in use (cudaMemPoolAttrUsedMemCurrent), after a sync.
  std::size_t pool_bytes_in_use();
  /// The pool's peak bytes in use since it last restarted (cudaMemPoolAttrUsedMemHigh), after a
  /// sync; `restart` then restarts the peak from the bytes in use now.
  std::size_t pool_bytes_peak(bool restart = false);

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

/// The context of this thread's innermost context_scope if there is one; otherwise the
/// process-wide context for device 0 (or $SPADE_DEVICE), created on first use and kept until
/// exit. Throws spade::no_device when no usable device exists.
context& default_context();

/// While it lives, default_context() on this thread is `ctx` and `ctx`'s device is the current
/// CUDA device, so that everything a gpu expression allocates or launches lands there (how a
/// multi_gpu product runs the single-GPU planner on each part). Scopes nest; the destructor
/// restores the previous context and device.
class context_scope {
 public:
  explicit context_scope(context& ctx);
  ~context_scope();
  context_scope(const context_scope&) = delete;
  context_scope& operator=(const context_scope&) = delete;

 private:
  context* previous_;
  int previous_device_;
};

/// True when a CUDA device can be used; otherwise false and, if `reason` is given, why
/// (the CUDA error text, or that Spade was built without CUDA).
bool device_available(std::string* reason = nullptr);

/// True when this build of Spade has its CUDA library (SPADE_WITH_CUDA was on).
bool built_with_cuda() noexcept;

}  // namespace spade
