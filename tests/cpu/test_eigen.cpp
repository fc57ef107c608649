// from_eigen / to_eigen round trips on the cpu: sparse (both storage orders), dense, vector.
#include <doctest/doctest.h>

#include <Eigen/SparseCore>
#include <spade/spade.hpp>
#include <vector>

#include "test_support.hpp"

using spade::cpu;
using spade::index_t;

namespace {
template <class A, class B>
bool same_sparse(const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols() || a.nonZeros() != b.nonZeros()) return false;
  Eigen::SparseMatrix<typename A::Scalar, Eigen::RowMajor, int> ra = a, rb = b;
  for (int i = 0; i < ra.rows(); ++i) {
    typename decltype(ra)::InnerIterator x(ra, i);
    typename decltype(rb)::InnerIterator y(rb, i);
    for (; x && y; ++x, ++y)
      if (x.col() != y.col() || x.value() != y.value()) return false;
    if (x || y) return false;
  }
  return true;
}
}  // namespace

TEST_CASE_TEMPLATE("Eigen sparse ↔ csr keeps pattern, values and explicit zeros", T, float,
                   double) {
  std::vector<Eigen::Triplet<T>> triplets{{0, 2, T(1)}, {2, 0, T(2)}, {2, 3, T(0)}, {1, 1, T(-3)}};
  Eigen::SparseMatrix<T, Eigen::ColMajor> col_major(3, 4);
  col_major.setFromTriplets(triplets.begin(), triplets.end());
  Eigen::SparseMatrix<T, Eigen::RowMajor> row_major = col_major;
  for (const auto& a : {spade::from_eigen(col_major), spade::from_eigen(row_major)}) {
    CHECK(a.rows() == 3);
    CHECK(a.cols() == 4);
    CHECK(a.row_ptr() == std::vector<index_t>{0, 1, 2, 4});
    CHECK(a.col_idx() == std::vector<index_t>{2, 1, 0, 3});
    CHECK(a.values() == std::vector<T>{T(1), T(-3), T(2), T(0)});
    CHECK(same_sparse(spade::to_eigen(a), col_major));
  }
  // Uncompressed Eigen storage (after insert) is handled too.
  Eigen::SparseMatrix<T, Eigen::RowMajor> inserted(2, 2);
  inserted.reserve(Eigen::VectorXi::Constant(2, 4));
  inserted.insert(1, 1) = T(5);
  inserted.insert(0, 1) = T(4);
  CHECK_FALSE(inserted.isCompressed());
  const auto from_inserted = spade::from_eigen(inserted);
  CHECK(from_inserted.row_ptr() == std::vector<index_t>{0, 1, 2});
  CHECK(from_inserted.values() == std::vector<T>{T(4), T(5)});
  const auto coo = spade::convert<spade::coo>(from_inserted);
  CHECK(same_sparse(spade::to_eigen(coo), inserted));
}

TEST_CASE_TEMPLATE("Eigen dense ↔ dense keeps the layout; vectors map to vector", T, float,
                   double) {
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor> c(2, 3);
  c << 1, 2, 3, 4, 5, 6;
  Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = c;
  auto dc = spade::from_eigen(c);
  auto dr = spade::from_eigen(r);
  static_assert(std::is_same_v<decltype(dc), spade::dense<T, cpu, spade::col_major>>);
  static_assert(std::is_same_v<decltype(dr), spade::dense<T, cpu, spade::row_major>>);
  CHECK(dc.values() == std::vector<T>{1, 4, 2, 5, 3, 6});
  CHECK(dr.values() == std::vector<T>{1, 2, 3, 4, 5, 6});
  CHECK(spade::to_eigen(dc) == c);
  CHECK(spade::to_eigen(dr) == r);
  // Expressions and blocks are evaluated.
  auto block = spade::from_eigen(c.block(0, 1, 2, 2) * T(2));
  CHECK(block(1, 1) == T(12));
  Eigen::Matrix<T, Eigen::Dynamic, 1> x(3);
  x << 7, 8, 9;
  auto v = spade::from_eigen(x);
  static_assert(std::is_same_v<decltype(v), spade::vector<T, cpu>>);
  CHECK(v.size() == 3);
  CHECK(spade::to_eigen(v) == x);
  Eigen::Matrix<T, 0, 0> none;
  CHECK(spade::from_eigen(Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>(0, 0)).rows() == 0);
  (void)none;
}

TEST_CASE("from_eigen → to_eigen on every real matrix") {
  for (const auto& path : spade::testing::real_matrices()) {
    CAPTURE(path.string());
    const auto a = spade::read_matrix_market<double>(path);
    const Eigen::SparseMatrix<double, Eigen::RowMajor, int> e = spade::to_eigen(a);
    CHECK(e.nonZeros() == a.nnz());
    const Eigen::SparseMatrix<double, Eigen::ColMajor, int> col = e;
    const auto back = spade::from_eigen(col);
    CHECK(back.row_ptr() == a.row_ptr());
    CHECK(back.col_idx() == a.col_idx());
    CHECK(back.values() == a.values());
  }
}
