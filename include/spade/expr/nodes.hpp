// The inert expression nodes: product, sum, scaled, transposed, sparse_view. They store operands.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/expr/operand.hpp"
#include "spade/formats/traits.hpp"

namespace spade::expr {

/// Rows and columns of any operand; a vector is n × 1.
template <class X>
index_t rows_of(const X& x) {
  if constexpr (is_vector_v<X>)
    return x.size();
  else
    return x.rows();
}
template <class X>
index_t cols_of(const X& x) {
  if constexpr (is_vector_v<X>)
    return 1;
  else
    return x.cols();
}

inline std::string shape_text(index_t rows, index_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

/// Throws the dimension_mismatch of a two-operand node: "WHAT: FIRST RxC, SECOND RxC (RULE)",
/// e.g. "sum: lhs is 3x4, rhs is 4x3 (shapes must be equal)". Out of line and cold, so that a
/// node's constructor holds one call instead of the message's string building: every node type
/// of a user's expressions has its own constructor, and their size is compile time.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_shapes(
    const char* what, const char* first, index_t first_rows, index_t first_cols, const char* second,
    index_t second_rows, index_t second_cols, const char* rule) {
  throw dimension_mismatch(std::string(what) + ": " + first + " " +
                           shape_text(first_rows, first_cols) + ", " + second + " " +
                           shape_text(second_rows, second_cols) + " (" + rule + ")");
}

/// lhs · rhs. Throws dimension_mismatch when lhs.cols() != rhs.rows().
template <class L, class R>
struct product {
  using is_spade_expression = void;
  using lhs_type = bare_t<L>;
  using rhs_type = bare_t<R>;
  using value_type = typename lhs_type::value_type;
  using space_type = typename lhs_type::space_type;

  L lhs;
  R rhs;

  template <class A, class B>
  product(A&& a, B&& b) : lhs(std::forward<A>(a)), rhs(std::forward<B>(b)) {
    if (cols_of(lhs) != rows_of(rhs))
      throw_shapes("product", "lhs is", rows_of(lhs), cols_of(lhs), "rhs is", rows_of(rhs),
                   cols_of(rhs), "lhs columns must equal rhs rows");
  }
  index_t rows() const { return rows_of(lhs); }
  index_t cols() const { return cols_of(rhs); }
};

/// lhs + rhs (a difference is lhs + (-1)·rhs). Throws dimension_mismatch unless shapes match.
template <class L, class R>
struct sum {
  using is_spade_expression = void;
  using lhs_type = bare_t<L>;
  using rhs_type = bare_t<R>;
  using value_type = typename lhs_type::value_type;
  using space_type = typename lhs_type::space_type;

  L lhs;
  R rhs;

  template <class A, class B>
  sum(A&& a, B&& b) : lhs(std::forward<A>(a)), rhs(std::forward<B>(b)) {
    if (rows_of(lhs) != rows_of(rhs) || cols_of(lhs) != cols_of(rhs))
      throw_shapes("sum", "lhs is", rows_of(lhs), cols_of(lhs), "rhs is", rows_of(rhs),
                   cols_of(rhs), "shapes must be equal");
  }
  index_t rows() const { return rows_of(lhs); }
  index_t cols() const { return cols_of(lhs); }
};

/// factor · inner.
template <class E>
struct scaled {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  value_type factor;
  E inner;

  template <class A>
  scaled(value_type s, A&& a) : factor(s), inner(std::forward<A>(a)) {}
  index_t rows() const { return rows_of(inner); }
  index_t cols() const { return cols_of(inner); }
};

/// innerᵀ.
template <class E>
struct transposed {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  E inner;

  template <class A>
  explicit transposed(A&& a) : inner(std::forward<A>(a)) {}
  index_t rows() const { return cols_of(inner); }
  index_t cols() const { return rows_of(inner); }
};

/// A dense matrix its user declares mostly zeros, seen as sparse: evaluates to the gcoo of
/// `inner` (dense → gcoo on inner's device, cached on inner), so products run gcoo_spmm.
template <class E>
struct sparse_view {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  E inner;

  template <class A>
  explicit sparse_view(A&& a) : inner(std::forward<A>(a)) {}
  index_t rows() const { return inner.rows(); }
  index_t cols() const { return inner.cols(); }
};

template <class X>
inline constexpr bool is_product_v = false;
template <class L, class R>
inline constexpr bool is_product_v<product<L, R>> = true;
template <class X>
inline constexpr bool is_sum_v = false;
template <class L, class R>
inline constexpr bool is_sum_v<sum<L, R>> = true;
template <class X>
inline constexpr bool is_scaled_v = false;
template <class E>
inline constexpr bool is_scaled_v<scaled<E>> = true;
template <class X>
inline constexpr bool is_transposed_v = false;
template <class E>
inline constexpr bool is_transposed_v<transposed<E>> = true;
template <class X>
inline constexpr bool is_sparse_view_v = false;
template <class E>
inline constexpr bool is_sparse_view_v<sparse_view<E>> = true;

}  // namespace spade::expr
