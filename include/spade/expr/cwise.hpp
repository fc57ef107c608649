// The element-wise nodes (unary functions, binary cwise operations, casts) and their operations.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/operand.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/traits.hpp"

namespace spade::expr {

/// The element-wise operations. Each names its user-facing function (for messages and
/// explain), says whether f(0) = 0 (so it may map the stored entries of a sparse operand), and
/// spells itself in CUDA C++ over the texts of its operands and of its scalar parameter `p`
/// (the fused kernel's source is made from these texts; the cpu back end has its own Eigen form
/// of each in cpu/cwise.hpp). spade_max/spade_min are the fused kernel's NaN-propagating max and
/// min (Eigen's PropagateNaN).
namespace ops {

struct abs_op {
  static constexpr const char* name = "abs";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string&) { return "fabs(" + a + ")"; }
};
struct sqrt_op {
  static constexpr const char* name = "sqrt";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string&) { return "sqrt(" + a + ")"; }
};
struct square_op {
  static constexpr const char* name = "square";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string&) {
    return "spade_square(" + a + ")";
  }
};
struct exp_op {
  static constexpr const char* name = "exp";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string&) { return "exp(" + a + ")"; }
};
struct log_op {
  static constexpr const char* name = "log";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string&) { return "log(" + a + ")"; }
};
struct sin_op {
  static constexpr const char* name = "sin";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string&) { return "sin(" + a + ")"; }
};
struct cos_op {
  static constexpr const char* name = "cos";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string&) { return "cos(" + a + ")"; }
};
struct tanh_op {
  static constexpr const char* name = "tanh";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string&) { return "tanh(" + a + ")"; }
};
struct inverse_op {
  static constexpr const char* name = "inverse";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string&) {
    return "spade_inverse(" + a + ")";
  }
};
/// pow(a, p): keeps zeros for p > 0 only, which the sparse path checks at run time.
struct pow_op {
  static constexpr const char* name = "pow";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "pow(" + a + ", " + p + ")";
  }
};
/// a + p (a − s is a + (−s), exactly the same in IEEE arithmetic).
struct add_scalar_op {
  static constexpr const char* name = "operator+ (array + scalar)";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "(" + a + " + " + p + ")";
  }
};
/// p − a.
struct scalar_minus_op {
  static constexpr const char* name = "operator- (scalar - array)";
  static constexpr bool keeps_zero = false;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "(" + p + " - " + a + ")";
  }
};
/// a / p (a true division, as Eigen computes it, not a product with 1/p).
struct divide_by_scalar_op {
  static constexpr const char* name = "operator/ (array / scalar)";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "(" + a + " / " + p + ")";
  }
};
/// max(a, p): keeps zeros for p ≤ 0 only (checked at run time on sparse operands).
struct max_scalar_op {
  static constexpr const char* name = "cwise_max";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "spade_max(" + a + ", " + p + ")";
  }
};
/// min(a, p): keeps zeros for p ≥ 0 only (checked at run time on sparse operands).
struct min_scalar_op {
  static constexpr const char* name = "cwise_min";
  static constexpr bool keeps_zero = true;
  static std::string cuda(const std::string& a, const std::string& p) {
    return "spade_min(" + a + ", " + p + ")";
  }
};

struct product_op {
  static constexpr const char* name = "cwise_product";
  static std::string cuda(const std::string& a, const std::string& b) {
    return "(" + a + " * " + b + ")";
  }
};
struct quotient_op {
  static constexpr const char* name = "cwise_quotient";
  static std::string cuda(const std::string& a, const std::string& b) {
    return "(" + a + " / " + b + ")";
  }
};
struct max_op {
  static constexpr const char* name = "cwise_max";
  static std::string cuda(const std::string& a, const std::string& b) {
    return "spade_max(" + a + ", " + b + ")";
  }
};
struct min_op {
  static constexpr const char* name = "cwise_min";
  static std::string cuda(const std::string& a, const std::string& b) {
    return "spade_min(" + a + ", " + b + ")";
  }
};

}  // namespace ops

/// op(inner) element by element, with the operation's scalar parameter (unused by most).
template <class Op, class E>
struct cwise_unary {
  using is_spade_expression = void;
  using op_type = Op;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  value_type param;
  E inner;

