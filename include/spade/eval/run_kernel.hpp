// How the evaluator calls a kernel: runner<Kernel> (products and sums) and vector_kernels<Space>
// (scale, dot, norm) are specialised by the back end that runs them — cpu/run.hpp (Eigen) and
// device/run.hpp (cuBLAS, cuSPARSE, Spade's kernels) — so eval includes neither; spade.hpp
// includes both, before any user code instantiates an evaluation.
#pragma once

#include <cstddef>

#include "spade/core/storage.hpp"
#include "spade/formats/traits.hpp"

namespace spade::detail {

/// Makes `dest` a rows × cols object of its own type, keeping its storage when the shape
/// already fits (its contents then matter only when beta != 0).
template <class Dest>
void shape_destination(Dest& dest, index_t rows, index_t cols) {
  using T = typename Dest::value_type;
  using S = typename Dest::space_type;
  if constexpr (is_vector_v<Dest>) {
    if (dest.size() != rows) dest = Dest(storage<T, S>(static_cast<std::size_t>(rows)));
  } else {
    if (dest.rows() != rows || dest.cols() != cols)
      dest = Dest(unchecked, rows, cols,
                  storage<T, S>(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)));
  }
}

/// Runs kernel `Kernel` on storage operands that already have the formats the plan's conversion
/// steps produced, transposed only where the kernel has an op flag (eval/run_steps.hpp made every
/// other copy). A back end specialises it with the members its kernel has:
///   product(alpha, a, ta, b, tb, beta, dest)   dest = alpha·op(A)·op(B) + beta·dest (dense or
///                                              vector dest)
///   sparse_product(alpha, a, ta, b, tb)        alpha·op(A)·op(B) as csr (as tiles for a kernel
///                                              whose tag says result_copy::from_tiles)
///   sum(a, x, tx, b, y, ty, dest)              dest = a·op(X) + b·op(Y) (dense or vector dest)
///   sparse_sum(a, x, tx, b, y, ty)             a·op(X) + b·op(Y) as csr
template <class Kernel>
struct runner {
  static_assert(sizeof(Kernel) == 0,
                "spade: internal: no back end runs this kernel here; include spade/spade.hpp, "
                "which brings in cpu/run.hpp and device/run.hpp");
};

/// scale(s, m) (values *= s in place), dot(u, v) and norm(u) where `Space` holds the data;
/// specialised by the back ends like runner.
template <class Space>
struct vector_kernels {
  static_assert(sizeof(Space) == 0,
                "spade: internal: no back end for this space here; include spade/spade.hpp");
};

}  // namespace spade::detail
