// multi_gpu operands on clusters of 1 .. every visible GPU: distribute / gather round trips,
// every expression kind against the single-GPU result and an independent double-precision
// host reference (products within k·ε of the row's magnitude, SpGEMM patterns exact), empty
// parts, a distributed CG with the single-GPU iteration count, explain, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <spade/spade.hpp>

#include "conjugate_gradients.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::multi_gpu;
using spade::row_major;
using spade::testing::conjugate_gradients;
using spade::testing::contains;
using spade::testing::fresh_seed;
using spade::testing::splitmix64;

namespace {

using vector_d = spade::vector<double, multi_gpu>;

int visible_gpus() {
  int count = 0;
  std::string reason;
  if (!spade::device_available(&reason)) return 0;
  // One cluster of every GPU, opened once: its size is the count.
  static const int seen = spade::cluster::local().size();
  count = seen;
  return count;
}

/// One cluster per size from 1 to every visible GPU, kept for the whole run (opening NCCL
/// communicators takes a while).
const std::vector<spade::cluster>& clusters() {
  // Never destroyed: communicators torn down after the CUDA runtime at exit would fail.
  static const auto* all = [] {
    auto* made = new std::vector<spade::cluster>;
    for (int n = 1; n <= visible_gpus(); ++n)
      made->push_back(spade::cluster::local(n));
    return made;
  }();
  return *all;
}

template <class T>
double eps() {
  return std::numeric_limits<T>::epsilon();
}

/// |got - want| <= k·ε·scale + tiny at every position, where scale is the row's Σ|a||x| (the
/// error bound of a dot product in any summation order), both read on the host.
template <class T>
void check_close(const std::vector<T>& got, const std::vector<double>& want,
                 const std::vector<double>& scale, double k) {
  REQUIRE(got.size() == want.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double bound = k * eps<T>() * scale[i] + 1e-300;
    if (!(std::abs(static_cast<double>(got[i]) - want[i]) <= bound)) ++wrong;
  }
  CHECK(wrong == 0u);
}

/// y = A·X in double on the host, and Σ|a||x| per element, X rows × width in row-major order.
template <class T>
void host_product(const spade::csr<T, cpu>& a, const std::vector<double>& x, index_t width,
                  std::vector<double>& y, std::vector<double>& scale) {
  y.assign(static_cast<std::size_t>(a.rows()) * width, 0.0);
  scale.assign(y.size(), 0.0);
  for (index_t r = 0; r < a.rows(); ++r)
    for (index_t k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k)
      for (index_t j = 0; j < width; ++j) {
        const double v = static_cast<double>(a.values()[k]) *
                         x[static_cast<std::size_t>(a.col_idx()[k]) * width + j];
        y[static_cast<std::size_t>(r) * width + j] += v;
        scale[static_cast<std::size_t>(r) * width + j] += std::abs(v);
      }
}

template <class T, class L>
std::vector<double> row_major_values(const spade::dense<T, cpu, L>& d) {
  std::vector<double> out(static_cast<std::size_t>(d.rows()) * d.cols());
  for (index_t r = 0; r < d.rows(); ++r)
    for (index_t c = 0; c < d.cols(); ++c)
      out[static_cast<std::size_t>(r) * d.cols() + c] = static_cast<double>(d(r, c));
  return out;
}

template <class T, class L>
std::vector<T> row_major_of(const spade::dense<T, cpu, L>& d) {
  std::vector<T> out(static_cast<std::size_t>(d.rows()) * d.cols());
  for (index_t r = 0; r < d.rows(); ++r)
    for (index_t c = 0; c < d.cols(); ++c)
      out[static_cast<std::size_t>(r) * d.cols() + c] = d(r, c);
  return out;
}

/// Shapes that exercise the partition: single rows, odd sizes, empty rows, more GPUs than
/// rows (1 row), a long row among short ones.
struct shape {
  index_t rows, cols;
  double density, row_fraction;
};
const shape shapes[] = {{1, 1, 1.0, 1.0},    {1, 40, 0.3, 1.0},       {31, 33, 0.2, 0.8},
                        {33, 31, 0.15, 0.5}, {1000, 1000, 0.01, 0.9}, {0, 0, 0.0, 1.0},
                        {7, 0, 0.0, 1.0}};

template <class T>
spade::csr<T, cpu> input_matrix(const shape& s, splitmix64& rng) {
  auto a = spade::testing::random_csr<T>(s.rows, s.cols, s.density, rng, s.row_fraction);
  if (s.rows >= 100) a = spade::testing::with_long_rows(a, {s.rows / 2}, s.cols, rng);
  return a;
}

/// Runs f(where, shape, a, da) for every cluster and every shape: A drawn from rng, da its split
/// over the cluster (the cluster's size and the shape are captured for the failure report).
template <class T, class F>
void over_clusters_and_shapes(splitmix64& rng, F&& f) {
  for (const auto& where : clusters()) {
    CAPTURE(where.size());
    for (const shape& s : shapes) {
      CAPTURE(s.rows);
      CAPTURE(s.cols);
      const auto a = input_matrix<T>(s, rng);
      f(where, s, a, spade::distribute(a, where));
    }
  }
}

/// A vector split like `da`'s rows, every element NaN: a product that leaves one unwritten fails.
template <class T>
spade::vector<T, multi_gpu> nan_vector_like(const spade::csr<T, multi_gpu>& da) {
  return spade::distribute(
      spade::vector<T, cpu>(
          std::vector<T>(static_cast<std::size_t>(da.rows()), std::numeric_limits<T>::quiet_NaN())),
      da);
}

/// n values in [-1, 1), none zero.
template <class T>
std::vector<T> nonzero_values(index_t n, splitmix64& rng) {
  std::vector<T> values(static_cast<std::size_t>(n));
  for (auto& e : values)
    e = spade::testing::nonzero_value<T>(rng);
  return values;
}

}  // namespace

