// Evaluation of element-wise trees: which nodes one fused pass takes, which run first, and the
// back-end hook (cpu: Eigen arrays; gpu: one NVRTC-compiled kernel) that evaluates the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/expr/view.hpp"
#include "spade/formats/convert.hpp"

namespace spade {

template <class E>
expr::result_t<E> eval(const E& e);

namespace detail {

/// Element-wise evaluation of one space: cpu/cwise.hpp and device/cwise.hpp specialise it with
/// `assign(dest, e)` (a dense or vector destination, shaped after the inputs are evaluated),
/// `map_values(result, e, input)` (the stored values of a sparse result from the chain over the
/// base's values `input`, which may be result's own; its pattern gives each entry's row and
/// column), `reduce<Square>(kind, e)` and
/// `reduce_values<Square>(kind, values, e)` (Square: of the squared values). Named through the
/// space type, so it is found after <spade/spade.hpp> declared both.
template <class Space>
struct cwise_backend {
  static_assert(sizeof(Space) == 0,
                "spade: no back end evaluates element-wise expressions in this space; include "
                "<spade/spade.hpp>");
};

/// The reductions a fused pass ends in.
enum class reduction { sum, max, min };

/// Nodes one fused pass evaluates itself on dense and vector operands: the element-wise ones,
/// sums, scalings and views (read in place through their stride). Anything else under them (a
/// product, a transpose, a sparse view) is a fused input, evaluated first into a temporary by
/// its own plan.
template <class X>
inline constexpr bool fused_interior_v =
    expr::is_cwise_node_v<X> || expr::is_sum_v<X> || expr::is_scaled_v<X> || expr::is_view_v<X>;

/// True when a fused pass over X evaluates an element-wise node itself (one reachable from the
/// top through sums and scalings), so that assignment takes the fused path rather than the
/// product and sum plans. For a sparse X, through scalings and unary operations only.
template <bool Values, class X>
constexpr bool fuses_cwise() {
  if constexpr (expr::is_view_v<X>) {
    return !Values;  // a view alone (a strided copy) or under a sum: the fused pass reads it
  } else if constexpr (expr::is_cwise_node_v<X>) {
    return !Values || expr::is_cwise_unary_v<X> || expr::is_diagonal_scaled_v<X> ||
           expr::is_masked_product_v<X> || expr::is_cast_v<X>;
  } else if constexpr (expr::is_scaled_v<X>) {
    return fuses_cwise<Values, expr::bare_t<decltype(X::inner)>>();
  } else if constexpr (expr::is_sum_v<X> && !Values) {
    return fuses_cwise<Values, expr::bare_t<decltype(X::lhs)>>() ||
           fuses_cwise<Values, expr::bare_t<decltype(X::rhs)>>();
  } else {
    return false;
  }
}

/// On a sparse result, a fused pass maps the stored values through a chain of unary
/// operations and scalings over one sparse base, which is evaluated first when it is not a
/// storage operand.
template <class X>
inline constexpr bool values_interior_v = expr::is_cwise_unary_v<X> || expr::is_scaled_v<X> ||
                                          expr::is_diagonal_scaled_v<X> || expr::is_cast_v<X> ||
                                          (expr::is_masked_product_v<X> && !expr::is_sddmm_v<X>);

/// True when a values chain scales by a diagonal or multiplies by a dense matrix: its entries
/// need their row and column, so the pass runs over the csr pattern (and a reduction of it
/// evaluates the chain first).
template <class X>
constexpr bool reads_entry_positions() {
  if constexpr (expr::is_diagonal_scaled_v<X> ||
                (expr::is_masked_product_v<X> && !expr::is_sddmm_v<X>))
    return true;
  else if constexpr (values_interior_v<X>)
    return reads_entry_positions<expr::bare_t<decltype(X::inner)>>();
  else
    return false;
}

/// The temporaries a fused pass reads (products and other nested plans, evaluated first). Kept
/// alive until the pass has been launched and its inputs are no longer needed.
class fused_temporaries {
 public:
  template <class M>
  const M& hold(M&& m) {
    auto owned = std::make_shared<std::remove_cvref_t<M>>(std::forward<M>(m));
    const auto& ref = *owned;
    held_.push_back(std::move(owned));
    return ref;
  }

