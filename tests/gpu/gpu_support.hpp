// Helpers for the GPU suites: fresh seeded inputs, bit-exact comparisons, pool-leak guard.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "test_support.hpp"

namespace spade::testing {

/// Same length and the same bits (NaN payloads and the sign of zero included).
template <class T>
bool bits_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
bool has_nan(const std::vector<T>& v) {
  for (const T x : v)
    if (std::isnan(x)) return true;
  return false;
}

template <class T>
void check_same(const csr<T, cpu>& got, const csr<T, cpu>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.row_ptr() == want.row_ptr());
  CHECK(got.col_idx() == want.col_idx());
  CHECK(bits_equal(got.values(), want.values()));
}

template <class T>
void check_same(const coo<T, cpu>& got, const coo<T, cpu>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(got.row_idx() == want.row_idx());
  CHECK(got.col_idx() == want.col_idx());
  CHECK(bits_equal(got.values(), want.values()));
}

template <class T, class Layout>
void check_same(const dense<T, cpu, Layout>& got, const dense<T, cpu, Layout>& want) {
  CHECK(got.rows() == want.rows());
  CHECK(got.cols() == want.cols());
  CHECK(bits_equal(got.values(), want.values()));
}

template <class T>
void check_same(const vector<T, cpu>& got, const vector<T, cpu>& want) {
  CHECK(got.size() == want.size());
  CHECK(bits_equal(got.values(), want.values()));
}

/// Value in [-1, 1), never zero, so any zero in a result was put there by the conversion.
template <class T>
T nonzero_value(splitmix64& rng) {
  const T v = static_cast<T>(rng.uniform() * 2.0 - 1.0);
  return v != T(0) ? v : T(0.5);
}

