// The cpu back end of element-wise trees: each tree becomes one Eigen array expression, which
// Eigen evaluates in one pass (its own fusion), into the destination or a reduction.
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "spade/eval/cwise.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/result.hpp"

namespace spade::detail {

/// Eigen's form of each element-wise operation. The transcendental functions are std:: per
/// element: Eigen 3.4.0's vectorised float sqrt(+inf) is NaN and exp(-inf) a denormal, and the
/// cpu path is the reference. max and min propagate NaN, as the gpu kernels do.
template <class Op>
struct host_cwise;

template <class Call>
struct std_function {
  template <class T>
  T operator()(T v) const {
    return Call::apply(v);
  }
};
struct sqrt_call {
  template <class T>
  static T apply(T v) {
    return std::sqrt(v);
  }
};
struct exp_call {
  template <class T>
  static T apply(T v) {
    return std::exp(v);
  }
};
struct log_call {
  template <class T>
  static T apply(T v) {
    return std::log(v);
  }
};
struct sin_call {
  template <class T>
  static T apply(T v) {
    return std::sin(v);
  }
};
struct cos_call {
  template <class T>
  static T apply(T v) {
    return std::cos(v);
  }
};
struct tanh_call {
  template <class T>
  static T apply(T v) {
    return std::tanh(v);
  }
};

template <>
struct host_cwise<expr::ops::abs_op> {
  static auto apply(const auto& a, auto) { return a.abs(); }
};
template <>
struct host_cwise<expr::ops::sqrt_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<sqrt_call>{}); }
};
template <>
struct host_cwise<expr::ops::square_op> {
  static auto apply(const auto& a, auto) { return a.square(); }
};
template <>
struct host_cwise<expr::ops::exp_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<exp_call>{}); }
};
template <>
struct host_cwise<expr::ops::log_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<log_call>{}); }
};
template <>
struct host_cwise<expr::ops::sin_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<sin_call>{}); }
};
template <>
struct host_cwise<expr::ops::cos_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<cos_call>{}); }
};
template <>
struct host_cwise<expr::ops::tanh_op> {
  static auto apply(const auto& a, auto) { return a.unaryExpr(std_function<tanh_call>{}); }
};
template <>
struct host_cwise<expr::ops::inverse_op> {
  static auto apply(const auto& a, auto) { return a.inverse(); }
};
template <>
struct host_cwise<expr::ops::pow_op> {
  static auto apply(const auto& a, auto p) {
    return a.unaryExpr([p](decltype(p) v) { return std::pow(v, p); });
  }
};
template <>
struct host_cwise<expr::ops::add_scalar_op> {
  static auto apply(const auto& a, auto p) { return a + p; }
};
template <>
struct host_cwise<expr::ops::scalar_minus_op> {
  static auto apply(const auto& a, auto p) { return p - a; }
};
template <>
struct host_cwise<expr::ops::divide_by_scalar_op> {
  static auto apply(const auto& a, auto p) { return a / p; }
};
// Eigen 3.4's coefficient-wise max/min have no NaN-propagating form (its reductions do), so
// these are scalar functors: NaN when either operand is NaN, else std::max / std::min.
template <class T>
T nan_max(T a, T b) {
  return (a != a || b != b) ? a + b : (a < b ? b : a);
}
template <class T>
T nan_min(T a, T b) {
  return (a != a || b != b) ? a + b : (b < a ? b : a);
}

template <>
struct host_cwise<expr::ops::max_scalar_op> {
  static auto apply(const auto& a, auto p) {
    return a.unaryExpr([p](decltype(p) v) { return nan_max(v, p); });
  }
};
template <>
struct host_cwise<expr::ops::min_scalar_op> {
  static auto apply(const auto& a, auto p) {
    return a.unaryExpr([p](decltype(p) v) { return nan_min(v, p); });
  }
};
template <>
struct host_cwise<expr::ops::product_op> {
  static auto apply(const auto& a, const auto& b) { return a * b; }
};
template <>
struct host_cwise<expr::ops::quotient_op> {
  static auto apply(const auto& a, const auto& b) { return a / b; }
};
template <>
struct host_cwise<expr::ops::max_op> {
  static auto apply(const auto& a, const auto& b) {
    using T = typename std::remove_cvref_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T u, T v) { return nan_max(u, v); });
  }
};
template <>
struct host_cwise<expr::ops::min_op> {
  static auto apply(const auto& a, const auto& b) {
    using T = typename std::remove_cvref_t<decltype(a)>::Scalar;
    return a.binaryExpr(b, [](T u, T v) { return nan_min(u, v); });
  }
};

