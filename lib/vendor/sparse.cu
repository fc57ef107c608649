// Sparse products on the GPU through cuSPARSE: SpMV, SpMM, SpGEMM, csrgeam2 and csr2csc.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "detail/library_support.cuh"
#include "detail/vendor_handles.hpp"
#include "instantiate.hpp"
#include "spade/device/convert.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

// ---- descriptors destroyed on scope exit (detail/vendor_handles.hpp) ------------------------

using detail::const_dn_mat;
using detail::const_dn_vec;
using detail::const_sp_mat;
using detail::dn_mat;
using detail::dn_vec;
using detail::mat_descr;
using detail::sp_mat;
using detail::spgemm_descr;

template <class T>
void describe(const_sp_mat& d, const csr<T, gpu>& a) {
  SPADE_CUSPARSE_TRY(
      cusparseCreateConstCsr(d.out(), a.rows(), a.cols(), a.nnz(), a.row_ptr().data(),
                             a.col_idx().data(), a.values().data(), CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, detail::cuda_type<T>),
      "describing a csr operand to cuSPARSE");
}

// Kept in a csr operand's conversion cache: for its last SpMV and its last SpMM, a cuSPARSE
// descriptor with its workspace (and SpMM's preprocessing), so repeating a product (an
// iterative solver, a GNN layer) skips descriptor creation, the buffer-size query, the
// allocation and the preprocessing. Each slot owns its own descriptor because cuSPARSE keeps
// SpMM preprocessing inside the descriptor: a descriptor preprocessed for one algorithm and
// operation gave wrong results when reused with another. A slot whose key changes starts over
// with a fresh descriptor. The cache is cleared whenever the operand's values are written.
struct cusparse_operand_state {
  struct slot {
    std::uint64_t key[8] = {};  // what the descriptor and buffer were prepared for
    bool valid = false;
    const_sp_mat descr;
    device_buffer<std::byte> buffer;
  };
  slot spmv;
  slot spmm;
};
struct cusparse_operand_key {};

template <class T>
cusparse_operand_state& operand_state(const csr<T, gpu>& a) {
  using holder = std::shared_ptr<cusparse_operand_state>;
  const holder& state = a.cache().template get_or_make<cusparse_operand_key, holder>(
      [] { return std::make_shared<cusparse_operand_state>(); });
  return *state;
}

// Makes `slot` hold a fresh descriptor of `a` for `key` (its buffer is sized by the caller).
template <class T>
void restart(cusparse_operand_state::slot& slot, const csr<T, gpu>& a, const std::uint64_t* key) {
  slot.valid = false;
  slot.descr.reset();
  describe(slot.descr, a);
  std::copy(key, key + 8, slot.key);
}

bool matches(const cusparse_operand_state::slot& slot, const std::uint64_t* key) {
  return slot.valid && std::equal(key, key + 8, slot.key);
}

template <layout L>
constexpr cusparseOrder_t order_of =
    std::is_same_v<L, row_major> ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;

// cuSPARSE rejects a leading dimension of 0 even where no element is read.
std::int64_t ld_of(index_t leading_dimension) {
  return std::max<index_t>(leading_dimension, 1);
}

cusparseOperation_t cusparse_op(operation op) {
  return detail::transposed(op) ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
}

// Where a fallback is possible the status is kept, with the call that gave it, and reported only
// once no alternative is left.
struct attempt {
  cusparseStatus_t status;
  const char* call;
};

bool unsupported(const attempt& a) {
  return a.status == CUSPARSE_STATUS_NOT_SUPPORTED;
}

// A workspace of at least one byte: a null buffer is how some cuSPARSE calls are asked for a size.
device_buffer<std::byte> workspace(std::size_t bytes, context& ctx) {
  return device_buffer<std::byte>(std::max<std::size_t>(bytes, 1), ctx);
}

// ---- SpMV ------------------------------------------------------------------------------------

cusparseSpMVAlg_t cusparse_alg(spmv_algorithm algorithm) {
  return algorithm == spmv_algorithm::csr_alg1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2;
}

