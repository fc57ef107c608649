// spade::cluster over NCCL: per-GPU contexts, grouped send/receive exchanges with a timeout,
// the combine of per-part scalars, and the two small kernels the exchanges need.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "detail/cub_temp.cuh"
#include "detail/cuda_check.hpp"
#include "spade/core/error.hpp"
#include "spade/multi/cluster.hpp"

namespace spade {

namespace {

[[noreturn]] void throw_nccl(ncclResult_t status, ncclComm_t comm, const char* call,
                             const char* doing) {
  std::string text =
      std::string("NCCL error ") + ncclGetErrorString(status) + " from " + call + " while " + doing;
  if (comm) {
    const char* last = ncclGetLastError(comm);
    if (last && *last) text += ": " + std::string(last);
  }
  throw cuda_error(text);
}

#define SPADE_NCCL_TRY(call, comm, doing)                                          \
  do {                                                                             \
    const ncclResult_t spade_nccl_status_ = (call);                                \
    if (spade_nccl_status_ != ncclSuccess && spade_nccl_status_ != ncclInProgress) \
      throw_nccl(spade_nccl_status_, comm, #call, doing);                          \
  } while (0)

/// Makes `device` current for its lifetime and restores the previous current device after, so
/// that code outside (which assumes the default context's device) never sees a changed one.
class device_guard {
 public:
  explicit device_guard(int device) {
    SPADE_CUDA_TRY(cudaGetDevice(&previous_), "reading the current device");
    SPADE_CUDA_TRY(cudaSetDevice(device), "selecting a cluster GPU");
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

/// A non-blocking stream of the current device at the highest priority: packing and NCCL's
/// kernels then take SMs as a concurrent local product's blocks retire, instead of queueing
/// behind all of them.
cudaStream_t communication_stream() {
  int least = 0, greatest = 0;
  SPADE_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest), "reading stream priorities");
  cudaStream_t stream = nullptr;
  SPADE_CUDA_TRY(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest),
                 "creating a communication stream");
  return stream;
}

double default_timeout() {
  if (const char* env = std::getenv("SPADE_NCCL_TIMEOUT")) {
    char* end = nullptr;
    const double seconds = std::strtod(env, &end);
    if (end != env && seconds > 0) return seconds;
  }
  return 300.0;
}

}  // namespace

struct cluster::state {
  int parts = 0;
  std::vector<int> mine;                           // parts this process drives
  std::vector<int> devices;                        // [part] CUDA ordinal (-1: another process's)
  std::vector<std::unique_ptr<context>> contexts;  // [part]
  std::vector<ncclComm_t> comms;                   // [part]
  std::vector<cudaStream_t> comm_streams;          // [part]
  std::vector<cudaEvent_t> events;                 // [part] reused for ordering
  bool one_process = true;
  bool aborted = false;
  bool posted = false;  // an exchange is in flight on the communication streams
  double timeout = default_timeout();

  ~state() {
    int previous = 0;
    cudaGetDevice(&previous);
    for (std::size_t p = 0; p < comms.size(); ++p) {
      if (!comms[p]) continue;
      cudaSetDevice(devices[p]);
      ncclCommDestroy(comms[p]);
    }
    contexts.clear();
    for (std::size_t p = 0; p < comm_streams.size(); ++p) {
      if (devices[p] < 0) continue;
      cudaSetDevice(devices[p]);
      if (events[p]) cudaEventDestroy(events[p]);
      if (comm_streams[p]) cudaStreamDestroy(comm_streams[p]);
    }
    cudaSetDevice(previous);
  }

  /// Aborts every communicator of this process now (ncclCommAbort also stops NCCL kernels
  /// still waiting for a peer) and marks the cluster unusable.
  void abort_all() noexcept {
    aborted = true;
    for (std::size_t p = 0; p < comms.size(); ++p) {
      if (!comms[p]) continue;
      cudaSetDevice(devices[p]);
      ncclCommAbort(comms[p]);
      comms[p] = nullptr;
    }
  }

