// device::gpu_run_milliseconds: calls timed by events behind a held stream (device/gpu_timing.hpp).
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "detail/cuda_check.hpp"
#include "spade/device/gpu_timing.hpp"

namespace spade::device {

namespace {

// Queueing a few dozen products takes milliseconds; a hold still closed after 2 s means a run
// waited for the stream (it synchronised) and would otherwise wait forever.
constexpr unsigned long long hold_timeout_ns = 2'000'000'000ull;

__device__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_stream_kernel(const volatile int* gate, int* expired,
                                   unsigned long long timeout_ns) {
  const unsigned long long start = global_nanoseconds();
  while (*gate == 0) {
    if (global_nanoseconds() - start > timeout_ns) {
      *expired = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// [0] the gate the host opens, [1] set by a hold that gave up; mapped into the device.
struct mapped_flags {
  int* host = nullptr;
  int* device = nullptr;
  mapped_flags() {
    SPADE_CUDA_TRY(
        cudaHostAlloc(reinterpret_cast<void**>(&host), 2 * sizeof(int), cudaHostAllocMapped),
        "allocating the stream gate for GPU timing");
    host[0] = host[1] = 0;
    SPADE_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), host, 0),
                   "mapping the stream gate for GPU timing");
  }
  ~mapped_flags() { cudaFreeHost(host); }
  void open() { *static_cast<volatile int*>(host) = 1; }
  bool expired() const { return *static_cast<const volatile int*>(host + 1) != 0; }
  mapped_flags(const mapped_flags&) = delete;
  mapped_flags& operator=(const mapped_flags&) = delete;
};

struct event_list {
  std::vector<cudaEvent_t> events;
  explicit event_list(std::size_t count) {
    events.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      cudaEvent_t e = nullptr;
      SPADE_CUDA_TRY(cudaEventCreate(&e), "creating the events for GPU timing");
      events.push_back(e);
    }
  }
  ~event_list() {
    for (cudaEvent_t e : events)
      cudaEventDestroy(e);
  }
  event_list(const event_list&) = delete;
  event_list& operator=(const event_list&) = delete;
};

}  // namespace

gpu_run_times gpu_run_milliseconds(context& ctx, const std::function<void()>& run, int runs) {
  gpu_run_times result;
  if (runs <= 0) return result;
  SPADE_CUDA_TRY(cudaSetDevice(ctx.properties().ordinal), "selecting the device for GPU timing");
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  mapped_flags flags;
  event_list events(2 * static_cast<std::size_t>(runs));
  hold_stream_kernel<<<1, 1, 0, stream>>>(flags.device, flags.device + 1, hold_timeout_ns);
  SPADE_CHECK_LAUNCH("holding the stream for GPU timing");
  try {
    for (int i = 0; i < runs; ++i) {
      SPADE_CUDA_TRY(cudaEventRecord(events.events[2 * static_cast<std::size_t>(i)], stream),
                     "recording a timing event");
      run();
      SPADE_CUDA_TRY(cudaEventRecord(events.events[2 * static_cast<std::size_t>(i) + 1], stream),
                     "recording a timing event");
    }
  } catch (...) {
    flags.open();
    cudaStreamSynchronize(stream);
    throw;
  }
  flags.open();
  SPADE_CUDA_TRY(cudaStreamSynchronize(stream), "waiting for the timed runs");
  result.held = !flags.expired();
  for (int i = 0; i < runs; ++i) {
    float ms = 0;
    SPADE_CUDA_TRY(cudaEventElapsedTime(&ms, events.events[2 * static_cast<std::size_t>(i)],
                                        events.events[2 * static_cast<std::size_t>(i) + 1]),
                   "reading a timing event");
    result.milliseconds.push_back(ms);
  }
  return result;
}

}  // namespace spade::device
