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
#include "spade/formats/tiled.hpp"
#include "spade/plan/facts.hpp"

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
  int threads_per_row = 0;    ///< threads sharing one row (1: the paper's kernel; more: ELLR-T)
  int vectors_per_pass = 0;   ///< right-hand sides the kernel carries (1, 2, 4, 8, 16 or 32)
  bool wide_loads = false;    ///< X's rows read with 16-byte loads
  bool paired_loads = false;  ///< X's rows read in element pairs (row-major X of other widths)
  /// Threads that split one row's columns of X among them, each summing its own piece of
  /// vectors_per_pass / column_groups columns (1: one thread sums them all).
  int column_groups = 1;
  std::string describe() const;
};

/// Right-hand sides one ellr_spmm pass takes (plan/facts.hpp).
using plan::ellr_max_vectors;

/// y = alpha·A·x + beta·y with A in ELLPACK-R (docs/benchmarks/ellr.md): `threads_per_row`
/// threads per row (1, 2, 4, 8, 16 or 32; 0: the layout's lanes when it has more than one,
/// else from the row count and the mean row length), each stopping at its row's length; x through
/// the read-only cache; a sliced, sorted A writes y through its row order. beta = 0 ignores y's
/// contents (NaN included). Deterministic.
template <scalar T>
ellr_spmv_launch ellr_spmv(T alpha, const ellr<T, gpu>& a, const vector<T, gpu>& x, T beta,
                           vector<T, gpu>& y, int threads_per_row = 0);

/// Y = alpha·A·X + beta·Y for X with at most detail::ellr_max_split_vectors (32) columns, either
/// layout: one pass over A for all columns, `threads_per_row` as for ellr_spmv. X's rows are read
/// with 16-byte loads when X is row-major with 4 or 8 aligned columns (2 in double), else in
/// element pairs when it is row-major (an odd width takes one single load per row besides), else
/// one element at a time. `column_groups` (1, 2 or 4) threads split X's columns, each reading and
/// summing its own piece of the pass: 2 to 8 columns, and at most 32 threads a row in all; 0:
/// detail::ellr_column_groups (past 8 columns one thread per 8, 4 threads of 4 in double at
/// 9–16; else 2 for 8 columns of a row-major X at one thread per row in float, up to 16 in
/// double, else 1). Past 8 columns a piece that X's row fills only in part reads up to its last
/// column, in 16-byte loads where the rows are whole 16-byte vectors (e.g. 12 floats), else in
/// float pairs where they are even. With threads_per_row 0 the layout's lanes shrink to fit the
/// split in a warp, and past 8 columns halve on matrices of
/// spade::tuning().ellr_wide_half_threads_min_rows rows or more. The planner hands ellr at most
/// ellr_max_vectors (16) columns, past 8 only 16 (and 12 in float)
/// (docs/benchmarks/spmm-ellr-12-2026-11-29.md).
/// Throws dimension_mismatch for wider X, invalid_matrix for a split it cannot make.
template <scalar T, layout LX, layout LY>
ellr_spmv_launch ellr_spmm(T alpha, const ellr<T, gpu>& a, const dense<T, gpu, LX>& x, T beta,
                           dense<T, gpu, LY>& y, int threads_per_row = 0, int column_groups = 0);