  template <class A>
  cwise_unary(value_type p, A&& a) : param(p), inner(std::forward<A>(a)) {}
  index_t rows() const { return rows_of(inner); }
  index_t cols() const { return cols_of(inner); }
};

/// op(lhs, rhs) element by element. Throws dimension_mismatch naming both shapes unless equal.
template <class Op, class L, class R>
struct cwise_binary {
  using is_spade_expression = void;
  using op_type = Op;
  using lhs_type = bare_t<L>;
  using rhs_type = bare_t<R>;
  using value_type = typename lhs_type::value_type;
  using space_type = typename lhs_type::space_type;

  L lhs;
  R rhs;

  template <class A, class B>
  cwise_binary(A&& a, B&& b) : lhs(std::forward<A>(a)), rhs(std::forward<B>(b)) {
    if (rows_of(lhs) != rows_of(rhs) || cols_of(lhs) != cols_of(rhs))
      throw_shapes(Op::name, "lhs is", rows_of(lhs), cols_of(lhs), "rhs is", rows_of(rhs),
                   cols_of(rhs), "shapes must be equal");
  }
  index_t rows() const { return rows_of(lhs); }
  index_t cols() const { return cols_of(lhs); }
};

/// inner with every value converted to U (spade::cast<U>).
template <class U, class E>
struct cast_node {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = U;
  using space_type = typename inner_type::space_type;

  E inner;

  template <class A>
  explicit cast_node(A&& a) : inner(std::forward<A>(a)) {}
  index_t rows() const { return rows_of(inner); }
  index_t cols() const { return cols_of(inner); }
};

/// Which way an axis sum runs: row_sums gives one value per row, col_sums one per column.
enum class axis { rows, cols };

/// row_sums(inner) (Axis rows) or col_sums(inner) (Axis cols): a vector, lazily. Of a sparse
/// operand, the sums of its stored entries.
template <axis Axis, class E>
struct axis_sum {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;
  static constexpr axis direction = Axis;

  E inner;

  template <class A>
  explicit axis_sum(A&& a) : inner(std::forward<A>(a)) {}
  index_t rows() const { return Axis == axis::rows ? rows_of(inner) : cols_of(inner); }
  index_t cols() const { return 1; }
};

/// diagonal(inner): the vector of inner's elements (i, i), i < min(rows, cols), lazily.
template <class E>
struct diagonal_of {
  using is_spade_expression = void;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  E inner;

  template <class A>
  explicit diagonal_of(A&& a) : inner(std::forward<A>(a)) {}
  index_t rows() const { return rows_of(inner) < cols_of(inner) ? rows_of(inner) : cols_of(inner); }
  index_t cols() const { return 1; }
};

/// as_diagonal(diag): the square matrix with diag on its diagonal, as an operand of products
/// (which scale rows or columns); evaluated alone, a csr.
template <class V>
struct diagonal_matrix {
  using is_spade_expression = void;
  using diag_type = bare_t<V>;
  using value_type = typename diag_type::value_type;
  using space_type = typename diag_type::space_type;

  V diag;

  template <class A>
  explicit diagonal_matrix(A&& a) : diag(std::forward<A>(a)) {}
  index_t rows() const { return rows_of(diag); }
  index_t cols() const { return rows_of(diag); }
};

/// Throws the dimension_mismatch of a diagonal scaling whose d does not fit A (out of line and
/// cold, as throw_shapes).
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_diagonal_mismatch(bool by_rows,
                                                                           index_t elements,
                                                                           index_t rows,
                                                                           index_t cols) {
  throw dimension_mismatch(
      std::string(by_rows ? "as_diagonal(d) * A: d has " : "A * as_diagonal(d): d has ") +
      std::to_string(elements) + " elements, A is " + shape_text(rows, cols) +
      (by_rows ? " (d needs one per row)" : " (d needs one per column)"));
}

/// as_diagonal(diag) · inner (Axis rows: row i scaled by diag[i]) or inner · as_diagonal(diag)
/// (Axis cols: column j scaled by diag[j]), element by element. Throws dimension_mismatch
/// naming both sizes unless they fit.
template <axis Axis, class V, class E>
struct diagonal_scaled {
  using is_spade_expression = void;
  using diag_type = bare_t<V>;
  using inner_type = bare_t<E>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;
  static constexpr axis direction = Axis;

