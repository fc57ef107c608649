// spade::explain(e): the plan of an expression, in words — conversions, kernel, and why.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

#include "spade/eval/evaluate.hpp"
#include "spade/eval/select.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/plan/rule_table.hpp"

namespace spade {

namespace detail {

template <class M>
std::string type_text() {
  std::string text = expr::format_name<M>();
  text += std::is_same_v<typename M::value_type, float> ? "<float, " : "<double, ";
  text += M::space_type::name;
  return text + ">";
}

template <class M>
std::string describe_storage(const M& m) {
  std::ostringstream out;
  out << type_text<M>() << " " << expr::rows_of(m) << "x" << expr::cols_of(m);
  if constexpr (sparse_matrix<M>) out << ", nnz " << m.nnz() << ", density " << density_of(m);
  return out.str();
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
template <class X>
std::string describe_operand(const X& x, int indent);

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

template <class E>
std::string explain_node(const E& e, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::ostringstream out;
  if constexpr (matrix_or_vector<E>) {
    out << pad << "value: " << describe_storage(e) << " (copied)\n";
  } else if constexpr (expr::is_scaled_v<E>) {
    out << pad << "scaled by " << e.factor << " (folded into the kernel's alpha)\n"
        << explain_node(e.inner, indent);
  } else if constexpr (expr::is_transposed_v<E>) {
    out << pad << "transposed (an op flag where the kernel has one, else a cached copy)\n"
        << explain_node(e.inner, indent);
  } else if constexpr (expr::is_sparse_view_v<E>) {
    out << pad << "sparse view -> " << describe_storage(viewed_gcoo(e))
        << " (dense -> gcoo once, cached on the dense operand)\n"
        << explain_node(e.inner, indent);
  } else {
    using plan_type = plan_of<E>;
    using result = expr::result_t<E>;
    out << pad << (expr::is_product_v<E> ? "product" : "sum") << " -> " << type_text<result>()
        << " " << e.rows() << "x" << e.cols() << ", rule \"" << plan_type::rule::name << "\"\n";
    out << pad << "  lhs: " << describe_operand(e.lhs, indent + 4);
    out << pad << "  rhs: " << describe_operand(e.rhs, indent + 4);
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
      select_candidate<typename plan_type::rule, void>(
          typename plan_type::candidates{}, *a, *b, facts, [](auto) {}, &log);
      out << pad << log;
    } else {
      out << pad << "  chosen at run time, once the nested expression is evaluated\n";
    }
  }
  return out.str();
}

template <class X>
std::string describe_operand(const X& x, int indent) {
  if constexpr (matrix_or_vector<X>) {
    return describe_storage(x) + "\n";
  } else if constexpr (expr::is_scaled_v<X>) {
    std::ostringstream out;
    out << x.factor << " * " << describe_operand(x.inner, indent);
    return out.str();
  } else if constexpr (expr::is_transposed_v<X>) {
    return "transpose of " + describe_operand(x.inner, indent);
  } else if constexpr (expr::is_sparse_view_v<X>) {
    return describe_storage(viewed_gcoo(x)) +
           " (sparse view: dense -> gcoo once, cached on the dense operand)\n";
  } else {
    return "temporary " + type_text<expr::result_t<X>>() + ", evaluated first:\n" +
           explain_node(x, indent);
  }
}

}  // namespace detail

/// The plan of `e` in words: each node's rule, candidates with their conversions, the kernel
/// chosen and the run-time facts and thresholds that chose it. Evaluates nothing, except that
/// a sparse_view's dense operand is converted to its gcoo (cached: the evaluation reuses it) and
/// that a gpu sparse × sparse product runs hash_spgemm's setup and symbolic phases to report its
/// products, compression ratio and bins (docs/spgemm.md).
template <expression E>
std::string explain(const E& e) {
  return detail::explain_node(e, 0);
}

}  // namespace spade
