// The hash_spgemm step: hash-based two-phase sparse × sparse (paper 004, OpSparse).
#pragma once

#include <string>

#include "spade/plan/steps/step.hpp"

namespace spade::plan {

template <>
struct step<kernels::hash_spgemm> {
  /// Every sparse product on the gpu that tiled_spgemm declines.
  template <class Rule>
  static decision decide(const product_facts&) {
    return decision::accept();
  }

  /// What hash_spgemm will meet, from its setup and symbolic phases run now on the (cached)
  /// csr operands: products, nnz(C), compression ratio and the bins of both phases.
  template <class Rule>
  static std::string why_chosen(const product_facts& f) {
    if (f.spgemm_profile)
      return "Spade's hash SpGEMM for every sparse product (cuSPARSE only when forced); profiled "
             "now (setup and symbolic phases): " +
             f.spgemm_profile();
    return "Spade's hash SpGEMM for every sparse product (cuSPARSE only when forced); products "
           "and bins are known once the operands are csr";
  }
};

}  // namespace spade::plan