template <class T>
attempt try_spmv(context& ctx, cusparseHandle_t handle, cusparseOperation_t op, const T& alpha,
                 const csr<T, gpu>& matrix, cusparse_operand_state& a, const const_dn_vec& x,
                 const T& beta, const dn_vec& y, cusparseSpMVAlg_t alg) {
  auto& slot = a.spmv;
  const std::uint64_t key[8] = {static_cast<std::uint64_t>(op), static_cast<std::uint64_t>(alg)};
  if (!matches(slot, key)) {
    restart(slot, matrix, key);
    std::size_t bytes = 0;
    const cusparseStatus_t status =
        cusparseSpMV_bufferSize(handle, op, &alpha, slot.descr.get(), x.get(), &beta, y.get(),
                                detail::cuda_type<T>, alg, &bytes);
    if (status != CUSPARSE_STATUS_SUCCESS) return {status, "cusparseSpMV_bufferSize"};
    slot.buffer = workspace(bytes, ctx);
    // Without it cuSPARSE repeats its analysis of A on every call: spade-bench overhead (csr
    // 1000x1000) measured 12.4 us host / 11.4 us GPU per call without, 7.8 / 8.0 with, against
    // 6.8 / 7.9 for cuSPARSE called directly. Some algorithms have nothing to prepare.
    const cusparseStatus_t prepared =
        cusparseSpMV_preprocess(handle, op, &alpha, slot.descr.get(), x.get(), &beta, y.get(),
                                detail::cuda_type<T>, alg, slot.buffer.data());
    if (prepared != CUSPARSE_STATUS_SUCCESS && prepared != CUSPARSE_STATUS_NOT_SUPPORTED)
      return {prepared, "cusparseSpMV_preprocess"};
    slot.valid = true;
  }
  const cusparseStatus_t status =
      cusparseSpMV(handle, op, &alpha, slot.descr.get(), x.get(), &beta, y.get(),
                   detail::cuda_type<T>, alg, slot.buffer.data());
  if (status != CUSPARSE_STATUS_SUCCESS) slot.valid = false;
  return {status, "cusparseSpMV"};
}

// ---- SpMM ------------------------------------------------------------------------------------

// The automatic choice follows plan::spmm_alg2_preferred (spade::tuning()'s cut-offs). ALG3
// takes only op(A) = A: asked for Aᵀ it fails before launching anything and cuSPARSE prints
// "** On entry to cusparseSpMM_bufferSize()" on the user's stderr, so a transposed A gets
// DEFAULT, which the caller's fallback would run anyway.
cusparseSpMMAlg_t cusparse_alg(spmm_algorithm algorithm, std::int64_t c_rows, std::int64_t c_cols,
                               std::int64_t a_rows, std::int64_t a_nnz, bool double_precision,
                               bool transposed_a) {
  cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG2;
  switch (algorithm) {
    case spmm_algorithm::automatic:
      alg = spmm_alg2_preferred(c_rows, c_cols, a_rows, a_nnz, double_precision)
                ? CUSPARSE_SPMM_CSR_ALG2
                : CUSPARSE_SPMM_CSR_ALG3;
      break;
    case spmm_algorithm::csr_alg1:
      alg = CUSPARSE_SPMM_CSR_ALG1;
      break;
    case spmm_algorithm::csr_alg3:
      alg = CUSPARSE_SPMM_CSR_ALG3;
      break;
    case spmm_algorithm::csr_alg2:
      break;
  }
  return alg == CUSPARSE_SPMM_CSR_ALG3 && transposed_a ? CUSPARSE_SPMM_ALG_DEFAULT : alg;
}

// What a prepared SpMM descriptor is kept for besides A: the dense operands' shapes, leading
// dimensions and orders, not their addresses. cuSPARSE lets B, C, alpha, beta and A's values
// change between the preprocessing and later calls (the SpMV slot has never keyed on x and y
// either), and the addresses do change from call to call in ordinary code: a result allocated
// while the previous one is alive, or a B made fresh each iteration, alternates between pool
// blocks. Keyed on them, each such call ran cusparseSpMM_preprocess again: 28-68 ms instead of
// 0.6-1.1 ms for the parts of an R-MAT scale-22 SpMM on two H200s (2026-11-28).
struct dense_operands_key {
  std::uint64_t b_shape, b_ld, c_shape, c_ld_and_order;
};

template <class B, class C>
dense_operands_key key_of(const B& b, const C& c, cusparseOrder_t c_order) {
  auto shape = [](const auto& d) {
    return static_cast<std::uint64_t>(d.rows()) << 32 | static_cast<std::uint32_t>(d.cols());
  };
  return {shape(b),
          static_cast<std::uint64_t>(b.leading_dimension()) << 1 | (c_order == CUSPARSE_ORDER_ROW),
          shape(c),
          static_cast<std::uint64_t>(c.leading_dimension()) << 1 | (c_order == CUSPARSE_ORDER_ROW)};
}

