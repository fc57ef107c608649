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

/// The facts a sparse × dense product on the gpu was decided on, for explain.
inline std::string sparse_times_dense_text(const product_facts& f) {
  const auto& t = tuning();
  std::ostringstream why;
  const bool wide = f.vectors >= t.densify_wide_columns;
  why << "lhs density " << f.lhs.density() << " vs "
      << (wide ? "densify_density_wide " : "densify_density ")
      << (wide ? t.densify_density_wide : t.densify_density) << "; N = " << f.vectors
      << " vs gcoo_min_columns " << t.gcoo_min_columns;
  if (f.vectors < t.gcoo_min_columns)
    why << " (narrow B: gcoo_narrow_min_columns " << t.gcoo_narrow_min_columns << ")";
  why << "; " << f.lhs.rows << " rows vs gcoo_min_rows " << t.gcoo_min_rows;
  return why.str();
}

/// Whether `Rule` is the sparse × dense rule and the lhs lives on the gpu: the rule whose
/// candidates (ellr, gcoo, cuSPARSE, cuBLAS) compete on the thresholds.
template <class Rule>
bool gpu_sparse_times_dense(const product_facts& f) {
  return std::is_same_v<Rule, rules::sparse_times_dense> && f.lhs.on_gpu;
}

/// The tuned choice for a sparse × dense product on the gpu (`Rule` the sparse × dense rule):
/// what `spade tune` measured on the lhs's class and device, when A is not transposed and C is
/// row-major (what it times); an empty choice otherwise.
template <class Rule>
tuned_choice tuned_spmm_of(const product_facts& f) {
  if (!gpu_sparse_times_dense<Rule>(f) || !f.tuned_spmm || f.lhs_transposed ||
      f.destination_col_major)
    return {};
  return f.tuned_spmm(f.vectors);
}

/// A candidate's decision on a deciding tuned choice: run when it is the kernel decided on.
inline decision tuned_decision(const tuned_choice& tuned, const char* kernel) {
  if (tuned.kernel == kernel) return decision::accept();
  return decision::decline("tuned on this device: " + tuned.kernel + " was fastest " +
                           (tuned.measured ? "on this matrix" : "on its class ") +
                           (tuned.measured ? std::string() : tuned.operand_class));
}

/// What explain adds about tuning to a sparse × dense choice: the tuned entry that decided it
/// (with its times and where they come from), a class the tune file has no entry for or whose
/// entry does not decide, or why the file was ignored; "" without a tune file.
inline std::string tuned_text(const tuned_choice& tuned) {
  if (tuned.table == nullptr) return {};
  if (!tuned.table->problem.empty()) return "; tune file ignored: " + tuned.table->problem;
  if (tuned.entry == nullptr)
    return "; no tuned entry for class " + tuned.operand_class + " in " + tuned.table->source +
           " (the rules decided)";
  const std::string entry = tuned.entry->describe() + "; " + tuned.table->source;
  if (!tuned.decides())
    return "; the tuned entry for class " + tuned.operand_class + " (" + entry +
           ") does not decide for a matrix it did not measure: it is split or has one matrix "
           "(the rules decided)";
  return "; tuned on this device, " +
         std::string(tuned.measured ? "this matrix measured" : "fastest on every matrix") +
         ", class " + tuned.operand_class + ": " + entry;
}

/// What explain adds to a chosen cusparse_spmm: the CSR algorithm it runs with and what decided
/// it, a tune file's "cusparse" entry or the rules ("" where the facts have no such function:
/// a cpu operand, a preview).
inline std::string cusparse_spmm_algorithm_text(const product_facts& f) {
  if (!f.cusparse_spmm_algorithm) return {};
  const spmm_algorithm_choice choice = f.cusparse_spmm_algorithm();
  const tuned_choice& tuned = choice.tuned;
  std::string text = "; cuSPARSE CSR ALG" + std::to_string(choice.number);
  if (tuned.decides())
    return text + ", tuned on this device, this matrix measured, class " + tuned.operand_class +
           ": " + tuned.entry->describe() + "; " + tuned.table->source;
  text += " by the rules (spmm_alg1_*, spmm_alg2_*, spmm_alg3_skewed_*)";
  if (tuned.table != nullptr && !tuned.table->problem.empty())
    text += "; tune file ignored: " + tuned.table->problem;
  else if (tuned.entry != nullptr)
    text += "; the tuned cuSPARSE entry for class " + tuned.operand_class + " (" +
            tuned.entry->describe() +
            ") did not measure this matrix (it is followed only for "
            "the matrices it measured)";
  return text;
}

/// A kernel without its own header (cusparse_spmm, cusparse_spmv, cublas_*): it runs whenever
/// the planner reaches it and its rule's gate lets it, and explain says what the rule decided on.
template <class Kernel>
struct step {
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::accept();
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (gpu_sparse_times_dense<Rule>(f)) {
      std::string why = sparse_times_dense_text(f) + tuned_text(tuned_spmm_of<Rule>(f));
      if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmm>)
        why += cusparse_spmm_algorithm_text(f);
      return why;
    }
    return "the first candidate that accepts these operands";
  }
};

/// Whether candidate `Kernel` of `Rule` should run on these facts: the rule's gate first (when the
/// rule has one: sparse × dense's densify rule), then the kernel's own step. The one function
/// selection and explain call, so their reasons cannot drift.
template <class Rule, class Kernel>
decision decide_candidate(const product_facts& f) {
  if constexpr (requires { Rule::template gate<Kernel>(f); }) {
    decision d = Rule::template gate<Kernel>(f);
    if (!d.ok) return d;
  }
  return step<Kernel>::template decide<Rule>(f);
}

}  // namespace spade::plan
