// The copies a chosen kernel needs at run time, beyond its plan's format conversions: transposed
// operands it has no op flag for, and its raw result's conversion. One list, which the evaluator
// runs (eval/run_steps.hpp) and explain prints.
#pragma once

#include <array>
#include <string>

#include "spade/plan/kernels.hpp"

namespace spade::plan {

enum class copy_kind {
  transpose_lhs,          // op(A) = Aᵀ and the kernel has no flag for it
  transpose_rhs,          // op(B) = Bᵀ likewise
  result_from_row_major,  // a col-major destination of a kernel that writes row-major only
  result_from_tiles,      // tiles → csr
};

/// Whether `Kernel` reads a transposed operand of its `Read` kind (sparse or not) from a copy.
constexpr bool copies_transposed(kernels::transposed_read read, bool sparse_operand) {
  return read == kernels::transposed_read::copy ||
         (read == kernels::transposed_read::copy_if_sparse && sparse_operand);
}

/// The copies of one kernel run, in the order they run.
struct copy_steps {
  std::array<copy_kind, 3> kinds{};
  int count = 0;
  void add(copy_kind k) { kinds[static_cast<std::size_t>(count++)] = k; }
  const copy_kind* begin() const { return kinds.data(); }
  const copy_kind* end() const { return kinds.data() + count; }
};

/// What a run of `Kernel` copies for these flags (the operands' formats after the plan's
/// conversions: sparse or not; the destination's layout).
template <class Kernel>
copy_steps copies_for(bool lhs_transposed, bool lhs_sparse, bool rhs_transposed, bool rhs_sparse,
                      bool destination_col_major) {
  copy_steps steps;
  if (lhs_transposed && copies_transposed(Kernel::lhs_transposed, lhs_sparse))
    steps.add(copy_kind::transpose_lhs);
  if (rhs_transposed && copies_transposed(Kernel::rhs_transposed, rhs_sparse))
    steps.add(copy_kind::transpose_rhs);
  if (Kernel::result == kernels::result_copy::from_row_major && destination_col_major)
    steps.add(copy_kind::result_from_row_major);
  if (Kernel::result == kernels::result_copy::from_tiles) steps.add(copy_kind::result_from_tiles);
  return steps;
}

inline const char* copy_text(copy_kind k) {
  switch (k) {
    case copy_kind::transpose_lhs:
      return "lhs transposed into a copy (the kernel has no op flag for it; cached on the operand)";
    case copy_kind::transpose_rhs:
      return "rhs transposed into a copy (the kernel has no op flag for it; cached on the operand)";
    case copy_kind::result_from_row_major:
      return "result computed row-major, then relaid into the col-major destination";
    case copy_kind::result_from_tiles:
      return "result computed as tiles, then converted to csr";
  }
  return "";
}

/// explain's lines for `steps` (none when empty), each after `pad`.
inline std::string copies_text(const copy_steps& steps, const std::string& pad) {
  std::string text;
  for (const copy_kind k : steps)
    text += pad + "copy: " + copy_text(k) + "\n";
  return text;
}

}  // namespace spade::plan