std::atomic<std::uint64_t> spmm_preparations{0};

template <class T>
attempt try_spmm(context& ctx, cusparseHandle_t handle, cusparseOperation_t op_a,
                 cusparseOperation_t op_b, const T& alpha, const csr<T, gpu>& matrix,
                 cusparse_operand_state& a, const const_dn_mat& b, const T& beta, const dn_mat& c,
                 const dense_operands_key& operands, cusparseSpMMAlg_t alg) {
  const cudaDataType_t type = detail::cuda_type<T>;
  auto& slot = a.spmm;
  // Preprocessing is tied to the operation, the algorithm and the operands' shapes.
  const std::uint64_t key[8] = {static_cast<std::uint64_t>(op_a) << 32 | op_b,
                                static_cast<std::uint64_t>(alg),
                                operands.b_shape,
                                operands.b_ld,
                                operands.c_shape,
                                operands.c_ld_and_order};
  if (!matches(slot, key)) {
    restart(slot, matrix, key);
    spmm_preparations.fetch_add(1, std::memory_order_relaxed);
    std::size_t bytes = 0;
    cusparseStatus_t status = cusparseSpMM_bufferSize(handle, op_a, op_b, &alpha, slot.descr.get(),
                                                      b.get(), &beta, c.get(), type, alg, &bytes);
    if (status != CUSPARSE_STATUS_SUCCESS) return {status, "cusparseSpMM_bufferSize"};
    slot.buffer = workspace(bytes, ctx);
    if (alg == CUSPARSE_SPMM_CSR_ALG2 || alg == CUSPARSE_SPMM_CSR_ALG3) {
      status = cusparseSpMM_preprocess(handle, op_a, op_b, &alpha, slot.descr.get(), b.get(), &beta,
                                       c.get(), type, alg, slot.buffer.data());
      if (status != CUSPARSE_STATUS_SUCCESS) return {status, "cusparseSpMM_preprocess"};
    }
    slot.valid = true;
  }
  const cusparseStatus_t status =
      cusparseSpMM(handle, op_a, op_b, &alpha, slot.descr.get(), b.get(), &beta, c.get(), type, alg,
                   slot.buffer.data());
  if (status != CUSPARSE_STATUS_SUCCESS) slot.valid = false;
  return {status, "cusparseSpMM"};
}

// B's storage described in the order `Order` of C: B itself when its layout is Order, else the
// same bytes read as Bᵀ in Order (same leading dimension), which op(B) = transpose undoes.
template <layout Order, class T, layout LB>
cusparseOperation_t describe_in_order(const_dn_mat& d, const dense<T, gpu, LB>& b) {
  constexpr bool same = std::is_same_v<LB, Order>;
  SPADE_CUSPARSE_TRY(
      cusparseCreateConstDnMat(d.out(), same ? b.rows() : b.cols(), same ? b.cols() : b.rows(),
                               ld_of(b.leading_dimension()), b.data(), detail::cuda_type<T>,
                               order_of<Order>),
      "describing the dense operand B to cuSPARSE (spmm)");
  return same ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
}

}  // namespace

template <scalar T>
void spmv(T alpha, const csr<T, gpu>& a, operation op_a, const vector<T, gpu>& x, T beta,
          vector<T, gpu>& y, spmv_algorithm algorithm) {
  const bool ta = detail::transposed(op_a);
  const index_t m = ta ? a.cols() : a.rows();
  const index_t k = ta ? a.rows() : a.cols();
  detail::require_shapes(x.size() == k && y.size() == m, "spmv",
                         "op(A) is " + detail::shape_text(m, k) + ", x has " +
                             std::to_string(x.size()) + " elements, y has " +
                             std::to_string(y.size()));
  if (m == 0) return;
  if (rowwise_preferred(a.rows(), a.cols(), a.nnz())) {
    rowwise_spmv(alpha, a, op_a, x, beta, y);
    return;
  }
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), x.values(), y.values());
  if (a.nnz() == 0) {  // op(A)·x is zero; cuSPARSE rejects some empty operands
    detail::scale_or_zero(ctx, beta, y.data(), m, "scaling y by beta for an empty A (spmv)");
    return;
  }
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  cusparse_operand_state& da = operand_state(a);
  const_dn_vec dx;
  SPADE_CUSPARSE_TRY(cusparseCreateConstDnVec(dx.out(), x.size(), x.data(), detail::cuda_type<T>),
                     "describing x to cuSPARSE (spmv)");
  dn_vec dy;
  SPADE_CUSPARSE_TRY(cusparseCreateDnVec(dy.out(), y.size(), y.data(), detail::cuda_type<T>),
                     "describing y to cuSPARSE (spmv)");
  const cusparseOperation_t op = cusparse_op(op_a);
  attempt result = try_spmv(ctx, handle, op, alpha, a, da, dx, beta, dy, cusparse_alg(algorithm));
  // An algorithm may not take every operation; the default one takes all.
  if (unsupported(result))
    result = try_spmv(ctx, handle, op, alpha, a, da, dx, beta, dy, CUSPARSE_SPMV_ALG_DEFAULT);
  detail::check_cusparse(result.status, result.call, "multiplying csr by a vector (spmv)");
}