 private:
  std::vector<std::shared_ptr<const void>> held_;
};

/// `x` itself when it is a storage operand; otherwise its evaluation, held by `temporaries`.
template <class X>
const auto& fused_input(const X& x, fused_temporaries& temporaries) {
  if constexpr (matrix_or_vector<X>)
    return x;
  else
    return temporaries.hold(spade::eval(x));
}

/// The sparse base under a values-only chain (scalings and zero-keeping unary operations) whose
/// result is R: the base itself, or its csr form, converted once and cached on it, when R is a
/// csr and the base another format (a cast, a diagonal scaling or a product with a dense matrix
/// of a coo, gcoo, ellr or tiled operand) and for every coo: a coo may repeat an entry, and
/// abs, max_coeff or squared_norm of the repeats is not that of their sum, so the conversion
/// sums them first and the chain sees each entry of the matrix once.
template <class R, class X>
const auto& values_base(const X& x, fused_temporaries& temporaries) {
  if constexpr (values_interior_v<X>) {
    return values_base<R>(x.inner, temporaries);
  } else {
    const auto& leaf = fused_input(x, temporaries);
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (sparse_matrix<L> && !is_csr_v<L> && (is_csr_v<R> || is_coo_v<L>))
      return cached_convert<csr<typename L::value_type, typename L::space_type>>(leaf);
    else
      return leaf;
  }
}

/// Throws spade::error when a scalar parameter makes a zero-keeping operation fill the zeros of
/// a sparse operand (pow with p ≤ 0, cwise_max with p > 0, cwise_min with p < 0).
template <class X>
void check_keeps_zero(const X& x) {
  if constexpr (expr::is_cwise_unary_v<X>) {
    using op = typename X::op_type;
    using T = typename X::value_type;
    const bool fills = (std::is_same_v<op, expr::ops::pow_op> && !(x.param > T(0))) ||
                       (std::is_same_v<op, expr::ops::max_scalar_op> && !(x.param <= T(0))) ||
                       (std::is_same_v<op, expr::ops::min_scalar_op> && !(x.param >= T(0)));
    if (fills)
      throw error(std::string("spade::") + op::name + " with the scalar " +
                  std::to_string(x.param) +
                  " maps 0 to a nonzero, so on a sparse operand it would fill every unstored "
                  "entry; convert the operand to spade::dense first");
    check_keeps_zero(x.inner);
  } else if constexpr (expr::is_scaled_v<X> || expr::is_diagonal_scaled_v<X> ||
                       expr::is_masked_product_v<X> || expr::is_cast_v<X>) {
    check_keeps_zero(x.inner);
  }
}

/// True when f(leaf) holds for a storage operand or view that a fused pass over x reads in
/// place. Nested plans (products, transposes) are evaluated into temporaries before the pass
/// writes anything, so their operands are not visited.
template <class X, class F>
bool any_fused_leaf(const X& x, const F& f) {
  if constexpr (matrix_or_vector<X> || expr::is_view_v<X>) {
    return f(x);
  } else if constexpr (!fused_interior_v<X>) {
    return false;
  } else if constexpr (requires { x.lhs; }) {
    return any_fused_leaf(x.lhs, f) || any_fused_leaf(x.rhs, f);
  } else if constexpr (requires { x.diag; }) {
    return any_fused_leaf(x.diag, f) || any_fused_leaf(x.inner, f);
  } else if constexpr (requires { x.dense; }) {
    return any_fused_leaf(x.dense, f) || any_fused_leaf(x.inner, f);
  } else {
    return any_fused_leaf(x.inner, f);
  }
}

/// True when a fused pass writing the window `dest` would read, through leaf `x`, an element
/// of dest's base that it writes at another position (or has already written): an expression
/// that reads the window itself at the same positions is safe, any other overlap is not.
template <class View, class X>
bool overlaps_destination(const View& dest, const X& x) {
  const void* base = dest.base_values().data();
  if (base == nullptr) return false;
  if constexpr (expr::is_view_v<X>) {
    if (static_cast<const void*>(x.base_values().data()) != base) return false;
    if constexpr (std::is_same_v<typename X::result_type, typename View::result_type>)
      if (x.offset == dest.offset && x.stride == dest.stride) return false;  // the same elements
    const auto [first, last] = x.span();
    const auto [dest_first, dest_last] = dest.span();
    return first < dest_last && dest_first < last;
  } else {
    return static_cast<const void*>(x.values().data()) == base;
  }
}

/// True when an expression of type E may be written into a view evaluating to Result;
/// otherwise the first rule it breaks fails one static_assert.
template <class Result, class E>
constexpr bool view_assignable() {
  using R = expr::result_t<E>;
  constexpr bool dense_source = !sparse_matrix<R>;
  constexpr bool same_scalar = std::is_same_v<typename Result::value_type, typename E::value_type>;
  constexpr bool same_space = std::is_same_v<typename Result::space_type, typename E::space_type>;
  constexpr bool same_kind = is_vector_v<Result> == is_vector_v<R>;
  if constexpr (!dense_source) {
    static_assert(dense_source,
                  "spade: a view of a dense matrix or vector takes a dense or vector expression; "
                  "convert a sparse one with spade::convert<spade::dense<...>> first");
  } else if constexpr (!same_scalar) {
    static_assert(same_scalar,
                  "spade: view assignment: the view's scalar type differs from the expression's; "
                  "convert explicitly");
  } else if constexpr (!same_space) {
    static_assert(same_space,
                  "spade: view assignment: the view lives in another space than the expression; "
                  "use spade::to_gpu / spade::to_cpu on the expression");
  } else {
    static_assert(same_kind,
                  "spade: view assignment: a vector expression goes into a row, col, segment, "
                  "head or tail, a matrix expression into a block");
  }
  return dense_source && same_scalar && same_space && same_kind;
}

/// dest = e for a view destination: e's elements written into the window in place (one fused
/// pass; a nested plan such as a product evaluated into a temporary first). An expression that
/// reads the window's base at other positions is evaluated into a temporary first.
template <class View, class E>
void assign_view(const View& dest, const E& e) {
  using R = expr::result_t<E>;
  using Result = typename View::result_type;
  if constexpr (view_assignable<Result, E>()) {
    if (expr::rows_of(e) != dest.rows() || expr::cols_of(e) != dest.cols())
      throw dimension_mismatch(dest.name + " = e: the view is " +
                               expr::shape_text(dest.rows(), dest.cols()) + ", the expression " +
                               expr::shape_text(expr::rows_of(e), expr::cols_of(e)) +
                               " (shapes must be equal)");
    using backend = cwise_backend<typename Result::space_type>;
    if (any_fused_leaf(e, [&](const auto& leaf) { return overlaps_destination(dest, leaf); })) {
      const R temporary = spade::eval(e);
      backend::assign_view(dest, temporary);
    } else {
      backend::assign_view(dest, e);
    }
  }
}

/// dest = e for a tree with element-wise nodes: one fused pass over its inputs (dense or
/// vector destination), or a values-only map of a sparse result that keeps its pattern.
template <class Dest, class E>
void assign_cwise(Dest& dest, const E& e) {
  using backend = cwise_backend<typename Dest::space_type>;
  if constexpr (sparse_matrix<Dest>) {
    using R = expr::result_t<E>;
    check_keeps_zero(e);
    fused_temporaries temporaries;
    const auto& base = values_base<R>(e, temporaries);
    using B = std::remove_cvref_t<decltype(base)>;
    R result = [&] {
      if constexpr (std::is_same_v<R, B>) {
        return R(base);  // the pattern, and the values the pass overwrites in place
      } else if constexpr (std::is_same_v<typename R::value_type, typename B::value_type>) {
        return convert<R>(base);  // a coo result from the csr of its entries, in its order
      } else {
        // A cast in the chain: the pattern copied, values of the new type written from base's.
        using S = typename R::space_type;
        return R(unchecked, base.rows(), base.cols(), storage<index_t, S>(base.row_ptr()),
                 storage<index_t, S>(base.col_idx()),
                 storage<typename R::value_type, S>(base.values().size()));
      }
    }();
    backend::map_values(result, e, base.values());
    if constexpr (std::is_same_v<Dest, R>)
      dest = std::move(result);
    else
      dest = convert<Dest>(result);
  } else {
    // Element-wise passes read each input at the element they write, so a destination that is
    // also an input (x = x + y, x = cwise_product(x, x)) needs no temporary. The back end
    // evaluates nested plans (x = exp(A*x)) before it shapes the destination. A view of the
    // destination reads other positions (and reshaping may free them): through a temporary.
    const void* target = std::as_const(dest).values().data();
    const bool views_destination =
        target && any_fused_leaf(e, [&](const auto& leaf) {
          if constexpr (expr::is_view_v<expr::bare_t<decltype(leaf)>>)
            return static_cast<const void*>(leaf.base_values().data()) == target;
          else
            return false;
        });
    if (views_destination) {
      const expr::result_t<E> temporary = spade::eval(e);
      backend::assign(dest, temporary);
    } else {
      backend::assign(dest, e);
    }
  }
}

/// dest = cwise_product(S, op(A)·op(B)) (SDDMM, its own plan): op(A)·op(B) sampled at S's
/// entries, never formed. S in csr form (its conversion cached), A and B dense (nested plans
/// evaluated first; scalings folded into alpha, transposes into op flags). Forced: the kernel
/// eval<K> named, else the back end's choice.
template <class Forced, class Dest, class E>
void assign_sddmm(Dest& dest, const E& e) {
  using R = expr::result_t<E>;
  using T = typename R::value_type;
  using rowwise_type = csr<T, typename R::space_type>;
  using backend = cwise_backend<typename R::space_type>;
  fused_temporaries temporaries;
  const auto& s = cached_convert<rowwise_type>(fused_input(e.inner, temporaries));
  with_operand(e.dense.lhs, [&](const auto& a, bool ta, T sa) {
    return with_operand(e.dense.rhs, [&](const auto& b, bool tb, T sb) {
      rowwise_type result = backend::template sddmm<Forced>(sa * sb, s, a, ta, b, tb);
      if constexpr (std::is_same_v<Dest, rowwise_type>)
        dest = std::move(result);
      else
        dest = convert<Dest>(result);
      return 0;
    });
  });
}

/// dest = cwise_product(A, B) of two sparse operands: both in csr form (conversions cached on
/// them; nested plans evaluated first), then the back end's intersection of their patterns.
template <class Dest, class E>
void assign_intersection(Dest& dest, const E& e) {
  using R = expr::result_t<E>;
  using backend = cwise_backend<typename R::space_type>;
  fused_temporaries temporaries;
  const auto& a = cached_convert<R>(fused_input(e.lhs, temporaries));
  const auto& b = cached_convert<R>(fused_input(e.rhs, temporaries));
  R result = backend::intersect(a, b);
  if constexpr (std::is_same_v<Dest, R>)
    dest = std::move(result);
  else
    dest = convert<Dest>(result);
}

/// The csr with as_diagonal(v)'s vector on its diagonal (v evaluated first when it is an
/// expression).
template <class V>
auto diagonal_csr(const expr::diagonal_matrix<V>& d) {
  using M = expr::result_t<V>;
  using T = typename M::value_type;
  using S = typename M::space_type;
  fused_temporaries temporaries;
  const M& v = fused_input(d.diag, temporaries);
  const index_t n = v.size();
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1),
      col_idx(static_cast<std::size_t>(n));
  for (index_t i = 0; i <= n; ++i)
    row_ptr[static_cast<std::size_t>(i)] = i;
  for (index_t i = 0; i < n; ++i)
    col_idx[static_cast<std::size_t>(i)] = i;
  return csr<T, S>(unchecked, n, n, storage<index_t, S>(std::move(row_ptr)),
                   storage<index_t, S>(std::move(col_idx)), storage<T, S>(v.values()));
}

/// dest = row_sums(x), col_sums(x) or diagonal(x): one pass over x's fused tree (dense x), or
/// over the stored values of x's sparse base in csr form (its conversion and, for col_sums, its
/// transpose cached on the base).
template <class Dest, class E>
void assign_vector_reduction(Dest& dest, const E& e) {
  using X = expr::bare_t<decltype(e.inner)>;
  using R = expr::result_t<X>;
  using backend = cwise_backend<typename Dest::space_type>;
  if constexpr (sparse_matrix<R>) {
    check_keeps_zero(e.inner);
    fused_temporaries temporaries;
    const auto& base = values_base<R>(e.inner, temporaries);
    // The base's own scalar type (a cast in the chain converts each value as it is read).
    using rowwise_type =
        csr<typename std::remove_cvref_t<decltype(base)>::value_type, typename R::space_type>;
    const auto& rowwise = cached_convert<rowwise_type>(base);
    if constexpr (expr::is_diagonal_of_v<E>)
      backend::sparse_diagonal(dest, e.inner, rowwise);
    else if constexpr (E::direction == expr::axis::rows)
      backend::sparse_row_sums(dest, e.inner, rowwise);
    else
      backend::sparse_row_sums(dest, e.inner, cached_transpose(rowwise));
  } else {
    backend::dense_vector_reduction(dest, e);
  }
}

/// The reduction of an expression over multi_gpu operands: each part's, combined over the
/// cluster (spade/multi/distributed.hpp).
template <bool Square, class E>
typename E::value_type distributed_reduce(reduction kind, const E& e, const char* what,
                                          std::int64_t* count);

/// Reduces an element-wise expression (or a storage operand) to one value in one pass; with
/// Square, the sum of the squared values.
/// `count` (if given) receives the number of values reduced (a sparse operand's stored entries).
template <bool Square, class E>
typename E::value_type reduce_cwise(reduction kind, const E& e, const char* what,
                                    std::int64_t* count = nullptr) {
  using R = expr::result_t<E>;
  if constexpr (std::is_same_v<typename E::space_type, multi_gpu>) {
    return distributed_reduce<Square>(kind, e, what, count);
  } else if constexpr (sparse_matrix<R>) {
    using backend = cwise_backend<typename E::space_type>;
    if constexpr (reads_entry_positions<E>()) {
      // The scaled values first (one pass over the pattern), then their reduction.
      const R scaled = spade::eval(e);
      return reduce_cwise<Square>(kind, scaled, what, count);
    } else {
      check_keeps_zero(e);
      fused_temporaries temporaries;
      // Over the csr form of any other format: an ellr's padding and a coo's repeats are not
      // entries, and max, min, mean and the count must not see them.
      using rowwise_type = csr<typename R::value_type, typename R::space_type>;
      const auto& base = values_base<rowwise_type>(e, temporaries);
      if (count) *count = static_cast<std::int64_t>(base.values().size());
      if (kind != reduction::sum && base.values().size() == 0)
        throw dimension_mismatch(std::string(what) + ": the sparse operand stores no entries");
      return backend::template reduce_values<Square>(kind, base.values(), e);
    }
  } else {
    using backend = cwise_backend<typename E::space_type>;
    const std::int64_t n = std::int64_t{expr::rows_of(e)} * expr::cols_of(e);
    if (count) *count = n;
    if (kind != reduction::sum && n == 0)
      throw dimension_mismatch(std::string(what) + ": the expression has no elements");
    return backend::template reduce<Square>(kind, e);
  }
}

}  // namespace detail

}  // namespace spade
