// The element-wise language on cpu objects (Eigen arrays underneath), against std:: element by
// element: every function and operator, NaN/Inf, aliasing, reductions, sparse values maps,
// and the errors of bad shapes.
#include <doctest/doctest.h>

#include <spade/spade.hpp>
#include <string>

#include "cwise_cases.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::row_major;

TEST_CASE_TEMPLATE("every element-wise function and operator matches std::, in either layout", T,
                   float, double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (auto [rows, cols] : {std::pair<int, int>{0, 0}, {1, 1}, {31, 33}, {33, 31}, {1, 40}}) {
    spade::testing::check_every_operation<T, cpu, row_major>(rows, cols, seed);
    spade::testing::check_every_operation<T, cpu, col_major>(rows, cols, seed + 1);
  }
}

TEST_CASE_TEMPLATE("NaN and Inf go through every function as std:: takes them", T, float, double) {
  spade::testing::check_nan_and_inf<T, cpu>();
}

TEST_CASE_TEMPLATE("an element-wise expression that reads its destination writes it in place", T,
                   float, double) {
  spade::testing::check_aliasing<T, cpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("reductions match a long double sum and repeat bit for bit", T, float, double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (std::size_t n : {0, 1, 31, 33, 1000003})
    spade::testing::check_reductions<T, cpu>(n, seed);
}

TEST_CASE_TEMPLATE("unary maps of a sparse operand keep its pattern", T, float, double) {
  spade::testing::check_sparse_values<T, cpu>(spade::testing::fresh_seed());
}

TEST_CASE("mismatched shapes name both; products inside an element-wise tree run first") {
  using D = spade::dense<double, cpu>;
  const D a(2, 3), b(3, 2);
  try {
    D c = spade::cwise_product(a, b);
    FAIL("no dimension_mismatch");
  } catch (const spade::dimension_mismatch& e) {
    CHECK(spade::testing::contains(e.what(), "cwise_product: lhs is 2x3, rhs is 3x2"));
  }
  CHECK_THROWS_AS(D(spade::exp(a) + b), spade::dimension_mismatch);
  // y = exp(A x) - x with A = 2 I: the product is evaluated, the rest fused.
  const auto A = spade::csr<double, cpu>(2.0 * spade::csr<double, cpu>::identity(4));
  spade::vector<double, cpu> x(std::vector<double>{0.0, 0.5, -1.0, 2.0});
  spade::vector<double, cpu> y = spade::exp(A * x) - x;
  for (int i = 0; i < 4; ++i)
    CHECK(y(i) == doctest::Approx(std::exp(2 * x(i)) - x(i)));
  // x = exp(A' x) with A' non-square: the product runs before x is reshaped.
  const auto wide = spade::csr<double, cpu>(2, 4, {0, 1, 2}, {0, 3}, {1.0, 1.0});
  x = spade::exp(wide * x);
  REQUIRE(x.size() == 2);
  CHECK(x(0) == doctest::Approx(1.0));
  CHECK(x(1) == doctest::Approx(std::exp(2.0)));
}

TEST_CASE("a vector of 1000003 elements maps in one pass") {
  const auto v =
      spade::testing::uniform_values<double>(spade::testing::fresh_seed(), 1000003, -3, 3);
  const spade::vector<double, cpu> x(v);
  const spade::vector<double, cpu> y = spade::exp(-spade::square(x)) * 0.5;
  std::vector<double> want(v.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    want[k] = std::exp(-v[k] * v[k]) * 0.5;
  CHECK(spade::testing::mismatches(y.values(), want, 4) == 0u);
}

TEST_CASE_TEMPLATE("row_sums, col_sums and diagonal of dense trees and of a csr", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (auto [rows, cols] :
       {std::pair<int, int>{0, 0}, {1, 1}, {5, 0}, {0, 5}, {31, 33}, {33, 31}, {3000, 3}}) {
    spade::testing::check_vector_reductions<T, cpu, row_major>(rows, cols, seed);
    spade::testing::check_vector_reductions<T, cpu, col_major>(rows, cols, seed + 1);
  }
  spade::testing::check_sparse_vector_reductions<T, cpu>(seed);
}

TEST_CASE_TEMPLATE("as_diagonal scales rows and columns; a csr keeps its pattern", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_diagonal_scaling<T, cpu, row_major>(seed);
  spade::testing::check_diagonal_scaling<T, cpu, col_major>(seed + 5);
}

TEST_CASE_TEMPLATE("cwise_product of a csr and a dense matrix keeps the csr's pattern", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_masked_product<T, cpu, row_major>(seed);
  spade::testing::check_masked_product<T, cpu, col_major>(seed + 3);
}
