// The gcoo_spmm steps: GCOO sparse × row-major dense (papers 000/001) and the paper's kernel.
#pragma once

#include <sstream>
#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::gcoo_spmm> {
  /// In the sparse × dense rule on the gpu (after the rule's densify gate): declines a
  /// transposed A, a col-major destination, and matrices too small or too skewed for GCOO
  /// (docs/benchmarks/gcoo.md); for narrow B (under gcoo_min_columns) it waits for the
  /// operand's gcoo_narrow_min_uses-th product (spmm-narrow-gcoo-2026-11-28.md). A gcoo operand
  /// (the user's format or a sparse_view) always runs; a tuned entry (spade tune) decides first.
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return decision::accept();
    std::string why = structural_decline_text(f);
    if (!why.empty()) return decision::decline(std::move(why));
    if (f.lhs.kind == format::gcoo) return decision::accept();  // the user's own format
    if (const tuned_choice tuned = tuned_spmm_of<Rule>(f); tuned.decides())
      return tuned_decision(tuned, kernels::gcoo_spmm::name);
    why = decline_text(f);
    return why.empty() ? decision::accept() : decision::decline(std::move(why));
  }

  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return step<void>::why_chosen<Rule>(f);
    std::ostringstream why;
    why << sparse_times_dense_text(f) << "; mean row length " << f.lhs.mean_row_length()
        << "; groups of " << f.lhs_group_size() << " rows" << tuned_text(tuned_spmm_of<Rule>(f));
    return why.str();
  }

 private:
  // What no operand class changes: gcoo_spmm has no transposed A and writes row-major C.
  static std::string structural_decline_text(const product_facts& f) {
    if (f.lhs_transposed)
      return "the sparse operand is transposed (gcoo has no transposed product)";
    if (f.destination_col_major) return "the destination is col-major";
    return {};
  }
  // From how many columns of B an operand of fewer than gcoo_min_rows rows may run gcoo_spmm
  // (given enough short rows): double from fewer than float.
  static long wide_columns(const product_facts& f) {
    return f.lhs.value_bytes == 8 ? tuning().gcoo_fp64_wide_columns : tuning().gcoo_wide_columns;
  }
  static const char* wide_columns_name(const product_facts& f) {
    return f.lhs.value_bytes == 8 ? "gcoo_fp64_wide_columns" : "gcoo_wide_columns";
  }
  // The rules for an operand the planner would convert (no tuned entry for its class).
  static std::string decline_text(const product_facts& f) {
    const auto& t = tuning();
    const index_t n = f.vectors;
    const index_t rows = f.lhs.rows;
    std::ostringstream why;
    const double mean = f.lhs.mean_row_length();
    // Rows below gcoo_min_rows need a wide B (and then short rows) or the widest B.
    const bool few_rows =
        rows < t.gcoo_min_rows && !(n >= t.gcoo_widest_columns && rows >= t.gcoo_widest_min_rows);
    // Narrow B (below gcoo_min_columns): only the large-A rule, and only from a later product.
    const bool narrow = n < t.gcoo_min_columns;
    if (narrow && n < t.gcoo_narrow_min_columns) {
      why << "N = " << n << " < gcoo_narrow_min_columns " << t.gcoo_narrow_min_columns;
    } else if (few_rows && n < wide_columns(f)) {
      why << rows << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and N = " << n << " < "
          << wide_columns_name(f) << " " << wide_columns(f);
    } else if (few_rows && rows < t.gcoo_wide_min_rows) {
      why << rows << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and < gcoo_wide_min_rows "
          << t.gcoo_wide_min_rows;
    } else if (few_rows && mean > t.gcoo_wide_max_mean_row) {
      why << rows << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and mean row length " << mean
          << " > gcoo_wide_max_mean_row " << t.gcoo_wide_max_mean_row;
    } else if (narrow && f.lhs.value_bytes == 8 && n >= t.gcoo_fp64_narrow_long_row_columns &&
               mean > t.gcoo_fp64_wide_max_mean_row) {
      why << "double with N = " << n << " >= gcoo_fp64_narrow_long_row_columns "
          << t.gcoo_fp64_narrow_long_row_columns << " and mean row length " << mean
          << " > gcoo_fp64_wide_max_mean_row " << t.gcoo_fp64_wide_max_mean_row;
    } else if (f.lhs.value_bytes == 8 && n >= t.gcoo_wide_columns &&
               mean > t.gcoo_fp64_wide_max_mean_row) {
      why << "double with N = " << n << " >= gcoo_wide_columns " << t.gcoo_wide_columns
          << " and mean row length " << mean << " > gcoo_fp64_wide_max_mean_row "
          << t.gcoo_fp64_wide_max_mean_row;
    } else if (const index_t longest = f.lhs_longest_row(); longest < 0) {
      why << "row lengths unknown for this format (convert to csr to let gcoo_spmm compete)";
    } else if (longest > t.gcoo_max_row_spread * mean) {
      why << "longest row " << longest << " > gcoo_max_row_spread " << t.gcoo_max_row_spread
          << " x mean row length " << mean;
    } else if (narrow && !(f.lhs_gcoo_cached && f.lhs_gcoo_cached())) {
      // Products already run with A as it is (any kind); unknown counts as none, so a caller
      // that cannot say never triggers a conversion for a narrow product.
      const long product = (f.lhs_uses_as_is ? f.lhs_uses_as_is() : 0L) + 1;
      if (product < t.gcoo_narrow_min_uses)
        why << "N = " << n << " < gcoo_min_columns " << t.gcoo_min_columns << " and product "
            << product << " with this operand < gcoo_narrow_min_uses " << t.gcoo_narrow_min_uses
            << ": it runs as it is; a later one converts it to gcoo once (cached on it)";
    }
    return why.str();
  }
};

template <>
struct step<kernels::gcoo_spmm_paper> {
  /// The paper's Algorithm 2 as published: the benchmark baseline, chosen only when forced.
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return decision::accept();
    return decision::decline(
        "the paper's kernel is the benchmark baseline; eval<kernels::gcoo_spmm_paper> forces it");
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    return step<void>::why_chosen<Rule>(f);
  }
};

}  // namespace spade::plan
