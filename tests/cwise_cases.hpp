// The element-wise cases both spaces run (tests/cpu/test_cwise.cpp, tests/gpu/test_gpu_cwise.cpp):
// every function and operator against std:: element by element, in double and float.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <spade/spade.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cwise_check.hpp"
#include "test_support.hpp"

namespace spade::testing {

template <class Space, class X>
auto in_space(const X& x) {
  if constexpr (std::is_same_v<Space, gpu>)
    return to_gpu(x);
  else
    return x;
}

template <class X>
auto on_host(const X& x) {
  if constexpr (std::is_same_v<typename X::space_type, gpu>)
    return to_cpu(x);
  else
    return x;
}

/// Runs every unary function, binary operation and scalar operator on a rows × cols operand a
/// (values in [-2, 2)) and b (in [0.5, 2)), a stored row-major and b in `LB`, result col-major
/// (so the mixed layouts are exercised), against std:: in double.
template <class T, class Space, class LB>
void check_every_operation(index_t rows, index_t cols, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(rows);
  CAPTURE(cols);
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const auto av = uniform_values<T>(seed, n, -2, 2);
  const auto bv = uniform_values<T>(seed + 1, n, 0.5, 2);
  const auto a = in_space<Space>(dense_from_rowwise<T, row_major>(rows, cols, av));
  const auto b = in_space<Space>(dense_from_rowwise<T, LB>(rows, cols, bv));
  const T s = T(0.75);

  using result_type = dense<T, Space, col_major>;
  const auto check = [&](std::string what, const result_type& got,
                         const std::function<double(double, double)>& f, double ulps) {
    CAPTURE(what);
    std::vector<double> want(n);
    for (std::size_t k = 0; k < n; ++k)
      want[k] = f(av[k], bv[k]);
    CHECK(mismatches(rowwise_of(on_host(got)), want, ulps) == 0u);
  };
  check(
      "abs", spade::abs(a), [](double x, double) { return std::fabs(x); }, 0);
  check(
      "sqrt", spade::sqrt(b), [](double, double y) { return std::sqrt(y); }, 2);
  check(
      "square", spade::square(a), [](double x, double) { return x * x; }, 2);
  check(
      "exp", spade::exp(a), [](double x, double) { return std::exp(x); }, 4);
  check(
      "log", spade::log(b), [](double, double y) { return std::log(y); }, 4);
  check(
      "sin", spade::sin(a), [](double x, double) { return std::sin(x); }, 4);
  check(
      "cos", spade::cos(a), [](double x, double) { return std::cos(x); }, 4);
  check(
      "tanh", spade::tanh(a), [](double x, double) { return std::tanh(x); }, 4);
  check(
      "inverse", spade::inverse(b), [](double, double y) { return 1 / y; }, 2);
  check(
      "pow", spade::pow(b, T(2.5)), [](double, double y) { return std::pow(y, 2.5); }, 8);
  check(
      "a + s", a + s, [s](double x, double) { return x + s; }, 2);
  check(
      "s + a", s + a, [s](double x, double) { return s + x; }, 2);
  check(
      "a - s", a - s, [s](double x, double) { return x - s; }, 2);
  check(
      "s - a", s - a, [s](double x, double) { return s - x; }, 2);
  check(
      "a / s", a / s, [s](double x, double) { return x / s; }, 2);
  check(
      "-a", -a, [](double x, double) { return -x; }, 0);
  check(
      "cwise_product", spade::cwise_product(a, b), [](double x, double y) { return x * y; }, 2);
  check(
      "cwise_quotient", spade::cwise_quotient(a, b), [](double x, double y) { return x / y; }, 2);
  check(
      "cwise_max", spade::cwise_max(a, b), [](double x, double y) { return max_nan(x, y); }, 0);
  check(
      "cwise_min", spade::cwise_min(a, b), [](double x, double y) { return min_nan(x, y); }, 0);
  check(
      "cwise_max scalar", spade::cwise_max(a, s), [s](double x, double) { return max_nan(x, s); },
      0);
  check(
      "cwise_min scalar", spade::cwise_min(a, s), [s](double x, double) { return min_nan(x, s); },
      0);
  check(
      "cwise_product scalar", spade::cwise_product(a, s), [s](double x, double) { return s * x; },
      2);
  check(
      "cwise_quotient scalar", spade::cwise_quotient(a, s), [s](double x, double) { return x / s; },
      2);
  // One fused pass of some depth: sums, differences, scalings and functions together.
  check(
      "composite", T(2) * spade::exp(-spade::square(a)) + spade::cwise_product(a, b) - a / s + 1,
      [s](double x, double y) { return 2 * std::exp(-x * x) + x * y - x / s + 1; }, 16);
  check(
      "cast round trip", spade::cast<T>(spade::cast<double>(a) * 2.0),
      [](double x, double) { return 2 * x; }, 1);
}

/// NaN and ±Inf go through every function as std:: takes them; max and min propagate NaN.
template <class T, class Space>
void check_nan_and_inf() {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const std::vector<T> xs{nan, inf, -inf, 0, T(-0.0), 1, -1, T(2.5)};
  const std::vector<T> ys{1, nan, 2, inf, -inf, nan, 0, T(-2.5)};
  const auto x = in_space<Space>(vector<T, cpu>(xs));
  const auto y = in_space<Space>(vector<T, cpu>(ys));
  using V = vector<T, Space>;
  const auto check = [&](std::string what, const V& got, double (*f)(double, double)) {
    CAPTURE(what);
    std::vector<double> want(xs.size());
    for (std::size_t k = 0; k < xs.size(); ++k)
      want[k] = f(xs[k], ys[k]);
    const auto host = on_host(got).values();
    CHECK(mismatches(std::vector<T>(host.begin(), host.end()), want, 4) == 0u);
  };
  check("exp", spade::exp(x), [](double a, double) { return std::exp(a); });
  check("log", spade::log(x), [](double a, double) { return std::log(a); });
  check("sqrt", spade::sqrt(x), [](double a, double) { return std::sqrt(a); });
  check("inverse", spade::inverse(x), [](double a, double) { return 1 / a; });
  check("tanh", spade::tanh(x), [](double a, double) { return std::tanh(a); });
  check("cwise_max", spade::cwise_max(x, y), [](double a, double b) { return max_nan(a, b); });
  check("cwise_min", spade::cwise_min(x, y), [](double a, double b) { return min_nan(a, b); });
  check("product", spade::cwise_product(x, y), [](double a, double b) { return a * b; });
  CHECK(std::isnan(spade::max_coeff(x)));
  CHECK(std::isnan(spade::sum(x)));
}

/// An expression that reads its destination writes it in place: x = x + y, x = x ∘ x, D = exp(D).
template <class T, class Space>
void check_aliasing(std::uint64_t seed) {
  CAPTURE(seed);
  const auto xv = uniform_values<T>(seed, 1001, -2, 2);
  const auto yv = uniform_values<T>(seed + 7, 1001, -2, 2);
  auto x = in_space<Space>(vector<T, cpu>(xv));
  const auto y = in_space<Space>(vector<T, cpu>(yv));
  x = spade::exp(x) + y;
  x = spade::cwise_product(x, x);
  std::vector<double> want(xv.size());
  for (std::size_t k = 0; k < xv.size(); ++k) {
    const double once = static_cast<double>(static_cast<T>(std::exp(double(xv[k])) + yv[k]));
    want[k] = once * once;
  }
  const auto host = on_host(x).values();
  CHECK(mismatches(std::vector<T>(host.begin(), host.end()), want, 8) == 0u);

  auto d =
      in_space<Space>(dense_from_rowwise<T, col_major>(3, 5, uniform_values<T>(seed, 15, -1, 1)));
  const auto before = rowwise_of(on_host(d));
  d = spade::abs(d) + spade::square(d);
  std::vector<double> dwant(before.size());
  for (std::size_t k = 0; k < before.size(); ++k)
    dwant[k] = std::fabs(double(before[k])) + double(before[k]) * before[k];
  CHECK(mismatches(rowwise_of(on_host(d)), dwant, 4) == 0u);
}

/// The reductions against a long double sum, within n·ε of Σ|x| (the bound of any summation
/// order), and bit-identical on a second run.
template <class T, class Space>
void check_reductions(std::size_t n, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(n);
  const auto xv = uniform_values<T>(seed, n, -2, 2);
  const auto yv = uniform_values<T>(seed + 3, n, -2, 2);
  const auto x = in_space<Space>(vector<T, cpu>(xv));
  const auto y = in_space<Space>(vector<T, cpu>(yv));
  long double total = 0, magnitude = 0, squares = 0, products = 0, product_magnitude = 0;
  double biggest = -std::numeric_limits<double>::infinity(), smallest = -biggest;
  for (std::size_t k = 0; k < n; ++k) {
    const double e = std::exp(double(xv[k]) / 4) - yv[k];  // exp(x/4) - y, as below
    total += e;
    magnitude += std::exp(double(xv[k]) / 4) + std::fabs(double(yv[k]));  // its terms' sizes
    squares += e * e;
    products += static_cast<long double>(xv[k]) * yv[k];
    product_magnitude += std::fabs(double(xv[k]) * yv[k]);
    biggest = std::max(biggest, double(xv[k]));
    smallest = std::min(smallest, double(xv[k]));
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const double bound = (double(n) + 8) * eps;
  const auto e = spade::exp(x / T(4)) - y;
  const T got_sum = spade::sum(e);
  CHECK(std::fabs(double(got_sum) - double(total)) <= bound * double(magnitude) + eps);
  CHECK(std::fabs(double(spade::squared_norm(e)) - double(squares)) <=
        bound * double(squares) + eps);
  CHECK(std::fabs(double(spade::norm(e)) - std::sqrt(double(squares))) <=
        bound * std::sqrt(double(squares)) + eps);
  CHECK(std::fabs(double(spade::dot(spade::cwise_max(x, x), y)) - double(products)) <=
        bound * double(product_magnitude) + eps);
  if (n > 0) {
    CHECK(double(spade::max_coeff(x)) == biggest);
    CHECK(double(spade::min_coeff(x)) == smallest);
    CHECK(std::fabs(double(spade::mean(e)) - double(total / n)) <=
          bound * double(magnitude / n) + eps);
  } else {
    CHECK(got_sum == T(0));
    CHECK_THROWS_AS(spade::max_coeff(x), dimension_mismatch);
    CHECK_THROWS_AS(spade::mean(x), dimension_mismatch);
  }
  // Deterministic: the same bits again.
  const T again = spade::sum(e);
  CHECK(std::memcmp(&again, &got_sum, sizeof(T)) == 0);
}

/// A random csr's parts: each entry of a row stored with probability `density` (diagonal ones
/// with `diagonal_density` when that is given), values uniform in [-2, 2); rows i with
/// i % period == offset stay empty.
template <class T>
struct csr_parts {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
};
template <class T>
csr_parts<T> random_csr_parts(index_t rows, index_t cols, std::uint64_t seed, double density,
                              index_t period, index_t offset, double diagonal_density = -1) {
  splitmix64 rng{seed};
  csr_parts<T> p;
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < cols; ++j)
      if (i % period != offset &&
          rng.chance(i == j && diagonal_density >= 0 ? diagonal_density : density)) {
        p.col_idx.push_back(j);
        p.values.push_back(static_cast<T>(rng.uniform() * 4 - 2));
      }
    p.row_ptr.push_back(static_cast<index_t>(p.col_idx.size()));
  }
  return p;
}

