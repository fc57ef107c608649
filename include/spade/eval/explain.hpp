// spade::explain(e): the plan of an expression, in words — conversions, kernel, and why;
// explain(e, profile): the gpu plan of cpu operands, previewed for a device profile.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

#include "spade/core/device_profile.hpp"
#include "spade/eval/cwise.hpp"
#include "spade/eval/evaluate.hpp"
#include "spade/eval/preview.hpp"
#include "spade/eval/select.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/expr/view.hpp"
#include "spade/plan/rule_table.hpp"

namespace spade {

namespace detail {

// The text is built by the out-of-line helpers below, so that the templates of every
// explained storage type hold a call each (their number and size are compile time).

/// "csr<float, gpu>".
[[gnu::noinline]] inline std::string type_text_of(const char* format, const char* scalar,
                                                  const char* space) {
  return std::string(format) + "<" + scalar + ", " + space + ">";
}

template <class M>
std::string type_text() {
  return type_text_of(expr::format_name<M>(), scalar_name<typename M::value_type>(),
                      M::space_type::name);
}

/// "csr<float, gpu> 4x5", then ", nnz N, density D" for a sparse operand (nnz >= 0).
[[gnu::noinline]] inline std::string storage_text(const std::string& type, index_t rows,
                                                  index_t cols, std::int64_t nnz, double density) {
  std::ostringstream out;
  out << type << " " << rows << "x" << cols;
  if (nnz >= 0) out << ", nnz " << nnz << ", density " << density;
  return out.str();
}

/// `m` described as it is, or (Preview) as its gpu copy would be.
template <bool Preview, class M>
std::string describe_storage(const M& m) {
  const std::string type = type_text<std::conditional_t<Preview, on_gpu_t<M>, M>>();
  if constexpr (sparse_matrix<M>)
    return storage_text(type, expr::rows_of(m), expr::cols_of(m),
                        static_cast<std::int64_t>(m.nnz()), operand_facts_of(m).density());
  else
    return storage_text(type, expr::rows_of(m), expr::cols_of(m), -1, 0.0);
}

template <class... Steps>
std::string steps_text(plan::steps<Steps...>) {
  if constexpr (sizeof...(Steps) == 0) {
    return "no conversions";
  } else {
    std::string text;
    ((text += std::string(text.empty() ? "" : ", ") + Steps::slot::name + " -> " +
              type_text<typename Steps::target>()),
     ...);
    return text;
  }
}

/// What an operand of a node is: a storage leaf (with its facts), or a temporary.
/// InPlace: a view operand is read in place by the kernel (a strided gpu product).
template <bool Preview, bool InPlace = false, class X>
std::string describe_operand(const X& x, int indent, const device_profile* profile);

/// The storage leaf under scaled/transposed wrappers (for a sparse view, its cached gcoo, made
/// here if it is not yet), or nullptr for a nested expression.
template <class X>
auto leaf_of(const X& x) {
  if constexpr (matrix_or_vector<X>)
    return &x;
  else if constexpr (expr::is_sparse_view_v<X>)
    return &viewed_gcoo(x);
  else if constexpr (expr::is_scaled_v<X> || expr::is_transposed_v<X>)
    return leaf_of(x.inner);
  else
    return nullptr;
}

/// True when the storage leaf under `x` is seen transposed (an odd number of transpositions).
template <class X>
bool leaf_transposed(const X& x) {
  if constexpr (expr::is_transposed_v<X>)
    return !leaf_transposed(x.inner);
  else if constexpr (expr::is_scaled_v<X>)
    return leaf_transposed(x.inner);
  else
    return false;
}

template <bool Preview, class E>
std::string explain_node(const E& e, int indent, const device_profile* profile);

/// The candidates' decisions on storage operands a and b, as explain prints them. A named
/// template of the operands and the plan (not a lambda of the node), so every explained
/// expression over the same operands shares its instantiation.
template <class Rule, class Candidates, class A, class B>
std::string explain_choice(const A& a, const B& b, const operation_facts& facts) {
  std::string log;
  select_candidate<Rule, void>(Candidates{}, a, b, facts, ignore_candidate{}, &log);
  return log;
}

/// The inputs of a fused pass that are nested plans (products, transposes): each is evaluated
/// into a temporary first, by its own plan.
/// R: the pass's result (a csr result of another sparse format's chain converts it first).
template <bool Preview, bool Values, class R, class X>
void explain_fused_inputs(const X& x, int indent, const device_profile* profile,
                          std::ostringstream& out) {
  constexpr bool interior = Values ? values_interior_v<X> : fused_interior_v<X>;
  if constexpr (expr::is_view_v<X>) {
    out << std::string(static_cast<std::size_t>(indent), ' ') << "input read in place: " << x.name
        << ", " << type_text<typename X::result_type>() << " " << x.rows() << "x" << x.cols()
        << " with stride " << x.stride << " (no copy)\n";
  } else if constexpr (!interior) {
    if constexpr (!matrix_or_vector<X>)
      out << std::string(static_cast<std::size_t>(indent), ' ') << "input evaluated first:\n"
          << explain_node<Preview>(x, indent + 2, profile);
    else if constexpr (Values && is_csr_v<R> && sparse_matrix<X> && !is_csr_v<X>)
      out << std::string(static_cast<std::size_t>(indent), ' ')
          << "input converted first: " << type_text<X>()
          << " -> csr, its entries (converted once, cached on the operand)\n";
  } else if constexpr (requires { x.lhs; }) {
    explain_fused_inputs<Preview, Values, R>(x.lhs, indent, profile, out);
    explain_fused_inputs<Preview, Values, R>(x.rhs, indent, profile, out);
  } else {
    explain_fused_inputs<Preview, Values, R>(x.inner, indent, profile, out);
  }
}

/// The plan of node `e`; with Preview, of its gpu copy on the device `profile` describes.
template <bool Preview, class E>
std::string explain_node(const E& e, int indent, const device_profile* profile) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::ostringstream out;
  if constexpr (matrix_or_vector<E>) {
    out << pad << "value: " << describe_storage<Preview>(e) << " (copied)\n";
  } else if constexpr (expr::is_scaled_v<E>) {
    out << pad << "scaled by " << e.factor << " (folded into the kernel's alpha)\n"
        << explain_node<Preview>(e.inner, indent, profile);
  } else if constexpr (expr::is_transposed_v<E>) {
    out << pad << "transposed (an op flag where the kernel has one, else a cached copy)\n"
        << explain_node<Preview>(e.inner, indent, profile);
  } else if constexpr (expr::is_sparse_view_v<E>) {
    out << pad << "sparse view -> " << describe_storage<Preview>(viewed_gcoo(e))
        << " (dense -> gcoo once, cached on the dense operand)\n"
        << explain_node<Preview>(e.inner, indent, profile);
  } else if constexpr (expr::is_pattern_intersection_v<E>) {
    constexpr bool on_gpu = Preview || std::is_same_v<typename E::space_type, gpu>;
    out << pad << "cwise_product of two sparse operands -> " << type_text<expr::result_t<E>>()
        << " " << e.rows() << "x" << e.cols()
        << ": the entries stored in both, each the product of the two values\n"
        << pad << "  kernel: "
        << (on_gpu ? "cwise_intersection (both in csr form; one warp per row searches the "
                     "shorter row's columns in the longer; count, CUB scan, write)"
                   : "a merge of each row's two column lists")
        << "\n";
    out << pad << "  lhs: " << describe_operand<Preview>(e.lhs, indent + 4, profile);
    out << pad << "  rhs: " << describe_operand<Preview>(e.rhs, indent + 4, profile);
  } else if constexpr (expr::is_row_range_v<E>) {
    out << pad << "row range -> " << type_text<expr::result_t<E>>() << " " << e.rows() << "x"
        << e.cols() << ": rows " << e.first << ".." << e.first + e.count - 1 << " of "
        << describe_storage<Preview>(*e.matrix)
        << " (their entries copied, row pointers rebased)\n";
  } else if constexpr (expr::is_vector_reduction_v<E>) {
    using X = expr::bare_t<decltype(e.inner)>;
    const char* what = "diagonal";
    if constexpr (expr::is_axis_sum_v<E>)
      what = E::direction == expr::axis::rows ? "row sums" : "column sums";
    out << pad << what << " -> " << type_text<expr::result_t<E>>() << " " << e.rows() << ": "
        << (sparse_matrix<expr::result_t<X>>
                ? "one kernel over the stored values in csr form (one warp per row; column sums "
                  "read the transpose, cached on the operand)\n"
                : "one kernel over the element-wise tree below (fused; no temporary)\n");
    if constexpr (!matrix_or_vector<X>) out << explain_node<Preview>(e.inner, indent + 2, profile);
  } else if constexpr (expr::is_sddmm_v<E>) {
    constexpr bool on_gpu = Preview || std::is_same_v<typename E::space_type, gpu>;
    using T = typename E::value_type;
    out << pad << "SDDMM -> csr<" << scalar_name<T>() << ", " << (on_gpu ? "gpu" : "cpu") << "> "
        << e.rows() << "x" << e.cols()
        << ": S's pattern, each entry S(i,j) * (A*B)(i,j) with k = " << expr::cols_of(e.dense.lhs)
        << " (A*B never formed)\n"
        << pad << "  kernel: "
        << (on_gpu ? "sddmm (warps take chunks of consecutive entries, a group of lanes per entry "
                     "summing over k with 16-byte loads where A's rows and B's columns are "
                     "contiguous; one launch, the pattern copied by it; the same bits every run); "
                     "candidates: 1. sddmm, 2. cusparse_sddmm (cusparseSDDMM samples "
                     "the pattern only, S's values multiplied in after; eval<kernels::"
                     "cusparse_sddmm> forces it)"
                   : "eigen_sddmm (a dot product per stored entry)")
        << "\n";
    out << pad << "  S: " << describe_operand<Preview>(e.inner, indent + 4, profile);
    out << pad << "  A: " << describe_operand<Preview>(e.dense.lhs, indent + 4, profile);
    out << pad << "  B: " << describe_operand<Preview>(e.dense.rhs, indent + 4, profile);
  } else if constexpr (fuses_cwise<sparse_matrix<expr::result_t<E>>, E>()) {
    constexpr bool values = sparse_matrix<expr::result_t<E>>;
    out << pad << "element-wise -> " << type_text<expr::result_t<E>>() << " " << expr::rows_of(e)
        << "x" << expr::cols_of(e) << (values ? ", the stored values only (pattern kept)" : "")
        << "\n"
        << pad << "  kernel: ";
    if constexpr (Preview)
      out << "one fused kernel on the gpu (its CUDA source made from the expression's type, "
             "compiled by NVRTC at first use and cached in memory and on disk)\n";
    else
      out << cwise_backend<typename E::space_type>::describe(e) << "\n";
    explain_fused_inputs<Preview, values, expr::result_t<E>>(e, indent + 2, profile, out);
  } else {
    using node_type = std::conditional_t<Preview, on_gpu_t<E>, E>;
    using plan_type = plan_of<node_type>;
    using result = expr::result_t<node_type>;
    out << pad << (expr::is_product_v<E> ? "product" : "sum") << " -> " << type_text<result>()
        << " " << e.rows() << "x" << e.cols() << ", rule \"" << plan_type::rule::name << "\"\n";
    if constexpr (!Preview && expr::is_product_v<E>) {
      constexpr bool in_place =
          strided_product<expr::bare_t<decltype(e.lhs)>, expr::bare_t<decltype(e.rhs)>>();
      out << pad << "  lhs: " << describe_operand<Preview, in_place>(e.lhs, indent + 4, profile);
      out << pad << "  rhs: " << describe_operand<Preview, in_place>(e.rhs, indent + 4, profile);
      if constexpr (in_place) {
        out << pad
            << "  kernel: cublas_gemv on the block in place (its leading dimension passed; no "
               "copy)\n";
        return out.str();
      }
    } else {
      out << pad << "  lhs: " << describe_operand<Preview>(e.lhs, indent + 4, profile);
      out << pad << "  rhs: " << describe_operand<Preview>(e.rhs, indent + 4, profile);
    }
    if constexpr (expr::is_sum_v<E>) {
      if constexpr (product_part<expr::bare_t<decltype(e.lhs)>>::value ||
                    product_part<expr::bare_t<decltype(e.rhs)>>::value)
        out << pad
            << "  fused form: assigned to its own addend (C = a*(A*B) + b*C), this is one "
               "product-kernel call with alpha/beta and no temporary\n";
    }
    out << pad << "  candidates (in order):\n";
    int n = 0;
    [&]<class... Cs>(plan::candidates<Cs...>) {
      ((out << pad << "    " << ++n << ". " << Cs::kernel::name << ": "
            << steps_text(typename Cs::conversions{}) << "\n"),
       ...);
    }(typename plan_type::candidates{});
    // The choice needs the operands' run-time facts: known here for storage leaves (and
    // scaled/transposed leaves); a nested expression's are known only once it is evaluated.
    const auto a = leaf_of(e.lhs);
    const auto b = leaf_of(e.rhs);
    if constexpr (!std::is_null_pointer_v<std::remove_cv_t<decltype(a)>> &&
                  !std::is_null_pointer_v<std::remove_cv_t<decltype(b)>>) {
      std::string log;
      // Without a destination, explain assumes the natural (row-major) result.
      const operation_facts facts{leaf_transposed(e.lhs), leaf_transposed(e.rhs), false};
      if constexpr (Preview)
        select_with_facts<typename plan_type::rule, void>(
            typename plan_type::candidates{},
            [&] { return preview_facts_of(*a, *b, facts, *profile); }, [](auto) {}, &log);
      else
        log =
            explain_choice<typename plan_type::rule, typename plan_type::candidates>(*a, *b, facts);
      out << pad << log;
    } else {
      out << pad << "  chosen at run time, once the nested expression is evaluated\n";
    }
  }
  return out.str();
}

template <bool Preview, bool InPlace, class X>
std::string describe_operand(const X& x, int indent, const device_profile* profile) {
  if constexpr (matrix_or_vector<X>) {
    return describe_storage<Preview>(x) + "\n";
  } else if constexpr (expr::is_scaled_v<X>) {
    std::ostringstream out;
    out << x.factor << " * " << describe_operand<Preview, InPlace>(x.inner, indent, profile);
    return out.str();
  } else if constexpr (expr::is_transposed_v<X>) {
    return "transpose of " + describe_operand<Preview, InPlace>(x.inner, indent, profile);
  } else if constexpr (InPlace && expr::is_view_v<X>) {
    const std::string what = x.name + ", " + type_text<typename X::result_type>() + " " +
                             std::to_string(x.rows()) + "x" + std::to_string(x.cols());
    if (is_vector_v<typename X::result_type> && x.stride != 1)
      return what + " with increment " + std::to_string(x.stride) +
             ", copied into a contiguous vector first (GEMV reads a strided x slower than the "
             "copy costs)\n";
    return what + ", read in place by cuBLAS with " +
           (is_vector_v<typename X::result_type> ? "increment " : "leading dimension ") +
           std::to_string(x.stride) + " (no copy)\n";
  } else if constexpr (expr::is_sparse_view_v<X>) {
    return describe_storage<Preview>(viewed_gcoo(x)) +
           " (sparse view: dense -> gcoo once, cached on the dense operand)\n";
  } else {
    using node_type = std::conditional_t<Preview, on_gpu_t<X>, X>;
    return "temporary " + type_text<expr::result_t<node_type>>() + ", evaluated first:\n" +
           explain_node<Preview>(x, indent, profile);
  }
}

}  // namespace detail

