// The gpu back end of element-wise trees: CUDA source made from the expression's type, run as
// one kernel (compiled by NVRTC in lib/jit, cached in memory and on disk).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/device_buffer.hpp"
#include "spade/device/jit.hpp"
#include "spade/device/kernels.hpp"
#include "spade/eval/cwise.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/result.hpp"
#include "spade/plan/kernels.hpp"

namespace spade::detail {

/// The type generated kernels use for T: half and bfloat16 are structs of their bits there,
/// defined by fused_prelude (NVRTC then needs no CUDA header).
template <class T>
constexpr const char* cuda_type_name() {
  if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, half>)
    return "spade_half";
  else
    return "spade_bfloat16";
}

/// The text converting `inner` (of type From) to To. Half and bfloat16 widen to float exactly
/// and narrow from float or double rounding to nearest even (fused_prelude's functions).
template <class To, class From>
std::string conversion_text(const std::string& inner) {
  if constexpr (std::is_same_v<To, From>) {
    return inner;
  } else if constexpr (reduced_precision<From>) {
    return conversion_text<To, float>("spade_widen(" + inner + ")");
  } else if constexpr (reduced_precision<To>) {
    return std::string(std::is_same_v<To, half> ? "spade_narrow_half(" : "spade_narrow_bfloat16(") +
           inner + ")";
  } else {
    return "((" + std::string(cuda_type_name<To>()) + ")(" + inner + "))";
  }
}

/// True for a row-major dense matrix and for everything read in one order (vectors, values).
template <class M>
constexpr bool row_major_result() {
  if constexpr (is_dense_v<M>)
    return std::is_same_v<typename M::layout_type, row_major>;
  else
    return true;
}

/// The concatenation of `parts`, out of line: each node type's fused_text then holds one call
/// rather than a chain of string temporaries (a user file compiles one fused_text per node type
/// of its expressions, so their size is compile time).
[[gnu::noinline]] inline std::string joined(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (const std::string_view part : parts)
    size += part.size();
  std::string text;
  text.reserve(size);
  for (const std::string_view part : parts)
    text += part;
  return text;
}

/// The parts of a fused kernel's source that its expression type decides.
struct fused_signature {
  std::vector<std::string> parameters;  // after the fixed ones: inputs, their strides, scalars
  std::vector<std::string> scalar_parameters;
  int inputs = 0;
  int scalars = 0;
  bool needs_position = false;  // an input is read in the other layout: (o, k) from i
  bool needs_rows = false;      // a values chain reads an entry's row r or column col_idx[i]
  bool needs_reduced_precision = false;  // half or bfloat16 values are converted
  std::string body;

  std::string input(const char* type, bool swapped) {
    note_type(type);
    const std::string k = std::to_string(inputs++);
    parameters.push_back("const " + std::string(type) + "* x" + k + ", long long ld" + k);
    if (!swapped) return "x" + k + "[i]";
    needs_position = true;
    return "x" + k + "[k * ld" + k + " + o]";
  }
  /// A view's input, read through its stride at the element's position (o, k): element (o, k)
  /// of the view in its own order lies at o · ld + k.
  std::string strided(const char* type, bool swapped) {
    note_type(type);
    const std::string k = std::to_string(inputs++);
    parameters.push_back("const " + std::string(type) + "* x" + k + ", long long ld" + k);
    needs_position = true;
    return swapped ? "x" + k + "[k * ld" + k + " + o]" : "x" + k + "[o * ld" + k + " + k]";
  }
  /// An input read at `index` (a diagonal's element for the row or column of the element).
  std::string gathered(const char* type, const std::string& index) {
    note_type(type);
    const std::string k = std::to_string(inputs++);
    parameters.push_back("const " + std::string(type) + "* x" + k + ", long long ld" + k);
    return "x" + k + "[" + index + "]";
  }
  /// Half and bfloat16 inputs need the prelude's struct types.
  void note_type(const char* type) {
    if (std::string(type).starts_with("spade_")) needs_reduced_precision = true;
  }
  std::string scalar(const char* type) {
    const std::string k = std::to_string(scalars++);
    scalar_parameters.push_back(std::string(type) + " s" + k);
    return "s" + k;
  }
};

