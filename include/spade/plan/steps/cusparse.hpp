// The cusparse_spmm and cusparse_spmv steps: cuSPARSE sparse × dense and sparse × vector.
#pragma once

#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

/// cusparse_spmv has no step of its own: it takes every sparse × vector product that reaches it
/// (step<Kernel>'s default), after ellr_spmv and csr_rowwise declined.
template <>
struct step<kernels::cusparse_spmm> {
  /// In the sparse × dense rule on the gpu, declines only the densify rule's operands.
  template <class Rule>
  static decision decide(const product_facts& f) {
    if (!gpu_sparse_times_dense<Rule>(f)) return decision::accept();
    std::string why = densify_reason(f);
    return why.empty() ? decision::accept() : decision::decline(std::move(why));
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    return step<void>::why_chosen<Rule>(f);
  }
};

}  // namespace spade::plan
