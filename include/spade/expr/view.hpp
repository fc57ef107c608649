// Views: block, row, col, segment, head and tail of a dense matrix or vector, read and written
// in place through a leading dimension (no copy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/operand.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/traits.hpp"

namespace spade {

namespace detail {
/// dest = e for a view destination (eval/cwise.hpp defines it).
template <class View, class E>
void assign_view(const View& dest, const E& e);
}  // namespace detail

namespace expr {

/// A window on a dense matrix or vector `Base` (const-qualified: a read-only view) that
/// evaluates to `Result`: a dense<T, S, L> in Base's layout (a block) or a vector<T, S> (a row,
/// a column, a segment). Element (o, k) of the window in Result's order — a vector's element e
/// is (e, 0) — lies at base values' offset + o · stride + k. The base must outlive the view, as
/// in Eigen; writing through the view clears the conversions cached from the base.
template <class Base, class Result>
struct view {
  using is_spade_expression = void;
  using base_type = std::remove_const_t<Base>;
  using result_type = Result;
  using value_type = typename base_type::value_type;
  using space_type = typename base_type::space_type;
  static constexpr bool writable = !std::is_const_v<Base>;

  Base* base;
  std::shared_ptr<Base> owned;  // set when the view owns its base (the host copy of a gpu view)
  std::size_t offset;
  index_t view_rows;
  index_t view_cols;
  std::int64_t stride;
  std::string name;  // how the user wrote it, for messages and explain: "block(D, 1, 2, 3, 4)"

  view(Base* b, std::size_t first, index_t rows, index_t cols, std::int64_t step, std::string text)
      : base(b),
        offset(first),
        view_rows(rows),
        view_cols(cols),
        stride(step),
        name(std::move(text)) {}
  view(const view&) = default;
  view(view&&) = default;
  ~view() = default;

  index_t rows() const noexcept { return view_rows; }
  index_t cols() const noexcept { return view_cols; }
  /// Element (0, 0) in the base's storage (read-only).
  const value_type* data() const noexcept { return std::as_const(*base).values().data() + offset; }
  /// The base's storage, read-only (its owner context and data pointer).
  const auto& base_values() const noexcept { return std::as_const(*base).values(); }
  /// The viewed storage of Base, to write (clears the base's cached conversions).
  value_type* writable_data() const noexcept requires writable {
    return base->values().data() + offset;
  }
  /// The base values' positions this view can touch, [first, last) (empty for an empty view).
  static constexpr bool row_order() {
    if constexpr (is_vector_v<Result>)
      return true;
    else
      return std::is_same_v<typename Result::layout_type, row_major>;
  }
  std::pair<std::size_t, std::size_t> span() const noexcept {
    if (view_rows == 0 || view_cols == 0) return {offset, offset};
    const auto outer = static_cast<std::size_t>(row_order() ? view_rows : view_cols);
    const auto inner = static_cast<std::size_t>(row_order() ? view_cols : view_rows);
    return {offset, offset + (outer - 1) * static_cast<std::size_t>(stride) + inner};
  }

  /// Writes e's elements into the window (dimension_mismatch unless the shapes are equal). An
  /// expression that reads the overlapping part of the base at other positions goes through a
  /// temporary first.
  template <operand E>
  view& operator=(E&& e) {
    static_assert(writable, "spade: this view is read-only (it views a const matrix or vector)");
    if constexpr (writable) ::spade::detail::assign_view(*this, e);
    return *this;
  }
  /// Copies the other window's elements (as Eigen's block assignment does), not the view.
  view& operator=(const view& other) {
    static_assert(writable, "spade: this view is read-only (it views a const matrix or vector)");
    if constexpr (writable) ::spade::detail::assign_view(*this, other);
    return *this;
  }
};

template <class X>
inline constexpr bool is_view_v = false;
template <class Base, class Result>
inline constexpr bool is_view_v<view<Base, Result>> = true;

template <class Base, class Result>
struct result<view<Base, Result>> {
  using type = Result;
};

/// Rows first … first + count − 1 of a csr, read-only (spade::rows): evaluates to the csr of
/// those rows, which a product or an element-wise expression reads like any csr operand.
template <class C>
struct row_range {
  using is_spade_expression = void;
  using value_type = typename C::value_type;
  using space_type = typename C::space_type;