/// Unary maps with f(0) = 0 on a sparse operand keep its pattern and map its stored values.
template <class T, class Space>
void check_sparse_values(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 40, ncols = 33;
  const auto [row_ptr, cols, values] = random_csr_parts<T>(rows, ncols, seed, 0.2, 7, 3);
  const auto a = in_space<Space>(csr<T, cpu>(rows, ncols, row_ptr, cols, values));
  const auto check = [&](std::string what, const csr<T, Space>& got, double (*f)(double)) {
    CAPTURE(what);
    const auto h = on_host(got);
    CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == row_ptr);
    CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == cols);
    std::vector<double> want(values.size());
    for (std::size_t k = 0; k < values.size(); ++k)
      want[k] = f(values[k]);
    CHECK(mismatches(std::vector<T>(h.values().begin(), h.values().end()), want, 8) == 0u);
  };
  check("abs", spade::abs(a), [](double v) { return std::fabs(v); });
  check("sqrt(abs)", spade::sqrt(spade::abs(a)), [](double v) { return std::sqrt(std::fabs(v)); });
  check("square", spade::square(a), [](double v) { return v * v; });
  check("sin", spade::sin(a), [](double v) { return std::sin(v); });
  check("tanh of -2a", spade::tanh(T(-2) * a), [](double v) { return std::tanh(-2 * v); });
  check("pow", spade::pow(spade::abs(a), T(3)),
        [](double v) { return std::pow(std::fabs(v), 3.0); });
  check("cwise_max(A, 0)", spade::cwise_max(a, T(0)), [](double v) { return std::max(v, 0.0); });
  check("A / 4", a / T(4), [](double v) { return v / 4; });
  using sparse_type = csr<T, Space>;
  CHECK_THROWS_AS(sparse_type(spade::pow(a, T(-1))), error);
  CHECK_THROWS_AS(sparse_type(spade::cwise_max(a, T(1))), error);
  long double stored = 0;
  for (T v : values)
    stored += std::fabs(double(v));
  CHECK(std::fabs(double(spade::sum(spade::abs(a))) - double(stored)) <=
        values.size() * std::numeric_limits<T>::epsilon() * double(stored));
}

/// Vectors of a rows × cols matrix read from row-major values: its row sums, column sums and
/// diagonal under `f`, in long double, with each sum's Σ size(v) for the error bound. `size`
/// bounds the magnitude of f's intermediate terms (|f| when f has none): the kernels round
/// each term, so an f that cancels (|v| - v²/2 near v = 2) errs relative to its terms, not to
/// its result.
struct axis_reference {
  std::vector<double> rows, cols, diagonal, row_magnitude, col_magnitude;
};
template <class T>
axis_reference axis_sums_of(index_t rows, index_t cols, const std::vector<T>& rowwise,
                            const std::vector<bool>& stored, double (*f)(double),
                            double (*size)(double) = nullptr) {
  std::vector<long double> r(static_cast<std::size_t>(rows)), c(static_cast<std::size_t>(cols)),
      rm(r.size()), cm(c.size());
  axis_reference out;
  out.diagonal.assign(static_cast<std::size_t>(std::min(rows, cols)), 0.0);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) {
      const std::size_t k = static_cast<std::size_t>(i) * cols + j;
      if (!stored.empty() && !stored[k]) continue;
      const double v = f(rowwise[k]);
      r[i] += v;
      c[j] += v;
      const double bound = size ? size(rowwise[k]) : std::fabs(v);
      rm[i] += bound;
      cm[j] += bound;
      if (i == j) out.diagonal[i] = v;
    }
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.rows.push_back(double(r[i]));
    out.row_magnitude.push_back(double(rm[i]));
  }
  for (std::size_t j = 0; j < c.size(); ++j) {
    out.cols.push_back(double(c[j]));
    out.col_magnitude.push_back(double(cm[j]));
  }
  return out;
}

/// got[i] within (terms + 8)·ε·magnitude[i] of want[i], for every i.
template <class T>
std::size_t sum_mismatches(const std::vector<T>& got, const std::vector<double>& want,
                           const std::vector<double>& magnitude, index_t terms) {
  if (got.size() != want.size()) return got.size() + want.size() + 1;
  std::size_t bad = 0;
  const double eps = std::numeric_limits<T>::epsilon();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= (terms + 8) * eps * magnitude[i] + 1e-300)) ++bad;
  return bad;
}

template <class V>
auto host_values(const V& v) {
  const auto h = on_host(v).values();
  return std::vector<typename V::value_type>(h.begin(), h.end());
}

/// row_sums, col_sums and diagonal of dense matrices (plain and element-wise trees, both
/// layouts, empty ones) and of a csr with empty rows.
template <class T, class Space, class Layout>
void check_vector_reductions(index_t rows, index_t cols, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(rows);
  CAPTURE(cols);
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const auto av = uniform_values<T>(seed, n, -2, 2);
  const auto a = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, av));
  const auto plain = axis_sums_of<T>(rows, cols, av, {}, [](double v) { return v; });
  const auto mapped = axis_sums_of<T>(
      rows, cols, av, {}, [](double v) { return std::fabs(v) - 0.5 * v * v; },
      [](double v) { return std::fabs(v) + 0.5 * v * v; });
  using V = vector<T, Space>;
  CHECK(sum_mismatches(host_values(V(spade::row_sums(a))), plain.rows, plain.row_magnitude, cols) ==
        0u);
  CHECK(sum_mismatches(host_values(V(spade::col_sums(a))), plain.cols, plain.col_magnitude, rows) ==
        0u);
  const auto e = spade::abs(a) - spade::square(a) * T(0.5);
  CHECK(sum_mismatches(host_values(V(spade::row_sums(e))), mapped.rows, mapped.row_magnitude,
                       cols) == 0u);
  CHECK(sum_mismatches(host_values(V(spade::col_sums(e))), mapped.cols, mapped.col_magnitude,
                       rows) == 0u);
  CHECK(mismatches(host_values(V(spade::diagonal(a))), plain.diagonal, 0) == 0u);
  CHECK(mismatches(host_values(V(spade::diagonal(e))), mapped.diagonal, 4) == 0u);
  // The same bits on a second run (fixed orders, no atomics).
  CHECK(host_values(V(spade::col_sums(e))) == host_values(V(spade::col_sums(e))));
}

template <class T, class Space>
void check_sparse_vector_reductions(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 45, cols = 37;
  const auto [row_ptr, col_idx, values] = random_csr_parts<T>(rows, cols, seed, 0.25, 5, 2, 0.7);
  std::vector<T> dense_values(static_cast<std::size_t>(rows) * cols, T(0));
  std::vector<bool> stored(dense_values.size(), false);
  for (index_t i = 0; i < rows; ++i)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      dense_values[static_cast<std::size_t>(i) * cols + col_idx[k]] = values[k];
      stored[static_cast<std::size_t>(i) * cols + col_idx[k]] = true;
    }
  const auto a = in_space<Space>(csr<T, cpu>(rows, cols, row_ptr, col_idx, values));
  const auto plain = axis_sums_of<T>(rows, cols, dense_values, stored, [](double v) { return v; });
  const auto mapped = axis_sums_of<T>(rows, cols, dense_values, stored,
                                      [](double v) { return std::sqrt(std::fabs(v)); });
  using V = vector<T, Space>;
  CHECK(sum_mismatches(host_values(V(spade::row_sums(a))), plain.rows, plain.row_magnitude, cols) ==
        0u);
  CHECK(sum_mismatches(host_values(V(spade::col_sums(a))), plain.cols, plain.col_magnitude, rows) ==
        0u);
  CHECK(sum_mismatches(host_values(V(spade::row_sums(spade::sqrt(spade::abs(a))))), mapped.rows,
                       mapped.row_magnitude, cols) == 0u);
  CHECK(sum_mismatches(host_values(V(spade::col_sums(spade::sqrt(spade::abs(a))))), mapped.cols,
                       mapped.col_magnitude, rows) == 0u);
  CHECK(mismatches(host_values(V(spade::diagonal(a))), plain.diagonal, 0) == 0u);
  CHECK(mismatches(host_values(V(spade::diagonal(spade::sqrt(spade::abs(a))))), mapped.diagonal,
                   2) == 0u);
}

