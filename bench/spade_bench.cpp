// spade-bench: Spade's planned evaluation against cuSPARSE / cuBLAS called directly, following
// ../shared/BENCHMARKS.md (checked results, CUDA events, warm-ups, medians, same buffers).
//
//   spade-bench device
//   spade-bench overhead [--calls N] [--double] [--csv PATH] [--commit SHA]
//   spade-bench spmv   [set options] [timing options]
//   spade-bench spmm   [--n LIST] [--gemm] [--gcoo-p LIST] [--gcoo-split LIST] [set options]
//                      [timing options]
//   spade-bench spgemm [--max-products P] [--all-algs] [set options] [timing options]
//
// See usage_text below and docs/benchmarks/README.md. A benchmark may call cuSPARSE itself for
// its baselines; a user translation unit never does.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_baselines.hpp"
#include "bench_check.hpp"
#include "bench_cub_reduce.hpp"
#include "bench_sets.hpp"
#include "bench_support.hpp"
#include "bench_timing.hpp"
#include "explain_dump.hpp"

namespace spade::bench {
namespace {

const char* const usage_text =
    "usage: spade-bench COMMAND [options]\n"
    "commands:\n"
    "  device     the device line and the measured device copy bandwidth\n"
    "  overhead   host planning + dispatch time per evaluation vs cuSPARSE/cuBLAS called\n"
    "             directly (SpMV and SpMM on a 1000-row csr, GEMV on a 256x256 dense)\n"
    "  spmv       y = A*x      vs the best of cusparseSpMV CSR ALG1/ALG2\n"
    "  spmm       C = A*B      vs the best of cusparseSpMM CSR ALG1/ALG2/ALG3 (B, C row-major)\n"
    "  spgemm     C = A*A      vs cusparseSpGEMM (DEFAULT; ALG3 where DEFAULT fails)\n"
    "  tiled      C = A*A      tiled_spgemm (cached tiles, C back to csr) vs hash_spgemm, with\n"
    "                          the tile census and the planner's criterion\n"
    "  cg         Jacobi-preconditioned CG in Spade's vector algebra vs the same CG on\n"
    "             cuSPARSE SpMV + cuBLAS, same iteration count (SPD matrices only; fp64)\n"
    "  cwise      fused element-wise maps and reductions over --n elements (default 2^26) vs\n"
    "             the device copy bandwidth and CUB DeviceReduce, and a generated kernel's\n"
    "             first call: cold (NVRTC), from the disk cache, in memory; views (blocks\n"
    "             read and written through their stride, a strided column)\n"
    "  elementwise the maps of cwise only (with the views and first calls)\n"
    "  reduce     the reductions of cwise only\n"
    "  sddmm      cwise_product(S, X * transpose(Y)) at the --n depths k (default 32,128),\n"
    "             planned and kernel alone, vs cusparseSDDMM\n"
    "  multi      SpMV, SpMM (--n columns, default 8), transposes and SpGEMM over multi_gpu\n"
    "             operands on clusters of 1 .. every GPU: stencil27 --grid^3 (default 200),\n"
    "             R-MAT --rmat (default scale 22), A*A of stencil27 --spgemm-grid^3 (default\n"
    "             100); weak scaling, the measured link bandwidth and a 4/8-GPU projection\n"
    "             (--quick: small; --sets: some of stencil,rmat,spgemm,weak)\n"
    "  explain    explain() of every product kind on every matrix of the sets (A*x, A^T*x,\n"
    "             A*B at the --n widths (default 1,8,32,128,512), col-major and A^T*B at 32,\n"
    "             A*A, A*A^T), before and after a first product; nothing timed. Two\n"
    "             commits' outputs compared by bench/explain_diff.py\n"
    "set options (spmv, spmm, spgemm, sddmm, explain):\n"
    "  --matrices DIR    real matrices: every *.mtx.gz in DIR (default $SPADE_MATRIX_DIR)\n"
    "  --sets S          all (default), real, synthetic, heldout (large regular matrices\n"
    "                    no planner threshold was fitted on) or graphs (small generated\n"
    "                    power-law graphs and circuits); the last two are not part of all\n"
    "  --quick           a small subset (4 real, 4 synthetic) that runs in a few minutes\n"
    "  --only TEXT       only matrices whose name contains TEXT\n"
    "  --double          fp64 (default fp32)\n"
    "  --n LIST          spmm: dense widths, e.g. 32,128,512; 'n' = N equal to the matrix's\n"
    "                    columns, for the gcoo_paper family only (default 32)\n"
    "  --gemm            spmm: also time cuBLAS GEMM on the densified A (dense crossover)\n"
    "  --gcoo-p LIST     spmm: also time gcoo_spmm with these group sizes (column gcoo_variants)\n"
    "  --gcoo-split LIST spmm: with --gcoo-p, also these split sizes (entries per item)\n"
    "  --ellr-t LIST     spmv: also time ellr_spmv with these threads per row (2,4,8,16,32);\n"
    "                    spmm (N <= 8): ellr_spmm with them (column ellr_variants)\n"
    "  --ellr-split LIST spmm (N <= 8): ellr_spmm with X's columns split over these threads\n"
    "                    (1,2,4) at the planner's threads per row (gG) and at each --ellr-t\n"
    "                    (tTgG; iTgG on T lanes)\n"
    "  --max-products P  spgemm: skip matrices with more than P products (default 2e9;\n"
    "                    R-MAT is always run: it is the completion test)\n"
    "  --all-algs        spgemm: time ALG2 and ALG3 as well as DEFAULT\n"
    "cg options (and --matrices, --sets, --quick, --only, --seed, --reps above):\n"
    "  --max-iterations K  at most K iterations (default 2000)\n"
    "  --tolerance E     stop once ||r|| < E*||b|| (default 1e-10; 1e-5 with --float)\n"
    "  --float           fp32 (cg's default is fp64)\n"
    "  --reps N          timed solves per side, median reported (cg: default 5)\n"
    "timing options:\n"
    "  --warmup N        untimed runs first (default and minimum 5)\n"
    "  --reps N          timed runs, median reported with min and max (default and min 20)\n"
    "  --flush-l2        overwrite 2x L2 before each timed run (outside the events)\n"
    "  --reference-work W  check against Eigen in double when nnz*N (or products) <= W\n"
    "                    (default 5e7); larger results are checked against cuSPARSE\n"
    "  --seed S          seed of the synthetic matrices and the dense operands\n"
    "output:\n"
    "  --csv PATH        write one row per (matrix, N) as it is measured\n"
    "  --commit SHA      recorded in the report and the CSV (scripts pass git rev-parse)\n"
    "  --calls N         overhead: calls per measured loop (default 10000)\n"
    "exit status: 0 done; 1 usage or run error; 2 no GPU; 3 a result failed its check or\n"
    "Spade raised an error (the row says which)\n";

struct run_options {
  timing_options timing;
  std::string csv;
  std::string commit = "unknown";
  std::string device;
  std::string operation;  // spmv, spmm, spgemm
  std::string command;    // the command line, for the report
  bool all_algorithms = false;
  bool gemm = false;
  // spmm: gcoo_spmm also timed with these group sizes and split sizes (tuning sweeps).
  std::vector<int> gcoo_group_sizes;
  std::vector<int> gcoo_splits;
  // spmv: ellr_spmv also timed with these threads per row (ELLR-T sweep).
  std::vector<int> ellr_threads;
  // spmm: ellr_spmm also timed with X's columns split over these threads (column groups).
  std::vector<int> ellr_column_groups;
  double max_products = 2e9;
  double reference_work = 5e7;
  std::uint64_t seed = 20240601;
  double copy_gbps = NAN;
};

struct result_row {
  std::string family;
  std::string matrix;
  index_t rows = 0;
  index_t cols = 0;
  std::int64_t nnz = 0;
  index_t n = 0;
  std::string precision;
  std::string spade_kernel;
  stats spade;
  std::string baseline;
  stats base;
  double ratio = NAN;
  double gbps = NAN;
  double gflops = NAN;
  std::string check = "not run";
  double baseline_gbps = NAN;
  double spade_e2e_ms = NAN;
  double spade_first_ms = NAN;
  double breakeven = NAN;
  double working_set_mb = NAN;
  std::string memory;
  double products = NAN;
  double check_error = NAN;
  std::string check_against;
  double gemm_ms = NAN;
  // spmm: Spade's GCOO kernels timed directly (kernel only), whatever the planner picked.
  double gcoo_ms = NAN;
  double gcoo_ratio = NAN;  // baseline / gcoo_spmm
  double gcoo_paper_ms = NAN;
  double gcoo_convert_ms = NAN;  // csr → gcoo on the GPU, end to end
  std::string gcoo_launch;
  double gcoo_from_dense_ms = NAN;  // --gemm: dense → gcoo of the densified A, end to end
  std::string gcoo_variants;        // "p1=ms p2=ms s64=ms …" from --gcoo-p / --gcoo-split
  // spmv: Spade's ELLPACK-R kernels timed directly (kernel only) in the planner's layout, and
  // the variants (paper's kernel, ELLR-T widths, SELL-C-σ).
  double ellr_ms = NAN;
  double ellr_ratio = NAN;       // baseline / ellr_spmv in the planner's layout
  double ellr_convert_ms = NAN;  // csr → ellr (planner's layout) on the GPU, end to end
  double ellr_padding = NAN;     // padding share of that layout
  std::string ellr_launch;
  std::string ellr_variants;         // "paper=ms t2=ms … sell=ms"
  double spgemm_binning_pct = NAN;   // both binning steps, % of the timed-phase total
  double spgemm_extra_memory = NAN;  // the pool's peak during C = A·A less A and C, / bytes(C)
  std::string spgemm_report;         // products, bins, phases (device::hash_spgemm_report)
  // tiled: the tile census, its criterion's pick, and tiled_spgemm's own times. spmm rows:
  // tiled_fill, tiled_kernel_ms (tiled_spmm alone, kernel only) and tiled_convert_ms.
  double tiled_products_per_pair = NAN;
  double tiled_fill = NAN;        // mean entries per tile of A
  std::string tiled_criterion;    // the planner's pick from the census: tiled_spgemm / hash
  double tiled_kernel_ms = NAN;   // tiled A, tiled B → tiled C (spmm: tiled A times dense B)
  double tiled_convert_ms = NAN;  // csr → tiled of A (spmm: and the tiles' condensed windows)
  double tiled_fp16_ms = NAN;     // the fp16 arithmetic, with the conversion back to csr
  std::string note;
};

const std::vector<std::string> csv_columns = {"family",
                                              "matrix",
                                              "rows",
                                              "cols",
                                              "nnz",
                                              "n",
                                              "precision",
                                              "spade_kernel",
                                              "spade_ms_median",
                                              "spade_ms_min",
                                              "spade_ms_max",
                                              "baseline",
                                              "baseline_ms_median",
                                              "ratio",
                                              "gbps",
                                              "gflops",
                                              "check",
                                              "baseline_ms_min",
                                              "baseline_ms_max",
                                              "baseline_gbps",
                                              "spade_e2e_ms",
                                              "spade_first_call_ms",
                                              "conversion_breakeven_calls",
                                              "working_set_mb",
                                              "memory",
                                              "products",
                                              "check_error",
                                              "check_against",
                                              "gemm_ms",
                                              "gcoo_ms",
                                              "gcoo_ratio",
                                              "gcoo_paper_ms",
                                              "gcoo_convert_ms",
                                              "gcoo_launch",
                                              "gcoo_variants",
                                              "gcoo_from_dense_ms",
                                              "ellr_ms",
                                              "ellr_ratio",
                                              "ellr_convert_ms",
                                              "ellr_padding",
                                              "ellr_launch",
                                              "ellr_variants",
                                              "spgemm_binning_pct",
                                              "spgemm_extra_memory",
                                              "spgemm_report",
                                              "tiled_products_per_pair",
                                              "tiled_fill",
                                              "tiled_criterion",
                                              "tiled_kernel_ms",
                                              "tiled_convert_ms",
                                              "tiled_fp16_ms",
                                              "copy_gbps",
                                              "note",
                                              "commit",
                                              "device",
                                              "operation",
                                              "command"};

std::vector<std::string> csv_cells(const result_row& r, const run_options& ro) {
  return {r.family,
          r.matrix,
          std::to_string(r.rows),
          std::to_string(r.cols),
          std::to_string(r.nnz),
          r.n ? std::to_string(r.n) : std::string(),
          r.precision,
          r.spade_kernel,
          cell(r.spade.median),
          cell(r.spade.min),
          cell(r.spade.max),
          r.baseline,
          cell(r.base.median),
          cell(r.ratio),
          cell(r.gbps),
          cell(r.gflops),
          r.check,
          cell(r.base.min),
          cell(r.base.max),
          cell(r.baseline_gbps),
          cell(r.spade_e2e_ms),
          cell(r.spade_first_ms),
          cell(r.breakeven),
          cell(r.working_set_mb),
          r.memory,
          cell(r.products),
          cell(r.check_error),
          r.check_against,
          cell(r.gemm_ms),
          cell(r.gcoo_ms),
          cell(r.gcoo_ratio),
          cell(r.gcoo_paper_ms),
          cell(r.gcoo_convert_ms),
          r.gcoo_launch,
          r.gcoo_variants,
          cell(r.gcoo_from_dense_ms),
          cell(r.ellr_ms),
          cell(r.ellr_ratio),
          cell(r.ellr_convert_ms),
          cell(r.ellr_padding),
          r.ellr_launch,
          r.ellr_variants,
          cell(r.spgemm_binning_pct),
          cell(r.spgemm_extra_memory),
          r.spgemm_report,
          cell(r.tiled_products_per_pair),
          cell(r.tiled_fill),
          r.tiled_criterion,
          cell(r.tiled_kernel_ms),
          cell(r.tiled_convert_ms),
          cell(r.tiled_fp16_ms),
          cell(ro.copy_gbps),
          r.note,
          ro.commit,
          ro.device,
          ro.operation,
          ro.command};
}

// ---- small helpers ----------------------------------------------------------------------------

/// The kernel explain() reports as chosen ("chosen: cusparse_spmv (...)").
std::string chosen_kernel(const std::string& explanation) {
  std::size_t at = explanation.find("chosen: ");
  if (at == std::string::npos) return "?";
  at += std::strlen("chosen: ");
  return explanation.substr(at, explanation.find_first_of(" (\n", at) - at);
}

/// NaN bytes over an output, so an element a kernel does not write fails the check.
void poison(void* d, std::size_t bytes, cudaStream_t stream) {
  if (bytes) check_cuda(cudaMemsetAsync(d, 0xff, bytes, stream), "cudaMemsetAsync (poison)");
}

/// Where the timed runs read from (BENCHMARKS.md: bandwidth counts for working sets of at
/// least 200 MB, or with L2 flushed): dram; l2-flushed; l2-resident (fits L2); partly-l2.
std::string memory_label(double bytes, bool flushed) {
  if (bytes >= 200e6) return "dram";
  if (flushed) return "l2-flushed";
  const double l2 = static_cast<double>(default_context().properties().l2_cache_bytes);
  return bytes <= l2 ? "l2-resident" : "partly-l2";
}

void append_note(std::string& note, const std::string& more) {
  if (!note.empty()) note += "; ";
  note += more;
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", ms);
  return text;
}

template <class T>
double csr_bytes(std::int64_t rows, std::int64_t nnz) {
  return static_cast<double>(nnz) * (sizeof(T) + sizeof(index_t)) +
         static_cast<double>(rows + 1) * sizeof(index_t);
}

/// The best (lowest median) of the baseline variants that ran and were right.
struct best_of {
  std::string name;
  stats time;
  void offer(const std::string& variant, const stats& s) {
    if (name.empty() || s.median < time.median) {
      name = variant;
      time = s;
    }
  }
};

/// Conversion cost on the first call (A's cache cleared) and its break-even call count.
template <class Call, class M>
void first_call(result_row& r, Call&& call, const M& a, gpu_timer& timer) {
  a.cache().clear();
  const std::size_t before = conversion_counter().load();
  const auto t0 = std::chrono::steady_clock::now();
  call();
  timer.sync();
  const auto t1 = std::chrono::steady_clock::now();
  const std::size_t conversions = conversion_counter().load() - before;
  r.spade_first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  if (conversions == 0) return;
  append_note(r.note, std::to_string(conversions) + " conversion(s) on the first call");
  const double saving = r.base.median - r.spade.median;
  if (saving > 0 && !std::isnan(r.spade_e2e_ms))
    r.breakeven = (r.spade_first_ms - r.spade_e2e_ms) / saving;
  else
    append_note(r.note, "the conversion never pays off against the baseline");
}

void finish_ratio(result_row& r) {
  if (!std::isnan(r.spade.median) && !std::isnan(r.base.median) && r.spade.median > 0)
    r.ratio = r.base.median / r.spade.median;
  if (r.spade.hold_expired || r.base.hold_expired)
    append_note(r.note, "a stream hold expired: times may include host work");
}

template <class T>
result_row start_row(const matrix_case<T>& mc, const csr<T, cpu>& host, index_t n) {
  result_row r;
  r.family = mc.family;
  r.matrix = mc.name;
  r.rows = host.rows();
  r.cols = host.cols();
  r.nnz = host.nnz();
  r.n = n;
  r.precision = precision_name<T>();
  return r;
}

// The check a kernel timed on its own passes before its time counts, the planned result's
// judge: the double reference where one was computed, else cuSPARSE's output, else none (the
// planned result was checked on sampled rows instead). Throws naming `what` when it fails.
template <class T>
void require_same_result(const std::vector<T>& got, bool small, const std::vector<double>& ref,
                         const std::vector<T>& base_out, double tol, const std::string& what) {
  const check_outcome chk = small               ? compare_values(got, ref, "reference", tol)
                            : !base_out.empty() ? compare_values(got, base_out, "cusparse", tol)
                                                : check_outcome{true, 0, "", ""};
  if (!chk.ok) throw std::runtime_error(what + " wrong (" + chk.note + ")");
}

void apply_check(result_row& r, const check_outcome& c) {
  r.check = c.ok ? "ok" : "FAILED";
  r.check_error = c.error;
  r.check_against = c.against;
  if (!c.ok) append_note(r.note, "check: " + c.note);
}

// ---- SpMV -----------------------------------------------------------------------------------

template <class T>
result_row bench_spmv(const matrix_case<T>& mc, const csr<T, cpu>& host, const run_options& ro,
                      gpu_timer& timer) {
  result_row r = start_row(mc, host, 1);
  const cudaStream_t stream = timer.stream();
  const double tol = tolerance<T>();
  const csr<T, gpu> a = to_gpu(host);
  const vector<T, cpu> x_host = random_vector<T>(a.cols(), ro.seed + 1);
  const vector<T, gpu> x = to_gpu(x_host);
  vector<T, gpu> y(a.rows());
  vector<T, gpu> yb(a.rows());
  auto spade_call = [&] { y = a * x; };
  const std::size_t y_bytes = sizeof(T) * static_cast<std::size_t>(a.rows());

  const bool small = static_cast<double>(a.nnz()) <= ro.reference_work;
  std::vector<double> ref;
  if (small) {
    const csr<double, cpu> ad = to_double(host);
    const vector<double, cpu> xd = to_double(x_host);
    ref = spade::reference(ad * xd).values();
  }

  // Spade's result first (computed, not yet judged: the judge may be cuSPARSE's).
  std::vector<T> out;
  try {
    // The planner converts a csr operand from its second product on (ellr_min_uses): the
    // checked and timed calls are the steady state an iterative solver sees.
    spade_call();
    r.spade_kernel = chosen_kernel(explain(a * x));
    poison(y.data(), y_bytes, stream);
    spade_call();
    out = y.values().to_host();
  } catch (const std::exception& e) {
    r.spade_kernel = "error";
    r.check = "error";
    append_note(r.note, std::string("spade: ") + e.what());
  }

  spmv_baseline<T> base(a, x, yb, stream);
  best_of best;
  std::vector<T> base_out;
  for (auto& v : base.variants()) {
    try {
      if (!v.status.error.empty()) throw std::runtime_error(v.status.error);
      poison(yb.data(), y_bytes, stream);
      base.run(v);
      std::vector<T> b = yb.values().to_host();
      const check_outcome c = small              ? compare_values(b, ref, "reference", tol)
                              : base_out.empty() ? check_outcome{true, 0, "", ""}
                                                 : compare_values(b, base_out, "cusparse", tol);
      if (!c.ok) throw std::runtime_error("wrong result (" + c.note + ")");
      if (base_out.empty()) base_out = std::move(b);
      const stats s = timer.kernel([&] { base.run(v); }, ro.timing);
      best.offer(v.status.name, s);
      append_note(r.note, v.status.name + " " + ms_text(s.median));
    } catch (const std::exception& e) {
      append_note(r.note, v.status.name + " failed: " + e.what());
    }
  }
  r.baseline = best.name.empty() ? "cusparse_spmv: failed" : best.name;
  r.base = best.time;

  if (r.check != "error") {
    if (small) {
      apply_check(r, compare_values(out, ref, "reference", tol));
    } else if (!base_out.empty()) {
      apply_check(r, compare_values(out, base_out, "cusparse", tol));
    } else {
      const auto rows = sample_rows(a.rows(), 4096);
      const auto sampled = sampled_dense_product(host, x_host.values(), 1, rows);
      apply_check(r, compare_values(pick_rows(out, 1, rows), sampled, "sampled", tol));
    }
  }
  if (r.check == "ok") {
    r.spade = timer.kernel(spade_call, ro.timing);
    r.spade_e2e_ms = timer.wall(spade_call, ro.timing.reps).median;
    first_call(r, spade_call, a, timer);
  }

  // Spade's ELLPACK-R kernels on their own (whatever the planner picked), each checked against
  // the same judge as the planned result, then timed kernel-only.
  if (r.check == "ok") {
    try {
      auto judge = [&](const std::string& what) {
        require_same_result(yb.values().to_host(), small, ref, base_out, tol, what);
      };
      auto timed = [&](const ellr<T, gpu>& e, int threads) {
        poison(yb.data(), y_bytes, stream);
        device::ellr_spmv(T(1), e, x, T(0), yb, threads);
        judge("ellr_spmv");
        return timer.kernel([&] { device::ellr_spmv(T(1), e, x, T(0), yb, threads); }, ro.timing)
            .median;
      };
      auto add_variant = [&](const std::string& name, double ms) {
        r.ellr_variants += (r.ellr_variants.empty() ? "" : " ") + name + "=" + cell(ms);
      };
      const ellr_layout planned = detail::planned_ellr_layout(a);
      const auto t0 = std::chrono::steady_clock::now();
      const ellr<T, gpu> e = convert<ellr>(a, planned);
      timer.sync();
      r.ellr_convert_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      r.ellr_padding = e.padding();
      poison(yb.data(), y_bytes, stream);
      r.ellr_launch = device::ellr_spmv(T(1), e, x, T(0), yb).describe();
      r.ellr_ms = timed(e, 0);
      r.ellr_ratio = r.base.median / r.ellr_ms;
      // The paper's kernel (its layout, a thread per row) unless its padding would need more
      // than four times the entries' memory; for each ELLR-T width asked for: tT, T threads per
      // row on the paper's column-major layout, and iT, the same on lanes = T (a row's T
      // entries side by side); SELL-C-σ with one lane (sell) and with T lanes (sell_iT).
      const double plain_slots = static_cast<double>(detail::row_profile_of(a).longest) *
                                 detail::ellr_slice_height(a.rows(), ellr_layout{});
      const bool plain_fits = plain_slots <= 4.0 * static_cast<double>(a.nnz()) + 1e6;
      auto layout_for = [&](const ellr_layout& layout) {
        return planned == layout ? ellr<T, gpu>() : convert<ellr>(a, layout);
      };
      if (plain_fits) {
        const ellr<T, gpu> plain = layout_for(ellr_layout{});
        const ellr<T, gpu>& p = planned == ellr_layout{} ? e : plain;
        add_variant("paper", timed(p, 1));
        for (const int t : ro.ellr_threads) {
          if (t <= 1) continue;
          add_variant("t" + std::to_string(t), timed(p, t));
          const ellr_layout interleaved{0, 0, t};
          const ellr<T, gpu> il = layout_for(interleaved);
          add_variant("i" + std::to_string(t), timed(planned == interleaved ? e : il, t));
        }
      } else {
        append_note(r.note, "paper layout skipped (" + cell(plain_slots) + " slots)");
      }
      const ellr_layout sliced{32, 1024};
      const ellr<T, gpu> sell = layout_for(sliced);
      add_variant("sell", timed(planned == sliced ? e : sell, 0));
      for (const int t : ro.ellr_threads) {
        if (t <= 1) continue;
        const ellr_layout interleaved{32, 1024, t};
        const ellr<T, gpu> sl = layout_for(interleaved);
        add_variant("sell_i" + std::to_string(t), timed(planned == interleaved ? e : sl, t));
      }
    } catch (const std::exception& ex) {
      append_note(r.note, std::string("ellr: ") + ex.what());
    }
  }
  const double bytes =
      csr_bytes<T>(a.rows(), a.nnz()) + sizeof(T) * (static_cast<double>(a.rows()) + a.cols());
  r.working_set_mb = bytes / 1e6;
  r.memory = memory_label(bytes, ro.timing.flush_l2);
  r.gbps = bytes / (r.spade.median * 1e-3) / 1e9;
  r.baseline_gbps = bytes / (r.base.median * 1e-3) / 1e9;
  r.gflops = 2.0 * static_cast<double>(a.nnz()) / (r.spade.median * 1e-3) / 1e9;
  finish_ratio(r);
  return r;
}

// ---- SpMM -----------------------------------------------------------------------------------

template <class T>
result_row bench_spmm(const matrix_case<T>& mc, const csr<T, cpu>& host, index_t n,
                      const run_options& ro, gpu_timer& timer) {
  result_row r = start_row(mc, host, n);
  const cudaStream_t stream = timer.stream();
  const double tol = tolerance<T>();
  const csr<T, gpu> a = to_gpu(host);
  const dense<T, cpu> b_host = random_dense<T>(a.cols(), n, ro.seed + 2);
  const dense<T, gpu> b = to_gpu(b_host);
  dense<T, gpu> c(a.rows(), n);
  dense<T, gpu> cb(a.rows(), n);
  auto spade_call = [&] { c = a * b; };
  const std::size_t c_bytes = sizeof(T) * c.element_count();

  const bool small = static_cast<double>(a.nnz()) * n <= ro.reference_work;
  std::vector<double> ref;
  if (small) {
    const csr<double, cpu> ad = to_double(host);
    const dense<double, cpu> bd = to_double(b_host);
    ref = spade::reference(ad * bd).values();
  }

  std::vector<T> out;
  try {
    // Steady state: the planner converts a csr for ellr_spmv from its ellr_min_uses-th product
    // and for a narrow gcoo_spmm from its gcoo_narrow_min_uses-th; the checked call is that one.
    const int before = std::max({2, tuning().ellr_min_uses, tuning().gcoo_narrow_min_uses}) - 1;
    for (int k = 0; k < before; ++k)
      spade_call();
    r.spade_kernel = chosen_kernel(explain(a * b));
    poison(c.data(), c_bytes, stream);
    spade_call();
    out = c.values().to_host();
  } catch (const std::exception& e) {
    r.spade_kernel = "error";
    r.check = "error";
    append_note(r.note, std::string("spade: ") + e.what());
  }

  best_of best;
  std::vector<T> base_out;
  {
    spmm_baseline<T> base(a, b, cb, stream);
    for (auto& v : base.variants()) {
      try {
        if (!v.status.error.empty()) throw std::runtime_error(v.status.error);
        poison(cb.data(), c_bytes, stream);
        base.run(v);
        std::vector<T> got = cb.values().to_host();
        const check_outcome chk = small ? compare_values(got, ref, "reference", tol)
                                  : base_out.empty()
                                      ? check_outcome{true, 0, "", ""}
                                      : compare_values(got, base_out, "cusparse", tol);
        if (!chk.ok) throw std::runtime_error("wrong result (" + chk.note + ")");
        if (base_out.empty()) base_out = std::move(got);
        const stats s = timer.kernel([&] { base.run(v); }, ro.timing);
        best.offer(v.status.name, s);
        append_note(r.note, v.status.name + " " + ms_text(s.median));
      } catch (const std::exception& e) {
        (void)cudaGetLastError();  // a failed baseline must not leave its error to the next call
        append_note(r.note, v.status.name + " failed: " + e.what());
      }
    }
  }
  r.baseline = best.name.empty() ? "cusparse_spmm: failed" : best.name;
  r.base = best.time;

  if (r.check != "error") {
    if (small) {
      apply_check(r, compare_values(out, ref, "reference", tol));
    } else if (!base_out.empty()) {
      apply_check(r, compare_values(out, base_out, "cusparse", tol));
    } else {
      const auto rows = sample_rows(a.rows(), 1024);
      const auto sampled = sampled_dense_product(host, b_host.values(), n, rows);
      apply_check(r, compare_values(pick_rows(out, n, rows), sampled, "sampled", tol));
    }
  }
  if (r.check == "ok") {
    r.spade = timer.kernel(spade_call, ro.timing);
    r.spade_e2e_ms = timer.wall(spade_call, ro.timing.reps).median;
    first_call(r, spade_call, a, timer);
  }

  // Every kernel timed on its own below (gcoo, ellr, tiled, cuBLAS) is first checked in cb
  // against the planned result's judge.
  auto judge = [&](const std::string& what) {
    require_same_result(cb.values().to_host(), small, ref, base_out, tol, what);
  };

  // Spade's GCOO kernels on their own (the planner may have picked another): each checked
  // against the same judge as the planned result, then timed kernel-only.
  if (r.check == "ok") {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      const gcoo<T, gpu> g = convert<gcoo>(a, detail::planned_group_size(a));  // as planned
      timer.sync();
      r.gcoo_convert_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      poison(cb.data(), c_bytes, stream);
      r.gcoo_launch = device::gcoo_spmm(T(1), g, b, T(0), cb).describe();
      judge("gcoo_spmm");
      r.gcoo_ms = timer.kernel([&] { device::gcoo_spmm(T(1), g, b, T(0), cb); }, ro.timing).median;
      r.gcoo_ratio = r.base.median / r.gcoo_ms;
      auto add_variant = [&](const std::string& name, auto&& call) {
        poison(cb.data(), c_bytes, stream);
        call();
        judge(name);
        const double ms = timer.kernel(call, ro.timing).median;
        r.gcoo_variants += (r.gcoo_variants.empty() ? "" : " ") + name + "=" + cell(ms);
      };
      // Every listed group size with the default cut and every listed cut ("p1", "p1s32").
      for (const int p : ro.gcoo_group_sizes) {
        const gcoo<T, gpu> gp = convert<gcoo>(a, p);
        const std::string name = "p" + std::to_string(p);
        add_variant(name, [&] { device::gcoo_spmm(T(1), gp, b, T(0), cb); });
        for (const int split : ro.gcoo_splits)
          add_variant(name + "s" + std::to_string(split),
                      [&] { device::gcoo_spmm(T(1), gp, b, T(0), cb, split); });
      }
      if (mc.family == "gcoo_paper") {
        poison(cb.data(), c_bytes, stream);
        device::gcoo_spmm_paper(T(1), g, b, T(0), cb);
        judge("gcoo_spmm_paper");
        r.gcoo_paper_ms =
            timer.kernel([&] { device::gcoo_spmm_paper(T(1), g, b, T(0), cb); }, ro.timing).median;
      }
    } catch (const std::exception& e) {
      r.check = "FAILED";
      append_note(r.note, std::string("gcoo: ") + e.what());
    }
  }

