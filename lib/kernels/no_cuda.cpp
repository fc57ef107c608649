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
                           int) {
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
std::vector<T> tile_product_probe(const std::vector<T>&, const std::vector<T>&, tile_arithmetic) {
  no_cuda("tile_product_probe");
}

#define SPADE_INSTANTIATE_LAYOUTS(T, LB, LC)                                                       \
  template void rowwise_spmm<T, LB, LC>(T, const csr<T, gpu>&, operation,                          \
                                        const dense<T, gpu, LB>&, T, dense<T, gpu, LC>&);          \
  template ellr_spmv_launch ellr_spmm<T, LB, LC>(T, const ellr<T, gpu>&, const dense<T, gpu, LB>&, \
                                                 T, dense<T, gpu, LC>&, int);
#define SPADE_INSTANTIATE(T)                                                                      \
  template gcoo_spmm_launch gcoo_spmm<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, \
                                         T, dense<T, gpu, row_major>&, int);                      \
  template void gcoo_spmm_paper<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, T,    \
                                   dense<T, gpu, row_major>&, int);                               \
  template void rowwise_spmv<T>(T, const csr<T, gpu>&, operation, const vector<T, gpu>&, T,       \
                                vector<T, gpu>&);                                                 \
  template csr<T, gpu> transpose_by_sort<T>(const csr<T, gpu>&);                                  \
  template csr<T, gpu> hash_spgemm<T>(T, const csr<T, gpu>&, const csr<T, gpu>&,                  \
                                      hash_spgemm_report*, bool, std::int64_t);                   \
  template hash_spgemm_report hash_spgemm_profile<T>(const csr<T, gpu>&, const csr<T, gpu>&);     \
  template tiled<T, gpu> tiled_spgemm<T>(T, const tiled<T, gpu>&, const tiled<T, gpu>&,           \
                                         tile_arithmetic, tiled_spgemm_report*, bool);            \
  template tile_census count_tiles<T>(const csr<T, gpu>&, const csr<T, gpu>&);                    \
  template std::vector<T> tile_product_probe<T>(const std::vector<T>&, const std::vector<T>&,     \
                                                tile_arithmetic);                                 \
  template ellr_spmv_launch ellr_spmv<T>(T, const ellr<T, gpu>&, const vector<T, gpu>&, T,        \
                                         vector<T, gpu>&, int);                                   \
  SPADE_INSTANTIATE_LAYOUTS(T, row_major, row_major)                                              \
  SPADE_INSTANTIATE_LAYOUTS(T, row_major, col_major)                                              \
  SPADE_INSTANTIATE_LAYOUTS(T, col_major, row_major)                                              \
  SPADE_INSTANTIATE_LAYOUTS(T, col_major, col_major)
SPADE_INSTANTIATE(float)
SPADE_INSTANTIATE(double)
#undef SPADE_INSTANTIATE
#undef SPADE_INSTANTIATE_LAYOUTS

}  // namespace spade::device