/// as_diagonal(d) * A scales rows, A * as_diagonal(e) columns (dense trees in either layout, and
/// a csr whose pattern stays), as_diagonal(d) * x is element-wise, as_diagonal(v) alone a csr.
template <class T, class Space, class Layout>
void check_diagonal_scaling(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 31, cols = 33;
  const auto av = uniform_values<T>(seed, static_cast<std::size_t>(rows) * cols, -2, 2);
  const auto dv = uniform_values<T>(seed + 1, rows, -2, 2);
  const auto ev = uniform_values<T>(seed + 2, cols, -2, 2);
  const auto a = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, av));
  const auto d = in_space<Space>(vector<T, cpu>(dv));
  const auto e = in_space<Space>(vector<T, cpu>(ev));
  std::vector<double> want(av.size()), want_cols(av.size());
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) {
      const std::size_t k = static_cast<std::size_t>(i) * cols + j;
      want[k] = double(dv[i]) * std::fabs(double(av[k])) + av[k];
      want_cols[k] = double(av[k]) * ev[j];
    }
  using R = dense<T, Space, row_major>;
  CHECK(mismatches(rowwise_of(on_host(R(spade::as_diagonal(d) * spade::abs(a) + a))), want, 4) ==
        0u);
  CHECK(mismatches(rowwise_of(on_host(R(a * spade::as_diagonal(e)))), want_cols, 1) == 0u);
  std::vector<double> want_x(dv.size());
  for (std::size_t i = 0; i < dv.size(); ++i)
    want_x[i] = double(dv[i]) * dv[i];
  CHECK(mismatches(host_values(vector<T, Space>(spade::as_diagonal(d) * d)), want_x, 1) == 0u);
  CHECK_THROWS_AS(R(spade::as_diagonal(e) * a), dimension_mismatch);

  // A csr keeps its pattern; row sums and sums of the scaled values read the same entries.
  const auto [row_ptr, col_idx, values] = random_csr_parts<T>(rows, cols, seed, 0.3, 4, 1);
  const auto s = in_space<Space>(csr<T, cpu>(rows, cols, row_ptr, col_idx, values));
  const csr<T, Space> scaled = spade::as_diagonal(d) * s * spade::as_diagonal(e);
  const auto h = on_host(scaled);
  CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == row_ptr);
  CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == col_idx);
  std::vector<double> want_values(values.size()), want_rows(rows, 0.0), row_magnitude(rows, 0.0);
  long double total = 0, magnitude = 0;
  for (index_t i = 0; i < rows; ++i)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      want_values[k] = double(dv[i]) * values[k] * ev[col_idx[k]];
      want_rows[i] += want_values[k];
      row_magnitude[i] += std::fabs(want_values[k]);
      total += want_values[k];
      magnitude += std::fabs(want_values[k]);
    }
  CHECK(mismatches(std::vector<T>(h.values().begin(), h.values().end()), want_values, 2) == 0u);
  CHECK(sum_mismatches(host_values(vector<T, Space>(
                           spade::row_sums(spade::as_diagonal(d) * s * spade::as_diagonal(e)))),
                       want_rows, row_magnitude, cols + 2) == 0u);
  CHECK(std::fabs(double(spade::sum(spade::as_diagonal(d) * s * spade::as_diagonal(e))) -
                  double(total)) <=
        (values.size() + 8) * std::numeric_limits<T>::epsilon() * double(magnitude));
  // as_diagonal(v) alone is the csr with v on its diagonal.
  const csr<T, Space> diag = spade::as_diagonal(d);
  const auto hd = on_host(diag);
  CHECK(hd.nnz() == rows);
  CHECK(mismatches(std::vector<T>(hd.values().begin(), hd.values().end()),
                   std::vector<double>(dv.begin(), dv.end()), 0) == 0u);
}

/// cwise_product of a csr and a dense matrix (either order, the dense one in Layout): the csr's
/// pattern, each value times the dense element at its position; row sums and sums of it.
template <class T, class Space, class Layout>
void check_masked_product(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 33, cols = 31;
  const auto [row_ptr, col_idx, values] = random_csr_parts<T>(rows, cols, seed, 0.3, 6, 4);
  const auto bv = uniform_values<T>(seed + 9, static_cast<std::size_t>(rows) * cols, -2, 2);
  const auto a = in_space<Space>(csr<T, cpu>(rows, cols, row_ptr, col_idx, values));
  const auto b = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, bv));
  std::vector<double> want(values.size()), want_rows(rows, 0.0), magnitude(rows, 0.0);
  for (index_t i = 0; i < rows; ++i)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      want[k] = std::fabs(double(values[k])) * bv[static_cast<std::size_t>(i) * cols + col_idx[k]];
      want_rows[i] += want[k];
      magnitude[i] += std::fabs(want[k]);
    }
  for (int order = 0; order < 2; ++order) {
    CAPTURE(order);
    const csr<T, Space> got = order == 0 ? csr<T, Space>(spade::cwise_product(spade::abs(a), b))
                                         : csr<T, Space>(spade::cwise_product(b, spade::abs(a)));
    const auto h = on_host(got);
    CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == row_ptr);
    CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == col_idx);
    CHECK(mismatches(std::vector<T>(h.values().begin(), h.values().end()), want, 1) == 0u);
  }
  CHECK(sum_mismatches(
            host_values(vector<T, Space>(spade::row_sums(spade::cwise_product(a, b) * T(-1)))),
            [&] {
              std::vector<double> w(want_rows.size());
              for (index_t i = 0; i < rows; ++i) {
                w[i] = 0;
                for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
                  w[i] -= double(values[k]) * bv[static_cast<std::size_t>(i) * cols + col_idx[k]];
              }
              return w;
            }(),
            magnitude, cols) == 0u);
  long double total = 0, size = 0;
  for (double v : want) {
    total += v;
    size += std::fabs(v);
  }
  CHECK(std::fabs(double(spade::sum(spade::cwise_product(spade::abs(a), b))) - double(total)) <=
        (values.size() + 8) * std::numeric_limits<T>::epsilon() * double(size));
  const auto wider = in_space<Space>(dense<T, cpu>(rows, cols + 1));
  CHECK_THROWS_AS(spade::cwise_product(a, wider), dimension_mismatch);
}

/// SDDMM of a default-constructed S (no rows, no row_ptr entries) and of an S without entries:
/// S's empty pattern back, nothing read.
template <class T, class Space>
void check_sddmm_of_empty() {
  const csr<T, Space> none;
  const auto x0 = in_space<Space>(dense<T, cpu>(0, 3));
  const csr<T, Space> r0 = spade::cwise_product(none, x0 * spade::transpose(x0));
  CHECK(r0.rows() == 0);
  CHECK(r0.nnz() == 0);
  const auto s = in_space<Space>(csr<T, cpu>(4, 5, {0, 0, 0, 0, 0}, {}, {}));
  const auto x = in_space<Space>(dense<T, cpu>::ones(4, 8));
  const auto y = in_space<Space>(dense<T, cpu>::ones(5, 8));
  const csr<T, Space> r = spade::cwise_product(s, x * spade::transpose(y));
  CHECK(r.rows() == 4);
  CHECK(r.cols() == 5);
  CHECK(r.nnz() == 0);
  CHECK(spade::sum(spade::cwise_product(s, x * spade::transpose(y))) == T(0));
}

/// SDDMM, cwise_product(S, X * transpose(Y)) with X rows × depth in LX and Y cols × depth in LY,
/// against a double sum per entry: S's pattern kept, each value within (depth + 2)·ε of its
/// terms' magnitudes; either operand order, scalings folded, a chain and reductions over it, the
/// same bits on a second run. `Forced` (a kernel tag, or void) evaluates through eval<Forced>.
template <class T, class Space, class LX, class LY, class Forced = void>
void check_sddmm(index_t rows, index_t cols, index_t depth, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(rows);
  CAPTURE(cols);
  CAPTURE(depth);
  const auto [row_ptr, col_idx, values] = random_csr_parts<T>(rows, cols, seed, 0.3, 5, 2);
  const auto xv = uniform_values<T>(seed + 1, static_cast<std::size_t>(rows) * depth, -2, 2);
  const auto yv = uniform_values<T>(seed + 2, static_cast<std::size_t>(cols) * depth, -2, 2);
  const auto S = in_space<Space>(csr<T, cpu>(rows, cols, row_ptr, col_idx, values));
  const auto X = in_space<Space>(dense_from_rowwise<T, LX>(rows, depth, xv));
  const auto Y = in_space<Space>(dense_from_rowwise<T, LY>(cols, depth, yv));
  std::vector<double> want(values.size()), size(values.size());
  for (index_t i = 0; i < rows; ++i)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      long double acc = 0, magnitude = 0;
      for (index_t t = 0; t < depth; ++t) {
        const long double term =
            static_cast<long double>(xv[static_cast<std::size_t>(i) * depth + t]) *
            yv[static_cast<std::size_t>(col_idx[k]) * depth + t];
        acc += term;
        magnitude += std::fabs(term);
      }
      want[k] = double(values[k] * acc);
      size[k] = double(std::fabs(values[k]) * magnitude);
    }
  const double eps = std::numeric_limits<T>::epsilon();
  const auto check = [&](std::string what, const csr<T, Space>& got, double factor,
                         bool absolute = false) {
    CAPTURE(what);
    const auto h = on_host(got);
    CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == row_ptr);
    CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == col_idx);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      const double g = double(h.values()[k]);
      const double w = absolute ? std::fabs(factor * want[k]) : factor * want[k];
      if (!(std::fabs(g - w) <= (depth + 2) * eps * std::fabs(factor) * size[k] + 1e-300)) ++wrong;
    }
    CHECK(wrong == 0u);
  };
  const auto run = [&](const auto& e) {
    if constexpr (std::is_void_v<Forced>)
      return csr<T, Space>(e);
    else
      return csr<T, Space>(spade::eval<Forced>(e));
  };
  const csr<T, Space> first = run(spade::cwise_product(S, X * spade::transpose(Y)));
  check("S o X*Y^T", first, 1);
  const csr<T, Space> again = run(spade::cwise_product(S, X * spade::transpose(Y)));
  const auto stored = [](const csr<T, Space>& m) {
    const auto h = on_host(m);
    return std::vector<T>(h.values().begin(), h.values().end());
  };
  CHECK(stored(again) == stored(first));
  // The same product as transpose(Xt) * Yt with Xt = Xᵀ and Yt = Yᵀ stored: op(A) transposed,
  // op(B) not (strided along k on both back ends).
  std::vector<T> xt(xv.size()), yt(yv.size());
  for (index_t i = 0; i < rows; ++i)
    for (index_t t = 0; t < depth; ++t)
      xt[static_cast<std::size_t>(t) * rows + i] = xv[static_cast<std::size_t>(i) * depth + t];
  for (index_t j = 0; j < cols; ++j)
    for (index_t t = 0; t < depth; ++t)
      yt[static_cast<std::size_t>(t) * cols + j] = yv[static_cast<std::size_t>(j) * depth + t];
  const auto Xt = in_space<Space>(dense_from_rowwise<T, LY>(depth, rows, xt));
  const auto Yt = in_space<Space>(dense_from_rowwise<T, LX>(depth, cols, yt));
  check("S o transpose(Xt)*Yt", run(spade::cwise_product(S, spade::transpose(Xt) * Yt)), 1);
  check("(X*Y^T) o S with scalings",
        run(spade::cwise_product((T(2) * X) * spade::transpose(Y * T(-0.5)), S)), -1);
  if constexpr (std::is_void_v<Forced>) {
    check("abs of it", csr<T, Space>(spade::abs(spade::cwise_product(S, X * spade::transpose(Y)))),
          1, true);
    const auto summed = spade::sum(spade::cwise_product(S, X * spade::transpose(Y)));
    long double total = 0, magnitude = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      total += want[k];
      magnitude += size[k];
    }
    CHECK(std::fabs(double(summed) - double(total)) <=
          (depth + double(want.size()) + 4) * eps * double(magnitude) + 1e-300);
  }
}

}  // namespace spade::testing

