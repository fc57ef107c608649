// cuBLAS / cuSPARSE calls for builds without CUDA: each reports no_device.
#include <cstdint>
#include <string>

#include "instantiate.hpp"
#include "spade/core/error.hpp"
#include "spade/device/vendor.hpp"

namespace spade::device {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw no_device(std::string("no usable CUDA device: ") + what +
                  " needs the CUDA library, and Spade was built without CUDA");
}
}  // namespace

template <scalar T, layout LA, layout LB, layout LC>
void gemm(T, const dense<T, gpu, LA>&, operation, const dense<T, gpu, LB>&, operation, T,
          dense<T, gpu, LC>&) {
  no_cuda("gemm");
}
template <scalar T, layout L>
void gemv(T, const dense<T, gpu, L>&, operation, const vector<T, gpu>&, T, vector<T, gpu>&) {
  no_cuda("gemv");
}
template <scalar T, layout LC>
void gemm_strided(T, const strided_operand<T>&, operation, const strided_operand<T>&, operation, T,
                  dense<T, gpu, LC>&) {
  no_cuda("gemm");
}
template <scalar T>
void gemv_strided(T, const strided_operand<T>&, operation, const strided_operand<T>&, T,
                  vector<T, gpu>&) {
  no_cuda("gemv");
}
template <scalar T>
void spmv(T, const csr<T, gpu>&, operation, const vector<T, gpu>&, T, vector<T, gpu>&,
          spmv_algorithm) {
  no_cuda("spmv");
}
template <scalar T, layout LB, layout LC>
void spmm(T, const csr<T, gpu>&, operation, const dense<T, gpu, LB>&, T, dense<T, gpu, LC>&,
          spmm_algorithm) {
  no_cuda("spmm");
}
template <scalar T>
csr<T, gpu> spgemm(const csr<T, gpu>&, const csr<T, gpu>&) {
  no_cuda("spgemm");
}
template <scalar T>
csr<T, gpu> csr_add(T, const csr<T, gpu>&, T, const csr<T, gpu>&) {
  no_cuda("csr_add");
}
template <scalar T, layout L>
void geam(T, const dense<T, gpu, L>&, operation, T, const dense<T, gpu, L>&, operation,
          dense<T, gpu, L>&) {
  no_cuda("geam");
}
template <scalar T>
void axpby(T, const vector<T, gpu>&, T, const vector<T, gpu>&, vector<T, gpu>&) {
  no_cuda("axpby");
}
template <scalar T>
T dot(const vector<T, gpu>&, const vector<T, gpu>&) {
  no_cuda("dot");
}
template <scalar T>
T nrm2(const vector<T, gpu>&) {
  no_cuda("nrm2");
}
template <scalar T>
csr<T, gpu> transpose(const csr<T, gpu>&) {
  no_cuda("transpose");
}
template <scalar T>
void scale(T, T*, std::int64_t) {
  no_cuda("scale");
}

// Without CUDA no descriptor is ever prepared.
std::uint64_t cusparse_spmm_preparations() noexcept {
  return 0;
}

SPADE_VENDOR_BLAS_INSTANTIATIONS(float)
SPADE_VENDOR_BLAS_INSTANTIATIONS(double)
SPADE_VENDOR_SPARSE_INSTANTIATIONS(float)
SPADE_VENDOR_SPARSE_INSTANTIATIONS(double)

}  // namespace spade::device