/// The text of x's value at element i of the output (RowMajor: the output's order), adding
/// x's inputs and scalars to `s` in the order fused_arguments collects them: children first,
/// then the node's own scalar. Values: the chain over a sparse base's stored values.
template <bool Values, bool RowMajor, class X>
std::string fused_text(fused_signature& s) {
  using T = typename X::value_type;
  constexpr bool interior = Values ? values_interior_v<X> : fused_interior_v<X>;
  if constexpr (!interior) {
    using M = expr::result_t<X>;
    constexpr bool swapped = !Values && row_major_result<M>() != RowMajor;
    return s.input(cuda_type_name<typename M::value_type>(), swapped);
  } else if constexpr (expr::is_view_v<X>) {
    using M = typename X::result_type;
    return s.strided(cuda_type_name<typename M::value_type>(), row_major_result<M>() != RowMajor);
  } else if constexpr (expr::is_scaled_v<X>) {
    const std::string inner = fused_text<Values, RowMajor, expr::bare_t<decltype(X::inner)>>(s);
    return joined({"(", s.scalar(cuda_type_name<T>()), " * ", inner, ")"});
  } else if constexpr (expr::is_sum_v<X>) {
    const std::string l = fused_text<Values, RowMajor, expr::bare_t<decltype(X::lhs)>>(s);
    const std::string r = fused_text<Values, RowMajor, expr::bare_t<decltype(X::rhs)>>(s);
    return joined({"(", l, " + ", r, ")"});
  } else if constexpr (expr::is_cwise_unary_v<X>) {
    const std::string inner = fused_text<Values, RowMajor, expr::bare_t<decltype(X::inner)>>(s);
    return X::op_type::cuda(inner, s.scalar(cuda_type_name<T>()));
  } else if constexpr (expr::is_diagonal_scaled_v<X>) {
    const std::string inner = fused_text<Values, RowMajor, expr::bare_t<decltype(X::inner)>>(s);
    using D = expr::result_t<expr::bare_t<decltype(X::diag)>>;
    constexpr bool by_row = X::direction == expr::axis::rows;
    std::string index;
    if constexpr (Values) {
      s.needs_rows = true;
      index = by_row ? "r" : "col_idx[i]";
    } else {
      s.needs_position = true;
      index = by_row == RowMajor ? "o" : "k";
    }
    return joined(
        {"(", s.gathered(cuda_type_name<typename D::value_type>(), index), " * ", inner, ")"});
  } else if constexpr (expr::is_masked_product_v<X>) {
    static_assert(Values, "spade: a sparse-times-dense product is a values chain");
    const std::string inner = fused_text<Values, RowMajor, expr::bare_t<decltype(X::inner)>>(s);
    using D = expr::result_t<expr::bare_t<decltype(X::dense)>>;
    s.needs_rows = true;
    const std::string k = std::to_string(s.inputs);
    const std::string at = std::is_same_v<typename D::layout_type, row_major>
                               ? "r * ld" + k + " + col_idx[i]"
                               : "(long long)col_idx[i] * ld" + k + " + r";
    return joined(
        {"(", inner, " * ", s.gathered(cuda_type_name<typename D::value_type>(), at), ")"});
  } else if constexpr (expr::is_cwise_binary_v<X>) {
    const std::string l = fused_text<Values, RowMajor, expr::bare_t<decltype(X::lhs)>>(s);
    const std::string r = fused_text<Values, RowMajor, expr::bare_t<decltype(X::rhs)>>(s);
    return X::op_type::cuda(l, r);
  } else {
    using I = expr::bare_t<decltype(X::inner)>;
    const std::string inner = fused_text<Values, RowMajor, I>(s);
    if constexpr (reduced_precision<T> || reduced_precision<typename I::value_type>)
      s.needs_reduced_precision = true;
    return conversion_text<T, typename I::value_type>(inner);
  }
}

/// half and bfloat16 as generated kernels see them, and their conversions by PTX instructions:
/// to float exactly; from float rounding to nearest even; from double rounding to odd at float
/// precision first (cvt.rz, then the last bit set when anything was dropped), which makes the
/// second rounding exact where rounding through float twice could be off by one unit.
inline const char* reduced_precision_prelude() {
  return "struct spade_half { unsigned short bits; };\n"
         "struct spade_bfloat16 { unsigned short bits; };\n"
         "__device__ __forceinline__ float spade_widen(spade_half h) {\n"
         "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h.bits)); return f;\n}\n"
         "__device__ __forceinline__ float spade_widen(spade_bfloat16 h) {\n"
         "  return __uint_as_float((unsigned)h.bits << 16);\n}\n"
         "__device__ __forceinline__ float spade_round_to_odd(double d) {\n"
         "  float f; asm(\"cvt.rz.f32.f64 %0, %1;\" : \"=f\"(f) : \"d\"(d));\n"
         "  return ((double)f != d && d == d) ? __uint_as_float(__float_as_uint(f) | 1u) : f;\n}\n"
         "__device__ __forceinline__ spade_half spade_narrow_half(float f) {\n"
         "  spade_half h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h.bits) : \"f\"(f)); return "
         "h;\n}\n"
         "__device__ __forceinline__ spade_half spade_narrow_half(double d) {\n"
         "  return spade_narrow_half(spade_round_to_odd(d));\n}\n"
         "__device__ __forceinline__ spade_bfloat16 spade_narrow_bfloat16(float f) {\n"
         "  spade_bfloat16 h; asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h.bits) : \"f\"(f)); "
         "return h;\n}\n"
         "__device__ __forceinline__ spade_bfloat16 spade_narrow_bfloat16(double d) {\n"
         "  return spade_narrow_bfloat16(spade_round_to_odd(d));\n}\n";
}

inline std::string fused_prelude(const fused_signature& s) {
  return std::string(s.needs_reduced_precision ? reduced_precision_prelude() : "") +
         "template <class T> __device__ __forceinline__ T spade_square(T a) { return a * a; }\n"
         "template <class T> __device__ __forceinline__ T spade_inverse(T a) { return T(1) / a; "
         "}\n"
         "template <class T> __device__ __forceinline__ T spade_max(T a, T b) {\n"
         "  return (a != a || b != b) ? a + b : (a < b ? b : a);\n}\n"
         "template <class T> __device__ __forceinline__ T spade_min(T a, T b) {\n"
         "  return (a != a || b != b) ? a + b : (b < a ? b : a);\n}\n";
}