namespace spade::testing {

/// Element (i, j) of a row-major rows × cols array.
template <class T>
double at(const std::vector<T>& rowwise, index_t cols, index_t i, index_t j) {
  return static_cast<double>(rowwise[static_cast<std::size_t>(i) * static_cast<std::size_t>(cols) +
                                     static_cast<std::size_t>(j)]);
}

/// Views of a rows × cols matrix d stored in Layout (and of a copy e in the other layout, and of
/// vectors): read (alone, fused with other views of either layout, reduced, as a product
/// operand) and written in place (from a tree, from a product, from a view of the same base,
/// overlapping or not), against the values computed here element by element. rows, cols ≥ 3.
template <class T, class Space, class Layout>
void check_views(index_t rows, index_t cols, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(rows);
  CAPTURE(cols);
  using other = std::conditional_t<std::is_same_v<Layout, row_major>, col_major, row_major>;
  const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const auto dv = uniform_values<T>(seed, count, -2, 2);
  const auto ev = uniform_values<T>(seed + 1, count, -2, 2);
  auto d = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  const auto e = in_space<Space>(dense_from_rowwise<T, other>(rows, cols, ev));
  const index_t r = rows - 2, c = cols - 1;  // a block starting at (1, 1) and one at (2, 0)

  // Read: a block alone, and a tree over blocks of both layouts into a row-major result.
  const dense<T, Space, Layout> b = spade::block(d, 1, 1, r, c);
  const dense<T, Space, row_major> f =
      spade::exp(spade::block(d, 1, 1, r, c)) * T(0.5) - spade::block(e, 2, 0, r, c);
  std::vector<double> bwant, fwant;
  for (index_t i = 0; i < r; ++i)
    for (index_t j = 0; j < c; ++j) {
      bwant.push_back(at(dv, cols, i + 1, j + 1));
      fwant.push_back(static_cast<double>(static_cast<T>(std::exp(at(dv, cols, i + 1, j + 1)))) *
                          0.5 -
                      at(ev, cols, i + 2, j));
    }
  CHECK(b.rows() == r);
  CHECK(b.cols() == c);
  CHECK(mismatches(rowwise_of(on_host(b)), bwant, 0) == 0u);
  CHECK(mismatches(rowwise_of(on_host(f)), fwant, 4) == 0u);

  // Rows and columns (contiguous in one layout, strided in the other) as vectors.
  const vector<T, Space> row1 = spade::row(d, 1);
  const vector<T, Space> col2 = spade::col(e, 2);
  const vector<T, Space> mixed = spade::cwise_product(spade::row(e, 0), spade::row(d, rows - 1)) +
                                 spade::segment(row1, 0, cols);
  std::vector<double> rwant, cwant, mwant;
  for (index_t j = 0; j < cols; ++j) {
    rwant.push_back(at(dv, cols, 1, j));
    mwant.push_back(
        static_cast<double>(static_cast<T>(at(ev, cols, 0, j) * at(dv, cols, rows - 1, j))) +
        at(dv, cols, 1, j));
  }
  for (index_t i = 0; i < rows; ++i)
    cwant.push_back(at(ev, cols, i, 2));
  const auto values_of = [](const auto& v) {
    const auto h = on_host(v).values();
    return std::vector<T>(h.begin(), h.end());
  };
  CHECK(mismatches(values_of(row1), rwant, 0) == 0u);
  CHECK(mismatches(values_of(col2), cwant, 0) == 0u);
  CHECK(mismatches(values_of(mixed), mwant, 2) == 0u);

  // Reductions read the window in place; a product reads a copy of it.
  double total = 0, squares = 0, largest = -1e300;
  for (index_t i = 0; i < r; ++i)
    for (index_t j = 0; j < c; ++j) {
      total += at(dv, cols, i + 1, j + 1);
      largest = std::max(largest, at(dv, cols, i + 1, j + 1));
    }
  for (index_t i = 0; i < rows; ++i)
    squares += at(ev, cols, i, 2) * at(ev, cols, i, 2);
  const double size = static_cast<double>(count) * 2;
  CHECK(std::fabs(double(spade::sum(spade::block(d, 1, 1, r, c))) - total) <=
        size * 4 * double(std::numeric_limits<T>::epsilon()));
  CHECK(double(spade::max_coeff(spade::block(d, 1, 1, r, c))) == largest);
  CHECK(
      double(spade::norm(spade::col(e, 2))) ==
      doctest::Approx(std::sqrt(squares)).epsilon(double(std::numeric_limits<T>::epsilon()) * 64));
  const vector<T, Space> sums = spade::row_sums(spade::block(e, 2, 0, r, c));
  std::vector<double> swant;
  for (index_t i = 0; i < r; ++i) {
    double s = 0;
    for (index_t j = 0; j < c; ++j)
      s += at(ev, cols, i + 2, j);
    swant.push_back(s);
  }
  const auto shost = values_of(sums);
  for (index_t i = 0; i < r; ++i)
    CHECK(std::fabs(double(shost[static_cast<std::size_t>(i)]) -
                    swant[static_cast<std::size_t>(i)]) <=
          double(cols) * 8 * double(std::numeric_limits<T>::epsilon()));

  // Write: a tree into a block; the rest of d unchanged.
  auto w = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  spade::block(w, 1, 1, r, c) = spade::abs(spade::block(e, 2, 0, r, c)) + T(1);
  std::vector<double> wwant(dv.begin(), dv.end());
  for (index_t i = 0; i < r; ++i)
    for (index_t j = 0; j < c; ++j)
      wwant[static_cast<std::size_t>((i + 1) * cols + j + 1)] =
          static_cast<double>(static_cast<T>(std::fabs(at(ev, cols, i + 2, j)) + 1));
  CHECK(mismatches(rowwise_of(on_host(w)), wwant, 0) == 0u);

  // Overlapping source and destination go through a temporary: the block one row and column
  // down, copied up (as Eigen's block assignment reads it before writing).
  auto o = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  spade::block(o, 0, 0, rows - 1, cols - 1) = T(2) * spade::block(o, 1, 1, rows - 1, cols - 1);
  std::vector<double> owant(dv.begin(), dv.end());
  for (index_t i = 0; i + 1 < rows; ++i)
    for (index_t j = 0; j + 1 < cols; ++j)
      owant[static_cast<std::size_t>(i * cols + j)] = 2 * at(dv, cols, i + 1, j + 1);
  CHECK(mismatches(rowwise_of(on_host(o)), owant, 0) == 0u);
  // The other way (down and right): in place, a forward pass would read elements it has
  // already overwritten.
  auto dr = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  spade::block(dr, 1, 1, rows - 1, cols - 1) = T(2) * spade::block(dr, 0, 0, rows - 1, cols - 1);
  std::vector<double> drwant(dv.begin(), dv.end());
  for (index_t i = 0; i + 1 < rows; ++i)
    for (index_t j = 0; j + 1 < cols; ++j)
      drwant[static_cast<std::size_t>((i + 1) * cols + j + 1)] = 2 * at(dv, cols, i, j);
  CHECK(mismatches(rowwise_of(on_host(dr)), drwant, 0) == 0u);
  // A row from a column of the same matrix (they cross at one element), then a column from
  // itself scaled (the same elements: in place).
  auto x = in_space<Space>(dense_from_rowwise<T, Layout>(
      rows, rows, uniform_values<T>(seed, static_cast<std::size_t>(rows * rows), -2, 2)));
  const auto xv = rowwise_of(on_host(x));
  spade::row(x, 0) = spade::col(x, 1);
  spade::col(x, 2) = spade::col(x, 2) * T(3);
  std::vector<double> xwant(xv.begin(), xv.end());
  for (index_t j = 0; j < rows; ++j)
    xwant[static_cast<std::size_t>(j)] = at(xv, rows, j, 1);
  for (index_t i = 0; i < rows; ++i)
    xwant[static_cast<std::size_t>(i * rows + 2)] =
        static_cast<double>(static_cast<T>(xwant[static_cast<std::size_t>(i * rows + 2)] * 3));
  CHECK(mismatches(rowwise_of(on_host(x)), xwant, 0) == 0u);
  // A product into a column (evaluated first, then written through the stride), and a product
  // reading a column.
  spade::col(x, 0) = x * spade::col(x, 1);
  const vector<T, Space> y = x * spade::row(x, 1);
  const auto after = rowwise_of(on_host(x));
  std::vector<double> colwant, ywant;
  for (index_t i = 0; i < rows; ++i) {
    double s = 0;
    for (index_t k = 0; k < rows; ++k)
      s += at(xwant, rows, i, k) * at(xwant, rows, k, 1);
    colwant.push_back(s);
  }
  for (index_t i = 0; i < rows; ++i) {
    CHECK(close_to(after[static_cast<std::size_t>(i * rows)], colwant[static_cast<std::size_t>(i)],
                   double(rows) * 4));
    for (index_t j = 1; j < rows; ++j)
      CHECK(double(after[static_cast<std::size_t>(i * rows + j)]) == at(xwant, rows, i, j));
  }
  for (index_t i = 0; i < rows; ++i) {
    double s = 0;
    for (index_t k = 0; k < rows; ++k)
      s += at(after, rows, i, k) * at(after, rows, 1, k);
    ywant.push_back(s);
  }
  const auto yhost = values_of(y);
  for (index_t i = 0; i < rows; ++i)
    CHECK(close_to(yhost[static_cast<std::size_t>(i)], ywant[static_cast<std::size_t>(i)],
                   double(rows) * 4));

  // A destination that a view of itself reads: through a temporary (d is reshaped).
  auto z = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  z = spade::block(z, 1, 1, r, c) + T(0);
  CHECK(z.rows() == r);
  CHECK(mismatches(rowwise_of(on_host(z)), bwant, 0) == 0u);

  // Segments, heads and tails of a vector; an overlapping copy within it.
  const auto vv = uniform_values<T>(seed + 2, 37, -2, 2);
  auto v = in_space<Space>(vector<T, cpu>(vv));
  spade::segment(v, 5, 10) = spade::head(v, 10);
  spade::tail(v, 3) = spade::exp(spade::tail(v, 3));
  std::vector<double> vwant(vv.begin(), vv.end());
  for (std::size_t k = 0; k < 10; ++k)
    vwant[5 + k] = vv[k];
  for (std::size_t k = 34; k < 37; ++k)
    vwant[k] = static_cast<double>(static_cast<T>(std::exp(vwant[k])));
  CHECK(mismatches(values_of(v), vwant, 2) == 0u);
  // A shift by one over 1000003 elements: in place, threads would read elements other threads
  // have already written.
  const auto long_values = uniform_values<T>(seed + 3, 1000003, -2, 2);
  auto shifted = in_space<Space>(vector<T, cpu>(long_values));
  spade::segment(shifted, 1, 1000002) = spade::head(shifted, 1000002) * T(1);
  std::vector<double> shift_want(long_values.begin(), long_values.end());
  for (std::size_t k = 1; k < shift_want.size(); ++k)
    shift_want[k] = long_values[k - 1];
  CHECK(mismatches(values_of(shifted), shift_want, 0) == 0u);
  const vector<T, Space> empty = spade::segment(v, 37, 0);
  CHECK(empty.size() == 0);
  const dense<T, Space, Layout> none = spade::block(d, rows, cols, 0, 0);
  CHECK(none.rows() == 0);
}

/// Views out of range and assignments of the wrong shape name the range or both shapes.
template <class T, class Space>
void check_view_errors() {
  auto d = in_space<Space>(dense<T, cpu>(4, 5));
  auto v = in_space<Space>(vector<T, cpu>(6));
  CHECK_THROWS_WITH_AS(spade::block(d, 1, 2, 4, 2),
                       "spade::block(D, 1, 2, 4, 2): rows 1..4 lies outside the 4x5 matrix",
                       spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::block(d, -1, 0, 1, 1), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::block(d, 0, 0, 1, -1), spade::dimension_mismatch);
  CHECK_THROWS_WITH_AS(spade::row(d, 4), "spade::row(D, 4): row 4..4 lies outside the 4x5 matrix",
                       spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::col(d, 5), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::segment(v, 3, 4), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::head(v, 7), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::tail(v, 7), spade::dimension_mismatch);
  CHECK_THROWS_WITH_AS(spade::block(d, 0, 0, 2, 2) = spade::block(d, 0, 0, 3, 2),
                       "spade::block(D, 0, 0, 2, 2) = e: the view is 2x2, the expression 3x2 "
                       "(shapes must be equal)",
                       spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::col(d, 0) = v, spade::dimension_mismatch);
}

}  // namespace spade::testing

