// spade::cluster: the GPUs a multi_gpu object is split over, one context and NCCL rank each.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/scalar.hpp"

namespace spade {

/// A set of GPUs that multi_gpu objects are split over: part p of every such object lives on
/// GPU p of the cluster, in that GPU's own context (stream, memory pool, library handles), and
/// the parts talk through one NCCL communicator. Copies share the GPUs (a handle); operands of
/// one expression must come from the same cluster. docs/multi-gpu.md.
class cluster {
 public:
  /// No GPUs: distributing onto it throws spade::error.
  cluster() = default;
  /// Every GPU this process sees, driven by this process (ncclCommInitAll). Throws
  /// spade::no_device when there is none.
  static cluster local();
  /// The first `gpus` GPUs this process sees (gpus >= 1). Throws spade::no_device when fewer
  /// are present, spade::cuda_error (with NCCL's text) when the communicator fails.
  static cluster local(int gpus);

  /// One GPU per rank of the MPI communicator `comm` (an MPI_Comm): the ranks on one node take
  /// its GPUs in order of their rank there; NCCL's bootstrap id travels by MPI_Bcast. Collective
  /// over `comm`. Defined in <spade/mpi.hpp> (link spade::mpi). Throws spade::no_device when a
  /// node has more ranks than GPUs, spade::cuda_error (NCCL's text) when the communicator fails.
  template <class Comm>
  static cluster from_mpi(Comm comm);

  /// GPUs (parts) in all.
  int size() const noexcept;
  /// True when this process drives every part (local()); false for from_mpi with 2+ ranks.
  bool single_process() const noexcept;
  /// The parts this process drives, in increasing order (all of them for local()).
  const std::vector<int>& my_parts() const noexcept;
  /// The context of part `part` (one this process drives; throws spade::error otherwise).
  context& context_of(int part) const;
  /// The CUDA device ordinal of part `part`.
  int device_of(int part) const;
  /// "2 GPUs, one process: 0 = NVIDIA H100 80GB HBM3 (device 0), 1 = ..." for explain and errors.
  std::string describe() const;
  /// Seconds a wait for communication may last before the communicators are aborted and
  /// spade::cuda_error is thrown (a peer that died or hung); default 300, or $SPADE_NCCL_TIMEOUT.
  void set_timeout(double seconds);
  double timeout() const noexcept;

  /// The same GPUs and communicator (copies of one cluster compare equal).
  bool operator==(const cluster& other) const noexcept { return state_ == other.state_; }

  /// The shared state (opaque outside lib/).
  struct state;
  explicit cluster(std::shared_ptr<state> s) : state_(std::move(s)) {}
  const std::shared_ptr<state>& handle() const noexcept { return state_; }

