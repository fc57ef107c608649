// spade::context for builds without CUDA: every use of the device reports no_device.
#include <string>

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/device/gpu_timing.hpp"

namespace spade {

namespace {
[[noreturn]] void no_cuda() {
  throw no_device(
      "no usable CUDA device: Spade was built without CUDA (SPADE_WITH_CUDA=OFF or "
      "no CUDA toolkit found); only cpu types are available");
}
}  // namespace

struct context::impl {};

context::context(int) {
  no_cuda();
}
context::~context() = default;
const device_properties& context::properties() const noexcept {
  static const device_properties none{};
  return none;
}
void* context::stream() const noexcept {
  return nullptr;
}
void* context::cublas_handle() {
  no_cuda();
}
void* context::cusparse_handle() {
  no_cuda();
}
void* context::allocate(std::size_t, const char*) {
  no_cuda();
}
void context::deallocate(void*, std::size_t) noexcept {}
void context::copy_to_device(void*, const void*, std::size_t) {
  no_cuda();
}
void context::copy_on_device(void*, const void*, std::size_t) {
  no_cuda();
}
void context::fill_zero(void*, std::size_t) {
  no_cuda();
}
void context::copy_to_host(void*, const void*, std::size_t) {
  no_cuda();
}
void context::synchronize() {
  no_cuda();
}
std::size_t context::bytes_in_use() const noexcept {
  return 0;
}
std::size_t context::bytes_reserved() {
  no_cuda();
}
std::size_t context::device_bytes_free() {
  no_cuda();
}
void context::set_cache_limit(std::size_t) {
  no_cuda();
}
std::size_t context::cache_limit() const noexcept {
  return 0;
}
void context::set_memory_limit(std::size_t) noexcept {}
std::size_t context::memory_limit() const noexcept {
  return 0;
}
void context::trim(std::size_t) {
  no_cuda();
}
std::size_t context::pool_bytes_in_use() {
  no_cuda();
}
std::size_t context::pool_bytes_peak(bool) {
  no_cuda();
}

context_scope::context_scope(context&) : previous_(nullptr), previous_device_(0) {
  no_cuda();
}
context_scope::~context_scope() = default;

context& default_context() {
  no_cuda();
}

bool device_available(std::string* reason) {
  if (reason) *reason = "Spade was built without CUDA";
  return false;
}

bool built_with_cuda() noexcept {
  return false;
}

device::gpu_run_times device::gpu_run_milliseconds(context&, const std::function<void()>&, int) {
  no_cuda();
}

}  // namespace spade
