// The CUDA side of spade::context: device, stream, memory pool, library handles.
#include "spade/core/context.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "detail/cuda_check.hpp"

namespace spade {

struct context::impl {
  int device = 0;
  device_properties properties;
  cudaStream_t stream = nullptr;
  cudaMemPool_t pool = nullptr;
  cublasHandle_t cublas = nullptr;
  cusparseHandle_t cusparse = nullptr;
  std::mutex handle_mutex;
  std::atomic<std::size_t> bytes_in_use{0};
  std::atomic<std::size_t> cache_limit{0};
  std::atomic<std::size_t> memory_limit{0};  // 0: none

  // The pool's reserved bytes (in use + cached); the caller has synchronised if it needs them
  // exact.
  std::size_t reserved() const {
    std::uint64_t bytes = 0;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes);
    return static_cast<std::size_t>(bytes);
  }
};

namespace {

/// The context's device made current for one call (and the caller's restored after): a
/// stream-ordered call on a stream of another device than the current one is refused, and a
/// process may hold contexts of several devices (spade::cluster). Two cheap runtime calls when
/// the device is already current.
class on_device {
 public:
  explicit on_device(int device) {
    if (cudaGetDevice(&previous_) == cudaSuccess && previous_ != device)
      switched_ = cudaSetDevice(device) == cudaSuccess;
  }
  ~on_device() {
    if (switched_) cudaSetDevice(previous_);
  }
  on_device(const on_device&) = delete;
  on_device& operator=(const on_device&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

// The default cache: 5 % of the device (4 GiB on an 80 GB H100). Large enough that repeated
// products keep their workspaces and outputs in the pool: with 1 GiB, SpGEMMs whose C passes
// 0.8 GB re-mapped it from the driver on every call (H100, 2026-11-24: stencil7 160^3 4.17 ->
// 6.47 ms, uniform rows 2^20 x 16 13.9 -> 18.3 ms, about 2 ms per GB); small enough that a
// process idling between products leaves 95 % of the GPU to the others that share it.
constexpr std::size_t default_cache_device_fraction = 20;

// SPADE_CACHE_LIMIT: bytes, with an optional K, M or G suffix (powers of 1024), or "unlimited".
bool parse_cache_limit(const char* text, std::size_t& bytes) {
  const std::string s(text);
  if (s == "unlimited") {
    bytes = ~std::size_t{0};
    return true;
  }
  char* end = nullptr;
  const unsigned long long value = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  const std::string suffix(end);
  const std::size_t scale = suffix.empty()  ? 1
                            : suffix == "K" ? std::size_t{1} << 10
                            : suffix == "M" ? std::size_t{1} << 20
                            : suffix == "G" ? std::size_t{1} << 30
                                            : 0;
  if (scale == 0) return false;
  bytes = static_cast<std::size_t>(value) * scale;
  return true;
}

std::string mib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

context::context(int device) : impl_(std::make_unique<impl>()) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    throw no_device(std::string("no usable CUDA device: cudaGetDeviceCount failed with ") +
                    cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  if (device < 0 || device >= count)
    throw no_device("no usable CUDA device: device " + std::to_string(device) + " requested, " +
                    std::to_string(count) + " present");
  impl_->device = device;
  SPADE_CUDA_TRY(cudaSetDevice(device), "selecting the device");
  cudaDeviceProp prop{};
  SPADE_CUDA_TRY(cudaGetDeviceProperties(&prop, device), "reading device properties");
  auto& p = impl_->properties;
  p.ordinal = device;
  p.name = prop.name;
  p.compute_major = prop.major;
  p.compute_minor = prop.minor;
  p.sm_count = prop.multiProcessorCount;
  p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  p.global_memory_bytes = prop.totalGlobalMem;
  p.shared_memory_per_sm = prop.sharedMemPerMultiprocessor;
  p.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  p.reserved_shared_memory_per_block = prop.reservedSharedMemPerBlock;
  p.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  p.l2_cache_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  // Peak DRAM bandwidth: two transfers per memory clock over the bus (0 when a driver does not
  // report them).
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  if (cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device) ==
          cudaSuccess &&
      cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device) ==
          cudaSuccess)
    p.memory_bandwidth = 2.0 * memory_clock_khz * 1000.0 * (bus_width_bits / 8.0);
  (void)cudaGetLastError();

