// GPU format conversions for builds without CUDA: each reports no_device.
#include "spade/core/error.hpp"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw no_device(std::string("no usable CUDA device: ") + what +
                  " needs the CUDA library, and Spade was built without CUDA");
}
}  // namespace

template <scalar T>
coo<T, gpu> csr_to_coo(const csr<T, gpu>&) {
  no_cuda("csr_to_coo");
}
template <scalar T>
csr<T, gpu> coo_to_csr(const coo<T, gpu>&) {
  no_cuda("coo_to_csr");
}
template <scalar T, layout Layout>
dense<T, gpu, Layout> csr_to_dense(const csr<T, gpu>&) {
  no_cuda("csr_to_dense");
}
template <scalar T, layout Layout>
csr<T, gpu> dense_to_csr(const dense<T, gpu, Layout>&) {
  no_cuda("dense_to_csr");
}
template <scalar T, layout From, layout To>
dense<T, gpu, To> relayout(const dense<T, gpu, From>&) {
  no_cuda("relayout");
}

#define SPADE_INSTANTIATE(T)                                                        \
  template coo<T, gpu> csr_to_coo<T>(const csr<T, gpu>&);                           \
  template csr<T, gpu> coo_to_csr<T>(const coo<T, gpu>&);                           \
  template dense<T, gpu, row_major> csr_to_dense<T, row_major>(const csr<T, gpu>&); \
  template dense<T, gpu, col_major> csr_to_dense<T, col_major>(const csr<T, gpu>&); \
  template csr<T, gpu> dense_to_csr<T, row_major>(const dense<T, gpu, row_major>&); \
  template csr<T, gpu> dense_to_csr<T, col_major>(const dense<T, gpu, col_major>&); \
  template dense<T, gpu, col_major> relayout<T, row_major, col_major>(              \
      const dense<T, gpu, row_major>&);                                             \
  template dense<T, gpu, row_major> relayout<T, col_major, row_major>(              \
      const dense<T, gpu, col_major>&);
SPADE_INSTANTIATE(float)
SPADE_INSTANTIATE(double)
#undef SPADE_INSTANTIATE

}  // namespace spade::device