namespace spade::testing {

/// spade::rows(A, first, count): the csr of those rows (row pointers rebased), as a product
/// operand, under an element-wise map and as its own value; empty ranges and an out-of-range
/// one.
template <class T, class Space>
void check_row_range(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 41, cols = 29;
  const auto [row_ptr, col_idx, values] = random_csr_parts<T>(rows, cols, seed, 0.2, 5, 2);
  const csr<T, cpu> host(rows, cols, row_ptr, col_idx, values);
  const auto a = in_space<Space>(host);
  const index_t first = 7, count = 20;
  const csr<T, Space> part = spade::rows(a, first, count);
  const auto got = on_host(part);
  REQUIRE(got.rows() == count);
  CHECK(got.cols() == cols);
  const auto base = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(first)]);
  for (index_t i = 0; i <= count; ++i)
    CHECK(got.row_ptr()[static_cast<std::size_t>(i)] ==
          row_ptr[static_cast<std::size_t>(first + i)] - static_cast<index_t>(base));
  for (std::size_t k = 0; k < got.col_idx().size(); ++k) {
    CHECK(got.col_idx()[k] == col_idx[base + k]);
    CHECK(got.values()[k] == values[base + k]);
  }
  // A product with it: the rows of A · x, each a sum over the row's entries.
  const auto xv = uniform_values<T>(seed + 1, static_cast<std::size_t>(cols), -1, 1);
  const auto x = in_space<Space>(vector<T, cpu>(xv));
  const vector<T, Space> y = spade::rows(a, first, count) * x;
  const auto yh = on_host(y).values();
  for (index_t i = 0; i < count; ++i) {
    double s = 0, size = 0;
    for (index_t k = row_ptr[static_cast<std::size_t>(first + i)];
         k < row_ptr[static_cast<std::size_t>(first + i + 1)]; ++k) {
      const double term = double(values[static_cast<std::size_t>(k)]) *
                          xv[static_cast<std::size_t>(col_idx[static_cast<std::size_t>(k)])];
      s += term;
      size += std::fabs(term);
    }
    CHECK(std::fabs(double(yh[static_cast<std::size_t>(i)]) - s) <=
          (size + 1) * 16 * double(std::numeric_limits<T>::epsilon()));
  }
  const csr<T, Space> mapped = spade::abs(spade::rows(a, first, count));
  CHECK(on_host(mapped).nnz() == got.nnz());
  const csr<T, Space> none = spade::rows(a, rows, 0);
  CHECK(none.rows() == 0);
  CHECK(none.nnz() == 0);
  CHECK_THROWS_WITH_AS(spade::rows(a, 30, 12),
                       "spade::rows(A, 30, 12): rows 30..41 lies outside the 41x29 matrix",
                       spade::dimension_mismatch);
}

}  // namespace spade::testing

namespace spade::testing {

/// cwise_product of two sparse operands: the entries stored in both, each the product of the
/// two values (exact: one rounding), sorted; against a merge computed here. Operands with rows
/// left empty, a coo one (converted), scaled ones, a chain and a sum over the result; shapes
/// that differ; operands without entries.
template <class T, class Space>
void check_sparse_intersection(index_t rows, index_t cols, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(rows);
  const auto pa = random_csr_parts<T>(rows, cols, seed, 0.3, 5, 1);
  const auto pb = random_csr_parts<T>(rows, cols, seed + 1, 0.4, 7, 2);
  const csr<T, cpu> ha(rows, cols, pa.row_ptr, pa.col_idx, pa.values);
  const csr<T, cpu> hb(rows, cols, pb.row_ptr, pb.col_idx, pb.values);
  const auto a = in_space<Space>(ha);
  const auto b = in_space<Space>(hb);
  std::vector<index_t> want_ptr{0}, want_cols;
  std::vector<double> want_values;
  for (index_t r = 0; r < rows; ++r) {
    for (index_t i = pa.row_ptr[static_cast<std::size_t>(r)];
         i < pa.row_ptr[static_cast<std::size_t>(r) + 1]; ++i)
      for (index_t j = pb.row_ptr[static_cast<std::size_t>(r)];
           j < pb.row_ptr[static_cast<std::size_t>(r) + 1]; ++j)
        if (pa.col_idx[static_cast<std::size_t>(i)] == pb.col_idx[static_cast<std::size_t>(j)]) {
          want_cols.push_back(pa.col_idx[static_cast<std::size_t>(i)]);
          want_values.push_back(
              static_cast<double>(static_cast<T>(double(pa.values[static_cast<std::size_t>(i)]) *
                                                 double(pb.values[static_cast<std::size_t>(j)]))));
        }
    want_ptr.push_back(static_cast<index_t>(want_cols.size()));
  }
  const auto check = [&](const csr<T, Space>& got, double factor, const char* what) {
    CAPTURE(what);
    const auto h = on_host(got);
    REQUIRE(h.rows() == rows);
    CHECK(h.cols() == cols);
    CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == want_ptr);
    CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == want_cols);
    std::vector<double> scaled(want_values);
    for (auto& v : scaled)
      v *= factor;
    CHECK(mismatches(std::vector<T>(h.values().begin(), h.values().end()), scaled,
                     factor == 1 ? 0 : 2) == 0u);
  };
  check(spade::cwise_product(a, b), 1, "A o B");
  check(spade::cwise_product(b, a), 1, "B o A");
  const coo<T, Space> b_coo = convert<coo<T, Space>>(b);
  check(spade::cwise_product(a, b_coo), 1, "A o coo(B)");
  check(spade::cwise_product(T(2) * a, b), 2, "2A o B");
  const csr<T, Space> chained = spade::abs(spade::cwise_product(a, b));
  CHECK(on_host(chained).nnz() == static_cast<index_t>(want_cols.size()));
  double total = 0, size = 0;
  for (double v : want_values) {
    total += v;
    size += std::fabs(v);
  }
  CHECK(std::fabs(double(spade::sum(spade::cwise_product(a, b))) - total) <=
        (size + 1) * double(want_values.size() + 1) * double(std::numeric_limits<T>::epsilon()));
  const csr<T, Space> none = spade::cwise_product(a, in_space<Space>(csr<T, cpu>(rows, cols)));
  CHECK(none.nnz() == 0);
  CHECK(on_host(none).row_ptr().size() == static_cast<std::size_t>(rows) + 1);
  CHECK_THROWS_WITH_AS(spade::cwise_product(a, in_space<Space>(csr<T, cpu>(rows + 1, cols))),
                       ("cwise_product: lhs is " + expr::shape_text(rows, cols) + ", rhs is " +
                        expr::shape_text(rows + 1, cols) + " (shapes must be equal)")
                           .c_str(),
                       spade::dimension_mismatch);
}

}  // namespace spade::testing

