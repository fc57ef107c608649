// The element-wise vocabulary: abs, sqrt, square, exp, log, sin, cos, tanh, inverse, pow,
// cwise_product/quotient/max/min, cast, and array-with-scalar arithmetic (a + s, s - a, a / s).
#pragma once

#include <type_traits>
#include <utility>

#include "spade/core/scalar.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/operand.hpp"
#include "spade/expr/result.hpp"

namespace spade {

namespace expr::detail {

template <class E>
using natural_t = result_t<bare_t<E>>;
/// True when E evaluates to a sparse matrix (a unary operation then maps its stored values).
template <class E>
inline constexpr bool sparse_operand = sparse_matrix<natural_t<E>>;

/// p: the operation's parameter (a scalar operand, or 0 for none).
template <class Op, class E, class P>
auto make_unary(P p, E&& e) {
  using T = typename bare_t<E>::value_type;
  if constexpr (holds_reduced_precision<E>)
    return reject_reduced_precision<E>();
  else
    return cwise_unary<Op, stored_t<E>>(static_cast<T>(p), std::forward<E>(e));
}

/// Both operands dense matrices or both vectors, of one space and one scalar type.
template <class L, class R>
constexpr bool check_cwise_pair() {
  using A = natural_t<L>;
  using B = natural_t<R>;
  constexpr bool same_space = std::is_same_v<typename A::space_type, typename B::space_type>;
  constexpr bool same_scalar = std::is_same_v<typename A::value_type, typename B::value_type>;
  constexpr bool dense_pair =
      (is_dense_v<A> && is_dense_v<B>) || (is_vector_v<A> && is_vector_v<B>);
  constexpr bool sparse = sparse_matrix<A> || sparse_matrix<B>;
  if constexpr (!same_space) {
    static_assert(same_space,
                  "spade: cwise_product/cwise_quotient/cwise_max/cwise_min: the operands live in "
                  "different spaces (cpu, gpu, multi_gpu); move one with spade::to_gpu / to_cpu "
                  "or spade::distribute");
  } else if constexpr (!same_scalar) {
    static_assert(same_scalar,
                  "spade: cwise_product/cwise_quotient/cwise_max/cwise_min: the operands have "
                  "different scalar types, so convert one with spade::cast<T>");
  } else if constexpr (sparse) {
    static_assert(!sparse,
                  "spade: cwise_quotient/cwise_max/cwise_min of a sparse operand are not "
                  "supported (they are not defined on the pattern), nor is any of them of a "
                  "sparse matrix and a vector; convert the sparse operand to spade::dense first "
                  "(cwise_product of a csr and a dense matrix or a sparse one keeps a pattern)");
  } else {
    static_assert(dense_pair,
                  "spade: cwise_product/cwise_quotient/cwise_max/cwise_min: both operands must be "
                  "dense matrices or both vectors");
  }
  return same_space && same_scalar && !sparse && dense_pair;
}

template <class Op, class L, class R>
auto make_binary(L&& l, R&& r) {
  using A = natural_t<L>;
  using B = natural_t<R>;
  if constexpr (holds_reduced_precision<L, R>) {
    return reject_reduced_precision<std::conditional_t<holds_reduced_precision<L>, L, R>>();
  } else if constexpr (std::is_same_v<Op, ops::product_op> &&
                       ((sparse_matrix<A> && is_dense_v<B>) ||
                        (is_dense_v<A> && sparse_matrix<B>)) &&
                       std::is_same_v<typename A::space_type, typename B::space_type> &&
                       std::is_same_v<typename A::value_type, typename B::value_type>) {
    // A sparse operand times a dense one: the sparse pattern (as a csr), its values scaled
    // element-wise.
    if constexpr (sparse_matrix<A>) {
      return masked_product<stored_t<L>, stored_t<R>>(std::forward<L>(l), std::forward<R>(r));
    } else {
      return masked_product<stored_t<R>, stored_t<L>>(std::forward<R>(r), std::forward<L>(l));
    }
  } else if constexpr (std::is_same_v<Op, ops::product_op> && sparse_matrix<A> &&
                       sparse_matrix<B> &&
                       std::is_same_v<typename A::space_type, typename B::space_type> &&
                       std::is_same_v<typename A::value_type, typename B::value_type>) {
    // Two sparse operands: the entries stored in both.
    return pattern_intersection<stored_t<L>, stored_t<R>>(std::forward<L>(l), std::forward<R>(r));
  } else if constexpr (check_cwise_pair<L, R>()) {
    return cwise_binary<Op, stored_t<L>, stored_t<R>>(std::forward<L>(l), std::forward<R>(r));
  } else {
    return unsupported{};
  }
}

}  // namespace expr::detail

/// |a| element by element (a sparse operand keeps its pattern).
template <expr::operand E>
auto abs(E&& e) {
  return expr::detail::make_unary<expr::ops::abs_op>(0, std::forward<E>(e));
}
/// √a element by element (a sparse operand keeps its pattern).
template <expr::operand E>
auto sqrt(E&& e) {
  return expr::detail::make_unary<expr::ops::sqrt_op>(0, std::forward<E>(e));
}
/// a² element by element (a sparse operand keeps its pattern).
template <expr::operand E>
auto square(E&& e) {
  return expr::detail::make_unary<expr::ops::square_op>(0, std::forward<E>(e));
}
/// sin(a) element by element (a sparse operand keeps its pattern).
template <expr::operand E>
auto sin(E&& e) {
  return expr::detail::make_unary<expr::ops::sin_op>(0, std::forward<E>(e));
}
/// tanh(a) element by element (a sparse operand keeps its pattern).
template <expr::operand E>
auto tanh(E&& e) {
  return expr::detail::make_unary<expr::ops::tanh_op>(0, std::forward<E>(e));
}
/// a^p element by element; on a sparse operand p must be > 0 (else spade::error at evaluation).
template <expr::operand E>
auto pow(E&& e, typename expr::bare_t<E>::value_type p) {
  return expr::detail::make_unary<expr::ops::pow_op>(p, std::forward<E>(e));
}

/// eᵃ element by element; dense matrices and vectors only.
template <expr::operand E>
auto exp(E&& e) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade::exp: exp(0) = 1, so on a sparse operand it would fill every unstored "
                "entry; convert the operand to spade::dense first");
  return expr::detail::make_unary<expr::ops::exp_op>(0, std::forward<E>(e));
}
/// ln(a) element by element; dense matrices and vectors only.
template <expr::operand E>
auto log(E&& e) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade::log: log(0) = -inf, so on a sparse operand it would fill every unstored "
                "entry; convert the operand to spade::dense first");
  return expr::detail::make_unary<expr::ops::log_op>(0, std::forward<E>(e));
}
/// cos(a) element by element; dense matrices and vectors only.
template <expr::operand E>
auto cos(E&& e) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade::cos: cos(0) = 1, so on a sparse operand it would fill every unstored "
                "entry; convert the operand to spade::dense first");
  return expr::detail::make_unary<expr::ops::cos_op>(0, std::forward<E>(e));
}
/// 1/a element by element; dense matrices and vectors only.
template <expr::operand E>
auto inverse(E&& e) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade::inverse: 1/0 = inf, so on a sparse operand it would fill every unstored "
                "entry; convert the operand to spade::dense first");
  return expr::detail::make_unary<expr::ops::inverse_op>(0, std::forward<E>(e));
}

