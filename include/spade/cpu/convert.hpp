// Format conversions between csr, coo and dense on the host (the reference for the GPU ones).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"

namespace spade::host {

/// csr → coo, entries in row-major order. O(nnz).
template <scalar T>
coo<T, cpu> csr_to_coo(const csr<T, cpu>& a) {
  std::vector<index_t> row_idx(static_cast<std::size_t>(a.nnz()));
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      row_idx[k] = i;
  return coo<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_idx), a.col_idx(), a.values());
}

/// coo → csr: a stable counting sort by row, then each row sorted by column with repeated
/// positions summed in stored order. O(nnz log(max row length)), deterministic.
template <scalar T>
csr<T, cpu> coo_to_csr(const coo<T, cpu>& a) {
  const std::size_t nnz = static_cast<std::size_t>(a.nnz());
  std::vector<index_t> row_ptr(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (index_t r : a.row_idx())
    ++row_ptr[static_cast<std::size_t>(r) + 1];
  for (std::size_t i = 1; i < row_ptr.size(); ++i)
    row_ptr[i] += row_ptr[i - 1];
  std::vector<index_t> next(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<index_t> col_idx(nnz);
  std::vector<T> values(nnz);
  for (std::size_t k = 0; k < nnz; ++k) {
    const index_t slot = next[static_cast<std::size_t>(a.row_idx()[k])]++;
    col_idx[slot] = a.col_idx()[k];
    values[slot] = a.values()[k];
  }
  detail::sort_and_sum_rows(row_ptr, col_idx, values);
  return csr<T, cpu>(unchecked, a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// csr → dense in the requested layout; explicitly stored zeros become plain zeros.
template <layout Layout, scalar T>
dense<T, cpu, Layout> csr_to_dense(const csr<T, cpu>& a) {
  dense<T, cpu, Layout> d(a.rows(), a.cols());
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      d(i, a.col_idx()[k]) = a.values()[k];
  return d;
}

/// dense → csr keeping every entry that compares unequal to zero (NaN is kept, -0.0 dropped).
/// Throws invalid_matrix when the nonzeros exceed the 32-bit index type.
template <scalar T, layout Layout>
csr<T, cpu> dense_to_csr(const dense<T, cpu, Layout>& d) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(d.rows()) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  std::size_t count = 0;
  for (index_t i = 0; i < d.rows(); ++i) {
    for (index_t j = 0; j < d.cols(); ++j) {
      const T v = d(i, j);
      if (v != T(0)) {
        col_idx.push_back(j);
        values.push_back(v);
      }
    }
    count = col_idx.size();
    if (count > static_cast<std::size_t>(std::numeric_limits<index_t>::max()))
      throw invalid_matrix("dense_to_csr: more than 2^31-1 nonzeros do not fit 32-bit indices");
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(count);
  }
  return csr<T, cpu>(unchecked, d.rows(), d.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// The same matrix in the other layout. O(rows·cols).
template <layout To, scalar T, layout From>
dense<T, cpu, To> relayout(const dense<T, cpu, From>& d) {
  if constexpr (std::is_same_v<To, From>) {
    return d;
  } else {
    dense<T, cpu, To> out(d.rows(), d.cols());
    for (index_t j = 0; j < d.cols(); ++j)
      for (index_t i = 0; i < d.rows(); ++i)
        out(i, j) = d(i, j);
    return out;
  }
}

// The float and double instantiations, compiled once into the library (see
// SPADE_HOST_INSTANCES in cpu/evaluate.hpp for why); SPADE_HEADER_ONLY turns this off.
#define SPADE_HOST_CONVERT_INSTANCES(PREFIX, T)                                            \
  PREFIX template coo<T, cpu> csr_to_coo<T>(const csr<T, cpu>&);                           \
  PREFIX template csr<T, cpu> coo_to_csr<T>(const coo<T, cpu>&);                           \
  PREFIX template dense<T, cpu, row_major> csr_to_dense<row_major, T>(const csr<T, cpu>&); \
  PREFIX template dense<T, cpu, col_major> csr_to_dense<col_major, T>(const csr<T, cpu>&); \
  PREFIX template csr<T, cpu> dense_to_csr<T, row_major>(const dense<T, cpu, row_major>&); \
  PREFIX template csr<T, cpu> dense_to_csr<T, col_major>(const dense<T, cpu, col_major>&); \
  PREFIX template dense<T, cpu, col_major> relayout<col_major, T, row_major>(              \
      const dense<T, cpu, row_major>&);                                                    \
  PREFIX template dense<T, cpu, row_major> relayout<row_major, T, col_major>(              \
      const dense<T, cpu, col_major>&);
#ifndef SPADE_HEADER_ONLY
SPADE_HOST_CONVERT_INSTANCES(extern, float)
SPADE_HOST_CONVERT_INSTANCES(extern, double)
#endif

}  // namespace spade::host