template <scalar T, layout LB, layout LC>
void spmm(T alpha, const csr<T, gpu>& a, operation op_a, const dense<T, gpu, LB>& b, T beta,
          dense<T, gpu, LC>& c, spmm_algorithm algorithm) {
  const bool ta = detail::transposed(op_a);
  const index_t m = ta ? a.cols() : a.rows();
  const index_t k = ta ? a.rows() : a.cols();
  detail::require_shapes(b.rows() == k && c.rows() == m && c.cols() == b.cols(), "spmm",
                         "op(A) is " + detail::shape_text(m, k) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()) + ", C is " +
                             detail::shape_text(c.rows(), c.cols()));
  if (c.element_count() == 0) return;
  if (rowwise_preferred(a.rows(), a.cols(), a.nnz())) {
    rowwise_spmm(alpha, a, op_a, b, beta, c);
    return;
  }
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.values(), c.values());
  if (a.nnz() == 0) {
    detail::scale_or_zero(ctx, beta, c.data(), static_cast<std::int64_t>(c.element_count()),
                          "scaling C by beta for an empty A (spmm)");
    return;
  }
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  cusparse_operand_state& da = operand_state(a);
  dn_mat dc;
  SPADE_CUSPARSE_TRY(cusparseCreateDnMat(dc.out(), c.rows(), c.cols(), ld_of(c.leading_dimension()),
                                         c.data(), detail::cuda_type<T>, order_of<LC>),
                     "describing the dense result C to cuSPARSE (spmm)");
  const cusparseOperation_t op = cusparse_op(op_a);
  const cusparseSpMMAlg_t alg =
      cusparse_alg(algorithm, c.rows(), c.cols(), a.rows(), a.nnz(), std::is_same_v<T, double>, ta);
  // Each algorithm takes only some combinations of op(A), op(B) and orders, and reports the others
  // as NOT_SUPPORTED before it launches anything; CUSPARSE_SPMM_ALG_DEFAULT takes the most.
  auto run = [&](const const_dn_mat& db, const dense_operands_key& operands,
                 cusparseOperation_t op_b) {
    attempt result = try_spmm(ctx, handle, op, op_b, alpha, a, da, db, beta, dc, operands, alg);
    if (unsupported(result) && alg != CUSPARSE_SPMM_ALG_DEFAULT)
      result = try_spmm(ctx, handle, op, op_b, alpha, a, da, db, beta, dc, operands,
                        CUSPARSE_SPMM_ALG_DEFAULT);
    return result;
  };
  const_dn_mat db;
  const cusparseOperation_t op_b = describe_in_order<LC>(db, b);
  attempt result = run(db, key_of(b, c, order_of<LC>), op_b);
  if constexpr (!std::is_same_v<LB, LC>) {
    // Last resort where op(B) = transpose is refused too: a copy of B in C's layout.
    if (unsupported(result)) {
      const dense<T, gpu, LC> b_copy = relayout<T, LB, LC>(b);
      const_dn_mat db_copy;
      describe_in_order<LC>(db_copy, b_copy);
      result = run(db_copy, key_of(b_copy, c, order_of<LC>), CUSPARSE_OPERATION_NON_TRANSPOSE);
    }
  }
  detail::check_cusparse(result.status, result.call, "multiplying csr by a dense matrix (spmm)");
}

