// The float and double instances of the planned products and sums of cpu storage operands
// (eval/instances.hpp), compiled once so user translation units only declare them.
#include "spade/spade.hpp"

namespace spade::detail {
SPADE_PLANNED_INSTANCES(, float, cpu)
SPADE_PLANNED_INSTANCES(, double, cpu)
}  // namespace spade::detail
