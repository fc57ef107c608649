// Timing the sparse × dense kernels on this device for its tune file (spade::tune_spmm, `spade
// tune`).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/core/tuned.hpp"
#include "spade/core/tuning.hpp"
#include "spade/device/gpu_timing.hpp"
#include "spade/device/kernels.hpp"
#include "spade/device/run.hpp"
#include "spade/device/vendor.hpp"
#include "spade/eval/operands.hpp"
#include "spade/formats/convert.hpp"
#include "spade/formats/transfer.hpp"
#include "spade/plan/kernels.hpp"

namespace spade {

/// What tune_spmm times.
struct tune_options {
  /// Widths of B (each is its own operand class), from tune_min_cusparse_columns. Below
  /// tune_min_columns only cuSPARSE's algorithms are timed (the kernel choice is the rules').
  std::vector<index_t> columns{2, 4, 8, 32, 128, 512};
  /// Rows per group of the gcoo forms timed.
  std::vector<index_t> group_sizes{1, 2, 4, 8};
  /// Timed runs per kernel (GPU time, behind a held stream); the median counts.
  int samples = 15;
  std::uint64_t seed = 1;
};

/// What tune_spmm measured on one matrix (for `spade tune`'s report).
struct tune_report {
  struct width {
    index_t columns = 0;
    std::string operand_class;
    /// kernel → median time (from tune_min_columns; cusparse_spmm's is the rules' algorithm's,
    /// what it runs at on a matrix of the class that was not measured)
    std::vector<std::pair<std::string, double>> milliseconds;
    /// The fastest kernel on this matrix, cusparse_spmm at its fastest algorithm (what the
    /// planner runs on it); "" below tune_min_columns.
    std::string fastest_kernel;
    std::vector<std::pair<std::string, double>> cusparse_milliseconds;  ///< "alg2" → median time
    /// The algorithm the rules pick for this product without a tune file ("alg3").
    std::string ruled_algorithm;
    std::vector<std::pair<std::string, double>> gcoo_milliseconds;  ///< "p4" → median time
    index_t gcoo_group_size = 0;  ///< the p gcoo_spmm's time in `milliseconds` is at
  };
  std::string matrix;
  std::string gcoo_class;
  std::vector<width> widths;
  /// Why nothing was timed ("" when something was).
  std::string skipped;
  /// False when a timed run synchronised, so some times include the host's gaps.
  bool held = true;
};

namespace detail {

/// The median GPU time of one run() over o.samples runs queued behind a held stream
/// (device::gpu_run_milliseconds: the GPU's time alone, as spade-bench measures), after one
/// untimed run (conversions, workspaces, caches). `held` turns false when a run synchronised.
template <class Run>
double median_milliseconds(context& ctx, Run&& run, const tune_options& o, bool& held) {
  run();
  ctx.synchronize();
  const device::gpu_run_times times =
      device::gpu_run_milliseconds(ctx, std::function<void()>(run), std::max(o.samples, 1));
  held = held && times.held;
  std::vector<double> samples = times.milliseconds;
  std::sort(samples.begin(), samples.end());
  const std::size_t half = samples.size() / 2;
  return samples.size() % 2 ? samples[half] : (samples[half - 1] + samples[half]) / 2;
}

/// B of a timed product: values uniform in [-1, 1) (the timings do not depend on them).
template <scalar T>
dense<T, cpu, row_major> tune_operand(index_t rows, index_t cols, std::uint64_t seed) {
  dense<T, cpu, row_major> b(rows, cols);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j)
      b(i, j) = static_cast<T>(value(rng));
  return b;
}

}  // namespace detail

