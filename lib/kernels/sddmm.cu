// SDDMM: S ∘ (op(A)·op(B)) at the entries of a csr S, never forming the dense product. Spade's
// kernel (a group of lanes per entry, a warp per row) and cusparseSDDMM, the vendor candidate.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "detail/library_support.cuh"
#include "detail/vendor_handles.hpp"
#include "kernels/instantiate.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

constexpr int warp_threads = 32;
constexpr int block_threads = 256;
constexpr int warps_per_block = block_threads / warp_threads;

// Element (i, t) of op(A) and (t, j) of op(B) as strides, the layout and the transpose folded in.
struct strides {
  std::int64_t outer;  // per step of i (A) or j (B)
  std::int64_t inner;  // per step of t, the summed index
};

template <scalar T, layout L>
strides strides_of(const dense<T, gpu, L>& m, bool transposed, bool is_lhs) {
  // Storage element (r, c) is at r·ld + c (row-major) or c·ld + r (col-major).
  const std::int64_t ld = m.leading_dimension();
  const bool row_major_storage = std::is_same_v<L, row_major>;
  const std::int64_t along_rows = row_major_storage ? ld : 1;  // step of the storage row
  const std::int64_t along_cols = row_major_storage ? 1 : ld;  // step of the storage column
  // op(A)(i, t): i walks op(A)'s rows; op(B)(t, j): j walks op(B)'s columns.
  if (is_lhs) return transposed ? strides{along_cols, along_rows} : strides{along_rows, along_cols};
  return transposed ? strides{along_rows, along_cols} : strides{along_cols, along_rows};
}

template <scalar T>
struct sddmm_operands {
  const index_t* row_ptr;
  const index_t* entry_rows;  // the row of each entry
  const index_t* col_idx;
  const T* s_values;
  T* out_values;
  index_t rows;
  index_t nnz;
  index_t depth;  // the summed extent k
  const T* a;
  strides a_at;
  const T* b;
  strides b_at;
  T alpha;
};

// Sixteen-byte loads where both operands' rows along t are contiguous and aligned.
template <scalar T>
using wide_t = std::conditional_t<std::is_same_v<T, float>, float4, double2>;
template <scalar T>
constexpr int wide_lanes = sizeof(wide_t<T>) / sizeof(T);

template <scalar T>
__device__ __forceinline__ T dot_wide(const wide_t<T>& x, const wide_t<T>& y) {
  if constexpr (std::is_same_v<T, float>)
    return x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
  else
    return x.x * y.x + x.y * y.y;
}

// The row of each stored entry of S, written by a warp per row; made once per operand and kept
// in its cache (nnz indices), so the sampling kernel spreads entries evenly over warps without
// searching row_ptr.
__global__ void __launch_bounds__(block_threads)
    entry_rows_kernel(const index_t* row_ptr, index_t rows, index_t* entry_rows) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = std::int64_t{gridDim.x} * warps_per_block;
  for (std::int64_t row = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / warp_threads;
       row < rows; row += stride)
    for (index_t k = row_ptr[row] + lane; k < row_ptr[row + 1]; k += warp_threads)
      entry_rows[k] = static_cast<index_t>(row);
}

struct entry_rows_key {};

template <scalar T>
const index_t* entry_rows_of(const csr<T, gpu>& s, context& ctx) {
  using holder = std::shared_ptr<device_buffer<index_t>>;
  const holder& rows = s.cache().template get_or_make<entry_rows_key, holder>([&] {
    auto made = std::make_shared<device_buffer<index_t>>(static_cast<std::size_t>(s.nnz()), ctx);
    entry_rows_kernel<<<detail::grid_blocks(s.rows(), warps_per_block, ctx), block_threads, 0,
                        detail::stream_of(ctx)>>>(s.row_ptr().data(), s.rows(), made->data());
    SPADE_CHECK_LAUNCH("listing the row of each entry of S (sddmm)");
    return made;
  });
  return rows->data();
}

