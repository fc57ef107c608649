// The gpu back end of the planner's run-time facts: transposes, the tile census, hash_spgemm's
// profile.
#pragma once

#include <string>

#include "spade/device/kernels.hpp"
#include "spade/device/vendor.hpp"
#include "spade/eval/operands.hpp"

namespace spade::detail {

/// eval/operands.hpp caches these on the operands; the device computes them (lib/).
template <>
struct fact_backend<gpu> {
  template <scalar T>
  static csr<T, gpu> transpose(const csr<T, gpu>& a) {
    return device::transpose(a);
  }
  template <scalar T>
  static plan::tile_census count_tiles(const csr<T, gpu>& a, const csr<T, gpu>& b) {
    return device::count_tiles(a, b);
  }
  template <scalar T>
  static std::int64_t count_own_tiles(const csr<T, gpu>& a) {
    return device::count_own_tiles(a);
  }
  template <scalar T>
  static std::string spgemm_profile(const csr<T, gpu>& a, const csr<T, gpu>& b) {
    return device::hash_spgemm_profile(a, b).describe();
  }
};

}  // namespace spade::detail
