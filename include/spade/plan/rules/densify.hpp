// The densify rule of sparse × dense: when a dense GEMM beats every sparse kernel, and why.
#pragma once

#include <sstream>
#include <string>

#include "spade/core/tuning.hpp"
#include "spade/plan/facts.hpp"

namespace spade::plan {

/// Why the densify rule (a dense GEMM instead of any sparse kernel of A·X) holds for these
/// facts, or "" when it does not; spade::tuning()'s densify thresholds.
inline std::string densify_reason(const product_facts& f) {
  const auto& t = tuning();
  const double density = f.lhs.density();
  const double cells = f.lhs.cells();
  const bool wide = f.vectors >= t.densify_wide_columns;
  const double threshold = wide ? t.densify_density_wide : t.densify_density;
  if (density < threshold || cells > t.densify_max_elements) return {};
  std::ostringstream why;
  why << "lhs density " << density
      << " >= " << (wide ? "densify_density_wide " : "densify_density ") << threshold;
  if (wide)
    why << " (N = " << f.vectors << " >= densify_wide_columns " << t.densify_wide_columns << ")";
  why << " (and " << cells << " elements <= densify_max_elements " << t.densify_max_elements
      << "): a dense GEMM is faster";
  return why.str();
}

}  // namespace spade::plan
