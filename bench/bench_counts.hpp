// Element products of sparse × sparse products, counted on the host (no device needed).
#pragma once

#include <cstddef>
#include <vector>

#include <spade/spade.hpp>

namespace spade::bench {

/// Σ over A's entries (i, k) of nnz(B's row k): the multiply-adds of A·B (GFLOP/s = 2 × this).
template <class T>
double product_count(const csr<T, cpu>& a, const csr<T, cpu>& b) {
  double products = 0;
  for (index_t k = 0; k < a.nnz(); ++k) {
    const index_t m = a.col_idx()[k];
    products += static_cast<double>(b.row_ptr()[m + 1] - b.row_ptr()[m]);
  }
  return products;
}

/// Products of A * transpose(A): each column's count squared, summed.
template <class T>
double products_with_transpose(const csr<T, cpu>& a) {
  std::vector<double> column(static_cast<std::size_t>(a.cols()), 0.0);
  for (const index_t c : a.col_idx())
    column[static_cast<std::size_t>(c)] += 1.0;
  double total = 0;
  for (const double n : column)
    total += n * n;
  return total;
}

}  // namespace spade::bench