namespace spade::testing {

/// Row sums of cast<U>(A) (`sums`, on the host) against A's parts: each row's values converted
/// to U one by one and summed in double, within (|terms| + 1) · cols · ε of U.
template <class U, class T>
void check_cast_row_sums(const std::vector<U>& sums, const csr_parts<T>& p, index_t rows,
                         index_t cols) {
  for (index_t r = 0; r < rows; ++r) {
    double want = 0, terms = 0;
    for (index_t k = p.row_ptr[static_cast<std::size_t>(r)];
         k < p.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
      want += double(static_cast<U>(p.values[static_cast<std::size_t>(k)]));
      terms += std::fabs(double(p.values[static_cast<std::size_t>(k)]));
    }
    CHECK(std::fabs(double(sums[static_cast<std::size_t>(r)]) - want) <=
          (terms + 1) * double(cols) * double(std::numeric_limits<U>::epsilon()));
  }
}

/// cast<U> of a csr: its pattern, each value converted (exactly as static_cast does); a chain
/// after the cast, a sum and row sums over it, in the other scalar type.
template <class T, class Space>
void check_sparse_cast(std::uint64_t seed) {
  CAPTURE(seed);
  using U = std::conditional_t<std::is_same_v<T, float>, double, float>;
  const index_t rows = 33, cols = 31;
  const auto p = random_csr_parts<T>(rows, cols, seed, 0.3, 6, 4);
  const auto a = in_space<Space>(csr<T, cpu>(rows, cols, p.row_ptr, p.col_idx, p.values));
  const csr<U, Space> c = spade::cast<U>(a);
  const csr<U, Space> chained = spade::abs(spade::cast<U>(a)) * U(2);
  const auto hc = on_host(c), hchained = on_host(chained);
  CHECK(std::vector<index_t>(hc.row_ptr().begin(), hc.row_ptr().end()) == p.row_ptr);
  CHECK(std::vector<index_t>(hc.col_idx().begin(), hc.col_idx().end()) == p.col_idx);
  CHECK(std::vector<index_t>(hchained.col_idx().begin(), hchained.col_idx().end()) == p.col_idx);
  std::size_t bad = 0;
  double total = 0, size = 0;
  for (std::size_t k = 0; k < p.values.size(); ++k) {
    const U converted = static_cast<U>(p.values[k]);
    if (hc.values()[k] != converted) ++bad;
    if (hchained.values()[k] != U(2) * std::fabs(converted)) ++bad;
    total += double(converted);
    size += std::fabs(double(converted));
  }
  CHECK(bad == 0u);
  const U s = spade::sum(spade::cast<U>(a));
  CHECK(std::fabs(double(s) - total) <=
        (size + 1) * double(p.values.size()) * double(std::numeric_limits<U>::epsilon()));
  const vector<U, Space> sums = spade::row_sums(spade::cast<U>(a));
  const auto hs = on_host(sums).values();
  check_cast_row_sums(hs, p, rows, cols);
}

}  // namespace spade::testing

namespace spade::testing {

/// The finite non-negative values of a 16-bit type R (spade::half or spade::bfloat16), indexed
/// by their bits, widened by Eigen (not by Spade), with the value where rounding up reaches
/// infinity. The reference below rounds against it by exact comparisons in double.
template <class R>
struct reduced_table {
  std::vector<double> values;  // values[b]: the value of bits b, for b up to the largest finite
  double overflow = 0;         // the largest finite value plus half its unit: from here on inf

  reduced_table() {
    const std::uint16_t largest = std::is_same_v<R, half> ? 0x7bff : 0x7f7f;
    for (std::uint32_t b = 0; b <= largest; ++b)
      values.push_back(widen_bits(static_cast<std::uint16_t>(b)));
    overflow = values.back() + (values.back() - values[values.size() - 2]) / 2;
  }
  static double widen_bits(std::uint16_t b) {
    using E = std::conditional_t<std::is_same_v<R, half>, Eigen::half, Eigen::bfloat16>;
    return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<E>(b)));
  }
  /// The bits of d rounded to nearest, ties to even bits (NaN: any NaN, so 0x7fff).
  std::uint16_t nearest(double d) const {
    const std::uint16_t sign = std::signbit(d) ? 0x8000 : 0;
    const std::uint16_t inf = std::is_same_v<R, half> ? 0x7c00 : 0x7f80;
    if (std::isnan(d)) return 0x7fff;
    const double m = std::fabs(d);
    if (m >= overflow) return sign | inf;
    const auto above = std::lower_bound(values.begin(), values.end(), m);
    // Between the largest finite value and the overflow threshold: the largest.
    if (above == values.end()) return sign | static_cast<std::uint16_t>(values.size() - 1);
    const auto hi = static_cast<std::uint16_t>(above - values.begin());
    if (values[hi] == m || hi == 0) return sign | hi;
    const auto lo = static_cast<std::uint16_t>(hi - 1);
    const double down = m - values[lo], up = values[hi] - m;
    if (down != up) return sign | (down < up ? lo : hi);
    return sign | ((lo & 1) ? hi : lo);
  }
};

template <class R>
std::uint16_t bits_of(R r) {
  return r.bits;
}
template <class R>
bool is_nan_bits(std::uint16_t b) {
  return std::is_same_v<R, half> ? (b & 0x7c00) == 0x7c00 && (b & 0x3ff)
                                 : (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

/// Values of T that stress rounding to R: zeros, infinities, NaN, the largest finite values and
/// the overflow threshold, exact ties between neighbours, ties nudged by far less than T's unit
/// at R's scale (a double that rounds to float exactly at the tie: rounding through float twice
/// gets these wrong), subnormals, and random magnitudes over R's whole range and past it.
template <class T, class R>
std::vector<T> reduced_stress_values(std::size_t n, std::uint64_t seed,
                                     const reduced_table<R>& table) {
  std::vector<double> special = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.0,
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::quiet_NaN(),
                                 table.values.back(),
                                 table.overflow,
                                 -table.overflow,
                                 table.values[1],
                                 table.values[1] / 2,
                                 table.values[1] / 3,
                                 1e-30};
  splitmix64 rng{seed};
  for (int k = 0; k < 40; ++k) {
    const auto b = static_cast<std::size_t>(rng.below(table.values.size() - 1));
    const double tie = (table.values[b] + table.values[b + 1]) / 2;
    special.push_back(tie);
    special.push_back(-tie);
    if constexpr (std::is_same_v<T, double>) {
      special.push_back(tie * (1 + 0x1p-40));
      special.push_back(tie * (1 - 0x1p-40));
    }
  }
  // Magnitudes over R's range and past float's for double inputs.
  const double low = std::is_same_v<R, half> ? -30 : -140;
  const double high = std::is_same_v<R, half> ? 20 : (std::is_same_v<T, double> ? 135 : 127);
  std::vector<T> v(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (k < special.size()) {
      v[k] = static_cast<T>(special[k]);
    } else {
      const double m =
          std::ldexp(1 + rng.uniform(), static_cast<int>(low + (high - low) * rng.uniform()));
      v[k] = static_cast<T>(rng.chance(0.5) ? -m : m);
    }
  }
  return v;
}

/// cast<R> of a T vector and matrix (R half or bfloat16) against the exact reference, bit for
/// bit; cast back to T exact; fused and reduced reads of R values; a cross cast; a view read and
/// written; printing and explain.
template <class T, class R, class Space>
void check_reduced_precision_cast(std::size_t n, std::uint64_t seed) {
  CAPTURE(seed);
  CAPTURE(n);
  static const reduced_table<R> table;
  const auto x = reduced_stress_values<T, R>(n, seed, table);
  const auto xs = in_space<Space>(vector<T, cpu>(std::vector<T>(x)));
  const vector<R, Space> r = spade::cast<R>(xs);
  const auto hr = on_host(r).values();
  REQUIRE(hr.size() == n);
  std::size_t bad = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint16_t want = table.nearest(static_cast<double>(x[k]));
    const std::uint16_t got = bits_of(hr[k]);
    if (std::isnan(static_cast<double>(x[k])) ? !is_nan_bits<R>(got) : got != want) {
      if (bad < 5) MESSAGE("element ", k, ": ", x[k], " gave bits ", got, ", want ", want);
      ++bad;
    }
  }
  CHECK(bad == 0u);

  // Back to T: exact. A fused tree over R values and a reduction read them in one pass.
  const vector<T, Space> back = spade::cast<T>(r);
  const vector<T, Space> fused = T(2) * spade::cast<T>(r) + xs;
  const auto hb = on_host(back).values();
  const auto hf = on_host(fused).values();
  std::size_t bad_back = 0, bad_fused = 0;
  double total = 0, size = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double w = table.widen_bits(hr[k].bits & 0x7fff) * (hr[k].bits & 0x8000 ? -1 : 1);
    const bool nan = is_nan_bits<R>(hr[k].bits);
    const bool inf = !nan && (hr[k].bits & 0x7fff) > table.values.size() - 1;
    const double widened = nan   ? std::numeric_limits<double>::quiet_NaN()
                           : inf ? std::copysign(std::numeric_limits<double>::infinity(),
                                                 hr[k].bits & 0x8000 ? -1.0 : 1.0)
                                 : w;
    if (nan ? !std::isnan(static_cast<double>(hb[k])) : static_cast<double>(hb[k]) != widened)
      ++bad_back;
    if (!close_to(hf[k], 2 * widened + static_cast<double>(x[k]), 1)) ++bad_fused;
    if (!nan && !inf) {
      total += widened;
      size += std::fabs(widened);
    }
  }
  CHECK(bad_back == 0u);
  CHECK(bad_fused == 0u);

  // A reduction over the finite values, none so large that a float sum could overflow.
  const auto finite = in_space<Space>(vector<T, cpu>([&] {
    std::vector<T> f(x);
    for (auto& value : f)
      if (!std::isfinite(static_cast<double>(value)) ||
          std::fabs(static_cast<double>(value)) >= std::min(table.overflow, 1e30))
        value = T(0);
    return f;
  }()));
  const vector<R, Space> rf = spade::cast<R>(finite);
  const T s = spade::sum(spade::cast<T>(rf));
  double want_sum = 0, want_size = 0;
  const auto hrf = on_host(rf).values();
  for (const auto& value : hrf) {
    const double w = static_cast<double>(static_cast<float>(value));
    want_sum += w;
    want_size += std::fabs(w);
  }
  CHECK(std::fabs(static_cast<double>(s) - want_sum) <=
        (want_size + 1) * static_cast<double>(n + 1) * std::numeric_limits<T>::epsilon());
  (void)total;
  (void)size;

  // half ↔ bfloat16 directly: the exact value of the source, rounded once.
  using Other = std::conditional_t<std::is_same_v<R, half>, bfloat16, half>;
  static const reduced_table<Other> other_table;
  const vector<Other, Space> cross = spade::cast<Other>(rf);
  const auto hc = on_host(cross).values();
  std::size_t bad_cross = 0;
  for (std::size_t k = 0; k < n; ++k)
    if (hc[k].bits != other_table.nearest(static_cast<double>(static_cast<float>(hrf[k]))))
      ++bad_cross;
  CHECK(bad_cross == 0u);
}

