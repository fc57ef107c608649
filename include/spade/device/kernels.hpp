// Declarations of Spade's own product kernels defined in lib/kernels (float and double).
#pragma once

#include <string>

#include "spade/formats/dense.hpp"
#include "spade/formats/gcoo.hpp"

/// Like the vendor calls: each runs on the context that owns its operands, asynchronously,
/// and throws dimension_mismatch / cuda_error / out_of_memory naming what failed.
namespace spade::device {

/// How gcoo_spmm ran (for explain and the benchmark): lanes working on one group, elements of
/// B each lane loads per access (16-byte loads when > 1), and how the groups were cut into
/// work items.
struct gcoo_spmm_launch {
  int lanes_per_group = 0;
  int vector_width = 0;
  int column_tiles = 0;
  int work_items = 0;
  int split_groups = 0;   ///< groups longer than split_entries, shared by several items
  int split_entries = 0;  ///< the most entries one work item takes
  std::string describe() const;
};

/// C = alpha·A·B + beta·C, A gcoo, B and C row-major: Spade's Hopper re-design of GCOOSpDM
/// (docs/benchmarks/gcoo.md). beta = 0 ignores C's contents (NaN included). `split_entries`
/// caps the entries one work item takes (0: chosen from the group lengths); returns what it
/// launched.
template <scalar T>
gcoo_spmm_launch gcoo_spmm(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b,
                           T beta, dense<T, gpu, row_major>& c, int split_entries = 0);

/// The same product with a faithful re-implementation of the paper's Algorithm 2 (a block of
/// `block_threads` threads per group and column range, entries staged in shared memory, B
/// reused for consecutive entries of one column): the in-tree baseline. Group size ≤ 32.
template <scalar T>
void gcoo_spmm_paper(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b, T beta,
                     dense<T, gpu, row_major>& c, int block_threads = 128);

}  // namespace spade::device