/// An input's values as an Eigen array: a matrix in its own storage order, a vector (or the
/// stored values of a sparse operand) as one column.
template <class M>
auto host_array_of(const M& m) {
  using T = typename M::value_type;
  if constexpr (is_dense_v<M>) {
    constexpr int order =
        std::is_same_v<typename M::layout_type, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
    return Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, order>>(
        m.data(), m.rows(), m.cols());
  } else if constexpr (is_vector_v<M>) {
    return Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(m.data(), m.size());
  } else {
    return Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(
        m.values().data(), static_cast<Eigen::Index>(m.values().size()));
  }
}

/// A view's window as an Eigen array over the base's storage (Data: const T* to read, T* to
/// write): a block as a matrix with an outer stride, a row, column or segment as a column with
/// an inner stride.
template <class View, class Data>
auto host_array_of_view(const View& v, Data data) {
  using T = typename View::value_type;
  using Result = typename View::result_type;
  constexpr bool writes = !std::is_const_v<std::remove_pointer_t<Data>>;
  if constexpr (is_vector_v<Result>) {
    using array = Eigen::Array<T, Eigen::Dynamic, 1>;
    using map = Eigen::Map<std::conditional_t<writes, array, const array>, 0, Eigen::InnerStride<>>;
    return map(data, v.rows(), Eigen::InnerStride<>(static_cast<Eigen::Index>(v.stride)));
  } else {
    constexpr int order =
        std::is_same_v<typename Result::layout_type, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
    using array = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, order>;
    using map = Eigen::Map<std::conditional_t<writes, array, const array>, 0, Eigen::OuterStride<>>;
    // An empty window still needs a valid outer stride for Eigen's assertion: at least its inner
    // extent.
    const auto inner = order == Eigen::RowMajor ? v.cols() : v.rows();
    const auto stride = std::max<std::int64_t>(v.stride, inner);
    return map(data, v.rows(), v.cols(), Eigen::OuterStride<>(static_cast<Eigen::Index>(stride)));
  }
}

/// Each stored entry's row in a csr pattern (for a diagonal scaling of its values).
template <class C>
Eigen::Array<index_t, Eigen::Dynamic, 1> entry_rows_of(const C& pattern) {
  Eigen::Array<index_t, Eigen::Dynamic, 1> rows(static_cast<Eigen::Index>(pattern.values().size()));
  for (index_t r = 0; r < pattern.rows(); ++r)
    for (index_t k = pattern.row_ptr().data()[r]; k < pattern.row_ptr().data()[r + 1]; ++k)
      rows[k] = r;
  return rows;
}

/// Each stored entry's position in dense matrix d (for a sparse-times-dense product).
template <class C, class D>
Eigen::Array<std::ptrdiff_t, Eigen::Dynamic, 1> entry_offsets_of(const C& pattern, const D& d) {
  Eigen::Array<std::ptrdiff_t, Eigen::Dynamic, 1> at(
      static_cast<Eigen::Index>(pattern.values().size()));
  for (index_t r = 0; r < pattern.rows(); ++r)
    for (index_t k = pattern.row_ptr().data()[r]; k < pattern.row_ptr().data()[r + 1]; ++k)
      at[k] = static_cast<std::ptrdiff_t>(d.offset(r, pattern.col_idx().data()[k]));
  return at;
}

