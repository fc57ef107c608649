// The blocks of an explain dump, one sequence for spade-bench explain (gpu) and
// spade-explain-preview (a device profile, no GPU), so their dumps line up block by block.
#pragma once

#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include <spade/spade.hpp>

#include "bench_counts.hpp"

namespace spade::bench {

/// The product kinds a dump explains on each matrix, in the dump's order.
enum class explain_kind {
  vector_first,       ///< A*x before any product
  vector_after,       ///< A*x after one
  transposed_vector,  ///< transpose(A)*x (after one)
  dense_first,        ///< A*B, B row-major of n columns, before any product
  dense_after,        ///< the same after one
  dense_col_major,    ///< A*B, B col-major of 32 columns (after one)
  transposed_dense,   ///< transpose(A)*B, B row-major of 32 columns (after one)
  square,             ///< A*A
  with_transpose,     ///< A*transpose(A)
};

/// Whether a block's plan on the device does not depend on the products run before it in the
/// dump, so a preview (which plans a fresh operand) can stand beside it: not the blocks after a
/// product, nor A*B of at most plan::ellr_max_vectors columns, which ellr_spmv may run on the
/// ellr that the dump's A*x left cached on the operand.
inline bool previewable(explain_kind kind, index_t n) {
  if (kind == explain_kind::vector_after || kind == explain_kind::dense_after) return false;
  return kind != explain_kind::dense_first || n > plan::ellr_max_vectors;
}

/// Prints one block: its header, then explain's text (or the error it raised).
template <class Explain>
void explain_block(const std::string& what, Explain&& explain_now) {
  std::printf("--- %s\n", what.c_str());
  try {
    std::printf("%s", explain_now().c_str());
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
  }
  std::fflush(stdout);
}

/// The dump of one matrix: its header line, then for each block explain_block(name, [&] {
/// return plan(kind, n); }), where `plan` returns the block's text; A*A and A*transpose(A)
/// are skipped past `max_products` element products.
template <class T, class Plan>
void explain_matrix(const std::string& name, const std::string& family, const csr<T, cpu>& host,
                    const std::vector<index_t>& widths, double max_products, Plan&& plan) {
  std::printf("=== %s (%s) %dx%d nnz %lld %s\n", name.c_str(), family.c_str(), host.rows(),
              host.cols(), static_cast<long long>(host.nnz()),
              std::is_same_v<T, float> ? "fp32" : "fp64");
  auto block = [&](const std::string& what, explain_kind kind, index_t n) {
    explain_block(what, [&] { return plan(kind, n); });
  };
  block("A*x (first)", explain_kind::vector_first, 1);
  block("A*x (after one product)", explain_kind::vector_after, 1);
  block("transpose(A)*x", explain_kind::transposed_vector, 1);
  for (const index_t n : widths) {
    const std::string what = "A*B, B " + std::to_string(n) + " columns row-major";
    block(what + " (first)", explain_kind::dense_first, n);
    block(what + " (after one product)", explain_kind::dense_after, n);
  }
  block("A*B, B 32 columns col-major", explain_kind::dense_col_major, 32);
  block("transpose(A)*B, B 32 columns row-major", explain_kind::transposed_dense, 32);
  if (host.rows() == host.cols()) {
    if (product_count(host, host) <= max_products)
      block("A*A", explain_kind::square, 0);
    else
      std::printf("--- A*A\nskipped: more than --max-products products\n");
  }
  if (products_with_transpose(host) <= max_products)
    block("A*transpose(A)", explain_kind::with_transpose, 0);
  else
    std::printf("--- A*transpose(A)\nskipped: more than --max-products products\n");
}

}  // namespace spade::bench
