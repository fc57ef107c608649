// The one list of lib/kernels' explicit instantiations, a macro per source file, expanded by
// that CUDA file and by the no-CUDA stub inside namespace spade::device.
#pragma once

#include <cstdint>
#include <vector>

#include "spade/device/kernels.hpp"

#define SPADE_KERNELS_ROWWISE_SPMM(T, LB, LC)                             \
  template void rowwise_spmm<T, LB, LC>(T, const csr<T, gpu>&, operation, \
                                        const dense<T, gpu, LB>&, T, dense<T, gpu, LC>&);

/// Everything csr_rowwise.cu defines, for scalar T.
#define SPADE_KERNELS_ROWWISE_INSTANTIATIONS(T)                                             \
  template void rowwise_spmv<T>(T, const csr<T, gpu>&, operation, const vector<T, gpu>&, T, \
                                vector<T, gpu>&);                                           \
  template csr<T, gpu> transpose_by_sort<T>(const csr<T, gpu>&);                            \
  SPADE_KERNELS_ROWWISE_SPMM(T, row_major, row_major)                                       \
  SPADE_KERNELS_ROWWISE_SPMM(T, row_major, col_major)                                       \
  SPADE_KERNELS_ROWWISE_SPMM(T, col_major, row_major)                                       \
  SPADE_KERNELS_ROWWISE_SPMM(T, col_major, col_major)

#define SPADE_KERNELS_ELLR_SPMM(T, LX, LY)                                                         \
  template ellr_spmv_launch ellr_spmm<T, LX, LY>(T, const ellr<T, gpu>&, const dense<T, gpu, LX>&, \
                                                 T, dense<T, gpu, LY>&, int, int);

/// Everything ellr_spmv.cu defines, for scalar T.
#define SPADE_KERNELS_ELLR_INSTANTIATIONS(T)                                               \
  template ellr_spmv_launch ellr_spmv<T>(T, const ellr<T, gpu>&, const vector<T, gpu>&, T, \
                                         vector<T, gpu>&, int);                            \
  SPADE_KERNELS_ELLR_SPMM(T, row_major, row_major)                                         \
  SPADE_KERNELS_ELLR_SPMM(T, row_major, col_major)                                         \
  SPADE_KERNELS_ELLR_SPMM(T, col_major, row_major)                                         \
  SPADE_KERNELS_ELLR_SPMM(T, col_major, col_major)

/// Everything gcoo_spmm.cu defines, for scalar T.
#define SPADE_KERNELS_GCOO_INSTANTIATIONS(T)                                                      \
  template gcoo_spmm_launch gcoo_spmm<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, \
                                         T, dense<T, gpu, row_major>&, int);                      \
  template void gcoo_spmm_paper<T>(T, const gcoo<T, gpu>&, const dense<T, gpu, row_major>&, T,    \
                                   dense<T, gpu, row_major>&, int);

/// Everything hash_spgemm.cu defines, for scalar T.
#define SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(T)                              \
  template csr<T, gpu> hash_spgemm<T>(T, const csr<T, gpu>&, const csr<T, gpu>&, \
                                      hash_spgemm_report*, bool, std::int64_t);  \
  template hash_spgemm_report hash_spgemm_profile<T>(const csr<T, gpu>&, const csr<T, gpu>&);

/// Everything tiled_spgemm.cu defines, for scalar T.
#define SPADE_KERNELS_TILED_INSTANTIATIONS(T)                                                 \
  template tiled<T, gpu> tiled_spgemm<T>(T, const tiled<T, gpu>&, const tiled<T, gpu>&,       \
                                         tile_arithmetic, tiled_spgemm_report*, bool);        \
  template tile_census count_tiles<T>(const csr<T, gpu>&, const csr<T, gpu>&);                \
  template std::int64_t count_own_tiles<T>(const csr<T, gpu>&);                               \
  template std::vector<T> tile_product_probe<T>(const std::vector<T>&, const std::vector<T>&, \
                                                tile_arithmetic);

#define SPADE_KERNELS_TILED_SPMM(T, LB, LC)                                                 \
  template void tiled_spmm<T, LB, LC>(T, const tiled<T, gpu>&, const dense<T, gpu, LB>&, T, \
                                      dense<T, gpu, LC>&, spmm_arithmetic);

/// Everything tiled_spmm.cu defines, for scalar T.
#define SPADE_KERNELS_TILED_SPMM_INSTANTIATIONS(T)  \
  SPADE_KERNELS_TILED_SPMM(T, row_major, row_major) \
  SPADE_KERNELS_TILED_SPMM(T, row_major, col_major) \
  SPADE_KERNELS_TILED_SPMM(T, col_major, row_major) \
  SPADE_KERNELS_TILED_SPMM(T, col_major, col_major)

#define SPADE_KERNELS_SDDMM_PAIR(T, LA, LB)                                                        \
  template sddmm_launch sddmm<T, LA, LB>(T, const csr<T, gpu>&, const dense<T, gpu, LA>&,          \
                                         operation, const dense<T, gpu, LB>&, operation,           \
                                         csr<T, gpu>&, bool);                                      \
  template sddmm_launch cusparse_sddmm<T, LA, LB>(T, const csr<T, gpu>&, const dense<T, gpu, LA>&, \
                                                  operation, const dense<T, gpu, LB>&, operation,  \
                                                  csr<T, gpu>&);

/// Everything sddmm.cu defines, for scalar T.
#define SPADE_KERNELS_SDDMM_INSTANTIATIONS(T)       \
  SPADE_KERNELS_SDDMM_PAIR(T, row_major, row_major) \
  SPADE_KERNELS_SDDMM_PAIR(T, row_major, col_major) \
  SPADE_KERNELS_SDDMM_PAIR(T, col_major, row_major) \
  SPADE_KERNELS_SDDMM_PAIR(T, col_major, col_major)

/// Everything sparse_cwise.cu defines, for scalar T.
#define SPADE_KERNELS_INTERSECTION_INSTANTIATIONS(T) \
  template csr<T, gpu> cwise_intersection<T>(const csr<T, gpu>&, const csr<T, gpu>&);