  context& driven(int part) const {
    if (part < 0 || part >= parts || !contexts[static_cast<std::size_t>(part)])
      throw error("spade::cluster: part " + std::to_string(part) +
                  " is not driven by this process (the cluster has " + std::to_string(parts) +
                  " parts)");
    return *contexts[static_cast<std::size_t>(part)];
  }
  void check_usable() const {
    if (aborted)
      throw cuda_error(
          "spade::cluster: its communicators were aborted after an error or a timeout; make a "
          "new cluster");
  }
};

cluster cluster::local() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw no_device(std::string("spade::cluster::local: no usable CUDA device (") +
                    (status != cudaSuccess ? cudaGetErrorString(status) : "none present") + ")");
  return local(count);
}

cluster cluster::local(int gpus) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    throw no_device(std::string("spade::cluster::local: no usable CUDA device (") +
                    cudaGetErrorString(status) + ")");
  if (gpus < 1)
    throw error("spade::cluster::local: a cluster needs at least one GPU, not " +
                std::to_string(gpus));
  if (gpus > count)
    throw no_device("spade::cluster::local: " + std::to_string(gpus) + " GPUs asked for, " +
                    std::to_string(count) + " present");
  // Spade's exchanges are point-to-point; NVLink multicast (NVLS) is never wanted, and on
  // shared hosts it must stay off. An explicit setting of the user's wins.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // Opening contexts and communicators selects devices; the caller's current one comes back.
  int current = 0;
  SPADE_CUDA_TRY(cudaGetDevice(&current), "reading the current device");
  const device_guard restore(current);
  auto s = std::make_shared<state>();
  s->parts = gpus;
  s->devices.resize(static_cast<std::size_t>(gpus));
  s->contexts.resize(static_cast<std::size_t>(gpus));
  s->comms.assign(static_cast<std::size_t>(gpus), nullptr);
  s->comm_streams.assign(static_cast<std::size_t>(gpus), nullptr);
  s->events.assign(static_cast<std::size_t>(gpus), nullptr);
  for (int p = 0; p < gpus; ++p) {
    const auto i = static_cast<std::size_t>(p);
    s->mine.push_back(p);
    s->devices[i] = p;
    s->contexts[i] = std::make_unique<context>(p);
    const device_guard on(p);
    s->comm_streams[i] = communication_stream();
    SPADE_CUDA_TRY(cudaEventCreateWithFlags(&s->events[i], cudaEventDisableTiming),
                   "creating a cluster event");
  }
  SPADE_NCCL_TRY(ncclCommInitAll(s->comms.data(), gpus, s->devices.data()), nullptr,
                 "creating the cluster's communicators (ncclCommInitAll)");
  return cluster(std::move(s));
}

int cluster::size() const noexcept {
  return state_ ? state_->parts : 0;
}

bool cluster::single_process() const noexcept {
  return !state_ || state_->one_process;
}

const std::vector<int>& cluster::my_parts() const noexcept {
  static const std::vector<int> none;
  return state_ ? state_->mine : none;
}

context& cluster::context_of(int part) const {
  if (!state_) throw error("spade::cluster: an empty cluster has no parts");
  return state_->driven(part);
}

int cluster::device_of(int part) const {
  if (!state_ || part < 0 || part >= state_->parts)
    throw error("spade::cluster: no part " + std::to_string(part));
  return state_->devices[static_cast<std::size_t>(part)];
}

std::string cluster::describe() const {
  if (!state_) return "an empty cluster";
  std::string text = std::to_string(state_->parts) + (state_->parts == 1 ? " GPU" : " GPUs") +
                     (state_->one_process ? ", one process" : ", one process each");
  for (int p : state_->mine) {
    const auto& props = state_->contexts[static_cast<std::size_t>(p)]->properties();
    text += (p == state_->mine.front() ? ": " : ", ") + std::to_string(p) + " = " + props.name +
            " (device " + std::to_string(props.ordinal) + ")";
  }
  return text;
}

void cluster::set_timeout(double seconds) {
  if (!state_) throw error("spade::cluster: an empty cluster has no timeout");
  if (!(seconds > 0))
    throw error("spade::cluster::set_timeout: expected a positive number of seconds");
  state_->timeout = seconds;
}

double cluster::timeout() const noexcept {
  return state_ ? state_->timeout : 0.0;
}

