// Element-wise references written with std:: functions element by element (not with Eigen's
// array expressions, which the cpu back end uses), shared by the cpu and gpu suites.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <spade/spade.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace spade::testing {

/// rows × cols values uniform in [lo, hi), in row-major order.
template <class T>
std::vector<T> uniform_values(std::uint64_t seed, std::size_t count, double lo, double hi) {
  splitmix64 rng{seed};
  std::vector<T> v(count);
  for (auto& x : v)
    x = static_cast<T>(lo + (hi - lo) * rng.uniform());
  return v;
}

/// A cpu dense matrix whose element (i, j) is rowwise[i * cols + j], stored in Layout.
template <class T, class Layout>
dense<T, cpu, Layout> dense_from_rowwise(index_t rows, index_t cols,
                                         const std::vector<T>& rowwise) {
  std::vector<T> stored(rowwise.size());
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) {
      const std::size_t at = std::is_same_v<Layout, row_major>
                                 ? static_cast<std::size_t>(i) * cols + j
                                 : static_cast<std::size_t>(j) * rows + i;
      stored[at] = rowwise[static_cast<std::size_t>(i) * cols + j];
    }
  return dense<T, cpu, Layout>(rows, cols, std::move(stored));
}

/// Element (i, j) of a cpu dense matrix of either layout, row by row.
template <class T, class Layout>
std::vector<T> rowwise_of(const dense<T, cpu, Layout>& d) {
  std::vector<T> out;
  out.reserve(d.element_count());
  for (index_t i = 0; i < d.rows(); ++i)
    for (index_t j = 0; j < d.cols(); ++j)
      out.push_back(d.values()[d.offset(i, j)]);
  return out;
}

/// True when got and want agree within `ulps` units in the last place of T, relative to the
/// larger magnitude and at least to 1 (the inputs are of order 1, so a cancellation near 0
/// keeps the error of its operands), NaN matching NaN and infinities matching in sign.
template <class T>
bool close_to(T got, double want, double ulps) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return std::isinf(got) && (got > 0) == (want > 0);
  const double eps = std::numeric_limits<T>::epsilon();
  const double scale = std::max({std::fabs(want), std::fabs(static_cast<double>(got)), 1.0});
  return std::fabs(static_cast<double>(got) - want) <= ulps * eps * scale;
}

/// The number of elements where got differs from want (close_to with `ulps`).
template <class T>
std::size_t mismatches(const std::vector<T>& got, const std::vector<double>& want, double ulps) {
  if (got.size() != want.size()) return std::max<std::size_t>(got.size(), want.size()) + 1;
  std::size_t bad = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    if (!close_to(got[k], want[k], ulps)) ++bad;
  return bad;
}

/// NaN-propagating max and min (the rule Spade's cwise_max / cwise_min / reductions follow).
inline double max_nan(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<double>::quiet_NaN()
                                          : (a < b ? b : a);
}
inline double min_nan(double a, double b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<double>::quiet_NaN()
                                          : (b < a ? b : a);
}

}  // namespace spade::testing