  const C* matrix;
  index_t first;
  index_t count;

  index_t rows() const noexcept { return count; }
  index_t cols() const noexcept { return matrix->cols(); }
};

template <class X>
inline constexpr bool is_row_range_v = false;
template <class C>
inline constexpr bool is_row_range_v<row_range<C>> = true;

template <class C>
struct result<row_range<C>> {
  using type = C;
};

namespace detail {

inline std::string view_range_text(const char* what, std::int64_t first, std::int64_t count) {
  return std::string(what) + " " + std::to_string(first) + ".." + std::to_string(first + count - 1);
}

/// Throws dimension_mismatch naming the call unless [first, first + count) lies in [0, extent).
inline void check_view_range(const std::string& call, const char* what, std::int64_t first,
                             std::int64_t count, std::int64_t extent, const std::string& of) {
  if (first < 0 || count < 0 || first + count > extent)
    throw dimension_mismatch(call + ": " +
                             (count < 0 ? std::string("negative count ") + std::to_string(count)
                                        : view_range_text(what, first, count)) +
                             " lies outside " + of);
}

template <class M>
using vector_of_t = vector<typename std::remove_const_t<M>::value_type,
                           typename std::remove_const_t<M>::space_type>;

}  // namespace detail

}  // namespace expr

namespace expr::detail {

/// What a view is taken of: a dense matrix or vector, or another view of one. Element (o, k) of
/// the window in its own order lies at base values' first + o · stride + k.
template <class Base>
struct window {
  Base* base;
  std::shared_ptr<Base> owned;
  std::size_t first;
  index_t rows;
  index_t cols;
  std::int64_t stride;
  bool row_order;
  std::string name;  // "D", "x", or the inner view's call

