// The stream-holding kernel of bench_hold.hpp.
#include "bench_hold.hpp"

namespace spade::bench {

namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_kernel(const volatile int* gate, int* expired, unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  while (*gate == 0) {
    if (global_ns() - start > timeout_ns) {
      *expired = 1;
      return;
    }
    __nanosleep(500);
  }
}

}  // namespace

cudaError_t launch_hold(cudaStream_t stream, const volatile int* d_gate, int* d_expired,
                        unsigned long long timeout_ns) {
  hold_kernel<<<1, 1, 0, stream>>>(d_gate, d_expired, timeout_ns);
  return cudaGetLastError();
}

}  // namespace spade::bench
