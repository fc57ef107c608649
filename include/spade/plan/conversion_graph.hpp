// The graph of implemented format conversions and its cheapest paths, found at compile time.
#pragma once

#include "spade/formats/conversion_graph.hpp"
#include "spade/plan/steps.hpp"

namespace spade::plan {

// The graph itself (nodes, costs, next hops) is formats/conversion_graph.hpp's, which
// spade::convert<>() walks too; here its hops become plan steps.
using conversion_graph::edge_cost;
using conversion_graph::format_id;
using conversion_graph::next_hop_in;
using conversion_graph::none;
inline constexpr int format_node_count = conversion_graph::node_count;

template <class T, class S, int From, int To, class Slot>
struct path {
  static constexpr int hop = next_hop_in<S>[From][To];
  static_assert(hop >= 0, "spade: no chain of implemented conversions joins these formats");
  using hop_type = conversion_graph::node_t<T, S, hop>;
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