inline std::string fused_parameter_list(const fused_signature& s) {
  std::string list;
  for (const auto& p : s.parameters)
    list += ", " + p;
  for (const auto& p : s.scalar_parameters)
    list += ", " + p;
  return list;
}

inline std::string fused_argument_names(const fused_signature& s) {
  std::string names;
  for (int k = 0; k < s.inputs; ++k)
    names += ", x" + std::to_string(k) + ", ld" + std::to_string(k);
  for (int k = 0; k < s.scalars; ++k)
    names += ", s" + std::to_string(k);
  return names;
}

/// `spade_value(i, inner, ...)`: the tree's value at element i of the output order, as `type`
/// (the map and reduction kernels call it for several elements per iteration).
inline std::string fused_value_function(const fused_signature& s, const std::string& type) {
  return "__device__ __forceinline__ " + type + " spade_value(long long i, long long inner" +
         fused_parameter_list(s) + ") {\n" +
         (s.needs_position ? "  const long long o = i / inner, k = i - o * inner;\n" : "") +
         "  return (" + type + ")(" + s.body + ");\n}\n";
}

/// Elements per thread and iteration of the map and reduction kernels: their loads are issued
/// before any store or sum, so each thread keeps that many reads in flight (the output may be
/// an input, which stops the compiler from reordering loads past stores itself).
/// Elements per thread and iteration of the map kernel, from its body. Loads are issued before
/// any store (the output may be an input, which stops the compiler from reordering loads past
/// stores itself), so each thread keeps that many reads in flight: measured on the H100
/// (spade-bench cwise, 2^26 elements), 4 per iteration took fp64 2x+3y-sqrt(|w|)x from 0.975x to
/// 0.99x CuPy's fused kernel and left fp32 unchanged; a double body with transcendental calls is
/// bound by their instructions instead, and ran fastest with 1 element per thread and no cap on
/// the grid (0.70 ms against 0.80 ms at 4).
inline bool compute_bound_body(const fused_signature& s, bool is_double) {
  if (!is_double) return false;
  for (const char* f : {"exp(", "log(", "sin(", "cos(", "tanh(", "pow("})
    if (s.body.find(f) != std::string::npos) return true;
  return false;
}
inline int map_unroll(const fused_signature& s, bool is_double) {
  return compute_bound_body(s, is_double) ? 1 : 4;
}
/// Elements per thread and iteration of the reduction kernel (8 loads in flight, 4 partial
/// results per thread).
constexpr int reduce_unroll = 8;

/// The kernel `spade_fused_map`: out[i] = the tree at i over n elements (grid-stride, 4
/// elements per thread and iteration). Strided (`spade_fused_map_strided`): the output is a
/// view, element i = (o, k) of its order stored at out[o · out_ld + k].
template <class Out>
std::string fused_map_source(const fused_signature& s, bool strided = false) {
  const std::string out = cuda_type_name<Out>();
  const std::string call = "spade_value(j, inner" + fused_argument_names(s) + ")";
  // A half or bfloat16 output is a struct in the kernel: value-initialised, not from 0.
  const std::string zero = reduced_precision<Out> ? "{}" : " = 0";
  std::string loop;
  const int fused_unroll = map_unroll(s, std::is_same_v<Out, double>);
  for (int u = 0; u < fused_unroll; ++u)
    loop += "    " + out + " v" + std::to_string(u) + zero + ";\n    { const long long j = i + " +
            std::to_string(u) + " * stride; if (j < n) v" + std::to_string(u) + " = " + call +
            "; }\n";
  for (int u = 0; u < fused_unroll; ++u) {
    const std::string j = "i + " + std::to_string(u) + " * stride";
    const std::string at = strided ? "(" + j + ") / inner * out_ld + (" + j + ") % inner" : j;
    loop += "    if (" + j + " < n) out[" + at + "] = v" + std::to_string(u) + ";\n";
  }
  return std::string(strided ? "// spade: fused element-wise map into a view\n"
                             : "// spade: fused element-wise map\n") +
         fused_prelude(s) + fused_value_function(s, out) +
         "extern \"C\" __global__ void __launch_bounds__(256) " +
         (strided ? "spade_fused_map_strided" : "spade_fused_map") +
         "(long long n, long long inner, " + out + "* out" + (strided ? ", long long out_ld" : "") +
         fused_parameter_list(s) +
         ") {\n"
         "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
         "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += " +
         std::to_string(fused_unroll) + " * stride) {\n" + loop + "  }\n}\n";
}