/// a + s and s + a element by element; dense matrices and vectors only.
template <expr::operand E>
auto operator+(E&& e, typename expr::bare_t<E>::value_type s) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade: sparse + scalar would fill every unstored entry; convert the operand to "
                "spade::dense first (s * A and A / s keep the pattern)");
  return expr::detail::make_unary<expr::ops::add_scalar_op>(s, std::forward<E>(e));
}
template <expr::operand E>
auto operator+(typename expr::bare_t<E>::value_type s, E&& e) {
  return std::forward<E>(e) + s;
}
/// a − s (computed as a + (−s), the same in IEEE arithmetic); dense matrices and vectors only.
template <expr::operand E>
auto operator-(E&& e, typename expr::bare_t<E>::value_type s) {
  return std::forward<E>(e) + (-s);
}
/// s − a element by element; dense matrices and vectors only.
template <expr::operand E>
auto operator-(typename expr::bare_t<E>::value_type s, E&& e) {
  static_assert(!expr::detail::sparse_operand<E>,
                "spade: scalar - sparse would fill every unstored entry; convert the operand to "
                "spade::dense first");
  return expr::detail::make_unary<expr::ops::scalar_minus_op>(s, std::forward<E>(e));
}
/// a / s element by element (a division, as Eigen computes it); a sparse operand keeps its
/// pattern.
template <expr::operand E>
auto operator/(E&& e, typename expr::bare_t<E>::value_type s) {
  return expr::detail::make_unary<expr::ops::divide_by_scalar_op>(s, std::forward<E>(e));
}

