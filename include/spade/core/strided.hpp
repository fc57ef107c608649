// spade::strided_operand: a dense matrix or vector read in place through its leading dimension.
#pragma once

#include <cstdint>

#include "spade/core/context.hpp"
#include "spade/core/scalar.hpp"

namespace spade {

/// A dense operand as cuBLAS reads it in place: element (i, j) at data[i·ld + j] (row_major) or
/// data[j·ld + i]; a vector's element i at data[i·ld] (rows = its size, cols = 1). What a view
/// (spade::block, row, col, segment) passes to GEMM and GEMV instead of a contiguous copy.
/// `owner`: the context of the viewed storage (nullptr for an empty one).
template <scalar T>
struct strided_operand {
  const T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  std::int64_t ld = 0;
  bool row_major = true;
  context* owner = nullptr;
};

}  // namespace spade