  // With --ellr-t or --ellr-split and B of at most ellr_max_vectors columns: ellr_spmm on its
  // own, on the planner's layout at its threads per row (ellr_ms, ellr_launch); per listed T, on
  // that layout with T threads ("tT") and on the same slices with T lanes ("iT"); per listed G,
  // with X's columns split over G threads at the planner's threads per row ("gG") and at each
  // listed T ("tTgG"; "iTgG" on T lanes; splits the kernel takes only); each checked like the
  // gcoo kernel, then timed kernel-only (ellr_variants).
  if (r.check == "ok" && (!ro.ellr_threads.empty() || !ro.ellr_column_groups.empty()) &&
      n <= detail::ellr_max_split_vectors) {
    try {
      auto timed = [&](const ellr<T, gpu>& e, int threads, int groups, const std::string& what) {
        poison(cb.data(), c_bytes, stream);
        device::ellr_spmm(T(1), e, b, T(0), cb, threads, groups);
        judge(what);
        return timer
            .kernel([&] { device::ellr_spmm(T(1), e, b, T(0), cb, threads, groups); }, ro.timing)
            .median;
      };
      auto add_variant = [&](const std::string& name, double ms) {
        r.ellr_variants += (r.ellr_variants.empty() ? "" : " ") + name + "=" + cell(ms);
      };
      const ellr_layout planned = detail::planned_ellr_layout(a);
      const ellr<T, gpu> e = convert<ellr>(a, planned);
      r.ellr_padding = e.padding();
      poison(cb.data(), c_bytes, stream);
      const device::ellr_spmv_launch launch = device::ellr_spmm(T(1), e, b, T(0), cb);
      r.ellr_launch = launch.describe();
      r.ellr_ms = timed(e, 0, 0, "ellr_spmm");
      r.ellr_ratio = r.base.median / r.ellr_ms;
      // The splits ellr_spmm takes at `threads` per row (it throws on the others).
      auto splittable = [&](int threads, int groups) {
        return detail::ellr_split_possible(threads, groups, static_cast<int>(n));
      };
      for (const int g : ro.ellr_column_groups)
        if (splittable(launch.threads_per_row, g))
          add_variant("g" + std::to_string(g), timed(e, 0, g, "ellr_spmm g" + std::to_string(g)));
      for (const int t : ro.ellr_threads) {
        const std::string name = std::to_string(t);
        add_variant("t" + name, timed(e, t, 0, "ellr_spmm t" + name));
        for (const int g : ro.ellr_column_groups)
          if (splittable(t, g))
            add_variant("t" + name + "g" + std::to_string(g),
                        timed(e, t, g, "ellr_spmm t" + name + "g" + std::to_string(g)));
        const ellr_layout lanes{planned.slice_height, planned.sort_window, t};
        if (lanes == planned) continue;
        const ellr<T, gpu> il = convert<ellr>(a, lanes);
        add_variant("i" + name, timed(il, t, 0, "ellr_spmm i" + name));
        for (const int g : ro.ellr_column_groups)
          if (g > 1 && splittable(t, g))
            add_variant("i" + name + "g" + std::to_string(g),
                        timed(il, t, g, "ellr_spmm i" + name + "g" + std::to_string(g)));
      }
    } catch (const std::exception& e) {
      r.check = "FAILED";
      append_note(r.note, std::string("ellr_spmm: ") + e.what());
    }
  }

