// A kernel that keeps a stream busy until the host opens a gate (bench_hold.cu).
#pragma once

#include <cuda_runtime_api.h>

namespace spade::bench {

/// Queues on `stream` one single-thread kernel that spins until `*d_gate` (mapped host memory)
/// becomes non-zero, or until `timeout_ns` of GPU time passed; in that case it sets
/// `*d_expired` = 1. Work queued behind it then runs back to back, so the events around each run
/// measure GPU time only, whatever the host spends between launches (nvbench's blocking
/// kernel does the same). Returns the launch's error code. Compiled by nvcc without Spade's
/// headers, so it includes only the CUDA runtime's.
cudaError_t launch_hold(cudaStream_t stream, const volatile int* d_gate, int* d_expired,
                        unsigned long long timeout_ns);

}  // namespace spade::bench