 private:
  std::shared_ptr<state> state_;
};

namespace detail {

/// One send of an exchange: `bytes` bytes of device memory of the posting part, to `peer`.
struct outgoing {
  int peer = 0;
  const void* data = nullptr;
  std::size_t bytes = 0;
};
/// One receive of an exchange: `bytes` bytes from `peer` into device memory of the posting part.
struct incoming {
  int peer = 0;
  void* data = nullptr;
  std::size_t bytes = 0;
};

/// What one part of this process sends and receives in an exchange. Between two parts, the
/// n-th send of one matches the n-th receive of the other, so both list them in one order.
struct part_exchange {
  int part = 0;
  std::vector<outgoing> sends;
  std::vector<incoming> receives;
};

/// Posts the transfers (one NCCL group of sends and receives) on each part's communication
/// stream, ordered after the work already queued on the part's context stream; returns without
/// waiting. Throws cuda_error with NCCL's text when NCCL refuses.
/// With `after_context_work` false the communication streams are not ordered again: the caller
/// did so earlier (order_communication) and has queued work on the context streams since that
/// the exchange need not wait for.
void post_exchange(const cluster& where, const std::vector<part_exchange>& parts,
                   bool after_context_work = true);
/// Orders each driven part's communication stream after the work queued so far on its context
/// stream (what an exchange will read is ready there), so that work queued on the context
/// streams afterwards (a local product) runs beside the exchange.
void order_communication(const cluster& where);
/// Orders each driven part's context stream after its communication stream: work queued on the
/// part afterwards sees what the exchange received.
void join_exchange(const cluster& where);
/// Waits on the host for every driven part's streams and communicator. Throws cuda_error with
/// the CUDA or NCCL error text, or after the cluster's timeout (the communicators are aborted:
/// the cluster cannot be used afterwards).
void synchronize(const cluster& where);
/// Combines one value per driven part over all parts of the cluster: sums (in part order when
/// one process drives every part, so the result is the same on every run), or max / min (NaN
/// wins). With parts in other processes: one ncclAllReduce.
enum class part_combine { sum, max, min };
double combine_parts(const cluster& where, const std::vector<double>& mine, part_combine how);

/// NCCL's bootstrap id (ncclUniqueId), as bytes a host program can broadcast.
using nccl_id = std::array<char, 128>;
/// A new id (ncclGetUniqueId), made by one rank and sent to the others.
nccl_id new_nccl_id();
/// The GPUs this process sees (0 without CUDA or without a device).
int visible_device_count() noexcept;
/// A GPU's UUID (cudaDeviceProp::uuid), the same in every process that sees it whatever its
/// ordinal there; all zero when `device` cannot be queried.
using device_uuid = std::array<unsigned char, 16>;
device_uuid uuid_of(int device) noexcept;
/// This process's part of a cluster of `ranks` processes, one GPU each: rank `rank` on CUDA
/// device `device`, joined through `id` (ncclCommInitRank; collective over the ranks).
cluster join_cluster(int rank, int ranks, const nccl_id& id, int device);

/// Small per-peer numbers exchanged between every pair of parts: to[slot][q] goes from this
/// process's slot-th part to part q; the result's [slot][q] is what part q sent to it (a part's
/// own entry is copied). With k numbers per peer (every to[slot] of k · parts numbers), peer q's
/// are [q·k, q·k + k), in one exchange. Synchronous.
std::vector<std::vector<std::int64_t>> exchange_counts(
    const cluster& where, const std::vector<std::vector<std::int64_t>>& to);

/// dst[i · width + j] = element (idx[i], j) of the rows × width array `src` (row-major when
/// `row_major`, else column-major), for i < count: the rows part `part` sends in a halo
/// exchange, packed row after row, on the part's communication stream.
template <scalar T>
void pack_rows(const cluster& where, int part, const T* src, index_t rows, index_t width,
               bool row_major, const index_t* idx, index_t count, T* dst);
/// Element (rows[i], j) of the dst_rows × width array `dst` (row-major when `row_major`, else
/// column-major) += src[i · width + j], for i < count (rows distinct): a part's remote product
/// added into the rows of its result that read the halo. On ctx's stream.
template <scalar T>
void scatter_add_rows(context& ctx, const T* src, index_t count, index_t width, const index_t* rows,
                      T* dst, index_t dst_rows, bool row_major);
/// p[i] += delta for i < count, on ctx's stream (rebasing received row pointers).
void add_to_indices(context& ctx, index_t* p, std::size_t count, std::int64_t delta);
/// out[i · parts + p] = p · rows + i for p < parts, i < rows, on ctx's stream: the order in
/// which a transpose's part merges the slices it received (formats/partition.hpp's
/// interleaved_rows, made on the GPU).
void fill_interleaved_rows(context& ctx, index_t parts, index_t rows, index_t* out);
/// dst[i] = src[i · stride] for i < count, on ctx's stream (a transpose's merged row pointers,
/// every `stride`-th of the interleaved slices' pointers).
void copy_strided(context& ctx, const index_t* src, std::size_t stride, std::size_t count,
                  index_t* dst);
/// Rows idx[0..count) of a csr with row pointers `ptr` (a part's rows that SpGEMM sends):
/// out_ptr (count + 1 entries) gets their row pointers as one csr, from 0, on ctx's stream; the
/// entries they hold are read back and returned (synchronises ctx's stream).
std::int64_t gather_row_pointers(context& ctx, const index_t* ptr, const index_t* idx,
                                 index_t count, index_t* out_ptr);
/// The columns and values of those rows (col, val of the same csr) at out_ptr's offsets, in
/// their order, on ctx's stream.
template <scalar T>
void gather_row_entries(context& ctx, const index_t* ptr, const index_t* col, const T* val,
                        const index_t* idx, index_t count, const index_t* out_ptr, index_t* out_col,
                        T* out_val);

}  // namespace detail

}  // namespace spade
