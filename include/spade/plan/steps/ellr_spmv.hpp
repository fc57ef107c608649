// The ellr_spmv step: ELLPACK-R sparse × vector (and × up to 8 columns) — when it should run.
#pragma once

#include <sstream>
#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::ellr_spmv> {
  /// Declines a transposed operand, a wide X, formats without row lengths, skewed or padded
  /// rows, and a first product (the conversion pays from the ellr_min_uses-th on); times a
  /// dense X the sparse × dense rule's densify gate comes first.
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
