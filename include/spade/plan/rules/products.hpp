// Product rules, one per operand pairing: which kernels can compute A·B and what they need.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/traits.hpp"
#include "spade/plan/conversion_graph.hpp"
#include "spade/plan/facts.hpp"
#include "spade/plan/kernels.hpp"
#include "spade/plan/rules/densify.hpp"
#include "spade/plan/steps.hpp"

namespace spade::plan::rules {

template <class A>
constexpr bool on_gpu = std::is_same_v<typename A::space_type, gpu>;
template <class A>
using csr_of = csr<typename A::value_type, typename A::space_type>;
template <class A>
using dense_of = dense<typename A::value_type, typename A::space_type, row_major>;
template <class A>
using gcoo_of = gcoo<typename A::value_type, typename A::space_type>;
template <class A>
using ellr_of = ellr<typename A::value_type, typename A::space_type>;
template <class A>
using tiled_of = tiled<typename A::value_type, typename A::space_type>;

/// dense · dense → dense. cuBLAS GEMM takes either layout and op flag without copies.
struct dense_times_dense {
  static constexpr const char* name = "dense x dense";
  template <class A, class B>
  static constexpr bool matches = is_dense_v<A>&& is_dense_v<B>;
  template <class A, class B>
  using candidates =
      std::conditional_t<on_gpu<A>, plan::candidates<candidate<kernels::cublas_gemm>>,
                         plan::candidates<candidate<kernels::eigen_product>>>;
};

/// sparse · dense → dense. On the GPU: ELLPACK-R (ours) for B of at most 8 columns on regular
/// rows, the tiled SpMM on tensor cores (ours) where A's 8×8 tiles are full enough, GCOO SpMM
/// (ours) where it is measured faster, the row-wise kernel (ours) on small
/// operands, cuSPARSE
/// SpMM on csr otherwise, and above the density threshold the sparse operand densified for
/// cuBLAS GEMM (the crossover of ../shared/BENCHMARKS.md). The paper's own GCOO kernel is a
/// candidate only for eval<kernels::gcoo_spmm_paper> (the benchmark baseline).
struct sparse_times_dense {
  static constexpr const char* name = "sparse x dense";
  template <class A, class B>
  static constexpr bool matches = sparse_matrix<A>&& is_dense_v<B>;
  /// The densify rule, checked on the gpu before each sparse candidate's own step: past
  /// tuning()'s density thresholds a dense GEMM (the last candidate) beats every sparse kernel,
  /// so each declines with the same reason — except a kernel on an operand already in its own
  /// format (gcoo for the gcoo kernels: densifying a sparse_view's gcoo would convert its dense
  /// matrix to gcoo and back; ellr for ellr_spmv; tiled for tiled_spmm).
  template <class Kernel>
  static decision gate(const product_facts& f) {
    if (!f.lhs.on_gpu || std::is_same_v<Kernel, kernels::cublas_gemm>) return decision::accept();
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm> ||
                  std::is_same_v<Kernel, kernels::gcoo_spmm_paper>)
      if (f.lhs.kind == format::gcoo) return decision::accept();
    if constexpr (std::is_same_v<Kernel, kernels::ellr_spmv>)
      if (f.lhs.kind == format::ellr) return decision::accept();
    if constexpr (std::is_same_v<Kernel, kernels::tiled_spmm> ||
                  std::is_same_v<Kernel, kernels::tiled_spmm_tf32>)
      if (f.lhs.kind == format::tiled) return decision::accept();
    std::string why = densify_reason(f);
    return why.empty() ? decision::accept() : decision::decline(std::move(why));
  }
  /// The gcoo kernels read B row-major: a col-major B is converted (cached on B).
  template <class A, class B>
  using gcoo_steps_for =
      concat_t<conversion_path_t<lhs, A, gcoo_of<A>>, conversion_path_t<rhs, B, dense_of<B>>>;
  template <class A, class B>
  using candidates = std::conditional_t<
      on_gpu<A>,
      plan::candidates<candidate<kernels::ellr_spmv, conversion_path_t<lhs, A, ellr_of<A>>>,
                       candidate<kernels::tiled_spmm, conversion_path_t<lhs, A, tiled_of<A>>>,
                       candidate<kernels::gcoo_spmm, gcoo_steps_for<A, B>>,
                       candidate<kernels::csr_rowwise, conversion_path_t<lhs, A, csr_of<A>>>,
                       candidate<kernels::cusparse_spmm, conversion_path_t<lhs, A, csr_of<A>>>,
                       candidate<kernels::gcoo_spmm_paper, gcoo_steps_for<A, B>>,
                       candidate<kernels::tiled_spmm_tf32, conversion_path_t<lhs, A, tiled_of<A>>>,
                       candidate<kernels::cublas_gemm, conversion_path_t<lhs, A, dense_of<A>>>>,
      plan::candidates<candidate<kernels::eigen_product, conversion_path_t<lhs, A, csr_of<A>>>>>;
};