/// x as one Eigen array expression (nested plans evaluated into `temporaries` first; Eigen
/// holds the maps and nested expressions by value). Values: the chain over a sparse base, whose
/// stored values `values` stands for, in the csr `pattern` (for diagonal scalings).
template <bool Values, class X, class V = void, class P = void>
auto host_expression(const X& x, fused_temporaries& temporaries, const V* values = nullptr,
                     const P* pattern = nullptr) {
  constexpr bool interior = Values ? values_interior_v<X> : fused_interior_v<X>;
  if constexpr (expr::is_view_v<X>) {
    return host_array_of_view(x, x.data());
  } else if constexpr (!interior) {
    if constexpr (Values)
      return Eigen::Map<const Eigen::Array<typename V::value_type, Eigen::Dynamic, 1>>(
          values->data(), static_cast<Eigen::Index>(values->size()));
    else
      return host_array_of(fused_input(x, temporaries));
  } else if constexpr (expr::is_scaled_v<X>) {
    return host_expression<Values>(x.inner, temporaries, values, pattern) * x.factor;
  } else if constexpr (expr::is_sum_v<X>) {
    auto l = host_expression<Values>(x.lhs, temporaries, values, pattern);
    auto r = host_expression<Values>(x.rhs, temporaries, values, pattern);
    return l + r;
  } else if constexpr (expr::is_cwise_unary_v<X>) {
    return host_cwise<typename X::op_type>::apply(
        host_expression<Values>(x.inner, temporaries, values, pattern), x.param);
  } else if constexpr (expr::is_cwise_binary_v<X>) {
    auto l = host_expression<Values>(x.lhs, temporaries, values, pattern);
    auto r = host_expression<Values>(x.rhs, temporaries, values, pattern);
    return host_cwise<typename X::op_type>::apply(l, r);
  } else if constexpr (expr::is_masked_product_v<X>) {
    auto inner = host_expression<Values>(x.inner, temporaries, values, pattern);
    const auto& d = fused_input(x.dense, temporaries);
    const auto& at = temporaries.hold(entry_offsets_of(*pattern, d));
    const Eigen::Map<const Eigen::Array<typename X::value_type, Eigen::Dynamic, 1>> flat(
        d.data(), static_cast<Eigen::Index>(d.element_count()));
    return inner * flat(at);
  } else if constexpr (expr::is_diagonal_scaled_v<X>) {
    auto inner = host_expression<Values>(x.inner, temporaries, values, pattern);
    const auto d = host_array_of(fused_input(x.diag, temporaries));
    constexpr bool by_row = X::direction == expr::axis::rows;
    if constexpr (Values) {
      if constexpr (by_row) {
        const auto& rows = temporaries.hold(entry_rows_of(*pattern));
        return d(rows) * inner;
      } else {
        const Eigen::Map<const Eigen::Array<index_t, Eigen::Dynamic, 1>> cols(
            pattern->col_idx().data(), static_cast<Eigen::Index>(pattern->col_idx().size()));
        return d(cols) * inner;
      }
    } else if constexpr (by_row) {
      return inner.colwise() * d;
    } else {
      return inner.rowwise() * d.transpose();
    }
  } else {
    return host_expression<Values>(x.inner, temporaries, values, pattern)
        .template cast<typename X::value_type>();
  }
}

/// The destination's values as a writable Eigen array of its shape and order.
template <class Dest>
auto host_destination(Dest& dest) {
  using T = typename Dest::value_type;
  if constexpr (is_dense_v<Dest>) {
    constexpr int order =
        std::is_same_v<typename Dest::layout_type, row_major> ? Eigen::RowMajor : Eigen::ColMajor;
    return Eigen::Map<Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, order>>(
        dest.data(), dest.rows(), dest.cols());
  } else {
    return Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>(dest.data(), dest.size());
  }
}

template <bool Square, class A>
auto host_reduce(reduction kind, const A& a) {
  if constexpr (Square) {
    return a.square().sum();
  } else {
    switch (kind) {
      case reduction::max:
        return a.template maxCoeff<Eigen::PropagateNaN>();
      case reduction::min:
        return a.template minCoeff<Eigen::PropagateNaN>();
      default:
        return a.sum();
    }
  }
}

template <>
struct cwise_backend<cpu> {
  template <class E>
  static std::string describe(const E&) {
    return "one Eigen array expression, evaluated in one pass";
  }

  template <class Dest, class E>
  static void assign(Dest& dest, const E& e) {
    fused_temporaries temporaries;
    const auto values = host_expression<false>(e, temporaries);
    shape_destination(dest, expr::rows_of(e), expr::cols_of(e));
    host_destination(dest) = values;
  }