TEST_CASE_TEMPLATE("distribute and gather give back every csr, dense and vector", T, float,
                   double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  over_clusters_and_shapes<T>(
      rng, [&](const auto& where, const shape&, const auto& a, const auto& da) {
        const index_t rows = a.rows();
        CHECK(da.rows() == a.rows());
        CHECK(da.cols() == a.cols());
        CHECK(da.nnz() == a.nnz());
        CHECK(da.partition().parts() == where.size());
        spade::testing::check_same(spade::gather(da), a);
        const auto copy = da;  // deep, each part on its GPU
        spade::testing::check_same(spade::gather(copy), a);

        const auto x = spade::testing::random_dense<T, row_major>(rows, 3, 0.1, rng, true);
        spade::testing::check_same(spade::gather(spade::distribute(x, where)), x);
        const auto xc = spade::testing::random_dense<T, col_major>(rows, 2, 0.1, rng);
        spade::testing::check_same(spade::gather(spade::distribute(xc, da)), xc);
        const spade::vector<T, cpu> vec(nonzero_values<T>(rows, rng));
        const auto dv = spade::distribute(vec, da);
        CHECK(dv.partition() == da.partition());
        spade::testing::check_same(spade::gather(dv), vec);
      });
}

TEST_CASE_TEMPLATE("multi_gpu SpMV and SpMM equal the single-GPU product within k eps", T, float,
                   double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  over_clusters_and_shapes<T>(
      rng, [&](const auto& where, const shape&, const auto& a, const auto& da) {
        const index_t cols = a.cols();
        // x split evenly: not like A's columns, so the halo covers a real exchange.
        const std::vector<T> xv = nonzero_values<T>(cols, rng);
        const spade::vector<T, cpu> x(xv);
        const auto dx = spade::distribute(x, where);
        spade::vector<T, multi_gpu> y = nan_vector_like(da);
        y = da * dx;
        CHECK(y.size() == a.rows());
        CHECK(y.partition() == da.partition());
        std::vector<double> want, scale;
        host_product(a, std::vector<double>(xv.begin(), xv.end()), 1, want, scale);
        check_close(spade::gather(y).values(), want, scale, 2.0 * (cols + 2));
        // Against the single-GPU product, within the same bound.
        const spade::vector<T, gpu> single = spade::to_gpu(a) * spade::to_gpu(x);
        const auto single_host = spade::to_cpu(single);
        const std::vector<double> single_values(single_host.values().begin(),
                                                single_host.values().end());
        check_close(spade::gather(y).values(), single_values, scale, 4.0 * (cols + 2));

        const auto check_spmm = [&](auto layout_tag) {
          using L = decltype(layout_tag);
          CAPTURE(L::name);
          const auto b = spade::testing::random_dense<T, L>(cols, 5, 0.0, rng);
          const auto db = spade::distribute(b, where);
          const spade::dense<T, multi_gpu, L> c = da * db;
          std::vector<double> want_c, scale_c;
          host_product(a, row_major_values(b), 5, want_c, scale_c);
          check_close(row_major_of(spade::gather(c)), want_c, scale_c, 2.0 * (cols + 2));
        };
        check_spmm(row_major{});
        check_spmm(col_major{});
      });
}

