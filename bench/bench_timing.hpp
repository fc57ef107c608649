// spade-bench's timing core: CUDA events on Spade's stream, warm-ups, medians, held streams.
//
// GPU time ("kernel-only"): each timed run sits between two events on the stream. While the
// runs of a batch are queued, a spinning kernel holds the stream (bench_hold.hpp), so the
// runs then execute back to back and the events see GPU time only, not the host's planning
// and launch work between them (which would otherwise dominate small matrices). Host time is
// measured separately (`host_loop`), and end-to-end time per call is the host clock around a
// call and a synchronisation (`wall`).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <vector>

#include "bench_hold.hpp"
#include "bench_support.hpp"

namespace spade::bench {

struct timing_options {
  int warmups = 5;        // untimed runs first (module load, handle setup, pool growth)
  int reps = 20;          // timed runs; the median is reported, with min and max
  bool flush_l2 = false;  // overwrite a 2×L2 buffer before each timed run (outside the events)
  int batch = 32;         // timed runs queued behind one hold (the driver's queue is finite)
};

/// Mapped host flags that open a held stream: [0] the gate, [1] set by an expired hold.
class stream_gate {
 public:
  stream_gate() {
    check_cuda(
        cudaHostAlloc(reinterpret_cast<void**>(&host_), 2 * sizeof(int), cudaHostAllocMapped),
        "cudaHostAlloc (stream gate)");
    check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), host_, 0),
               "cudaHostGetDevicePointer (stream gate)");
  }
  ~stream_gate() { cudaFreeHost(host_); }
  stream_gate(const stream_gate&) = delete;
  stream_gate& operator=(const stream_gate&) = delete;

  /// Closes the gate and queues the holding kernel on `stream`.
  void hold(cudaStream_t stream) {
    std::atomic_ref<int>(host_[0]).store(0);
    std::atomic_ref<int>(host_[1]).store(0);
    check_cuda(launch_hold(stream, device_, device_ + 1, timeout_ns), "launch_hold");
  }
  void open() { std::atomic_ref<int>(host_[0]).store(1); }
  /// After a synchronisation: whether the last hold ran out before open().
  bool expired() { return std::atomic_ref<int>(host_[1]).load() != 0; }

  /// A hold lasts at most this long (GPU time), so a call that synchronises inside a held
  /// region costs a delay, not a hang.
  static constexpr unsigned long long timeout_ns = 5'000'000'000ULL;

 private:
  int* host_ = nullptr;
  int* device_ = nullptr;
};

/// Host-side cost of a call: per-call microseconds of a loop that queues without waiting.
struct host_cost {
  double held_us = 0;  // loop time per call while the stream is held: host work only
  double loop_us = 0;  // loop time per call, stream running (may wait on a full queue)
  double wall_us = 0;  // (loop + final synchronisation) per call: the GPU-bound rate
  bool hold_expired = false;
};

/// Opens a held stream when the scope ends, also when a queued call threw: the work behind the
/// hold must not wait for its timeout.
struct open_on_exit {
  stream_gate* gate;
  ~open_on_exit() {
    if (gate) gate->open();
  }
};

class gpu_timer {
 public:
  explicit gpu_timer(cudaStream_t stream) : stream_(stream) {}

  cudaStream_t stream() const noexcept { return stream_; }

  /// GPU time of `body` (medians of per-run event pairs). `hold` = false for bodies that
  /// synchronise (SpGEMM learns nnz(C) on the host): their events then include host gaps.
  template <class Body>
  stats kernel(Body&& body, const timing_options& o, bool hold = true) {
    for (int i = 0; i < o.warmups; ++i)
      body();
    sync();
    ensure_events(static_cast<std::size_t>(std::max(o.batch, 1)));
    std::vector<double> ms;
    bool expired = false;
    for (int first = 0; first < o.reps; first += o.batch) {
      const int count = std::min(o.batch, o.reps - first);
      if (hold) gate_.hold(stream_);
      {
        const open_on_exit guard{hold ? &gate_ : nullptr};
        for (int i = 0; i < count; ++i) {
          if (o.flush_l2) flush_l2();
          check_cuda(cudaEventRecord(start_[i].get(), stream_), "cudaEventRecord");
          body();
          check_cuda(cudaEventRecord(stop_[i].get(), stream_), "cudaEventRecord");
        }
      }
      sync();
      if (hold && gate_.expired()) expired = true;
      for (int i = 0; i < count; ++i) {
        float t = 0;
        check_cuda(cudaEventElapsedTime(&t, start_[i].get(), stop_[i].get()),
                   "cudaEventElapsedTime");
        ms.push_back(t);
      }
    }
    stats s = summarize(std::move(ms));
    s.hold_expired = expired;
    return s;
  }