/// The kernel `spade_fused_reduce`: one value from n elements, deterministic (each thread keeps
/// 4 partial results over a fixed stride and combines them in a fixed order, each block a fixed
/// tree, the last block to finish combines the blocks' results in block order).
template <class T>
std::string fused_reduce_source(const fused_signature& s, reduction kind, bool square) {
  const std::string t = cuda_type_name<T>();
  const std::string inf = "((" + t + ")__longlong_as_double(0x7ff0000000000000LL))";
  const std::string identity = kind == reduction::sum   ? "(" + t + ")0"
                               : kind == reduction::max ? "-" + inf
                                                        : inf;
  const auto combine = [&](const std::string& a, const std::string& b) {
    return kind == reduction::sum   ? "(" + a + " + " + b + ")"
           : kind == reduction::max ? "spade_max(" + a + ", " + b + ")"
                                    : "spade_min(" + a + ", " + b + ")";
  };
  const std::string call = "spade_value(j, inner" + fused_argument_names(s) + ")";
  std::string loop;
  const int fused_unroll = reduce_unroll;
  for (int u = 0; u < fused_unroll; ++u) {
    std::string a = "a";  // appended: GCC 12 warns on "a" + temporary (-Wrestrict)
    a += std::to_string(u % 4);
    loop += "    { const long long j = i + " + std::to_string(u) +
            " * stride; if (j < n) { const " + t + " v = " + call + "; " + a + " = " +
            combine(a, square ? "v * v" : "v") + "; } }\n";
  }
  const std::string tree =
      "  tile[threadIdx.x] = acc;\n  __syncthreads();\n"
      "  for (int half = 128; half > 0; half >>= 1) {\n"
      "    if (threadIdx.x < half) tile[threadIdx.x] = " +
      combine("tile[threadIdx.x]", "tile[threadIdx.x + half]") + ";\n    __syncthreads();\n  }\n";
  return std::string("// spade: fused element-wise reduction\n") + fused_prelude(s) +
         fused_value_function(s, t) +
         "extern \"C\" __global__ void __launch_bounds__(256) spade_fused_reduce(long long n, "
         "long long inner, " +
         t + "* partials, unsigned int* done, " + t + "* result" + fused_parameter_list(s) +
         ") {\n  __shared__ " + t + " tile[256];\n  __shared__ bool last;\n  " + t +
         " a0 = " + identity + ", a1 = " + identity + ", a2 = " + identity + ", a3 = " + identity +
         ";\n"
         "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
         "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += " +
         std::to_string(fused_unroll) + " * stride) {\n" + loop + "  }\n  " + t +
         " acc = " + combine(combine("a0", "a1"), combine("a2", "a3")) + ";\n" + tree +
         "  if (threadIdx.x == 0) {\n    partials[blockIdx.x] = tile[0];\n    __threadfence();\n"
         "    last = atomicAdd(done, 1u) == gridDim.x - 1;\n  }\n  __syncthreads();\n"
         "  if (!last) return;\n  __threadfence();\n  acc = " +
         identity +
         ";\n  for (unsigned int b = threadIdx.x; b < gridDim.x; b += 256)\n"
         "    acc = " +
         combine("acc", "((volatile " + t + "*)partials)[b]") + ";\n" + tree +
         "  if (threadIdx.x == 0) {\n    *result = tile[0];\n    *done = 0u;\n  }\n}\n";
}

/// The kernel `spade_fused_axis`: sums of a rows × cols tree along one direction, written in the
/// tree's order (outer × inner). Along inner (row sums of a row-major tree): one warp per
/// output, lanes striding the contiguous elements, a shuffle tree. Along outer: one thread per
/// output, consecutive threads reading consecutive elements. Both fixed orders: deterministic.
template <class T>
std::string fused_axis_source(const fused_signature& s, bool along_inner) {
  const std::string t = cuda_type_name<T>();
  const std::string head =
      std::string("// spade: fused axis sums\n") + fused_prelude(s) +
      "extern \"C\" __global__ void __launch_bounds__(256) spade_fused_axis(long "
      "long outer, long long inner, " +
      t + "* out" + fused_parameter_list(s) + ") {\n";
  if (along_inner)
    return head +
           "  const long long o = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
           "  const int lane = threadIdx.x & 31;\n  if (o >= outer) return;\n  " +
           t +
           " acc = 0;\n  for (long long k = lane; k < inner; k += 32) {\n"
           "    const long long i = o * inner + k;\n    acc += (" +
           t + ")(" + s.body +
           ");\n  }\n"
           "  for (int half = 16; half > 0; half >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, "
           "half);\n  if (lane == 0) out[o] = acc;\n}\n";
  return head +
         "  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (k >= inner) return;\n  " +
         t +
         " acc = 0;\n  for (long long o = 0; o < outer; ++o) {\n"
         "    const long long i = o * inner + k;\n    acc += (" +
         t + ")(" + s.body + ");\n  }\n  out[k] = acc;\n}\n";
}

/// The kernel `spade_fused_diagonal`: out[d] = the tree at (d, d), d < n.
template <class T>
std::string fused_diagonal_source(const fused_signature& s) {
  const std::string t = cuda_type_name<T>();
  return std::string("// spade: fused diagonal\n") + fused_prelude(s) +
         "extern \"C\" __global__ void __launch_bounds__(256) spade_fused_diagonal(long long n, "
         "long long inner, " +
         t + "* out" + fused_parameter_list(s) +
         ") {\n  const long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (o >= n) return;\n  const long long k = o, i = o * inner + o;\n  out[o] = (" +
         t + ")(" + s.body + ");\n}\n";
}