TEST_CASE_TEMPLATE("both halo paths of a multi_gpu product, overlapped and stacked, are right", T,
                   float, double) {
  // distributed_spmm runs a product either overlapped (local product during the exchange, then
  // the halo rows' product added in) or stacked (after the exchange, the renumbered rows times
  // X_p stacked over the halo); the planner picks one, so each is forced here.
  if (spade::testing::no_device("multi_gpu tests")) return;
  using spade::detail::halo_product;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  over_clusters_and_shapes<T>(rng, [&](const auto& where, const shape&, const auto& a,
                                       const auto& da) {
    const index_t rows = a.rows(), cols = a.cols();
    const std::vector<T> xv = nonzero_values<T>(cols, rng);
    const auto dx = spade::distribute(spade::vector<T, cpu>(xv), where);
    const auto b = spade::testing::random_dense<T, row_major>(cols, 3, 0.0, rng);
    const auto db = spade::distribute(b, where);
    std::vector<double> want, scale, want_c, scale_c;
    host_product(a, std::vector<double>(xv.begin(), xv.end()), 1, want, scale);
    host_product(a, row_major_values(b), 3, want_c, scale_c);
    for (const halo_product how : {halo_product::overlapped, halo_product::stacked}) {
      CAPTURE(static_cast<int>(how));
      spade::vector<T, multi_gpu> y = nan_vector_like(da);
      spade::detail::distributed_spmm(da, dx, y, how);
      CHECK(y.partition() == da.partition());
      check_close(spade::gather(y).values(), want, scale, 2.0 * (cols + 2));
      spade::dense<T, multi_gpu, row_major> c = spade::distribute(
          spade::dense<T, cpu, row_major>::constant(rows, 3, std::numeric_limits<T>::quiet_NaN()),
          da);
      spade::detail::distributed_spmm(da, db, c, how);
      CHECK(c.partition() == da.partition());
      check_close(row_major_of(spade::gather(c)), want_c, scale_c, 2.0 * (cols + 2));
      // Twice: the second call reuses the cached plan (and the stacked path's renumbered A).
      spade::detail::distributed_spmm(da, db, c, how);
      check_close(row_major_of(spade::gather(c)), want_c, scale_c, 2.0 * (cols + 2));
    }
  });
}

TEST_CASE_TEMPLATE("multi_gpu SpGEMM has the single-GPU pattern and close values", T, float,
                   double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  over_clusters_and_shapes<T>(rng, [&](const auto& where, const shape& s, const auto& a,
                                       const auto& da) {
    const auto b = spade::testing::random_csr<T>(s.cols, s.rows + 3, s.density, rng, 0.7);
    const auto db = spade::distribute(b, where);
    const spade::csr<T, multi_gpu> dc = da * db;
    const auto got = spade::gather(dc);
    const auto single = spade::to_cpu(spade::csr<T, gpu>(spade::to_gpu(a) * spade::to_gpu(b)));
    CHECK(dc.nnz() == single.nnz());
    CHECK(got.row_ptr() == single.row_ptr());
    CHECK(got.col_idx() == single.col_idx());
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < got.values().size(); ++k) {
      const double g = got.values()[k], w = single.values()[k];
      if (!(std::abs(g - w) <= 8 * (s.cols + 2) * eps<T>() * std::max(1.0, std::abs(w)))) ++wrong;
    }
    CHECK(wrong == 0u);
    // A·A with A square: the halo of A over its own rows.
    if (s.rows == s.cols && s.rows > 0) {
      const spade::csr<T, multi_gpu> aa = da * da;
      const auto single_aa = spade::to_cpu(spade::csr<T, gpu>(spade::to_gpu(a) * spade::to_gpu(a)));
      CHECK(spade::gather(aa).col_idx() == single_aa.col_idx());
    }
  });
}