  /// End-to-end time per call: host clock around the call and a synchronisation.
  template <class Body>
  stats wall(Body&& body, int reps) {
    body();
    sync();
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      body();
      sync();
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    return summarize(std::move(ms));
  }

  /// Host cost of `calls` calls of `body` (see host_cost). Warms up with `batch` calls.
  template <class Body>
  host_cost host_loop(Body&& body, int calls, int batch) {
    using clock = std::chrono::steady_clock;
    host_cost cost;
    for (int i = 0; i < batch; ++i)
      body();
    sync();
    // Held: the GPU does nothing until the batch is queued, so the queue never fills up.
    double held = 0;
    int done = 0;
    while (done < calls) {
      const int count = std::min(batch, calls - done);
      gate_.hold(stream_);
      auto t0 = clock::now();
      auto t1 = t0;
      {
        const open_on_exit guard{&gate_};
        t0 = clock::now();
        for (int i = 0; i < count; ++i)
          body();
        t1 = clock::now();
      }
      sync();
      if (gate_.expired()) cost.hold_expired = true;
      held += std::chrono::duration<double, std::micro>(t1 - t0).count();
      done += count;
    }
    cost.held_us = held / calls;
    // Free-running: time the loop, then synchronise outside it.
    const auto t0 = clock::now();
    for (int i = 0; i < calls; ++i)
      body();
    const auto t1 = clock::now();
    sync();
    const auto t2 = clock::now();
    cost.loop_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
    cost.wall_us = std::chrono::duration<double, std::micro>(t2 - t0).count() / calls;
    return cost;
  }

  /// Device copy bandwidth (GB/s, bytes read + bytes written) of a 512 MiB device-to-device
  /// copy: the bound SpMV and SpMM efficiencies are quoted against.
  double copy_bandwidth_gbps() {
    const std::size_t bytes = std::size_t(512) << 20;
    raw_buffer from(bytes, stream_);
    raw_buffer to(bytes, stream_);
    check_cuda(cudaMemsetAsync(from.get(), 1, bytes, stream_), "cudaMemsetAsync");
    timing_options o;
    const stats s = kernel(
        [&] {
          check_cuda(
              cudaMemcpyAsync(to.get(), from.get(), bytes, cudaMemcpyDeviceToDevice, stream_),
              "cudaMemcpyAsync");
        },
        o);
    return 2.0 * static_cast<double>(bytes) / (s.median * 1e-3) / 1e9;
  }

  void sync() { check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

 private:
  void ensure_events(std::size_t n) {
    while (start_.size() < n) {
      start_.emplace_back();
      stop_.emplace_back();
      check_cuda(cudaEventCreate(start_.back().out()), "cudaEventCreate");
      check_cuda(cudaEventCreate(stop_.back().out()), "cudaEventCreate");
    }
  }
  void flush_l2() {
    if (!flush_.get()) {
      const std::size_t l2 = default_context().properties().l2_cache_bytes;
      flush_ = raw_buffer(2 * std::max<std::size_t>(l2, std::size_t(64) << 20), stream_);
    }
    check_cuda(cudaMemsetAsync(flush_.get(), ++flush_value_ & 0xff, flush_.bytes(), stream_),
               "cudaMemsetAsync (L2 flush)");
  }

  cudaStream_t stream_;
  stream_gate gate_;
  std::vector<cuda_event> start_;
  std::vector<cuda_event> stop_;
  raw_buffer flush_;
  int flush_value_ = 0;
};

}  // namespace spade::bench