template <scalar T>
csr<T, gpu> spgemm(const csr<T, gpu>& a, const csr<T, gpu>& b) {
  detail::require_shapes(a.cols() == b.rows(), "spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  const index_t m = a.rows();
  const index_t n = b.cols();
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(m) + 1, ctx);
  if (a.nnz() == 0 || b.nnz() == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
  }
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  const cudaDataType_t type = detail::cuda_type<T>;
  const cusparseOperation_t none = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  const_sp_mat da;
  describe(da, a);
  const_sp_mat db;
  describe(db, b);
  sp_mat dc;
  SPADE_CUSPARSE_TRY(
      cusparseCreateCsr(dc.out(), m, n, 0, row_ptr.data(), nullptr, nullptr, CUSPARSE_INDEX_32I,
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
      "describing the csr result to cuSPARSE (spgemm)");
  spgemm_descr plan;
  SPADE_CUSPARSE_TRY(cusparseSpGEMM_createDescr(plan.out()), "creating the SpGEMM descriptor");

  // The reuse variant: its symbolic phase fixes C's pattern with sorted columns. Each workspace is
  // asked for with a null buffer, then given; it is released as soon as no later phase reads it.
  std::size_t bytes1 = 0;
  SPADE_CUSPARSE_TRY(
      cusparseSpGEMMreuse_workEstimation(handle, none, none, da.get(), db.get(), dc.get(), alg,
                                         plan.get(), &bytes1, nullptr),
      "sizing the SpGEMM work estimation");
  device_buffer<std::byte> work1 = workspace(bytes1, ctx);
  SPADE_CUSPARSE_TRY(
      cusparseSpGEMMreuse_workEstimation(handle, none, none, da.get(), db.get(), dc.get(), alg,
                                         plan.get(), &bytes1, work1.data()),
      "estimating the work of a sparse product (spgemm)");
  std::size_t bytes2 = 0;
  std::size_t bytes3 = 0;
  std::size_t bytes4 = 0;
  SPADE_CUSPARSE_TRY(
      cusparseSpGEMMreuse_nnz(handle, none, none, da.get(), db.get(), dc.get(), alg, plan.get(),
                              &bytes2, nullptr, &bytes3, nullptr, &bytes4, nullptr),
      "sizing the SpGEMM symbolic phase");
  device_buffer<std::byte> work2 = workspace(bytes2, ctx);
  device_buffer<std::byte> work3 = workspace(bytes3, ctx);
  device_buffer<std::byte> work4 = workspace(bytes4, ctx);
  // Blocks until nnz(C) is on the host: the one synchronisation.
  SPADE_CUSPARSE_TRY(
      cusparseSpGEMMreuse_nnz(handle, none, none, da.get(), db.get(), dc.get(), alg, plan.get(),
                              &bytes2, work2.data(), &bytes3, work3.data(), &bytes4, work4.data()),
      "computing the pattern of a sparse product (spgemm)");
  work1 = {};
  work2 = {};
  std::int64_t c_rows = 0;
  std::int64_t c_cols = 0;
  std::int64_t c_nnz = 0;
  SPADE_CUSPARSE_TRY(cusparseSpMatGetSize(dc.get(), &c_rows, &c_cols, &c_nnz),
                     "reading nnz of a sparse product (spgemm)");
  if (c_nnz > std::numeric_limits<index_t>::max())
    throw invalid_matrix("spgemm: " + std::to_string(c_nnz) + " nonzeros in the " +
                         detail::shape_text(m, n) +
                         " product exceed the 32-bit index type (at most 2147483647)");
  if (c_nnz == 0) {  // nothing for the copy phase to write, row pointers included
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
  }
  device_buffer<index_t> col_idx(static_cast<std::size_t>(c_nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(c_nnz), ctx);
  SPADE_CUSPARSE_TRY(
      cusparseCsrSetPointers(dc.get(), row_ptr.data(), col_idx.data(), values.data()),
      "handing the result arrays to cuSPARSE (spgemm)");
  std::size_t bytes5 = 0;
  SPADE_CUSPARSE_TRY(cusparseSpGEMMreuse_copy(handle, none, none, da.get(), db.get(), dc.get(), alg,
                                              plan.get(), &bytes5, nullptr),
                     "sizing the SpGEMM copy phase");
  device_buffer<std::byte> work5 = workspace(bytes5, ctx);
  SPADE_CUSPARSE_TRY(cusparseSpGEMMreuse_copy(handle, none, none, da.get(), db.get(), dc.get(), alg,
                                              plan.get(), &bytes5, work5.data()),
                     "writing the pattern of a sparse product (spgemm)");
  work3 = {};
  const T alpha = T(1);
  const T beta = T(0);
  SPADE_CUSPARSE_TRY(cusparseSpGEMMreuse_compute(handle, none, none, &alpha, da.get(), db.get(),
                                                 &beta, dc.get(), type, alg, plan.get()),
                     "computing the values of a sparse product (spgemm)");
  return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), std::move(col_idx), std::move(values));
}

