// The ordered rule tables (first match wins) and plan_of<E>, the compile-time plan of a node.
#pragma once

#include <boost/hana/find_if.hpp>
#include <boost/hana/optional.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <type_traits>

#include "spade/core/space.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/plan/kernels.hpp"
#include "spade/plan/rules/products.hpp"
#include "spade/plan/rules/sums.hpp"
#include "spade/plan/steps.hpp"

namespace spade::plan {

namespace hana = boost::hana;

/// Products, in priority order; docs/planner.md mirrors this table.
inline constexpr auto product_rules =
    hana::tuple_t<rules::dense_times_dense, rules::sparse_times_dense, rules::dense_times_sparse,
                  rules::sparse_times_vector, rules::dense_times_vector,
                  rules::sparse_times_sparse>;
/// Sums and differences, in priority order.
inline constexpr auto sum_rules =
    hana::tuple_t<rules::dense_plus_dense, rules::sparse_plus_sparse, rules::vector_plus_vector>;

/// The first rule of `table` whose `matches<A, B>` holds (a hana::optional of its type).
template <class A, class B>
constexpr auto first_rule(auto table) {
  return hana::find_if(table, [](auto rule) {
    using R = typename decltype(rule)::type;
    return hana::bool_c<R::template matches<A, B>>;
  });
}

/// The plan of a product or sum node whose operands evaluate to A and B.
template <class Node, class A, class B>
struct binary_plan {
  using node = Node;
  using lhs_type = A;
  using rhs_type = B;
  using rule = typename std::remove_cvref_t<
      decltype(first_rule<A, B>(std::conditional_t<expr::is_product_v<Node>,
                                                   std::remove_const_t<decltype(product_rules)>,
                                                   std::remove_const_t<decltype(sum_rules)>>{})
                   .value())>::type;
  using candidates = typename rule::template candidates<A, B>;
  /// True when `Kernel` is among the candidates (what eval<Kernel> requires).
  template <class Kernel>
  static constexpr bool has_kernel = candidates::template has_kernel<Kernel>;
};

template <class E>
struct plan_for {
  // A storage type needs no plan: it is its own value.
  using candidates = plan::candidates<>;
  template <class Kernel>
  static constexpr bool has_kernel = false;
};
template <class L, class R>
struct plan_for<expr::product<L, R>>
    : binary_plan<expr::product<L, R>, expr::result_t<L>, expr::result_t<R>> {};
template <class L, class R>
struct plan_for<expr::sum<L, R>>
    : binary_plan<expr::sum<L, R>, expr::result_t<L>, expr::result_t<R>> {};
// SDDMM is a plan of its own: the kernels that sample a dense product at a csr's entries.
template <class S, class D>
struct plan_for<expr::masked_product<S, D>> {
  static constexpr bool sddmm = expr::is_sddmm_v<expr::masked_product<S, D>>;
  static constexpr bool on_gpu =
      std::is_same_v<typename expr::masked_product<S, D>::space_type, gpu>;
  using candidates = std::conditional_t<
      !sddmm, plan::candidates<>,
      std::conditional_t<on_gpu,
                         plan::candidates<plan::candidate<kernels::sddmm, plan::steps<>>,
                                          plan::candidate<kernels::cusparse_sddmm, plan::steps<>>>,
                         plan::candidates<plan::candidate<kernels::eigen_sddmm, plan::steps<>>>>>;
  template <class Kernel>
  static constexpr bool has_kernel = candidates::template has_kernel<Kernel>;
};
// Scaling and transposition fold into the kernel (alpha, op flags) of the node they wrap.
template <class E>
struct plan_for<expr::scaled<E>> : plan_for<expr::bare_t<E>> {};
template <class E>
struct plan_for<expr::transposed<E>> : plan_for<expr::bare_t<E>> {};

}  // namespace spade::plan

namespace spade {
/// The compile-time plan of expression type E: `candidates` (plan::candidates of
/// plan::candidate<kernel, plan::steps<plan::convert<slot, target>...>>, preferred first),
/// `rule`, `lhs_type`, `rhs_type`, and `has_kernel<K>`.
template <class E>
using plan_of = plan::plan_for<expr::bare_t<E>>;
}  // namespace spade