namespace detail {

nccl_id new_nccl_id() {
  static_assert(sizeof(ncclUniqueId) == sizeof(nccl_id), "NCCL's id is 128 bytes");
  ncclUniqueId id;
  SPADE_NCCL_TRY(ncclGetUniqueId(&id), nullptr, "making a cluster id (ncclGetUniqueId)");
  nccl_id bytes;
  std::memcpy(bytes.data(), &id, sizeof id);
  return bytes;
}

int visible_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

device_uuid uuid_of(int device) noexcept {
  device_uuid uuid{};
  cudaDeviceProp properties;
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    cudaGetLastError();
    return uuid;
  }
  static_assert(sizeof(properties.uuid) == sizeof(uuid), "a CUDA UUID is 16 bytes");
  std::memcpy(uuid.data(), &properties.uuid, sizeof uuid);
  return uuid;
}

cluster join_cluster(int rank, int ranks, const nccl_id& id, int device) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw error("spade::cluster::from_mpi: rank " + std::to_string(rank) + " of " +
                std::to_string(ranks));
  const int count = visible_device_count();
  if (device < 0 || device >= count)
    throw no_device("spade::cluster::from_mpi: rank " + std::to_string(rank) + " wants device " +
                    std::to_string(device) + ", " + std::to_string(count) +
                    " present (a node needs a GPU per rank)");
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  // This rank's GPU stays current afterwards: restoring device 0 would open a context on a GPU
  // the rank does not use.
  SPADE_CUDA_TRY(cudaSetDevice(device), "selecting this rank's GPU");
  auto s = std::make_shared<cluster::state>();
  s->parts = ranks;
  s->one_process = ranks == 1;
  const auto n = static_cast<std::size_t>(ranks);
  const auto me = static_cast<std::size_t>(rank);
  s->devices.assign(n, -1);
  s->contexts.resize(n);
  s->comms.assign(n, nullptr);
  s->comm_streams.assign(n, nullptr);
  s->events.assign(n, nullptr);
  s->mine.push_back(rank);
  s->devices[me] = device;
  s->contexts[me] = std::make_unique<context>(device);
  {
    const device_guard on(device);
    s->comm_streams[me] = communication_stream();
    SPADE_CUDA_TRY(cudaEventCreateWithFlags(&s->events[me], cudaEventDisableTiming),
                   "creating a cluster event");
    ncclUniqueId unique;
    std::memcpy(&unique, id.data(), sizeof unique);
    SPADE_NCCL_TRY(ncclCommInitRank(&s->comms[me], ranks, unique, rank), nullptr,
                   "joining the cluster's communicator (ncclCommInitRank)");
  }
  return cluster(std::move(s));
}

namespace {
cluster::state& state_of(const cluster& where) {
  const auto& handle = where.handle();
  if (!handle) throw error("spade::cluster: the cluster is empty");
  handle->check_usable();
  return *handle;
}
}  // namespace

void order_communication(const cluster& where) {
  auto& s = state_of(where);
  for (int part : s.mine) {
    const auto p = static_cast<std::size_t>(part);
    const device_guard on(s.devices[p]);
    SPADE_CUDA_TRY(cudaEventRecord(s.events[p], static_cast<cudaStream_t>(s.contexts[p]->stream())),
                   "ordering communication after the part's work");
    SPADE_CUDA_TRY(cudaStreamWaitEvent(s.comm_streams[p], s.events[p], 0),
                   "ordering communication after the part's work");
  }
}

