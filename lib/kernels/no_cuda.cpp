// Spade's own kernels for builds without CUDA: each reports no_device.
#include <string>

#include "kernels/instantiate.hpp"
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

template <scalar T>
void rowwise_spmv(T, const csr<T, gpu>&, operation, const vector<T, gpu>&, T, vector<T, gpu>&) {
  no_cuda("rowwise_spmv");
}
template <scalar T, layout LB, layout LC>
void rowwise_spmm(T, const csr<T, gpu>&, operation, const dense<T, gpu, LB>&, T,
                  dense<T, gpu, LC>&) {
  no_cuda("rowwise_spmm");
}
template <scalar T>
csr<T, gpu> transpose_by_sort(const csr<T, gpu>&) {
  no_cuda("transpose_by_sort");
}
std::string ellr_spmv_launch::describe() const {
  return "no CUDA";
}
template <scalar T>
ellr_spmv_launch ellr_spmv(T, const ellr<T, gpu>&, const vector<T, gpu>&, T, vector<T, gpu>&, int) {
  no_cuda("ellr_spmv");
}
template <scalar T, layout LX, layout LY>
ellr_spmv_launch ellr_spmm(T, const ellr<T, gpu>&, const dense<T, gpu, LX>&, T, dense<T, gpu, LY>&,
                           int, int) {
  no_cuda("ellr_spmm");
}
std::string hash_spgemm_report::describe() const {
  return "no CUDA";
}
template <scalar T>
csr<T, gpu> hash_spgemm(T, const csr<T, gpu>&, const csr<T, gpu>&, hash_spgemm_report*, bool,
                        std::int64_t) {
  no_cuda("hash_spgemm");
}
template <scalar T>
hash_spgemm_report hash_spgemm_profile(const csr<T, gpu>&, const csr<T, gpu>&) {
  no_cuda("hash_spgemm");
}
std::string tiled_spgemm_report::describe() const {
  return "no CUDA";
}
template <scalar T>
tiled<T, gpu> tiled_spgemm(T, const tiled<T, gpu>&, const tiled<T, gpu>&, tile_arithmetic,
                           tiled_spgemm_report*, bool) {
  no_cuda("tiled_spgemm");
}
template <scalar T>
tile_census count_tiles(const csr<T, gpu>&, const csr<T, gpu>&) {
  no_cuda("count_tiles");
}
template <scalar T>
std::int64_t count_own_tiles(const csr<T, gpu>&) {
  no_cuda("count_own_tiles");
}
template <scalar T, layout LB, layout LC>
void tiled_spmm(T, const tiled<T, gpu>&, const dense<T, gpu, LB>&, T, dense<T, gpu, LC>&,
                spmm_arithmetic) {
  no_cuda("tiled_spmm");
}
template <scalar T>
std::vector<T> tile_product_probe(const std::vector<T>&, const std::vector<T>&, tile_arithmetic) {
  no_cuda("tile_product_probe");
}

std::string sddmm_launch::describe() const {
  return "no CUDA";
}
template <scalar T, layout LA, layout LB>
sddmm_launch sddmm(T, const csr<T, gpu>&, const dense<T, gpu, LA>&, operation,
                   const dense<T, gpu, LB>&, operation, csr<T, gpu>&, bool) {
  no_cuda("sddmm");
}
template <scalar T, layout LA, layout LB>
sddmm_launch cusparse_sddmm(T, const csr<T, gpu>&, const dense<T, gpu, LA>&, operation,
                            const dense<T, gpu, LB>&, operation, csr<T, gpu>&) {
  no_cuda("cusparse_sddmm");
}

template <scalar T>
csr<T, gpu> cwise_intersection(const csr<T, gpu>&, const csr<T, gpu>&) {
  no_cuda("cwise_intersection");
}

SPADE_KERNELS_ROWWISE_INSTANTIATIONS(float)
SPADE_KERNELS_ROWWISE_INSTANTIATIONS(double)
SPADE_KERNELS_ELLR_INSTANTIATIONS(float)
SPADE_KERNELS_ELLR_INSTANTIATIONS(double)
SPADE_KERNELS_GCOO_INSTANTIATIONS(float)
SPADE_KERNELS_GCOO_INSTANTIATIONS(double)
SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(float)
SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(double)
SPADE_KERNELS_TILED_INSTANTIATIONS(float)
SPADE_KERNELS_TILED_INSTANTIATIONS(double)
SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(float)
SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(double)
SPADE_KERNELS_SDDMM_INSTANTIATIONS(float)
SPADE_KERNELS_SDDMM_INSTANTIATIONS(double)
SPADE_KERNELS_INTERSECTION_INSTANTIATIONS(float)
SPADE_KERNELS_INTERSECTION_INSTANTIATIONS(double)

}  // namespace spade::device
