// Evaluation of expressions: assignment, eval, eval<K>, fused α/β forms, aliasing, reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/eval/cwise.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/eval/run_steps.hpp"
#include "spade/eval/select.hpp"
#include "spade/expr/cwise_operators.hpp"
#include "spade/expr/operators.hpp"
#include "spade/expr/view.hpp"
#include "spade/formats/transfer.hpp"
#include "spade/plan/kernels.hpp"
#include "spade/plan/rule_table.hpp"

namespace spade {

namespace detail {

template <class Forced, class Dest, class E>
void evaluate_into(Dest& dest, const E& e, typename Dest::value_type alpha,
                   typename Dest::value_type beta);

// The run-time choice and run of a product or sum of storage operands are named templates of
// the operands' types and the plan, not lambdas inside the expression's own evaluation: every
// expression over the same operands (a*d, 2*(a*d) + c, eval<K>(a*d), ...) then shares one
// instantiation of the candidates' decisions and runs, which is most of what a user file
// compiles (bench/compile_time.sh).

/// dest = scale·op(a)·op(b) (+ beta·dest for a dense or vector dest), dest shaped rows×cols.
template <class Rule, class Forced, class Candidates, class Dest, class A, class B>
void planned_product(Dest& dest, index_t rows, index_t cols, typename Dest::value_type scale,
                     const A& a, bool ta, const B& b, bool tb, typename Dest::value_type beta) {
  const operation_facts facts{ta, tb, is_col_major_v<Dest>};
  select_candidate<Rule, Forced>(Candidates{}, a, b, facts, [&](auto candidate) {
    if constexpr (sparse_matrix<Dest>) {
      dest = run_sparse_product_steps(candidate, scale, a, ta, b, tb);
    } else {
      shape_destination(dest, rows, cols);
      run_product_steps(candidate, scale, a, ta, b, tb, beta, dest);
    }
  });
}

/// dest = sx·op(x) + sy·op(y), dest shaped rows×cols.
template <class Rule, class Forced, class Candidates, class Dest, class X, class Y>
void planned_sum(Dest& dest, index_t rows, index_t cols, typename Dest::value_type sx, const X& x,
                 bool tx, typename Dest::value_type sy, const Y& y, bool ty) {
  select_candidate<Rule, Forced>(Candidates{}, x, y, operation_facts{tx, ty, is_col_major_v<Dest>},
                                 [&](auto candidate) {
                                   if constexpr (sparse_matrix<Dest>) {
                                     dest = run_sparse_sum_steps(candidate, sx, x, tx, sy, y, ty);
                                   } else {
                                     // GEAM and axpby read their inputs before writing: dest may be
                                     // an operand.
                                     shape_destination(dest, rows, cols);
                                     run_sum_steps(candidate, sx, x, tx, sy, y, ty, dest);
                                   }
                                 });
}

template <class Forced, class Dest, class L, class R>
void evaluate_product(Dest& dest, const expr::product<L, R>& e, typename Dest::value_type alpha,
                      typename Dest::value_type beta) {
  using T = typename Dest::value_type;
  using plan_type = plan_of<expr::product<L, R>>;
  if constexpr (std::is_void_v<Forced> && strided_product<expr::bare_t<L>, expr::bare_t<R>>()) {
    // A block times a vector: GEMV reads the block in place through its leading dimension; a
    // strided x (a row or column across the layout) is copied first, GEMV reading it faster so.
    const auto a = strided_part_of(e.lhs);
    const auto b = strided_part_of(e.rhs);
    // Dependent on Dest, so the back end's runner is looked up where the product is evaluated.
    using gemv = runner<std::conditional_t<is_vector_v<Dest>, kernels::cublas_gemv, void>>;
    shape_destination(dest, e.rows(), e.cols());
    if (b.operand.ld == 1) {
      gemv::product(alpha * a.scale * b.scale, a.operand, a.transposed, b.operand, false, beta,
                    dest);
    } else {
      const expr::result_t<R> x = spade::eval(e.rhs);
      gemv::product(alpha * a.scale, a.operand, a.transposed, strided_part_of(x).operand, false,
                    beta, dest);
    }
  } else {
    const index_t rows = e.rows();
    const index_t cols = e.cols();
    with_operand(e.lhs, [&](const auto& a, bool ta, T sa) {
      return with_operand(e.rhs, [&](const auto& b, bool tb, T sb) {
        planned_product<typename plan_type::rule, Forced, typename plan_type::candidates>(
            dest, rows, cols, alpha * sa * sb, a, ta, b, tb, beta);
        return 0;
      });
    });
  }
}

template <class Forced, class Dest, class L, class R>
void evaluate_sum(Dest& dest, const expr::sum<L, R>& e, typename Dest::value_type alpha) {
  using T = typename Dest::value_type;
  using plan_type = plan_of<expr::sum<L, R>>;
  const index_t rows = e.rows();
  const index_t cols = e.cols();
  with_operand(e.lhs, [&](const auto& x, bool tx, T sx) {
    return with_operand(e.rhs, [&](const auto& y, bool ty, T sy) {
      planned_sum<typename plan_type::rule, Forced, typename plan_type::candidates>(
          dest, rows, cols, alpha * sx, x, tx, alpha * sy, y, ty);
      return 0;
    });
  });
}

/// values *= s in place (cuBLAS SCAL on the gpu).
template <class M>
void scale_values(M& m, typename M::value_type s) {
  using T = typename M::value_type;
  if (s == T(1)) return;
  auto& values = m.values();
  vector_kernels<typename M::space_type>::scale(s, values.data(),
                                                static_cast<std::int64_t>(values.size()));
}

/// dest (of the natural result type) = alpha · e, plus beta · dest for products (fused form).
template <class Forced, class Dest, class E>
void evaluate_into(Dest& dest, const E& e, typename Dest::value_type alpha,
                   typename Dest::value_type beta) {
  if constexpr (expr::is_product_v<E>) {
    evaluate_product<Forced>(dest, e, alpha, beta);
  } else if constexpr (expr::is_sum_v<E>) {
    evaluate_sum<Forced>(dest, e, alpha);
  } else if constexpr (expr::is_scaled_v<E>) {
    evaluate_into<Forced>(dest, e.inner, alpha * e.factor, beta);
  } else if constexpr (expr::is_sparse_view_v<E>) {
    dest = viewed_gcoo(e);  // a copy: the cached conversion stays with the dense operand
    scale_values(dest, alpha);
  } else if constexpr (expr::is_transposed_v<E>) {
    with_operand(e.inner, [&](const auto& m, bool transposed, typename Dest::value_type s) {
      dest = transposed ? m : cached_transpose(m);
      scale_values(dest, alpha * s);
      return 0;
    });
  } else {
    dest = e;
    scale_values(dest, alpha);
  }
}

/// Matches `a·(A·B) + b·X` (either order, either factor omitted) where X is a storage leaf of
/// type Dest: the α/β form a single GEMM/GEMV/SpMM/SpMV call computes in place.
template <class X>
struct product_part {
  static constexpr bool value = false;
};
template <class L, class R>
struct product_part<expr::product<L, R>> {
  static constexpr bool value = true;
  template <class E>
  static const auto& product(const E& e) {
    return e;
  }
  template <class E>
  static auto factor(const E&) {
    return typename E::value_type(1);
  }
};
template <class L, class R>
struct product_part<expr::scaled<expr::product<L, R>>> {
  static constexpr bool value = true;
  template <class E>
  static const auto& product(const E& e) {
    return e.inner;
  }
  template <class E>
  static auto factor(const E& e) {
    return e.factor;
  }
};

template <class Dest, class X>
const Dest* addend_leaf(const X& x, typename Dest::value_type* factor) {
  if constexpr (std::is_same_v<X, Dest>) {
    *factor = 1;
    return &x;
  } else if constexpr (expr::is_scaled_v<X>) {
    if constexpr (std::is_same_v<expr::bare_t<decltype(x.inner)>, Dest>) {
      *factor = x.factor;
      return &x.inner;
    }
  }
  return nullptr;
}

/// Runs the fused form when `e` has it and its addend is `dest`; false otherwise.
template <class Forced, class Dest, class E>
bool try_fused(Dest& dest, const E& e) {
  if constexpr (expr::is_sum_v<E> && !sparse_matrix<Dest>) {
    using L = expr::bare_t<decltype(e.lhs)>;
    using R = expr::bare_t<decltype(e.rhs)>;
    typename Dest::value_type beta = 0;
    if constexpr (product_part<L>::value) {
      const Dest* leaf = addend_leaf<Dest>(e.rhs, &beta);
      const auto& p = product_part<L>::product(e.lhs);
      if (leaf == &dest && !refers_to(p, data_of(dest))) {
        evaluate_product<Forced>(dest, p, product_part<L>::factor(e.lhs), beta);
        return true;
      }
    }
    if constexpr (product_part<R>::value) {
      const Dest* leaf = addend_leaf<Dest>(e.lhs, &beta);
      const auto& p = product_part<R>::product(e.rhs);
      if (leaf == &dest && !refers_to(p, data_of(dest))) {
        evaluate_product<Forced>(dest, p, product_part<R>::factor(e.rhs), beta);
        return true;
      }
    }
  }
  return false;
}

/// True when an expression of type E may be assigned to Dest. Otherwise the first rule it
/// breaks fails one static_assert, and assign instantiates nothing more (no error cascade).
template <class Dest, class E>
constexpr bool check_assignable() {
  using R = expr::result_t<E>;
  constexpr bool same_scalar = std::is_same_v<typename Dest::value_type, typename R::value_type>;
  constexpr bool same_space = std::is_same_v<typename Dest::space_type, typename R::space_type>;
  constexpr bool same_kind = is_vector_v<Dest> == is_vector_v<R>;
  if constexpr (!same_scalar) {
    static_assert(same_scalar,
                  "spade: assignment: the destination's scalar type differs from the "
                  "expression's; convert explicitly");
  } else if constexpr (!same_space) {
    static_assert(same_space,
                  "spade: assignment: the destination lives in another space than the "
                  "expression; use spade::to_gpu / spade::to_cpu on the result");
  } else {
    static_assert(same_kind,
                  "spade: assignment: a vector expression goes into a spade::vector, a matrix "
                  "expression into a matrix");
  }
  return same_scalar && same_space && same_kind;
}

/// The csr of rows first … first + count − 1 of e's matrix: their entries copied, their row
/// pointers rebased to start at 0 (on the device: two reads of row pointers, three copies).
template <class C>
C slice_rows(const expr::row_range<C>& e) {
  using T = typename C::value_type;
  using S = typename C::space_type;
  const C& a = *e.matrix;
  const auto rows = static_cast<std::size_t>(e.count);
  const auto first = static_cast<std::size_t>(e.first);
  std::vector<index_t> row_ptr(rows + 1, 0);
  if constexpr (std::is_same_v<S, cpu>) {
    if (a.row_ptr().size() > first + rows)
      std::copy_n(a.row_ptr().data() + first, rows + 1, row_ptr.begin());
  } else {
    if (a.row_ptr().size() > first + rows)
      a.row_ptr().owner()->copy_to_host(row_ptr.data(), a.row_ptr().data() + first,
                                        (rows + 1) * sizeof(index_t));
  }
  const index_t begin = row_ptr.front();
  for (auto& p : row_ptr)
    p -= begin;
  const auto nnz = static_cast<std::size_t>(row_ptr.back());
  const auto offset = static_cast<std::size_t>(begin);
  if constexpr (std::is_same_v<S, cpu>) {
    std::vector<index_t> col_idx(a.col_idx().begin() + static_cast<std::ptrdiff_t>(offset),
                                 a.col_idx().begin() + static_cast<std::ptrdiff_t>(offset + nnz));
    std::vector<T> values(a.values().begin() + static_cast<std::ptrdiff_t>(offset),
                          a.values().begin() + static_cast<std::ptrdiff_t>(offset + nnz));
    return C(unchecked, e.count, a.cols(), std::move(row_ptr), std::move(col_idx),
             std::move(values));
  } else {
    context& ctx = a.row_ptr().owner() ? *a.row_ptr().owner() : default_context();
    device_buffer<index_t> col_idx(nnz, ctx);
    device_buffer<T> values(nnz, ctx);
    if (nnz) {
      ctx.copy_on_device(col_idx.data(), a.col_idx().data() + offset, nnz * sizeof(index_t));
      ctx.copy_on_device(values.data(), a.values().data() + offset, nnz * sizeof(T));
    }
    device_buffer<index_t> pointers(rows + 1, ctx);
    ctx.copy_to_device(pointers.data(), row_ptr.data(), (rows + 1) * sizeof(index_t));
    return C(unchecked, e.count, a.cols(), std::move(pointers), std::move(col_idx),
             std::move(values));
  }
}

template <class Forced, class Dest, class E>
void assign(Dest& dest, const E& e) {
  using R = expr::result_t<E>;
  if constexpr (check_assignable<Dest, E>()) {
    if constexpr (reduced_precision<typename R::value_type>) {
      // A half or bfloat16 result comes from casts and views only: one fused pass.
      assign_cwise(dest, e);
    } else {
      if constexpr (expr::is_row_range_v<E>) {
        if constexpr (std::is_same_v<Dest, R>)
          dest = slice_rows(e);  // a read-only row range: the csr of those rows
        else
          dest = convert<Dest>(slice_rows(e));
        return;
      }
      if constexpr (expr::is_diagonal_matrix_v<E>) {
        dest = diagonal_csr(e);  // as_diagonal(v) alone: the csr with v on its diagonal
        return;
      }
      if constexpr (expr::is_vector_reduction_v<E>) {
        assign_vector_reduction(dest, e);  // row_sums, col_sums, diagonal: one pass
        return;
      }
      if constexpr (expr::is_pattern_intersection_v<E>) {
        assign_intersection(dest, e);  // two sparse operands: the entries stored in both
        return;
      }
      if constexpr (expr::is_sddmm_v<E>) {
        assign_sddmm<Forced>(dest, e);  // sampled at S's entries, never forming X·Yᵀ
        return;
      }
      if constexpr (fuses_cwise<sparse_matrix<R>, E>() && std::is_void_v<Forced>) {
        assign_cwise(dest, e);  // one fused element-wise pass (or a values-only map)
        return;
      }
      if (try_fused<Forced>(dest, e)) return;
      if constexpr (std::is_same_v<Dest, R>) {
        if (!refers_to(e, data_of(dest))) {
          evaluate_into<Forced>(dest, e, typename R::value_type(1), typename R::value_type(0));
          return;
        }
      }
      // Aliasing (C = C·A) or a destination of another format: through a temporary.
      R temporary;
      evaluate_into<Forced>(temporary, e, typename R::value_type(1), typename R::value_type(0));
      if constexpr (std::is_same_v<Dest, R>) {
        dest = std::move(temporary);
      } else {
        dest = convert<Dest>(temporary);
      }
    }
  }
}

}  // namespace detail

/// Evaluates `e` into `dest` (what `dest = e` and `Dest dest = e` call). Storage is reused
/// when the shape fits; `C = a*(A*B) + b*C` and `y = a*(A*x) + b*y` are one kernel call; an
/// expression that reads `dest` goes through a temporary.
template <class Dest, expression E>
void assign_expression(Dest& dest, const E& e) {
  detail::assign<void>(dest, e);
}

/// Evaluates `e` into its natural result type (a storage type evaluates to a copy of itself).
template <class E>
expr::result_t<E> eval(const E& e) {
  expr::result_t<E> result;
  if constexpr (matrix_or_vector<E> ||
                std::is_same_v<typename expr::result_t<E>::space_type, multi_gpu>) {
    result = e;  // a copy, or a multi_gpu object's own evaluation (spade/multi)
  } else {
    detail::assign<void>(result, e);
  }
  return result;
}

/// Evaluates `e` with kernel K for its top node (a tag of spade::kernels); nested nodes are
/// planned as usual. A K that cannot compute `e` is a compile error.
template <class K, class E>
expr::result_t<E> eval(const E& e) {
  static_assert(plan_of<E>::template has_kernel<K>,
                "spade::eval<K>: kernel K cannot compute this expression's top node; "
                "spade::plan_of<decltype(e)>::candidates lists the kernels that can");
  expr::result_t<E> result;
  detail::assign<K>(result, e);
  return result;
}

namespace detail {

template <class E>
auto host_tree(const E& e) {
  if constexpr (matrix_or_vector<E>) {
    return to_cpu(e);
  } else if constexpr (expr::is_row_range_v<E>) {
    return to_cpu(eval(e));  // the rows' entries, copied (no arithmetic to check)
  } else if constexpr (expr::is_view_v<E>) {
    // The same window on a host copy of the base, which the view owns.
    using base = const std::remove_cvref_t<decltype(to_cpu(*e.base))>;
    auto copy = std::make_shared<base>(to_cpu(*e.base));
    using result = rebind_space_t<typename E::result_type, cpu>;
    expr::view<base, result> v(copy.get(), e.offset, e.view_rows, e.view_cols, e.stride, e.name);
    v.owned = std::move(copy);
    return v;
  } else if constexpr (expr::is_product_v<E> || expr::is_sum_v<E>) {
    auto l = host_tree(e.lhs);
    auto r = host_tree(e.rhs);
    using node = std::conditional_t<expr::is_product_v<E>, expr::product<decltype(l), decltype(r)>,
                                    expr::sum<decltype(l), decltype(r)>>;
    return node(std::move(l), std::move(r));
  } else if constexpr (expr::is_scaled_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::scaled<decltype(inner)>(e.factor, std::move(inner));
  } else if constexpr (expr::is_sparse_view_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::sparse_view<decltype(inner)>(std::move(inner));
  } else if constexpr (expr::is_cwise_unary_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::cwise_unary<typename E::op_type, decltype(inner)>(e.param, std::move(inner));
  } else if constexpr (expr::is_pattern_intersection_v<E>) {
    auto l = host_tree(e.lhs);
    auto r = host_tree(e.rhs);
    return expr::pattern_intersection<decltype(l), decltype(r)>(std::move(l), std::move(r));
  } else if constexpr (expr::is_cwise_binary_v<E>) {
    auto l = host_tree(e.lhs);
    auto r = host_tree(e.rhs);
    return expr::cwise_binary<typename E::op_type, decltype(l), decltype(r)>(std::move(l),
                                                                             std::move(r));
  } else if constexpr (expr::is_cast_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::cast_node<typename E::value_type, decltype(inner)>(std::move(inner));
  } else if constexpr (expr::is_diagonal_matrix_v<E>) {
    auto diag = host_tree(e.diag);
    return expr::diagonal_matrix<decltype(diag)>(std::move(diag));
  } else if constexpr (expr::is_diagonal_scaled_v<E>) {
    auto diag = host_tree(e.diag);
    auto inner = host_tree(e.inner);
    return expr::diagonal_scaled<E::direction, decltype(diag), decltype(inner)>(std::move(diag),
                                                                                std::move(inner));
  } else if constexpr (expr::is_masked_product_v<E>) {
    auto inner = host_tree(e.inner);
    auto dense = host_tree(e.dense);
    return expr::masked_product<decltype(inner), decltype(dense)>(std::move(inner),
                                                                  std::move(dense));
  } else if constexpr (expr::is_axis_sum_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::axis_sum<E::direction, decltype(inner)>(std::move(inner));
  } else if constexpr (expr::is_diagonal_of_v<E>) {
    auto inner = host_tree(e.inner);
    return expr::diagonal_of<decltype(inner)>(std::move(inner));
  } else {
    auto inner = host_tree(e.inner);
    return expr::transposed<decltype(inner)>(std::move(inner));
  }
}

}  // namespace detail

/// Evaluates `e` on the host with Eigen (gpu operands are copied to the host first) and
/// returns the cpu result: the reference every GPU result is checked against.
template <class E>
auto reference(const E& e) {
  return eval(detail::host_tree(e));
}

namespace detail {

/// True when dot/norm keep their vendor path: vectors that are storage operands, scaled ones or
/// nested plans (products), not element-wise trees.
template <class X>
constexpr bool vendor_reduction() {
  return is_vector_v<expr::result_t<X>> && !fuses_cwise<false, X>();
}

}  // namespace detail

/// The sum of e's elements — of a sparse operand's stored entries — in one pass (on the gpu one
/// fused kernel over e's element-wise tree); synchronous and deterministic: the same bits on
/// every run. 0 for an empty e.
template <expr::operand E>
auto sum(const E& e) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    return detail::reduce_cwise<false>(detail::reduction::sum, e, "spade::sum");
  }
}

