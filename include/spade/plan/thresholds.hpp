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
  /// ... but only when the densified operand stays below this many elements (memory).
  double densify_max_elements = 4.0e8;
  /// Rows per group (p) when the planner or spade::convert<gcoo> groups a matrix.
  int gcoo_group_size = 4;
  /// sparse × dense on the GPU: gcoo_spmm runs instead of cuSPARSE SpMM only with at least
  /// gcoo_min_columns columns of B, gcoo_min_rows rows of A (fewer groups leave the H100
  /// under-occupied), and a longest row at most gcoo_max_row_spread times the mean (skewed
  /// rows serialise a group). docs/benchmarks/gcoo.md has the measurements behind all three;
  /// a gcoo operand always runs gcoo_spmm (its format was chosen by the user).
  long gcoo_min_columns = 32;
  long gcoo_min_rows = 50000;
  double gcoo_max_row_spread = 4.0;
};

inline constexpr thresholds default_thresholds{};

/// The thresholds in force (process-wide; not synchronised: set them before evaluating).
inline thresholds& tuning() {
  static thresholds current = default_thresholds;
  return current;
}

}  // namespace spade
