// The memory policy of spade::context: a bounded cache, trim-and-retry on a full device, a hard
// limit, and a GPU shared by two processes that peak in turn.
#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <spade/spade.hpp>

#include "gpu_support.hpp"
#include "test_support.hpp"

extern char** environ;

using spade::context;
using spade::cpu;
using spade::default_context;
using spade::device_buffer;
using spade::gpu;
using spade::index_t;
using spade::testing::contains;
using spade::testing::no_device;
using spade::testing::pool_guard;

namespace {

constexpr std::size_t mib = std::size_t{1} << 20;

// Restores the default context's cache limit when a test case ends, however it ends.
class cache_limit_guard {
 public:
  cache_limit_guard() : saved_(default_context().cache_limit()) {}
  ~cache_limit_guard() {
    default_context().set_memory_limit(0);
    default_context().set_cache_limit(saved_);
  }
  cache_limit_guard(const cache_limit_guard&) = delete;
  cache_limit_guard& operator=(const cache_limit_guard&) = delete;

 private:
  std::size_t saved_;
};

// Runs gpu_memory_peer (a separate process) asking for `bytes`; its exit status.
int run_peer(std::size_t bytes) {
  const std::string path = SPADE_MEMORY_PEER;
  const std::string count = std::to_string(bytes);
  std::vector<char*> argv{const_cast<char*>(path.c_str()), const_cast<char*>(count.c_str()),
                          nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string out_of_memory_text(std::size_t bytes, context& ctx) {
  try {
    device_buffer<unsigned char> block(bytes, ctx);
  } catch (const spade::out_of_memory& e) {
    return e.what();
  }
  return "<no out_of_memory thrown>";
}

}  // namespace

TEST_CASE("the pool caches at most its limit between products, and reuses what it keeps") {
  if (no_device("the memory tests")) return;
  pool_guard guard;
  cache_limit_guard restore;
  context& ctx = default_context();
  const std::size_t total = ctx.properties().global_memory_bytes;
  if (std::getenv("SPADE_CACHE_LIMIT") == nullptr) CHECK(ctx.cache_limit() == total / 20);
  {
    device_buffer<unsigned char> big(2 * ctx.cache_limit() + 64 * mib);
    big.fill_zero();
  }
  CHECK(ctx.bytes_reserved() <= ctx.cache_limit());
  {  // Under the limit, freed memory stays for the next product.
    device_buffer<unsigned char> small(256 * mib);
    small.fill_zero();
  }
  CHECK(ctx.bytes_reserved() >= 256 * mib);
  ctx.set_cache_limit(64 * mib);  // trims at once
  CHECK(ctx.cache_limit() == 64 * mib);
  CHECK(ctx.bytes_reserved() <= 64 * mib);
}

TEST_CASE("a hard memory limit, and out_of_memory messages that say what is in use") {
  if (no_device("the memory tests")) return;
  pool_guard guard;
  cache_limit_guard restore;
  context& ctx = default_context();
  ctx.set_memory_limit(ctx.bytes_in_use() + 100 * mib);
  CHECK(ctx.memory_limit() == ctx.bytes_in_use() + 100 * mib);
  const std::string limited = out_of_memory_text(200 * mib, ctx);
  CHECK(contains(limited, "memory limit"));
  CHECK(contains(limited, std::to_string(200 * mib)));
  { device_buffer<unsigned char> fits(50 * mib); }
  ctx.set_memory_limit(0);
  // More than the device has: the message names the request, the context's use and the device.
  const std::size_t total = ctx.properties().global_memory_bytes;
  const std::string full = out_of_memory_text(2 * total, ctx);
  CAPTURE(full);
  CHECK(contains(full, "out of device memory"));
  CHECK(contains(full, "reserved"));
  CHECK(contains(full, "free of"));
  // The failed request left nothing behind: a normal allocation still works.
  device_buffer<unsigned char> after(mib);
  after.fill_zero();
}

// The cache lives in pieces: a request larger than any cached piece and than what the device
// has free fits only once the cache goes back to the driver, which allocate() does before it
// reports out_of_memory.
TEST_CASE("a product that fits only after the cache is trimmed succeeds") {
  if (no_device("the memory tests")) return;
  pool_guard guard;
  cache_limit_guard restore;
  context& ctx = default_context();
  ctx.set_cache_limit(~std::size_t{0});  // keep every freed byte (the old policy)
  const std::size_t room = 1536 * mib;
  const std::size_t free_now = ctx.device_bytes_free();
  if (free_now < room + 512 * mib) {
    MESSAGE("skipped: " << free_now << " bytes free on the device");
    return;
  }
  // Another library (here another context, with its own pool) takes all but `room`.
  context other(ctx.properties().ordinal);
  device_buffer<unsigned char> held(free_now - room, other);
  held.fill_zero();
  {
    device_buffer<unsigned char> cached(1024 * mib);  // freed into the pool: cached
    cached.fill_zero();
  }
  REQUIRE(ctx.bytes_reserved() >= 1024 * mib);
  CHECK(ctx.device_bytes_free() < 1280 * mib);
  // C = A * B with C of 1.25 GiB: one allocation that no cached piece and no free memory holds.
  const index_t rows = index_t{1} << 20;
  const index_t k = 64;
  const index_t n = 320;
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1), col_idx(rows);
  std::vector<float> values(rows);
  for (index_t i = 0; i < rows; ++i) {
    row_ptr[i + 1] = i + 1;
    col_idx[i] = i % k;
    values[i] = static_cast<float>(1 + i % 3);
  }
  const auto a = spade::to_gpu(spade::csr<float, cpu>(rows, k, row_ptr, col_idx, values));
  const auto b_host = spade::random_dense<float>(k, n, spade::testing::fresh_seed());
  const auto b = spade::to_gpu(b_host);
  spade::dense<float, gpu> c = a * b;
  const auto got = spade::to_cpu(c);
  std::size_t wrong = 0;
  for (index_t i = 0; i < rows; i += 997)
    for (index_t j = 0; j < n; ++j)
      wrong += got.values()[static_cast<std::size_t>(i) * n + j] !=
               values[i] * b_host.values()[static_cast<std::size_t>(i % k) * n + j];
  CHECK(wrong == 0u);
}

TEST_CASE("two processes that each peak at 60 % of the device take turns") {
  if (no_device("the memory tests")) return;
  pool_guard guard;
  context& ctx = default_context();
  const std::size_t peak = ctx.device_bytes_free() / 10 * 6;
  CAPTURE(peak);
  {
    device_buffer<unsigned char> mine(peak);
    mine.fill_zero();
  }
  ctx.synchronize();  // the freed peak goes back to the driver, past the cache limit
  CHECK(ctx.bytes_reserved() <= ctx.cache_limit());
  CHECK(run_peer(peak) == 0);  // the other process's peak, while this one is still alive
  {
    device_buffer<unsigned char> again(peak);
    again.fill_zero();
  }
  // Freed memory leaves the pool at a synchronisation (as at the end of a product that reads
  // its result back); without one, the asynchronous free may not have completed yet.
  ctx.synchronize();
  CHECK(run_peer(peak) == 0);
}
