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

template <class M>
constexpr bool require_dense_base() {
  static_assert(is_dense_v<std::remove_const_t<M>>,
                "spade::block/row/col view a spade::dense matrix (evaluate an expression into one "
                "first; spade::rows gives the row range of a csr)");
  return is_dense_v<std::remove_const_t<M>>;
}
template <class M>
constexpr bool require_vector_base() {
  static_assert(is_vector_v<std::remove_const_t<M>>,
                "spade::segment/head/tail view a spade::vector (evaluate an expression into one "
                "first)");
  return is_vector_v<std::remove_const_t<M>>;
}

}  // namespace detail

}  // namespace expr

// A view of a temporary would dangle at the end of the statement: no views of rvalues.
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

/// The rows × cols block of D whose first element is D(i, j): read and written in place.
/// dimension_mismatch names the range when it leaves D.
template <class M>
auto block(M& d, index_t i, index_t j, index_t rows, index_t cols) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    using D = std::remove_const_t<M>;
    const std::string call = "spade::block(D, " + std::to_string(i) + ", " + std::to_string(j) +
                             ", " + std::to_string(rows) + ", " + std::to_string(cols) + ")";
    const std::string of = "the " + expr::shape_text(d.rows(), d.cols()) + " matrix";
    expr::detail::check_view_range(call, "rows", i, rows, d.rows(), of);
    expr::detail::check_view_range(call, "columns", j, cols, d.cols(), of);
    const std::size_t first = rows == 0 || cols == 0 ? 0 : d.offset(i, j);
    return expr::view<M, D>(&d, first, rows, cols, d.leading_dimension(), call);
  }
}

/// Row i of D as a vector of D.cols() elements (strided in a col_major D): read and written in
/// place.
template <class M>
auto row(M& d, index_t i) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    using D = std::remove_const_t<M>;
    const std::string call = "spade::row(D, " + std::to_string(i) + ")";
    expr::detail::check_view_range(call, "row", i, 1, d.rows(),
                                   "the " + expr::shape_text(d.rows(), d.cols()) + " matrix");
    const bool contiguous = std::is_same_v<typename D::layout_type, row_major>;
    const std::size_t first = d.cols() == 0 ? 0 : d.offset(i, 0);
    return expr::view<M, expr::detail::vector_of_t<M>>(
        &d, first, d.cols(), 1, contiguous ? 1 : d.leading_dimension(), call);
  }
}

/// Column j of D as a vector of D.rows() elements (strided in a row_major D): read and written
/// in place.
template <class M>
auto col(M& d, index_t j) {
  if constexpr (!expr::detail::require_dense_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    using D = std::remove_const_t<M>;
    const std::string call = "spade::col(D, " + std::to_string(j) + ")";
    expr::detail::check_view_range(call, "column", j, 1, d.cols(),
                                   "the " + expr::shape_text(d.rows(), d.cols()) + " matrix");
    const bool contiguous = std::is_same_v<typename D::layout_type, col_major>;
    const std::size_t first = d.rows() == 0 ? 0 : d.offset(0, j);
    return expr::view<M, expr::detail::vector_of_t<M>>(
        &d, first, d.rows(), 1, contiguous ? 1 : d.leading_dimension(), call);
  }
}

/// Elements i … i + n − 1 of x: read and written in place.
template <class M>
auto segment(M& x, index_t i, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const std::string call =
        "spade::segment(x, " + std::to_string(i) + ", " + std::to_string(n) + ")";
    expr::detail::check_view_range(call, "elements", i, n, x.size(),
                                   "the " + std::to_string(x.size()) + "-element vector");
    return expr::view<M, expr::detail::vector_of_t<M>>(&x, n == 0 ? 0 : static_cast<std::size_t>(i),
                                                       n, 1, 1, call);
  }
}

/// The first n elements of x.
template <class M>
auto head(M& x, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const std::string call = "spade::head(x, " + std::to_string(n) + ")";
    expr::detail::check_view_range(call, "elements", 0, n, x.size(),
                                   "the " + std::to_string(x.size()) + "-element vector");
    return expr::view<M, expr::detail::vector_of_t<M>>(&x, 0, n, 1, 1, call);
  }
}

/// The last n elements of x.
template <class M>
auto tail(M& x, index_t n) {
  if constexpr (!expr::detail::require_vector_base<M>()) {
    return expr::unsupported{};  // the static_assert has failed
  } else {
    const std::string call = "spade::tail(x, " + std::to_string(n) + ")";
    const std::int64_t first = std::int64_t{x.size()} - n;
    expr::detail::check_view_range(call, "elements", n < 0 ? 0 : first, n, x.size(),
                                   "the " + std::to_string(x.size()) + "-element vector");
    return expr::view<M, expr::detail::vector_of_t<M>>(
        &x, n == 0 ? 0 : static_cast<std::size_t>(first), n, 1, 1, call);
  }
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