/// The kernels over a csr whose stored values the chain maps: `spade_fused_csr_rows` (one warp
/// per row sums the row, a shuffle tree) and `spade_fused_csr_diagonal` (one thread per row
/// finds column r by binary search; 0 when it is not stored).
template <class T>
std::string fused_csr_source(const fused_signature& s, bool diagonal) {
  const std::string t = cuda_type_name<T>();
  const std::string head = std::string("// spade: fused csr ") +
                           (diagonal ? "diagonal" : "row sums") + "\n" + fused_prelude(s) +
                           "extern \"C\" __global__ void __launch_bounds__(256) " +
                           (diagonal ? "spade_fused_csr_diagonal" : "spade_fused_csr_rows") +
                           "(long long rows, const int* row_ptr, const int* col_idx, " + t +
                           "* out" + fused_parameter_list(s) + ") {\n";
  if (diagonal)
    return head +
           "  const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (r >= rows) return;\n  long long lo = row_ptr[r], hi = row_ptr[r + 1];\n"
           "  while (lo < hi) {\n    const long long mid = (lo + hi) >> 1;\n"
           "    if (col_idx[mid] < r) lo = mid + 1; else hi = mid;\n  }\n"
           "  const long long i = lo;\n  out[r] = (i < row_ptr[r + 1] && col_idx[i] == r) ? (" +
           t + ")(" + s.body + ") : (" + t + ")0;\n}\n";
  return head +
         "  const long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
         "  const int lane = threadIdx.x & 31;\n  if (r >= rows) return;\n  " +
         t +
         " acc = 0;\n  for (long long i = row_ptr[r] + lane; i < row_ptr[r + 1]; i += 32)\n"
         "    acc += (" +
         t + ")(" + s.body +
         ");\n"
         "  for (int half = 16; half > 0; half >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, "
         "half);\n  if (lane == 0) out[r] = acc;\n}\n";
}

/// The kernel `spade_fused_csr_map`: a values chain that reads its entries' rows or columns (a
/// diagonal scaling), one warp per row of the csr pattern.
template <class T>
std::string fused_csr_map_source(const fused_signature& s) {
  const std::string t = cuda_type_name<T>();
  return std::string("// spade: fused csr values map\n") + fused_prelude(s) +
         "extern \"C\" __global__ void __launch_bounds__(256) spade_fused_csr_map(long long rows, "
         "const int* row_ptr, const int* col_idx, " +
         t + "* out" + fused_parameter_list(s) +
         ") {\n"
         "  const long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;\n"
         "  const int lane = threadIdx.x & 31;\n  if (r >= rows) return;\n"
         "  for (long long i = row_ptr[r] + lane; i < row_ptr[r + 1]; i += 32)\n    out[i] = (" +
         t + ")(" + s.body + ");\n}\n";
}

/// The kernel arguments of one launch, in the order of fused_signature.
class fused_arguments {
 public:
  void input(const void* data, std::int64_t leading) {
    inputs_.push_back({data, static_cast<long long>(leading)});
  }
  template <class T>
  void scalar(T value) {
    scalar_slot slot{};
    if constexpr (std::is_same_v<T, float>)
      slot.f = value;
    else
      slot.d = value;
    scalars_.push_back(slot);
    scalar_is_float_.push_back(std::is_same_v<T, float>);
  }
  /// Pointers to every argument after `fixed` (which point to the fixed leading ones).
  std::vector<void*> pointers(std::vector<void*> fixed) {
    for (auto& in : inputs_) {
      fixed.push_back(&in.data);
      fixed.push_back(&in.leading);
    }
    for (std::size_t k = 0; k < scalars_.size(); ++k)
      fixed.push_back(scalar_is_float_[k] ? static_cast<void*>(&scalars_[k].f)
                                          : static_cast<void*>(&scalars_[k].d));
    return fixed;
  }
  context* owner = nullptr;  // the context of the first gpu input

 private:
  struct input_slot {
    const void* data;
    long long leading;
  };
  union scalar_slot {
    float f;
    double d;
  };
  std::vector<input_slot> inputs_;
  std::vector<scalar_slot> scalars_;
  std::vector<bool> scalar_is_float_;
};

/// Collects x's inputs (evaluating nested plans into `temporaries`) and scalars in
/// fused_text's order; `values` replaces the sparse base's stored values (the Values chain).
template <bool Values, class X>
void collect_fused(const X& x, fused_arguments& args, fused_temporaries& temporaries,
                   const void* values = nullptr) {
  constexpr bool interior = Values ? values_interior_v<X> : fused_interior_v<X>;
  if constexpr (expr::is_view_v<X>) {
    if (!args.owner) args.owner = x.base_values().owner();
    args.input(x.data(), x.stride);
  } else if constexpr (!interior) {
    if constexpr (Values) {
      args.input(values, 0);
    } else {
      const auto& m = fused_input(x, temporaries);
      std::int64_t leading = 0;
      if constexpr (is_dense_v<expr::bare_t<decltype(m)>>) leading = m.leading_dimension();
      if (!args.owner) args.owner = m.values().owner();
      args.input(m.values().data(), leading);
    }
  } else if constexpr (expr::is_scaled_v<X>) {
    collect_fused<Values>(x.inner, args, temporaries, values);
    args.scalar(x.factor);
  } else if constexpr (expr::is_sum_v<X> || expr::is_cwise_binary_v<X>) {
    collect_fused<Values>(x.lhs, args, temporaries, values);
    collect_fused<Values>(x.rhs, args, temporaries, values);
  } else if constexpr (expr::is_cwise_unary_v<X>) {
    collect_fused<Values>(x.inner, args, temporaries, values);
    args.scalar(x.param);
  } else if constexpr (expr::is_masked_product_v<X>) {
    collect_fused<Values>(x.inner, args, temporaries, values);
    const auto& d = fused_input(x.dense, temporaries);
    args.input(d.values().data(), d.leading_dimension());
  } else if constexpr (expr::is_diagonal_scaled_v<X>) {
    collect_fused<Values>(x.inner, args, temporaries, values);
    const auto& d = fused_input(x.diag, temporaries);
    if (!args.owner) args.owner = d.values().owner();
    args.input(d.values().data(), 0);
  } else {
    collect_fused<Values>(x.inner, args, temporaries, values);
  }
}