// Groups of Group lanes, each summing op(A)(r, :)·op(B)(:, c) for one entry (r, c) of S: over t
// contiguous in both operands (Wide: 16-byte loads), or with any strides (Strided, a lane per
// entry). A warp takes the next Group-wide run of consecutive entries, grid-stride, so long rows
// are shared by many warps and short ones packed. A group's partial sums are combined in a
// fixed butterfly order: the same bits every run. With `out_row_ptr`, the kernel also writes
// S's pattern into the result.
template <scalar T, int Group, bool Wide, bool Strided>
__global__ void __launch_bounds__(block_threads)
    sddmm_kernel(sddmm_operands<T> p, index_t* out_row_ptr, index_t* out_col_idx) {
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const int member = lane % Group;
  const int group = lane / Group;
  constexpr int groups = warp_threads / Group;
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t warps = std::int64_t{gridDim.x} * warps_per_block;
  if (out_row_ptr)
    for (std::int64_t i = thread; i <= p.rows; i += warps * warp_threads)
      out_row_ptr[i] = p.row_ptr[i];
  // Every lane of a warp runs the same iterations, so all take part in the shuffles.
  for (std::int64_t first = thread / warp_threads * groups; first < p.nnz;
       first += warps * groups) {
    const auto k = static_cast<index_t>(first + group);
    const bool mine = k < p.nnz;
    T sum = T(0);
    if (mine) {
      const index_t row = p.entry_rows[k];
      const index_t c = p.col_idx[k];
      const T* a_row = p.a + std::int64_t{row} * p.a_at.outer;
      const T* b_col = p.b + std::int64_t{c} * p.b_at.outer;
      if constexpr (Strided) {
        for (index_t t = 0; t < p.depth; ++t)
          sum += a_row[t * p.a_at.inner] * b_col[t * p.b_at.inner];
      } else if constexpr (Wide) {
        constexpr int w = wide_lanes<T>;
        const auto* a_wide = reinterpret_cast<const wide_t<T>*>(a_row);
        const auto* b_wide = reinterpret_cast<const wide_t<T>*>(b_col);
        for (index_t t = member; t < p.depth / w; t += Group)
          sum += dot_wide<T>(__ldg(a_wide + t), __ldg(b_wide + t));
      } else {
        for (index_t t = member; t < p.depth; t += Group)
          sum += __ldg(a_row + t) * __ldg(b_col + t);
      }
      if (out_col_idx && member == 0) out_col_idx[k] = c;
    }
    for (int offset = Group / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (mine && member == 0) p.out_values[k] = p.alpha * p.s_values[k] * sum;
  }
}

// out[k] *= s[k]: the sampled product's values times S's (cusparseSDDMM samples the pattern only).
template <scalar T>
__global__ void __launch_bounds__(block_threads)
    multiply_values_kernel(const T* s, T* out, std::int64_t count) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t k = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; k < count; k += stride)
    out[k] *= s[k];
}

// The group width: the fewest lanes that still give each one at most 4 loads for k, at least 4
// (narrower groups leave lanes idle on the many short rows of graphs).
int group_for(std::int64_t loads) {
  int group = 4;
  while (group < warp_threads && group * 4 < loads)
    group *= 2;
  return group;
}

template <scalar T, int Group, bool Wide, bool Strided>
void launch_sddmm(const sddmm_operands<T>& p, index_t* out_row_ptr, index_t* out_col_idx,
                  context& ctx) {
  const std::int64_t warps = std::max<std::int64_t>(
      (std::int64_t{p.nnz} + warp_threads / Group - 1) / (warp_threads / Group),
      out_row_ptr ? (std::int64_t{p.rows} + warp_threads) / warp_threads : 1);
  sddmm_kernel<T, Group, Wide, Strided>
      <<<detail::grid_blocks(warps, warps_per_block, ctx), block_threads, 0,
         detail::stream_of(ctx)>>>(p, out_row_ptr, out_col_idx);
}