  // tiled_spmm on its own (the planner may have picked another), checked like the gcoo kernel,
  // then timed kernel-only; its plain-TF32 mode and the conversion's break-even go to the note.
  if (r.check == "ok") {
    try {
      // The conversion: csr to tiles, then (in the first product) tiles to condensed windows,
      // measured as the first product's wall time less a cached product's.
      poison(cb.data(), c_bytes, stream);
      timer.sync();
      const auto t0 = std::chrono::steady_clock::now();
      const tiled<T, gpu> at = convert<tiled>(a);
      device::tiled_spmm(T(1), at, b, T(0), cb);
      timer.sync();
      const double first_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      r.tiled_fill = at.mean_fill();
      judge("tiled_spmm");
      r.tiled_kernel_ms =
          timer.kernel([&] { device::tiled_spmm(T(1), at, b, T(0), cb); }, ro.timing).median;
      r.tiled_convert_ms = std::max(first_ms - r.tiled_kernel_ms, 0.0);
      const double tf32_ms =
          timer
              .kernel(
                  [&] { device::tiled_spmm(T(1), at, b, T(0), cb, device::spmm_arithmetic::tf32); },
                  ro.timing)
              .median;
      append_note(r.note, "tiled_spmm " + ms_text(r.tiled_kernel_ms) + " (x" +
                              cell(r.base.median / r.tiled_kernel_ms) + " vs baseline), tf32 " +
                              ms_text(tf32_ms) + ", fill " + cell(r.tiled_fill));
      if (r.tiled_kernel_ms < r.base.median)
        append_note(r.note, "tiled conversion pays back after " +
                                cell(r.tiled_convert_ms / (r.base.median - r.tiled_kernel_ms)) +
                                " products");
    } catch (const out_of_memory& e) {
      // A matrix whose tiled copy does not fit beside the rest is skipped, not a failed product:
      // the planned result above was already checked.
      append_note(r.note, std::string("tiled_spmm skipped: ") + e.what());
    } catch (const std::exception& e) {
      r.check = "FAILED";
      append_note(r.note, std::string("tiled_spmm: ") + e.what());
    }
  }

