// CUB's two-phase temporary storage taken from a context's pool, and the launch shape shared by
// the conversion kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "detail/cuda_check.hpp"
#include "spade/core/context.hpp"
#include "spade/core/scalar.hpp"

namespace spade::detail {

/// Device bytes borrowed from a context's pool for one CUB call. Freed stream-ordered on scope
/// exit, so the CUB kernels queued before the free still own the bytes, and an exception thrown
/// between the two phases leaks nothing.
class cub_temp {
 public:
  // Never zero bytes: a null d_temp_storage would turn the second CUB call into another size
  // query that does no work.
  cub_temp(context& ctx, std::size_t bytes, const char* what)
      : ctx_(&ctx), bytes_(std::max<std::size_t>(bytes, 1)), data_(ctx.allocate(bytes_, what)) {}
  ~cub_temp() { ctx_->deallocate(data_, bytes_); }
  cub_temp(const cub_temp&) = delete;
  cub_temp& operator=(const cub_temp&) = delete;

  void* data() const noexcept { return data_; }

 private:
  context* ctx_;
  std::size_t bytes_;
  void* data_;
};

/// Runs one CUB device algorithm through its two phases: `call(d_temp, bytes)` returns the
/// cudaError_t of the CUB call; it is made once with a null pointer to size the storage, then
/// with storage from ctx's pool. `doing` names the step in the error a failure throws.
template <class Call>
void cub_run(context& ctx, const char* doing, Call&& call) {
  std::size_t bytes = 0;
  SPADE_CUDA_TRY(call(static_cast<void*>(nullptr), bytes), doing);
  cub_temp temp(ctx, bytes, doing);
  SPADE_CUDA_TRY(call(temp.data(), bytes), doing);
}

/// Index bits needed for values in [0, extent) (radix-sort keys): none when the extent is 0 or 1.
inline int bits_for(index_t extent) {
  return extent > 1 ? static_cast<int>(std::bit_width(static_cast<std::uint32_t>(extent - 1))) : 0;
}

/// The cudaStream_t every step of a conversion is ordered on.
inline cudaStream_t stream_of(const context& ctx) {
  return static_cast<cudaStream_t>(ctx.stream());
}

/// The context owning the first non-empty buffer. An empty buffer has no owner, so only when all
/// are empty is the default context opened, for a result that still needs memory (row_ptr).
template <class... Buffers>
context& context_of(const Buffers&... buffers) {
  context* owner = nullptr;
  ((owner = owner ? owner : buffers.owner()), ...);
  return owner ? *owner : default_context();
}

/// Upper bound on the blocks of a grid-stride launch, per SM: several waves' worth keeps every SM
/// busy, and the stride loop covers any size without meeting a grid-dimension limit.
inline constexpr std::int64_t max_blocks_per_sm = 32;

/// Blocks for `work_items` items at `items_per_block` items per block per stride step, at least
/// one and at most max_blocks_per_sm per SM.
inline unsigned int grid_blocks(std::int64_t work_items, std::int64_t items_per_block,
                                const context& ctx) {
  const std::int64_t needed = (work_items + items_per_block - 1) / items_per_block;
  const std::int64_t cap = std::max<std::int64_t>(ctx.properties().sm_count, 1) * max_blocks_per_sm;
  return static_cast<unsigned int>(std::clamp<std::int64_t>(needed, 1, cap));
}

}  // namespace spade::detail