template <scalar T, layout LA, layout LB>
void check_sddmm_shapes(const char* what, const csr<T, gpu>& s, const dense<T, gpu, LA>& a,
                        operation op_a, const dense<T, gpu, LB>& b, operation op_b,
                        const csr<T, gpu>& out) {
  const bool ta = detail::transposed(op_a);
  const bool tb = detail::transposed(op_b);
  const index_t m = ta ? a.cols() : a.rows();
  const index_t ka = ta ? a.rows() : a.cols();
  const index_t kb = tb ? b.cols() : b.rows();
  const index_t n = tb ? b.rows() : b.cols();
  detail::require_shapes(m == s.rows() && n == s.cols() && ka == kb, what,
                         "S is " + detail::shape_text(s.rows(), s.cols()) + ", op(A) is " +
                             detail::shape_text(m, ka) + ", op(B) is " + detail::shape_text(kb, n));
  detail::require_shapes(out.rows() == s.rows() && out.cols() == s.cols() && out.nnz() == s.nnz(),
                         what,
                         "the result has " + std::to_string(out.nnz()) + " entries, S has " +
                             std::to_string(s.nnz()) + " (it must hold S's pattern)");
}

bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

}  // namespace

std::string sddmm_launch::describe() const {
  if (vendor) return "cusparseSDDMM (CUSPARSE_SDDMM_ALG_DEFAULT), then S's values multiplied in";
  if (group_lanes == 0) return "a lane per entry summing over k (operands strided along k)";
  return std::to_string(group_lanes) + " lanes per entry, " + std::to_string(vector_width) +
         (vector_width > 1 ? " elements per load (16-byte loads)" : " element per load");
}

