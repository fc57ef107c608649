// SPADE_CUDA_TRY and friends: every CUDA call checked, failures thrown with context.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "spade/core/error.hpp"

namespace spade::detail {

[[noreturn]] inline void throw_cuda(cudaError_t status, const char* call, const char* doing) {
  std::string text = std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) +
                     ") from " + call + " while " + doing;
  if (status == cudaErrorMemoryAllocation) throw out_of_memory("out of device memory: " + text);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
    throw no_device("no usable CUDA device: " + text);
  throw cuda_error(text);
}

}  // namespace spade::detail

/// Runs a CUDA runtime call; on failure throws spade::cuda_error naming the call and `doing`.
#define SPADE_CUDA_TRY(call, doing)                                                             \
  do {                                                                                          \
    const cudaError_t spade_status_ = (call);                                                   \
    if (spade_status_ != cudaSuccess) ::spade::detail::throw_cuda(spade_status_, #call, doing); \
  } while (0)

/// After a kernel launch: reports launch errors and, with SPADE_DEBUG_SYNC, execution errors.
#ifdef SPADE_DEBUG_SYNC
#define SPADE_CHECK_LAUNCH(doing)                   \
  do {                                              \
    SPADE_CUDA_TRY(cudaGetLastError(), doing);      \
    SPADE_CUDA_TRY(cudaDeviceSynchronize(), doing); \
  } while (0)
#else
#define SPADE_CHECK_LAUNCH(doing) SPADE_CUDA_TRY(cudaGetLastError(), doing)
#endif
