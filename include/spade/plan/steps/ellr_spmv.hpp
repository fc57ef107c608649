// The ellr_spmv step: ELLPACK-R sparse × vector (and × up to 8 or 16 columns) — when it should run.
#pragma once

#include <sstream>
#include <string>

#include "spade/formats/ellr.hpp"
#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::ellr_spmv> {
  /// Declines a transposed operand; an X of more than 16 columns, or of 9-15 except 12 in float,
  /// or past 8 that is col-major (or a col-major Y) or multiplies a matrix of as many rows as the
  /// device has resident threads (or, in double, of rows longer than ellr_wide_max_mean_row_fp64
  /// on average); formats
  /// without row lengths, skewed or padded rows, and a first product (the conversion pays from the
  /// ellr_min_uses-th on); times a dense X the sparse × dense rule's densify gate comes first.
  template <class Rule>
  static decision decide(const product_facts& f) {
    std::string why = decline_text(f);
    return why.empty() ? decision::accept() : decision::decline(std::move(why));
  }

  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    std::ostringstream why;
    if (f.lhs.kind == format::ellr) {
      why << "the operand is an ellr";
    } else if (f.lhs.kind == format::csr) {
      const auto& t = tuning();
      const row_profile& profile = f.lhs_row_profile();
      const ellr_layout layout = f.lhs_ellr_layout();
      why << "longest row " << profile.longest << " <= ellr_max_row_spread "
          << t.ellr_max_row_spread << " x mean row length " << profile.mean << "; ";
      const ellr_layout one_lane{layout.slice_height, layout.sort_window};
      if (layout.slice_height == 0)
        why << "the paper's layout: padding " << profile.padding(one_lane)
            << " <= ellr_plain_max_padding " << t.ellr_plain_max_padding;
      else
        why << "SELL-" << layout.slice_height << "-" << layout.sort_window
            << " (paper's layout would pad " << profile.padding(ellr_layout{})
            << " > ellr_plain_max_padding " << t.ellr_plain_max_padding << "): padding "
            << profile.padding(one_lane);
      why << " <= ellr_max_padding " << t.ellr_max_padding << "; " << layout.lanes
          << " thread(s) per row, entries interleaved to match (slots stored: padding "
          << profile.padding(layout) << "); "
          << (f.lhs_ellr_cached() ? "the ellr is cached on the operand (conversion reused)"
                                  : "converted now, then cached on the operand");
      if (f.vectors > 8) {
        // The launch ellr_spmm will choose past 8 columns (lib/kernels/ellr_spmv.cu).
        const int vectors = static_cast<int>(f.vectors);
        const detail::ellr_wide_launch launch =
            detail::ellr_wide_default_launch(static_cast<int>(layout.lanes), vectors,
                                             f.lhs.value_bytes == 8, f.lhs.rows, profile.mean);
        why << "; " << f.vectors << " columns split over " << launch.column_groups << " threads of "
            << detail::ellr_pass_vectors(vectors) / launch.column_groups << ", "
            << launch.threads_per_row << " per row";
      }
    }
    return why.str();
  }

 private:
  static std::string decline_text(const product_facts& f) {
    if (f.lhs_transposed)
      return "the sparse operand is transposed (ellr has no transposed product)";
    if (f.rhs_transposed) return "the dense operand is transposed";
    if (f.vectors > ellr_max_vectors)
      return "N = " + std::to_string(f.vectors) + " > ellr_max_vectors " +
             std::to_string(ellr_max_vectors);
    // Past one thread's 8 sums ellr_spmm splits X's columns; it beats cuSPARSE on row-major X
    // read in 16-byte loads and on matrices that leave it several threads a row
    // (docs/benchmarks/spmm-ellr-16-2026-11-29.md). Below 16 columns each piece reads up to its
    // own last column: in float that won at 12 (16-byte loads) but not at 10 or 14 (pairs); in
    // double it won on the real set but lost on random rows
    // (docs/benchmarks/spmm-ellr-12-2026-11-29.md).
    if (f.vectors > 8 && f.vectors != ellr_max_vectors) {
      if (f.lhs.value_bytes == 8)
        return "N = " + std::to_string(f.vectors) +
               ": past 8 columns in double only N = 16 (10-14 columns lost to cuSPARSE on "
               "random rows)";
      if (f.vectors % 4 != 0)
        return "N = " + std::to_string(f.vectors) +
               ": past 8 columns in float only N = 12 or 16 (X's rows whole 16-byte pieces); "
               "rows read in pairs or one element at a time lost to cuSPARSE";
    }
    if (f.vectors > 8) {
      if (f.rhs_col_major || f.destination_col_major)
        return "a col-major X or Y: past 8 columns ellr_spmm reads such an X one element at a "
               "time, and it was measured on row-major ones only";
      if (f.resident_threads > 0 && f.lhs.rows >= f.resident_threads)
        return std::to_string(f.lhs.rows) + " rows fill the device's " +
               std::to_string(f.resident_threads) +
               " resident threads: past 8 columns gcoo_spmm and cuSPARSE ran faster";
      const double most = tuning().ellr_wide_max_mean_row_fp64;
      if (f.lhs.value_bytes == 8 && f.lhs.mean_row_length() > most) {
        std::ostringstream why;
        why << "mean row length " << f.lhs.mean_row_length() << " > ellr_wide_max_mean_row_fp64 "
            << most << ": past 8 columns in double longer rows lost to cuSPARSE";
        return why.str();
      }
    }
    if (f.lhs.kind == format::ellr) return {};  // the user's own format
    if (f.lhs.kind != format::csr)
      return "row lengths unknown for this format (convert to csr to let ellr_spmv compete)";
    if (f.lhs.nnz == 0 || f.vectors == 0)
      return "the product has no terms (A has no entries or X no columns): no conversion pays";
    const auto& t = tuning();
    std::ostringstream why;
    const row_profile& profile = f.lhs_row_profile();
    const ellr_layout layout = f.lhs_ellr_layout();
    // Padding the kernel would read past: none past a row's length, so count it with one lane.
    const double padding = profile.padding(ellr_layout{layout.slice_height, layout.sort_window});
    const std::int64_t resident = f.resident_threads;
    if (resident > 0 && f.lhs.rows >= resident && profile.mean > t.ellr_full_device_max_mean_row) {
      why << f.lhs.rows << " rows fill the device's " << resident
          << " resident threads and the mean row length " << profile.mean
          << " > ellr_full_device_max_mean_row " << t.ellr_full_device_max_mean_row
          << ": cuSPARSE streams such rows faster";
    } else if (profile.longest > t.ellr_max_row_spread * profile.mean) {
      why << "longest row " << profile.longest << " > ellr_max_row_spread " << t.ellr_max_row_spread
          << " x mean row length " << profile.mean;
    } else if (padding > t.ellr_max_padding) {
      why << "the planned ellr would be " << padding << " padding > ellr_max_padding "
          << t.ellr_max_padding;
    } else if (!f.lhs_ellr_cached() && f.lhs_uses_as_is() + 1 < t.ellr_min_uses) {
      why << "product " << f.lhs_uses_as_is() + 1 << " with this operand < ellr_min_uses "
          << t.ellr_min_uses
          << ": it runs as it is; a later one converts it to ellr once (cached on it)";
    }
    return why.str();
  }
};

}  // namespace spade::plan
