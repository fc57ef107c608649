// GPU format conversions for builds without CUDA: each reports no_device.
#include "convert/instantiate.hpp"
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
template <scalar T>
gcoo<T, gpu> csr_to_gcoo(const csr<T, gpu>&, index_t) {
  no_cuda("csr_to_gcoo");
}
template <scalar T>
csr<T, gpu> gcoo_to_csr(const gcoo<T, gpu>&) {
  no_cuda("gcoo_to_csr");
}
template <scalar T>
gcoo<T, gpu> dense_to_gcoo(const dense<T, gpu, row_major>&, index_t) {
  no_cuda("dense_to_gcoo");
}
template <scalar T>
ellr<T, gpu> csr_to_ellr(const csr<T, gpu>&, ellr_layout) {
  no_cuda("csr_to_ellr");
}
template <scalar T>
csr<T, gpu> ellr_to_csr(const ellr<T, gpu>&) {
  no_cuda("ellr_to_csr");
}
template <scalar T>
tiled<T, gpu> csr_to_tiled(const csr<T, gpu>&) {
  no_cuda("csr_to_tiled");
}
template <scalar T>
csr<T, gpu> tiled_to_csr(const tiled<T, gpu>&) {
  no_cuda("tiled_to_csr");
}
template <scalar T, layout Layout>
dense<T, gpu, Layout> gcoo_to_dense(const gcoo<T, gpu>&) {
  no_cuda("gcoo_to_dense");
}

SPADE_CONVERT_CSR_COO_INSTANTIATIONS(float)
SPADE_CONVERT_CSR_COO_INSTANTIATIONS(double)
SPADE_CONVERT_DENSE_INSTANTIATIONS(float)
SPADE_CONVERT_DENSE_INSTANTIATIONS(double)
SPADE_CONVERT_ELLR_INSTANTIATIONS(float)
SPADE_CONVERT_ELLR_INSTANTIATIONS(double)
SPADE_CONVERT_GCOO_INSTANTIATIONS(float)
SPADE_CONVERT_GCOO_INSTANTIATIONS(double)
SPADE_CONVERT_TILED_INSTANTIATIONS(float)
SPADE_CONVERT_TILED_INSTANTIATIONS(double)

}  // namespace spade::device