/// Aᵀ on the host, written out here: entry (r, c) of A goes to row c of Aᵀ in the order of r.
template <class T>
spade::csr<T, cpu> host_transpose(const spade::csr<T, cpu>& a) {
  std::vector<index_t> ptr(static_cast<std::size_t>(a.cols()) + 1, 0);
  for (const index_t c : a.col_idx())
    ++ptr[static_cast<std::size_t>(c) + 1];
  for (std::size_t i = 1; i < ptr.size(); ++i)
    ptr[i] += ptr[i - 1];
  std::vector<index_t> col(a.col_idx().size());
  std::vector<T> val(a.values().size());
  std::vector<index_t> next(ptr.begin(), ptr.end() - 1);
  for (index_t r = 0; r < a.rows(); ++r)
    for (index_t k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k) {
      const auto at = static_cast<std::size_t>(next[static_cast<std::size_t>(a.col_idx()[k])]++);
      col[at] = r;
      val[at] = a.values()[k];
    }
  return spade::csr<T, cpu>(a.cols(), a.rows(), std::move(ptr), std::move(col), std::move(val));
}

TEST_CASE_TEMPLATE("multi_gpu transposes: the host transpose bit for bit, and in expressions", T,
                   float, double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  over_clusters_and_shapes<T>(rng, [&](const auto& where, const shape& s, const auto& plain,
                                       const auto&) {
    // A NaN, a -0 and a stored zero among the values: a transpose copies them, bit for bit.
    auto a = plain;
    if (a.nnz() >= 3) {
      a.values()[0] = std::numeric_limits<T>::quiet_NaN();
      a.values()[1] = T(-0.0);
      a.values()[2] = T(0);
    }
    const auto da = spade::distribute(a, where);
    const spade::csr<T, multi_gpu> dt = spade::transpose(da);
    CHECK(dt.rows() == s.cols);
    CHECK(dt.cols() == s.rows);
    CHECK(dt.nnz() == a.nnz());
    // Square: split like A; else equal blocks.
    REQUIRE(dt.partition().parts() == where.size());
    if (s.rows == s.cols) {
      CHECK(dt.partition() == da.partition());
    } else {
      for (int p = 0; p < where.size(); ++p)
        CHECK(std::abs(dt.partition().size(p) - s.cols / where.size()) <= 1);
    }
    spade::testing::check_same(spade::gather(dt), host_transpose(a));
    // Twice: A again, split like A's columns' partition of the transpose.
    spade::testing::check_same(spade::gather(spade::csr<T, multi_gpu>(spade::transpose(dt))), a);
    if (s.rows == 0 || s.cols == 0) return;
    // Aᵀ·x with x split like A's rows, against the host product of the host transpose.
    const auto dp = spade::distribute(plain, where);
    const auto x_host = nonzero_values<T>(s.rows, rng);
    const auto dx = spade::distribute(spade::vector<T, cpu>(x_host), dp);
    const spade::vector<T, multi_gpu> y = spade::transpose(dp) * dx;
    std::vector<double> want, scale;
    host_product(host_transpose(plain), std::vector<double>(x_host.begin(), x_host.end()), 1, want,
                 scale);
    check_close(spade::gather(y).values(), want, scale, 2.0 * (s.rows + 2));
    // A + Aᵀ (square: split alike) against the host's, and a transposed product.
    if (s.rows == s.cols) {
      const spade::csr<T, multi_gpu> sym = dp + spade::transpose(dp);
      const spade::csr<T, cpu> want_sym = plain + host_transpose(plain);
      const auto got_sym = spade::gather(sym);
      CHECK(got_sym.row_ptr() == want_sym.row_ptr());
      CHECK(got_sym.col_idx() == want_sym.col_idx());
      CHECK(got_sym.values() == want_sym.values());  // one rounding each side: the same
      const spade::csr<T, multi_gpu> ata = spade::transpose(dp * dp);
      const auto single =
          spade::to_cpu(spade::csr<T, gpu>(spade::to_gpu(plain) * spade::to_gpu(plain)));
      CHECK(spade::gather(ata).col_idx() == host_transpose(single).col_idx());
    }
  });
}

