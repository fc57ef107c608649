// RAII owner of a typed device allocation taken from a context's stream-ordered pool.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "spade/core/context.hpp"

namespace spade {

/// A typed device array: copies are deep (device-to-device), moves steal the pointer.
/// An empty buffer touches no device, so empty gpu objects exist even without a GPU.
template <class T>
class device_buffer {
 public:
  using value_type = T;

  device_buffer() = default;
  /// `count` uninitialised elements from the default context (none is opened when 0).
  explicit device_buffer(std::size_t count) : size_(count) {
    if (count) acquire(default_context());
  }
  device_buffer(std::size_t count, context& ctx) : size_(count) {
    if (count) acquire(ctx);
  }
  /// Uploads `count` host elements.
  device_buffer(const T* host, std::size_t count) : device_buffer(count) {
    if (count) ctx_->copy_to_device(data_, host, count * sizeof(T));
  }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.data(), host.size()) {}

  device_buffer(const device_buffer& other) : size_(other.size_) {
    if (!size_) return;
    acquire(*other.ctx_);
    ctx_->copy_on_device(data_, other.data_, size_ * sizeof(T));
  }
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        ctx_(std::exchange(other.ctx_, nullptr)) {}
  device_buffer& operator=(const device_buffer& other) {
    if (this != &other) *this = device_buffer(other);
    return *this;
  }
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      ctx_ = std::exchange(other.ctx_, nullptr);
    }
    return *this;
  }
  ~device_buffer() { release(); }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /// The context the memory belongs to (nullptr while empty).
  context* owner() const noexcept { return ctx_; }

  /// Copies the contents to a new host vector (waits for the copy).
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (size_) ctx_->copy_to_host(host.data(), data_, size_ * sizeof(T));
    return host;
  }
  void fill_zero() {
    if (size_) ctx_->fill_zero(data_, size_ * sizeof(T));
  }

 private:
  void acquire(context& ctx) {
    data_ = static_cast<T*>(ctx.allocate(size_ * sizeof(T), "device_buffer"));
    ctx_ = &ctx;
  }
  void release() noexcept {
    if (data_) ctx_->deallocate(data_, size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
    ctx_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  context* ctx_ = nullptr;
};

}  // namespace spade
