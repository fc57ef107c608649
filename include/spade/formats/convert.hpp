// spade::convert<Format>(A): explicit format conversion, done in the space where A lives.
#pragma once

#include <type_traits>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/tuning.hpp"
#include "spade/cpu/convert.hpp"
#include "spade/device/convert.hpp"
#include "spade/formats/traits.hpp"

namespace spade {

namespace detail {

template <class To, class From>
To convert_between(const From& a);

/// `a` as a gcoo with groups of `group_size` rows, in a's space. Sources without a direct
/// conversion go through csr (coo, ellr, tiled, another group size) or, on the gpu, through
/// row-major dense (col-major dense); each hop counts once in conversion_counter(). A gcoo that
/// already has this group size is copied and counts nothing.
template <class From>
gcoo<typename From::value_type, typename From::space_type> group_rows(const From& a,
                                                                      index_t group_size) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  constexpr bool on_cpu = std::is_same_v<S, cpu>;
  check_group_size("spade::convert<gcoo>", group_size);
  if constexpr (is_gcoo_v<From>) {
    if (a.group_size() == group_size) return a;
    return group_rows(convert_between<csr<T, S>>(a), group_size);
  } else if constexpr (is_csr_v<From>) {
    ++conversion_counter();
    if constexpr (on_cpu)
      return host::csr_to_gcoo(a, group_size);
    else
      return device::csr_to_gcoo(a, group_size);
  } else if constexpr (is_coo_v<From> || is_ellr_v<From> || is_tiled_v<From>) {
    return group_rows(convert_between<csr<T, S>>(a), group_size);
  } else if constexpr (is_dense_v<From>) {
    if constexpr (on_cpu) {
      ++conversion_counter();
      return host::dense_to_gcoo(a, group_size);
    } else if constexpr (std::is_same_v<typename From::layout_type, row_major>) {
      ++conversion_counter();
      return device::dense_to_gcoo(a, group_size);
    } else {
      // The device's Algorithm 1 reads rows; a col-major matrix is relaid out first.
      return group_rows(convert_between<dense<T, S, row_major>>(a), group_size);
    }
  } else {
    static_assert(sizeof(From) == 0, "spade::convert<gcoo>: the source must be a matrix");
  }
}

/// `a` as an ellr in `layout`, in a's space: csr directly, other formats through csr (each hop
/// counts once in conversion_counter()). An ellr already in this layout is copied.
template <class From>
ellr<typename From::value_type, typename From::space_type> ellr_rows(const From& a,
                                                                     ellr_layout layout) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  check_ellr_layout("spade::convert<ellr>", layout);
  if constexpr (is_ellr_v<From>) {
    if (a.layout() == layout && a.slice_height() == ellr_slice_height(a.rows(), layout)) return a;
    return ellr_rows(convert_between<csr<T, S>>(a), layout);
  } else if constexpr (is_csr_v<From>) {
    ++conversion_counter();
    if constexpr (std::is_same_v<S, cpu>)
      return host::csr_to_ellr(a, layout);
    else
      return device::csr_to_ellr(a, layout);
  } else if constexpr (matrix<From>) {
    return ellr_rows(convert_between<csr<T, S>>(a), layout);
  } else {
    static_assert(sizeof(From) == 0, "spade::convert<ellr>: the source must be a matrix");
  }
}

template <class To, class From>
To convert_between(const From& a) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  static_assert(std::is_same_v<typename To::value_type, T>,
                "spade::convert: the target scalar type must equal the source's; convert values "
                "explicitly");
  static_assert(std::is_same_v<typename To::space_type, S>,
                "spade::convert: converts within one space; use spade::to_gpu / spade::to_cpu "
                "to move between spaces");
  constexpr bool on_cpu = std::is_same_v<S, cpu>;
  // Conversions made of several hops count each hop where it runs instead of here. tiled,
  // like ellr, converts only to and from csr.
  constexpr bool through_csr =
      (is_coo_v<From> && is_dense_v<To>) || (is_dense_v<From> && is_coo_v<To>) ||
      (is_gcoo_v<From> && is_coo_v<To>) || (is_ellr_v<From> && !is_csr_v<To>) ||
      (is_tiled_v<From> && !is_csr_v<To>) || (is_tiled_v<To> && !is_csr_v<From>);
  if constexpr (!std::is_same_v<To, From> && !through_csr && !is_gcoo_v<To> && !is_ellr_v<To>)
    ++conversion_counter();
  if constexpr (std::is_same_v<To, From>) {
    return a;
  } else if constexpr (is_ellr_v<To>) {
    return ellr_rows(a, ellr_layout{});
  } else if constexpr (is_ellr_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::ellr_to_csr(a);
    else
      return device::ellr_to_csr(a);
  } else if constexpr (is_csr_v<From> && is_tiled_v<To>) {
    if constexpr (on_cpu)
      return host::csr_to_tiled(a);
    else
      return device::csr_to_tiled(a);
  } else if constexpr (is_tiled_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::tiled_to_csr(a);
    else
      return device::tiled_to_csr(a);
  } else if constexpr (is_gcoo_v<To>) {
    // The source's own grouping when it has one (To == From above), else the tuned p.
    return group_rows(a, static_cast<index_t>(tuning().gcoo_group_size));
  } else if constexpr (is_csr_v<From> && is_coo_v<To>) {
    if constexpr (on_cpu)
      return host::csr_to_coo(a);
    else
      return device::csr_to_coo(a);
  } else if constexpr (is_coo_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::coo_to_csr(a);
    else
      return device::coo_to_csr(a);
  } else if constexpr (is_csr_v<From> && is_dense_v<To>) {
    using L = typename To::layout_type;
    if constexpr (on_cpu)
      return host::csr_to_dense<L>(a);
    else
      return device::csr_to_dense<T, L>(a);
  } else if constexpr (is_dense_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::dense_to_csr(a);
    else
      return device::dense_to_csr(a);
  } else if constexpr (is_dense_v<From> && is_dense_v<To>) {
    using L = typename To::layout_type;
    if constexpr (on_cpu)
      return host::relayout<L>(a);
    else
      return device::relayout<T, typename From::layout_type, L>(a);
  } else if constexpr (is_gcoo_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::gcoo_to_csr(a);
    else
      return device::gcoo_to_csr(a);
  } else if constexpr (is_gcoo_v<From> && is_dense_v<To>) {
    using L = typename To::layout_type;
    if constexpr (on_cpu)
      return host::gcoo_to_dense<L>(a);
    else
      return device::gcoo_to_dense<T, L>(a);
  } else if constexpr (through_csr) {
    return convert_between<To>(convert_between<csr<T, S>>(a));
  } else {
    static_assert(sizeof(To) == 0, "spade::convert: no conversion between these formats");
  }
}

}  // namespace detail