/// A matrix of R in either layout: cast from T read across layouts, a column read through its
/// stride and a column written through a view, printing and explain.
template <class T, class R, class Space>
void check_reduced_precision_matrix(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 33, cols = 31;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const auto v = uniform_values<T>(seed, n, -300, 300);
  const auto a = in_space<Space>(dense_from_rowwise<T, row_major>(rows, cols, v));
  dense<R, Space, col_major> m = spade::cast<R>(a);
  const auto at = [&](index_t i, index_t j) {
    return static_cast<double>(v[static_cast<std::size_t>(i) * cols + j]);
  };
  static const reduced_table<R> table;
  const auto hm = on_host(m);
  std::size_t bad = 0;
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j)
      if (hm.values()[hm.offset(i, j)].bits != table.nearest(at(i, j))) ++bad;
  CHECK(bad == 0u);

  const vector<T, Space> c = spade::cast<T>(spade::row(m, 4));  // strided: col-major storage
  const auto hc = on_host(c).values();
  REQUIRE(hc.size() == static_cast<std::size_t>(cols));
  for (index_t j = 0; j < cols; ++j)
    CHECK(static_cast<double>(hc[static_cast<std::size_t>(j)]) ==
          static_cast<double>(static_cast<float>(hm.values()[hm.offset(4, j)])));

  spade::col(m, 2) = spade::cast<R>(T(3) * spade::col(a, 0));
  const auto written = on_host(m);
  std::size_t bad_written = 0;
  for (index_t i = 0; i < rows; ++i) {
    if (written.values()[written.offset(i, 2)].bits !=
        table.nearest(static_cast<double>(T(3) * static_cast<T>(at(i, 0)))))
      ++bad_written;
    if (written.values()[written.offset(i, 3)].bits != table.nearest(at(i, 3))) ++bad_written;
  }
  CHECK(bad_written == 0u);

  // A product inside: evaluated first (as in any tree), then rounded in the fused pass, so it
  // equals rounding the evaluated product.
  const auto ones = in_space<Space>(vector<T, cpu>::ones(cols));
  const vector<T, Space> product = a * ones;
  const vector<R, Space> rounded = spade::cast<R>(a * ones);
  const auto hp = on_host(product).values();
  const auto hrounded = on_host(rounded).values();
  REQUIRE(hrounded.size() == static_cast<std::size_t>(rows));
  for (index_t i = 0; i < rows; ++i)
    CHECK(hrounded[static_cast<std::size_t>(i)].bits ==
          table.nearest(static_cast<double>(hp[static_cast<std::size_t>(i)])));

  std::ostringstream printed;
  printed << m;
  CHECK(contains(printed.str(), std::string("<") + scalar_name<R>() + ", "));
  const std::string text = spade::explain(spade::cast<R>(a));
  CHECK(contains(text, std::string("<") + scalar_name<R>() + ", "));
  if constexpr (std::is_same_v<Space, gpu>)
    CHECK(
        contains(text, std::is_same_v<R, half> ? "spade_narrow_half(" : "spade_narrow_bfloat16("));
}

/// Both 16-bit types from T: vectors of each size in `sizes`, then the matrix cases.
template <class T, class Space>
void check_reduced_precision(const std::vector<std::size_t>& sizes, std::uint64_t seed) {
  for (const std::size_t n : sizes) {
    check_reduced_precision_cast<T, half, Space>(n, seed++);
    check_reduced_precision_cast<T, bfloat16, Space>(n, seed++);
  }
  check_reduced_precision_matrix<T, half, Space>(seed++);
  check_reduced_precision_matrix<T, bfloat16, Space>(seed);
}

/// Sparse formats other than csr under cast, diagonal scaling and a product with a dense
/// matrix: the csr of their entries. A coo with every entry v stored as the repeats 2v and -v,
/// in reverse order (the chain must see each entry once: abs of the repeats would give 3|v|),
/// and an ellr.
template <class T, class Space>
void check_other_sparse_formats(std::uint64_t seed) {
  CAPTURE(seed);
  using U = std::conditional_t<std::is_same_v<T, float>, double, float>;
  const index_t rows = 33, cols = 31;
  const auto p = random_csr_parts<T>(rows, cols, seed, 0.3, 6, 4);
  std::vector<index_t> ri, ci;
  std::vector<T> repeats;
  for (index_t r = rows - 1; r >= 0; --r)
    for (index_t k = p.row_ptr[static_cast<std::size_t>(r) + 1] - 1;
         k >= p.row_ptr[static_cast<std::size_t>(r)]; --k)
      for (const T factor : {T(2), T(-1)}) {  // 2v + (-v) is v exactly
        ri.push_back(r);
        ci.push_back(p.col_idx[static_cast<std::size_t>(k)]);
        repeats.push_back(factor * p.values[static_cast<std::size_t>(k)]);
      }
  const csr<T, cpu> a(rows, cols, p.row_ptr, p.col_idx, p.values);
  const auto o = in_space<Space>(coo<T, cpu>(rows, cols, ri, ci, repeats));
  const auto e = in_space<Space>(convert<ellr<T, cpu>>(a));
  const auto dv = uniform_values<T>(seed + 1, static_cast<std::size_t>(rows), -2, 2);
  const auto bv = uniform_values<T>(seed + 2, static_cast<std::size_t>(rows) * cols, -2, 2);
  const auto d = in_space<Space>(vector<T, cpu>(dv));
  const auto b = in_space<Space>(dense_from_rowwise<T, row_major>(rows, cols, bv));

  const auto check = [&](const char* what, const auto& got, const auto& value, double ulps) {
    CAPTURE(what);
    const auto h = on_host(got);
    CHECK(std::vector<index_t>(h.row_ptr().begin(), h.row_ptr().end()) == p.row_ptr);
    CHECK(std::vector<index_t>(h.col_idx().begin(), h.col_idx().end()) == p.col_idx);
    std::vector<double> want(p.values.size());
    for (index_t r = 0; r < rows; ++r)
      for (index_t k = p.row_ptr[static_cast<std::size_t>(r)];
           k < p.row_ptr[static_cast<std::size_t>(r) + 1]; ++k)
        want[static_cast<std::size_t>(k)] =
            value(r, p.col_idx[static_cast<std::size_t>(k)], p.values[static_cast<std::size_t>(k)]);
    using V = typename std::remove_cvref_t<decltype(h)>::value_type;
    CHECK(mismatches(std::vector<V>(h.values().begin(), h.values().end()), want, ulps) == 0u);
  };
  const auto converted = [](index_t, index_t, T v) { return double(static_cast<U>(v)); };
  const auto scaled = [&](index_t r, index_t, T v) {
    return double(dv[static_cast<std::size_t>(r)]) * v;
  };
  const auto masked = [&](index_t r, index_t c, T v) {
    return double(v) * bv[static_cast<std::size_t>(r) * cols + c];
  };
  check("cast<U>(coo)", csr<U, Space>(spade::cast<U>(o)), converted, 0);
  check("cast<U>(ellr)", csr<U, Space>(spade::cast<U>(e)), converted, 0);
  check("as_diagonal(d) * coo", csr<T, Space>(spade::as_diagonal(d) * o), scaled, 1);
  check("as_diagonal(d) * ellr", csr<T, Space>(spade::as_diagonal(d) * e), scaled, 1);
  check("cwise_product(coo, b)", csr<T, Space>(spade::cwise_product(o, b)), masked, 1);
  check("cwise_product(b, ellr)", csr<T, Space>(spade::cwise_product(b, e)), masked, 1);
  // Reductions read the same entries: a row sum of the cast, a sum of the scaled values.
  const vector<U, Space> sums = spade::row_sums(spade::cast<U>(o));
  const auto hs = on_host(sums).values();
  check_cast_row_sums(hs, p, rows, cols);
  const std::string text = spade::explain(spade::cast<U>(o));
  CHECK(contains(text, "input converted first: coo<"));

  // A values map and reductions of the coo see its entries, not the repeats.
  const coo<T, Space> magnitudes = spade::abs(o);
  check(
      "abs(coo)", convert<csr<T, Space>>(magnitudes),
      [](index_t, index_t, T v) { return std::fabs(double(v)); }, 0);
  double largest = -std::numeric_limits<double>::infinity(), squares = 0;
  for (const T v : p.values) {
    largest = std::max(largest, double(v));
    squares += double(v) * double(v);
  }
  if (!p.values.empty()) {
    CHECK(double(spade::max_coeff(o)) == largest);
    // An ellr's padding holds zeros that are not entries: the largest of -|v| is below 0.
    double smallest_magnitude = std::numeric_limits<double>::infinity(), total = 0, size = 0;
    for (const T v : p.values) {
      smallest_magnitude = std::min(smallest_magnitude, std::fabs(double(v)));
      total += double(v);
      size += std::fabs(double(v));
    }
    CHECK(double(spade::max_coeff(-spade::abs(e))) == -smallest_magnitude);
    CHECK(double(spade::min_coeff(spade::abs(e))) == smallest_magnitude);
    CHECK(std::fabs(double(spade::mean(e)) - total / double(p.values.size())) <=
          2 * (size + 1) * double(std::numeric_limits<T>::epsilon()));
  }
  CHECK(std::fabs(double(spade::squared_norm(o)) - squares) <=
        (squares + 1) * double(p.values.size() + 1) * double(std::numeric_limits<T>::epsilon()));
}

