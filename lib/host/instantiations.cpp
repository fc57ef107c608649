// The float and double instantiations of Spade's host-side templates (Eigen interop, Matrix
// Market I/O, generators, Eigen kernels, the fused kernels' source generators), compiled once so
// user translation units only declare them. The planned products and sums: planned_cpu.cpp and
// planned_gpu.cpp.
#include "spade/cpu/convert.hpp"
#include "spade/cpu/eigen.hpp"
#include "spade/cpu/evaluate.hpp"
#include "spade/device/cwise.hpp"
#include "spade/io/generators.hpp"
#include "spade/io/matrix_market.hpp"

namespace spade {
SPADE_EIGEN_INSTANCES(, float)
SPADE_EIGEN_INSTANCES(, double)
SPADE_MATRIX_MARKET_INSTANCES(, float)
SPADE_MATRIX_MARKET_INSTANCES(, double)
SPADE_GENERATOR_INSTANCES(, float)
SPADE_GENERATOR_INSTANCES(, double)
}  // namespace spade

namespace spade::detail {
SPADE_FUSED_SOURCE_INSTANCES(, float)
SPADE_FUSED_SOURCE_INSTANCES(, double)
}  // namespace spade::detail

namespace spade::host {
SPADE_HOST_CONVERT_INSTANCES(, float)
SPADE_HOST_CONVERT_INSTANCES(, double)
SPADE_HOST_INSTANCES(, float)
SPADE_HOST_INSTANCES(, double)
}  // namespace spade::host
