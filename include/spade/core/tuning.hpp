// Every run-time threshold and tuning constant of the planner and the back ends: spade::tuning().
#pragma once

#include <cstdint>

namespace spade {

/// Defaults come from measurements (see docs/planner.md for each one's source); a program may
/// change them at run time through spade::tuning(), and test builds lower them so every
/// branch runs on small inputs. The planner's steps (plan/steps/) and the compiled back end
/// (lib/) read the same values: the cuSPARSE wrappers' algorithm choice and row-wise hand-off
/// and the ELLR-T lanes of a conversion follow a changed field too.
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
  /// gcoo_widest_min_rows rows (narrower B: the gcoo_narrow_* rule below).
  /// docs/benchmarks/gcoo.md has the measurements;
  /// a gcoo operand always runs gcoo_spmm (its format was chosen by the user).
  long gcoo_min_columns = 32;
  long gcoo_min_rows = 500000;
  double gcoo_max_row_spread = 4.0;
  /// Narrow B: from gcoo_narrow_min_columns up to gcoo_min_columns columns, gcoo_spmm runs on an
  /// A of at least gcoo_min_rows rows within gcoo_max_row_spread (ellr_spmv, asked first, keeps
  /// what it takes up to 8 columns). In double, from gcoo_fp64_narrow_long_row_columns columns
  /// it declines an A of more than gcoo_fp64_wide_max_mean_row entries per row on average. A csr
  /// is converted only from its gcoo_narrow_min_uses-th product on: the products already run
  /// with it as it is (of any kind: SpMV, SpMM, transposed) are counted on the operand. H200,
  /// 2026-11-28, gcoo_spmm alone against the best cuSPARSE algorithm in the same run at N = 4, 8,
  /// 16, 24 on 13 matrices of 0.5–4 M rows (docs/benchmarks/spmm-narrow-gcoo-2026-11-28.md):
  /// 0.98–2.86× on the 66 products the rule admits (geomean 1.46; below 1.02 only block-diagonal
  /// 43/row fp32 N = 24, 0.98, and uniform rows 32/row fp32 N = 4, 1.00); in double above 16 per
  /// row from N = 16 it ranged 0.82–1.39; at N = 2 block-diagonal lost 0.83. On seven matrices
  /// added after the fit the products it takes ran 1.01–2.68× (fp32) and 1.11–2.26× (fp64, six of
  /// them) the best cuSPARSE one. The conversion cost the saving of 2–123 narrow products (median
  /// 14), hence 8.
  long gcoo_narrow_min_columns = 4;
  long gcoo_fp64_narrow_long_row_columns = 16;
  int gcoo_narrow_min_uses = 8;
  long gcoo_wide_columns = 128;
  long gcoo_wide_min_rows = 8000;
  double gcoo_wide_max_mean_row = 7.5;
  /// In double the rule for fewer than gcoo_min_rows rows applies from gcoo_fp64_wide_columns
  /// columns of B instead of gcoo_wide_columns. At N = 64 (H100, 2026-11-28, gcoo_spmm against
  /// the best cuSPARSE algorithm) every product it admits won: the real meshes bfly 1.47, 4elt
  /// 1.41, fe_4elt2 1.43, big 1.33, dw4096 1.30, delaunay_n16 1.29 and the paper's random
  /// squares of 8000 and 14000 rows at 7 per row 1.15 and 1.15. At N = 32 the meshes won too
  /// (1.11–1.73) but the 14000-row random square lost 0.81, hence 64.
  long gcoo_fp64_wide_columns = 64;
  long gcoo_widest_columns = 512;
  long gcoo_widest_min_rows = 5000;
  /// In double, with B at least gcoo_wide_columns wide, gcoo_spmm declines an A (not in gcoo)
  /// whose mean row length is above this: cuSPARSE SpMM then wins on the matrices measured
  /// (stencil27 100³ 0.80×, banded 2²⁰ 0.93× at N = 128; docs/planner.md has the table).
  double gcoo_fp64_wide_max_mean_row = 16.0;
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
  /// sparse × dense on the GPU: tiled_spmm (8×8 tiles condensed into windows, on tensor cores)
  /// runs when B has at least tiled_spmm_min_columns columns, A has tiled_spmm_min_nnz entries
  /// and fills its stored tiles with at least tiled_spmm_min_fill entries on average, or in
  /// double with B of tiled_spmm_wide_columns columns or more, tiled_spmm_min_fill_fp64: full
  /// tiles mean rows of a window share their columns, so each row of B read serves several
  /// products. float needs fuller tiles because 3×TF32 costs three tensor-core products per
  /// block where cuSPARSE's fp32 reads half of fp64's bytes; so does a narrow B, which leaves
  /// one warp per window (docs/tiled.md has the measurements).
  long tiled_spmm_min_columns = 32;
  double tiled_spmm_min_nnz = 5.0e4;
  double tiled_spmm_min_fill = 40.0;
  double tiled_spmm_min_fill_fp64 = 24.0;
  /// In double where A, B and C fit in L2 together (spmm_fits_l2), the fill threshold is
  /// tiled_spmm_min_fill_fp64_l2 instead, unless gcoo_spmm would run the product. On the real set
  /// in double (H200, 2026-11-28) the four L2-resident matrices of fill 8–24 with 5·10⁴ entries or
  /// more gained at N = 128 and 512: bayer03 (8.6) 1.23 / 1.31× cuSPARSE, cavity14 1.45 / 1.55,
  /// ex10hs 1.17 / 1.16, bcsstk13 0.99 / 1.15; past L2, stencil27 100³ (10.3) 0.91 and stencil7
  /// 160³ (8.1) 0.69 lost.
  double tiled_spmm_min_fill_fp64_l2 = 8.0;
  /// In float with B of tiled_spmm_wide_columns_fp32 columns or more, where A, B and C fit in L2
  /// together, the fill threshold is tiled_spmm_min_fill_fp32_l2 (gcoo_spmm does not keep these
  /// products: it ran s1rmq4m1 at N = 512 1.38x, tiled_spmm 1.58x). Since B is read four floats
  /// at a time (H200, 2026-11-29) the two L2-resident real matrices of fill 24-40 ran tiled_spmm
  /// at N = 128 / 512 s1rmq4m1 (32.5) 1.19 / 1.58x the best cuSPARSE algorithm and mhd3200a
  /// (28.4) 1.16 / 1.44x, while fill 16 split (cavity14 1.04 / 1.29x, bcsstk13 0.73 / 0.89x). At
  /// N = 64 mhd3200a ran 0.88x, hence float's own width.
  double tiled_spmm_min_fill_fp32_l2 = 24.0;
  long tiled_spmm_wide_columns_fp32 = 128;
  long tiled_spmm_wide_columns = 64;
  /// tiled_spgemm sorts at most tiled_max_batch_pairs tile pairs at once: a longer task list
  /// runs in batches of whole tile rows of A (C assembled from their parts; the same bits),
  /// so memory follows the batch, not the product. About 100 bytes per pair while a batch
  /// sorts (keys, tasks, their sorted copies, CUB's buffers, C's bounds): 2^26 pairs ≈ 6.7 GB.
  /// Uniform rows 2^20 × 16 list 2.1·10^9 pairs (32 batches); of the quick set, soc-Slashdot0902
  /// (1.8·10^8, 3 batches) and circuit_1.6M_4.8 (8.2·10^7, 2) need more than one. docs/tiled.md.
  std::int64_t tiled_max_batch_pairs = std::int64_t{1} << 26;
  /// ELLR-T lanes per row (detail::ellr_threads_per_row, formats/ellr.hpp): lanes double while
  /// a row's lanes over every row stay within ellr_lanes_max_resident_share of the device's
  /// resident threads and below the mean row length (small matrices are latency-bound: more
  /// lanes shorten each row's chain of dependent loads), then while each lane still walks
  /// ellr_lanes_min_entries_per_lane entries or more. docs/benchmarks/ellr.md.
  double ellr_lanes_max_resident_share = 0.75;
  double ellr_lanes_min_entries_per_lane = 32.0;
  /// ellr_spmm splits a row's 8 columns of X over 2 threads when a row has at most this many
  /// threads, in float and in double (detail::ellr_column_groups, formats/ellr.hpp; at most 16).
  int ellr_split_max_threads_per_row = 1;
  int ellr_split_max_threads_per_row_fp64 = 16;
  /// Past 8 columns of X each of a row's threads sums 4–8 columns, and on a matrix of at least
  /// ellr_wide_half_threads_min_rows rows ellr_spmm runs half the layout's threads per row (from
  /// 4, never below 2) where each thread then walks at most
  /// ellr_wide_half_max_entries_per_thread entries of a mean row: the row's sums take one
  /// shuffle round fewer (detail::ellr_wide_threads_per_row, formats/ellr.hpp). Fitted at N = 16
  /// on the 22 real matrices the planner gives ellr (H200: best cuSPARSE / ellr geomean
  /// 1.109 → 1.154 float, 1.043 → 1.106 double; the bound from 4000 to 8000 rows within 0.01 of
  /// it; the real matrices walk at most 11.3 entries a thread halved, the paper's random squares
  /// of 70+ a row lost when halved). docs/benchmarks/spmm-ellr-16-2026-11-29.md.
  std::int64_t ellr_wide_half_threads_min_rows = 6000;
  double ellr_wide_half_max_entries_per_thread = 16.0;
  /// The planner hands ellr_spmv 16 columns in double only on rows of at most
  /// ellr_wide_max_mean_row_fp64 entries on average: the real matrices it was fitted on reach 48
  /// (s1rmq4m1); the paper's random squares of 80–800 a row ran 0.78–0.89× cuSPARSE at 8000 rows
  /// (and 0.92–1.00× at 14 000, 1.20–1.31× at 4000). Float has no such bound (0.95–1.41× there).
  double ellr_wide_max_mean_row_fp64 = 48.0;
  /// cusparseSpMM's algorithm when a direct device::spmm caller asks for
  /// spmm_algorithm::automatic, and for planned products (detail::planned_spmm_algorithm, which
  /// follows a `spade tune` "cusparse" entry first for a matrix it measured, then applies these
  /// rules with the skewed-rows and ALG1 rules below, from A's row profile): ALG2 when B has at
  /// least spmm_alg2_min_columns columns and C at least spmm_alg2_min_elements (float) /
  /// spmm_alg2_min_elements_fp64 (double) elements, or when B has at least spmm_alg2_wide_columns
  /// columns and A from spmm_alg2_wide_min_mean_row to below spmm_alg2_wide_max_mean_row entries
  /// per row on average; else ALG3. From spade-bench spmm on the H100: at N = 32 ALG3 won on every
  /// real and synthetic matrix, rmat's 1 M rows included (ALG2 there ran 0.67×). At N = 128 ALG2
  /// won in float from 5·10⁶ elements of C (ct2010, nh2010, cage11, soc-Slashdot0902; ALG3 still
  /// won at 4.4–4.7·10⁶) and in double from about 2·10⁶ (Dubcova1, astro-ph, as-caida: ALG3 lost up
  /// to 1.5×). At N = 512 ALG2 won on the real matrices with ≥ 8 entries per row (bayer03 1.65×,
  /// mhd3200a 1.45×, s1rmq4m1 1.44×) except the power-law ego-Facebook (ALG3 1.24× faster) and
  /// wiki-Vote (1.08×), ALG3 on shorter rows; at N = 256 ALG3 still won on all of them
  /// (zenios 1.8×). Random rows of 80–800 entries (the paper's squares at density 0.02–0.1) went
  /// back to ALG3 (up to 1.7×). docs/benchmarks/spmm-real-2026-11-22d.csv,
  /// spmm-real-fp64-2026-11-22d.csv, spmm-real-wide-2026-11-22d.csv, spmm-paper-2026-11-22d.csv.
  std::int64_t spmm_alg2_min_columns = 64;
  std::int64_t spmm_alg2_min_elements = 5'000'000;
  std::int64_t spmm_alg2_min_elements_fp64 = 1'800'000;
  std::int64_t spmm_alg2_wide_columns = 512;
  std::int64_t spmm_alg2_wide_min_mean_row = 8;
  std::int64_t spmm_alg2_wide_max_mean_row = 64;
  /// fp64 on short rows (mean below spmm_alg2_short_row_max_mean entries) with C past the L2
  /// cache: ALG2 from spmm_alg2_short_row_min_columns_fp64 columns. circuit_1M_3 /
  /// circuit_1.6M_4.8 (3 and 4.8 per row) at N = 32: ALG2 0.417 / 0.829 ms, ALG3 0.749 / 1.353;
  /// at N = 16 ALG2 0.331 / 0.674, ALG3 0.387 / 0.698. At 6.96 per row (stencil7_160^3,
  /// N = 16) and 16–27 per row ALG3 won, and so did L2-resident Cs of short rows (ct2010,
  /// 67578 x 32). fp32 kept ALG3 at N = 16–32 on the same circuits. H100, 2026-11-24.
  std::int64_t spmm_alg2_short_row_max_mean = 6;
  std::int64_t spmm_alg2_short_row_min_columns_fp64 = 16;
  std::int64_t spmm_alg2_short_row_min_elements_fp64 = 8'000'000;
  /// Skewed rows in float keep ALG3 even where the rules above say ALG2: the longest row at
  /// least spmm_alg3_skewed_min_spread times the mean, and C below
  /// spmm_alg3_skewed_max_elements elements. Only read where the planner knows A's longest row
  /// (a planned product, `spade tune`). At N = 512 on the real set, H100 and H200 alike
  /// (docs/benchmarks/spmm-tuned-real-2026-11-27.csv and the same run's per-algorithm times):
  /// ALG3 against ALG2 0.043 / 0.054 ms on ego-Facebook (longest row 24× the mean, C 2.1·10⁶
  /// elements), 0.041 / 0.044 on wiki-Vote (72×, 4.2·10⁶), 0.041 / 0.044 on PGPgiantcompo
  /// (45×, 5.5·10⁶); ALG2 won on every matrix under 6·10⁶ elements whose spread was 5× or less
  /// (bayer03, cavity14, EX5, mhd3200a, s1rmq4m1, zenios, …) and on the skewed ones past it
  /// (as-caida, 652× and 1.4·10⁷: ALG2 0.085 against 0.111). double at N = 512 was not measured.
  std::int64_t spmm_alg3_skewed_min_spread = 20;
  std::int64_t spmm_alg3_skewed_max_elements = 6'000'000;
  /// Narrow products on large skewed matrices run ALG1 (both precisions, op(A) = A): B of at
  /// most spmm_alg1_max_columns columns, A of at least spmm_alg1_min_rows rows whose longest row
  /// is at least spmm_alg1_min_spread times the mean. Like the rule above, only where the planner
  /// knows A's longest row. spade-bench spmm, 2 x H200, 2026-11-28 (all three algorithms timed
  /// in the same run, docs/benchmarks/spmm-narrow-2026-11-28.md): ALG3 against ALG1 at N = 2 / 4
  /// on circuit_1.6M_4.8 (longest row 2000, 416× the mean) 0.305 / 0.444 ms against 0.162 /
  /// 0.202 in float, 0.620 / 0.651 against 0.239 / 0.289 in double; rmat_s20_ef16 at N = 4
  /// 0.637 against 0.370 in float, 0.539 against 0.505 in double. At N = 8 ALG1 still won on
  /// the circuit (1.5–1.6×) but lost on rmat in double (0.69×), and at N = 16 everywhere. On the
  /// real set (every matrix under 100 000 rows) ALG1 won at N ≤ 4 on some skewed graphs
  /// (wiki-Vote, PGPgiantcompo, ego-Facebook: 1.2–1.3×) but lost 0.59× on soc-Slashdot0902
  /// (spread 218) and 0.87× on email-Enron, and lost 1.5–2× on every matrix of spread under 20.
  std::int64_t spmm_alg1_max_columns = 4;
  std::int64_t spmm_alg1_min_rows = 1'000'000;
  std::int64_t spmm_alg1_min_spread = 20;
  /// Where those matrices have short rows, at most spmm_alg1_short_row_max_mean entries per row
  /// on average, ALG1 runs up to spmm_alg1_short_row_max_columns columns. spade-bench spmm, one
  /// H200, 2026-11-28 (docs/benchmarks/spmm-alg1-short-rows-2026-11-28.md), ALG3's time over
  /// ALG1's in float / double: circuit_1M_3 (3 per row) 1.57–1.72 / 1.72–2.41 at N = 5–8 and
  /// 1.39 / 1.51 at N = 12; circuit_1.6M_4.8 (4.8) 1.45–1.60 / 1.54–2.15 and 1.44 / 1.32;
  /// circuit_4M_6 (6) 1.46–1.82 / 1.43–2.02 and 1.63 / 1.23. At N = 16 ALG1 lost on all three
  /// (0.71–0.99 of ALG3; ALG2 won in double). rmat_s20_ef16 (15.3 per row) lost with ALG1 from
  /// N = 5 (0.73 / 0.64), so it keeps the 4-column bound.
  std::int64_t spmm_alg1_short_row_max_columns = 12;
  std::int64_t spmm_alg1_short_row_max_mean = 8;
  /// Small skewed graphs run ALG1 as well: A of at most spmm_alg1_small_max_rows rows, longest
  /// row at least spmm_alg1_min_spread times the mean, and at least
  /// spmm_alg1_small_min_long_rows rows longer than spmm_alg1_small_long_row entries; B of at
  /// most spmm_alg1_small_max_columns columns with nnz(A) · columns at most
  /// spmm_alg1_small_max_work. On such matrices ALG3 took 15–21 µs however small A was, ALG1
  /// 12–18. spade-bench spmm, one H200, 2026-11-28, no tune file
  /// (docs/benchmarks/spmm-alg1-small-graphs-2026-11-28.md), ALG3's time over ALG1's in float /
  /// double: wiki-Vote (8 297 rows, 806 longer than 32) 1.13–1.27 / 1.08–1.33 at N = 2–8,
  /// PGPgiantcompo (10 680, 197) 1.14–1.24 / 1.12–1.30, ego-Facebook (4 039, 1 693) 1.14–1.29 /
  /// 1.03–1.27 at N = 2–5 but 1.02 / 0.89 at N = 8 (1.4 · 10⁶ entries × columns: the work
  /// bound), generated R-MAT graphs of 4 096 and 8 192 rows 1.14–1.52 / 1.13–1.63 at N = 2–12
  /// within the bounds. From 16 384 rows ALG1 lost or came within 8 % (rmat_s14_ef16 0.59–0.98,
  /// astro-ph's 16 706 rows 0.74–1.08, every graph of 26 000 rows or more), and so it lost on
  /// skewed matrices with few long rows: Chem97ZtZ (2 541 rows, 24 longer than 32) 0.70–0.92,
  /// circuit_12k_4 (4) 0.46–0.61.
  std::int64_t spmm_alg1_small_max_rows = 12'000;
  std::int64_t spmm_alg1_small_long_row = 32;
  std::int64_t spmm_alg1_small_min_long_rows = 64;
  std::int64_t spmm_alg1_small_max_columns = 12;
  std::int64_t spmm_alg1_small_max_work = 1'200'000;
  /// The cuSPARSE wrappers (device::spmv, spmm, transpose) hand a csr operand of at most
  /// rowwise_max_extent rows and columns and rowwise_max_nnz entries to Spade's row-wise
  /// kernels. cuSPARSE 12.6 returned a zero last row for some 32-row matrices, depending on the
  /// calls made before (docs/vendor-bugs.md): lowering rowwise_max_extent below 32 exposes that
  /// bug again. At this size one launch without workspace costs about what cuSPARSE does (5.0
  /// against 4.8 µs on bcsstk03, N = 32). The entry bound matters only for operands built
  /// unchecked.
  int rowwise_max_extent = 256;
  std::int64_t rowwise_max_nnz = std::int64_t{1} << 16;
};

inline constexpr thresholds default_thresholds{};

/// The thresholds in force (process-wide; not synchronised: set them before evaluating).
inline thresholds& tuning() {
  static thresholds current = default_thresholds;
  return current;
}

}  // namespace spade