/// Times C = A·B on the default context's device (A lives there) for each width of B in
/// o.columns and adds the times to `table` under A's classes:
/// - "cusparse" (per width): cusparseSpMM with CSR ALG1, ALG2 and ALG3;
/// - from tune_min_columns on, "spmm" (per width): cusparse_spmm at the rules' algorithm (what
///   another matrix of the class runs), tiled_spmm, and gcoo_spmm at the p of best geometric
///   mean, with this matrix's fastest kernel counting cusparse_spmm at its fastest algorithm
///   (what the planner runs on this matrix); and "gcoo": gcoo_spmm at each of o.group_sizes,
///   the geometric mean over those widths (the planner converts with that p).
/// Two widths of one class (tune_width: 3 and 4) throw invalid_matrix.
/// Each kernel is timed alone after its conversion (GPU time). A kernel that runs out of memory
/// is left out of the entry. `name` is recorded with the entries. An empty A, or one the
/// row-wise kernels take (plan::rowwise_preferred), is skipped: no choice is made there.
template <scalar T>
tune_report tune_spmm(const csr<T, gpu>& a, const std::string& name, tuned_table& table,
                      const tune_options& o = {}) {
  if (const std::string problem = detail::tune_columns_problem(o.columns); !problem.empty())
    throw invalid_matrix("spade::tune_spmm: " + problem);
  tune_report report;
  report.matrix = name;
  if (a.nnz() == 0) {
    report.skipped = "no entries";
    return report;
  }
  if (plan::rowwise_preferred(a.rows(), a.cols(), a.nnz())) {
    report.skipped = "small enough for the row-wise kernels (tuning().rowwise_max_extent)";
    return report;
  }
  context& ctx = default_context();
  if (a.values().owner() != &ctx)
    throw invalid_matrix("spade::tune_spmm: A must live on the default context (its B and C do)");
  const plan::row_profile& rows = detail::row_profile_of(a);
  const double fill = detail::tune_tile_fill_of(a);
  report.gcoo_class = gcoo_tune_class(sizeof(T), a.rows(), rows.mean, rows.longest, fill);
  const std::string fingerprint = tune_fingerprint(a.rows(), a.cols(), a.nnz(), rows.longest);
  const std::size_t wide_count = static_cast<std::size_t>(std::count_if(
      o.columns.begin(), o.columns.end(), [](index_t n) { return n >= tune_min_columns; }));
  const std::optional<tiled<T, gpu>> tiles =
      wide_count > 0 ? std::optional<tiled<T, gpu>>(convert<tiled>(a)) : std::nullopt;
  // Per group size, gcoo_spmm's time at each width from tune_min_columns, in order.
  std::vector<std::vector<double>> gcoo_times(o.group_sizes.size());

  for (const index_t n : o.columns) {
    tune_report::width w;
    w.columns = n;
    w.operand_class = spmm_tune_class(
        sizeof(T), rows.mean, rows.longest, n, fill,
        spmm_fits_l2(sizeof(T), a.rows(), a.cols(), a.nnz(), n, ctx.properties().l2_cache_bytes));
    const dense<T, gpu, row_major> b = to_gpu(detail::tune_operand<T>(a.cols(), n, o.seed));
    dense<T, gpu, row_major> c(a.rows(), n);
    const auto time = [&](auto& list, std::string choice, auto&& run) {
      try {
        list.emplace_back(std::move(choice), detail::median_milliseconds(ctx, run, o, report.held));
      } catch (const out_of_memory&) {
        // left out of the entry: the planner's rules still cover the class's other choices
      }
    };
    w.ruled_algorithm = cusparse_spmm_algorithm_choices[static_cast<std::size_t>(
        detail::ruled_spmm_algorithm(a, false, a.rows(), n) - 1)];
    for (int k = 1; k <= 3; ++k)
      time(w.cusparse_milliseconds,
           std::string(cusparse_spmm_algorithm_choices[static_cast<std::size_t>(k - 1)]), [&] {
             device::spmm(T(1), a, device::operation::none, b, T(0), c,
                          detail::spmm_algorithm_of(k));
           });
    if (n >= tune_min_columns && !w.cusparse_milliseconds.empty()) {
      // At the rules' algorithm; at the fastest one if the rules' ran out of memory.
      const auto ruled =
          std::find_if(w.cusparse_milliseconds.begin(), w.cusparse_milliseconds.end(),
                       [&](const auto& m) { return m.first == w.ruled_algorithm; });
      w.milliseconds.emplace_back(kernels::cusparse_spmm::name,
                                  ruled != w.cusparse_milliseconds.end()
                                      ? ruled->second
                                      : detail::fastest_of(w.cusparse_milliseconds)->second);
    }
    if (n >= tune_min_columns) {
      time(w.milliseconds, kernels::tiled_spmm::name,
           [&] { device::tiled_spmm(T(1), *tiles, b, T(0), c); });
      for (std::size_t k = 0; k < o.group_sizes.size(); ++k) {
        const index_t p = o.group_sizes[k];
        try {
          const gcoo<T, gpu> g = convert<gcoo>(a, p);
          const double ms = detail::median_milliseconds(
              ctx, [&] { device::gcoo_spmm(T(1), g, b, T(0), c); }, o, report.held);
          w.gcoo_milliseconds.emplace_back(group_size_choice(p), ms);
          gcoo_times[k].push_back(ms);
        } catch (const out_of_memory&) {
        }
      }
    }
    report.widths.push_back(std::move(w));
  }

  // gcoo's p: one per operand (its gcoo is cached with the p of its first conversion), so the
  // one with the best geometric mean over the widths; gcoo_spmm competes at that p.
  std::vector<std::pair<std::string, double>> per_group_size;
  std::size_t chosen = o.group_sizes.size();
  double chosen_mean = 0;
  for (std::size_t k = 0; k < o.group_sizes.size(); ++k) {
    if (gcoo_times[k].empty() || gcoo_times[k].size() != wide_count)
      continue;  // no wide width, or one ran out of memory
    double log_sum = 0;
    for (const double ms : gcoo_times[k])
      log_sum += std::log(ms);
    const double mean = std::exp(log_sum / static_cast<double>(gcoo_times[k].size()));
    per_group_size.emplace_back(group_size_choice(o.group_sizes[k]), mean);
    if (chosen == o.group_sizes.size() || mean < chosen_mean) {
      chosen = k;
      chosen_mean = mean;
    }
  }
  if (!per_group_size.empty())
    table.add("gcoo", report.gcoo_class, per_group_size, name, fingerprint);
  std::size_t wide = 0;  // the index of a width in gcoo_times
  for (tune_report::width& w : report.widths) {
    if (!w.cusparse_milliseconds.empty())
      table.add("cusparse", w.operand_class, w.cusparse_milliseconds, name, fingerprint);
    if (w.columns < tune_min_columns) continue;
    if (chosen < o.group_sizes.size()) {
      w.gcoo_group_size = o.group_sizes[chosen];
      w.milliseconds.emplace_back(kernels::gcoo_spmm::name, gcoo_times[chosen][wide]);
    }
    ++wide;
    if (w.milliseconds.empty()) continue;
    // This matrix's fastest kernel: cuSPARSE at its own fastest algorithm, which it runs (an
    // entry holds cusparse_spmm whenever an algorithm was timed).
    std::pair<std::string, double> fastest = *detail::fastest_of(w.milliseconds);
    if (const auto* cusparse = detail::fastest_of(w.cusparse_milliseconds);
        cusparse != nullptr && cusparse->second < fastest.second)
      fastest = {kernels::cusparse_spmm::name, cusparse->second};
    w.fastest_kernel = fastest.first;
    table.add("spmm", w.operand_class, w.milliseconds, name, fingerprint, w.fastest_kernel);
  }
  return report;
}

/// A device's tune table, new (device key set) or read from its file to add to.
inline tuned_table tuned_table_to_fill(const device_properties& p, bool add_to_file) {
  tuned_table table;
  const std::string path = tuned_table_path(device_tune_key(p));
  if (add_to_file && !path.empty()) {
    table = detail::read_tuned_table(path);
    if (!table.problem.empty())
      throw io_error(path, 0,
                     "cannot add to it: " + table.problem + "; run `spade tune` without --add");
  }
  table.device = device_tune_key(p);
  table.source = path;
  return table;
}

}  // namespace spade
