// The tiled_spgemm steps: bitmap-tiled sparse × sparse on tensor cores (paper 002) and its
// fp16-input mode.
#pragma once

#include <sstream>
#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

/// The census criteria against spade::tuning(), as explain prints them.
inline std::string tile_census_text(const tile_census& census) {
  const auto& t = tuning();
  std::ostringstream out;
  out << census.products << " element products in " << census.tile_pairs
      << " tile pairs: " << census.products_per_tile_pair()
      << " per pair (tiled_min_products_per_pair " << t.tiled_min_products_per_pair
      << "); mean tile fill A " << census.a_fill() << ", B " << census.b_fill()
      << " (tiled_min_fill " << t.tiled_min_fill << ")";
  return out.str();
}

template <>
struct step<kernels::tiled_spgemm> {
  /// The paper's criteria, re-measured (spade::tuning(), docs/tiled.md): enough entries in A
  /// (checked before the census's kernels), enough element products per tile pair, tiles
  /// filled enough; tiled operands (the user's format) always run; transposes never.
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (f.lhs_transposed || f.rhs_transposed)
      return decision::decline("an operand is transposed (tiles have no transposed product)");
    if (both_tiled(f)) return decision::accept();
    const auto& t = tuning();
    if (static_cast<double>(f.lhs.nnz) < t.tiled_min_nnz) {
      std::ostringstream why;
      why << "nnz(A) " << f.lhs.nnz << " < tiled_min_nnz " << t.tiled_min_nnz;
      return decision::decline(why.str());
    }
    const tile_census& census = f.census();
    if (census.products_per_tile_pair() < t.tiled_min_products_per_pair ||
        census.a_fill() < t.tiled_min_fill || census.b_fill() < t.tiled_min_fill)
      return decision::decline("tiles too sparse: " + tile_census_text(census));
    return decision::accept();
  }

  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (both_tiled(f)) return "both operands are tiled";
    return "8x8 tiles dense enough: " + tile_census_text(f.census()) + "; nnz(A) " +
           std::to_string(f.lhs.nnz) + " >= tiled_min_nnz " +
           std::to_string(tuning().tiled_min_nnz) +
           "; fp64 on DMMA, fp32 as 3xTF32 (the tiled forms are cached on the operands)";
  }

 private:
  static bool both_tiled(const product_facts& f) {
    return f.lhs.kind == format::tiled && f.rhs.kind == format::tiled;
  }
};

template <>
struct step<kernels::tiled_spgemm_fp16> {
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::decline(
        "fp16 inputs lose precision; eval<kernels::tiled_spgemm_fp16> forces it");
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    return step<void>::why_chosen<Rule>(f);
  }
};

}  // namespace spade::plan
