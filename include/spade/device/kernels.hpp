// Declarations of Spade's own product kernels defined in lib/kernels (float and double).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spade/device/vendor.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
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
/// is the cut for long groups (0: twice an even share of the entries per resident team, at
/// least 16); it doubles when the partial sums would exceed max(C, 4 M elements). Returns what
/// it launched.
template <scalar T>
gcoo_spmm_launch gcoo_spmm(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b,
                           T beta, dense<T, gpu, row_major>& c, int split_entries = 0);

/// The same product with a faithful re-implementation of the paper's Algorithm 2 (a block of
/// `block_threads` threads per group and column range, entries staged in shared memory, B
/// reused for consecutive entries of one column): the in-tree baseline. Group size ≤ 32.
template <scalar T>
void gcoo_spmm_paper(T alpha, const gcoo<T, gpu>& a, const dense<T, gpu, row_major>& b, T beta,
                     dense<T, gpu, row_major>& c, int block_threads = 128);

/// How ellr_spmv / ellr_spmm ran (for explain and the benchmark).
struct ellr_spmv_launch {
  int threads_per_row = 0;   ///< threads sharing one row (1: the paper's kernel; more: ELLR-T)
  int vectors_per_pass = 0;  ///< right-hand sides the kernel carries (1, 4 or 8)
  bool wide_loads = false;   ///< X's rows read with 16-byte loads
  std::string describe() const;
};

/// Right-hand sides one ellr_spmm pass takes.
inline constexpr index_t ellr_max_vectors = 8;

/// y = alpha·A·x + beta·y with A in ELLPACK-R (docs/benchmarks/ellr.md): `threads_per_row`
/// threads per row (1, 2, 4, 8, 16 or 32; 0: the layout's lanes when it has more than one,
/// else from the row count and the mean row length), each stopping at its row's length; x through
/// the read-only cache; a sliced, sorted A writes y through its row order. beta = 0 ignores y's
/// contents (NaN included). Deterministic.
template <scalar T>
ellr_spmv_launch ellr_spmv(T alpha, const ellr<T, gpu>& a, const vector<T, gpu>& x, T beta,
                           vector<T, gpu>& y, int threads_per_row = 0);

/// Y = alpha·A·X + beta·Y for X with at most ellr_max_vectors columns, either layout: one pass
/// over A for all columns (16-byte loads of X's rows when X is row-major with 4 or 8 aligned
/// columns). Throws dimension_mismatch for wider X.
template <scalar T, layout LX, layout LY>
ellr_spmv_launch ellr_spmm(T alpha, const ellr<T, gpu>& a, const dense<T, gpu, LX>& x, T beta,
                           dense<T, gpu, LY>& y, int threads_per_row = 0);

/// What hash_spgemm did (for explain and the benchmark): the products and nnz(C), rows per bin
/// of each phase with the table size (slots) of each bin — the last bin is the long-row path —
/// and, when timed, each phase's milliseconds.
struct hash_spgemm_report {
  std::int64_t products = 0;
  std::int64_t nnz = 0;
  std::vector<std::int64_t> symbolic_bins;
  std::vector<std::int64_t> numeric_bins;
  std::vector<unsigned> symbolic_tables;
  std::vector<unsigned> numeric_tables;
  std::int64_t long_rows[2] = {0, 0};     ///< symbolic, numeric
  std::int64_t long_batches[2] = {0, 0};  ///< batches of dense accumulators they took
  std::size_t workspace_bytes = 0;        ///< the long-row workspace at its largest
  std::vector<std::pair<std::string, double>> phase_ms;
  /// Products per entry of C (the paper's compression ratio); 0 for an empty C.
  double compression_ratio() const {
    return nnz > 0 ? static_cast<double>(products) / static_cast<double>(nnz) : 0.0;
  }
  std::string describe() const;
};

/// C = alpha·A·B, all csr (paper 004, OpSparse, re-sized for the device: docs/spgemm.md): row
/// products counted and binned, a symbolic phase counting each row's columns in shared-memory
/// hash tables, a numeric phase summing the products in tables of (column, value) and writing
/// each row in column order; rows too long for shared memory take dense accumulators in global
/// memory, split across blocks. The input needs no sorted rows; C's rows are sorted. Values of
/// an entry are summed in the order the atomics land, so the last bits may vary between runs.
/// Throws invalid_matrix when nnz(C) exceeds the 32-bit index type and out_of_memory when C
/// (or one long row's accumulator) cannot be allocated. `report`, when given, is filled in;
/// `time_phases` also times each phase (with a synchronisation per phase). Numeric rows of at
/// least `dense_row_min` entries (−1: hash_spgemm_dense_row_min; 0: none beyond those too long
/// for shared memory) that fill at least 1/64 of C's columns take the dense accumulator too.
template <scalar T>
csr<T, gpu> hash_spgemm(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b,
                        hash_spgemm_report* report = nullptr, bool time_phases = false,
                        std::int64_t dense_row_min = -1);

/// Rows of C this long are written from a dense accumulator (sorted by construction) rather
/// than sorted out of a shared-memory table (docs/spgemm.md).
inline constexpr std::int64_t hash_spgemm_dense_row_min = 1024;

/// The setup and symbolic phases alone (no C values): products, nnz(C) and both phases' bins.
template <scalar T>
hash_spgemm_report hash_spgemm_profile(const csr<T, gpu>& a, const csr<T, gpu>& b);

/// Largest rows/cols and nonzeros of a csr operand that the cuSPARSE wrappers (spmv, spmm,
/// transpose) hand to Spade's row-wise kernels instead. cuSPARSE 12.6 returned a zero last row
/// for some 32-row matrices, depending on the calls made before (docs/vendor-bugs.md); at this
/// size one launch without workspace costs about what cuSPARSE does (5.0 against 4.8 µs on
/// bcsstk03, N = 32). The entry bound matters only for operands built unchecked.
inline constexpr index_t rowwise_max_extent = 256;
inline constexpr std::int64_t rowwise_max_nnz = std::int64_t{1} << 16;

/// Whether a rows × cols operand with `nnz` entries goes to the row-wise kernels.
inline bool rowwise_preferred(index_t rows, index_t cols, std::int64_t nnz) noexcept {
  return rows <= rowwise_max_extent && cols <= rowwise_max_extent && nnz <= rowwise_max_nnz;
}

/// y = alpha·op(A)·x + beta·y, a warp per row of A (op = transpose scatters with atomics, so
/// its rounding may vary between runs). beta = 0 ignores y's contents (NaN included).
template <scalar T>
void rowwise_spmv(T alpha, const csr<T, gpu>& a, operation op_a, const vector<T, gpu>& x, T beta,
                  vector<T, gpu>& y);

/// C = alpha·op(A)·B + beta·C for every layout of B and C, a thread per element of C
/// (op = transpose: per element of A·B's rows, with atomics). beta = 0 ignores C's contents.
template <scalar T, layout LB, layout LC>
void rowwise_spmm(T alpha, const csr<T, gpu>& a, operation op_a, const dense<T, gpu, LB>& b, T beta,
                  dense<T, gpu, LC>& c);

/// Aᵀ as csr through Spade's own conversions (expand rows, sort by (column, row)).
template <scalar T>
csr<T, gpu> transpose_by_sort(const csr<T, gpu>& a);

}  // namespace spade::device
