// The run-time facts a kernel step decides on (plan/steps/): one node's operands, flags and device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/scalar.hpp"
#include "spade/core/tuned.hpp"
#include "spade/core/tuning.hpp"
#include "spade/formats/ellr.hpp"

namespace spade::plan {

/// The storage format of an operand, as the steps see it.
enum class format { dense, vector, csr, coo, gcoo, ellr, tiled };

/// What every operand says about itself at no cost.
struct operand_facts {
  format kind = format::dense;
  bool on_gpu = false;
  index_t rows = 0;
  index_t cols = 0;
  std::int64_t nnz = 0;  ///< stored entries (rows × cols for dense operands)
  int value_bytes = 4;   ///< sizeof the scalar: 4 (float) or 8 (double)

  bool sparse() const noexcept { return kind != format::dense && kind != format::vector; }
  double cells() const noexcept { return static_cast<double>(rows) * static_cast<double>(cols); }
  double density() const noexcept { return cells() > 0 ? static_cast<double>(nnz) / cells() : 0.0; }
  double mean_row_length() const noexcept {
    return rows > 0 ? static_cast<double>(nnz) / static_cast<double>(rows) : 0.0;
  }
};

/// A csr operand's row lengths on the host, read once (one copy of the row pointers) and cached
/// on it: the facts gcoo_spmm and ellr_spmv decide on.
struct row_profile {
  std::vector<index_t> lengths;
  index_t longest = 0;
  double mean = 0.0;
  /// Padding of ellr `layout`, computed on first use for each layout (a host sort of the
  /// lengths for a sorted one) and kept.
  double padding(const ellr_layout& layout) const {
    for (const auto& [known, share] : paddings)
      if (known == layout) return share;
    const auto shape =
        detail::plan_ellr_shape(static_cast<index_t>(lengths.size()), layout,
                                [&](index_t r) { return lengths[static_cast<std::size_t>(r)]; });
    paddings.emplace_back(layout, shape.padding());
    return paddings.back().second;
  }
  mutable std::vector<std::pair<ellr_layout, double>> paddings;
  /// Rows longer than `length` entries, counted on first use for each length and kept.
  index_t rows_longer_than(index_t length) const {
    for (const auto& [known, count] : long_row_counts)
      if (known == length) return count;
    index_t count = 0;
    for (const index_t l : lengths)
      count += l > length ? 1 : 0;
    long_row_counts.emplace_back(length, count);
    return count;
  }
  mutable std::vector<std::pair<index_t, index_t>> long_row_counts;
};

/// A·B in 8×8 tiles, counted on csr operands without converting them: stored tiles of each,
/// element products (Σ over A's entries of B's row lengths) and tile pairs (Σ over A's tiles of
/// the tiles in B's matching tile row, before culling). device::count_tiles counts it.
struct tile_census {
  std::int64_t a_tiles = 0;
  std::int64_t b_tiles = 0;
  std::int64_t a_nnz = 0;
  std::int64_t b_nnz = 0;
  std::int64_t products = 0;
  std::int64_t tile_pairs = 0;
  /// Element products per tile pair: the work a tensor-core tile product replaces (≤ 512);
  /// the paper's first criterion.
  double products_per_tile_pair() const {
    return tile_pairs > 0 ? static_cast<double>(products) / static_cast<double>(tile_pairs) : 0.0;
  }
  double a_fill() const {
    return a_tiles > 0 ? static_cast<double>(a_nnz) / static_cast<double>(a_tiles) : 0.0;
  }
  double b_fill() const {
    return b_tiles > 0 ? static_cast<double>(b_nnz) / static_cast<double>(b_tiles) : 0.0;
  }
};

/// Widest X the planner hands ellr_spmv: one pass of 16 columns, split over 2 threads of 8 (4
/// of 4 in double). device::ellr_spmm takes up to 32, but at 32 it stays near cuSPARSE (H200,
/// docs/benchmarks/spmm-ellr-wide-2026-11-29.md); at 9–16 it beat it
/// (docs/benchmarks/spmm-ellr-16-2026-11-29.md).
inline constexpr index_t ellr_max_vectors = 16;

/// Whether a rows × cols csr operand with `nnz` entries goes to the row-wise kernels instead
/// of cuSPARSE (spmv, spmm, transpose): spade::tuning().rowwise_max_extent / rowwise_max_nnz,
/// which say why.
inline bool rowwise_preferred(index_t rows, index_t cols, std::int64_t nnz) noexcept {
  const auto& t = tuning();
  return rows <= t.rowwise_max_extent && cols <= t.rowwise_max_extent && nnz <= t.rowwise_max_nnz;
}

/// Whether cusparseSpMM runs ALG2 rather than ALG3 for C = op(A)·B of c_rows × c_cols with A
/// of a_rows rows and a_nnz entries (spade::tuning().spmm_alg2_* and spmm_alg3_skewed_*, which
/// give the measurements). `a_longest` is op(A)'s longest row where the caller knows it (the
/// planner's row profile), -1 where not; skewed rows keep ALG3 only where it is known.
inline bool spmm_alg2_preferred(std::int64_t c_rows, std::int64_t c_cols, std::int64_t a_rows,
                                std::int64_t a_nnz, bool double_precision,
                                std::int64_t a_longest = -1) noexcept {
  const auto& t = tuning();
  const std::int64_t min_elements =
      double_precision ? t.spmm_alg2_min_elements_fp64 : t.spmm_alg2_min_elements;
  const bool large_c = c_cols >= t.spmm_alg2_min_columns && c_rows * c_cols >= min_elements;
  const bool wide_long_rows = c_cols >= t.spmm_alg2_wide_columns &&
                              a_nnz >= t.spmm_alg2_wide_min_mean_row * a_rows &&
                              a_nnz < t.spmm_alg2_wide_max_mean_row * a_rows;
  const bool short_rows_fp64 = double_precision &&
                               c_cols >= t.spmm_alg2_short_row_min_columns_fp64 &&
                               c_rows * c_cols >= t.spmm_alg2_short_row_min_elements_fp64 &&
                               a_nnz < t.spmm_alg2_short_row_max_mean * a_rows;
  const bool skewed_small_c = !double_precision && a_longest >= 0 &&
                              a_longest * a_rows >= t.spmm_alg3_skewed_min_spread * a_nnz &&
                              c_rows * c_cols < t.spmm_alg3_skewed_max_elements;
  return (large_c || wide_long_rows || short_rows_fp64) && !skewed_small_c;
}

/// Whether cusparseSpMM runs ALG1 for C = A·B with B of c_cols columns and A of a_rows rows,
/// a_nnz entries, a longest row of a_longest entries (-1 where unknown: then not) and a_long_rows
/// rows longer than spade::tuning().spmm_alg1_small_long_row entries (-1 where unknown): narrow
/// B over a large A with skewed rows, a little wider where the rows are short on average, and
/// over a small skewed graph with many long rows (spade::tuning().spmm_alg1_*, which give the
/// measurements). It is asked first: spmm_alg2_preferred's rules start at 16 columns.
inline bool spmm_alg1_preferred(std::int64_t c_cols, std::int64_t a_rows, std::int64_t a_nnz,
                                std::int64_t a_longest, std::int64_t a_long_rows = -1) noexcept {
  const auto& t = tuning();
  if (a_longest < 0 || c_cols < 1 || a_nnz <= 0 ||
      a_longest * a_rows < t.spmm_alg1_min_spread * a_nnz)
    return false;
  const bool narrow =
      c_cols <= t.spmm_alg1_max_columns || (c_cols <= t.spmm_alg1_short_row_max_columns &&
                                            a_nnz <= t.spmm_alg1_short_row_max_mean * a_rows);
  const bool large = narrow && a_rows >= t.spmm_alg1_min_rows;
  const bool small_graph =
      a_rows <= t.spmm_alg1_small_max_rows && a_long_rows >= t.spmm_alg1_small_min_long_rows &&
      c_cols <= t.spmm_alg1_small_max_columns && a_nnz * c_cols <= t.spmm_alg1_small_max_work;
  return large || small_graph;
}

/// The widest B spmm_alg1_preferred can say ALG1 for (any rows).
inline std::int64_t spmm_alg1_widest() noexcept {
  const auto& t = tuning();
  return std::max(
      {t.spmm_alg1_max_columns, t.spmm_alg1_short_row_max_columns, t.spmm_alg1_small_max_columns});
}

/// What `spade tune` measured for a sparse × dense product's class on the lhs's device
/// (core/tuned.hpp): `table` is null when the device has no tune file (or tuned choices are
/// off); `entry` is null when the file has no entry for `operand_class`.
struct tuned_choice {
  const tuned_table* table = nullptr;
  const tuned_entry* entry = nullptr;
  std::string operand_class;
  /// The choice the entry decides on (tuned_entry::decision_for): a kernel in the "spmm" table,
  /// an algorithm ("alg2") in the "cusparse" table; "" when the rules decide.
  std::string kernel;
  /// Whether that is this very matrix's measurement (else the class's, unanimous).
  bool measured = false;
  bool decides() const { return !kernel.empty(); }
};

/// cusparseSpMM's algorithm for a planned product: `number` 1, 2 or 3 (CSR ALG1–3) and, when a
/// tune file's "cusparse" entry decided it (this matrix measured), that entry
/// (`tuned.decides()`); else the rules did.
struct spmm_algorithm_choice {
  int number = 3;
  tuned_choice tuned;
};

/// One product or sum node's facts. The costly ones (a copy of the row pointers, a census
/// kernel, hash_spgemm's setup) are functions the evaluator supplies (eval/operands.hpp): each
/// computes its fact on the first call and caches it on the operand, so a step asks only for
/// what its decision reaches. A function is empty where the operands have no such fact.
struct product_facts {
  operand_facts lhs;
  operand_facts rhs;
  bool lhs_transposed = false;
  bool rhs_transposed = false;
  bool destination_col_major = false;
  /// Whether a dense rhs is col-major (ellr_spmm then reads it one element at a time).
  bool rhs_col_major = false;
  /// Columns of op(rhs): the N of a sparse × dense product (1 for a vector).
  index_t vectors = 1;
  /// Threads the lhs operand's device keeps resident (0 for a cpu or empty operand).
  std::int64_t resident_threads = 0;
  /// Whether a sparse × dense product's A, B and C fit the lhs device's L2 cache together
  /// (spmm_fits_l2; false on the cpu and for other products).
  bool fits_l2 = false;