template <scalar T, layout LA, layout LB>
sddmm_launch sddmm(T alpha, const csr<T, gpu>& s, const dense<T, gpu, LA>& a, operation op_a,
                   const dense<T, gpu, LB>& b, operation op_b, csr<T, gpu>& out,
                   bool copy_pattern) {
  check_sddmm_shapes("sddmm", s, a, op_a, b, op_b, out);
  if (s.nnz() == 0 && !copy_pattern) return {};
  context& ctx = detail::context_of(s.row_ptr(), s.col_idx(), s.values(), a.values(), b.values(),
                                    out.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  const bool ta = detail::transposed(op_a);
  const bool tb = detail::transposed(op_b);
  sddmm_operands<T> p{s.row_ptr().data(),
                      s.nnz() > 0 ? entry_rows_of(s, ctx) : nullptr,
                      s.col_idx().data(),
                      s.values().data(),
                      out.values().data(),
                      s.rows(),
                      s.nnz(),
                      ta ? a.rows() : a.cols(),
                      a.data(),
                      strides_of(a, ta, true),
                      b.data(),
                      strides_of(b, tb, false),
                      alpha};
  // csr hands out its pattern read-only to keep its invariants; here the caller gave a result
  // whose pattern is still to be written (copy_pattern), and this launch writes S's into it.
  index_t* out_row_ptr = copy_pattern ? const_cast<index_t*>(out.row_ptr().data()) : nullptr;
  index_t* out_col_idx = copy_pattern ? const_cast<index_t*>(out.col_idx().data()) : nullptr;
  // k = 0 needs no case of its own: every sum is empty, so each entry is alpha·s·0 (NaN stays NaN).
  sddmm_launch launch;
  if (p.a_at.inner == 1 && p.b_at.inner == 1) {
    constexpr int w = wide_lanes<T>;
    const bool wide = p.depth % w == 0 && p.a_at.outer % w == 0 && p.b_at.outer % w == 0 &&
                      aligned_to(p.a, sizeof(wide_t<T>)) && aligned_to(p.b, sizeof(wide_t<T>));
    const int group = group_for(wide ? p.depth / w : p.depth);
    auto run = [&]<bool W>() {
      switch (group) {
        case 4:
          launch_sddmm<T, 4, W, false>(p, out_row_ptr, out_col_idx, ctx);
          break;
        case 8:
          launch_sddmm<T, 8, W, false>(p, out_row_ptr, out_col_idx, ctx);
          break;
        case 16:
          launch_sddmm<T, 16, W, false>(p, out_row_ptr, out_col_idx, ctx);
          break;
        default:
          launch_sddmm<T, 32, W, false>(p, out_row_ptr, out_col_idx, ctx);
          break;
      }
    };
    if (wide)
      run.template operator()<true>();
    else
      run.template operator()<false>();
    launch = {group, wide ? w : 1, false};
  } else {
    launch_sddmm<T, 1, false, true>(p, out_row_ptr, out_col_idx, ctx);
  }
  SPADE_CHECK_LAUNCH("sampling op(A)·op(B) at the entries of S (sddmm)");
  return launch;
}

template <scalar T, layout LA, layout LB>
sddmm_launch cusparse_sddmm(T alpha, const csr<T, gpu>& s, const dense<T, gpu, LA>& a,
                            operation op_a, const dense<T, gpu, LB>& b, operation op_b,
                            csr<T, gpu>& out) {
  check_sddmm_shapes("cusparse_sddmm", s, a, op_a, b, op_b, out);
  sddmm_launch launch;
  launch.vendor = true;
  if (s.nnz() == 0) return launch;
  context& ctx = detail::context_of(s.row_ptr(), s.col_idx(), s.values(), a.values(), b.values(),
                                    out.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  const cusparseHandle_t handle = detail::cusparse_of(ctx);
  const cudaDataType_t type = detail::cuda_type<T>;
  auto order = [](bool row_major_storage) {
    return row_major_storage ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL;
  };
  auto op = [](operation o) {
    return detail::transposed(o) ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  };
  detail::const_dn_mat da;
  SPADE_CUSPARSE_TRY(cusparseCreateConstDnMat(da.out(), a.rows(), a.cols(),
                                              std::max<index_t>(a.leading_dimension(), 1), a.data(),
                                              type, order(std::is_same_v<LA, row_major>)),
                     "describing A to cuSPARSE (sddmm)");
  detail::const_dn_mat db;
  SPADE_CUSPARSE_TRY(cusparseCreateConstDnMat(db.out(), b.rows(), b.cols(),
                                              std::max<index_t>(b.leading_dimension(), 1), b.data(),
                                              type, order(std::is_same_v<LB, row_major>)),
                     "describing B to cuSPARSE (sddmm)");
  detail::sp_mat dc;
  SPADE_CUSPARSE_TRY(
      cusparseCreateCsr(dc.out(), out.rows(), out.cols(), out.nnz(),
                        const_cast<index_t*>(out.row_ptr().data()),
                        const_cast<index_t*>(out.col_idx().data()), out.values().data(),
                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type),
      "describing the sampled result to cuSPARSE (sddmm)");
  const T zero = T(0);
  std::size_t bytes = 0;
  SPADE_CUSPARSE_TRY(
      cusparseSDDMM_bufferSize(handle, op(op_a), op(op_b), &alpha, da.get(), db.get(), &zero,
                               dc.get(), type, CUSPARSE_SDDMM_ALG_DEFAULT, &bytes),
      "sizing the cusparseSDDMM workspace");
  device_buffer<std::byte> buffer(std::max<std::size_t>(bytes, 1), ctx);
  SPADE_CUSPARSE_TRY(
      cusparseSDDMM_preprocess(handle, op(op_a), op(op_b), &alpha, da.get(), db.get(), &zero,
                               dc.get(), type, CUSPARSE_SDDMM_ALG_DEFAULT, buffer.data()),
      "preparing cusparseSDDMM");
  SPADE_CUSPARSE_TRY(cusparseSDDMM(handle, op(op_a), op(op_b), &alpha, da.get(), db.get(), &zero,
                                   dc.get(), type, CUSPARSE_SDDMM_ALG_DEFAULT, buffer.data()),
                     "cusparseSDDMM");
  multiply_values_kernel<T>
      <<<detail::grid_blocks(s.nnz(), block_threads, ctx), block_threads, 0, stream>>>(
          s.values().data(), out.values().data(), s.nnz());
  SPADE_CHECK_LAUNCH("multiplying the sampled product by S's values (cusparse_sddmm)");
  return launch;
}

SPADE_KERNELS_SDDMM_INSTANTIATIONS(float)
SPADE_KERNELS_SDDMM_INSTANTIATIONS(double)

}  // namespace spade::device