/// a ∘ b (Hadamard product); b may be a scalar.
template <expr::operand L, expr::operand R>
auto cwise_product(L&& a, R&& b) {
  return expr::detail::make_binary<expr::ops::product_op>(std::forward<L>(a), std::forward<R>(b));
}
template <expr::operand E>
auto cwise_product(E&& a, typename expr::bare_t<E>::value_type s) {
  return s * std::forward<E>(a);
}
/// a ⊘ b element by element; b may be a scalar.
template <expr::operand L, expr::operand R>
auto cwise_quotient(L&& a, R&& b) {
  return expr::detail::make_binary<expr::ops::quotient_op>(std::forward<L>(a), std::forward<R>(b));
}
template <expr::operand E>
auto cwise_quotient(E&& a, typename expr::bare_t<E>::value_type s) {
  return std::forward<E>(a) / s;
}
/// max(a, b) element by element, NaN if either is NaN; b may be a scalar (on a sparse a, a
/// scalar ≤ 0 keeps the pattern; a larger one is an error at evaluation).
template <expr::operand L, expr::operand R>
auto cwise_max(L&& a, R&& b) {
  return expr::detail::make_binary<expr::ops::max_op>(std::forward<L>(a), std::forward<R>(b));
}
template <expr::operand E>
auto cwise_max(E&& a, typename expr::bare_t<E>::value_type s) {
  return expr::detail::make_unary<expr::ops::max_scalar_op>(s, std::forward<E>(a));
}
/// min(a, b) element by element, NaN if either is NaN; b may be a scalar (on a sparse a, a
/// scalar ≥ 0 keeps the pattern).
template <expr::operand L, expr::operand R>
auto cwise_min(L&& a, R&& b) {
  return expr::detail::make_binary<expr::ops::min_op>(std::forward<L>(a), std::forward<R>(b));
}
template <expr::operand E>
auto cwise_min(E&& a, typename expr::bare_t<E>::value_type s) {
  return expr::detail::make_unary<expr::ops::min_scalar_op>(s, std::forward<E>(a));
}

/// The sums of each row of A (dense or sparse: of its stored entries), as a vector, lazily; A
/// may be an element-wise expression (row_sums(abs(A)) is one pass).
template <expr::operand E>
auto row_sums(E&& a) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    static_assert(!is_vector_v<expr::detail::natural_t<E>>,
                  "spade::row_sums: the operand must be a matrix (a vector's sum is spade::sum)");
    return expr::axis_sum<expr::axis::rows, expr::stored_t<E>>(std::forward<E>(a));
  }
}
/// The sums of each column of A (dense or sparse), as a vector, lazily.
template <expr::operand E>
auto col_sums(E&& a) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    static_assert(!is_vector_v<expr::detail::natural_t<E>>,
                  "spade::col_sums: the operand must be a matrix (a vector's sum is spade::sum)");
    return expr::axis_sum<expr::axis::cols, expr::stored_t<E>>(std::forward<E>(a));
  }
}
/// A's diagonal (elements (i, i), i < min(rows, cols)) as a vector, lazily; A dense or sparse
/// (an unstored diagonal element is 0).
template <expr::operand E>
auto diagonal(E&& a) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    static_assert(!is_vector_v<expr::detail::natural_t<E>>,
                  "spade::diagonal: the operand must be a matrix (spade::as_diagonal(v) makes a "
                  "diagonal operand of a vector)");
    return expr::diagonal_of<expr::stored_t<E>>(std::forward<E>(a));
  }
}