/// The signature (with its body) of E's fused pass, made once per type.
template <bool Values, bool RowMajor, class E>
const fused_signature& fused_signature_of() {
  static const fused_signature s = [] {
    fused_signature made;
    made.body = fused_text<Values, RowMajor, E>(made);
    return made;
  }();
  return s;
}

/// Blocks of the map kernel: n / (256 · unroll), at most 16 per SM when each thread loops over
/// several elements; uncapped (one element per thread) for a compute-bound body.
inline unsigned fused_map_blocks(std::int64_t n, int unroll, const context& ctx) {
  const std::int64_t wanted = (n + 256 * unroll - 1) / (256 * unroll);
  const std::int64_t cap =
      unroll == 1 ? std::int64_t{0x7fffffff} : std::int64_t{ctx.properties().sm_count} * 16;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(wanted, cap > 0 ? cap : 1024)));
}

/// Blocks of a reduction: a function of n only, so the result's bits do not depend on the
/// device or on anything but the input.
inline unsigned fused_reduce_blocks(std::int64_t n) {
  return static_cast<unsigned>(std::max<std::int64_t>(
      1, std::min<std::int64_t>((n + 256 * reduce_unroll - 1) / (256 * reduce_unroll), 1024)));
}

/// How the last fused pass of this thread ran, for explain and the tests.
inline device::jit_origin& last_fused_origin() {
  thread_local device::jit_origin origin = device::jit_origin::compiled;
  return origin;
}

/// The launch of a generated map kernel (the part that does not depend on the tree, out of line
/// so that each tree's launch_fused_map is a call: compile time).
[[gnu::noinline]] inline void run_fused_map(const std::string& source, int unroll, bool strided,
                                            void* out, std::int64_t n, std::int64_t inner,
                                            fused_arguments& args, std::int64_t out_ld) {
  context& ctx = args.owner ? *args.owner : default_context();
  long long count = n, inner_count = inner, leading = out_ld;
  void* out_pointer = out;
  auto pointers = strided ? args.pointers({&count, &inner_count, &out_pointer, &leading})
                          : args.pointers({&count, &inner_count, &out_pointer});
  last_fused_origin() =
      device::jit_launch(ctx, source, strided ? "spade_fused_map_strided" : "spade_fused_map",
                         fused_map_blocks(n, unroll, ctx), 256, pointers.data());
}

/// Strided: out is a view whose element i = (o, k) lies at out[o · out_ld + k].
template <bool Values, bool RowMajor, bool Strided = false, class E, class Out>
void launch_fused_map(const E& e, Out* out, std::int64_t n, std::int64_t inner,
                      fused_arguments& args, std::int64_t out_ld = 0) {
  if (n == 0) return;
  using out_type = std::remove_const_t<Out>;
  static const std::string source =
      fused_map_source<out_type>(fused_signature_of<Values, RowMajor, E>(), Strided);
  static const int unroll =
      map_unroll(fused_signature_of<Values, RowMajor, E>(), std::is_same_v<out_type, double>);
  run_fused_map(source, unroll, Strided, out, n, inner, args, out_ld);
  (void)e;
}

/// Launches a generated kernel of `threads` threads (blocks of 256) with the fixed arguments
/// `fixed` before the tree's; records where the kernel came from.
inline void launch_generated(context& ctx, const std::string& source, const char* entry,
                             std::int64_t threads, fused_arguments& args,
                             std::vector<void*> fixed) {
  if (threads <= 0) return;
  auto pointers = args.pointers(std::move(fixed));
  last_fused_origin() = device::jit_launch(
      ctx, source, entry, static_cast<unsigned>((threads + 255) / 256), 256, pointers.data());
}

/// The launch of a generated reduction kernel over n > 0 elements and its result (the part
/// that does not depend on the tree: compiled once into the library for float and double).
template <class T>
T run_fused_reduce(const std::string& source, std::int64_t n, std::int64_t inner,
                   fused_arguments& args) {
  context& ctx = args.owner ? *args.owner : default_context();
  const unsigned blocks = fused_reduce_blocks(n);
  // partials, the result, then the counter the last block resets (zeroed once here).
  device_buffer<T> scratch(static_cast<std::size_t>(blocks) + 2, ctx);
  ctx.fill_zero(scratch.data() + blocks + 1, sizeof(T));
  long long count = n, inner_count = inner;
  void* partials = scratch.data();
  void* done = scratch.data() + blocks + 1;
  void* result = scratch.data() + blocks;
  auto pointers = args.pointers({&count, &inner_count, &partials, &done, &result});
  last_fused_origin() =
      device::jit_launch(ctx, source, "spade_fused_reduce", blocks, 256, pointers.data());
  T value{};
  ctx.copy_to_host(&value, scratch.data() + blocks, sizeof(T));
  return value;
}

