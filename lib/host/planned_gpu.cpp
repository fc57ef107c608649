// The float and double instances of the planned products and sums of gpu storage operands
// (eval/instances.hpp), compiled once so user translation units only declare them. Host code:
// the kernels they call are declared by device/ and defined by the CUDA families (or the stubs).
#include "spade/spade.hpp"

namespace spade::detail {
SPADE_PLANNED_INSTANCES(, float, gpu)
SPADE_PLANNED_INSTANCES(, double, gpu)
}  // namespace spade::detail
