// The one list of lib/convert's explicit instantiations, a macro per source file, expanded by
// that CUDA file and by the no-CUDA stub inside namespace spade::device.
#pragma once

#include "spade/device/convert.hpp"

/// Everything csr_coo.cu defines, for scalar T.
#define SPADE_CONVERT_CSR_COO_INSTANTIATIONS(T)           \
  template coo<T, gpu> csr_to_coo<T>(const csr<T, gpu>&); \
  template csr<T, gpu> coo_to_csr<T>(const coo<T, gpu>&);

/// Everything dense.cu defines, for scalar T.
#define SPADE_CONVERT_DENSE_INSTANTIATIONS(T)                                       \
  template dense<T, gpu, row_major> csr_to_dense<T, row_major>(const csr<T, gpu>&); \
  template dense<T, gpu, col_major> csr_to_dense<T, col_major>(const csr<T, gpu>&); \
  template csr<T, gpu> dense_to_csr<T, row_major>(const dense<T, gpu, row_major>&); \
  template csr<T, gpu> dense_to_csr<T, col_major>(const dense<T, gpu, col_major>&); \
  template dense<T, gpu, col_major> relayout<T, row_major, col_major>(              \
      const dense<T, gpu, row_major>&);                                             \
  template dense<T, gpu, row_major> relayout<T, col_major, row_major>(              \
      const dense<T, gpu, col_major>&);

/// Everything ellr.cu defines, for scalar T.
#define SPADE_CONVERT_ELLR_INSTANTIATIONS(T)                             \
  template ellr<T, gpu> csr_to_ellr<T>(const csr<T, gpu>&, ellr_layout); \
  template csr<T, gpu> ellr_to_csr<T>(const ellr<T, gpu>&);

/// Everything gcoo.cu defines, for scalar T.
#define SPADE_CONVERT_GCOO_INSTANTIATIONS(T)                                          \
  template gcoo<T, gpu> csr_to_gcoo<T>(const csr<T, gpu>&, index_t);                  \
  template csr<T, gpu> gcoo_to_csr<T>(const gcoo<T, gpu>&);                           \
  template gcoo<T, gpu> dense_to_gcoo<T>(const dense<T, gpu, row_major>&, index_t);   \
  template dense<T, gpu, row_major> gcoo_to_dense<T, row_major>(const gcoo<T, gpu>&); \
  template dense<T, gpu, col_major> gcoo_to_dense<T, col_major>(const gcoo<T, gpu>&);

/// Everything tiled.cu defines, for scalar T.
#define SPADE_CONVERT_TILED_INSTANTIATIONS(T)                 \
  template tiled<T, gpu> csr_to_tiled<T>(const csr<T, gpu>&); \
  template csr<T, gpu> tiled_to_csr<T>(const tiled<T, gpu>&);