  // The dense alternative: cuBLAS GEMM on A densified once (outside the timed region).
  const double cells = static_cast<double>(a.rows()) * a.cols();
  if (ro.gemm && cells <= tuning().densify_max_elements) {
    try {
      const dense<T, gpu> ad = convert<dense>(a);
      dense_baseline<T> blas(stream);
      poison(cb.data(), c_bytes, stream);
      blas.gemm(ad, b, cb);
      judge("cublas gemm");
      r.gemm_ms = timer.kernel([&] { blas.gemm(ad, b, cb); }, ro.timing).median;
      // sparse_view's path: the dense A grouped on the GPU (paper's Algorithm 1), end to end.
      const index_t p = detail::planned_group_size(a);
      r.gcoo_from_dense_ms =
          timer.wall([&] { (void)convert<gcoo>(ad, p); }, std::max(3, ro.timing.reps / 4)).median;
    } catch (const std::exception& e) {
      append_note(r.note, std::string("cublas gemm failed: ") + e.what());
    }
  }

  const double bytes =
      csr_bytes<T>(a.rows(), a.nnz()) + sizeof(T) * (static_cast<double>(a.rows()) + a.cols()) * n;
  r.working_set_mb = bytes / 1e6;
  r.memory = memory_label(bytes, ro.timing.flush_l2);
  r.gbps = bytes / (r.spade.median * 1e-3) / 1e9;
  r.baseline_gbps = bytes / (r.base.median * 1e-3) / 1e9;
  r.gflops = 2.0 * static_cast<double>(a.nnz()) * n / (r.spade.median * 1e-3) / 1e9;
  finish_ratio(r);
  return r;
}

// ---- SpGEMM ---------------------------------------------------------------------------------

/// hash_spgemm's phases (one timed call: an event and a sync per phase, so the sum exceeds an
/// untimed call a little), the binning share of them, and its extra memory: the pool's peak
/// during one call less what A and C hold, over bytes(C).
template <class T>
void hash_spgemm_facts(result_row& r, const csr<T, gpu>& a, std::int64_t c_nnz, gpu_timer& timer,
                       const timing_options& timing) {
  device::hash_spgemm_report report;
  { const csr<T, gpu> c = device::hash_spgemm(T(1), a, a, &report, /*time_phases=*/true); }
  double total = 0;
  double binning = 0;
  for (const auto& [name, ms] : report.phase_ms) {
    total += ms;
    if (name.find("binning") != std::string::npos) binning += ms;
  }
  r.spgemm_binning_pct = total > 0 ? 100.0 * binning / total : NAN;
  r.spgemm_report = report.describe();
  // With dense routing on by default, the same product with long rows on the dense accumulator
  // only when shared memory cannot take them; off (the default since 2026-11-24), that is the
  // product already timed.
  if (device::hash_spgemm_dense_row_min > 0) {
    const stats tables_only = timer.kernel(
        [&] { const csr<T, gpu> c = device::hash_spgemm(T(1), a, a, nullptr, false, 0); }, timing,
        /*hold=*/false);
    append_note(r.note, "hash_spgemm without dense routing " + ms_text(tables_only.median));
  }
  context& ctx = default_context();
  trim_default_pool();
  const std::size_t before = ctx.pool_bytes_in_use();
  ctx.pool_bytes_peak(/*restart=*/true);
  std::size_t c_bytes = 0;
  {
    const csr<T, gpu> c = device::hash_spgemm(T(1), a, a);
    c_bytes = (c.row_ptr().size()) * sizeof(index_t) +
              static_cast<std::size_t>(c_nnz) * (sizeof(index_t) + sizeof(T));
  }
  const std::size_t peak = ctx.pool_bytes_peak();
  r.spgemm_extra_memory = c_bytes > 0 ? (static_cast<double>(peak) - static_cast<double>(before) -
                                         static_cast<double>(c_bytes)) /
                                            static_cast<double>(c_bytes)
                                      : NAN;
}

template <class T>
result_row bench_spgemm(const matrix_case<T>& mc, const csr<T, cpu>& host, const run_options& ro,
                        gpu_timer& timer) {
  result_row r = start_row(mc, host, 0);
  const cudaStream_t stream = timer.stream();
  const double tol = tolerance<T>();
  r.baseline = "cusparse_spgemm";
  if (host.rows() != host.cols()) {
    r.check = "skipped";
    r.note = "not square: A*A undefined";
    return r;
  }
  r.products = product_count(host, host);
  if (r.products > ro.max_products && mc.family != "rmat") {
    r.check = "skipped";
    r.note = "products " + cell(r.products) + " > --max-products " + cell(ro.max_products);
    return r;
  }
  const csr<T, gpu> a = to_gpu(host);
  csr<T, gpu> c;
  auto spade_call = [&] { c = a * a; };

  const bool small = r.products <= ro.reference_work;
  csr<double, cpu> ref;
  if (small) {
    const csr<double, cpu> ad = to_double(host);
    ref = spade::reference(ad * ad);
  }

  csr<T, cpu> out;
  try {
    r.spade_kernel = chosen_kernel(explain(a * a));
    spade_call();
    out = to_cpu(c);
  } catch (const std::exception& e) {
    r.spade_kernel = "error";
    r.check = "error";
    append_note(r.note, std::string("spade: ") + e.what());
  }
  c = csr<T, gpu>();

  best_of best;
  csr<T, cpu> base_out;
  bool have_base = false;
  {
    spgemm_baseline<T> base(a, a, stream, ro.all_algorithms);
    for (std::size_t i = 0; i < base.variants().size(); ++i) {
      const auto& v = base.variants()[i];
      // ALG3 (chunked, less memory) is the fallback where DEFAULT fails, unless --all-algs.
      if (i > 0 && have_base && !ro.all_algorithms) continue;
      try {
        base.run(v);
        csr<T, cpu> got = base.result();
        const check_outcome chk = small        ? compare_csr(got, ref, "reference", tol)
                                  : !have_base ? check_outcome{true, 0, "", ""}
                                               : compare_csr(got, base_out, "cusparse", tol);
        if (!chk.ok) throw std::runtime_error("wrong result (" + chk.note + ")");
        if (!have_base) base_out = std::move(got);
        have_base = true;
        const stats s = timer.kernel([&] { base.run(v); }, ro.timing, /*hold=*/false);
        best.offer(v.status.name, s);
        append_note(r.note, v.status.name + " " + ms_text(s.median));
      } catch (const std::exception& e) {
        (void)cudaGetLastError();  // a failed baseline must not leave its error to the next call
        append_note(r.note, v.status.name + " failed: " + e.what());
      }
    }
  }
  trim_default_pool();
  r.baseline = best.name.empty() ? "cusparse_spgemm: failed" : best.name;
  r.base = best.time;

  if (r.check != "error") {
    if (small) {
      apply_check(r, compare_csr(out, ref, "reference", tol));
    } else if (have_base) {
      apply_check(r, compare_csr(out, base_out, "cusparse", tol));
    } else {
      const auto rows = sample_rows(a.rows(), 512);
      apply_check(r, compare_csr(out, sampled_product(host, host, rows), "sampled", tol, &rows));
    }
  }
  base_out = csr<T, cpu>();
  if (r.check == "ok") {
    // SpGEMM synchronises to learn nnz(C): its events include that wait (no stream hold), so
    // they already measure a whole call.
    r.spade = timer.kernel(spade_call, ro.timing, /*hold=*/false);
    r.spade_e2e_ms = r.spade.median;
    first_call(r, spade_call, a, timer);
    if (r.spade_kernel == "hash_spgemm") hash_spgemm_facts(r, a, out.nnz(), timer, ro.timing);
  }
  const double bytes = csr_bytes<T>(a.rows(), a.nnz()) + csr_bytes<T>(a.rows(), out.nnz());
  r.working_set_mb = bytes / 1e6;
  r.memory = memory_label(bytes, ro.timing.flush_l2);
  r.gflops = 2.0 * r.products / (r.spade.median * 1e-3) / 1e9;
  finish_ratio(r);
  return r;
}

// ---- tiled SpGEMM ----------------------------------------------------------------------------

/// C = A·A with tiled_spgemm against hash_spgemm, both from the planner's point of view: the
/// tiled side multiplies A's cached tiled form and converts C back to csr (what
/// eval<tiled_spgemm> costs from the second product with A on); its first call adds the csr →
/// tiled conversion (spade_e2e_ms, break-even calls). The census and the planner's pick come
/// along, for the criterion's precision and recall.
template <class T>
result_row bench_tiled(const matrix_case<T>& mc, const csr<T, cpu>& host, const run_options& ro,
                       gpu_timer& timer) {
  result_row r = start_row(mc, host, 0);
  r.baseline = "hash_spgemm";
  r.spade_kernel = "tiled_spgemm";
  if (host.rows() != host.cols()) {
    r.check = "skipped";
    r.note = "not square: A*A undefined";
    return r;
  }
  r.products = product_count(host, host);
  if (r.products > ro.max_products) {
    r.check = "skipped";
    r.note = "products " + cell(r.products) + " > --max-products " + cell(ro.max_products);
    return r;
  }
  const csr<T, gpu> a = to_gpu(host);
  const device::tile_census census = device::count_tiles(a, a);
  r.tiled_products_per_pair = census.products_per_tile_pair();
  r.tiled_fill = census.a_fill();
  r.tiled_criterion = chosen_kernel(explain(a * a));
  const tiled<T, gpu> a_tiles = device::csr_to_tiled(a);
  csr<T, cpu> hash_out;
  csr<T, cpu> tiled_out;
  try {
    hash_out = to_cpu(device::hash_spgemm(T(1), a, a));
    device::tiled_spgemm_report report;
    tiled_out = to_cpu(device::tiled_to_csr(device::tiled_spgemm(
        T(1), a_tiles, a_tiles, device::tile_arithmetic::native, &report, true)));
    r.spgemm_report = report.describe();
  } catch (const std::exception& e) {
    r.check = "error";
    append_note(r.note, e.what());
    return r;
  }
  // hash_spgemm is the checked reference here (its own suite checks it against Eigen); the
  // tolerance is the native arithmetic's (3xTF32 for float).
  apply_check(
      r, compare_csr(tiled_out, hash_out, "hash_spgemm", std::is_same_v<T, double> ? 1e-12 : 1e-5));
  if (r.check != "ok") return r;
  r.base = timer.kernel([&] { const csr<T, gpu> c = device::hash_spgemm(T(1), a, a); }, ro.timing,
                        /*hold=*/false);
  r.spade = timer.kernel(
      [&] {
        const csr<T, gpu> c = device::tiled_to_csr(device::tiled_spgemm(T(1), a_tiles, a_tiles));
      },
      ro.timing, /*hold=*/false);
  r.tiled_kernel_ms =
      timer
          .kernel([&] { const tiled<T, gpu> c = device::tiled_spgemm(T(1), a_tiles, a_tiles); },
                  ro.timing, /*hold=*/false)
          .median;
  r.tiled_convert_ms =
      timer
          .kernel([&] { const tiled<T, gpu> t = device::csr_to_tiled(a); }, ro.timing,
                  /*hold=*/false)
          .median;
  r.tiled_fp16_ms = timer
                        .kernel(
                            [&] {
                              const csr<T, gpu> c = device::tiled_to_csr(device::tiled_spgemm(
                                  T(1), a_tiles, a_tiles, device::tile_arithmetic::fp16));
                            },
                            ro.timing, /*hold=*/false)
                        .median;
  r.spade_e2e_ms = r.tiled_convert_ms + r.spade.median;
  const double saving = r.base.median - r.spade.median;
  r.breakeven = saving > 0 ? r.tiled_convert_ms / saving : NAN;
  const double bytes = csr_bytes<T>(a.rows(), a.nnz()) + csr_bytes<T>(a.rows(), hash_out.nnz());
  r.working_set_mb = bytes / 1e6;
  r.memory = memory_label(bytes, ro.timing.flush_l2);
  r.gflops = 2.0 * r.products / (r.spade.median * 1e-3) / 1e9;
  finish_ratio(r);
  return r;
}

/// The matrices the issue names as tile-friendly (FEM-like real ones, block diagonals,
/// stencil27).
bool tile_friendly(const std::string& name) {
  for (const char* n : {"s1rmq4m1", "bcsstk13", "Dubcova1", "stencil27", "block_diagonal"})
    if (name.find(n) != std::string::npos) return true;
  return false;
}

/// tiled only: the geomean on the tile-friendly matrices, and the criterion's precision and
/// recall against which kernel was faster.
void print_tiled_summary(const std::vector<result_row>& rows) {
  std::vector<double> friendly;
  int true_pos = 0, false_pos = 0, false_neg = 0, measured = 0;
  for (const auto& r : rows) {
    if (r.tiled_criterion.empty() || std::isnan(r.ratio)) continue;
    ++measured;
    if (tile_friendly(r.matrix)) friendly.push_back(r.ratio);
    const bool picked = r.tiled_criterion == "tiled_spgemm";
    const bool faster = r.ratio > 1.0;
    true_pos += picked && faster;
    false_pos += picked && !faster;
    false_neg += !picked && faster;
  }
  if (measured == 0) return;
  std::printf("tiled_spgemm vs hash_spgemm on the tile-friendly matrices: geomean %.3f over %zu\n",
              geomean(friendly), friendly.size());
  const double precision =
      true_pos + false_pos > 0 ? static_cast<double>(true_pos) / (true_pos + false_pos) : NAN;
  const double recall =
      true_pos + false_neg > 0 ? static_cast<double>(true_pos) / (true_pos + false_neg) : NAN;
  std::printf(
      "criterion (planner picks tiled_spgemm) vs faster kernel over %d matrices: precision %.2f "
      "(%d of %d picks faster), recall %.2f (%d of %d faster ones picked)\n",
      measured, precision, true_pos, true_pos + false_pos, recall, true_pos, true_pos + false_neg);
}

// ---- reporting ------------------------------------------------------------------------------

void print_header() {
  std::printf("%-30s %9s %10s %5s %-15s %10s %-24s %10s %6s %7s %6s %-11s %s\n", "matrix", "rows",
              "nnz", "n", "spade_kernel", "spade_ms", "baseline", "base_ms", "ratio", "GB/s",
              "%copy", "memory", "check");
}

void print_row(const result_row& r, const run_options& ro) {
  const double pct = r.gbps / ro.copy_gbps * 100;
  std::printf("%-30s %9d %10" PRId64 " %5s %-15s %10.4g %-24s %10.4g %6.3f %7.1f %6.1f %-11s %s\n",
              r.matrix.c_str(), r.rows, r.nnz, r.n ? std::to_string(r.n).c_str() : "-",
              r.spade_kernel.c_str(), r.spade.median, r.baseline.c_str(), r.base.median, r.ratio,
              r.gbps, pct, r.memory.c_str(), r.check.c_str());
  std::fflush(stdout);
}

/// spgemm only: hash_spgemm's largest binning share and extra memory over the matrices.
void print_spgemm_summary(const std::vector<result_row>& rows) {
  const result_row* binning = nullptr;
  const result_row* memory = nullptr;
  for (const auto& r : rows) {
    if (!std::isnan(r.spgemm_binning_pct) &&
        (!binning || r.spgemm_binning_pct > binning->spgemm_binning_pct))
      binning = &r;
    if (!std::isnan(r.spgemm_extra_memory) &&
        (!memory || r.spgemm_extra_memory > memory->spgemm_extra_memory))
      memory = &r;
  }
  if (binning)
    std::printf("hash_spgemm binning share of the phases: at most %.2f %% (%s)\n",
                binning->spgemm_binning_pct, binning->matrix.c_str());
  if (memory)
    std::printf("hash_spgemm extra memory: at most %.3f x bytes(C) (%s)\n",
                memory->spgemm_extra_memory, memory->matrix.c_str());
}

/// spmm only: gcoo_spmm on its own against the best cuSPARSE algorithm, per N and set, the
/// planned result's worst ratio, and gcoo_spmm against the paper's kernel on its square cases.
void print_gcoo_summary(const std::vector<result_row>& rows) {
  std::vector<index_t> widths;
  for (const auto& r : rows)
    if (!std::isnan(r.gcoo_ratio) && std::find(widths.begin(), widths.end(), r.n) == widths.end())
      widths.push_back(r.n);
  if (widths.empty()) return;
  std::sort(widths.begin(), widths.end());
  std::printf("\ngcoo_spmm alone vs best cuSPARSE (geomean of baseline_ms / gcoo_ms):\n");
  for (index_t n : widths) {
    if (n > 512) continue;  // N = n of the paper cases is reported below
    std::vector<double> all, real, synthetic;
    const result_row* worst = nullptr;
    for (const auto& r : rows) {
      if (r.n != n || std::isnan(r.gcoo_ratio)) continue;
      all.push_back(r.gcoo_ratio);
      (r.family == "real" ? real : synthetic).push_back(r.gcoo_ratio);
      if (!worst || r.gcoo_ratio < worst->gcoo_ratio) worst = &r;
    }
    std::printf(
        "  N = %d: %.3f over %zu (real %.3f over %zu, synthetic %.3f over %zu); worst %.3f on %s\n",
        n, geomean(all), all.size(), geomean(real), real.size(), geomean(synthetic),
        synthetic.size(), worst ? worst->gcoo_ratio : NAN, worst ? worst->matrix.c_str() : "-");
  }
  std::printf("\ntiled_spmm alone vs best cuSPARSE (geomean of baseline_ms / tiled_kernel_ms):\n");
  for (index_t n : widths) {
    std::vector<double> all;
    const result_row* best = nullptr;
    for (const auto& r : rows) {
      if (r.n != n || std::isnan(r.tiled_kernel_ms)) continue;
      all.push_back(r.base.median / r.tiled_kernel_ms);
      if (!best || r.base.median / r.tiled_kernel_ms > best->base.median / best->tiled_kernel_ms)
        best = &r;
    }
    if (!all.empty())
      std::printf("  N = %d: %.3f over %zu; best %.3f on %s (fill %.1f)\n", n, geomean(all),
                  all.size(), best->base.median / best->tiled_kernel_ms, best->matrix.c_str(),
                  best->tiled_fill);
  }
  std::vector<double> vs_paper;
  for (const auto& r : rows)
    if (!std::isnan(r.gcoo_paper_ms) && !std::isnan(r.gcoo_ms) && r.n == r.cols)
      vs_paper.push_back(r.gcoo_paper_ms / r.gcoo_ms);
  std::printf("gcoo_spmm vs gcoo_spmm_paper on the paper's square cases, N = n: %.3f over %zu\n",
              geomean(vs_paper), vs_paper.size());
  int below = 0;
  for (const auto& r : rows)
    if (!std::isnan(r.ratio) && r.ratio < 0.9) ++below;
  std::printf("after planning: %d result(s) below 0.9x the best cuSPARSE algorithm\n", below);
}

/// Prints the summary; returns how many rows failed their check or raised an error.
int print_summary(const std::vector<result_row>& rows, const run_options& ro) {
  std::printf("\n== summary ==\n");
  print_header();
  for (const auto& r : rows)
    print_row(r, ro);
  std::vector<double> all;
  std::vector<double> real;
  std::vector<double> synthetic;
  std::vector<double> dram;
  const result_row* worst = nullptr;
  int failed = 0;
  for (const auto& r : rows) {
    if (r.check == "FAILED" || r.check == "error") ++failed;
    if (std::isnan(r.ratio)) continue;
    all.push_back(r.ratio);
    (r.family == "real" ? real : synthetic).push_back(r.ratio);
    if (r.memory == "dram") dram.push_back(r.ratio);
    if (!worst || r.ratio < worst->ratio) worst = &r;
  }
  std::printf("geomean ratio (baseline_ms / spade_ms, > 1: Spade faster): %.3f over %zu\n",
              geomean(all), all.size());
  std::printf(
      "  real %.3f over %zu; synthetic %.3f over %zu; working set >= 200 MB %.3f over %zu\n",
      geomean(real), real.size(), geomean(synthetic), synthetic.size(), geomean(dram), dram.size());
  if (worst)
    std::printf("worst: %.3f on %s (n %d)\n", worst->ratio, worst->matrix.c_str(), worst->n);
  std::printf("failed or error: %d of %zu\n", failed, rows.size());
  print_gcoo_summary(rows);
  print_spgemm_summary(rows);
  print_tiled_summary(rows);
  std::printf(
      "bandwidth: bytes = nnz*(sizeof(T)+4) + (rows+1)*4 + (rows+cols)*N*sizeof(T) (each "
      "array once); %%copy against %.0f GB/s measured device copy\n",
      ro.copy_gbps);
  std::printf("device: %s\ncommit: %s\n", ro.device.c_str(), ro.commit.c_str());
  return failed;
}

// ---- commands -------------------------------------------------------------------------------

template <class T>
int command_products(const std::string& family, const set_options& so, const options& opt,
                     run_options& ro) {
  gpu_timer timer(spade_stream());
  ro.copy_gbps = timer.copy_bandwidth_gbps();
  std::printf("device copy bandwidth: %.0f GB/s (read + write, 512 MiB)\n", ro.copy_gbps);
  std::vector<index_t> widths;
  bool paper_width = false;
  if (family == "spmm") {
    std::string list = opt.get("n", "32");
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, comma - at);
      if (item == "n")
        paper_width = true;
      else if (!item.empty())
        widths.push_back(static_cast<index_t>(std::stol(item)));
      at = comma + 1;
    }
  }
  csv_writer csv(ro.csv, csv_columns);
  std::vector<result_row> rows;
  const auto cases = matrix_set<T>(so);
  std::printf("%zu matrices (%s)\n\n", cases.size(), precision_name<T>());
  print_header();
  for (const auto& mc : cases) {
    std::vector<result_row> made;
    try {
      const csr<T, cpu> host = mc.make();
      if (family == "spmv") {
        made.push_back(bench_spmv(mc, host, ro, timer));
      } else if (family == "spmm") {
        std::vector<index_t> ns = widths;
        if (paper_width && mc.family == "gcoo_paper") ns.push_back(host.cols());
        for (index_t n : ns)
          made.push_back(bench_spmm(mc, host, n, ro, timer));
      } else if (family == "tiled") {
        made.push_back(bench_tiled(mc, host, ro, timer));
      } else {
        made.push_back(bench_spgemm(mc, host, ro, timer));
      }
    } catch (const std::exception& e) {
      result_row r;
      r.family = mc.family;
      r.matrix = mc.name;
      r.precision = precision_name<T>();
      r.check = "error";
      r.note = e.what();
      made.push_back(r);
      std::fprintf(stderr, "%s: %s\n", mc.name.c_str(), e.what());
    }
    trim_default_pool();
    for (auto& r : made) {
      print_row(r, ro);
      csv.write(csv_cells(r, ro));
      rows.push_back(std::move(r));
    }
  }
  // Exit 3 when a result was wrong or could not be computed: that is a bug to look at.
  return print_summary(rows, ro) > 0 ? 3 : 0;
}

