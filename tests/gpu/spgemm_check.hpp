// Shared checks of sparse × sparse results against Eigen (hash_spgemm and tiled_spgemm suites).
#pragma once

#include <doctest/doctest.h>

#include <Eigen/SparseCore>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <spade/spade.hpp>

namespace spade::testing {

using sparse_d = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

template <class T>
sparse_d widen(const csr<T, cpu>& a, bool magnitude = false) {
  sparse_d s(a.rows(), a.cols());
  std::vector<Eigen::Triplet<double>> entries;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const double v = static_cast<double>(a.values()[k]);
      entries.emplace_back(i, a.col_idx()[k], magnitude ? std::abs(v) : v);
    }
  s.setFromTriplets(entries.begin(), entries.end());
  return s;
}

// Fills `bytes` of the pool with all-ones bits and gives them back, so C's arrays most likely
// come from them: an entry a kernel forgets to write shows as NaN or column -1.
inline void poison_pool(std::size_t bytes) {
  if (bytes == 0) return;
  const device_buffer<unsigned char> poison(std::vector<unsigned char>(bytes, 0xff));
}

// `got` against alpha·A·B in double by Eigen: the same pattern (Eigen's unpruned one: every
// position some product reaches, explicit zeros included), rows sorted, each value within
// ((terms + 2)·ε(T) + relative)·(|alpha|·|A|·|B|) of the exact one, where terms is the row's
// length in A (a sum's rounding) and `relative` an arithmetic's own error (0: T's).
template <class T>
void check_product(const std::string& what, const csr<T, cpu>& got, const csr<T, cpu>& a,
                   const csr<T, cpu>& b, double alpha = 1.0, double relative = 0.0) {
  CAPTURE(what);
  const sparse_d want = sparse_d(alpha * (widen(a) * widen(b))).pruned(0.0, 0.0);
  // The pattern comes from |A|·|B| (no cancellation there), the values from A·B.
  const sparse_d magnitude = sparse_d(widen(a, true) * widen(b, true));
  REQUIRE(got.rows() == a.rows());
  REQUIRE(got.cols() == b.cols());
  CAPTURE(got.nnz());
  CAPTURE(magnitude.nonZeros());
  std::vector<index_t> terms(static_cast<std::size_t>(a.rows()), 0);
  for (index_t i = 0; i < a.rows(); ++i)
    terms[i] = a.row_ptr()[i + 1] - a.row_ptr()[i];
  const double eps = std::numeric_limits<T>::epsilon();
  std::size_t wrong_pattern = 0;
  std::size_t wrong_value = 0;
  struct {
    index_t row = 0, col = 0;
    double got = 0, exact = 0, magnitude = 0, bound = 0, ratio = 0;
  } worst;
  REQUIRE(got.nnz() == magnitude.nonZeros());
  for (index_t i = 0; i < a.rows(); ++i) {
    sparse_d::InnerIterator m(magnitude, i);
    sparse_d::InnerIterator w(want, i);
    for (index_t k = got.row_ptr()[i]; k < got.row_ptr()[i + 1]; ++k, ++m) {
      if (!m || m.col() != got.col_idx()[k]) {
        ++wrong_pattern;
        break;
      }
      while (w && w.col() < m.col())
        ++w;
      const double exact = (w && w.col() == m.col()) ? w.value() : 0.0;
      const double bound = ((terms[i] + 2) * eps + relative) * std::abs(alpha) * m.value() +
                           std::numeric_limits<T>::min();
      const double error = std::abs(static_cast<double>(got.values()[k]) - exact);
      if (!(error <= bound)) {
        // The worst offender, relative to its bound, is printed below to tell a wrong
        // arithmetic from a bound that is too tight.
        if (wrong_value++ == 0 || !(error / bound <= worst.ratio))
          worst = {i,     got.col_idx()[k], static_cast<double>(got.values()[k]), exact, m.value(),
                   bound, error / bound};
      }
    }
    if (m) ++wrong_pattern;
  }
  CHECK(wrong_pattern == 0u);
  if (wrong_value > 0)
    MESSAGE(what << ": worst value at (" << worst.row << ", " << worst.col << "): got " << worst.got
                 << ", exact " << worst.exact << ", |A|.|B| " << worst.magnitude << ", bound "
                 << worst.bound << " (error " << worst.ratio << " x the bound)");
  CHECK(wrong_value == 0u);
}

template <class T>
csr<T, cpu> transposed(const csr<T, cpu>& a) {
  return spade::from_eigen(
      Eigen::SparseMatrix<T, Eigen::RowMajor, int>(spade::to_eigen(a).transpose()));
}

}  // namespace spade::testing