  SPADE_CUDA_TRY(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking),
                 "creating the context stream");
  cudaMemPoolProps pool_props{};
  pool_props.allocType = cudaMemAllocationTypePinned;
  pool_props.handleTypes = cudaMemHandleTypeNone;
  pool_props.location.type = cudaMemLocationTypeDevice;
  pool_props.location.id = device;
  SPADE_CUDA_TRY(cudaMemPoolCreate(&impl_->pool, &pool_props), "creating the memory pool");
  // Freed memory stays in the pool up to the cache limit (repeated products reuse their
  // workspaces without a driver call); beyond it, it goes back at the next synchronisation.
  set_cache_limit(p.global_memory_bytes / default_cache_device_fraction);
}

context::~context() {
  if (!impl_) return;
  cudaSetDevice(impl_->device);
  if (impl_->cusparse) cusparseDestroy(impl_->cusparse);
  if (impl_->cublas) cublasDestroy(impl_->cublas);
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);
  if (impl_->pool) cudaMemPoolDestroy(impl_->pool);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

const device_properties& context::properties() const noexcept {
  return impl_->properties;
}
void* context::stream() const noexcept {
  return impl_->stream;
}

void* context::cublas_handle() {
  std::lock_guard lock(impl_->handle_mutex);
  if (!impl_->cublas) {
    const on_device here(impl_->device);  // a handle belongs to the device current at creation
    if (cublasCreate(&impl_->cublas) != CUBLAS_STATUS_SUCCESS)
      throw cuda_error("cublasCreate failed while creating the context's cuBLAS handle");
    cublasSetStream(impl_->cublas, impl_->stream);
  }
  return impl_->cublas;
}

void* context::cusparse_handle() {
  std::lock_guard lock(impl_->handle_mutex);
  if (!impl_->cusparse) {
    const on_device here(impl_->device);
    if (cusparseCreate(&impl_->cusparse) != CUSPARSE_STATUS_SUCCESS)
      throw cuda_error("cusparseCreate failed while creating the context's cuSPARSE handle");
    cusparseSetStream(impl_->cusparse, impl_->stream);
  }
  return impl_->cusparse;
}

void* context::allocate(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  const std::size_t limit = impl_->memory_limit.load();
  const std::size_t in_use = impl_->bytes_in_use.load();
  if (limit != 0 && (bytes > limit || in_use > limit - bytes))
    throw out_of_memory("out of device memory: " + std::to_string(bytes) + " bytes for " + what +
                        " would pass the context's memory limit of " + std::to_string(limit) +
                        " bytes (" + std::to_string(in_use) +
                        " already in use; context::set_memory_limit)");
  const on_device here(impl_->device);
  void* ptr = nullptr;
  cudaError_t status = cudaMallocFromPoolAsync(&ptr, bytes, impl_->pool, impl_->stream);
  if (status == cudaErrorMemoryAllocation) {
    // The device is full, perhaps of our own cache in pieces too small for this request: wait
    // for the frees queued on the stream, give every cached byte back, and try once more.
    cudaGetLastError();
    if (cudaStreamSynchronize(impl_->stream) == cudaSuccess &&
        cudaMemPoolTrimTo(impl_->pool, 0) == cudaSuccess)
      status = cudaMallocFromPoolAsync(&ptr, bytes, impl_->pool, impl_->stream);
  }
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls are not blamed
    if (status == cudaErrorMemoryAllocation) {
      std::size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      cudaGetLastError();
      throw out_of_memory("out of device memory: " + std::to_string(bytes) + " bytes (" +
                          mib(bytes) + ") for " + what + "; this context has " +
                          std::to_string(impl_->bytes_in_use.load()) + " bytes in use and " +
                          mib(impl_->reserved()) +
                          " reserved after trimming its cache; the device has " + mib(free_bytes) +
                          " free of " + mib(total_bytes));
    }
    detail::throw_cuda(status, "cudaMallocFromPoolAsync", what);
  }
  impl_->bytes_in_use += bytes;
  return ptr;
}

void context::deallocate(void* ptr, std::size_t bytes) noexcept {
  if (!ptr) return;
  const on_device here(impl_->device);
  cudaFreeAsync(ptr, impl_->stream);
  impl_->bytes_in_use -= bytes;
}

void context::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  const on_device here(impl_->device);
  SPADE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, impl_->stream),
                 "copying to the device");
}

void context::copy_on_device(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  const on_device here(impl_->device);
  SPADE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, impl_->stream),
                 "copying on the device");
}