struct overhead_side {
  std::string kernel;
  stats gpu;
  host_cost host;
  check_outcome check;
};

template <class Body>
overhead_side measure_side(std::string kernel, Body&& body, const check_outcome& chk, int calls,
                           const run_options& ro, gpu_timer& timer) {
  overhead_side s;
  s.kernel = std::move(kernel);
  s.check = chk;
  if (!chk.ok) return s;
  s.gpu = timer.kernel(body, ro.timing);
  s.host = timer.host_loop(body, calls, 50);
  return s;
}

/// Prints and writes both sides; returns false when a check failed.
bool report_overhead(const std::string& name, const overhead_side& spade_side,
                     const overhead_side& base, csv_writer& csv, const run_options& ro) {
  for (const auto* s : {&spade_side, &base}) {
    std::printf("%-34s %-8s %-24s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %s%s\n", name.c_str(),
                s == &spade_side ? "spade" : "baseline", s->kernel.c_str(), s->host.held_us,
                s->host.loop_us, s->host.wall_us, s->gpu.median * 1e3, s->gpu.min * 1e3,
                s->gpu.max * 1e3, s->check.ok ? "ok" : ("FAILED " + s->check.note).c_str(),
                s->host.hold_expired ? " (hold expired)" : "");
    csv.write({name, s == &spade_side ? "spade" : "baseline", s->kernel, cell(s->host.held_us),
               cell(s->host.loop_us), cell(s->host.wall_us), cell(s->gpu.median * 1e3),
               cell(s->gpu.min * 1e3), cell(s->gpu.max * 1e3), s->check.ok ? "ok" : "FAILED",
               ro.commit, ro.device});
  }
  const double diff = spade_side.host.held_us - base.host.held_us;
  std::printf("%-34s Spade - baseline host time: %+.2f us per call (target <= +3 us): %s\n\n",
              name.c_str(), diff, diff <= 3.0 ? "PASS" : "MISS");
  return spade_side.check.ok && base.check.ok;
}