  V diag;
  E inner;

  template <class A, class B>
  diagonal_scaled(A&& d, B&& e) : diag(std::forward<A>(d)), inner(std::forward<B>(e)) {
    const index_t fits = Axis == axis::rows ? rows_of(inner) : cols_of(inner);
    if (rows_of(diag) != fits)
      throw_diagonal_mismatch(Axis == axis::rows, rows_of(diag), rows_of(inner), cols_of(inner));
  }
  index_t rows() const { return rows_of(inner); }
  index_t cols() const { return cols_of(inner); }
};

/// cwise_product of a csr `inner` and a dense matrix: the csr's pattern, each stored value
/// times the dense element at its position.
template <class S, class D>
struct masked_product {
  using is_spade_expression = void;
  using inner_type = bare_t<S>;
  using dense_type = bare_t<D>;
  using value_type = typename inner_type::value_type;
  using space_type = typename inner_type::space_type;

  S inner;
  D dense;

  template <class A, class B>
  masked_product(A&& s, B&& d) : inner(std::forward<A>(s)), dense(std::forward<B>(d)) {
    if (rows_of(inner) != rows_of(dense) || cols_of(inner) != cols_of(dense))
      throw_shapes("cwise_product", "the sparse operand is", rows_of(inner), cols_of(inner),
                   "the dense one", rows_of(dense), cols_of(dense), "shapes must be equal");
  }
  index_t rows() const { return rows_of(inner); }
  index_t cols() const { return cols_of(inner); }
};

/// cwise_product of two sparse operands of one shape: the entries stored in both (the
/// intersection of the patterns), each the product of the two values; a csr.
template <class L, class R>
struct pattern_intersection {
  using is_spade_expression = void;
  using lhs_type = bare_t<L>;
  using rhs_type = bare_t<R>;
  using value_type = typename lhs_type::value_type;
  using space_type = typename lhs_type::space_type;

  L lhs;
  R rhs;

  template <class A, class B>
  pattern_intersection(A&& a, B&& b) : lhs(std::forward<A>(a)), rhs(std::forward<B>(b)) {
    if (rows_of(lhs) != rows_of(rhs) || cols_of(lhs) != cols_of(rhs))
      throw_shapes("cwise_product", "lhs is", rows_of(lhs), cols_of(lhs), "rhs is", rows_of(rhs),
                   cols_of(rhs), "shapes must be equal");
  }
  index_t rows() const { return rows_of(lhs); }
  index_t cols() const { return cols_of(lhs); }
};

template <class X>
inline constexpr bool is_pattern_intersection_v = false;
template <class L, class R>
inline constexpr bool is_pattern_intersection_v<pattern_intersection<L, R>> = true;

template <class X>
inline constexpr bool is_masked_product_v = false;
template <class S, class D>
inline constexpr bool is_masked_product_v<masked_product<S, D>> = true;

/// SDDMM: a masked product whose dense operand is a product of two dense matrices
/// (cwise_product(S, X * transpose(Y))). It has a plan of its own that samples the product at
/// S's entries and never forms it.
template <class X>
inline constexpr bool is_sddmm_v = false;
template <class S, class L, class R>
inline constexpr bool is_sddmm_v<masked_product<S, product<L, R>>> =
    is_dense_v<result_t<L>>&& is_dense_v<result_t<R>>;

template <class X>
inline constexpr bool is_diagonal_matrix_v = false;
template <class V>
inline constexpr bool is_diagonal_matrix_v<diagonal_matrix<V>> = true;
template <class X>
inline constexpr bool is_diagonal_scaled_v = false;
template <axis Axis, class V, class E>
inline constexpr bool is_diagonal_scaled_v<diagonal_scaled<Axis, V, E>> = true;

template <class X>
inline constexpr bool is_axis_sum_v = false;
template <axis Axis, class E>
inline constexpr bool is_axis_sum_v<axis_sum<Axis, E>> = true;
template <class X>
inline constexpr bool is_diagonal_of_v = false;
template <class E>
inline constexpr bool is_diagonal_of_v<diagonal_of<E>> = true;
/// The nodes that reduce a matrix expression to a vector (one pass over the fused tree below).
template <class X>
inline constexpr bool is_vector_reduction_v = is_axis_sum_v<X> || is_diagonal_of_v<X>;