/// Converts `a` to format `Format` (spade::csr, spade::coo, spade::gcoo, spade::ellr,
/// spade::tiled, spade::dense — row-major), same scalar, same space; on the gpu the work runs
/// there. Sparse → dense writes explicit zeros; dense → sparse keeps entries unequal to zero;
/// coo sources have repeated entries summed. A gcoo target keeps a gcoo source's group size and
/// otherwise groups spade::tuning().gcoo_group_size rows; the overload below takes the group
/// size. An ellr target is the paper's ELLPACK-R; the overload taking an ellr_layout makes the
/// sliced one. ellr and tiled convert directly only to and from csr: other pairs go through
/// csr, each hop counted once in conversion_counter().
template <template <class...> class Format, matrix M>
auto convert(const M& a) {
  return detail::convert_between<Format<typename M::value_type, typename M::space_type>>(a);
}

/// Converts `a` to the exact type `Target`, e.g. convert<dense<double, cpu, col_major>>(a).
template <matrix Target, matrix M>
Target convert(const M& a) {
  return detail::convert_between<Target>(a);
}

/// Converts `a` to spade::gcoo with groups of `group_size` rows (p), same scalar and space:
/// `spade::convert<spade::gcoo>(a, 8)`. A gcoo source is regrouped (through csr) unless it
/// already has this p, in which case it is copied. Cost as the conversion from a's format:
/// csr O(nnz log(nnz per group)); dense O(rows·cols); coo and a regrouped gcoo add a csr
/// conversion. Throws invalid_matrix for group_size < 1.
template <template <class...> class Format, matrix M>
auto convert(const M& a, index_t group_size) {
  static_assert(is_gcoo_v<Format<typename M::value_type, typename M::space_type>>,
                "spade::convert(a, group_size): a group size applies only to spade::gcoo; "
                "call spade::convert<Format>(a) for other formats");
  return detail::group_rows(a, group_size);
}

/// The same for an exact target type: `spade::convert<spade::gcoo<float, spade::gpu>>(a, 8)`.
template <matrix Target, matrix M>
Target convert(const M& a, index_t group_size) {
  static_assert(is_gcoo_v<Target>,
                "spade::convert(a, group_size): a group size applies only to spade::gcoo; "
                "call spade::convert<Target>(a) for other formats");
  static_assert(std::is_same_v<Target, gcoo<typename M::value_type, typename M::space_type>>,
                "spade::convert: converts within one space and scalar type; use spade::to_gpu "
                "/ spade::to_cpu to move between spaces");
  return detail::group_rows(a, group_size);
}

/// Converts `a` to spade::ellr in `layout`: `spade::convert<spade::ellr>(a, {32, 1024})` makes
/// slices of 32 rows after sorting each window of 1024 rows by length. Cost: csr O(slots +
/// rows log sort_window); other sources add their conversion to csr. Throws invalid_matrix for
/// a layout no conversion makes (detail::check_ellr_layout says which).
template <template <class...> class Format, matrix M>
auto convert(const M& a, ellr_layout layout) {
  static_assert(is_ellr_v<Format<typename M::value_type, typename M::space_type>>,
                "spade::convert(a, layout): an ellr_layout applies only to spade::ellr; "
                "call spade::convert<Format>(a) for other formats");
  return detail::ellr_rows(a, layout);
}

}  // namespace spade
