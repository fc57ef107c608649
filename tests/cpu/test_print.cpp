// Printing (std::ostream <<), the constructors zeros / ones / constant / identity and element
// access of cpu objects: the texts expected are written out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <iomanip>
#include <spade/spade.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::index_t;
using spade::row_major;
using spade::testing::contains;

namespace {

template <class X>
std::string printed(const X& x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("a dense matrix prints a header line and right-aligned rows, in either layout") {
  // [[1, 2.5, -3], [10, 0, 4]]
  const spade::dense<double, cpu, row_major> rows(2, 3, std::vector<double>{1, 2.5, -3, 10, 0, 4});
  const spade::dense<double, cpu, col_major> cols(2, 3, std::vector<double>{1, 10, 2.5, 0, -3, 4});
  CHECK(printed(rows) ==
        "dense(row_major)<double, cpu> 2x3\n"
        " 1  2.5  -3\n"
        "10    0   4\n");
  CHECK(printed(cols) ==
        "dense(col_major)<double, cpu> 2x3\n"
        " 1  2.5  -3\n"
        "10    0   4\n");
  // The stream's precision and format apply to the values.
  const spade::dense<float, cpu> pi(1, 1, std::vector<float>{3.14159265f});
  std::ostringstream out;
  out << std::setprecision(3) << pi;
  CHECK(out.str() == "dense(row_major)<float, cpu> 1x1\n3.14\n");
  std::ostringstream fixed;
  fixed << std::fixed << std::setprecision(1) << pi;
  CHECK(fixed.str() == "dense(row_major)<float, cpu> 1x1\n3.1\n");
  // Nothing to show: the header alone.
  CHECK(printed(spade::dense<float, cpu>()) == "dense(row_major)<float, cpu> 0x0\n");
}

TEST_CASE("a vector prints as a column") {
  const spade::vector<float, cpu> x(std::vector<float>{1, -2, 3});
  CHECK(printed(x) == "vector<float, cpu> 3\n 1\n-2\n 3\n");
}

TEST_CASE("more than 12 rows or columns show the first and last 5 around ...") {
  const auto id = spade::dense<double, cpu>::identity(20);
  const std::string text = printed(id);
  CAPTURE(text);
  CHECK(lines_of(text) == 1 + 11);  // header, 5 rows, "...", 5 rows
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "dense(row_major)<double, cpu> 20x20");
  std::getline(lines, line);  // row 0: 1, four zeros, ..., five zeros
  CHECK(line == "  1    0    0    0    0  ...    0    0    0    0    0");
  for (int r = 1; r < 6; ++r)
    std::getline(lines, line);  // the gap row
  CHECK(line == "...  ...  ...  ...  ...  ...  ...  ...  ...  ...  ...");
  for (int r = 0; r < 5; ++r)
    std::getline(lines, line);  // row 19: its last entry is 1
  CHECK(line == "  0    0    0    0    0  ...    0    0    0    0    1");
  // A 12-element vector shows all; 13 elide.
  CHECK(lines_of(printed(spade::vector<double, cpu>::ones(12))) == 1 + 12);
  CHECK(lines_of(printed(spade::vector<double, cpu>::ones(13))) == 1 + 11);
}

TEST_CASE("a sparse matrix prints its stored entries, at most 20") {
  const spade::csr<double, cpu> a(3, 4, {0, 1, 1, 2}, {1, 3}, {2.0, -1.5});
  CHECK(printed(a) ==
        "csr<double, cpu> 3x4, nnz 2\n"
        "(0, 1)     2\n"
        "(2, 3)  -1.5\n");
  // A coo lists the same entries (summed in row order) under its own header.
  const spade::coo<double, cpu> c(3, 4, {2, 0}, {3, 1}, {-1.5, 2.0});
  CHECK(printed(c) ==
        "coo<double, cpu> 3x4, nnz 2\n"
        "(0, 1)     2\n"
        "(2, 3)  -1.5\n");
  const std::string many = printed(spade::csr<float, cpu>::identity(30));
  CAPTURE(many);
  CHECK(
      contains(many, "csr<float, cpu> 30x30, nnz 30\n  (0, 0)  1\n"));  // "(19, 19)" sets the width
  CHECK(contains(many, "(19, 19)  1\n... (10 more stored entries)\n"));
  CHECK(lines_of(many) == 1 + 20 + 1);
  CHECK(printed(spade::csr<float, cpu>(0, 5)) == "csr<float, cpu> 0x5, nnz 0\n");
}

TEST_CASE("an expression prints its value, evaluated into its natural type") {
  const spade::dense<double, cpu> d(1, 2, std::vector<double>{1, -2});
  CHECK(printed(d + d) == "dense(row_major)<double, cpu> 1x2\n2  -4\n");
  CHECK(printed(3.0 * spade::transpose(d)) == "dense(row_major)<double, cpu> 2x1\n 3\n-6\n");
  const auto id = spade::csr<double, cpu>::identity(2);
  CHECK(printed(id * id) == "csr<double, cpu> 2x2, nnz 2\n(0, 0)  1\n(1, 1)  1\n");
}

TEST_CASE_TEMPLATE("zeros, ones, constant and identity", T, float, double) {
  using row_dense = spade::dense<T, cpu, row_major>;
  using col_dense = spade::dense<T, cpu, col_major>;
  const auto z = row_dense::zeros(2, 3);
  CHECK(z.rows() == 2);
  CHECK(z.cols() == 3);
  CHECK(z.values() == std::vector<T>(6, T(0)));
  CHECK(row_dense::ones(3, 2).values() == std::vector<T>(6, T(1)));
  CHECK(col_dense::constant(2, 2, T(-0.5)).values() == std::vector<T>(4, T(-0.5)));
  const auto id = col_dense::identity(3);
  for (index_t i = 0; i < 3; ++i)
    for (index_t j = 0; j < 3; ++j)
      CHECK(id(i, j) == (i == j ? T(1) : T(0)));
  CHECK(row_dense::identity(0).rows() == 0);

  using vec = spade::vector<T, cpu>;
  CHECK(vec::zeros(4).values() == std::vector<T>(4, T(0)));
  CHECK(vec::ones(2).values() == std::vector<T>(2, T(1)));
  CHECK(vec::constant(3, T(7)).values() == std::vector<T>(3, T(7)));
  CHECK(vec::zeros(0).size() == 0);

  const auto sparse_id = spade::csr<T, cpu>::identity(3);
  CHECK(sparse_id.nnz() == 3);
  CHECK(sparse_id.row_ptr() == std::vector<index_t>{0, 1, 2, 3});
  CHECK(sparse_id.col_idx() == std::vector<index_t>{0, 1, 2});
  CHECK(sparse_id.values() == std::vector<T>(3, T(1)));
  // I·A = A, checked against Eigen.
  const auto a = spade::random_sparse<T>(3, 5, 0.4, spade::testing::fresh_seed());
  const spade::csr<T, cpu> product = sparse_id * a;
  CHECK(spade::to_eigen(product).isApprox(spade::to_eigen(a)));

  CHECK_THROWS_AS(row_dense::zeros(-1, 2), spade::invalid_matrix);
  CHECK_THROWS_AS(row_dense::constant(2, -3, T(1)), spade::invalid_matrix);
  CHECK_THROWS_AS(row_dense::identity(-2), spade::invalid_matrix);
  CHECK_THROWS_AS(vec::ones(-1), spade::invalid_matrix);
  CHECK_THROWS_AS((spade::csr<T, cpu>::identity(-1)), spade::invalid_matrix);
}

TEST_CASE("element access reads and writes cpu objects and rejects indices outside them") {
  auto d = spade::dense<double, cpu, col_major>::zeros(2, 3);
  d(1, 2) = 5.0;
  CHECK(d.values()[d.offset(1, 2)] == 5.0);
  const auto& seen = d;
  CHECK(seen(1, 2) == 5.0);
  CHECK_THROWS_AS(d(2, 0), spade::dimension_mismatch);
  CHECK_THROWS_AS(seen(0, 3), spade::dimension_mismatch);
  CHECK_THROWS_AS(d(-1, 0), spade::dimension_mismatch);
  try {
    (void)d(0, 7);
    FAIL("no exception");
  } catch (const spade::dimension_mismatch& e) {
    CHECK(std::string(e.what()) == "dense: element (0, 7) is outside the 2x3 matrix");
  }

  auto x = spade::vector<float, cpu>::zeros(3);
  x(0) = 1.5f;
  x[2] = -1.0f;
  CHECK(x.values() == std::vector<float>{1.5f, 0.0f, -1.0f});
  CHECK_THROWS_AS(x(3), spade::dimension_mismatch);
  CHECK_THROWS_AS(x[-1], spade::dimension_mismatch);
  const auto& cx = x;
  CHECK(cx[0] == 1.5f);
  CHECK_THROWS_AS(cx(5), spade::dimension_mismatch);

  // A write through D(i, j) drops what was derived from the old values (sparse_view's gcoo).
  auto m = spade::dense<double, cpu>::identity(3);
  const auto id = spade::dense<double, cpu>::identity(3);
  const spade::dense<double, cpu> before = spade::sparse_view(m) * id;
  m(0, 1) = 2.0;
  const spade::dense<double, cpu> after = spade::sparse_view(m) * id;
  CHECK(before(0, 1) == 0.0);
  CHECK(after(0, 1) == 2.0);
}