/// What hash_spgemm did (for explain and the benchmark): the products and nnz(C); the rows of at
/// most 32 products sorted in registers, per group width (rows of at most that many products);
/// for the other rows, rows per bin of each phase with the table size (slots) of each bin — the
/// last bin is the long-row path — and, when timed, each phase's milliseconds.
struct hash_spgemm_report {
  std::int64_t products = 0;
  std::int64_t nnz = 0;
  std::vector<std::int64_t> sorted_rows;
  std::vector<int> sorted_widths;
  /// Those of 17–32 products were summed once, in the symbolic phase, and kept in a staging area
  /// until C's offsets were known (false: none such, no memory for it, or no values asked for;
  /// summed again in the numeric phase then).
  bool sorted_staged = false;
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
/// Rows of at most 32 products are sorted in registers instead (a thread per product); where
/// rows of 17–32 products carry a quarter of the products or more, those are summed once and
/// held in a staging area of 32 (column, value) slots a row until C's offsets are known, memory
/// permitting (docs/spgemm.md, staged rows).
template <scalar T>
csr<T, gpu> hash_spgemm(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b,
                        hash_spgemm_report* report = nullptr, bool time_phases = false,
                        std::int64_t dense_row_min = -1);

/// Rows of C this long are written from a dense accumulator (sorted by construction) rather
/// than sorted out of a shared-memory table (docs/spgemm.md). 0: only rows too long for shared
/// memory. Routing rows of 1024+ entries there (904c28c) made astro-ph 1.48x and cit-HepPh 1.24x
/// slower than the shared tables (H100, spgemm-real-dense-routing-2026-11-23.csv), so it is off.
inline constexpr std::int64_t hash_spgemm_dense_row_min = 0;

/// The setup and symbolic phases alone (no C values): products, nnz(C) and both phases' bins.
template <scalar T>
hash_spgemm_report hash_spgemm_profile(const csr<T, gpu>& a, const csr<T, gpu>& b);

/// The arithmetic tiled_spgemm multiplies tiles in.
enum class tile_arithmetic {
  /// The scalar's own precision: double on fp64 tensor cores (DMMA m8n8k4, fp64 products and
  /// sums); float split into three TF32 products (big·big + big·small + small·big, fp32-level
  /// error) on TF32 tensor cores (m16n8k8).
  native,
  /// The paper's mixed precision: inputs rounded to fp16, products summed in fp32 (m16n8k16).
  /// Lossy (fp16 keeps 11 significant bits and overflows past 65504): only when named.
  fp16,
};

/// What tiled_spgemm did (for explain and the benchmark).
struct tiled_spgemm_report {
  std::int64_t tile_pairs = 0;    ///< (A tile, B tile) pairs meeting on a tile index k
  std::int64_t culled_pairs = 0;  ///< of those, structurally empty ones the bitmaps removed
  std::int64_t tiles = 0;         ///< tiles of C
  std::int64_t nnz = 0;           ///< entries of C
  std::int64_t batches = 0;       ///< task-list batches (tuning().tiled_max_batch_pairs)
  std::vector<std::pair<std::string, double>> phase_ms;
  std::string describe() const;
};

/// C = alpha·A·B with A, B and C in 8×8 bitmap tiles (paper 002, tSparse; docs/tiled.md): a
/// task list of (A tile, B tile) pairs sorted by C tile (CUB radix sort, run-length encode),
/// pairs whose bitmaps cannot meet culled, C's bitmaps from boolean bitmap products (the
/// counting kernel), then a warp per C tile multiplying and summing its pairs on tensor cores
/// in `arithmetic`. C's pattern is the structural product (no cancelled zero is dropped, as in
/// hash_spgemm and Eigen's unpruned product); each tile's pairs are summed in increasing k, so
/// results repeat bit for bit. A task list of more than tuning().tiled_max_batch_pairs pairs
/// runs in batches of whole tile rows of A, and a batch that runs out of memory is split in two
/// and retried (same bits: a C tile's pairs are always in one batch). Throws dimension_mismatch,
/// invalid_matrix when nnz(C) exceeds the 32-bit index type, out_of_memory when one tile row's
/// pairs or C itself does not fit.
template <scalar T>
tiled<T, gpu> tiled_spgemm(T alpha, const tiled<T, gpu>& a, const tiled<T, gpu>& b,
                           tile_arithmetic arithmetic = tile_arithmetic::native,
                           tiled_spgemm_report* report = nullptr, bool time_phases = false);

/// The planner's facts about A·B in 8×8 tiles (plan/facts.hpp).
using plan::tile_census;

/// Counts tile_census for A·B: a warp per row, an entry owns its tile when no earlier entry of
/// the tile's rows lies in it (binary searches in at most 7 sorted rows). One synchronisation.
template <scalar T>
tile_census count_tiles(const csr<T, gpu>& a, const csr<T, gpu>& b);

/// One 8×8 tile product through tiled_spgemm's own fragment loads, tensor-core instruction and
/// stores: `a` and `b` dense row-major tiles (zeros are not stored), the result row-major. It
/// pins the sm_90 fragment layouts the kernel relies on (tests/gpu/test_gpu_tiled.cpp).
template <scalar T>
std::vector<T> tile_product_probe(const std::vector<T>& a, const std::vector<T>& b,
                                  tile_arithmetic arithmetic);

/// The arithmetic tiled_spmm multiplies tiles in.
enum class spmm_arithmetic {
  /// double on DMMA (m8n8k4); float as 3×TF32 (big·big + big·small + small·big, fp32-level
  /// error), a tile holding a float outside the split's exact range summed with FMAs instead.
  native,
  /// float as one TF32 product per tile (10 significant bits of each input, fp32 sums): lossy,
  /// only when named (kernels::tiled_spmm_tf32). Double runs as native.
  tf32,
};

/// C = alpha·A·B + beta·C with A in 8×8 bitmap tiles and B, C dense of either layout, on
/// tensor cores (docs/tiled.md). The first call condenses A's tiles into windows and caches them
/// on A (a window is a tile row, its occupied columns packed 8 to a block; at most
/// nnz/8 + tile rows blocks of 64 values, 8 column indices and a bitmap; where they do not fit,
/// the tiles are used as they are). A warp
/// per (window, 32 columns of C) sums the window's blocks in order; where one warp per window
/// fills the device, a window far longer than the mean is cut into segments of about 16 blocks,
/// summed by warps of their own into a temporary workspace (at most C's size or 4 M elements) and
/// added in order. Results repeat bit for bit on one device. A block that meets an Inf or NaN of B
/// (whose product with the block's zeros would be NaN on the tensor cores), or a float outside
/// 3×TF32's exact range, is summed with FMAs over its stored entries alone, as Eigen sums. beta = 0
/// ignores C's contents (NaN included). Throws dimension_mismatch.
template <scalar T, layout LB, layout LC>
void tiled_spmm(T alpha, const tiled<T, gpu>& a, const dense<T, gpu, LB>& b, T beta,
                dense<T, gpu, LC>& c, spmm_arithmetic arithmetic = spmm_arithmetic::native);

/// Stored 8×8 tiles of a csr (the tiled form's tile count) without converting it: one warp per
/// row, one synchronisation. The planner's tile-fill fact for sparse × dense (nnz / tiles).
template <scalar T>
std::int64_t count_own_tiles(const csr<T, gpu>& a);

/// Whether the cuSPARSE wrappers (spmv, spmm, transpose) hand an operand to Spade's row-wise
/// kernels instead, and whether spmm's automatic algorithm is ALG2 (plan/facts.hpp; the sizes
/// are spade::tuning()'s, which says why).
using plan::rowwise_preferred;
using plan::spmm_alg2_preferred;

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

/// How an SDDMM ran (for explain and the benchmark): lanes summing one entry and elements per
/// load (0 lanes: a lane per entry, for operands strided along k), or the vendor call.
struct sddmm_launch {
  int group_lanes = 0;
  int vector_width = 0;
  bool vendor = false;
  std::string describe() const;
};

/// out.values = alpha · S.values ∘ (op(A)·op(B)) at S's entries, never forming op(A)·op(B):
/// warps take chunks of consecutive entries (long rows shared, short ones packed), each entry's
/// sum over k taken by a group of lanes with 16-byte loads where both operands are contiguous
/// along k (X·Yᵀ of row-major X and Y), else by one lane. `out` has S's shape and entry count
/// and is another object than S (S's row list is cached on S, and writing out's values clears
/// out's cache); it holds S's pattern already, or `copy_pattern` has the same launch write S's
/// row_ptr and col_idx into it (S then needs its rows + 1 row_ptr entries: a default-constructed
/// S has none, and with no entries there is nothing to launch). Sums run in a fixed order: the
/// same bits every run. NaN and Inf propagate as in Eigen's dense product.
template <scalar T, layout LA, layout LB>
sddmm_launch sddmm(T alpha, const csr<T, gpu>& s, const dense<T, gpu, LA>& a, operation op_a,
                   const dense<T, gpu, LB>& b, operation op_b, csr<T, gpu>& out,
                   bool copy_pattern = false);

/// The same through cusparseSDDMM, which samples S's pattern only, followed by a pass that
/// multiplies in S's values. `out`'s values must not be S's.
template <scalar T, layout LA, layout LB>
sddmm_launch cusparse_sddmm(T alpha, const csr<T, gpu>& s, const dense<T, gpu, LA>& a,
                            operation op_a, const dense<T, gpu, LB>& b, operation op_b,
                            csr<T, gpu>& out);

/// cwise_product of two csr matrices of one shape: the entries stored in both, each a's value
/// times b's, sorted (one warp per row searches the shorter row's columns in the longer row; a
/// counting pass, a CUB scan and a writing pass; the same result every run).
template <scalar T>
csr<T, gpu> cwise_intersection(const csr<T, gpu>& a, const csr<T, gpu>& b);

}  // namespace spade::device
