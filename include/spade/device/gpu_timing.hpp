// GPU time of host-issued work on a context's stream (lib/core/gpu_timing.cu), for
// spade::tune_spmm.
#pragma once

#include <functional>
#include <vector>

#include "spade/core/context.hpp"

namespace spade::device {

/// What gpu_run_milliseconds measured.
struct gpu_run_times {
  std::vector<double> milliseconds;  ///< one per run, in order
  /// False when the stream could not be held until every run was queued (a run synchronised,
  /// or queueing took longer than the hold's 2 s): the times then include the host's gaps.
  bool held = true;
};

/// Queues `runs` calls of run() on ctx's stream behind a one-thread kernel that holds the stream
/// until all of them are queued, each call between two events, then releases the stream and
/// waits for it. The times are the GPU's alone, without the host's launch work between calls
/// (which would decide products of a few microseconds). run() must only queue work on ctx's
/// stream. Throws cuda_error (the stream is released first when run() throws).
gpu_run_times gpu_run_milliseconds(context& ctx, const std::function<void()>& run, int runs);

}  // namespace spade::device
