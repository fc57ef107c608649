// The operators that build expressions: A * B, A + B, A - B, s * A, A * s, -A, transpose(A),
// sparse_view(D).
#pragma once

#include <type_traits>
#include <utility>

#include "spade/expr/cwise_operators.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"

namespace spade {

namespace expr::detail {

// Instantiated only for a rejected pairing: its template arguments name both operand types in
// the compiler's "required from" line under the message.
template <class Lhs, class Rhs>
struct no_product_rule {
  static_assert(sizeof(Lhs) == 0,
                "spade: operator*: no planner rule multiplies these two operand types (named in "
                "this template's arguments); docs/planner.md lists every supported pairing");
  using type = unsupported;
};
template <class Lhs, class Rhs>
struct no_sum_rule {
  static_assert(sizeof(Lhs) == 0,
                "spade: operator+/-: no planner rule adds these two operand types (named in this "
                "template's arguments): both must be dense, both sparse, or both vectors");
  using type = unsupported;
};

template <class A, class B>
constexpr bool same_space = std::is_same_v<typename A::space_type, typename B::space_type>;
template <class A, class B>
constexpr bool same_scalar = std::is_same_v<typename A::value_type, typename B::value_type>;

}  // namespace expr::detail

/// A · B, lazily. Throws dimension_mismatch when A.cols() != B.rows().
template <expr::operand L, expr::operand R>
auto operator*(L&& lhs, R&& rhs) {
  using A = expr::bare_t<L>;
  using B = expr::bare_t<R>;
  if constexpr (expr::holds_reduced_precision<A, B>) {
    return expr::reject_reduced_precision<
        std::conditional_t<expr::holds_reduced_precision<A>, A, B>>();
  } else if constexpr (expr::is_diagonal_matrix_v<A> || expr::is_diagonal_matrix_v<B>) {
    return expr::detail::diagonal_product(std::forward<L>(lhs), std::forward<R>(rhs));
  } else if constexpr (!expr::detail::same_space<A, B>) {
    static_assert(expr::detail::same_space<A, B>,
                  "spade: operator*: the operands live in different spaces (cpu, gpu, multi_gpu); "
                  "move one with spade::to_gpu / spade::to_cpu, or spade::distribute it onto "
                  "the other's cluster");
    return expr::unsupported{};
  } else if constexpr (!expr::detail::same_scalar<A, B>) {
    static_assert(expr::detail::same_scalar<A, B>,
                  "spade: operator*: the operands have different scalar types (float and "
                  "double); convert one explicitly, Spade never mixes precisions silently");
    return expr::unsupported{};
  } else if constexpr (std::is_same_v<typename expr::product_result<expr::result_t<A>,
                                                                    expr::result_t<B>>::type,
                                      expr::unsupported>) {
    return typename expr::detail::no_product_rule<expr::result_t<A>, expr::result_t<B>>::type{};
  } else {
    return expr::product<expr::stored_t<L>, expr::stored_t<R>>(std::forward<L>(lhs),
                                                               std::forward<R>(rhs));
  }
}

/// A + B, lazily. Throws dimension_mismatch unless the shapes are equal.
template <expr::operand L, expr::operand R>
auto operator+(L&& lhs, R&& rhs) {
  using A = expr::bare_t<L>;
  using B = expr::bare_t<R>;
  if constexpr (expr::holds_reduced_precision<A, B>) {
    return expr::reject_reduced_precision<
        std::conditional_t<expr::holds_reduced_precision<A>, A, B>>();
  } else if constexpr (!expr::detail::same_space<A, B>) {
    static_assert(
        expr::detail::same_space<A, B>,
        "spade: operator+/-: the operands live in different spaces (cpu, gpu, multi_gpu); "
        "move one with spade::to_gpu / spade::to_cpu, or spade::distribute it onto "
        "the other's cluster");
    return expr::unsupported{};
  } else if constexpr (!expr::detail::same_scalar<A, B>) {
    static_assert(expr::detail::same_scalar<A, B>,
                  "spade: operator+/-: the operands have different scalar types (float and "
                  "double); convert one explicitly, Spade never mixes precisions silently");
    return expr::unsupported{};
  } else if constexpr (std::is_same_v<
                           typename expr::sum_result<expr::result_t<A>, expr::result_t<B>>::type,
                           expr::unsupported>) {
    return typename expr::detail::no_sum_rule<expr::result_t<A>, expr::result_t<B>>::type{};
  } else {
    return expr::sum<expr::stored_t<L>, expr::stored_t<R>>(std::forward<L>(lhs),
                                                           std::forward<R>(rhs));
  }
}

/// s · A, lazily; s · (t · A) folds into (s·t) · A.
template <expr::operand E>
auto operator*(typename expr::bare_t<E>::value_type s, E&& e) {
  using X = expr::bare_t<E>;
  if constexpr (expr::holds_reduced_precision<X>) {
    return expr::reject_reduced_precision<X>();
  } else if constexpr (expr::is_scaled_v<X>) {
    using inner_stored = decltype(X::inner);
    if constexpr (std::is_lvalue_reference_v<E>) {
      return expr::scaled<inner_stored>(s * e.factor, e.inner);
    } else {
      return expr::scaled<inner_stored>(s * e.factor, std::move(e.inner));
    }
  } else {
    return expr::scaled<expr::stored_t<E>>(s, std::forward<E>(e));
  }
}

/// A · s, lazily.
template <expr::operand E>
auto operator*(E&& e, typename expr::bare_t<E>::value_type s) {
  return s * std::forward<E>(e);
}

/// −A, lazily.
template <expr::operand E>
auto operator-(E&& e) {
  if constexpr (expr::holds_reduced_precision<E>)
    return expr::reject_reduced_precision<E>();
  else
    return typename expr::bare_t<E>::value_type(-1) * std::forward<E>(e);
}

/// A − B, lazily: A + (−1)·B, so fused forms see one shape of node.
template <expr::operand L, expr::operand R>
auto operator-(L&& lhs, R&& rhs) {
  using B = expr::bare_t<R>;
  if constexpr (!expr::detail::same_scalar<expr::bare_t<L>, B> ||
                expr::holds_reduced_precision<L, R>) {
    return std::forward<L>(lhs) + std::forward<R>(rhs);  // reports the mismatch once
  } else {
    return std::forward<L>(lhs) + (typename B::value_type(-1) * std::forward<R>(rhs));
  }
}

/// Dense `d` seen as a sparse matrix, for a dense operand that is mostly zeros (the GCOO
/// paper's use case): `spade::sparse_view(D) * B` converts D to gcoo once (on D's device,
/// cached on D until D changes) and runs gcoo_spmm; assigned to a gcoo it is that conversion.
/// D must be a dense matrix (not an expression); hold it like any operand (a named D by
/// reference).
template <expr::operand M>
auto sparse_view(M&& d) {
  using X = expr::bare_t<M>;
  if constexpr (expr::holds_reduced_precision<X>) {
    return expr::reject_reduced_precision<X>();
  } else if constexpr (!is_dense_v<X>) {
    static_assert(is_dense_v<X>,
                  "spade::sparse_view: the argument must be a spade::dense matrix (evaluate an "
                  "expression into one first; sparse formats need no view)");
    return expr::unsupported{};
  } else {
    return expr::sparse_view<expr::stored_t<M>>(std::forward<M>(d));
  }
}

/// Aᵀ, lazily.
template <expr::operand E>
auto transpose(E&& e) {
  using X = expr::bare_t<E>;
  if constexpr (expr::holds_reduced_precision<X>) {
    return expr::reject_reduced_precision<X>();
  } else if constexpr (is_vector_v<expr::result_t<X>>) {
    static_assert(!is_vector_v<expr::result_t<X>>,
                  "spade::transpose: vectors are columns and have no transpose here; use "
                  "spade::dot(x, y) for xᵀ·y");
    return expr::unsupported{};
  } else {
    return expr::transposed<expr::stored_t<E>>(std::forward<E>(e));
  }
}

}  // namespace spade
