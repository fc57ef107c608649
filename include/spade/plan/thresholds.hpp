// The run-time thresholds that choose among a plan's compile-time candidates.
#pragma once

namespace spade {

/// Defaults come from measurements (see docs/planner.md for each one's source); a program may
/// change them at run time through spade::tuning(), and test builds lower them so every
/// branch runs on small inputs.
struct thresholds {
  /// sparse × dense on the GPU: at or above this density the sparse operand is densified and
  /// cuBLAS GEMM runs instead of cuSPARSE SpMM. ../shared/BENCHMARKS.md extrapolated a
  /// crossover at density 0.08 from sparsity 0.98–0.999 (n = 14000, N = n), but spade-bench
  /// measured GEMM 1.2–2.1× slower than the best SpMM at density 0.1 on every paper square
  /// (n = 4000/8000/14000, N = 32…1024; only n = 4000, N = 128 went the other way, by 4%), the gap
  /// steady in N from 256 up; linear in density that puts the crossover near 0.13.
  /// docs/benchmarks/spmm-synthetic-2026-11-22b.csv, spmm-densify-2026-11-22b.csv.
  double densify_density = 0.15;
  /// From B of densify_wide_columns columns on, GEMM's higher efficiency moves the crossover
  /// down to densify_density_wide: at N = n = 14000 and density 0.1 SGEMM ran 107 ms against
  /// 132 ms for the best sparse kernel; at N = n = 8000 they tied (21.2 / 20.5 ms); at N ≤ 512
  /// GEMM still lost at 0.1 on n ≥ 8000 (docs/benchmarks/spmm-paper-2026-11-22d.csv).
  double densify_density_wide = 0.09;
  long densify_wide_columns = 8000;
  /// ... but only when the densified operand stays below this many elements (memory).
  double densify_max_elements = 4.0e8;
  /// Rows per group (p) when spade::convert<gcoo>(A) groups a matrix without being told p.
  int gcoo_group_size = 4;
  /// p of the gcoo the planner makes for gcoo_spmm; 0: the largest of 4, 2, 1 that leaves at
  /// least one group per resident warp of the operand's device (SMs × threads per SM / 32;
  /// 8448 on the H100). Fewer groups than that left SMs idle: p = 1 won on the real set's
  /// small matrices, p = 4 on meshes with ≥ 40 k rows (spmm-real-2026-11-22d.csv).
  int gcoo_planner_group_size = 0;
  /// sparse × dense on the GPU: gcoo_spmm runs instead of cuSPARSE SpMM when B has at least
  /// gcoo_min_columns columns, the longest row is at most gcoo_max_row_spread times the mean
  /// (skewed rows: power-law graphs lost up to 0.6×), and either A has gcoo_min_rows rows, or
  /// B has gcoo_wide_columns columns and A has gcoo_wide_min_rows rows of at most
  /// gcoo_wide_max_mean_row entries on average, or B has gcoo_widest_columns columns and A
  /// gcoo_widest_min_rows rows. docs/benchmarks/gcoo.md has the measurements;
  /// a gcoo operand always runs gcoo_spmm (its format was chosen by the user).
  long gcoo_min_columns = 32;
  long gcoo_min_rows = 500000;
  double gcoo_max_row_spread = 4.0;
  long gcoo_wide_columns = 128;
  long gcoo_wide_min_rows = 8000;
  double gcoo_wide_max_mean_row = 7.5;
  long gcoo_widest_columns = 512;
  long gcoo_widest_min_rows = 5000;
  /// sparse × vector (and × dense of at most 8 columns) on the GPU: ellr_spmv runs instead of
  /// cuSPARSE when the planned ellr has at most ellr_max_padding of its slots as padding (the
  /// issue's 30 %) and the longest row is at most ellr_max_row_spread times the mean (a lane
  /// or a few walk each row alone: one long row holds up its whole block). A csr operand is
  /// converted only from its ellr_min_uses-th product on (the first runs cuSPARSE on it
  /// as it is), so a one-off product never pays the conversion; an iterative solver pays it
  /// once, at its second product. docs/benchmarks/ellr.md has the measurements.
  double ellr_max_padding = 0.30;
  double ellr_max_row_spread = 8.0;
  int ellr_min_uses = 2;
  /// The planner's ellr is the paper's layout while that wastes at most ellr_plain_max_padding
  /// of its slots, else SELL-C-σ: slices of ellr_slice_height rows, rows sorted by length in
  /// windows of ellr_sort_window rows.
  double ellr_plain_max_padding = 0.05;
  int ellr_slice_height = 32;
  int ellr_sort_window = 1024;
  /// Padding above is counted with one lane (what the kernel reads: it stops at each row's
  /// length); the planned layout then interleaves as many lanes as ELLR-T gives a row
  /// (detail::ellr_threads_per_row). On a matrix with at least as many rows as the device has
  /// resident threads, ellr_spmv runs only while the mean row length is at most
  /// ellr_full_device_max_mean_row: there the device is full at a thread per row and
  /// cuSPARSE streams longer rows faster (H100: stencil27 0.95x, banded 17/row 0.98x, block
  /// diagonal 43/row 0.79x; 16/row 1.05x, 7/row 1.02x).
  double ellr_full_device_max_mean_row = 16.0;
  /// sparse × sparse on the GPU: tiled_spgemm (8×8 tiles on tensor cores) runs instead of
  /// hash_spgemm when A holds at least tiled_min_nnz entries (the paper's second criterion:
  /// below it fixed costs decide; it is checked before the census's two kernels and
  /// synchronisation), A·B has at least tiled_min_products_per_pair element products per tile
  /// pair (the paper's first: the work one tile product replaces) and both operands fill their
  /// tiles with at least tiled_min_fill entries on average (the paper's bitmap density).
  /// docs/tiled.md has the measurements.
  double tiled_min_nnz = 1.0e5;
  double tiled_min_products_per_pair = 24.0;
  double tiled_min_fill = 6.0;
};

inline constexpr thresholds default_thresholds{};

/// The thresholds in force (process-wide; not synchronised: set them before evaluating).
inline thresholds& tuning() {
  static thresholds current = default_thresholds;
  return current;
}

}  // namespace spade
