// CUB DeviceReduce::Sum for `spade-bench cwise`'s reduction baseline (bench_cub_reduce.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace spade::bench {

/// With d_temp = nullptr: sets *temp_bytes to the scratch size; else sums n values of d_in into
/// *d_out on `stream`.
template <class T>
cudaError_t cub_sum(const T* d_in, T* d_out, long long n, void* d_temp, std::size_t* temp_bytes,
                    cudaStream_t stream);

}  // namespace spade::bench