void context::fill_zero(void* dst, std::size_t bytes) {
  if (!bytes) return;
  const on_device here(impl_->device);
  SPADE_CUDA_TRY(cudaMemsetAsync(dst, 0, bytes, impl_->stream), "zero-filling device memory");
}

void context::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  const on_device here(impl_->device);
  SPADE_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, impl_->stream),
                 "copying to the host");
  SPADE_CUDA_TRY(cudaStreamSynchronize(impl_->stream), "waiting for a copy to the host");
}

void context::synchronize() {
  SPADE_CUDA_TRY(cudaStreamSynchronize(impl_->stream), "synchronising the context stream");
}

std::size_t context::bytes_in_use() const noexcept {
  return impl_->bytes_in_use.load();
}

std::size_t context::bytes_reserved() {
  synchronize();
  return impl_->reserved();
}

std::size_t context::device_bytes_free() {
  const on_device here(impl_->device);
  std::size_t free_bytes = 0, total_bytes = 0;
  SPADE_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "reading the device's free memory");
  return free_bytes;
}

void context::set_cache_limit(std::size_t bytes) {
  std::uint64_t threshold = bytes;
  SPADE_CUDA_TRY(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                 "setting the pool's release threshold (the cache limit)");
  impl_->cache_limit = bytes;
  trim(bytes);
}

std::size_t context::cache_limit() const noexcept {
  return impl_->cache_limit.load();
}

void context::set_memory_limit(std::size_t bytes) noexcept {
  impl_->memory_limit = bytes;
}

std::size_t context::memory_limit() const noexcept {
  return impl_->memory_limit.load();
}

void context::trim(std::size_t keep_bytes) {
  synchronize();
  SPADE_CUDA_TRY(cudaMemPoolTrimTo(impl_->pool, keep_bytes), "trimming the memory pool");
}

std::size_t context::pool_bytes_in_use() {
  synchronize();
  std::uint64_t used = 0;
  SPADE_CUDA_TRY(cudaMemPoolGetAttribute(impl_->pool, cudaMemPoolAttrUsedMemCurrent, &used),
                 "reading the pool's bytes in use");
  return static_cast<std::size_t>(used);
}

std::size_t context::pool_bytes_peak(bool restart) {
  synchronize();
  std::uint64_t high = 0;
  SPADE_CUDA_TRY(cudaMemPoolGetAttribute(impl_->pool, cudaMemPoolAttrUsedMemHigh, &high),
                 "reading the pool's peak bytes in use");
  if (restart) {
    std::uint64_t zero = 0;  // the high-water mark restarts from the bytes in use now
    SPADE_CUDA_TRY(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrUsedMemHigh, &zero),
                   "restarting the pool's peak bytes in use");
  }
  return static_cast<std::size_t>(high);
}

namespace {
// The innermost context_scope of this thread (nullptr: none).
thread_local context* scoped_context = nullptr;
}  // namespace

context_scope::context_scope(context& ctx) : previous_(scoped_context), previous_device_(0) {
  SPADE_CUDA_TRY(cudaGetDevice(&previous_device_), "reading the current device");
  SPADE_CUDA_TRY(cudaSetDevice(ctx.properties().ordinal), "selecting a part's device");
  scoped_context = &ctx;
}

context_scope::~context_scope() {
  scoped_context = previous_;
  cudaSetDevice(previous_device_);
}

context& default_context() {
  if (scoped_context) return *scoped_context;
  // Created once, never destroyed: buffers held in static objects may be freed after main
  // returns, and the CUDA runtime may already be torn down by then.
  static context* instance = [] {
    int device = 0;
    if (const char* env = std::getenv("SPADE_DEVICE")) device = std::atoi(env);
    std::size_t cache = 0;
    const char* cache_env = std::getenv("SPADE_CACHE_LIMIT");
    if (cache_env && !parse_cache_limit(cache_env, cache))
      throw error(std::string("SPADE_CACHE_LIMIT=") + cache_env +
                  ": expected bytes with an optional K, M or G suffix, or unlimited");
    auto* made = new context(device);
    if (cache_env) made->set_cache_limit(cache);
    return made;
  }();
  return *instance;
}

bool device_available(std::string* reason) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    if (reason)
      *reason = status != cudaSuccess
                    ? std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status)
                    : std::string("no CUDA device present");
    cudaGetLastError();
    return false;
  }
  return true;
}

bool built_with_cuda() noexcept {
  return true;
}

}  // namespace spade