template <bool Values, bool RowMajor, bool Square, class T, class E>
T launch_fused_reduce(reduction kind, std::int64_t n, std::int64_t inner, fused_arguments& args) {
  if (n == 0) return T(0);
  static const std::string sources[3] = {
      fused_reduce_source<T>(fused_signature_of<Values, RowMajor, E>(), reduction::sum, Square),
      fused_reduce_source<T>(fused_signature_of<Values, RowMajor, E>(), reduction::max, Square),
      fused_reduce_source<T>(fused_signature_of<Values, RowMajor, E>(), reduction::min, Square)};
  return run_fused_reduce<T>(sources[static_cast<int>(kind)], n, inner, args);
}

template <>
struct cwise_backend<gpu> {
  /// For explain: the kernel, its cache key, where it would come from now, and its body.
  template <class E>
  static std::string describe(const E&) {
    using R = expr::result_t<E>;
    constexpr bool values = sparse_matrix<R>;
    const auto& sig = fused_signature_of<values, row_major_result<R>(), E>();
    const std::string source = fused_map_source<typename E::value_type>(sig);
    std::string where = "compiled by NVRTC at first use";
    if (device_available()) {
      const auto& p = default_context().properties();
      const int arch = p.compute_major * 10 + p.compute_minor;
      const auto origin = device::jit_lookup(source, arch);
      where = device::jit_key(source, arch) + ", " +
              (origin == device::jit_origin::memory ? std::string("loaded in this process")
               : origin == device::jit_origin::disk ? "in the disk cache"
                                                    : "compiled by NVRTC at first use");
    }
    return "one fused kernel spade_fused_map (" + where + "): out[i] = " + sig.body;
  }

  /// s's pattern with the values alpha · s's values ∘ (op(A)·op(B)) at s's entries: Spade's
  /// sddmm kernel, which writes the pattern in the same launch, or cusparseSDDMM (into a copy of
  /// s) when eval<kernels::cusparse_sddmm> forces it.
  template <class Forced, class T, class A, class B>
  static csr<T, gpu> sddmm(T alpha, const csr<T, gpu>& s, const A& a, bool ta, const B& b,
                           bool tb) {
    const auto op_a = ta ? device::operation::transpose : device::operation::none;
    const auto op_b = tb ? device::operation::transpose : device::operation::none;
    if constexpr (std::is_same_v<Forced, kernels::cusparse_sddmm>) {
      csr<T, gpu> out = s;
      device::cusparse_sddmm(alpha, s, a, op_a, b, op_b, out);
      return out;
    } else {
      // Nothing to sample: S's own (empty) pattern. Launching would also read the row_ptr that
      // a default-constructed S does not have.
      if (s.nnz() == 0) return s;
      context* owner = s.row_ptr().owner();
      context& ctx = owner ? *owner : default_context();
      const auto n = static_cast<std::size_t>(s.nnz());
      csr<T, gpu> out(unchecked, s.rows(), s.cols(),
                      device_buffer<index_t>(static_cast<std::size_t>(s.rows()) + 1, ctx),
                      device_buffer<index_t>(n, ctx), device_buffer<T>(n, ctx));
      device::sddmm(alpha, s, a, op_a, b, op_b, out, true);
      return out;
    }
  }

  template <class Dest, class E>
  static void assign(Dest& dest, const E& e) {
    constexpr bool row = row_major_result<Dest>();
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<false>(e, args, temporaries);
    shape_destination(dest, expr::rows_of(e), expr::cols_of(e));
    if (!args.owner) args.owner = dest.values().owner();
    const std::int64_t inner = row ? expr::cols_of(e) : expr::rows_of(e);
    launch_fused_map<false, row>(e, dest.values().data(),
                                 std::int64_t{expr::rows_of(e)} * expr::cols_of(e), inner, args);
  }

  /// The entries a and b (csr, one shape) both store, each a's value times b's.
  template <class T>
  static csr<T, gpu> intersect(const csr<T, gpu>& a, const csr<T, gpu>& b) {
    return device::cwise_intersection(a, b);
  }

  /// dest = e into a view: one fused pass writing the window through its stride.
  template <class View, class E>
  static void assign_view(const View& dest, const E& e) {
    constexpr bool row = row_major_result<typename View::result_type>();
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<false>(e, args, temporaries);
    if (!args.owner) args.owner = dest.base_values().owner();
    const std::int64_t inner = row ? dest.cols() : dest.rows();
    launch_fused_map<false, row, true>(
        e, dest.writable_data(), std::int64_t{dest.rows()} * dest.cols(), inner, args, dest.stride);
  }