TEST_CASE_TEMPLATE("multi_gpu element-wise trees, sums and reductions run part by part", T, float,
                   double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  for (const auto& where : clusters()) {
    CAPTURE(where.size());
    for (index_t n : {1, 31, 33, 1000}) {
      CAPTURE(n);
      const auto xd = spade::testing::random_dense<T, row_major>(n, 1, 0.0, rng);
      const auto yd = spade::testing::random_dense<T, row_major>(n, 1, 0.0, rng);
      const spade::vector<T, cpu> x(xd.values()), y(yd.values());
      const auto dx = spade::distribute(x, where);
      const auto dy = spade::distribute(y, where);
      const spade::vector<T, multi_gpu> z = T(2) * dx - T(0.5) * dy;
      const spade::vector<T, multi_gpu> w =
          spade::cwise_product(dx, dy) + spade::sqrt(spade::abs(dx));
      const auto zc = spade::gather(z);
      const auto wc = spade::gather(w);
      for (std::size_t i = 0; i < x.values().size(); ++i) {
        const double xi = x.values()[i], yi = y.values()[i];
        CHECK(std::abs(zc.values()[i] - (2 * xi - 0.5 * yi)) <= 4 * eps<T>() * (2 + std::abs(xi)));
        CHECK(std::abs(wc.values()[i] - (xi * yi + std::sqrt(std::abs(xi)))) <= 4 * eps<T>() * 2);
      }
      // Reductions: each part's, combined; against the host in double.
      double dot = 0, sum = 0, sq = 0, mx = -1e300, mn = 1e300;
      for (std::size_t i = 0; i < x.values().size(); ++i) {
        const double xi = x.values()[i], yi = y.values()[i];
        dot += xi * yi;
        sum += xi;
        sq += xi * xi;
        mx = std::max(mx, xi);
        mn = std::min(mn, xi);
      }
      const double k = 4.0 * n * eps<T>();
      CHECK(std::abs(spade::dot(dx, dy) - dot) <= k * n);
      CHECK(std::abs(spade::sum(dx) - sum) <= k * n);
      CHECK(std::abs(spade::norm(dx) - std::sqrt(sq)) <= k * std::sqrt(sq) + 1e-30);
      CHECK(spade::max_coeff(dx) == static_cast<T>(mx));
      CHECK(spade::min_coeff(dx) == static_cast<T>(mn));
      CHECK(std::abs(spade::mean(dx) - sum / n) <= k * n);
    }
    // Sparse sums and scalings keep the pattern, part by part.
    const auto a = spade::testing::random_csr<T>(200, 150, 0.05, rng, 0.8);
    const auto b = spade::testing::random_csr<T>(200, 150, 0.05, rng, 0.8);
    const auto da = spade::distribute(a, where);
    const auto db = spade::distribute(b, da.cluster(), &da.partition());
    const spade::csr<T, multi_gpu> s = da + T(3) * db;
    const auto single =
        spade::to_cpu(spade::csr<T, gpu>(spade::to_gpu(a) + T(3) * spade::to_gpu(b)));
    const auto got = spade::gather(s);
    CHECK(got.row_ptr() == single.row_ptr());
    CHECK(got.col_idx() == single.col_idx());
    CHECK(spade::testing::bits_equal(got.values(), single.values()));
    CHECK(std::abs(spade::sum(da) - spade::sum(spade::to_gpu(a))) <= 1e-3);
  }
}

