// The expression concept: what the storage types accept in their constructors and assignments.
#pragma once

#include <type_traits>

namespace spade {

/// A lazy expression node (spade::expr::*): computes nothing until assigned or evaluated.
template <class E>
concept expression = requires {
  typename std::remove_cvref_t<E>::is_spade_expression;
};

}  // namespace spade