namespace {

void xcsrgeam2_buffer_size(cusparseHandle_t h, int m, int n, const float* alpha,
                           cusparseMatDescr_t descr, int nnz_a, const float* a_values,
                           const int* a_row_ptr, const int* a_col_idx, const float* beta, int nnz_b,
                           const float* b_values, const int* b_row_ptr, const int* b_col_idx,
                           const int* c_row_ptr, std::size_t* bytes) {
  SPADE_CUSPARSE_TRY(
      cusparseScsrgeam2_bufferSizeExt(h, m, n, alpha, descr, nnz_a, a_values, a_row_ptr, a_col_idx,
                                      beta, descr, nnz_b, b_values, b_row_ptr, b_col_idx, descr,
                                      nullptr, c_row_ptr, nullptr, bytes),
      "sizing the workspace of a sparse sum (csr_add)");
}
void xcsrgeam2_buffer_size(cusparseHandle_t h, int m, int n, const double* alpha,
                           cusparseMatDescr_t descr, int nnz_a, const double* a_values,
                           const int* a_row_ptr, const int* a_col_idx, const double* beta,
                           int nnz_b, const double* b_values, const int* b_row_ptr,
                           const int* b_col_idx, const int* c_row_ptr, std::size_t* bytes) {
  SPADE_CUSPARSE_TRY(
      cusparseDcsrgeam2_bufferSizeExt(h, m, n, alpha, descr, nnz_a, a_values, a_row_ptr, a_col_idx,
                                      beta, descr, nnz_b, b_values, b_row_ptr, b_col_idx, descr,
                                      nullptr, c_row_ptr, nullptr, bytes),
      "sizing the workspace of a sparse sum (csr_add)");
}

void xcsrgeam2(cusparseHandle_t h, int m, int n, const float* alpha, cusparseMatDescr_t descr,
               int nnz_a, const float* a_values, const int* a_row_ptr, const int* a_col_idx,
               const float* beta, int nnz_b, const float* b_values, const int* b_row_ptr,
               const int* b_col_idx, float* c_values, int* c_row_ptr, int* c_col_idx, void* work) {
  SPADE_CUSPARSE_TRY(cusparseScsrgeam2(h, m, n, alpha, descr, nnz_a, a_values, a_row_ptr, a_col_idx,
                                       beta, descr, nnz_b, b_values, b_row_ptr, b_col_idx, descr,
                                       c_values, c_row_ptr, c_col_idx, work),
                     "adding sparse matrices (csr_add)");
}
void xcsrgeam2(cusparseHandle_t h, int m, int n, const double* alpha, cusparseMatDescr_t descr,
               int nnz_a, const double* a_values, const int* a_row_ptr, const int* a_col_idx,
               const double* beta, int nnz_b, const double* b_values, const int* b_row_ptr,
               const int* b_col_idx, double* c_values, int* c_row_ptr, int* c_col_idx, void* work) {
  SPADE_CUSPARSE_TRY(cusparseDcsrgeam2(h, m, n, alpha, descr, nnz_a, a_values, a_row_ptr, a_col_idx,
                                       beta, descr, nnz_b, b_values, b_row_ptr, b_col_idx, descr,
                                       c_values, c_row_ptr, c_col_idx, work),
                     "adding sparse matrices (csr_add)");
}

}  // namespace

