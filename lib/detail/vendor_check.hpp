// SPADE_CUBLAS_TRY / SPADE_CUSPARSE_TRY: every cuBLAS and cuSPARSE call checked, failures thrown
// with context.
#pragma once

#include <cublas_v2.h>
#include <cusparse.h>

#include <string>

#include "detail/cuda_check.hpp"
#include "spade/core/error.hpp"

namespace spade::detail {

[[noreturn]] inline void throw_cublas(cublasStatus_t status, const char* call, const char* doing) {
  const std::string text = std::string(cublasGetStatusName(status)) + " (" +
                           cublasGetStatusString(status) + ") from " + call + " while " + doing;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw out_of_memory("out of device memory: " + text);
  throw cuda_error(text);
}

[[noreturn]] inline void throw_cusparse(cusparseStatus_t status, const char* call,
                                        const char* doing) {
  const std::string text = std::string(cusparseGetErrorName(status)) + " (" +
                           cusparseGetErrorString(status) + ") from " + call + " while " + doing;
  // cuSPARSE reports a workspace or result that does not fit the device as either status.
  if (status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES || status == CUSPARSE_STATUS_ALLOC_FAILED)
    throw out_of_memory("out of device memory: " + text);
  throw cuda_error(text);
}

/// For a status kept to decide on a fallback before it is reported.
inline void check_cusparse(cusparseStatus_t status, const char* call, const char* doing) {
  if (status != CUSPARSE_STATUS_SUCCESS) throw_cusparse(status, call, doing);
}

}  // namespace spade::detail

/// Runs a cuBLAS call; on failure throws spade::cuda_error (spade::out_of_memory for
/// CUBLAS_STATUS_ALLOC_FAILED) naming the call, its status and `doing`.
#define SPADE_CUBLAS_TRY(call, doing)                             \
  do {                                                            \
    const cublasStatus_t spade_status_ = (call);                  \
    if (spade_status_ != CUBLAS_STATUS_SUCCESS)                   \
      ::spade::detail::throw_cublas(spade_status_, #call, doing); \
  } while (0)

/// Runs a cuSPARSE call; on failure throws spade::cuda_error (spade::out_of_memory for
/// CUSPARSE_STATUS_INSUFFICIENT_RESOURCES / ALLOC_FAILED) naming the call, its status and `doing`.
#define SPADE_CUSPARSE_TRY(call, doing)                             \
  do {                                                              \
    const cusparseStatus_t spade_status_ = (call);                  \
    if (spade_status_ != CUSPARSE_STATUS_SUCCESS)                   \
      ::spade::detail::throw_cusparse(spade_status_, #call, doing); \
  } while (0)
