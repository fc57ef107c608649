// The kernel cache for builds without CUDA: nothing is compiled or launched (no_device), and the
// counters stay at 0.
#include <string>

#include "spade/core/error.hpp"
#include "spade/device/jit.hpp"

namespace spade {

namespace {
[[noreturn]] void no_cuda() {
  throw no_device(
      "no usable CUDA device: Spade was built without CUDA (SPADE_WITH_CUDA=OFF or no CUDA "
      "toolkit found), so it cannot compile or run generated kernels");
}
}  // namespace

jit_statistics jit_stats() noexcept {
  return {};
}
void reset_jit_stats() noexcept {}
void jit_forget_loaded_kernels() {}

namespace device {

std::string jit_key(const std::string&, int) {
  no_cuda();
}
jit_origin jit_lookup(const std::string&, int) {
  no_cuda();
}
jit_origin jit_compile(const std::string&, int, std::size_t*) {
  no_cuda();
}
jit_origin jit_launch(context&, const std::string&, const char*, unsigned, unsigned, void**) {
  no_cuda();
}

}  // namespace device

}  // namespace spade
