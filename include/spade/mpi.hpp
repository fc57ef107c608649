// spade::cluster::from_mpi: one GPU per MPI rank (include with <mpi.h> available; link spade::mpi).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/multi/cluster.hpp"

namespace spade {

// Header-only, so that Spade's compiled library never needs MPI: MPI carries NCCL's bootstrap id
// from rank 0 to the others, and everything after is NCCL's.
template <class Comm>
cluster cluster::from_mpi(Comm comm) {
  static_assert(std::is_same_v<Comm, MPI_Comm>,
                "spade::cluster::from_mpi takes an MPI communicator (MPI_Comm)");
  int rank = 0, ranks = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  // The ranks sharing this node take its GPUs in the order of their rank on the node.
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_ranks = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_ranks);
  // A node's ranks take its GPUs by their rank there: GPU node_rank where a rank sees them all,
  // GPU node_rank mod (GPUs seen) where it sees fewer — its own one, where the launcher shows
  // each rank one GPU through CUDA_VISIBLE_DEVICES. Ordinals differ between processes then, so
  // the ranks compare UUIDs: two ranks of a node on one GPU are refused.
  const int gpus = detail::visible_device_count();
  const int device = gpus > 0 ? node_rank % gpus : -1;
  const detail::device_uuid mine = device >= 0 ? detail::uuid_of(device) : detail::device_uuid{};
  std::vector<detail::device_uuid> node_gpus(static_cast<std::size_t>(node_ranks));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, node_gpus.data(),
                static_cast<int>(mine.size()), MPI_BYTE, node);
  MPI_Comm_free(&node);
  const bool has_gpu = device >= 0 && mine != detail::device_uuid{};
  const bool shared = has_gpu && std::count(node_gpus.begin(), node_gpus.end(), mine) > 1;
  const int usable = has_gpu && !shared ? 1 : 0;
  // Every rank learns whether all can go on, so none waits forever for one that threw.
  int all_usable = 0;
  MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, comm);
  if (!all_usable)
    throw no_device(
        "spade::cluster::from_mpi: every rank of a node needs a GPU of its own (here " +
        std::to_string(node_ranks) + " ranks on the node; this rank sees " + std::to_string(gpus) +
        " GPUs" +
        (shared ? " and shares GPU " + std::to_string(device) + " with another rank" : "") +
        "): show each rank every GPU of the node, or one of its own through "
        "CUDA_VISIBLE_DEVICES");
  // Rank 0 makes the id; a failure there is told to every rank, so none waits for an id forever.
  detail::nccl_id id{};
  std::string failure;
  int made = 1;
  if (rank == 0) {
    try {
      id = detail::new_nccl_id();
    } catch (const error& e) {
      failure = e.what();
      made = 0;
    }
  }
  MPI_Bcast(&made, 1, MPI_INT, 0, comm);
  if (!made)
    throw cuda_error("spade::cluster::from_mpi: rank 0 could not make the NCCL id" +
                     (failure.empty() ? std::string() : ": " + failure));
  MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_BYTE, 0, comm);
  return detail::join_cluster(rank, ranks, id, device);
}

}  // namespace spade