  /// The lhs csr's row profile.
  std::function<const row_profile&()> lhs_row_profile;
  /// The ellr layout the planner makes from the lhs (csr or ellr).
  std::function<ellr_layout()> lhs_ellr_layout;
  /// p of the gcoo the planner makes from the lhs.
  std::function<index_t()> lhs_group_size;
  /// Products already run with the lhs as it is (ellr_min_uses, gcoo_narrow_min_uses).
  std::function<long()> lhs_uses_as_is;
  /// Whether the lhs csr already holds its ellr conversion.
  std::function<bool()> lhs_ellr_cached;
  /// Whether the lhs csr already holds its gcoo conversion (gcoo_narrow_min_uses).
  std::function<bool()> lhs_gcoo_cached;
  /// Entries per stored 8×8 tile of the lhs (sparse × dense on the gpu): counted once on its csr
  /// form and cached on the operand, or the tiled operand's own mean fill.
  std::function<double()> lhs_tile_fill;
  /// The tile census of A·B (sparse × sparse on the gpu).
  std::function<const tile_census&()> census;
  /// The tuned kernel choice of this sparse × dense product with B of `columns` columns (gpu
  /// csr lhs; its class's facts are the row profile and the tile fill, cached on the lhs).
  std::function<tuned_choice(index_t columns)> tuned_spmm;
  /// The algorithm cusparse_spmm runs this product with (gpu csr lhs times a dense B), as the
  /// runner will ask it (detail::planned_spmm_algorithm_choice).
  std::function<spmm_algorithm_choice()> cusparse_spmm_algorithm;
  /// hash_spgemm's setup and symbolic phases run on the operands, as report text (csr × csr on
  /// the gpu; for explain only: it runs kernels).
  std::function<std::string()> spgemm_profile;

  /// Longest row of the lhs: from its row profile when it is a csr, -1 (unknown) otherwise.
  index_t lhs_longest_row() const {
    return lhs.kind == format::csr && lhs_row_profile ? lhs_row_profile().longest : -1;
  }
};

/// A step's answer: run (`ok`), or not and why.
struct decision {
  bool ok = true;
  std::string reason;  ///< why it declines; empty when ok

  static decision accept() { return {}; }
  static decision decline(std::string why) { return {false, std::move(why)}; }
};

}  // namespace spade::plan