template <class T>
int command_overhead(const options& opt, run_options& ro) {
  gpu_timer timer(spade_stream());
  const cudaStream_t stream = timer.stream();
  const int calls = static_cast<int>(opt.number("calls", 10000));
  const double tol = tolerance<T>();
  csv_writer csv(ro.csv,
                 {"case", "side", "kernel", "host_us_held", "host_us_loop", "wall_us_per_call",
                  "gpu_us_median", "gpu_us_min", "gpu_us_max", "check", "commit", "device"});
  std::printf(
      "%d calls per loop; host_us_held: loop time per call with the stream held (host "
      "work only); host_us_loop: loop time per call, stream running, synchronised after "
      "the loop; wall_us: (loop + sync) per call; gpu_us: event median [min, max]\n\n",
      calls);
  std::printf("%-34s %-8s %-24s %9s %9s %9s %9s %9s %9s %s\n", "case", "side", "kernel",
              "host_held", "host_loop", "wall_us", "gpu_med", "gpu_min", "gpu_max", "check");

  bool ok = true;
  const csr<T, cpu> a_host = generate::uniform_rows<T>(1000, 1000, 5, ro.seed);
  const csr<T, gpu> a = to_gpu(a_host);
  const csr<double, cpu> ad = to_double(a_host);

  {  // y = A*x, SpMV
    const vector<T, cpu> x_host = random_vector<T>(a.cols(), ro.seed + 1);
    const vector<T, gpu> x = to_gpu(x_host);
    vector<T, gpu> y(a.rows());
    vector<T, gpu> yb(a.rows());
    const auto ref = spade::reference(ad * to_double(x_host)).values();
    const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(a.rows());
    poison(y.data(), bytes, stream);
    y = a * x;
    const auto spade_side = measure_side(
        chosen_kernel(explain(a * x)), [&] { y = a * x; },
        compare_values(y.values().to_host(), ref, "reference", tol), calls, ro, timer);
    spmv_baseline<T> base(a, x, yb, stream);
    overhead_side best;
    for (auto& v : base.variants()) {
      if (!v.status.error.empty()) continue;
      poison(yb.data(), bytes, stream);
      base.run(v);
      auto side = measure_side(
          v.status.name, [&] { base.run(v); },
          compare_values(yb.values().to_host(), ref, "reference", tol), calls, ro, timer);
      if (best.kernel.empty() || side.host.held_us < best.host.held_us) best = side;
    }
    ok &= report_overhead("y = A*x (csr 1000x1000, 5/row)", spade_side, best, csv, ro);
  }
  {  // y = A*x, GEMV
    const dense<T, cpu> d_host = random_dense<T>(256, 256, ro.seed + 3);
    const dense<T, gpu> d = to_gpu(d_host);
    const vector<T, cpu> x_host = random_vector<T>(256, ro.seed + 4);
    const vector<T, gpu> x = to_gpu(x_host);
    vector<T, gpu> y(256);
    vector<T, gpu> yb(256);
    const auto ref = spade::reference(to_double(d_host) * to_double(x_host)).values();
    poison(y.data(), sizeof(T) * 256, stream);
    y = d * x;
    const auto spade_side = measure_side(
        chosen_kernel(explain(d * x)), [&] { y = d * x; },
        compare_values(y.values().to_host(), ref, "reference", tol), calls, ro, timer);
    dense_baseline<T> blas(stream);
    poison(yb.data(), sizeof(T) * 256, stream);
    blas.gemv(d, x, yb);
    const auto base = measure_side(
        "cublas_gemv", [&] { blas.gemv(d, x, yb); },
        compare_values(yb.values().to_host(), ref, "reference", tol), calls, ro, timer);
    ok &= report_overhead("y = A*x (dense 256x256)", spade_side, base, csv, ro);
  }
  {  // C = A*B, SpMM, N = 32
    const index_t n = 32;
    const dense<T, cpu> b_host = random_dense<T>(a.cols(), n, ro.seed + 5);
    const dense<T, gpu> b = to_gpu(b_host);
    dense<T, gpu> c(a.rows(), n);
    dense<T, gpu> cb(a.rows(), n);
    const auto ref = spade::reference(ad * to_double(b_host)).values();
    const std::size_t bytes = sizeof(T) * c.element_count();
    poison(c.data(), bytes, stream);
    c = a * b;
    const auto spade_side = measure_side(
        chosen_kernel(explain(a * b)), [&] { c = a * b; },
        compare_values(c.values().to_host(), ref, "reference", tol), calls, ro, timer);
    spmm_baseline<T> base(a, b, cb, stream);
    overhead_side best;
    for (auto& v : base.variants()) {
      if (!v.status.error.empty()) continue;
      poison(cb.data(), bytes, stream);
      base.run(v);
      auto side = measure_side(
          v.status.name, [&] { base.run(v); },
          compare_values(cb.values().to_host(), ref, "reference", tol), calls, ro, timer);
      if (best.kernel.empty() || side.host.held_us < best.host.held_us) best = side;
    }
    ok &= report_overhead("C = A*B (csr 1000x1000, 5/row, N=32)", spade_side, best, csv, ro);
  }
  // Sparse x sparse: the planner's run-time facts (the tile census above tiled_min_nnz) are
  // cached on the operands, so a repeated C = A*A costs what the chosen kernel called directly
  // costs, plus at most max(10 us, 3 %) (BENCHMARKS.md, planning cost). Both sides synchronise
  // inside (nnz(C) is read back), so wall time per call is compared; each side's result lives
  // for one call (an assignment would keep two results alive and time the pool instead).
  const int spgemm_reps = std::max(50, ro.timing.reps);
  auto planning_cost = [&](const std::string& name, const overhead_side& planned,
                           const overhead_side& direct) {
    for (const auto* s : {&planned, &direct}) {
      std::printf("%-34s %-8s %-24s %9s %9s %9.2f %9.2f %9.2f %9.2f %s\n", name.c_str(),
                  s == &planned ? "spade" : "direct", s->kernel.c_str(), "-", "-", s->host.wall_us,
                  s->gpu.median * 1e3, s->gpu.min * 1e3, s->gpu.max * 1e3,
                  s->check.ok ? "ok" : ("FAILED " + s->check.note).c_str());
      csv.write({name, s == &planned ? "spade" : "direct", s->kernel, "", "", cell(s->host.wall_us),
                 cell(s->gpu.median * 1e3), cell(s->gpu.min * 1e3), cell(s->gpu.max * 1e3),
                 s->check.ok ? "ok" : "FAILED", ro.commit, ro.device});
    }
    const double diff = planned.host.wall_us - direct.host.wall_us;
    const double allowed = std::max(10.0, 0.03 * direct.host.wall_us);
    std::printf("%-34s planning cost: %+.2f us per call (target <= %.2f us): %s\n\n", name.c_str(),
                diff, allowed, diff <= allowed ? "PASS" : "MISS");
    return planned.check.ok && direct.check.ok;
  };
  auto wall_side = [&](std::string kernel, auto&& body, const check_outcome& chk) {
    overhead_side s;
    s.kernel = std::move(kernel);
    s.check = chk;
    if (!chk.ok) return s;
    s.gpu = timer.wall(body, spgemm_reps);
    s.host.wall_us = s.gpu.median * 1e3;
    return s;
  };
  {  // C = A*A on a 7-point stencil of 48^3 rows (774 k entries: the census runs)
    const csr<T, cpu> s_host = generate::stencil7<T>(48, 48, 48);
    const csr<T, gpu> s = to_gpu(s_host);
    const csr<T, cpu> want = to_cpu(device::hash_spgemm(T(1), s, s));
    csr<T, gpu> c;
    c = s * s;
    const auto planned = wall_side(
        chosen_kernel(explain(s * s)), [&] { const csr<T, gpu> d = s * s; },
        compare_csr(to_cpu(c), want, "hash_spgemm", tol));
    const auto direct = wall_side(
        "hash_spgemm", [&] { const csr<T, gpu> d = device::hash_spgemm(T(1), s, s); },
        check_outcome{true, 0, "", ""});
    ok &= planning_cost("C = A*A (stencil7 48^3, hash)", planned, direct);
  }
  {  // C = A*A on 4096 dense 32x32 blocks: the census picks tiled_spgemm, tiles cached
    const csr<T, cpu> b_host = generate::block_diagonal<T>(4096, 32, ro.seed + 7);
    const csr<T, gpu> b = to_gpu(b_host);
    const tiled<T, gpu> b_tiles = device::csr_to_tiled(b);
    const csr<T, cpu> want = to_cpu(device::hash_spgemm(T(1), b, b));
    csr<T, gpu> c;
    c = b * b;
    const auto planned = wall_side(
        chosen_kernel(explain(b * b)), [&] { const csr<T, gpu> d = b * b; },
        compare_csr(to_cpu(c), want, "hash_spgemm", std::is_same_v<T, double> ? 1e-12 : 1e-5));
    const auto direct = wall_side(
        "tiled_spgemm + tiled_to_csr",
        [&] {
          const csr<T, gpu> d = device::tiled_to_csr(device::tiled_spgemm(T(1), b_tiles, b_tiles));
        },
        check_outcome{true, 0, "", ""});
    ok &= planning_cost("C = A*A (block diag 4096x32, tiled)", planned, direct);
  }
  std::printf("device: %s\ncommit: %s\n", ro.device.c_str(), ro.commit.c_str());
  return ok ? 0 : 3;
}