/// Views of views: a block of a block, rows and columns of a block, segments of rows and
/// columns, read and written through the composed offset and stride (one view pointing into the
/// base), overlap inside one base through a temporary, and range errors naming the inner view.
template <class T, class Space, class Layout>
void check_views_of_views(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 31, cols = 33;
  const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  const auto dv = uniform_values<T>(seed, count, -2, 2);
  auto d = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  auto outer = spade::block(d, 2, 3, 20, 25);  // D(2.., 3..)
  const auto value = [&](index_t i, index_t j) { return at(dv, cols, i, j); };

  const dense<T, Space, Layout> inner = spade::block(outer, 1, 2, 5, 6);  // D(3.., 5..)
  const dense<T, Space, row_major> nested =
      spade::block(spade::block(d, 2, 3, 20, 25), 1, 2, 5, 6) * T(2);  // a temporary view
  std::vector<double> want, want_nested;
  for (index_t i = 0; i < 5; ++i)
    for (index_t j = 0; j < 6; ++j) {
      want.push_back(value(3 + i, 5 + j));
      want_nested.push_back(2 * value(3 + i, 5 + j));
    }
  CHECK(mismatches(rowwise_of(on_host(inner)), want, 0) == 0u);
  CHECK(mismatches(rowwise_of(on_host(nested)), want_nested, 0) == 0u);

  const vector<T, Space> r = spade::row(outer, 4);                     // D(6, 3..27)
  const vector<T, Space> c = spade::col(outer, 7);                     // D(2..21, 10)
  const vector<T, Space> s = spade::segment(spade::col(d, 3), 2, 10);  // D(2..11, 3)
  const vector<T, Space> h = spade::head(spade::row(outer, 1), 5);     // D(3, 3..7)
  const vector<T, Space> t = spade::tail(spade::col(outer, 2), 4);     // D(18..21, 5)
  const vector<T, Space> ss = spade::segment(spade::segment(spade::row(d, 0), 3, 20), 4, 6);
  const auto values_of = [&](const vector<T, Space>& v) { return host_values(v); };
  const auto line = [&](index_t n, auto element) {
    std::vector<double> w;
    for (index_t k = 0; k < n; ++k)
      w.push_back(element(k));
    return w;
  };
  CHECK(mismatches(values_of(r), line(25, [&](index_t k) { return value(6, 3 + k); }), 0) == 0u);
  CHECK(mismatches(values_of(c), line(20, [&](index_t k) { return value(2 + k, 10); }), 0) == 0u);
  CHECK(mismatches(values_of(s), line(10, [&](index_t k) { return value(2 + k, 3); }), 0) == 0u);
  CHECK(mismatches(values_of(h), line(5, [&](index_t k) { return value(3, 3 + k); }), 0) == 0u);
  CHECK(mismatches(values_of(t), line(4, [&](index_t k) { return value(18 + k, 5); }), 0) == 0u);
  CHECK(mismatches(values_of(ss), line(6, [&](index_t k) { return value(0, 7 + k); }), 0) == 0u);

  // Writes: a segment of a column, and a block of the block from an overlapping block of it
  // (through a temporary); every other element of D unchanged.
  std::vector<double> expect(dv.begin(), dv.end());
  const auto set = [&](index_t i, index_t j, double v) {
    expect[static_cast<std::size_t>(i) * cols + j] = v;
  };
  spade::segment(spade::col(d, 3), 2, 10) = T(3) * spade::segment(spade::col(d, 4), 0, 10);
  for (index_t k = 0; k < 10; ++k)
    set(2 + k, 3, static_cast<double>(T(3) * static_cast<T>(value(k, 4))));
  std::vector<double> before = expect;
  spade::block(outer, 0, 0, 3, 3) = T(-1) * spade::block(outer, 1, 1, 3, 3);
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 3; ++j)
      set(2 + i, 3 + j, -before[static_cast<std::size_t>(3 + i) * cols + (4 + j)]);
  CHECK(mismatches(rowwise_of(on_host(d)), expect, 0) == 0u);

  CHECK_THROWS_WITH_AS(spade::block(outer, 18, 0, 3, 1),
                       "spade::block(spade::block(D, 2, 3, 20, 25), 18, 0, 3, 1): rows 18..20 "
                       "lies outside spade::block(D, 2, 3, 20, 25) (20x25)",
                       spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::segment(spade::row(outer, 0), 20, 6), spade::dimension_mismatch);
  const std::string text = spade::explain(T(2) * spade::segment(spade::col(d, 3), 2, 10));
  CHECK(contains(text, "input read in place: spade::segment(spade::col(D, 3), 2, 10)"));
}

/// Views as product operands: blocks times matrices (both layouts of the destination, a
/// transposed and scaled block, a block times a block), a matrix times a strided column and a
/// block times a segment, the alpha/beta form C = block * B + C, and a product assigned to its
/// own base through a temporary. On the gpu GEMM and GEMV read the views in place (explain says
/// so); on the cpu they are copied first. Against double sums of the viewed elements.
template <class T, class Space, class Layout>
void check_view_products(std::uint64_t seed) {
  CAPTURE(seed);
  const index_t rows = 31, cols = 33, m = 20, k = 17, n = 9;
  const auto dv = uniform_values<T>(seed, static_cast<std::size_t>(rows) * cols, -1, 1);
  const auto bv = uniform_values<T>(seed + 1, static_cast<std::size_t>(k) * n, -1, 1);
  const auto av = uniform_values<T>(seed + 2, static_cast<std::size_t>(m) * rows, -1, 1);
  auto d = in_space<Space>(dense_from_rowwise<T, Layout>(rows, cols, dv));
  const auto b = in_space<Space>(dense_from_rowwise<T, row_major>(k, n, bv));
  const auto a = in_space<Space>(dense_from_rowwise<T, col_major>(m, rows, av));
  const auto dat = [&](index_t i, index_t j) { return at(dv, cols, i, j); };
  const double ulps = double(k) * k + 4;

  // block(D, 1, 2, m, k) * B and 2 · block(D, 3, 4, k, m)ᵀ * B, into both layouts.
  std::vector<double> want(static_cast<std::size_t>(m) * n), want_t(want.size());
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double sum = 0, sum_t = 0;
      for (index_t l = 0; l < k; ++l) {
        sum += dat(1 + i, 2 + l) * at(bv, n, l, j);
        sum_t += 2 * dat(3 + l, 4 + i) * at(bv, n, l, j);
      }
      want[static_cast<std::size_t>(i) * n + j] = sum;
      want_t[static_cast<std::size_t>(i) * n + j] = sum_t;
    }
  const dense<T, Space, row_major> c = spade::block(d, 1, 2, m, k) * b;
  const dense<T, Space, col_major> cc = spade::block(d, 1, 2, m, k) * b;
  const dense<T, Space, row_major> ct = T(2) * spade::transpose(spade::block(d, 3, 4, k, m)) * b;
  CHECK(mismatches(rowwise_of(on_host(c)), want, ulps) == 0u);
  CHECK(mismatches(rowwise_of(on_host(cc)), want, ulps) == 0u);
  CHECK(mismatches(rowwise_of(on_host(ct)), want_t, ulps) == 0u);

  // A block times a block: block(D, 0, 0, m, k) * block(D, 5, 6, k, n).
  std::vector<double> want_bb(static_cast<std::size_t>(m) * n);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      double sum = 0;
      for (index_t l = 0; l < k; ++l)
        sum += dat(i, l) * dat(5 + l, 6 + j);
      want_bb[static_cast<std::size_t>(i) * n + j] = sum;
    }
  const dense<T, Space, row_major> bb = spade::block(d, 0, 0, m, k) * spade::block(d, 5, 6, k, n);
  CHECK(mismatches(rowwise_of(on_host(bb)), want_bb, ulps) == 0u);

  // A * col(D, 3) (strided in a row-major D) and block(D, 2, 1, m, k) * segment(col(D, 0), 4, k).
  std::vector<double> want_y(static_cast<std::size_t>(m)), want_z(want_y.size());
  for (index_t i = 0; i < m; ++i) {
    double y = 0, z = 0;
    for (index_t l = 0; l < rows; ++l)
      y += at(av, rows, i, l) * dat(l, 3);
    for (index_t l = 0; l < k; ++l)
      z += dat(2 + i, 1 + l) * dat(4 + l, 0);
    want_y[static_cast<std::size_t>(i)] = y;
    want_z[static_cast<std::size_t>(i)] = z;
  }
  const vector<T, Space> y = a * spade::col(d, 3);
  const vector<T, Space> z = spade::block(d, 2, 1, m, k) * spade::segment(spade::col(d, 0), 4, k);
  CHECK(mismatches(host_values(y), want_y, double(rows) * rows + 4) == 0u);
  CHECK(mismatches(host_values(z), want_z, ulps) == 0u);

  // The alpha/beta form with a view operand: C = block * B + C (C holds `want` already).
  dense<T, Space, row_major> acc = c;
  acc = spade::block(d, 1, 2, m, k) * b + acc;
  std::vector<double> twice(want.size());
  for (std::size_t q = 0; q < want.size(); ++q)
    twice[q] = 2 * want[q];
  CHECK(mismatches(rowwise_of(on_host(acc)), twice, 2 * ulps) == 0u);

  // A product written into its own base: through a temporary (D's old values are read).
  std::vector<double> expect(dv.begin(), dv.end());
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j)
      expect[static_cast<std::size_t>(i) * cols + j] = want_bb[static_cast<std::size_t>(i) * n + j];
  spade::block(d, 0, 0, m, n) = spade::block(d, 0, 0, m, k) * spade::block(d, 5, 6, k, n);
  CHECK(mismatches(rowwise_of(on_host(d)), expect, ulps) == 0u);

  // A transposed and scaled block times a plain vector (over D as just written: `expect`).
  const auto xv = uniform_values<T>(seed + 3, static_cast<std::size_t>(k), -1, 1);
  const auto x = in_space<Space>(vector<T, cpu>(xv));
  std::vector<double> want_w(static_cast<std::size_t>(m));
  for (index_t i = 0; i < m; ++i) {
    double w = 0;
    for (index_t l = 0; l < k; ++l)
      w += -3 * expect[static_cast<std::size_t>(6 + l) * cols + (2 + i)] *
           xv[static_cast<std::size_t>(l)];
    want_w[static_cast<std::size_t>(i)] = w;
  }
  const vector<T, Space> w = T(-3) * spade::transpose(spade::block(d, 6, 2, k, m)) * x;
  CHECK(mismatches(host_values(w), want_w, 3 * ulps) == 0u);

  // explain: on the gpu a block times a vector reads the block in place (a strided x copied
  // first); GEMM operands are copied (measured faster); on the cpu every view is copied.
  const std::string gemv_text = spade::explain(spade::block(d, 2, 1, m, k) * x);
  const std::string gemm_text = spade::explain(spade::block(d, 1, 2, m, k) * b);
  CHECK(contains(gemm_text, "temporary"));
  if constexpr (std::is_same_v<Space, gpu>) {
    CHECK(contains(gemv_text, "read in place by cuBLAS with leading dimension"));
    CHECK(contains(spade::explain(spade::block(d, 2, 1, m, rows - 2) *
                                  spade::head(spade::col(d, 3), rows - 2)),
                   std::is_same_v<Layout, row_major> ? "copied into a contiguous vector first"
                                                     : "read in place by cuBLAS with increment 1"));
  } else {
    CHECK(contains(gemv_text, "temporary"));
  }
}

}  // namespace spade::testing