  /// The base position of element (i, j) of the window.
  std::size_t at(index_t i, index_t j) const noexcept {
    const auto o = static_cast<std::size_t>(row_order ? i : j);
    const auto k = static_cast<std::size_t>(row_order ? j : i);
    return first + o * static_cast<std::size_t>(stride) + k;
  }
};

/// A dense matrix or vector as a window; a view as the window it already is.
template <class M>
auto window_of(M& m) {
  using D = std::remove_const_t<M>;
  if constexpr (is_view_v<D>) {
    using Base = std::remove_pointer_t<decltype(m.base)>;
    return window<Base>{m.base,      m.owned,  m.offset,       m.view_rows,
                        m.view_cols, m.stride, D::row_order(), m.name};
  } else if constexpr (is_vector_v<D>) {
    return window<M>{&m, nullptr, 0, m.size(), 1, 1, true, "x"};
  } else {
    return window<M>{&m,
                     nullptr,
                     0,
                     m.rows(),
                     m.cols(),
                     m.leading_dimension(),
                     std::is_same_v<typename D::layout_type, row_major>,
                     "D"};
  }
}

/// "the 4x5 matrix", "the 6-element vector", or the inner view a composed view leaves.
template <class M>
std::string window_text(const M& m) {
  if constexpr (is_view_v<std::remove_const_t<M>>)
    return m.name + " (" + shape_text(m.rows(), m.cols()) + ")";
  else if constexpr (is_vector_v<std::remove_const_t<M>>)
    return "the " + std::to_string(m.size()) + "-element vector";
  else
    return "the " + shape_text(m.rows(), m.cols()) + " matrix";
}

/// True for what block/row/col view: a dense matrix, or a view of one that is a matrix.
template <class M>
constexpr bool matrix_window() {
  using D = std::remove_const_t<M>;
  if constexpr (is_view_v<D>)
    return is_dense_v<typename D::result_type>;
  else
    return is_dense_v<D>;
}
/// True for what segment/head/tail view: a vector, or a vector view (a row, column, segment).
template <class M>
constexpr bool vector_window() {
  using D = std::remove_const_t<M>;
  if constexpr (is_view_v<D>)
    return is_vector_v<typename D::result_type>;
  else
    return is_vector_v<D>;
}

template <class M>
constexpr bool require_dense_base() {
  static_assert(matrix_window<M>(),
                "spade::block/row/col view a spade::dense matrix or a block of one (evaluate an "
                "expression into one first; spade::rows gives the row range of a csr)");
  return matrix_window<M>();
}
template <class M>
constexpr bool require_vector_base() {
  static_assert(vector_window<M>(),
                "spade::segment/head/tail view a spade::vector or a row, column or segment of "
                "one (evaluate an expression into one first)");
  return vector_window<M>();
}

/// The dense type a block of M evaluates to (M's own, or its view's result).
template <class M>
struct matrix_of {
  using type = std::remove_const_t<M>;
};
template <class B, class R>
struct matrix_of<view<B, R>> {
  using type = R;
};
template <class B, class R>
struct matrix_of<const view<B, R>> {
  using type = R;
};
template <class M>
using matrix_of_t = typename matrix_of<M>::type;

/// The view of `count` elements of vector window w from element `start` (segment, head, tail).
template <class Base>
auto vector_view(const window<Base>& w, std::int64_t start, index_t count, std::string call) {
  using R = vector<typename std::remove_const_t<Base>::value_type,
                   typename std::remove_const_t<Base>::space_type>;
  view<Base, R> v(w.base, count == 0 ? w.first : w.at(static_cast<index_t>(start), 0), count, 1,
                  w.stride, std::move(call));
  v.owned = w.owned;
  return v;
}

}  // namespace expr::detail

// A view of a temporary matrix or vector would dangle at the end of the statement: no views of
// those. A temporary view (segment(col(D, j), 0, 3)) is fine: it points into D, and so does the
// view made of it.
template <class M>
auto block(const M&&, index_t, index_t, index_t, index_t) = delete;
template <class M>
auto row(const M&&, index_t) = delete;
template <class M>
auto col(const M&&, index_t) = delete;
template <class M>
auto segment(const M&&, index_t, index_t) = delete;
template <class M>
auto head(const M&&, index_t) = delete;
template <class M>
auto tail(const M&&, index_t) = delete;
template <class C>
auto rows(const C&&, index_t, index_t) = delete;

/// The rows × cols block of D (a dense matrix or a block of one) whose first element is
/// D(i, j): read and written in place. dimension_mismatch names the range when it leaves D.
template <class M>
auto block(M& d, index_t i, index_t j, index_t rows, index_t cols) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(d);
    const std::string call = "spade::block(" + w.name + ", " + std::to_string(i) + ", " +
                             std::to_string(j) + ", " + std::to_string(rows) + ", " +
                             std::to_string(cols) + ")";
    const std::string of = expr::detail::window_text(d);
    expr::detail::check_view_range(call, "rows", i, rows, w.rows, of);
    expr::detail::check_view_range(call, "columns", j, cols, w.cols, of);
    using Base = std::remove_pointer_t<decltype(w.base)>;
    expr::view<Base, expr::detail::matrix_of_t<M>> v(
        w.base, rows == 0 || cols == 0 ? w.first : w.at(i, j), rows, cols, w.stride, call);
    v.owned = w.owned;
    return v;
  }
}

/// Row i of D (a dense matrix or a block of one) as a vector of its cols() elements (strided in
/// col-major storage): read and written in place.
template <class M>
auto row(M& d, index_t i) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(d);
    const std::string call = "spade::row(" + w.name + ", " + std::to_string(i) + ")";
    expr::detail::check_view_range(call, "row", i, 1, w.rows, expr::detail::window_text(d));
    using Base = std::remove_pointer_t<decltype(w.base)>;
    expr::view<Base, expr::detail::vector_of_t<Base>> v(
        w.base, w.cols == 0 ? w.first : w.at(i, 0), w.cols, 1, w.row_order ? 1 : w.stride, call);
    v.owned = w.owned;
    return v;
  }
}

