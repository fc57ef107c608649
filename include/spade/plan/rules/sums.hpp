// Sum rules (A + B, A − B), one per operand pairing.
#pragma once

#include "spade/plan/rules/products.hpp"

namespace spade::plan::rules {

/// dense ± dense → dense with cuBLAS GEAM, which wants one layout: the rhs is converted to
/// the lhs layout when they differ (Eigen takes either).
struct dense_plus_dense {
  static constexpr const char* name = "dense + dense";
  template <class A, class B>
  static constexpr bool matches = is_dense_v<A>&& is_dense_v<B>;
  template <class A, class B>
  using candidates = std::conditional_t<
      on_gpu<A>, plan::candidates<candidate<kernels::cublas_geam, conversion_path_t<rhs, B, A>>>,
      plan::candidates<candidate<kernels::eigen_sum>>>;
};

/// sparse ± sparse → csr with cuSPARSE csrgeam2 (both csr).
struct sparse_plus_sparse {
  static constexpr const char* name = "sparse + sparse";
  template <class A, class B>
  static constexpr bool matches = sparse_matrix<A>&& sparse_matrix<B>;
  template <class A, class B>
  using steps_for =
      concat_t<conversion_path_t<lhs, A, csr_of<A>>, conversion_path_t<rhs, B, csr_of<B>>>;
  template <class A, class B>
  using candidates =
      std::conditional_t<on_gpu<A>,
                         plan::candidates<candidate<kernels::cusparse_csr_add, steps_for<A, B>>>,
                         plan::candidates<candidate<kernels::eigen_sum, steps_for<A, B>>>>;
};

/// vector ± vector → vector in one pass (z = a·x + b·y).
struct vector_plus_vector {
  static constexpr const char* name = "vector + vector";
  template <class A, class B>
  static constexpr bool matches = is_vector_v<A>&& is_vector_v<B>;
  template <class A, class B>
  using candidates =
      std::conditional_t<on_gpu<A>, plan::candidates<candidate<kernels::spade_axpby>>,
                         plan::candidates<candidate<kernels::eigen_sum>>>;
};

}  // namespace spade::plan::rules