  /// The entries a and b (csr, one shape) both store, each a's value times b's: a merge of
  /// each row's two sorted column lists.
  template <class T>
  static csr<T, cpu> intersect(const csr<T, cpu>& a, const csr<T, cpu>& b) {
    std::vector<index_t> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0), col_idx;
    std::vector<T> values;
    if (a.nnz() > 0 && b.nnz() > 0)
      for (index_t r = 0; r < a.rows(); ++r) {
        index_t i = a.row_ptr()[static_cast<std::size_t>(r)];
        index_t j = b.row_ptr()[static_cast<std::size_t>(r)];
        const index_t i_end = a.row_ptr()[static_cast<std::size_t>(r) + 1];
        const index_t j_end = b.row_ptr()[static_cast<std::size_t>(r) + 1];
        while (i < i_end && j < j_end) {
          const index_t ca = a.col_idx()[static_cast<std::size_t>(i)];
          const index_t cb = b.col_idx()[static_cast<std::size_t>(j)];
          if (ca < cb) {
            ++i;
          } else if (cb < ca) {
            ++j;
          } else {
            col_idx.push_back(ca);
            values.push_back(a.values()[static_cast<std::size_t>(i++)] *
                             b.values()[static_cast<std::size_t>(j++)]);
          }
        }
        row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<index_t>(col_idx.size());
      }
    return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                       std::move(values));
  }

  /// dest = e into a view: Eigen assigns the array expression through the window's stride.
  template <class View, class E>
  static void assign_view(const View& dest, const E& e) {
    fused_temporaries temporaries;
    const auto values = host_expression<false>(e, temporaries);
    host_array_of_view(dest, dest.writable_data()) = values;
  }

  /// s's pattern with the values alpha · s's values ∘ (op(A)·op(B)) at s's entries: a dot
  /// product per entry, summed in order of k (eigen_sddmm; the only cpu candidate).
  template <class Forced, class T, class A, class B>
  static csr<T, cpu> sddmm(T alpha, const csr<T, cpu>& s, const A& a, bool ta, const B& b,
                           bool tb) {
    csr<T, cpu> out = s;
    const index_t depth = ta ? a.rows() : a.cols();
    const T* x = a.data();
    const T* y = b.data();
    for (index_t r = 0; r < s.rows(); ++r)
      for (index_t k = s.row_ptr().data()[r]; k < s.row_ptr().data()[r + 1]; ++k) {
        const index_t c = s.col_idx().data()[k];
        T acc = T(0);
        for (index_t t = 0; t < depth; ++t)
          acc += x[ta ? a.offset(t, r) : a.offset(r, t)] * y[tb ? b.offset(c, t) : b.offset(t, c)];
        out.values()[static_cast<std::size_t>(k)] =
            alpha * s.values()[static_cast<std::size_t>(k)] * acc;
      }
    return out;
  }

  template <class Dest, class E>
  static void dense_vector_reduction(Dest& dest, const E& e) {
    fused_temporaries temporaries;
    const auto a = host_expression<false>(e.inner, temporaries);
    shape_destination(dest, e.rows(), 1);
    if constexpr (expr::is_diagonal_of_v<E>)
      host_destination(dest) = a.matrix().diagonal().array();
    else if constexpr (E::direction == expr::axis::rows)
      host_destination(dest) = a.rowwise().sum();
    else
      host_destination(dest) = a.colwise().sum().transpose();
  }

  template <class Dest, class E, class C>
  static void sparse_row_sums(Dest& dest, const E& chain, const C& a) {
    using T = typename Dest::value_type;
    fused_temporaries temporaries;
    const Eigen::Array<T, Eigen::Dynamic, 1> mapped =
        host_expression<true>(chain, temporaries, &a.values(), &a);
    shape_destination(dest, a.rows(), 1);
    for (index_t r = 0; r < a.rows(); ++r) {
      T acc = 0;
      for (index_t k = a.row_ptr().data()[r]; k < a.row_ptr().data()[r + 1]; ++k)
        acc += mapped[k];
      dest.values()[static_cast<std::size_t>(r)] = acc;
    }
  }

  template <class Dest, class E, class C>
  static void sparse_diagonal(Dest& dest, const E& chain, const C& a) {
    using T = typename Dest::value_type;
    fused_temporaries temporaries;
    const Eigen::Array<T, Eigen::Dynamic, 1> mapped =
        host_expression<true>(chain, temporaries, &a.values(), &a);
    const index_t n = a.rows() < a.cols() ? a.rows() : a.cols();
    shape_destination(dest, n, 1);
    for (index_t r = 0; r < n; ++r) {
      T value = 0;
      for (index_t k = a.row_ptr().data()[r]; k < a.row_ptr().data()[r + 1]; ++k)
        if (a.col_idx().data()[k] == r) value = mapped[k];
      dest.values()[static_cast<std::size_t>(r)] = value;
    }
  }

  template <class R, class E, class Input>
  static void map_values(R& result, const E& e, const Input& input) {
    fused_temporaries temporaries;
    const auto mapped = host_expression<true>(e, temporaries, &input, &result);
    auto& values = result.values();
    Eigen::Map<Eigen::Array<typename R::value_type, Eigen::Dynamic, 1>>(
        values.data(), static_cast<Eigen::Index>(values.size())) = mapped;
  }

  template <bool Square, class E>
  static typename E::value_type reduce(reduction kind, const E& e) {
    fused_temporaries temporaries;
    return host_reduce<Square>(kind, host_expression<false>(e, temporaries));
  }

  template <bool Square, class Storage, class E>
  static typename E::value_type reduce_values(reduction kind, const Storage& values, const E& e) {
    fused_temporaries temporaries;
    return host_reduce<Square>(kind, host_expression<true>(e, temporaries, &values));
  }
};

}  // namespace spade::detail
