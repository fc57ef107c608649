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

TEST_CASE_TEMPLATE("SDDMM samples X * transpose(Y) at a csr's entries without forming it", T, float,
                   double) {
  using spade::testing::check_sddmm;
  const std::uint64_t seed = spade::testing::fresh_seed();
  check_sddmm<T, cpu, row_major, row_major>(33, 31, 64, seed);
  check_sddmm<T, cpu, col_major, row_major>(31, 33, 7, seed + 1);
  check_sddmm<T, cpu, row_major, col_major>(40, 37, 257, seed + 2);
  check_sddmm<T, cpu, row_major, row_major>(1, 1, 1, seed + 3);
  check_sddmm<T, cpu, row_major, row_major>(5, 4, 0, seed + 4);
  check_sddmm<T, cpu, row_major, row_major>(0, 0, 3, seed + 5);
  spade::testing::check_sddmm_of_empty<T, cpu>();
  check_sddmm<T, cpu, row_major, row_major, spade::kernels::eigen_sddmm>(33, 31, 16, seed + 6);

  const spade::csr<T, cpu> s(3, 2, {0, 1, 1, 2}, {1, 0}, {T(2), T(3)});
  const spade::dense<T, cpu> x(3, 4), y(2, 4), z(2, 5), w(3, 4);
  CHECK_THROWS_AS(spade::cwise_product(s, x * spade::transpose(z)), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::cwise_product(s, x * spade::transpose(w)), spade::dimension_mismatch);
  const std::string text = spade::explain(spade::cwise_product(s, x * spade::transpose(y)));
  CHECK(spade::testing::contains(text, "SDDMM -> csr<"));
  CHECK(spade::testing::contains(text, "eigen_sddmm"));
  CHECK(spade::testing::contains(text, "(A*B never formed)"));
}

TEST_CASE_TEMPLATE("views read and write blocks, rows, columns and segments in place", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_views<T, cpu, row_major>(31, 33, seed);
  spade::testing::check_views<T, cpu, col_major>(33, 31, seed + 1);
  spade::testing::check_views<T, cpu, row_major>(3, 3, seed + 2);
  spade::testing::check_view_errors<T, cpu>();

  spade::dense<T, cpu> d(4, 5);
  const std::string text = spade::explain(spade::exp(spade::block(d, 1, 1, 2, 3)));
  CHECK(spade::testing::contains(text, "input read in place: spade::block(D, 1, 1, 2, 3)"));
  CHECK(spade::testing::contains(text, "with stride 5 (no copy)"));
}

TEST_CASE_TEMPLATE("rows(A, first, count): the csr of a row range", T, float, double) {
  spade::testing::check_row_range<T, cpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("cwise_product of two sparse operands keeps the entries both store", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_sparse_intersection<T, cpu>(41, 37, seed);
  spade::testing::check_sparse_intersection<T, cpu>(1, 1, seed + 1);
  spade::testing::check_sparse_intersection<T, cpu>(0, 0, seed + 2);
  spade::testing::check_sparse_intersection<T, cpu>(300, 2000, seed + 3);
  const spade::csr<T, cpu> a = spade::csr<T, cpu>::identity(3);
  const std::string text = spade::explain(spade::cwise_product(a, a));
  CHECK(spade::testing::contains(text, "cwise_product of two sparse operands -> csr<"));
}

TEST_CASE_TEMPLATE("cast<U> of a csr: the pattern kept, the values converted", T, float, double) {
  spade::testing::check_sparse_cast<T, cpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("cast<half> and cast<bfloat16>: rounded to nearest even bit for bit, exact back",
                   T, float, double) {
  spade::testing::check_reduced_precision<T, cpu>({0, 1, 33, 100003}, spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE(
    "cast, as_diagonal scaling and cwise_product with a dense matrix of a coo or an ellr: the csr "
    "of its entries",
    T, float, double) {
  spade::testing::check_other_sparse_formats<T, cpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("views of views: blocks of blocks, rows, columns and segments of views", T,
                   float, double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_views_of_views<T, cpu, row_major>(seed);
  spade::testing::check_views_of_views<T, cpu, col_major>(seed + 1);
}

TEST_CASE_TEMPLATE("views as product operands: blocks, rows, columns and segments", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_view_products<T, cpu, row_major>(seed);
  spade::testing::check_view_products<T, cpu, col_major>(seed + 1);
}