void post_exchange(const cluster& where, const std::vector<part_exchange>& parts,
                   bool after_context_work) {
  auto& s = state_of(where);
  bool any = false;
  for (const part_exchange& x : parts)
    for (const outgoing& t : x.sends)
      any = any || t.bytes;
  for (const part_exchange& x : parts)
    for (const incoming& t : x.receives)
      any = any || t.bytes;
  if (!any) return;  // nothing moves (one part, or no part reads another's rows)
  s.posted = true;
  // The communication stream of each part starts after the work queued on its context stream
  // (the packed rows must be there).
  for (const part_exchange& x : parts) {
    if (!after_context_work) break;
    const auto p = static_cast<std::size_t>(x.part);
    context& ctx = s.driven(x.part);
    const device_guard on(s.devices[p]);
    SPADE_CUDA_TRY(cudaEventRecord(s.events[p], static_cast<cudaStream_t>(ctx.stream())),
                   "ordering an exchange after the part's work");
    SPADE_CUDA_TRY(cudaStreamWaitEvent(s.comm_streams[p], s.events[p], 0),
                   "ordering an exchange after the part's work");
  }
  SPADE_NCCL_TRY(ncclGroupStart(), nullptr, "starting an exchange");
  try {
    for (const part_exchange& x : parts) {
      const auto p = static_cast<std::size_t>(x.part);
      for (const outgoing& t : x.sends)
        if (t.bytes)
          SPADE_NCCL_TRY(
              ncclSend(t.data, t.bytes, ncclUint8, t.peer, s.comms[p], s.comm_streams[p]),
              s.comms[p], "sending a part's rows");
      for (const incoming& t : x.receives)
        if (t.bytes)
          SPADE_NCCL_TRY(
              ncclRecv(t.data, t.bytes, ncclUint8, t.peer, s.comms[p], s.comm_streams[p]),
              s.comms[p], "receiving a part's rows");
    }
  } catch (...) {
    // The calls queued before the refused one would never be matched: nothing on these
    // communicators can complete now.
    ncclGroupEnd();
    s.abort_all();
    throw;
  }
  SPADE_NCCL_TRY(ncclGroupEnd(), nullptr, "posting an exchange (ncclGroupEnd)");
}

void join_exchange(const cluster& where) {
  auto& s = state_of(where);
  if (!s.posted) return;
  s.posted = false;
  for (int part : s.mine) {
    const auto p = static_cast<std::size_t>(part);
    const device_guard on(s.devices[p]);
    SPADE_CUDA_TRY(cudaEventRecord(s.events[p], s.comm_streams[p]), "marking an exchange's end");
    SPADE_CUDA_TRY(
        cudaStreamWaitEvent(static_cast<cudaStream_t>(s.contexts[p]->stream()), s.events[p], 0),
        "ordering a part's work after an exchange");
  }
}

void synchronize(const cluster& where) {
  auto& s = state_of(where);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    bool busy = false;
    for (int part : s.mine) {
      const auto p = static_cast<std::size_t>(part);
      const device_guard on(s.devices[p]);
      for (cudaStream_t stream :
           {s.comm_streams[p], static_cast<cudaStream_t>(s.contexts[p]->stream())}) {
        const cudaError_t status = cudaStreamQuery(stream);
        if (status == cudaErrorNotReady)
          busy = true;
        else if (status != cudaSuccess)
          throw_cuda(status, "cudaStreamQuery", "waiting for a part of a multi_gpu operation");
      }
      ncclResult_t async = ncclSuccess;
      SPADE_NCCL_TRY(ncclCommGetAsyncError(s.comms[p], &async), s.comms[p],
                     "checking a communicator");
      if (async != ncclSuccess && async != ncclInProgress) {
        std::string text = ncclGetErrorString(async);
        if (const char* last = ncclGetLastError(s.comms[p]); last && *last)
          text += ": " + std::string(last);
        s.abort_all();
        throw cuda_error("NCCL error " + text + " in part " + std::to_string(part) +
                         "'s communication (ncclCommGetAsyncError); the communicators were "
                         "aborted");
      }
    }
    if (!busy) return;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > s.timeout) {
      s.abort_all();
      throw cuda_error("spade::cluster: communication did not finish within " +
                       std::to_string(s.timeout) +
                       " s (a GPU or a peer process failed or hangs); the communicators were "
                       "aborted");
    }
    // Spin (yielding) through the first milliseconds: a sleep is never shorter than the timer
    // slack (about 50 us on Linux), which would dominate a short product.
    if (waited < 0.002)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