template <scalar T>
csr<T, gpu> csr_add(T alpha, const csr<T, gpu>& a, T beta, const csr<T, gpu>& b) {
  detail::require_shapes(a.rows() == b.rows() && a.cols() == b.cols(), "csr_add",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  const index_t m = a.rows();
  const index_t n = a.cols();
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  // One side empty: the sum has the other's pattern, and csrgeam2 is not handed null arrays.
  if (a.nnz() == 0 || b.nnz() == 0) {
    if (a.nnz() == 0 && b.nnz() == 0) {
      device_buffer<index_t> row_ptr(static_cast<std::size_t>(m) + 1, ctx);
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    csr<T, gpu> sum = a.nnz() == 0 ? b : a;
    const T s = a.nnz() == 0 ? beta : alpha;
    if (s != T(1))
      detail::scale_on(ctx, s, sum.values().data(), sum.nnz(),
                       "scaling the one non-empty operand of a sparse sum (csr_add)");
    return sum;
  }
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  mat_descr descr;
  SPADE_CUSPARSE_TRY(cusparseCreateMatDescr(descr.out()), "creating a matrix descriptor (csr_add)");
  SPADE_CUSPARSE_TRY(cusparseSetMatType(descr.get(), CUSPARSE_MATRIX_TYPE_GENERAL),
                     "describing a general matrix (csr_add)");
  SPADE_CUSPARSE_TRY(cusparseSetMatIndexBase(descr.get(), CUSPARSE_INDEX_BASE_ZERO),
                     "describing zero-based indices (csr_add)");
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(m) + 1, ctx);
  std::size_t bytes = 0;
  xcsrgeam2_buffer_size(handle, m, n, &alpha, descr.get(), a.nnz(), a.values().data(),
                        a.row_ptr().data(), a.col_idx().data(), &beta, b.nnz(), b.values().data(),
                        b.row_ptr().data(), b.col_idx().data(), row_ptr.data(), &bytes);
  device_buffer<std::byte> work = workspace(bytes, ctx);
  int nnz = 0;
  // Host pointer mode: nnz lands on the host, so this blocks (the one synchronisation).
  SPADE_CUSPARSE_TRY(
      cusparseXcsrgeam2Nnz(handle, m, n, descr.get(), a.nnz(), a.row_ptr().data(),
                           a.col_idx().data(), descr.get(), b.nnz(), b.row_ptr().data(),
                           b.col_idx().data(), descr.get(), row_ptr.data(), &nnz, work.data()),
      "counting the entries of a sparse sum (csr_add)");
  device_buffer<index_t> col_idx(static_cast<std::size_t>(nnz), ctx);
  device_buffer<T> values(static_cast<std::size_t>(nnz), ctx);
  xcsrgeam2(handle, m, n, &alpha, descr.get(), a.nnz(), a.values().data(), a.row_ptr().data(),
            a.col_idx().data(), &beta, b.nnz(), b.values().data(), b.row_ptr().data(),
            b.col_idx().data(), values.data(), row_ptr.data(), col_idx.data(), work.data());
  return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), std::move(col_idx), std::move(values));
}

template <scalar T>
csr<T, gpu> transpose(const csr<T, gpu>& a) {
  if (rowwise_preferred(a.rows(), a.cols(), a.nnz())) return transpose_by_sort(a);
  const index_t rows = a.rows();
  const index_t cols = a.cols();
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  // The CSC arrays of A are the CSR arrays of Aᵀ.
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(cols) + 1, ctx);
  if (a.nnz() == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, cols, rows, std::move(row_ptr), {}, {});
  }
  device_buffer<index_t> col_idx(static_cast<std::size_t>(a.nnz()), ctx);
  device_buffer<T> values(static_cast<std::size_t>(a.nnz()), ctx);
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  std::size_t bytes = 0;
  SPADE_CUSPARSE_TRY(
      cusparseCsr2cscEx2_bufferSize(
          handle, rows, cols, a.nnz(), a.values().data(), a.row_ptr().data(), a.col_idx().data(),
          values.data(), row_ptr.data(), col_idx.data(), detail::cuda_type<T>,
          CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes),
      "sizing the workspace of a csr transpose");
  device_buffer<std::byte> work = workspace(bytes, ctx);
  SPADE_CUSPARSE_TRY(
      cusparseCsr2cscEx2(handle, rows, cols, a.nnz(), a.values().data(), a.row_ptr().data(),
                         a.col_idx().data(), values.data(), row_ptr.data(), col_idx.data(),
                         detail::cuda_type<T>, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                         CUSPARSE_CSR2CSC_ALG1, work.data()),
      "transposing a csr matrix (csr2csc)");
  return csr<T, gpu>(unchecked, cols, rows, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

std::uint64_t cusparse_spmm_preparations() noexcept {
  return spmm_preparations.load(std::memory_order_relaxed);
}

SPADE_VENDOR_SPARSE_INSTANTIATIONS(float)
SPADE_VENDOR_SPARSE_INSTANTIATIONS(double)

}  // namespace spade::device