/// The mean of e's elements (a sparse operand: of its stored entries). Throws
/// dimension_mismatch for an empty e.
template <expr::operand E>
auto mean(const E& e) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    std::int64_t count = 0;
    const auto total =
        detail::reduce_cwise<false>(detail::reduction::sum, e, "spade::mean", &count);
    if (count == 0) throw dimension_mismatch("spade::mean: the expression has no elements");
    return total / static_cast<decltype(total)>(count);
  }
}

/// The largest element (NaN if any element is NaN). Throws dimension_mismatch for an empty e.
template <expr::operand E>
auto max_coeff(const E& e) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    return detail::reduce_cwise<false>(detail::reduction::max, e, "spade::max_coeff");
  }
}

/// The smallest element (NaN if any element is NaN). Throws dimension_mismatch for an empty e.
template <expr::operand E>
auto min_coeff(const E& e) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    return detail::reduce_cwise<false>(detail::reduction::min, e, "spade::min_coeff");
  }
}

/// The sum of the squared elements, in one pass.
template <expr::operand E>
auto squared_norm(const E& e) {
  if constexpr (expr::holds_reduced_precision<E>) {
    return expr::reject_reduced_precision<E>();
  } else {
    return detail::reduce_cwise<true>(detail::reduction::sum, e, "spade::squared_norm");
  }
}