double combine_parts(const cluster& where, const std::vector<double>& mine, part_combine how) {
  auto& s = state_of(where);
  if (mine.size() != s.mine.size())
    throw error("spade::cluster: " + std::to_string(mine.size()) + " values for " +
                std::to_string(s.mine.size()) + " parts");
  const auto fold = [how](double a, double b) {
    if (how == part_combine::sum) return a + b;
    if (std::isnan(a) || std::isnan(b)) return std::nan("");
    return how == part_combine::max ? std::max(a, b) : std::min(a, b);
  };
  if (s.one_process) {
    double total = mine.front();
    for (std::size_t i = 1; i < mine.size(); ++i)
      total = fold(total, mine[i]);
    return total;
  }
  // Parts in other processes: one all-reduce over a device double per part of this process.
  const ncclRedOp_t op = how == part_combine::sum   ? ncclSum
                         : how == part_combine::max ? ncclMax
                                                    : ncclMin;
  std::vector<double*> cells(mine.size(), nullptr);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    context& ctx = s.driven(s.mine[i]);
    cells[i] = static_cast<double*>(ctx.allocate(sizeof(double), "a combined value"));
    ctx.copy_to_device(cells[i], &mine[i], sizeof(double));
  }
  SPADE_NCCL_TRY(ncclGroupStart(), nullptr, "starting an all-reduce");
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const auto p = static_cast<std::size_t>(s.mine[i]);
    SPADE_NCCL_TRY(ncclAllReduce(cells[i], cells[i], 1, ncclFloat64, op, s.comms[p],
                                 static_cast<cudaStream_t>(s.contexts[p]->stream())),
                   s.comms[p], "combining per-part values");
  }
  SPADE_NCCL_TRY(ncclGroupEnd(), nullptr, "combining per-part values (ncclGroupEnd)");
  synchronize(where);
  double total = 0;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    context& ctx = s.driven(s.mine[i]);
    if (i == 0) ctx.copy_to_host(&total, cells[i], sizeof(double));
    ctx.deallocate(cells[i], sizeof(double));
  }
  return total;
}

std::vector<std::vector<std::int64_t>> exchange_counts(
    const cluster& where, const std::vector<std::vector<std::int64_t>>& to) {
  auto& s = state_of(where);
  const auto parts = static_cast<std::size_t>(s.parts);
  if (to.size() != s.mine.size())
    throw error("spade::cluster: counts for " + std::to_string(to.size()) + " parts, " +
                std::to_string(s.mine.size()) + " driven here");
  // k numbers per peer, the same k from every part.
  const std::size_t k = to.empty() ? 1 : to.front().size() / std::max<std::size_t>(parts, 1);
  const std::size_t width = parts * k;
  std::vector<std::vector<std::int64_t>> from(to.size(), std::vector<std::int64_t>(width, 0));
  std::vector<std::int64_t*> out(to.size()), in(to.size());
  std::vector<part_exchange> exchange(to.size());
  const std::size_t bytes = width * sizeof(std::int64_t);
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (k == 0 || to[i].size() != width)
      throw error("spade::cluster: the same number of counts per part expected from every part");
    const int part = s.mine[i];
    context& ctx = s.driven(part);
    out[i] = static_cast<std::int64_t*>(ctx.allocate(bytes, "counts"));
    in[i] = static_cast<std::int64_t*>(ctx.allocate(bytes, "counts"));
    ctx.copy_to_device(out[i], to[i].data(), bytes);
    exchange[i].part = part;
    for (std::size_t q = 0; q < parts; ++q) {
      if (static_cast<int>(q) == part) continue;
      exchange[i].sends.push_back({static_cast<int>(q), out[i] + q * k, k * sizeof(std::int64_t)});
      exchange[i].receives.push_back(
          {static_cast<int>(q), in[i] + q * k, k * sizeof(std::int64_t)});
    }
  }
  post_exchange(where, exchange);
  join_exchange(where);
  synchronize(where);
  for (std::size_t i = 0; i < to.size(); ++i) {
    const int part = s.mine[i];
    context& ctx = s.driven(part);
    ctx.copy_to_host(from[i].data(), in[i], bytes);
    for (std::size_t j = 0; j < k; ++j)
      from[i][static_cast<std::size_t>(part) * k + j] =
          to[i][static_cast<std::size_t>(part) * k + j];
    ctx.deallocate(out[i], bytes);
    ctx.deallocate(in[i], bytes);
  }
  return from;
}

