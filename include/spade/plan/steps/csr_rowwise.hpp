// The csr_rowwise step: small csr operands row by row, one launch (docs/vendor-bugs.md).
#pragma once

#include <string>

#include "spade/core/tuning.hpp"
#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::csr_rowwise> {
  /// Accepts an operand of at most tuning().rowwise_max_extent rows and columns and
  /// rowwise_max_nnz entries (there one launch without workspace costs what cuSPARSE's setup
  /// does, and cuSPARSE 12.6 returned wrong rows for some 32-row matrices); in the sparse ×
  /// dense rule the rule's densify gate comes first, as for every sparse kernel there.
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (rowwise_preferred(f.lhs.rows, f.lhs.cols, f.lhs.nnz)) return decision::accept();
    const auto& t = tuning();
    return decision::decline("A is " + std::to_string(f.lhs.rows) + "x" +
                             std::to_string(f.lhs.cols) + " with " + std::to_string(f.lhs.nnz) +
                             " entries, past rowwise_max_extent " +
                             std::to_string(t.rowwise_max_extent) + " or rowwise_max_nnz " +
                             std::to_string(t.rowwise_max_nnz));
  }

  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    const auto& t = tuning();
    std::string why = "A is at most " + std::to_string(t.rowwise_max_extent) + "x" +
                      std::to_string(t.rowwise_max_extent) + " with at most " +
                      std::to_string(t.rowwise_max_nnz) +
                      " entries: one launch without workspace (docs/vendor-bugs.md)";
    if (gpu_sparse_times_dense<Rule>(f)) return sparse_times_dense_text(f) + "; " + why;
    return why;
  }
};

}  // namespace spade::plan