int command_device(run_options& ro) {
  gpu_timer timer(spade_stream());
  std::printf("device: %s\n", ro.device.c_str());
  std::printf("device copy bandwidth: %.0f GB/s (read + write, 512 MiB, median of 20)\n",
              timer.copy_bandwidth_gbps());
  return 0;
}

/// The comma-separated pieces of `list`, empty ones included ("" gives one empty piece).
std::vector<std::string> text_list(const std::string& list) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

/// The numbers of a comma-separated list, empty pieces skipped.
std::vector<int> int_list(const std::string& list) {
  std::vector<int> out;
  for (const std::string& piece : text_list(list))
    if (!piece.empty()) out.push_back(std::stoi(piece));
  return out;
}

// ---- explain: every product kind's plan on every matrix, for diffing two commits -----------

/// explain() of every product kind on each matrix of the sets (explain_dump.hpp): A*x and
/// transpose(A)*x, A*B at the --n widths (row-major, col-major at 32, transpose(A)*B at 32),
/// A*A and A*transpose(A) within --max-products. Each plan is printed before the first product
/// and again after it (the planner converts some operands from their second product on), so
/// two commits' dumps differ only where a plan does (bench/explain_diff.py). Nothing is timed.
template <class T>
int command_explain(const set_options& so, const options& opt, const run_options& ro) {
  std::vector<index_t> widths;
  for (const int n : int_list(opt.get("n", "1,8,32,128,512")))
    widths.push_back(n);
  for (const auto& mc : matrix_set<T>(so)) {
    const csr<T, cpu> host = mc.make();
    const csr<T, gpu> a = to_gpu(host);
    explain_matrix(mc.name, mc.family, host, widths, ro.max_products,
                   [&](explain_kind kind, index_t n) -> std::string {
                     switch (kind) {
                       case explain_kind::vector_first:
                       case explain_kind::vector_after: {
                         const vector<T, gpu> x(a.cols());
                         if (kind == explain_kind::vector_after) {
                           vector<T, gpu> y(a.rows());
                           y = a * x;
                         }
                         return explain(a * x);
                       }
                       case explain_kind::transposed_vector: {
                         const vector<T, gpu> xt(a.rows());
                         vector<T, gpu> yt(a.cols());
                         yt = transpose(a) * xt;
                         return explain(transpose(a) * xt);
                       }
                       case explain_kind::dense_first:
                       case explain_kind::dense_after: {
                         const dense<T, gpu> b(a.cols(), n);
                         if (kind == explain_kind::dense_after) {
                           dense<T, gpu> c(a.rows(), n);
                           c = a * b;
                         }
                         return explain(a * b);
                       }
                       case explain_kind::dense_col_major: {
                         const dense<T, gpu, col_major> b(a.cols(), n);
                         dense<T, gpu, col_major> c(a.rows(), n);
                         c = a * b;
                         return explain(a * b);
                       }
                       case explain_kind::transposed_dense: {
                         const dense<T, gpu> bt(a.rows(), n);
                         dense<T, gpu> ct(a.cols(), n);
                         ct = transpose(a) * bt;
                         return explain(transpose(a) * bt);
                       }
                       case explain_kind::square:
                         return explain(a * a);
                       case explain_kind::with_transpose:
                       default:
                         return explain(a * transpose(a));
                     }
                   });
  }
  return 0;
}

