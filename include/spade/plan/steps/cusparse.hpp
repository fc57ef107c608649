// The cusparse_spmm and cusparse_spmv steps: cuSPARSE sparse × dense and sparse × vector.
#pragma once

#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

/// For explain: the cuSPARSE wrappers hand small operands to Spade's row-wise kernels.
template <class Kernel>
std::string rowwise_note(const product_facts& f) {
  if (!f.lhs.on_gpu || !f.lhs.sparse() || !rowwise_preferred(f.lhs.rows, f.lhs.cols, f.lhs.nnz))
    return {};
  const auto& t = tuning();
  return std::string("; A is at most ") + std::to_string(t.rowwise_max_extent) + "x" +
         std::to_string(t.rowwise_max_extent) + " with at most " +
         std::to_string(t.rowwise_max_nnz) + " entries, so " + Kernel::name +
         " runs Spade's row-wise kernel instead (docs/vendor-bugs.md)";
}

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
    return step<void>::why_chosen<Rule>(f) + rowwise_note<kernels::cusparse_spmm>(f);
  }
};

template <>
struct step<kernels::cusparse_spmv> {
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::accept();
  }
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    return step<void>::why_chosen<Rule>(f) + rowwise_note<kernels::cusparse_spmv>(f);
  }
};

}  // namespace spade::plan
