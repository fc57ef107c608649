// spade-bench's result checks: ‖out − ref‖₂ / ‖ref‖₂ against a double reference (Eigen through
// spade::reference, or sampled rows computed here) or against the cuSPARSE result.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_counts.hpp"
#include "bench_support.hpp"

namespace spade::bench {

struct check_outcome {
  bool ok = false;
  double error = NAN;   // ‖out − ref‖₂ / ‖ref‖₂
  std::string against;  // reference | cusparse | sampled
  std::string note;     // why it failed
};

/// Far above the rounding of a correct result (k·ε with cancellation), far below what a wrong
/// index or an unwritten row gives (one bad row of 10⁶ is ≈ 10⁻³).
template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-10;
}

template <class T>
csr<double, cpu> to_double(const csr<T, cpu>& a) {
  return csr<double, cpu>(unchecked, a.rows(), a.cols(), a.row_ptr(), a.col_idx(),
                          std::vector<double>(a.values().begin(), a.values().end()));
}
template <class T>
vector<double, cpu> to_double(const vector<T, cpu>& x) {
  return vector<double, cpu>(std::vector<double>(x.values().begin(), x.values().end()));
}
template <class T>
dense<double, cpu> to_double(const dense<T, cpu>& b) {
  return dense<double, cpu>(unchecked, b.rows(), b.cols(),
                            std::vector<double>(b.values().begin(), b.values().end()));
}

/// Element-wise comparison of equally long arrays. NaN anywhere in `out` (the outputs are
/// poisoned with NaN before the checked run) fails.
template <class T, class R>
check_outcome compare_values(const std::vector<T>& out, const std::vector<R>& ref,
                             const char* against, double tol) {
  check_outcome c;
  c.against = against;
  if (out.size() != ref.size()) {
    c.note = "size " + std::to_string(out.size()) + " vs " + std::to_string(ref.size());
    return c;
  }
  double diff = 0;
  double norm = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double o = static_cast<double>(out[i]);
    const double r = static_cast<double>(ref[i]);
    if (!std::isfinite(o)) {
      c.note = "non-finite output at " + std::to_string(i) + " (unwritten or overflow)";
      return c;
    }
    diff += (o - r) * (o - r);
    norm += r * r;
  }
  c.error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  c.ok = c.error <= tol;
  if (!c.ok) c.note = "relative error above " + cell(tol);
  return c;
}

/// Sparse results of any pattern and column order (cuSPARSE's need not be sorted): per row,
/// both sides are accumulated into a dense row, so an entry missing on one side counts fully.
template <class T, class R>
check_outcome compare_csr(const csr<T, cpu>& out, const csr<R, cpu>& ref, const char* against,
                          double tol, const std::vector<index_t>* rows_to_check = nullptr) {
  check_outcome c;
  c.against = against;
  if (out.rows() != ref.rows() || out.cols() != ref.cols()) {
    c.note = "shape differs";
    return c;
  }
  std::vector<double> acc(static_cast<std::size_t>(out.cols()), 0.0);
  std::vector<double> ref_row(static_cast<std::size_t>(out.cols()), 0.0);
  std::vector<index_t> touched;
  double diff = 0;
  double norm = 0;
  auto visit = [&](index_t i, index_t ref_i) {
    for (index_t k = out.row_ptr()[i]; k < out.row_ptr()[i + 1]; ++k) {
      const double v = static_cast<double>(out.values()[k]);
      if (!std::isfinite(v)) return false;
      const index_t j = out.col_idx()[k];
      if (acc[j] == 0 && ref_row[j] == 0) touched.push_back(j);
      acc[j] += v;
    }
    for (index_t k = ref.row_ptr()[ref_i]; k < ref.row_ptr()[ref_i + 1]; ++k) {
      const index_t j = ref.col_idx()[k];
      if (acc[j] == 0 && ref_row[j] == 0) touched.push_back(j);
      ref_row[j] += static_cast<double>(ref.values()[k]);
    }
    for (index_t j : touched) {
      diff += (acc[j] - ref_row[j]) * (acc[j] - ref_row[j]);
      norm += ref_row[j] * ref_row[j];
      acc[j] = 0;
      ref_row[j] = 0;
    }
    touched.clear();
    return true;
  };
  if (rows_to_check) {
    // `ref` holds only the sampled rows, in order.
    for (std::size_t s = 0; s < rows_to_check->size(); ++s)
      if (!visit((*rows_to_check)[s], static_cast<index_t>(s))) {
        c.note = "non-finite output";
        return c;
      }
  } else {
    for (index_t i = 0; i < out.rows(); ++i)
      if (!visit(i, i)) {
        c.note = "non-finite output in row " + std::to_string(i);
        return c;
      }
  }
  c.error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  c.ok = c.error <= tol;
  if (!c.ok) c.note = "relative error above " + cell(tol);
  return c;
}