/// The plan of `e` in words: each node's rule, candidates with their conversions, the kernel
/// chosen and the run-time facts and thresholds that chose it. Evaluates nothing, except that
/// a sparse_view's dense operand is converted to its gcoo (cached: the evaluation reuses it) and
/// that a gpu sparse × sparse product runs hash_spgemm's setup and symbolic phases to report its
/// products, compression ratio and bins (docs/spgemm.md).
namespace detail {
/// The plan of an expression over multi_gpu operands (spade/multi/distributed.hpp).
template <class E>
std::string explain_distributed(const E& e);
}  // namespace detail

template <expression E>
std::string explain(const E& e) {
  if constexpr (std::is_same_v<typename expr::result_t<E>::space_type, multi_gpu>)
    return detail::explain_distributed(e);
  else
    return detail::explain_node<false>(e, 0, nullptr);
}

/// The gpu plan that copies of cpu operands would get at their first product on the device
/// `profile` describes (h100_profile(), h200_profile(), load_device_profile(file)), planned with
/// the profile's thresholds: runs on a machine without a GPU. The facts the device would compute
/// are computed on the host (row profiles, the tile census; hash_spgemm's products and nnz(C),
/// not its bins). Nothing is evaluated; spade::tuning() is left as it was.
template <expression E>
std::string explain(const E& e, const device_profile& profile) {
  static_assert(std::is_same_v<typename E::space_type, cpu>,
                "spade::explain(e, profile) previews the gpu plan of an expression over cpu "
                "operands; for gpu operands, explain(e) shows their own plan");
  const detail::tuning_override use_profile(profile.tuning);
  return "previewed for " + profile.name + " (" + profile.note +
         "): the plan gpu copies of these operands get at their first product; nothing runs\n" +
         detail::explain_node<true>(e, 0, &profile);
}

}  // namespace spade
