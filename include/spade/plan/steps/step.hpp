// The step of one kernel: whether it should run on a node's facts, and why, for selection and
// explain alike (one header per kernel in this folder specialises step<Kernel>).
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

#include "spade/core/tuning.hpp"
#include "spade/plan/facts.hpp"
#include "spade/plan/kernels.hpp"
#include "spade/plan/rules/products.hpp"

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

/// The facts a sparse × dense product on the gpu was decided on, for explain.
inline std::string sparse_times_dense_text(const product_facts& f) {
  const auto& t = tuning();
  std::ostringstream why;
  const bool wide = f.vectors >= t.densify_wide_columns;
  why << "lhs density " << f.lhs.density() << " vs "
      << (wide ? "densify_density_wide " : "densify_density ")
      << (wide ? t.densify_density_wide : t.densify_density) << "; N = " << f.vectors
      << " vs gcoo_min_columns " << t.gcoo_min_columns << "; " << f.lhs.rows
      << " rows vs gcoo_min_rows " << t.gcoo_min_rows;
  return why.str();
}

/// Whether `Rule` is the sparse × dense rule and the lhs lives on the gpu: the rule whose
/// candidates (ellr, gcoo, cuSPARSE, cuBLAS) compete on the thresholds.
template <class Rule>
bool gpu_sparse_times_dense(const product_facts& f) {
  return std::is_same_v<Rule, rules::sparse_times_dense> && f.lhs.on_gpu;
}

/// A kernel without its own header: it runs whenever the planner reaches it, and explain says
/// what the rule decided on.
template <class Kernel>
struct step {
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::accept();
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (gpu_sparse_times_dense<Rule>(f)) return sparse_times_dense_text(f);
    return "the first candidate that accepts these operands";
  }
};

}  // namespace spade::plan