/// Up to `count` rows spread evenly over [0, rows), first and last included.
inline std::vector<index_t> sample_rows(index_t rows, index_t count) {
  std::vector<index_t> picked;
  if (rows <= count) {
    for (index_t i = 0; i < rows; ++i)
      picked.push_back(i);
    return picked;
  }
  for (index_t s = 0; s < count; ++s)
    picked.push_back(static_cast<index_t>(static_cast<std::int64_t>(s) * (rows - 1) / (count - 1)));
  return picked;
}

/// Rows `rows` of A·B in double, as a csr of rows.size() rows (for results too large for a
/// full reference when cuSPARSE failed too).
template <class T>
csr<double, cpu> sampled_product(const csr<T, cpu>& a, const csr<T, cpu>& b,
                                 const std::vector<index_t>& rows) {
  std::vector<index_t> row_ptr{0};
  std::vector<index_t> col_idx;
  std::vector<double> values;
  std::vector<double> acc(static_cast<std::size_t>(b.cols()), 0.0);
  std::vector<char> seen(static_cast<std::size_t>(b.cols()), 0);
  std::vector<index_t> touched;
  for (index_t i : rows) {
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const index_t m = a.col_idx()[k];
      const double av = static_cast<double>(a.values()[k]);
      for (index_t t = b.row_ptr()[m]; t < b.row_ptr()[m + 1]; ++t) {
        const index_t j = b.col_idx()[t];
        if (!seen[j]) {
          seen[j] = 1;
          touched.push_back(j);
        }
        acc[j] += av * static_cast<double>(b.values()[t]);
      }
    }
    std::sort(touched.begin(), touched.end());
    for (index_t j : touched) {
      col_idx.push_back(j);
      values.push_back(acc[j]);
      acc[j] = 0;
      seen[j] = 0;
    }
    touched.clear();
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return csr<double, cpu>(unchecked, static_cast<index_t>(rows.size()), b.cols(),
                          std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// Rows `rows` of A·B (B dense row-major, n columns) in double, row after row.
template <class T>
std::vector<double> sampled_dense_product(const csr<T, cpu>& a, const std::vector<T>& b, index_t n,
                                          const std::vector<index_t>& rows) {
  std::vector<double> out(rows.size() * static_cast<std::size_t>(n), 0.0);
  for (std::size_t s = 0; s < rows.size(); ++s) {
    const index_t i = rows[s];
    for (index_t k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k) {
      const double av = static_cast<double>(a.values()[k]);
      const std::size_t from = static_cast<std::size_t>(a.col_idx()[k]) * n;
      for (index_t j = 0; j < n; ++j)
        out[s * n + j] += av * static_cast<double>(b[from + j]);
    }
  }
  return out;
}

/// The given rows of a row-major m × n array.
template <class T>
std::vector<T> pick_rows(const std::vector<T>& all, index_t n, const std::vector<index_t>& rows) {
  std::vector<T> out;
  out.reserve(rows.size() * static_cast<std::size_t>(n));
  for (index_t i : rows)
    out.insert(out.end(), all.begin() + static_cast<std::ptrdiff_t>(i) * n,
               all.begin() + static_cast<std::ptrdiff_t>(i + 1) * n);
  return out;
}

}  // namespace spade::bench