  template <class Dest, class E>
  static void dense_vector_reduction(Dest& dest, const E& e) {
    using X = expr::bare_t<decltype(e.inner)>;
    using T = typename Dest::value_type;
    constexpr bool row = row_major_result<expr::result_t<X>>();
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<false>(e.inner, args, temporaries);
    shape_destination(dest, e.rows(), 1);
    if (!args.owner) args.owner = dest.values().owner();
    if (dest.size() == 0) return;
    context& ctx = *args.owner;
    const long long rows = expr::rows_of(e.inner), cols = expr::cols_of(e.inner);
    long long outer = row ? rows : cols, inner = row ? cols : rows;
    void* out = dest.values().data();
    const auto& sig = fused_signature_of<false, row, X>();
    if constexpr (expr::is_diagonal_of_v<E>) {
      static const std::string source = fused_diagonal_source<T>(sig);
      long long n = dest.size();
      launch_generated(ctx, source, "spade_fused_diagonal", n, args, {&n, &inner, &out});
    } else {
      constexpr bool along_inner = (E::direction == expr::axis::rows) == row;
      static const std::string source = fused_axis_source<T>(sig, along_inner);
      launch_generated(ctx, source, "spade_fused_axis", along_inner ? outer * 32 : inner, args,
                       {&outer, &inner, &out});
    }
  }

  template <class Dest, class E, class C>
  static void sparse_row_sums(Dest& dest, const E& chain, const C& a) {
    launch_csr<false>(dest, chain, a, a.rows());
  }
  template <class Dest, class E, class C>
  static void sparse_diagonal(Dest& dest, const E& chain, const C& a) {
    launch_csr<true>(dest, chain, a, a.rows() < a.cols() ? a.rows() : a.cols());
  }
  template <bool Diagonal, class Dest, class E, class C>
  static void launch_csr(Dest& dest, const E& chain, const C& a, index_t n) {
    using T = typename Dest::value_type;
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<true>(chain, args, temporaries, a.values().data());
    shape_destination(dest, n, 1);
    if (n == 0) return;
    context& ctx = a.row_ptr().owner() ? *a.row_ptr().owner() : *dest.values().owner();
    static const std::string source =
        fused_csr_source<T>(fused_signature_of<true, true, E>(), Diagonal);
    long long rows = n;
    const void* row_ptr = a.row_ptr().data();
    const void* col_idx = a.col_idx().data();
    void* out = dest.values().data();
    launch_generated(ctx, source, Diagonal ? "spade_fused_csr_diagonal" : "spade_fused_csr_rows",
                     Diagonal ? rows : rows * 32, args, {&rows, &row_ptr, &col_idx, &out});
  }

  template <class R, class E, class Input>
  static void map_values(R& result, const E& e, const Input& input) {
    using T = typename R::value_type;
    auto& values = result.values();
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<true>(e, args, temporaries, input.data());
    args.owner = values.owner();
    if constexpr (reads_entry_positions<E>()) {
      static const std::string source =
          fused_csr_map_source<T>(fused_signature_of<true, true, E>());
      if (result.rows() == 0 || values.size() == 0) return;
      long long rows = result.rows();
      const void* row_ptr = result.row_ptr().data();
      const void* col_idx = result.col_idx().data();
      void* out = values.data();
      launch_generated(*args.owner, source, "spade_fused_csr_map", rows * 32, args,
                       {&rows, &row_ptr, &col_idx, &out});
    } else {
      launch_fused_map<true, true>(e, values.data(), static_cast<std::int64_t>(values.size()), 1,
                                   args);
    }
  }

  template <bool Square, class E>
  static typename E::value_type reduce(reduction kind, const E& e) {
    using T = typename E::value_type;
    constexpr bool row = row_major_result<expr::result_t<E>>();
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<false>(e, args, temporaries);
    const std::int64_t inner = row ? expr::cols_of(e) : expr::rows_of(e);
    return launch_fused_reduce<false, row, Square, T, E>(
        kind, std::int64_t{expr::rows_of(e)} * expr::cols_of(e), inner, args);
  }

  template <bool Square, class Storage, class E>
  static typename E::value_type reduce_values(reduction kind, const Storage& values, const E& e) {
    using T = typename E::value_type;
    fused_arguments args;
    fused_temporaries temporaries;
    collect_fused<true>(e, args, temporaries, values.data());
    args.owner = values.owner();
    return launch_fused_reduce<true, true, Square, T, E>(
        kind, static_cast<std::int64_t>(values.size()), 1, args);
  }
};

// The kernel sources' generators and the reduction launch for float and double, compiled once into
// the library (lib/host/instantiations.cpp): they do not depend on the expression, only on its
// signature. SPADE_HEADER_ONLY turns this off.
#define SPADE_FUSED_SOURCE_INSTANCES(PREFIX, T)                                                \
  PREFIX template std::string fused_map_source<T>(const fused_signature&, bool);               \
  PREFIX template std::string fused_reduce_source<T>(const fused_signature&, reduction, bool); \
  PREFIX template std::string fused_axis_source<T>(const fused_signature&, bool);              \
  PREFIX template std::string fused_diagonal_source<T>(const fused_signature&);                \
  PREFIX template std::string fused_csr_source<T>(const fused_signature&, bool);               \
  PREFIX template std::string fused_csr_map_source<T>(const fused_signature&);                 \
  PREFIX template T run_fused_reduce<T>(const std::string&, std::int64_t, std::int64_t,        \
                                        fused_arguments&);
#ifndef SPADE_HEADER_ONLY
SPADE_FUSED_SOURCE_INSTANCES(extern, float)
SPADE_FUSED_SOURCE_INSTANCES(extern, double)
#endif

}  // namespace spade::detail
