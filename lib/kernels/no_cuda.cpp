// Spade's own kernels for builds without CUDA: each reports no_device.
#include <string>

#include "spade/core/error.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw no_device(std::string("no usable CUDA device: ") + what +
                  " needs the CUDA library, and Spade was built without CUDA");
}
}  // namespace

std::string gcoo_spmm_launch::describe() const {
  return "not launched (Spade was built without CUDA)";
}

template <scalar T>
gcoo_spmm_launch gcoo_spmm(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, T,
                           dense<T, gpu, row_major>&, int) {
  no_cuda("gcoo_spmm");
}
template <scalar T>
void gcoo_spmm_paper(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, T,
                     dense<T, gpu, row_major>&, int) {
  no_cuda("gcoo_spmm_paper");
}

#define SPADE_INSTANTIATE(T)                                                                      \
  template gcoo_spmm_launch gcoo_spmm<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, \
                                         T, dense<T, gpu, row_major>&, int);                      \
  template void gcoo_spmm_paper<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, T,    \
                                   dense<T, gpu, row_major>&, int);
SPADE_INSTANTIATE(float)
SPADE_INSTANTIATE(double)
#undef SPADE_INSTANTIATE

}  // namespace spade::device