namespace {

template <class T>
__global__ void pack_rows_kernel(const T* __restrict__ src, index_t rows, index_t width,
                                 bool row_major, const index_t* __restrict__ idx,
                                 std::int64_t total, T* __restrict__ dst) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / width;
    const std::int64_t j = t - i * width;
    const std::int64_t row = idx[i];
    dst[t] = row_major ? src[row * width + j] : src[j * std::int64_t{rows} + row];
  }
}

template <class T>
__global__ void scatter_add_rows_kernel(const T* __restrict__ src, std::int64_t total,
                                        index_t width, const index_t* __restrict__ rows,
                                        T* __restrict__ dst, index_t dst_rows, bool row_major) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / width;
    const std::int64_t j = t - i * width;
    const std::int64_t row = rows[i];
    dst[row_major ? row * width + j : j * std::int64_t{dst_rows} + row] += src[t];
  }
}

__global__ void add_to_indices_kernel(index_t* p, std::int64_t count, std::int64_t delta) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < count;
       t += std::int64_t{gridDim.x} * blockDim.x)
    p[t] = static_cast<index_t>(p[t] + delta);
}

__global__ void fill_interleaved_rows_kernel(std::int64_t parts, std::int64_t rows,
                                             index_t* __restrict__ out) {
  const std::int64_t count = parts * rows;
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < count;
       t += std::int64_t{gridDim.x} * blockDim.x)
    out[t] = static_cast<index_t>((t % parts) * rows + t / parts);
}

__global__ void copy_strided_kernel(const index_t* __restrict__ src, std::int64_t stride,
                                    std::int64_t count, index_t* __restrict__ dst) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < count;
       t += std::int64_t{gridDim.x} * blockDim.x)
    dst[t] = src[t * stride];
}

// out_ptr[i + 1] = the length of row idx[i]; out_ptr[0] = 0 (a scan then makes them pointers).
__global__ void gather_row_lengths_kernel(const index_t* __restrict__ ptr,
                                          const index_t* __restrict__ idx, index_t count,
                                          index_t* __restrict__ out_ptr) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < count;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const index_t row = idx[t];
    out_ptr[t + 1] = ptr[row + 1] - ptr[row];
    if (t == 0) out_ptr[0] = 0;
  }
}

// A warp per gathered row: its entries copied to out_ptr[i], lanes side by side.
template <class T>
__global__ void gather_row_entries_kernel(const index_t* __restrict__ ptr,
                                          const index_t* __restrict__ col,
                                          const T* __restrict__ val,
                                          const index_t* __restrict__ idx, index_t count,
                                          const index_t* __restrict__ out_ptr,
                                          index_t* __restrict__ out_col, T* __restrict__ out_val) {
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t i = (blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x) / 32; i < count;
       i += warps) {
    const index_t row = idx[i];
    const std::int64_t from = ptr[row], length = ptr[row + 1] - from, to = out_ptr[i];
    for (std::int64_t k = lane; k < length; k += 32) {
      out_col[to + k] = col[from + k];
      out_val[to + k] = val[from + k];
    }
  }
}

unsigned blocks_for(std::int64_t n, const context& ctx) {
  const std::int64_t wanted = (n + 255) / 256;
  const std::int64_t most = std::int64_t{ctx.properties().sm_count} * 8;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(wanted, most)));
}

}  // namespace

template <scalar T>
void pack_rows(const cluster& where, int part, const T* src, index_t rows, index_t width,
               bool row_major, const index_t* idx, index_t count, T* dst) {
  const std::int64_t total = std::int64_t{count} * width;
  if (total == 0) return;
  auto& s = state_of(where);
  const context& ctx = s.driven(part);
  const device_guard on(ctx.properties().ordinal);
  pack_rows_kernel<T>
      <<<blocks_for(total, ctx), 256, 0, s.comm_streams[static_cast<std::size_t>(part)]>>>(
          src, rows, width, row_major, idx, total, dst);
  SPADE_CHECK_LAUNCH("packing the rows a part sends");
}

template <scalar T>
void scatter_add_rows(context& ctx, const T* src, index_t count, index_t width, const index_t* rows,
                      T* dst, index_t dst_rows, bool row_major) {
  const std::int64_t total = std::int64_t{count} * width;
  if (total == 0) return;
  const device_guard on(ctx.properties().ordinal);
  scatter_add_rows_kernel<T>
      <<<blocks_for(total, ctx), 256, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
          src, total, width, rows, dst, dst_rows, row_major);
  SPADE_CHECK_LAUNCH("adding a part's remote product into its rows");
}

