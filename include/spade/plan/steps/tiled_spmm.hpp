// The tiled_spmm steps: sparse × dense over 8×8 bitmap tiles on tensor cores, and its plain-TF32
// mode.
#pragma once

#include <sstream>
#include <string>

#include "spade/plan/steps/gcoo_spmm.hpp"
#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::tiled_spmm> {
  /// In the sparse × dense rule on the gpu (after the densify gate): a tiled operand (the
  /// user's format) always runs; otherwise B wide enough, A large enough and its tiles filled
  /// enough for its precision and N (the tile-fill fact, counted once and cached on A;
  /// spade::tuning(), docs/tiled.md).
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return decision::accept();
    if (f.lhs_transposed)
      return decision::decline(
          "the sparse operand is transposed (tiles have no transposed product)");
    if (f.lhs.kind == format::tiled) return decision::accept();
    if (const tuned_choice tuned = tuned_spmm_of<Rule>(f); tuned.decides())
      return tuned_decision(tuned, kernels::tiled_spmm::name);
    const auto& t = tuning();
    std::ostringstream why;
    if (f.vectors < t.tiled_spmm_min_columns) {
      why << "N = " << f.vectors << " < tiled_spmm_min_columns " << t.tiled_spmm_min_columns;
    } else if (static_cast<double>(f.lhs.nnz) < t.tiled_spmm_min_nnz) {
      why << "nnz(A) " << f.lhs.nnz << " < tiled_spmm_min_nnz " << t.tiled_spmm_min_nnz;
    } else if (!f.lhs_tile_fill) {
      why << "no tile fill for this operand";
    } else if (const double fill = f.lhs_tile_fill(); fill < min_fill(f)) {
      why << "tiles too sparse: mean tile fill " << fill << " < " << min_fill_name(f) << " "
          << min_fill(f);
    } else if (l2_band(f, fill) && step<kernels::gcoo_spmm>::decide<Rule>(f).ok) {
      why << "mean tile fill " << fill << " < tiled_spmm_min_fill_fp64 "
          << t.tiled_spmm_min_fill_fp64 << " and gcoo_spmm takes this L2-resident product";
    }
    const std::string text = why.str();
    return text.empty() ? decision::accept() : decision::decline(text);
  }

  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return step<void>::why_chosen<Rule>(f);
    if (f.lhs.kind == format::tiled) return "the sparse operand is tiled";
    const tuned_choice tuned = tuned_spmm_of<Rule>(f);
    std::ostringstream why;
    why << "mean tile fill " << (f.lhs_tile_fill ? f.lhs_tile_fill() : 0.0);
    if (!tuned.decides()) {
      why << " >= " << min_fill_name(f) << " " << min_fill(f);
      if (wide_in_l2(f)) why << " (A, B and C fit in L2)";
    }
    why << "; N = " << f.vectors
        << "; fp64 on DMMA, fp32 as 3xTF32 (the tiles and their windows are cached on the "
           "operand)"
        << tuned_text(tuned);
    return why.str();
  }

 private:
  // double at tiled_spmm_wide_columns or more: thresholds of its own, lower where the product
  // fits in L2.
  static bool wide_fp64(const product_facts& f) {
    return f.lhs.value_bytes == 8 && f.vectors >= tuning().tiled_spmm_wide_columns;
  }
  static bool wide_fp64_in_l2(const product_facts& f) { return wide_fp64(f) && f.fits_l2; }
  // float at tiled_spmm_wide_columns_fp32 or more where the product fits in L2: a threshold of
  // its own (elsewhere float keeps tiled_spmm_min_fill).
  static bool wide_fp32_in_l2(const product_facts& f) {
    return f.lhs.value_bytes == 4 && f.vectors >= tuning().tiled_spmm_wide_columns_fp32 &&
           f.fits_l2;
  }
  static bool wide_in_l2(const product_facts& f) {
    return wide_fp64_in_l2(f) || wide_fp32_in_l2(f);
  }
  static double min_fill(const product_facts& f) {
    const auto& t = tuning();
    if (wide_fp64_in_l2(f)) return t.tiled_spmm_min_fill_fp64_l2;
    if (wide_fp32_in_l2(f)) return t.tiled_spmm_min_fill_fp32_l2;
    return wide_fp64(f) ? t.tiled_spmm_min_fill_fp64 : t.tiled_spmm_min_fill;
  }
  static const char* min_fill_name(const product_facts& f) {
    if (wide_fp64_in_l2(f)) return "tiled_spmm_min_fill_fp64_l2";
    if (wide_fp32_in_l2(f)) return "tiled_spmm_min_fill_fp32_l2";
    return wide_fp64(f) ? "tiled_spmm_min_fill_fp64" : "tiled_spmm_min_fill";
  }
  // Admitted only by the L2 threshold: there gcoo_spmm, where it runs, won by more (dw4096 at
  // fill 7.98: gcoo 1.51x, tiled 1.08x cuSPARSE at N = 128).
  static bool l2_band(const product_facts& f, double fill) {
    return wide_fp64_in_l2(f) && fill < tuning().tiled_spmm_min_fill_fp64;
  }
};

template <>
struct step<kernels::tiled_spmm_tf32> {
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::decline(
        "plain TF32 keeps 10 bits of each input; eval<kernels::tiled_spmm_tf32> forces it");
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    return step<void>::why_chosen<Rule>(f);
  }
};

}  // namespace spade::plan