/// dense · sparse → dense. For now the GPU densifies the sparse operand for cuBLAS GEMM; a
/// cuSPARSE path through the transposition identity comes with the operand-view work.
struct dense_times_sparse {
  static constexpr const char* name = "dense x sparse";
  template <class A, class B>
  static constexpr bool matches = is_dense_v<A>&& sparse_matrix<B>;
  template <class A, class B>
  using candidates = std::conditional_t<
      on_gpu<A>,
      plan::candidates<candidate<kernels::cublas_gemm, conversion_path_t<rhs, B, dense_of<B>>>>,
      plan::candidates<candidate<kernels::eigen_product, conversion_path_t<rhs, B, csr_of<B>>>>>;
};

/// sparse · vector → vector: ELLPACK-R (ours) where rows are regular enough (padding and
/// spread thresholds), the row-wise kernel (ours) on small operands, cuSPARSE SpMV on csr
/// otherwise.
struct sparse_times_vector {
  static constexpr const char* name = "sparse x vector";
  template <class A, class B>
  static constexpr bool matches = sparse_matrix<A>&& is_vector_v<B>;
  template <class A, class B>
  using candidates = std::conditional_t<
      on_gpu<A>,
      plan::candidates<candidate<kernels::ellr_spmv, conversion_path_t<lhs, A, ellr_of<A>>>,
                       candidate<kernels::csr_rowwise, conversion_path_t<lhs, A, csr_of<A>>>,
                       candidate<kernels::cusparse_spmv, conversion_path_t<lhs, A, csr_of<A>>>>,
      plan::candidates<candidate<kernels::eigen_product, conversion_path_t<lhs, A, csr_of<A>>>>>;
};

/// dense · vector → vector with cuBLAS GEMV.
struct dense_times_vector {
  static constexpr const char* name = "dense x vector";
  template <class A, class B>
  static constexpr bool matches = is_dense_v<A>&& is_vector_v<B>;
  template <class A, class B>
  using candidates =
      std::conditional_t<on_gpu<A>, plan::candidates<candidate<kernels::cublas_gemv>>,
                         plan::candidates<candidate<kernels::eigen_product>>>;
};

/// sparse · sparse → csr. On the GPU: the tiled SpGEMM on tensor cores (both operands as
/// tiles) where the tiles are dense enough (the census criteria of spade::tuning()), else
/// Spade's hash SpGEMM (both csr); the fp16 tiled mode and cuSPARSE SpGEMM only when forced.
struct sparse_times_sparse {
  static constexpr const char* name = "sparse x sparse";
  template <class A, class B>
  static constexpr bool matches = sparse_matrix<A>&& sparse_matrix<B>;
  template <class A, class B>
  using steps_for =
      concat_t<conversion_path_t<lhs, A, csr_of<A>>, conversion_path_t<rhs, B, csr_of<B>>>;
  template <class A, class B>
  using tiled_steps_for =
      concat_t<conversion_path_t<lhs, A, tiled_of<A>>, conversion_path_t<rhs, B, tiled_of<B>>>;
  template <class A, class B>
  using candidates = std::conditional_t<
      on_gpu<A>,
      plan::candidates<candidate<kernels::tiled_spgemm, tiled_steps_for<A, B>>,
                       candidate<kernels::hash_spgemm, steps_for<A, B>>,
                       candidate<kernels::tiled_spgemm_fp16, tiled_steps_for<A, B>>,
                       candidate<kernels::cusparse_spgemm, steps_for<A, B>>>,
      plan::candidates<candidate<kernels::eigen_product, steps_for<A, B>>>>;
};

}  // namespace spade::plan::rules