namespace detail {
/// dot over multi_gpu operands: each part's, summed over the cluster (spade/multi).
template <class X, class Y>
typename expr::result_t<X>::value_type distributed_dot(const X& x, const Y& y);
}  // namespace detail

/// xᵀ·y: for vectors (evaluating nested plans first) one cuBLAS DOT; for element-wise trees or
/// dense matrices (the sum of the element-wise product) one fused pass. Synchronous.
template <expr::operand X, expr::operand Y>
auto dot(const X& x, const Y& y) {
  using RX = expr::result_t<X>;
  using RY = expr::result_t<Y>;
  if constexpr (expr::holds_reduced_precision<X, Y>) {
    return expr::reject_reduced_precision<
        std::conditional_t<expr::holds_reduced_precision<X>, X, Y>>();
  } else {
    static_assert(std::is_same_v<typename RX::space_type, typename RY::space_type> &&
                      std::is_same_v<typename RX::value_type, typename RY::value_type>,
                  "spade::dot: the operands differ in scalar type or space; convert or move one");
    if constexpr (std::is_same_v<typename RX::space_type, multi_gpu>) {
      return detail::distributed_dot(x, y);
    } else if constexpr (detail::vendor_reduction<X>() && detail::vendor_reduction<Y>()) {
      using T = typename RX::value_type;
      return detail::with_operand(x, [&](const auto& u, bool, T su) {
        return detail::with_operand(y, [&](const auto& v, bool, T sv) {
          if (u.size() != v.size())
            throw dimension_mismatch("dot: sizes " + std::to_string(u.size()) + " and " +
                                     std::to_string(v.size()) + " differ");
          return su * sv * detail::vector_kernels<typename RX::space_type>::dot(u, v);
        });
      });
    } else {
      if (expr::rows_of(x) != expr::rows_of(y) || expr::cols_of(x) != expr::cols_of(y))
        throw dimension_mismatch("dot: shapes " +
                                 expr::shape_text(expr::rows_of(x), expr::cols_of(x)) + " and " +
                                 expr::shape_text(expr::rows_of(y), expr::cols_of(y)) + " differ");
      return sum(cwise_product(x, y));
    }
  }
}

/// ‖e‖₂: for a vector (evaluating a nested plan first) cuBLAS NRM2, which scales against
/// overflow; for an element-wise tree or a matrix (Frobenius) √(squared_norm(e)). Synchronous.
template <expr::operand X>
auto norm(const X& x) {
  if constexpr (expr::holds_reduced_precision<X>) {
    return expr::reject_reduced_precision<X>();
  } else {
    if constexpr (detail::vendor_reduction<X>() &&
                  !std::is_same_v<typename expr::result_t<X>::space_type, multi_gpu>) {
      using T = typename expr::result_t<X>::value_type;
      return detail::with_operand(x, [&](const auto& u, bool, T s) {
        const T magnitude = s < T(0) ? -s : s;
        return magnitude * detail::vector_kernels<typename expr::result_t<X>::space_type>::norm(u);
      });
    } else {
      return std::sqrt(squared_norm(x));
    }
  }
}

}  // namespace spade
