// The reduction baseline of `spade-bench cwise`: CUB DeviceReduce::Sum on a materialised input
// (compiled by nvcc without Spade's headers, like bench_hold.cu).
#include <cub/device/device_reduce.cuh>

#include "bench_cub_reduce.hpp"

namespace spade::bench {

template <class T>
cudaError_t cub_sum(const T* d_in, T* d_out, long long n, void* d_temp, std::size_t* temp_bytes,
                    cudaStream_t stream) {
  return cub::DeviceReduce::Sum(d_temp, *temp_bytes, d_in, d_out, n, stream);
}

template cudaError_t cub_sum<float>(const float*, float*, long long, void*, std::size_t*,
                                    cudaStream_t);
template cudaError_t cub_sum<double>(const double*, double*, long long, void*, std::size_t*,
                                     cudaStream_t);

}  // namespace spade::bench
