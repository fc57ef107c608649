// hash_spgemm's side streams: a bin's launches spread over streams forked from the context's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "detail/cuda_check.hpp"

namespace spade::device {

namespace {

// ---- streams: bins run concurrently, the longest launched first -------------------------------

constexpr int side_stream_count = 3;

// Per device, made once and kept for the process: the side streams bins are spread over and
// the events that fork them from, and join them back to, the context's stream.
struct side_streams {
  std::mutex mutex;
  cudaStream_t streams[side_stream_count] = {};
  cudaEvent_t fork = nullptr;
  cudaEvent_t joins[side_stream_count] = {};
};

side_streams& side_streams_of(int device) {
  static std::mutex table_mutex;
  static std::vector<std::unique_ptr<side_streams>> table;
  std::lock_guard<std::mutex> lock(table_mutex);
  if (table.size() <= static_cast<std::size_t>(device)) table.resize(device + 1);
  auto& entry = table[device];
  if (!entry) {
    auto made = std::make_unique<side_streams>();
    for (auto& s : made->streams)
      SPADE_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                     "creating the hash_spgemm side streams");
    SPADE_CUDA_TRY(cudaEventCreateWithFlags(&made->fork, cudaEventDisableTiming),
                   "creating the hash_spgemm events");
    for (auto& e : made->joins)
      SPADE_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                     "creating the hash_spgemm events");
    entry = std::move(made);
  }
  return *entry;
}

// Launches on the context stream and the side streams in turn between fork() and join(); the
// work queued on the context stream before fork() comes first on all of them, and everything
// after join() waits for all of them.
class stream_fan {
 public:
  stream_fan(cudaStream_t main, int device) : main_(main), sides_(side_streams_of(device)) {}
  void fork() {
    SPADE_CUDA_TRY(cudaEventRecord(sides_.fork, main_), "forking the hash_spgemm streams");
    for (auto s : sides_.streams)
      SPADE_CUDA_TRY(cudaStreamWaitEvent(s, sides_.fork, 0), "forking the hash_spgemm streams");
    next_ = 0;
  }
  cudaStream_t next() {
    const int k = next_++ % (side_stream_count + 1);
    return k == 0 ? main_ : sides_.streams[k - 1];
  }
  cudaStream_t next_side() { return sides_.streams[next_++ % side_stream_count]; }
  void join() {
    for (int k = 0; k < side_stream_count; ++k) {
      SPADE_CUDA_TRY(cudaEventRecord(sides_.joins[k], sides_.streams[k]),
                     "joining the hash_spgemm streams");
      SPADE_CUDA_TRY(cudaStreamWaitEvent(main_, sides_.joins[k], 0),
                     "joining the hash_spgemm streams");
    }
  }
  std::mutex& mutex() { return sides_.mutex; }

 private:
  cudaStream_t main_;
  side_streams& sides_;
  int next_ = 0;
};

}  // namespace

}  // namespace spade::device