TEST_CASE_TEMPLATE(
    "multi_gpu casts, sparse cwise_product, row scaling and row_sums run part by part", T, float,
    double) {
  if (spade::testing::no_device("multi_gpu tests")) return;
  using U = std::conditional_t<std::is_same_v<T, float>, double, float>;
  const auto seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng(seed);
  for (const auto& where : clusters()) {
    CAPTURE(where.size());
    for (const index_t rows : {1, 33, 1000}) {
      CAPTURE(rows);
      const auto a = spade::testing::random_csr<T>(rows, 150, 0.05, rng, 0.8);
      const auto b = spade::testing::random_csr<T>(rows, 150, 0.05, rng, 0.8);
      const auto xd = spade::testing::random_dense<T, row_major>(rows, 150, 0.0, rng);
      const spade::vector<T, cpu> d(nonzero_values<T>(rows, rng));
      const auto da = spade::distribute(a, where);
      const auto db = spade::distribute(b, da);
      const auto dx = spade::distribute(xd, da);
      const auto dd = spade::distribute(d, da);
      const auto ga = spade::to_gpu(a);
      const auto gb = spade::to_gpu(b);

      // Casts: every value converted as static_cast does, the pattern kept.
      const spade::csr<U, multi_gpu> a_cast = spade::cast<U>(da);
      const auto a_cast_host = spade::gather(a_cast);
      CHECK(a_cast_host.row_ptr() == a.row_ptr());
      CHECK(a_cast_host.col_idx() == a.col_idx());
      std::size_t wrong_casts = 0;
      for (std::size_t k = 0; k < a.values().size(); ++k)
        wrong_casts += a_cast_host.values()[k] != static_cast<U>(a.values()[k]);
      CHECK(wrong_casts == 0u);
      const spade::vector<U, multi_gpu> d_cast = spade::cast<U>(dd);
      const auto d_cast_host = spade::gather(d_cast);
      wrong_casts = 0;
      for (std::size_t i = 0; i < d.values().size(); ++i)
        wrong_casts += d_cast_host.values()[i] != static_cast<U>(d.values()[i]);
      CHECK(wrong_casts == 0u);

      // Each part runs the single-GPU kernel on its rows: the results equal one GPU's bit for bit.
      using spade::testing::check_same;
      const spade::csr<T, multi_gpu> both = spade::cwise_product(da, db);
      check_same(spade::gather(both),
                 spade::to_cpu(spade::csr<T, gpu>(spade::cwise_product(ga, gb))));
      const spade::csr<T, multi_gpu> with_dense = spade::cwise_product(da, dx);
      check_same(spade::gather(with_dense),
                 spade::to_cpu(spade::csr<T, gpu>(spade::cwise_product(ga, spade::to_gpu(xd)))));
      const spade::csr<T, multi_gpu> scaled = spade::as_diagonal(dd) * da;
      check_same(spade::gather(scaled),
                 spade::to_cpu(spade::csr<T, gpu>(spade::as_diagonal(spade::to_gpu(d)) * ga)));

      // row_sums against the host in double.
      const spade::vector<T, multi_gpu> sums = spade::row_sums(da);
      const auto sums_host = spade::gather(sums);
      REQUIRE(sums_host.values().size() == static_cast<std::size_t>(rows));
      std::size_t wrong_sums = 0;
      for (index_t i = 0; i < rows; ++i) {
        double want = 0, magnitude = 0;
        for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
          want += static_cast<double>(a.values()[k]);
          magnitude += std::abs(static_cast<double>(a.values()[k]));
        }
        const double length = a.row_ptr()[i + 1] - a.row_ptr()[i];
        wrong_sums +=
            !(std::abs(sums_host.values()[i] - want) <= (length + 1) * eps<T>() * magnitude);
      }
      CHECK(wrong_sums == 0u);
    }
  }
}

TEST_CASE("a distributed CG takes the single-GPU iteration count and reaches its solution") {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto a = spade::generate::stencil7<double>(16, 15, 14);
  std::vector<double> ones(static_cast<std::size_t>(a.rows()), 1.0);
  const spade::vector<double, cpu> b(ones);
  const spade::vector<double, cpu> zero(std::vector<double>(ones.size(), 0.0));
  spade::vector<double, gpu> x_single = spade::to_gpu(zero);
  const int single_its =
      conjugate_gradients(spade::to_gpu(a), spade::to_gpu(b), x_single, 1e-10, 1000);
  CHECK(single_its > 10);
  CHECK(single_its < 1000);
  const auto want = spade::to_cpu(x_single);
  for (const auto& where : clusters()) {
    CAPTURE(where.size());
    const auto da = spade::distribute(a, where);
    const auto db = spade::distribute(b, da);
    auto dx = spade::distribute(zero, da);
    const int its = conjugate_gradients(da, db, dx, 1e-10, 1000);
    CHECK(its == single_its);
    const auto got = spade::gather(dx);
    double worst = 0;
    for (std::size_t i = 0; i < ones.size(); ++i)
      worst = std::max(worst, std::abs(got.values()[i] - want.values()[i]));
    CHECK(worst <= 1e-8);
  }
}

