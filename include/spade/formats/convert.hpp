// spade::convert<Format>(A): explicit format conversion, done in the space where A lives.
#pragma once

#include <type_traits>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/tuning.hpp"
#include "spade/formats/conversion_graph.hpp"
#include "spade/formats/traits.hpp"

namespace spade {

namespace detail {

/// The conversions of one space's back end: cpu/convert.hpp (host::) and device/convert.hpp
/// (device::) specialise it with the graph's direct edges as static members: csr_to_coo,
/// coo_to_csr, csr_to_dense<Layout>, dense_to_csr, relayout<Layout>, csr_to_gcoo,
/// gcoo_to_csr, dense_to_gcoo, gcoo_to_dense<Layout>, csr_to_ellr, ellr_to_csr, csr_to_tiled,
/// tiled_to_csr. Conversions are instantiated where they are called, so a translation unit that
/// includes <spade/spade.hpp> sees both.
template <class Space>
struct conversion_backend {
  static_assert(sizeof(Space) == 0,
                "spade::convert: no conversions for this space are visible; include "
                "<spade/spade.hpp> (the cpu and gpu back ends define them)");
};

/// One direct edge of the conversion graph (formats/conversion_graph.hpp), counted once in
/// conversion_counter(); gcoo and ellr targets take their group size or layout.
template <class To, class From>
To convert_edge(const From& a, index_t group_size = 0, ellr_layout layout = {}) {
  using B = conversion_backend<typename From::space_type>;
  static_assert(
      conversion_graph::edge_cost_in<typename From::space_type>[conversion_graph::format_id<From>()]
                                                               [conversion_graph::format_id<To>()] <
          conversion_graph::none,
      "spade::convert: not a direct edge of the conversion graph");
  ++conversion_counter();
  if constexpr (is_coo_v<From>) {
    return B::coo_to_csr(a);
  } else if constexpr (is_csr_v<From> && is_coo_v<To>) {
    return B::csr_to_coo(a);
  } else if constexpr (is_csr_v<From> && is_gcoo_v<To>) {
    return B::csr_to_gcoo(a, group_size);
  } else if constexpr (is_csr_v<From> && is_ellr_v<To>) {
    return B::csr_to_ellr(a, layout);
  } else if constexpr (is_csr_v<From> && is_tiled_v<To>) {
    return B::csr_to_tiled(a);
  } else if constexpr (is_csr_v<From>) {
    return B::template csr_to_dense<typename To::layout_type>(a);
  } else if constexpr (is_gcoo_v<From> && is_csr_v<To>) {
    return B::gcoo_to_csr(a);
  } else if constexpr (is_gcoo_v<From>) {
    return B::template gcoo_to_dense<typename To::layout_type>(a);
  } else if constexpr (is_ellr_v<From>) {
    return B::ellr_to_csr(a);
  } else if constexpr (is_tiled_v<From>) {
    return B::tiled_to_csr(a);
  } else if constexpr (is_csr_v<To>) {
    return B::dense_to_csr(a);
  } else if constexpr (is_gcoo_v<To>) {
    return B::dense_to_gcoo(a, group_size);
  } else {
    return B::template relayout<typename To::layout_type>(a);
  }
}

template <class To, class From>
To convert_between(const From& a);

/// `a` as a gcoo with groups of `group_size` rows, in a's space, along the conversion graph
/// (csr and row-major dense convert directly; coo, ellr, tiled and another group size go
/// through csr, col-major dense through row-major), each hop counted once in
/// conversion_counter(). A gcoo that already has this group size is copied and counts nothing.
template <class From>
gcoo<typename From::value_type, typename From::space_type> group_rows(const From& a,
                                                                      index_t group_size) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  using Target = gcoo<T, S>;
  check_group_size("spade::convert<gcoo>", group_size);
  static_assert(matrix<From>, "spade::convert<gcoo>: the source must be a matrix");
  if constexpr (is_gcoo_v<From>) {
    if (a.group_size() == group_size) return a;
    return group_rows(convert_between<csr<T, S>>(a), group_size);
  } else if constexpr (std::is_same_v<conversion_graph::next_hop_t<From, Target>, Target>) {
    return convert_edge<Target>(a, group_size);
  } else {
    return group_rows(convert_between<conversion_graph::next_hop_t<From, Target>>(a), group_size);
  }
}

/// `a` as an ellr in `layout`, in a's space: csr directly, other formats through csr (each hop
/// counts once in conversion_counter()). An ellr already in this layout is copied.
template <class From>
ellr<typename From::value_type, typename From::space_type> ellr_rows(const From& a,
                                                                     ellr_layout layout) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  using Target = ellr<T, S>;
  check_ellr_layout("spade::convert<ellr>", layout);
  static_assert(matrix<From>, "spade::convert<ellr>: the source must be a matrix");
  if constexpr (is_ellr_v<From>) {
    if (a.layout() == layout && a.slice_height() == ellr_slice_height(a.rows(), layout)) return a;
    return ellr_rows(convert_between<csr<T, S>>(a), layout);
  } else if constexpr (std::is_same_v<conversion_graph::next_hop_t<From, Target>, Target>) {
    return convert_edge<Target>(a, 0, layout);
  } else {
    return ellr_rows(convert_between<conversion_graph::next_hop_t<From, Target>>(a), layout);
  }
}

/// `a` as a To, one hop of the conversion graph's cheapest path at a time.
template <class To, class From>
To convert_between(const From& a) {
  static_assert(std::is_same_v<typename To::value_type, typename From::value_type>,
                "spade::convert: the target scalar type must equal the source's; convert values "
                "explicitly");
  static_assert(std::is_same_v<typename To::space_type, typename From::space_type>,
                "spade::convert: converts within one space; use spade::to_gpu / spade::to_cpu "
                "to move between spaces");
  static_assert(conversion_graph::format_id<From>() >= 0 && conversion_graph::format_id<To>() >= 0,
                "spade::convert: no conversion between these formats");
  if constexpr (std::is_same_v<To, From>) {
    return a;
  } else if constexpr (is_ellr_v<To>) {
    return ellr_rows(a, ellr_layout{});
  } else if constexpr (is_gcoo_v<To>) {
    // The source's own grouping when it has one (To == From above), else the tuned p.
    return group_rows(a, static_cast<index_t>(tuning().gcoo_group_size));
  } else {
    using Hop = conversion_graph::next_hop_t<From, To>;
    if constexpr (std::is_same_v<Hop, To>)
      return convert_edge<To>(a);
    else
      return convert_between<To>(convert_between<Hop>(a));
  }
}

}  // namespace detail

/// Converts `a` to format `Format` (spade::csr, spade::coo, spade::gcoo, spade::ellr,
/// spade::tiled, spade::dense — row-major), same scalar, same space; on the gpu the work runs
/// there. Sparse → dense writes explicit zeros; dense → sparse keeps entries unequal to zero;
/// coo sources have repeated entries summed. A gcoo target keeps a gcoo source's group size and
/// otherwise groups spade::tuning().gcoo_group_size rows; the overload below takes the group
/// size. An ellr target is the paper's ELLPACK-R; the overload taking an ellr_layout makes the
/// sliced one. Pairs without a direct conversion take the cheapest path of the conversion graph
/// the planner uses (formats/conversion_graph.hpp: ellr and tiled join only csr, gcoo only csr
/// and dense, col-major dense reaches gcoo through row-major), each hop counted once in
/// conversion_counter().
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
