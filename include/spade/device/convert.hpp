// Declarations of the GPU format conversions defined in lib/convert (float and double).
#pragma once

#include "spade/formats/convert.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"

/// Conversions run on the context's stream; each returns once its result's size is known on
/// the host (the ones that discover nnz synchronise once for it).
namespace spade::device {

/// csr → coo (row-major order). O(nnz); no extra memory.
template <scalar T>
coo<T, gpu> csr_to_coo(const csr<T, gpu>& a);

/// coo → csr: CUB radix sort by (row, column), stable, then repeated positions summed (CUB
/// reduce-by-key: operands in stored order, but grouped as a tree, so a position repeated three
/// or more times may differ from the host's left-to-right sum in the last bit), row pointers by
/// CUB run-length encode + exclusive scan. O(nnz) work; extra memory about 16 + 2·sizeof(T)
/// bytes per entry plus CUB's temporary storage; synchronises once for nnz. Deterministic on
/// one GPU model.
template <scalar T>
csr<T, gpu> coo_to_csr(const coo<T, gpu>& a);

/// csr → dense in Layout. O(rows·cols + nnz).
template <scalar T, layout Layout>
dense<T, gpu, Layout> csr_to_dense(const csr<T, gpu>& a);

/// dense → csr keeping entries unequal to zero (NaN kept, -0.0 dropped); per-row counts,
/// CUB exclusive scan, then an order-preserving fill. Synchronises once for nnz. A col_major
/// input is first copied to row_major (extra rows·cols·sizeof(T) bytes).
/// Throws invalid_matrix when the nonzeros exceed the 32-bit index type.
template <scalar T, layout Layout>
csr<T, gpu> dense_to_csr(const dense<T, gpu, Layout>& d);

/// The same matrix in layout To (a tiled transpose). O(rows·cols).
template <scalar T, layout From, layout To>
dense<T, gpu, To> relayout(const dense<T, gpu, From>& d);

/// csr → gcoo with groups of `group_size` rows: a group's entries are the csr entries of its
/// rows (contiguous already), reordered by (column, row) with one CUB radix sort over keys
/// (group, column, row-in-group); p = 1 needs no sort. O(nnz) work; no host synchronisation.
template <scalar T>
gcoo<T, gpu> csr_to_gcoo(const csr<T, gpu>& a, index_t group_size);

/// gcoo → csr: the entries re-sorted by (row, column) with one CUB radix sort, row pointers by
/// a binary search per row; nnz is known, so no host synchronisation.
template <scalar T>
csr<T, gpu> gcoo_to_csr(const gcoo<T, gpu>& a);

/// Row-major dense → gcoo, the paper's Algorithm 1: one pass counts the entries unequal to zero
/// per group, a CUB exclusive scan gives the group offsets, a second pass writes each group's
/// entries in (column, row) order. Synchronises once for nnz. Throws invalid_matrix when the
/// nonzeros exceed the 32-bit index type.
template <scalar T>
gcoo<T, gpu> dense_to_gcoo(const dense<T, gpu, row_major>& d, index_t group_size);

/// gcoo → dense in Layout (zero fill, then one scatter). O(rows·cols + nnz).
template <scalar T, layout Layout>
dense<T, gpu, Layout> gcoo_to_dense(const gcoo<T, gpu>& a);

/// csr → ellr in `layout`, the same arrays as host::csr_to_ellr: row lengths from the row
/// pointers; with a sort window, each window's rows sorted by length (longest first, stable)
/// inside one thread block (CUB block radix sort); slice widths, CUB exclusive scan for the
/// slice offsets; padding zeroed, then a thread per row copies its entries. Synchronises once
/// for the padded size. O(slots + nnz); extra memory O(rows).
template <scalar T>
ellr<T, gpu> csr_to_ellr(const csr<T, gpu>& a, ellr_layout layout);

/// ellr → csr: CUB exclusive scan of the row lengths (in row order) for the row pointers, then
/// a thread per row copies its entries. O(rows + nnz); no synchronisation.
template <scalar T>
csr<T, gpu> ellr_to_csr(const ellr<T, gpu>& a);

/// csr → tiled, the same arrays as host::csr_to_tiled: one CUB radix sort of the entries by
/// (tile row, tile column, bit) — the key of entry (r, c) is its tile's number times 64 plus
/// tile_bit(r mod 8, c mod 8) — then CUB run-length encode for the tiles and their entry
/// counts, an exclusive scan for tile_offset, and an OR of each tile's bits. Synchronises once
/// for the tile count. O(nnz) work; extra memory about 24 bytes per entry plus CUB's
/// temporary storage.
template <scalar T>
tiled<T, gpu> csr_to_tiled(const csr<T, gpu>& a);

/// tiled → csr: row lengths from each tile's bitmap bytes (integer atomics), CUB exclusive
/// scan for the row pointers, a CUB exclusive scan by key over (tile, tile row) for where each
/// tile's part of a row starts, then a warp per tile scatters its entries. O(tiles + nnz);
/// no host synchronisation.
template <scalar T>
csr<T, gpu> tiled_to_csr(const tiled<T, gpu>& a);

}  // namespace spade::device

namespace spade::detail {

/// spade::convert<>()'s direct edges on the device (device::); formats/convert.hpp walks the
/// conversion graph and counts each edge.
template <>
struct conversion_backend<gpu> {
  template <scalar T>
  static coo<T, gpu> csr_to_coo(const csr<T, gpu>& a) {
    return device::csr_to_coo(a);
  }
  template <scalar T>
  static csr<T, gpu> coo_to_csr(const coo<T, gpu>& a) {
    return device::coo_to_csr(a);
  }
  template <layout L, scalar T>
  static dense<T, gpu, L> csr_to_dense(const csr<T, gpu>& a) {
    return device::csr_to_dense<T, L>(a);
  }
  template <scalar T, layout L>
  static csr<T, gpu> dense_to_csr(const dense<T, gpu, L>& d) {
    return device::dense_to_csr(d);
  }
  template <layout To, scalar T, layout From>
  static dense<T, gpu, To> relayout(const dense<T, gpu, From>& d) {
    return device::relayout<T, From, To>(d);
  }
  template <scalar T>
  static gcoo<T, gpu> csr_to_gcoo(const csr<T, gpu>& a, index_t group_size) {
    return device::csr_to_gcoo(a, group_size);
  }
  template <scalar T>
  static csr<T, gpu> gcoo_to_csr(const gcoo<T, gpu>& a) {
    return device::gcoo_to_csr(a);
  }
  template <scalar T>
  static gcoo<T, gpu> dense_to_gcoo(const dense<T, gpu, row_major>& d, index_t group_size) {
    return device::dense_to_gcoo(d, group_size);
  }
  template <layout L, scalar T>
  static dense<T, gpu, L> gcoo_to_dense(const gcoo<T, gpu>& a) {
    return device::gcoo_to_dense<T, L>(a);
  }
  template <scalar T>
  static ellr<T, gpu> csr_to_ellr(const csr<T, gpu>& a, ellr_layout layout) {
    return device::csr_to_ellr(a, layout);
  }
  template <scalar T>
  static csr<T, gpu> ellr_to_csr(const ellr<T, gpu>& a) {
    return device::ellr_to_csr(a);
  }
  template <scalar T>
  static tiled<T, gpu> csr_to_tiled(const csr<T, gpu>& a) {
    return device::csr_to_tiled(a);
  }
  template <scalar T>
  static csr<T, gpu> tiled_to_csr(const tiled<T, gpu>& a) {
    return device::tiled_to_csr(a);
  }
};

}  // namespace spade::detail