TEST_CASE("explain shows the partition and each communication step") {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto a = spade::generate::stencil7<double>(10, 10, 10);
  const auto& where = clusters().back();
  const auto da = spade::distribute(a, where);
  const auto dx = spade::distribute(spade::vector<double, cpu>::ones(a.rows()), da);
  const std::string spmv = spade::explain(da * dx);
  CHECK(contains(spmv, "multi_gpu product over"));
  CHECK(contains(spmv, "halo exchange"));
  CHECK(contains(spmv, "local product"));
  if (where.size() > 1) CHECK(contains(spmv, "rows from part"));
  const std::string axpy = spade::explain(2.0 * dx + dx);
  CHECK(contains(axpy, "no communication"));
  const std::string spgemm = spade::explain(da * da);
  CHECK(contains(spgemm, "each owner gathers them from B_q"));
  const std::string flip = spade::explain(spade::transpose(da));
  CHECK(contains(flip, "multi_gpu transpose over"));
  CHECK(contains(flip, "(like A's: A is square)"));
  CHECK(contains(flip, "all-to-all"));
  CHECK(contains(spade::explain(da + spade::transpose(da)), "products and transposes evaluated"));
  // The stencil's few remote entries keep SpMM overlapped; half of a random matrix's entries
  // read the other part's rows, so its SpMM with 4 fp64 columns (32-byte rows) runs stacked,
  // its SpMV (one value a row) and SpMM with 17 columns (136 bytes) overlapped.
  const auto db = spade::distribute(spade::random_dense<double, row_major>(a.rows(), 4, 3), da);
  CHECK(contains(spade::explain(da * db), "overlapped with step 2"));
  const auto r = spade::random_sparse<double>(1000, 1000, 0.01, 11);
  const auto dr = spade::distribute(r, where);
  const auto dr_x = spade::distribute(spade::vector<double, cpu>::ones(r.rows()), dr);
  const auto dr_4 = spade::distribute(spade::random_dense<double, row_major>(r.rows(), 4, 4), dr);
  const auto dr_17 = spade::distribute(spade::random_dense<double, row_major>(r.rows(), 17, 5), dr);
  CHECK(contains(spade::explain(dr * dr_x), "overlapped with step 2"));
  CHECK(contains(spade::explain(dr * dr_17), "overlapped with step 2"));
  const std::string stacked = spade::explain(dr * dr_4);
  if (where.size() > 1) {
    CHECK(contains(stacked, "before step 2"));
    CHECK(contains(stacked, "stacked: a row of the rhs is 32 bytes"));
  } else {
    CHECK(contains(stacked, "overlapped with step 2"));  // one part: nothing is remote
  }
}

TEST_CASE("multi_gpu errors: other clusters, other splits, shapes") {
  if (spade::testing::no_device("multi_gpu tests")) return;
  const auto a = spade::generate::stencil7<double>(4, 4, 4);
  const auto& first = clusters().front();
  const auto other = spade::cluster::local(1);  // the same GPU, another cluster
  const auto da = spade::distribute(a, first);
  const auto dx = spade::distribute(spade::vector<double, cpu>::ones(a.rows()), other);
  CHECK_THROWS_WITH_AS(vector_d(da * dx), doctest::Contains("different clusters"), spade::error);
  const auto dy = spade::distribute(spade::vector<double, cpu>::ones(a.rows() + 1), first);
  CHECK_THROWS_AS(vector_d(da * dy), spade::dimension_mismatch);
  if (clusters().size() > 1) {
    const auto& two = clusters()[1];
    spade::detail::row_partition uneven;
    uneven.first = {0, 10, 64};
    const auto even = spade::distribute(spade::vector<double, cpu>::ones(64), two);
    const auto skewed = spade::distribute(spade::vector<double, cpu>::ones(64), two, &uneven);
    CHECK_THROWS_WITH_AS(vector_d(even + skewed), doctest::Contains("split differently"),
                         spade::dimension_mismatch);
  }
  CHECK_THROWS_AS(spade::cluster::local(0), spade::error);
  CHECK_THROWS_AS(spade::cluster::local(1000), spade::no_device);
  CHECK_THROWS_AS(spade::distribute(a, spade::cluster()), spade::error);
}
