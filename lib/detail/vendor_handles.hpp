// cuSPARSE/cuBLAS handles and cuSPARSE descriptors destroyed on scope exit (library and bench).
#pragma once

#include <cublas_v2.h>
#include <cusparse.h>

#include <utility>

namespace spade::detail {

/// Owns one library object (a handle or a descriptor) and destroys it with `Destroy` on scope
/// exit, also when a call between throws. `out()` releases what it held and hands the slot to a
/// create call; `get()` passes the object to the library.
template <class Handle, auto Destroy>
class owned {
 public:
  owned() = default;
  ~owned() { reset(); }
  owned(const owned&) = delete;
  owned& operator=(const owned&) = delete;
  owned(owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  owned& operator=(owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Handle* out() noexcept {
    reset();
    return &handle_;
  }
  Handle get() const noexcept { return handle_; }
  void reset() noexcept {
    if (handle_) Destroy(handle_);
    handle_ = nullptr;
  }

 private:
  Handle handle_ = nullptr;
};

using cusparse_handle = owned<cusparseHandle_t, &cusparseDestroy>;
using cublas_handle = owned<cublasHandle_t, &cublasDestroy>;
using const_sp_mat = owned<cusparseConstSpMatDescr_t, &cusparseDestroySpMat>;
using sp_mat = owned<cusparseSpMatDescr_t, &cusparseDestroySpMat>;
using const_dn_mat = owned<cusparseConstDnMatDescr_t, &cusparseDestroyDnMat>;
using dn_mat = owned<cusparseDnMatDescr_t, &cusparseDestroyDnMat>;
using const_dn_vec = owned<cusparseConstDnVecDescr_t, &cusparseDestroyDnVec>;
using dn_vec = owned<cusparseDnVecDescr_t, &cusparseDestroyDnVec>;
using spgemm_descr = owned<cusparseSpGEMMDescr_t, &cusparseSpGEMM_destroyDescr>;
using mat_descr = owned<cusparseMatDescr_t, &cusparseDestroyMatDescr>;

}  // namespace spade::detail