/// Column j of D (a dense matrix or a block of one) as a vector of its rows() elements (strided
/// in row-major storage): read and written in place.
template <class M>
auto col(M& d, index_t j) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(d);
    const std::string call = "spade::col(" + w.name + ", " + std::to_string(j) + ")";
    expr::detail::check_view_range(call, "column", j, 1, w.cols, expr::detail::window_text(d));
    using Base = std::remove_pointer_t<decltype(w.base)>;
    expr::view<Base, expr::detail::vector_of_t<Base>> v(
        w.base, w.rows == 0 ? w.first : w.at(0, j), w.rows, 1, w.row_order ? w.stride : 1, call);
    v.owned = w.owned;
    return v;
  }
}

/// Elements i … i + n − 1 of x (a vector, or a row, column or segment view): read and written
/// in place.
template <class M>
auto segment(M& x, index_t i, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(x);
    const std::string call =
        "spade::segment(" + w.name + ", " + std::to_string(i) + ", " + std::to_string(n) + ")";
    expr::detail::check_view_range(call, "elements", i, n, w.rows, expr::detail::window_text(x));
    return expr::detail::vector_view(w, i, n, call);
  }
}

/// The first n elements of x.
template <class M>
auto head(M& x, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(x);
    const std::string call = "spade::head(" + w.name + ", " + std::to_string(n) + ")";
    expr::detail::check_view_range(call, "elements", 0, n, w.rows, expr::detail::window_text(x));
    return expr::detail::vector_view(w, 0, n, call);
  }
}

/// The last n elements of x.
template <class M>
auto tail(M& x, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const auto w = expr::detail::window_of(x);
    const std::string call = "spade::tail(" + w.name + ", " + std::to_string(n) + ")";
    const std::int64_t first = std::int64_t{w.rows} - n;
    expr::detail::check_view_range(call, "elements", n < 0 ? 0 : first, n, w.rows,
                                   expr::detail::window_text(x));
    return expr::detail::vector_view(w, first, n, call);
  }
}

/// Views of temporary views: the view made of them points into the same base.
template <class B, class R>
auto block(expr::view<B, R>&& v, index_t i, index_t j, index_t rows, index_t cols) {
  return block(v, i, j, rows, cols);
}
template <class B, class R>
auto row(expr::view<B, R>&& v, index_t i) {
  return row(v, i);
}
template <class B, class R>
auto col(expr::view<B, R>&& v, index_t j) {
  return col(v, j);
}
template <class B, class R>
auto segment(expr::view<B, R>&& v, index_t i, index_t n) {
  return segment(v, i, n);
}
template <class B, class R>
auto head(expr::view<B, R>&& v, index_t n) {
  return head(v, n);
}
template <class B, class R>
auto tail(expr::view<B, R>&& v, index_t n) {
  return tail(v, n);
}

/// Rows first … first + count − 1 of csr A, read-only: `spade::rows(A, 0, 100) * X`. Evaluated
/// where it is used, into a csr holding a copy of those rows' entries (their row pointers
/// rebased); dimension_mismatch names the range when it leaves A.
template <class C>
auto rows(const C& a, index_t first, index_t count) {
  static_assert(is_csr_v<C>,
                "spade::rows views a row range of a spade::csr (convert other formats to csr "
                "first; spade::block views a dense matrix)");
  if constexpr (!is_csr_v<C>) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const std::string call =
        "spade::rows(A, " + std::to_string(first) + ", " + std::to_string(count) + ")";
    expr::detail::check_view_range(call, "rows", first, count, a.rows(),
                                   "the " + expr::shape_text(a.rows(), a.cols()) + " matrix");
    return expr::row_range<C>{&a, first, count};
  }
}

}  // namespace spade
