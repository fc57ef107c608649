// The vocabulary of plans as types: operand slots, conversion steps, candidates.
#pragma once

#include <type_traits>

namespace spade::plan {

/// Which operand of a binary node a step applies to.
struct lhs {
  static constexpr const char* name = "lhs";
};
struct rhs {
  static constexpr const char* name = "rhs";
};

/// Convert operand `Slot` to the storage type `Target` before the kernel runs (cached on the
/// source operand by the evaluator).
template <class Slot, class Target>
struct convert {
  using slot = Slot;
  using target = Target;
};

/// An ordered list of steps.
template <class... Steps>
struct steps {
  static constexpr int size = sizeof...(Steps);
};

template <class A, class B>
struct concat;
template <class... A, class... B>
struct concat<steps<A...>, steps<B...>> {
  using type = steps<A..., B...>;
};
template <class A, class B>
using concat_t = typename concat<A, B>::type;

/// One way to compute a node: the kernel and the conversions it needs first.
template <class Kernel, class Steps = steps<>>
struct candidate {
  using kernel = Kernel;
  using conversions = Steps;
};

/// An ordered list of candidates, most preferred first.
template <class... Candidates>
struct candidates {
  static constexpr int size = sizeof...(Candidates);
  template <class Kernel>
  static constexpr bool has_kernel = (std::is_same_v<typename Candidates::kernel, Kernel> || ...);
};

}  // namespace spade::plan
