// The one list of lib/vendor's explicit instantiations (float, double, every layout), expanded by
// the CUDA sources and by the no-CUDA stub inside namespace spade::device.
#pragma once

#include <cstdint>

#include "spade/device/vendor.hpp"

#define SPADE_VENDOR_GEMM(T, LA, LB, LC)                                    \
  template void gemm<T, LA, LB, LC>(T, const dense<T, gpu, LA>&, operation, \
                                    const dense<T, gpu, LB>&, operation, T, dense<T, gpu, LC>&);

#define SPADE_VENDOR_PER_LAYOUT(T, L)                                                         \
  template void gemv<T, L>(T, const dense<T, gpu, L>&, operation, const vector<T, gpu>&, T,   \
                           vector<T, gpu>&);                                                  \
  template void geam<T, L>(T, const dense<T, gpu, L>&, operation, T, const dense<T, gpu, L>&, \
                           operation, dense<T, gpu, L>&);

#define SPADE_VENDOR_SPMM(T, LB, LC)                                                           \
  template void spmm<T, LB, LC>(T, const csr<T, gpu>&, operation, const dense<T, gpu, LB>&, T, \
                                dense<T, gpu, LC>&, spmm_algorithm);

/// Everything blas.cu defines, for scalar T.
#define SPADE_VENDOR_BLAS_INSTANTIATIONS(T)                                                    \
  SPADE_VENDOR_GEMM(T, row_major, row_major, row_major)                                        \
  SPADE_VENDOR_GEMM(T, row_major, row_major, col_major)                                        \
  SPADE_VENDOR_GEMM(T, row_major, col_major, row_major)                                        \
  SPADE_VENDOR_GEMM(T, row_major, col_major, col_major)                                        \
  SPADE_VENDOR_GEMM(T, col_major, row_major, row_major)                                        \
  SPADE_VENDOR_GEMM(T, col_major, row_major, col_major)                                        \
  SPADE_VENDOR_GEMM(T, col_major, col_major, row_major)                                        \
  SPADE_VENDOR_GEMM(T, col_major, col_major, col_major)                                        \
  SPADE_VENDOR_PER_LAYOUT(T, row_major)                                                        \
  SPADE_VENDOR_PER_LAYOUT(T, col_major)                                                        \
  template void axpby<T>(T, const vector<T, gpu>&, T, const vector<T, gpu>&, vector<T, gpu>&); \
  template T dot<T>(const vector<T, gpu>&, const vector<T, gpu>&);                             \
  template T nrm2<T>(const vector<T, gpu>&);                                                   \
  template void scale<T>(T, T*, std::int64_t);                                                 \
  template void gemm_strided<T, row_major>(T, const strided_operand<T>&, operation,            \
                                           const strided_operand<T>&, operation, T,            \
                                           dense<T, gpu, row_major>&);                         \
  template void gemm_strided<T, col_major>(T, const strided_operand<T>&, operation,            \
                                           const strided_operand<T>&, operation, T,            \
                                           dense<T, gpu, col_major>&);                         \
  template void gemv_strided<T>(T, const strided_operand<T>&, operation,                       \
                                const strided_operand<T>&, T, vector<T, gpu>&);

/// Everything sparse.cu defines, for scalar T.
#define SPADE_VENDOR_SPARSE_INSTANTIATIONS(T)                                       \
  template void spmv<T>(T, const csr<T, gpu>&, operation, const vector<T, gpu>&, T, \
                        vector<T, gpu>&, spmv_algorithm);                           \
  SPADE_VENDOR_SPMM(T, row_major, row_major)                                        \
  SPADE_VENDOR_SPMM(T, row_major, col_major)                                        \
  SPADE_VENDOR_SPMM(T, col_major, row_major)                                        \
  SPADE_VENDOR_SPMM(T, col_major, col_major)                                        \
  template csr<T, gpu> spgemm<T>(const csr<T, gpu>&, const csr<T, gpu>&);           \
  template csr<T, gpu> csr_add<T>(T, const csr<T, gpu>&, T, const csr<T, gpu>&);    \
  template csr<T, gpu> transpose<T>(const csr<T, gpu>&);