// After run_options and chosen_kernel, which it uses.
#include "bench_cg.hpp"
#include "bench_cwise.hpp"
#include "bench_multi.hpp"
#include "bench_sddmm.hpp"

int run(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::printf("%s", usage_text);
    return args.empty() ? 1 : 0;
  }
  const std::string command = args[0];
  if (command != "device" && command != "overhead" && command != "spmv" && command != "spmm" &&
      command != "spgemm" && command != "tiled" && command != "cg" && command != "explain" &&
      command != "cwise" && command != "elementwise" && command != "reduce" && command != "sddmm" &&
      command != "multi") {
    std::fprintf(stderr, "spade-bench: unknown command '%s'\n%s", command.c_str(), usage_text);
    return 1;
  }
  const options opt({args.begin() + 1, args.end()},
                    {"quick", "double", "float", "flush-l2", "all-algs", "gemm", "explain"},
                    {"matrices",  "sets",   "only",           "n",          "max-products",
                     "warmup",    "reps",   "reference-work", "seed",       "csv",
                     "commit",    "calls",  "gcoo-p",         "gcoo-split", "max-iterations",
                     "tolerance", "ellr-t", "ellr-split",     "grid",       "spgemm-grid",
                     "rmat"});
  std::string why;
  if (!device_available(&why)) {
    std::printf("no GPU: %s\n", why.c_str());
    return 2;
  }
  run_options ro;
  ro.timing.warmups = std::max<int>(5, static_cast<int>(opt.number("warmup", 5)));
  ro.timing.reps = std::max<int>(20, static_cast<int>(opt.number("reps", 20)));
  ro.timing.flush_l2 = opt.has("flush-l2");
  ro.csv = opt.get("csv");
  ro.commit = opt.get("commit", "unknown");
  ro.all_algorithms = opt.has("all-algs");
  ro.gemm = opt.has("gemm");
  ro.gcoo_group_sizes = int_list(opt.get("gcoo-p"));
  ro.gcoo_splits = int_list(opt.get("gcoo-split"));
  ro.ellr_threads = int_list(opt.get("ellr-t"));
  ro.ellr_column_groups = int_list(opt.get("ellr-split"));
  ro.max_products = opt.real("max-products", ro.max_products);
  ro.reference_work = opt.real("reference-work", ro.reference_work);
  ro.seed = static_cast<std::uint64_t>(opt.number("seed", static_cast<long long>(ro.seed)));
  ro.device = device_line();
  keep_default_pool();

  ro.operation = command;
  ro.command = "spade-bench";
  for (const auto& a : args)
    ro.command += " " + a;
  std::printf("%s\ndevice: %s\ncommit: %s\n", ro.command.c_str(), ro.device.c_str(),
              ro.commit.c_str());
  if (command == "cg")
    return opt.has("float") ? command_cg<float>(opt, ro) : command_cg<double>(opt, ro);
  if (command == "multi")
    return opt.has("double") ? command_multi<double>(opt, ro) : command_multi<float>(opt, ro);
  std::printf("timing: %d warm-ups, median of %d (min, max), CUDA events on Spade's stream%s\n",
              ro.timing.warmups, ro.timing.reps, ro.timing.flush_l2 ? ", L2 flushed" : "");

  const bool fp64 = opt.has("double");
  if (command == "device") return command_device(ro);
  if (command == "cwise" || command == "elementwise" || command == "reduce") {
    const cwise_part part = command == "elementwise" ? cwise_part::elementwise
                            : command == "reduce"    ? cwise_part::reduce
                                                     : cwise_part::all;
    return fp64 ? command_cwise<double>(opt, ro, part) : command_cwise<float>(opt, ro, part);
  }
  if (command == "overhead")
    return fp64 ? command_overhead<double>(opt, ro) : command_overhead<float>(opt, ro);
  if (command == "spmv" || command == "spmm" || command == "spgemm" || command == "tiled" ||
      command == "explain" || command == "sddmm") {
    set_options so;
    const char* env = std::getenv("SPADE_MATRIX_DIR");
    so.matrix_dir = opt.get("matrices", env ? env : "");
    so.quick = opt.has("quick");
    const std::string sets = opt.get("sets", "all");
    select_sets(so, sets);
    so.only = opt.get("only");
    so.seed = ro.seed;
    if (so.real && so.matrix_dir.empty())
      std::printf("no --matrices DIR and no $SPADE_MATRIX_DIR: real matrices skipped\n");
    if (command == "explain")
      return fp64 ? command_explain<double>(so, opt, ro) : command_explain<float>(so, opt, ro);
    if (command == "sddmm")
      return fp64 ? command_sddmm<double>(so, opt, ro) : command_sddmm<float>(so, opt, ro);
    return fp64 ? command_products<double>(command, so, opt, ro)
                : command_products<float>(command, so, opt, ro);
  }
  return 1;
}

}  // namespace
}  // namespace spade::bench

int main(int argc, char** argv) {
  try {
    return spade::bench::run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "spade-bench: %s (spade-bench --help lists the options)\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spade-bench: %s\n", e.what());
    return 1;
  }
}
