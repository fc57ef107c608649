// What lib/'s CUDA families share: cuBLAS/cuSPARSE handles, data types, shape checks.
#pragma once

#include <cublas_v2.h>
#include <cusparse.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "detail/cub_temp.cuh"
#include "detail/vendor_check.hpp"
#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/device/vendor.hpp"

namespace spade::detail {

/// The context's cuBLAS handle with alpha and beta read from the host. The handle is shared with
/// every other user of the context, so the mode is set on each use rather than assumed.
inline cublasHandle_t cublas_of(context& ctx) {
  const auto handle = static_cast<cublasHandle_t>(ctx.cublas_handle());
  SPADE_CUBLAS_TRY(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST),
                   "reading scalars from the host (cuBLAS pointer mode)");
  return handle;
}

/// The context's cuSPARSE handle with scalars (and csrgeam2's nnz) on the host.
inline cusparseHandle_t cusparse_of(context& ctx) {
  const auto handle = static_cast<cusparseHandle_t>(ctx.cusparse_handle());
  SPADE_CUSPARSE_TRY(cusparseSetPointerMode(handle, CUSPARSE_POINTER_MODE_HOST),
                     "reading scalars from the host (cuSPARSE pointer mode)");
  return handle;
}

template <scalar T>
inline constexpr cudaDataType_t cuda_type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;

inline std::string shape_text(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

/// Throws dimension_mismatch "`what`: `detail`" unless `ok`.
inline void require_shapes(bool ok, const char* what, const std::string& detail) {
  if (!ok) throw dimension_mismatch(std::string(what) + ": " + detail);
}

inline bool transposed(device::operation op) {
  return op == device::operation::transpose;
}

/// d_values[0, count) *= s on ctx's stream (cuBLAS SCAL). Defined in blas.cu.
template <scalar T>
void scale_on(context& ctx, T s, T* d_values, std::int64_t count, const char* doing);

/// d_values = beta · d_values with BLAS's beta semantics: beta = 0 overwrites with zeros, NaN
/// included, and beta = 1 touches nothing.
template <scalar T>
void scale_or_zero(context& ctx, T beta, T* d_values, std::int64_t count, const char* doing) {
  if (count <= 0 || beta == T(1)) return;
  if (beta == T(0))
    ctx.fill_zero(d_values, static_cast<std::size_t>(count) * sizeof(T));
  else
    scale_on(ctx, beta, d_values, count, doing);
}

}  // namespace spade::detail
