// The natural result type of every expression, and which pairings have one at all.
#pragma once

#include <type_traits>

#include "spade/expr/nodes.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/vector.hpp"

namespace spade::expr {

/// Marks a pairing no rule can evaluate (the operators turn it into one static_assert).
/// It converts to any type, so `spade::dense<T> C = A * B;` with a rejected pairing reports
/// only that static_assert, not also a failed conversion.
struct unsupported {
  template <class X>
  operator X() const {
    return X{};
  }
};

/// True when an operand holds spade::half or spade::bfloat16 values, which are stored, never
/// computed on: every operation but spade::cast, views and assignment rejects them.
template <class... X>
inline constexpr bool holds_reduced_precision =
    (reduced_precision<typename std::remove_cvref_t<X>::value_type> || ...);

// Instantiated only for an operation on a half or bfloat16 operand: its template argument names
// the operand type in the compiler's "required from" line under the message.
template <class X>
struct no_reduced_precision_arithmetic {
  static_assert(sizeof(X) == 0,
                "spade: spade::half and spade::bfloat16 are storage types and do not compute: "
                "convert with spade::cast<float>(x) (or double) first, and back with "
                "spade::cast<spade::half>(...)");
  using type = unsupported;
};
template <class X>
auto reject_reduced_precision() {
  return typename no_reduced_precision_arithmetic<std::remove_cvref_t<X>>::type{};
}

template <class A, class B>
struct product_result {
  using type = unsupported;
};
template <class A, class B>
struct sum_result {
  using type = unsupported;
};

template <class T, class S, class LA, class LB>
struct product_result<dense<T, S, LA>, dense<T, S, LB>> {
  using type = dense<T, S, LA>;
};
template <class A, class T, class S, class L>
requires sparse_matrix<A>
struct product_result<A, dense<T, S, L>> {
  using type = dense<T, S, L>;
};
template <class T, class S, class L, class B>
requires sparse_matrix<B>
struct product_result<dense<T, S, L>, B> {
  using type = dense<T, S, L>;
};
template <class A, class T, class S>
requires sparse_matrix<A> || is_dense_v<A>
struct product_result<A, vector<T, S>> {
  using type = vector<T, S>;
};
template <class A, class B>
requires sparse_matrix<A> && sparse_matrix<B>
struct product_result<A, B> {
  using type = csr<typename A::value_type, typename A::space_type>;
};

template <class T, class S, class LA, class LB>
struct sum_result<dense<T, S, LA>, dense<T, S, LB>> {
  using type = dense<T, S, LA>;
};
template <class T, class S>
struct sum_result<vector<T, S>, vector<T, S>> {
  using type = vector<T, S>;
};
template <class A, class B>
requires sparse_matrix<A> && sparse_matrix<B>
struct sum_result<A, B> {
  using type = csr<typename A::value_type, typename A::space_type>;
};

/// result<E>::type: the storage type `spade::eval(e)` returns.
template <class E>
struct result {
  using type = E;  // a storage type evaluates to itself
};
template <class E>
using result_t = typename result<bare_t<E>>::type;

template <class L, class R>
struct result<product<L, R>> {
  using type = typename product_result<result_t<L>, result_t<R>>::type;
};
template <class L, class R>
struct result<sum<L, R>> {
  using type = typename sum_result<result_t<L>, result_t<R>>::type;
};
template <class E>
struct result<scaled<E>> {
  using type = result_t<E>;
};
template <class E>
struct result<sparse_view<E>> {
  using type = gcoo<typename bare_t<E>::value_type, typename bare_t<E>::space_type>;
};
template <class E>
struct result<transposed<E>> {
  using inner = result_t<E>;
  using type = std::conditional_t<is_vector_v<inner>, unsupported, inner>;
};

/// The short name of a storage type's format, for messages and explain().
template <class M>
constexpr const char* format_name() {
  if constexpr (is_csr_v<M>)
    return "csr";
  else if constexpr (is_coo_v<M>)
    return "coo";
  else if constexpr (is_gcoo_v<M>)
    return "gcoo";
  else if constexpr (is_ellr_v<M>)
    return "ellr";
  else if constexpr (is_tiled_v<M>)
    return "tiled";
  else if constexpr (is_vector_v<M>)
    return "vector";
  else if constexpr (is_dense_v<M>)
    return std::is_same_v<typename M::layout_type, row_major> ? "dense(row_major)"
                                                              : "dense(col_major)";
  else
    return "expression";
}

}  // namespace spade::expr