/// The square matrix with v on its diagonal, as an operand: as_diagonal(d) * A scales A's rows,
/// A * as_diagonal(d) its columns (one fused pass; a csr A keeps its pattern), as_diagonal(d) * x
/// is cwise_product(d, x). Alone it evaluates to a csr.
template <expr::operand E>
auto as_diagonal(E&& v) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    static_assert(is_vector_v<expr::detail::natural_t<E>>,
                  "spade::as_diagonal: the operand must be a vector (spade::diagonal(A) takes a "
                  "matrix's diagonal)");
    return expr::diagonal_matrix<expr::stored_t<E>>(std::forward<E>(v));
  }
}

namespace expr::detail {

template <class X>
decltype(auto) diag_of(X&& d) {
  if constexpr (std::is_lvalue_reference_v<X>)
    return (d.diag);
  else
    return std::move(d.diag);
}

/// A product with an as_diagonal operand (operator* sends every such product here).
template <class L, class R>
auto diagonal_product(L&& l, R&& r) {
  using A = bare_t<L>;
  using B = bare_t<R>;
  constexpr bool same_space = std::is_same_v<typename A::space_type, typename B::space_type>;
  constexpr bool same_scalar = std::is_same_v<typename A::value_type, typename B::value_type>;
  if constexpr (!same_space || !same_scalar) {
    static_assert(same_space && same_scalar,
                  "spade: a product with as_diagonal(v): the operands differ in space or scalar "
                  "type; move or convert one");
    return unsupported{};
  } else if constexpr (is_diagonal_matrix_v<A> && is_diagonal_matrix_v<B>) {
    static_assert(!is_diagonal_matrix_v<B>,
                  "spade: as_diagonal(a) * as_diagonal(b) is not supported; write "
                  "as_diagonal(cwise_product(a, b))");
    return unsupported{};
  } else if constexpr (is_diagonal_matrix_v<A>) {
    using M = natural_t<R>;
    using D = decltype(diag_of(std::forward<L>(l)));
    if constexpr (is_vector_v<M>) {
      return cwise_product(diag_of(std::forward<L>(l)), std::forward<R>(r));
    } else {
      return diagonal_scaled<axis::rows, stored_t<D>, stored_t<R>>(diag_of(std::forward<L>(l)),
                                                                   std::forward<R>(r));
    }
  } else {
    using M = natural_t<L>;
    using D = decltype(diag_of(std::forward<R>(r)));
    if constexpr (is_vector_v<M>) {
      static_assert(!is_vector_v<M>,
                    "spade: x * as_diagonal(d) with a vector x: vectors are columns; write "
                    "as_diagonal(d) * x or cwise_product(x, d)");
      return unsupported{};
    } else {
      return diagonal_scaled<axis::cols, stored_t<D>, stored_t<L>>(diag_of(std::forward<R>(r)),
                                                                   std::forward<L>(l));
    }
  }
}

}  // namespace expr::detail

/// `e` with its values converted to U, lazily: fused into the pass that reads it. U is float,
/// double, spade::half or spade::bfloat16 (rounded to nearest even). A sparse operand (float or
/// double only) keeps its pattern: a csr of its entries (another format converted once, cached).
template <class U, expr::operand E>
auto cast(E&& e) {
  using V = typename expr::bare_t<E>::value_type;
  constexpr bool reduced = reduced_precision<U> || reduced_precision<V>;
  if constexpr (!storage_scalar<U>) {
    static_assert(storage_scalar<U>,
                  "spade::cast<U>: U must be float, double, spade::half or spade::bfloat16");
    return expr::unsupported{};
  } else if constexpr (reduced && expr::detail::sparse_operand<E>) {
    static_assert(!expr::detail::sparse_operand<E>,
                  "spade::cast<U> to spade::half or spade::bfloat16 takes a dense matrix or a "
                  "vector: sparse formats hold float or double");
    return expr::unsupported{};
  } else {
    return expr::cast_node<U, expr::stored_t<E>>(std::forward<E>(e));
  }
}

}  // namespace spade