void add_to_indices(context& ctx, index_t* p, std::size_t count, std::int64_t delta) {
  if (count == 0 || delta == 0) return;
  const device_guard on(ctx.properties().ordinal);
  const auto n = static_cast<std::int64_t>(count);
  add_to_indices_kernel<<<blocks_for(n, ctx), 256, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
      p, n, delta);
  SPADE_CHECK_LAUNCH("rebasing received row pointers");
}

void fill_interleaved_rows(context& ctx, index_t parts, index_t rows, index_t* out) {
  const std::int64_t count = std::int64_t{parts} * rows;
  if (count == 0) return;
  const device_guard on(ctx.properties().ordinal);
  fill_interleaved_rows_kernel<<<blocks_for(count, ctx), 256, 0,
                                 static_cast<cudaStream_t>(ctx.stream())>>>(parts, rows, out);
  SPADE_CHECK_LAUNCH("ordering a transpose's received rows for the merge");
}

void copy_strided(context& ctx, const index_t* src, std::size_t stride, std::size_t count,
                  index_t* dst) {
  if (count == 0) return;
  const device_guard on(ctx.properties().ordinal);
  const auto n = static_cast<std::int64_t>(count);
  copy_strided_kernel<<<blocks_for(n, ctx), 256, 0, static_cast<cudaStream_t>(ctx.stream())>>>(
      src, static_cast<std::int64_t>(stride), n, dst);
  SPADE_CHECK_LAUNCH("picking the merged row pointers of a transpose");
}

std::int64_t gather_row_pointers(context& ctx, const index_t* ptr, const index_t* idx,
                                 index_t count, index_t* out_ptr) {
  if (count == 0) return 0;
  const device_guard on(ctx.properties().ordinal);
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  gather_row_lengths_kernel<<<blocks_for(count, ctx), 256, 0, stream>>>(ptr, idx, count, out_ptr);
  SPADE_CHECK_LAUNCH("measuring the rows a part sends (SpGEMM)");
  cub_run(
      ctx, "summing the sent rows' lengths (cub::DeviceScan)", [&](void* temp, std::size_t& bytes) {
        return cub::DeviceScan::InclusiveSum(temp, bytes, out_ptr + 1, out_ptr + 1, count, stream);
      });
  index_t total = 0;
  ctx.copy_to_host(&total, out_ptr + count, sizeof(index_t));
  return total;
}

template <scalar T>
void gather_row_entries(context& ctx, const index_t* ptr, const index_t* col, const T* val,
                        const index_t* idx, index_t count, const index_t* out_ptr, index_t* out_col,
                        T* out_val) {
  if (count == 0) return;
  const device_guard on(ctx.properties().ordinal);
  gather_row_entries_kernel<T><<<blocks_for(std::int64_t{count} * 32, ctx), 256, 0,
                                 static_cast<cudaStream_t>(ctx.stream())>>>(
      ptr, col, val, idx, count, out_ptr, out_col, out_val);
  SPADE_CHECK_LAUNCH("gathering the rows a part sends (SpGEMM)");
}

template void gather_row_entries<float>(context&, const index_t*, const index_t*, const float*,
                                        const index_t*, index_t, const index_t*, index_t*, float*);
template void gather_row_entries<double>(context&, const index_t*, const index_t*, const double*,
                                         const index_t*, index_t, const index_t*, index_t*,
                                         double*);
template void pack_rows<float>(const cluster&, int, const float*, index_t, index_t, bool,
                               const index_t*, index_t, float*);
template void scatter_add_rows<float>(context&, const float*, index_t, index_t, const index_t*,
                                      float*, index_t, bool);
template void scatter_add_rows<double>(context&, const double*, index_t, index_t, const index_t*,
                                       double*, index_t, bool);
template void pack_rows<double>(const cluster&, int, const double*, index_t, index_t, bool,
                                const index_t*, index_t, double*);

}  // namespace detail

}  // namespace spade
