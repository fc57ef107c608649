// The graph of implemented format conversions and its cheapest paths, found at compile time.
#pragma once

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>

#include <array>
#include <type_traits>

#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/traits.hpp"
#include "spade/plan/steps.hpp"

namespace spade::plan {

namespace hana = boost::hana;

/// The nodes of the graph for one scalar and space, in id order.
template <class T, class S>
constexpr auto format_nodes =
    hana::tuple_t<coo<T, S>, csr<T, S>, dense<T, S, row_major>, dense<T, S, col_major>, gcoo<T, S>,
                  ellr<T, S>, tiled<T, S>>;
inline constexpr int format_node_count = 7;

template <class M>
constexpr int format_id() {
  if constexpr (is_coo_v<M>)
    return 0;
  else if constexpr (is_csr_v<M>)
    return 1;
  else if constexpr (is_gcoo_v<M>)  // before the dense tests, which read M::layout_type
    return 4;
  else if constexpr (is_ellr_v<M>)
    return 5;
  else if constexpr (is_tiled_v<M>)
    return 6;
  else if constexpr (is_dense_v<M> && std::is_same_v<typename M::layout_type, row_major>)
    return 2;
  else if constexpr (is_dense_v<M>)
    return 3;
  else
    return -1;
}

/// Relative cost of each implemented conversion, in passes over the data (cuts ties toward
/// fewer steps); 0 on the diagonal, `none` where no direct conversion exists. gcoo has edges
/// only to and from csr and dense: coo reaches it through csr, dense_col through dense_row
/// (the device's Algorithm 1 reads rows), and its costs keep every path between the other
/// formats off it. ellr and tiled join only csr (both ways): every other format reaches them
/// through csr, and a path through either back to csr always costs more than staying on csr.
inline constexpr int none = 1 << 20;
inline constexpr std::array<std::array<int, format_node_count>, format_node_count> edge_cost{{
    //  coo   csr   dense_row  dense_col  gcoo  ellr  tiled
    {0, 3, none, none, none, none, none},  // coo: sort by (row, col) + reduce repeats
    {1, 0, 2, 2, 2, 2, 3},                 // csr: expand rows; scatter; group; pad; sort by tile
    {none, 2, 0, 1, 2, none, none},        // dense_row: count + fill; transpose; Algorithm 1
    {none, 3, 1, 0, none, none, none},     // dense_col: transpose + count + fill; transpose
    {none, 3, 2, 2, 0, none, none},        // gcoo: sort by (row, col); scatter into zeros
    {none, 2, none, none, none, 0, none},  // ellr: scan row lengths + copy
    {none, 2, none, none, none, none, 0},  // tiled: count bitmap bytes per row + scatter
}};

/// next_hop[a][b]: the first node after a on a cheapest path from a to b (Floyd–Warshall).
inline constexpr auto next_hop = [] {
  std::array<std::array<int, format_node_count>, format_node_count> dist = edge_cost, next{};
  constexpr auto nodes = static_cast<std::size_t>(format_node_count);
  for (std::size_t a = 0; a < nodes; ++a)
    for (std::size_t b = 0; b < nodes; ++b)
      next[a][b] = dist[a][b] < none ? static_cast<int>(b) : -1;
  for (std::size_t via = 0; via < nodes; ++via)
    for (std::size_t a = 0; a < nodes; ++a)
      for (std::size_t b = 0; b < nodes; ++b)
        if (dist[a][via] + dist[via][b] < dist[a][b]) {
          dist[a][b] = dist[a][via] + dist[via][b];
          next[a][b] = next[a][via];
        }
  return next;
}();

template <class T, class S, int From, int To, class Slot>
struct path {
  static constexpr int hop = next_hop[From][To];
  static_assert(hop >= 0, "spade: no chain of implemented conversions joins these formats");
  using hop_type = typename decltype(+hana::at_c<hop>(format_nodes<T, S>))::type;
  using type = concat_t<steps<convert<Slot, hop_type>>, typename path<T, S, hop, To, Slot>::type>;
};
template <class T, class S, int Same, class Slot>
struct path<T, S, Same, Same, Slot> {
  using type = steps<>;
};

/// The conversion steps that turn operand `Slot` of storage type From into Target: none when
/// they are equal, else a cheapest chain over implemented conversions.
template <class Slot, class From, class Target>
using conversion_path_t = typename path<typename From::value_type, typename From::space_type,
                                        format_id<From>(), format_id<Target>(), Slot>::type;

}  // namespace spade::plan