template <class X>
inline constexpr bool is_cwise_unary_v = false;
template <class Op, class E>
inline constexpr bool is_cwise_unary_v<cwise_unary<Op, E>> = true;
template <class X>
inline constexpr bool is_cwise_binary_v = false;
template <class Op, class L, class R>
inline constexpr bool is_cwise_binary_v<cwise_binary<Op, L, R>> = true;
template <class X>
inline constexpr bool is_cast_v = false;
template <class U, class E>
inline constexpr bool is_cast_v<cast_node<U, E>> = true;

/// True for the element-wise nodes (the ones only a fused kernel or Eigen's arrays evaluate).
template <class X>
inline constexpr bool is_cwise_node_v =
    is_cwise_unary_v<X> || is_cwise_binary_v<X> || is_cast_v<X> || is_diagonal_scaled_v<X> ||
    is_masked_product_v<X>;

/// The storage type M with scalar U (a cast's result).
template <class M, class U>
struct with_scalar {
  using type = unsupported;
};
template <class T, class S, class L, class U>
struct with_scalar<dense<T, S, L>, U> {
  using type = dense<U, S, L>;
};
template <class T, class S, class U>
struct with_scalar<vector<T, S>, U> {
  using type = vector<U, S>;
};
template <class T, class S, class U>
struct with_scalar<csr<T, S>, U> {
  using type = csr<U, S>;
};
/// Other sparse formats: the csr of their entries (converted once, cached on the operand).
template <class M, class U>
requires(sparse_matrix<M> && !is_csr_v<M>) struct with_scalar<M, U> {
  using type = csr<U, typename M::space_type>;
};

/// What a chain that reads entry positions (a diagonal scaling, a product with a dense matrix)
/// gives: a dense result as it is, a sparse one as the csr of its entries.
template <class M>
using positioned_result_t =
    std::conditional_t<sparse_matrix<M>, csr<typename M::value_type, typename M::space_type>, M>;

template <class Op, class E>
struct result<cwise_unary<Op, E>> {
  using type = result_t<E>;  // a sparse operand keeps its format and pattern
};
template <class Op, class L, class R>
struct result<cwise_binary<Op, L, R>> {
  using type = typename sum_result<result_t<L>, result_t<R>>::type;
};
template <axis Axis, class E>
struct result<axis_sum<Axis, E>> {
  using type = vector<typename bare_t<E>::value_type, typename bare_t<E>::space_type>;
};
template <class E>
struct result<diagonal_of<E>> {
  using type = vector<typename bare_t<E>::value_type, typename bare_t<E>::space_type>;
};
template <class S, class D>
struct result<masked_product<S, D>> {
  using type = positioned_result_t<result_t<S>>;  // S's pattern, as a csr
};
template <class L, class R>
struct result<pattern_intersection<L, R>> {
  using type = csr<typename bare_t<L>::value_type, typename bare_t<L>::space_type>;
};
template <class V>
struct result<diagonal_matrix<V>> {
  using type = csr<typename bare_t<V>::value_type, typename bare_t<V>::space_type>;
};
template <axis Axis, class V, class E>
struct result<diagonal_scaled<Axis, V, E>> {
  using type = positioned_result_t<result_t<E>>;  // a sparse operand keeps its pattern (as csr)
};
template <class U, class E>
struct result<cast_node<U, E>> {
  using type = typename with_scalar<result_t<E>, U>::type;
};

/// True when an element-wise node appears anywhere in X (a tree the fused path evaluates).
template <class X>
constexpr bool contains_cwise() {
  if constexpr (is_cwise_node_v<X>) {
    return true;
  } else if constexpr (requires { typename X::is_spade_expression; }) {
    if constexpr (requires(const X& x) { x.lhs; })
      return contains_cwise<bare_t<decltype(X::lhs)>>() ||
             contains_cwise<bare_t<decltype(X::rhs)>>();
    else
      return contains_cwise<bare_t<decltype(X::inner)>>();
  } else {
    return false;
  }
}

}  // namespace spade::expr