/// rows × cols csr: each row is non-empty with probability row_fraction, and then holds each
/// column with probability density; a stored value is an explicit zero with probability
/// zero_fraction.
template <class T>
csr<T, cpu> random_csr(index_t rows, index_t cols, double density, splitmix64& rng,
                       double row_fraction = 1.0, double zero_fraction = 0.0) {
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < rows; ++i) {
    if (rng.chance(row_fraction))
      for (index_t j = 0; j < cols; ++j)
        if (rng.chance(density)) {
          col_idx.push_back(j);
          values.push_back(rng.chance(zero_fraction) ? T(0) : nonzero_value<T>(rng));
        }
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return csr<T, cpu>(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// `a` with each row listed in `rows` replaced by `length` entries at columns 0, 1, ... (random
/// values), the other rows kept: one long row among short ones, the case that load-balancing
/// kernels split or bin apart.
template <class T>
csr<T, cpu> with_long_rows(const csr<T, cpu>& a, const std::vector<index_t>& rows, index_t length,
                           splitmix64& rng) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t i = 0; i < a.rows(); ++i) {
    if (std::find(rows.begin(), rows.end(), i) != rows.end()) {
      for (index_t j = 0; j < length; ++j) {
        col_idx.push_back(j);
        values.push_back(nonzero_value<T>(rng));
      }
    } else {
      for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
        col_idx.push_back(a.col_idx()[k]);
        values.push_back(a.values()[k]);
      }
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return csr<T, cpu>(a.rows(), a.cols(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// `entries` coo triplets in random order drawn from `positions` random positions, so most
/// positions repeat. Values are multiples of 1/4 in [-16, 16]: every partial sum is exact in
/// float and double, so sums compare bit-exactly whatever the association order.
template <class T>
coo<T, cpu> random_coo_with_repeats(index_t rows, index_t cols, std::size_t entries,
                                    std::size_t positions, splitmix64& rng) {
  std::vector<index_t> r(entries), c(entries);
  std::vector<T> v(entries);
  if (rows > 0 && cols > 0 && entries > 0) {
    std::vector<std::pair<index_t, index_t>> pool(positions);
    for (auto& p : pool)
      p = {static_cast<index_t>(rng.below(static_cast<std::uint64_t>(rows))),
           static_cast<index_t>(rng.below(static_cast<std::uint64_t>(cols)))};
    for (std::size_t k = 0; k < entries; ++k) {
      const auto& p = pool[rng.below(pool.size())];
      r[k] = p.first;
      c[k] = p.second;
      v[k] =
          static_cast<T>(static_cast<double>(static_cast<std::int64_t>(rng.below(129)) - 64) / 4.0);
    }
  }
  return coo<T, cpu>(rows, cols, std::move(r), std::move(c), std::move(v));
}

/// The entries of `a`, about half of them stored a second time (arbitrary values), shuffled. A
/// position holds at most two entries, and IEEE addition of two values is commutative, so their
/// sum has the same bits whichever comes first.
template <class T>
coo<T, cpu> shuffled_coo_with_pairs(const csr<T, cpu>& a, splitmix64& rng) {
  std::vector<index_t> r, c;
  std::vector<T> v;
  for (index_t i = 0; i < a.rows(); ++i)
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const int copies = rng.chance(0.5) ? 2 : 1;
      for (int n = 0; n < copies; ++n) {
        r.push_back(i);
        c.push_back(a.col_idx()[k]);
        v.push_back(n == 0 ? a.values()[k] : nonzero_value<T>(rng));
      }
    }
  for (std::size_t k = r.size(); k > 1; --k) {
    const std::size_t swap_with = rng.below(k);
    std::swap(r[k - 1], r[swap_with]);
    std::swap(c[k - 1], c[swap_with]);
    std::swap(v[k - 1], v[swap_with]);
  }
  return coo<T, cpu>(a.rows(), a.cols(), std::move(r), std::move(c), std::move(v));
}

/// The sparse operands every sparse × dense suite runs at each width: no rows, no columns, or
/// both; 1×1; odd sizes around a warp; a wide and a tall one with empty rows (row_fraction: the
/// share of rows that hold entries); 257×129 sparse (tiles of 1–2 entries) and dense-ish.
struct spmm_shape {
  index_t m, k;
  double density, row_fraction;
};
inline constexpr spmm_shape spmm_edge_shapes[] = {
    {0, 0, 0.1, 1},      {0, 5, 0.1, 1},       {5, 0, 0.1, 1},
    {1, 1, 1.0, 1},      {31, 33, 0.2, 0.6},   {33, 31, 0.3, 0.5},
    {64, 64, 0.05, 0.3}, {257, 129, 0.1, 0.9}, {257, 129, 0.4, 0.9}};

/// rows × cols dense: zero with probability zero_fraction, else nonzero; with `specials`, also
/// some -0.0 (must be dropped by dense → csr) and NaN (must be kept).
template <class T, class Layout>
dense<T, cpu, Layout> random_dense(index_t rows, index_t cols, double zero_fraction,
                                   splitmix64& rng, bool specials = false) {
  dense<T, cpu, Layout> d(rows, cols);
  for (T& x : d.values()) {
    const double u = rng.uniform();
    if (u < zero_fraction)
      x = T(0);
    else if (specials && u < zero_fraction + 0.05)
      x = -T(0);
    else if (specials && u < zero_fraction + 0.08)
      x = std::numeric_limits<T>::quiet_NaN();
    else
      x = nonzero_value<T>(rng);
  }
  return d;
}

/// True when no CUDA device is usable (said once per suite, with the reason and what needs a
/// device): every case then passes without touching the GPU, as the CPU-only CI expects of a
/// gpu-labelled suite.
inline bool no_device(const char* what) {
  static bool said = false;
  std::string reason;
  if (device_available(&reason)) return false;
  if (!said) {
    MESSAGE("skipped: no CUDA device (" << reason << "); " << std::string(what) << " need one");
    said = true;
  }
  return true;
}

/// Checks, when the test case ends normally, that everything it allocated on the device went
/// back: the context's exact count returns to its start, and the pool's own count is not higher.
/// Declare it first in a test case so that it is destroyed after every gpu object of the case.
class pool_guard {
 public:
  pool_guard()
      : bytes_(default_context().bytes_in_use()),
        pool_bytes_(default_context().pool_bytes_in_use()) {}
  ~pool_guard() {
    if (std::uncaught_exceptions() > 0) return;
    CHECK(default_context().bytes_in_use() == bytes_);
    CHECK(default_context().pool_bytes_in_use() <= pool_bytes_);
  }
  pool_guard(const pool_guard&) = delete;
  pool_guard& operator=(const pool_guard&) = delete;

 private:
  std::size_t bytes_;
  std::size_t pool_bytes_;
};

}  // namespace spade::testing
