// How expression nodes hold their operands, and what an operand is.
#pragma once

#include <type_traits>

#include "spade/core/expression.hpp"
#include "spade/formats/traits.hpp"

namespace spade::expr {

/// Anything an operator may combine: Spade's matrices, vectors and expression nodes. The
/// operators are constrained by it, so they never capture Eigen's or anyone else's types.
template <class X>
concept operand = matrix_or_vector<std::remove_cvref_t<X>> || expression<X>;

/// A named operand (an lvalue) is held by const reference — it must outlive the expression,
/// as in Eigen; a temporary is moved into the node and held by value.
template <class X>
using stored_t = std::conditional_t<std::is_lvalue_reference_v<X>,
                                    const std::remove_reference_t<X>&, std::remove_cvref_t<X>>;

/// The operand type without reference or const: a storage type or a node type.
template <class X>
using bare_t = std::remove_cvref_t<X>;

}  // namespace spade::expr
