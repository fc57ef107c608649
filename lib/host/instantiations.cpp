// The float and double instantiations of Spade's host-side templates (Matrix Market I/O,
// generators, Eigen kernels), compiled once so user translation units only declare them.
#include "spade/cpu/convert.hpp"
#include "spade/cpu/evaluate.hpp"
#include "spade/io/generators.hpp"
#include "spade/io/matrix_market.hpp"

namespace spade {
SPADE_MATRIX_MARKET_INSTANCES(, float)
SPADE_MATRIX_MARKET_INSTANCES(, double)
SPADE_GENERATOR_INSTANCES(, float)
SPADE_GENERATOR_INSTANCES(, double)
}  // namespace spade

namespace spade::host {
SPADE_HOST_CONVERT_INSTANCES(, float)
SPADE_HOST_CONVERT_INSTANCES(, double)
SPADE_HOST_INSTANCES(, float)
SPADE_HOST_INSTANCES(, double)
}  // namespace spade::host
