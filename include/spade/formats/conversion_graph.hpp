// The graph of implemented format conversions: its nodes, edge costs and cheapest next hops.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

#include "spade/core/space.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/traits.hpp"

// One graph serves both users: spade::convert<>() walks it one hop at a time (formats/convert.hpp)
// and the planner turns the same hops into counted plan steps (plan/conversion_graph.hpp).
namespace spade::conversion_graph {

/// The nodes for one scalar and space, in id order (format_id).
template <class T, class S, int Id>
using node_t = std::conditional_t<
    Id == 0, coo<T, S>,
    std::conditional_t<
        Id == 1, csr<T, S>,
        std::conditional_t<
            Id == 2, dense<T, S, row_major>,
            std::conditional_t<
                Id == 3, dense<T, S, col_major>,
                std::conditional_t<Id == 4, gcoo<T, S>,
                                   std::conditional_t<Id == 5, ellr<T, S>, tiled<T, S>>>>>>>;
inline constexpr int node_count = 7;

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
inline constexpr std::array<std::array<int, node_count>, node_count> edge_cost{{
    //  coo   csr   dense_row  dense_col  gcoo  ellr  tiled
    {0, 3, none, none, none, none, none},  // coo: sort by (row, col) + reduce repeats
    {1, 0, 2, 2, 2, 2, 3},                 // csr: expand rows; scatter; group; pad; sort by tile
    {none, 2, 0, 1, 2, none, none},        // dense_row: count + fill; transpose; Algorithm 1
    {none, 3, 1, 0, none, none, none},     // dense_col: transpose + count + fill; transpose
    {none, 3, 2, 2, 0, none, none},        // gcoo: sort by (row, col); scatter into zeros
    {none, 2, none, none, none, 0, none},  // ellr: scan row lengths + copy
    {none, 2, none, none, none, none, 0},  // tiled: count bitmap bytes per row + scatter
}};

using cost_table = std::array<std::array<int, node_count>, node_count>;

/// The edges space S implements: edge_cost, plus on the host col-major dense → gcoo
/// (host::dense_to_gcoo reads either layout; the device's Algorithm 1 reads rows only).
template <class S>
inline constexpr cost_table edge_cost_in = [] {
  cost_table cost = edge_cost;
  if constexpr (std::is_same_v<S, cpu>) cost[3][4] = 2;
  return cost;
}();

/// next[a][b]: the first node after a on a cheapest path from a to b (Floyd–Warshall; ties keep
/// the path found first, so a direct edge wins a tie); -1 when no path exists.
constexpr cost_table cheapest_next_hops(const cost_table& cost) {
  cost_table dist = cost, next{};
  constexpr auto nodes = static_cast<std::size_t>(node_count);
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
}

template <class S>
inline constexpr cost_table next_hop_in = cheapest_next_hops(edge_cost_in<S>);

/// The format one hop from From toward To on a cheapest path (To itself for a direct edge).
template <class From, class To>
using next_hop_t =
    node_t<typename From::value_type, typename From::space_type,
           next_hop_in<typename From::space_type>[format_id<From>()][format_id<To>()]>;

}  // namespace spade::conversion_graph
