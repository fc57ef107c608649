// Seeded generators of random and synthetic matrices whose output is the same on every platform.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/validate.hpp"
#include "spade/formats/vector.hpp"
#include "spade/io/detail/random.hpp"

// Determinism: every generator draws from detail::xoshiro256 seeded with `seed`, in an order
// fixed by the code below; positions come from integer arithmetic only and values are exact
// multiples of 2^-52 (double) or 2^-23 (float). Nothing goes through std distributions or
// libm, so the same call gives bit-identical matrices on any compiler, library and CPU. Changing
// the order of draws changes every generated matrix: the golden test in
// tests/cpu/test_generators.cpp pins the stream, so such a change is deliberate.

namespace spade {
namespace detail {

inline constexpr std::uint64_t generator_index_max = 2147483647;

inline void generator_require(bool ok, const char* generator, const std::string& why) {
  if (!ok) throw invalid_matrix(std::string(generator) + ": " + why);
}

/// Fails unless `count` fits the 32-bit index type (rows, columns or stored entries).
inline index_t generator_fit(const char* generator, const char* what, std::uint64_t count) {
  generator_require(count <= generator_index_max, generator,
                    std::string(what) + " " + std::to_string(count) +
                        " exceeds the 32-bit index limit 2147483647");
  return static_cast<index_t>(count);
}

/// Sorts `keys` ascending (and `payload`, when given, along with them) by a stable LSD radix
/// sort over the low `key_bits` bits, 11 bits per pass. Stability is what lets rmat sum
/// duplicates in generation order. Small inputs go to std::sort (keys only: equal keys are
/// indistinguishable there, so the result is the same). Time O(n · key_bits / 11); extra
/// memory one copy of keys and payload.
template <class Payload>
void radix_sort(std::vector<std::uint64_t>& keys, std::vector<Payload>* payload, int key_bits) {
  if (!payload && keys.size() < 4096) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  constexpr int digit_bits = 11;
  constexpr std::uint64_t mask = (std::uint64_t(1) << digit_bits) - 1;
  std::vector<std::uint64_t> key_out(keys.size());
  std::vector<Payload> payload_out(payload ? payload->size() : 0);
  std::vector<std::size_t> offset(std::size_t(1) << digit_bits);
  for (int shift = 0; shift < key_bits; shift += digit_bits) {
    std::fill(offset.begin(), offset.end(), 0);
    for (std::uint64_t k : keys)
      ++offset[(k >> shift) & mask];
    std::size_t sum = 0;
    for (auto& o : offset)
      sum += std::exchange(o, sum);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::size_t at = offset[(keys[i] >> shift) & mask]++;
      key_out[at] = keys[i];
      if (payload) payload_out[at] = (*payload)[i];
    }
    keys.swap(key_out);
    if (payload) payload->swap(payload_out);
  }
}

/// Leaves in `out` k distinct values of [0, universe), ascending, uniform over all k-subsets.
/// Draws k values, sorts, drops duplicates and draws the shortfall again until k remain: the
/// process is symmetric under any permutation of the universe and stops on the count alone, so
/// the final set is a uniform k-subset. For k > universe / 2 it samples the universe − k values
/// to leave out instead, so no round faces a collision rate above one half.
/// Expected time O(k) (radix sort; the later, much smaller rounds use std::sort), or
/// O(universe) in the complement case (universe < 2k there); memory 8 bytes per value in `out`
/// and `scratch` (reused across calls by the caller) plus 8 per value while sorting.
inline void sample_sorted_distinct(xoshiro256& rng, std::uint64_t universe, std::uint64_t k,
                                   std::vector<std::uint64_t>& out,
                                   std::vector<std::uint64_t>& scratch) {
  const bool complement = k > universe - k;
  const std::uint64_t draw = complement ? universe - k : k;
  std::vector<std::uint64_t>& picked = complement ? scratch : out;
  picked.clear();
  while (picked.size() < draw) {
    const std::size_t have = picked.size();
    for (std::uint64_t i = have; i < draw; ++i)
      picked.push_back(rng.below(universe));
    if (have == 0) {
      radix_sort<char>(picked, nullptr, static_cast<int>(std::bit_width(universe - 1)));
    } else {
      const auto middle = picked.begin() + static_cast<std::ptrdiff_t>(have);
      std::sort(middle, picked.end());
      std::inplace_merge(picked.begin(), middle, picked.end());
    }
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  }
  if (!complement) return;
  out.clear();
  out.reserve(k);
  auto skip = scratch.begin();
  for (std::uint64_t p = 0; p < universe; ++p) {
    if (skip != scratch.end() && *skip == p)
      ++skip;
    else
      out.push_back(p);
  }
}

/// A square block-diagonal csr of dense blocks of the given sizes, values drawn in row order.
template <scalar T>
csr<T, cpu> block_diagonal_of(const char* generator, const std::vector<index_t>& sizes,
                              xoshiro256& rng) {
  std::uint64_t n = 0;
  std::uint64_t nnz = 0;
  for (index_t s : sizes) {
    n += static_cast<std::uint64_t>(s);
    nnz += static_cast<std::uint64_t>(s) * static_cast<std::uint64_t>(s);
  }
  const index_t rows = generator_fit(generator, "rows", n);
  generator_fit(generator, "nnz", nnz);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  col_idx.reserve(nnz);
  values.reserve(nnz);
  index_t row = 0;
  index_t first = 0;
  for (index_t s : sizes) {
    for (index_t i = 0; i < s; ++i, ++row) {
      for (index_t j = 0; j < s; ++j) {
        col_idx.push_back(first + j);
        values.push_back(rng.uniform_nonzero<T>());
      }
      row_ptr[static_cast<std::size_t>(row) + 1] = static_cast<index_t>(col_idx.size());
    }
    first += s;
  }
  return csr<T, cpu>(unchecked, rows, rows, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// One neighbour of a stencil, as a grid offset.
struct stencil_offset {
  int dz, dy, dx;
};

/// The csr of a constant-coefficient stencil on an nx × ny × nz grid, point (x, y, z) at row
/// x + nx·(y + ny·z). `offsets` must be in lexicographic (dz, dy, dx) order: the in-grid
/// neighbours of a point then have strictly increasing columns (a dx step moves the column by
/// 1, a dy step by nx, which exceeds the span nx − 1 of the in-grid dx), so rows come out
/// sorted without a sort.
template <scalar T>
csr<T, cpu> stencil_of(const char* generator, index_t nx, index_t ny, index_t nz,
                       const std::vector<stencil_offset>& offsets, T diagonal) {
  generator_require(nx >= 0 && ny >= 0 && nz >= 0, generator,
                    "negative grid size " + std::to_string(nx) + "x" + std::to_string(ny) + "x" +
                        std::to_string(nz));
  const std::uint64_t points = static_cast<std::uint64_t>(nx) * static_cast<std::uint64_t>(ny) *
                               static_cast<std::uint64_t>(nz);
  const index_t rows = generator_fit(generator, "rows", points);
  // Counted before allocating so an oversized grid fails fast: along an axis of extent e, a
  // step s stays inside the grid from max(0, e − |s|) points.
  auto axis_count = [](int step, index_t extent) {
    return static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::int64_t(extent) - std::abs(step)));
  };
  std::uint64_t nnz = 0;
  for (const auto& o : offsets)
    nnz += axis_count(o.dz, nz) * axis_count(o.dy, ny) * axis_count(o.dx, nx);
  generator_fit(generator, "nnz", nnz);

  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  col_idx.reserve(nnz);
  values.reserve(nnz);
  const std::int64_t plane = static_cast<std::int64_t>(nx) * ny;
  auto in_grid = [](index_t at, int step, index_t extent) {
    const std::int64_t to = static_cast<std::int64_t>(at) + step;
    return to >= 0 && to < extent;
  };
  std::size_t row = 0;
  for (index_t z = 0; z < nz; ++z)
    for (index_t y = 0; y < ny; ++y)
      for (index_t x = 0; x < nx; ++x, ++row) {
        for (const auto& o : offsets) {
          if (!in_grid(x, o.dx, nx) || !in_grid(y, o.dy, ny) || !in_grid(z, o.dz, nz)) continue;
          col_idx.push_back(static_cast<index_t>(static_cast<std::int64_t>(row) + o.dx +
                                                 static_cast<std::int64_t>(nx) * o.dy +
                                                 plane * o.dz));
          values.push_back(o.dx == 0 && o.dy == 0 && o.dz == 0 ? diagonal : T(-1));
        }
        row_ptr[row + 1] = static_cast<index_t>(col_idx.size());
      }
  return csr<T, cpu>(unchecked, rows, rows, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

}  // namespace detail

/// A rows × cols sparse matrix with exactly llround(density · rows · cols) entries at distinct
/// positions chosen uniformly over the whole matrix (every position set of that size is equally
/// likely), values uniform in [-1, 1) without exact zeros. Rows may come out empty.
/// Draws linear positions i·cols + j, sorts, removes duplicates and redraws the shortfall;
/// above density 0.5 it picks the positions to leave empty instead. Values are drawn after all
/// positions, in row-major order.
/// Throws invalid_matrix for a negative size, a density outside [0, 1] (or NaN), or more than
/// 2^31 − 1 entries. Time: expected O(nnz) (O(rows · cols) above density 0.5, where
/// rows · cols < 2 nnz). Extra memory: 16 bytes per entry while sampling.
/// Deterministic: the same arguments give the same matrix on every platform.
template <scalar T>
csr<T, cpu> random_sparse(index_t rows, index_t cols, double density, std::uint64_t seed) {
  detail::check_extents("random_sparse", rows, cols);
  detail::generator_require(density >= 0.0 && density <= 1.0, "random_sparse",
                            "density " + std::to_string(density) + " is outside [0, 1]");
  const std::uint64_t total = static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  // density · total is one correctly rounded IEEE product, so llround sees the same number on
  // every platform. The min guards the rounding of totals above 2^53.
  const auto wanted =
      static_cast<std::uint64_t>(std::llround(density * static_cast<double>(total)));
  const index_t nnz = detail::generator_fit("random_sparse", "nnz", std::min(wanted, total));

  detail::xoshiro256 rng(seed);
  std::vector<std::uint64_t> positions;
  std::vector<std::uint64_t> scratch;
  detail::sample_sorted_distinct(rng, total, static_cast<std::uint64_t>(nnz), positions, scratch);
  scratch = {};

  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx(positions.size());
  std::vector<T> values(positions.size());
  const auto width = static_cast<std::uint64_t>(cols);
  for (std::size_t k = 0; k < positions.size(); ++k) {
    ++row_ptr[static_cast<std::size_t>(positions[k] / width) + 1];
    col_idx[k] = static_cast<index_t>(positions[k] % width);
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i)
    row_ptr[i + 1] += row_ptr[i];
  for (auto& v : values)
    v = rng.uniform_nonzero<T>();
  return csr<T, cpu>(unchecked, rows, cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// A rows × cols dense matrix of values uniform in [-1, 1). Elements are drawn in row-major
/// order whatever the Layout, so the row_major and col_major results hold the same matrix.
/// Throws invalid_matrix on a negative size. Time O(rows · cols); no extra memory.
/// Deterministic on every platform.
template <scalar T, layout Layout = row_major>
dense<T, cpu, Layout> random_dense(index_t rows, index_t cols, std::uint64_t seed) {
  dense<T, cpu, Layout> result(rows, cols);
  detail::xoshiro256 rng(seed);
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j)
      result(i, j) = rng.uniform_signed<T>();
  return result;
}

/// A vector of n values uniform in [-1, 1). Throws invalid_matrix on a negative size.
/// Time O(n); deterministic on every platform. random_vector<T>(n, s) holds the same values
/// as the single column of random_dense<T>(n, 1, s).
template <scalar T>
vector<T, cpu> random_vector(index_t n, std::uint64_t seed) {
  vector<T, cpu> result(n);
  detail::xoshiro256 rng(seed);
  for (index_t i = 0; i < n; ++i)
    result[i] = rng.uniform_signed<T>();
  return result;
}

/// The synthetic benchmark families of docs (BENCHMARKS.md, "Synthetic"). Each returns a
/// csr<T, cpu> with sorted, unique columns per row, throws invalid_matrix when a size is
/// negative or the result would not fit 32-bit indices, and is deterministic on every platform.
namespace generate {

/// The 7-point finite-difference Laplacian (scaled by h²) on an nx × ny × nz grid with
/// Dirichlet boundaries: 6 on the diagonal, −1 to each face neighbour inside the grid.
/// Point (x, y, z) is row x + nx·(y + ny·z). Symmetric positive definite.
/// rows = nx·ny·nz; nnz = rows + 2[(nx−1)·ny·nz + nx·(ny−1)·nz + nx·ny·(nz−1)], which is
/// 7n³ − 6n² on an n³ grid (160³: 4,096,000 rows, 28,518,400 entries).
/// Time and memory O(nnz); no randomness.
template <scalar T>
csr<T, cpu> stencil7(index_t nx, index_t ny, index_t nz) {
  return detail::stencil_of<T>(
      "stencil7", nx, ny, nz,
      {{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}}, T(6));
}

/// The 27-point stencil on an nx × ny × nz grid: 26 on the diagonal, −1 to each of the up to 26
/// grid points that share a face, edge or corner with it. Same numbering as stencil7.
/// Symmetric positive definite (irreducibly diagonally dominant).
/// rows = nx·ny·nz; nnz = (3nx − 2)(3ny − 2)(3nz − 2) (100³: 1,000,000 rows, 26,463,592
/// entries). Time and memory O(nnz); no randomness.
template <scalar T>
csr<T, cpu> stencil27(index_t nx, index_t ny, index_t nz) {
  std::vector<detail::stencil_offset> offsets;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        offsets.push_back({dz, dy, dx});
  return detail::stencil_of<T>("stencil27", nx, ny, nz, offsets, T(26));
}

/// Graph500's R-MAT quadrant probabilities.
inline constexpr double rmat_a = 0.57;
inline constexpr double rmat_b = 0.19;
inline constexpr double rmat_c = 0.19;

/// An R-MAT graph (Chakrabarti, Zhan, Faloutsos 2004) as a 2^scale × 2^scale adjacency matrix:
/// edge_factor · 2^scale edges, each placed by descending `scale` levels of the quadrant tree
/// and choosing top-left, top-right, bottom-left, bottom-right with probabilities a, b, c and
/// d = 1 − a − b − c. Each edge gets a value uniform in [-1, 1) \ {0}; duplicate edges are
/// summed (in generation order) into one entry, self loops are kept. Unlike Graph500 there is
/// no per-level noise and no vertex relabelling, so high degrees sit at low row indices.
/// nnz ≤ edge_factor · 2^scale; row lengths are heavily skewed (power-law-like).
/// Probabilities become integer thresholds k/2^53 once, so placement is integer-only.
/// Throws invalid_matrix unless 0 ≤ scale ≤ 30, edge_factor ≥ 0, a, b, c ≥ 0 with
/// a + b + c ≤ 1, and the edge count fits 32 bits. Time O(m · scale)
/// for m edges (radix sort of 2·scale-bit keys); memory about 2 · m · (8 + sizeof(T)) bytes at
/// the peak.
template <scalar T>
csr<T, cpu> rmat(index_t scale, index_t edge_factor, double a, double b, double c,
                 std::uint64_t seed) {
  detail::generator_require(scale >= 0 && scale <= 30, "rmat",
                            "scale " + std::to_string(scale) + " is outside [0, 30]");
  detail::generator_require(edge_factor >= 0, "rmat",
                            "negative edge factor " + std::to_string(edge_factor));
  detail::generator_require(a >= 0 && b >= 0 && c >= 0 && a + b + c <= 1.0, "rmat",
                            "probabilities a, b, c must be non-negative with a + b + c <= 1");
  const index_t n = index_t(1) << scale;
  const index_t edges = detail::generator_fit(
      "rmat", "edge count",
      static_cast<std::uint64_t>(edge_factor) * static_cast<std::uint64_t>(n));

  // Scaling by 2^53 is exact and the truncation is exact, so the thresholds are portable.
  constexpr double two53 = 9007199254740992.0;
  const auto to_threshold = [&](double p) { return static_cast<std::uint64_t>(p * two53); };
  const std::uint64_t t_a = to_threshold(a);
  const std::uint64_t t_ab = t_a + to_threshold(b);
  const std::uint64_t t_abc = t_ab + to_threshold(c);

  // Edge e is the key row · 2^scale + col; sorting the keys orders edges as csr wants them.
  detail::xoshiro256 rng(seed);
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(edges));
  std::vector<T> edge_values(keys.size());
  for (std::size_t e = 0; e < keys.size(); ++e) {
    std::uint64_t row = 0;
    std::uint64_t col = 0;
    for (index_t level = 0; level < scale; ++level) {
      const std::uint64_t r = rng() >> 11;
      const std::uint64_t down = r >= t_ab;                              // quadrants c and d
      const std::uint64_t right = (r >= t_a && r < t_ab) || r >= t_abc;  // b and d
      row = (row << 1) | down;
      col = (col << 1) | right;
    }
    keys[e] = (row << scale) | col;
    edge_values[e] = rng.uniform_nonzero<T>();
  }
  // The radix sort is stable, so duplicates stay in generation order and their sums are
  // reproducible too.
  detail::radix_sort(keys, &edge_values, 2 * scale);

  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  const std::uint64_t col_mask = (std::uint64_t(1) << scale) - 1;
  for (std::size_t e = 0; e < keys.size(); ++e) {
    if (e > 0 && keys[e] == keys[e - 1]) {
      values.back() += edge_values[e];
      continue;
    }
    ++row_ptr[static_cast<std::size_t>(keys[e] >> scale) + 1];
    col_idx.push_back(static_cast<index_t>(keys[e] & col_mask));
    values.push_back(edge_values[e]);
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
    row_ptr[i + 1] += row_ptr[i];
  return csr<T, cpu>(unchecked, n, n, std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// R-MAT with Graph500's probabilities (a, b, c) = (0.57, 0.19, 0.19).
template <scalar T>
csr<T, cpu> rmat(index_t scale, index_t edge_factor, std::uint64_t seed) {
  return rmat<T>(scale, edge_factor, rmat_a, rmat_b, rmat_c, seed);
}

/// A block-diagonal matrix of `blocks` dense block_size × block_size blocks, values uniform in
/// [-1, 1) \ {0} drawn in row-major order. n = nnz / block_size = blocks · block_size.
/// Time and memory O(blocks · block_size²).
template <scalar T>
csr<T, cpu> block_diagonal(index_t blocks, index_t block_size, std::uint64_t seed) {
  detail::check_extents("block_diagonal", blocks, block_size);
  detail::xoshiro256 rng(seed);
  return detail::block_diagonal_of<T>(
      "block_diagonal", std::vector<index_t>(static_cast<std::size_t>(blocks), block_size), rng);
}

/// As above, but each block's size is drawn uniformly from [min_size, max_size] (all sizes are
/// drawn first, then the values), e.g. 8…64 for the benchmark set. Requires
/// 1 ≤ min_size ≤ max_size. Time and memory O(Σ size²).
template <scalar T>
csr<T, cpu> block_diagonal(index_t blocks, index_t min_size, index_t max_size, std::uint64_t seed) {
  detail::check_extents("block_diagonal", blocks, 0);
  detail::generator_require(min_size >= 1 && min_size <= max_size, "block_diagonal",
                            "block sizes need 1 <= min_size <= max_size, got [" +
                                std::to_string(min_size) + ", " + std::to_string(max_size) + "]");
  detail::xoshiro256 rng(seed);
  std::vector<index_t> sizes(static_cast<std::size_t>(blocks));
  const auto span = static_cast<std::uint64_t>(max_size - min_size) + 1;
  for (auto& s : sizes)
    s = min_size + static_cast<index_t>(rng.below(span));
  return detail::block_diagonal_of<T>("block_diagonal", sizes, rng);
}

/// An n × n band matrix: every (i, j) with i − lower ≤ j ≤ i + upper is stored, values uniform
/// in [-1, 1) \ {0} in row-major order. With l = min(lower, n − 1), u = min(upper, n − 1):
/// nnz = n(l + u + 1) − l(l + 1)/2 − u(u + 1)/2. Requires lower, upper ≥ 0.
/// Time and memory O(nnz).
template <scalar T>
csr<T, cpu> banded(index_t n, index_t lower, index_t upper, std::uint64_t seed) {
  detail::check_extents("banded", n, n);
  detail::check_extents("banded", lower, upper);
  std::uint64_t nnz = 0;
  for (index_t i = 0; i < n; ++i)
    nnz += static_cast<std::uint64_t>(std::min<std::int64_t>(n - 1, std::int64_t(i) + upper) -
                                      std::max<std::int64_t>(0, std::int64_t(i) - lower) + 1);
  detail::generator_fit("banded", "nnz", nnz);
  detail::xoshiro256 rng(seed);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  col_idx.reserve(nnz);
  values.reserve(nnz);
  for (index_t i = 0; i < n; ++i) {
    const auto first = static_cast<index_t>(std::max<std::int64_t>(0, std::int64_t(i) - lower));
    const auto last = static_cast<index_t>(std::min<std::int64_t>(n - 1, std::int64_t(i) + upper));
    for (index_t j = first; j <= last; ++j) {
      col_idx.push_back(j);
      values.push_back(rng.uniform_nonzero<T>());
    }
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return csr<T, cpu>(unchecked, n, n, std::move(row_ptr), std::move(col_idx), std::move(values));
}

/// A rows × cols matrix with exactly per_row entries in every row, at distinct columns chosen
/// uniformly (each row independently), values uniform in [-1, 1) \ {0}; e.g. 2^20 × 2^20 with
/// 16 per row for the benchmark set. Requires 0 ≤ per_row ≤ cols and rows · per_row < 2^31.
/// Time expected O(rows · per_row · log per_row) (O(rows · cols) when per_row > cols / 2);
/// memory O(nnz).
template <scalar T>
csr<T, cpu> uniform_rows(index_t rows, index_t cols, index_t per_row, std::uint64_t seed) {
  detail::check_extents("uniform_rows", rows, cols);
  detail::generator_require(per_row >= 0 && per_row <= cols, "uniform_rows",
                            "per_row " + std::to_string(per_row) +
                                " is outside [0, cols = " + std::to_string(cols) + "]");
  const index_t nnz =
      detail::generator_fit("uniform_rows", "nnz",
                            static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(per_row));
  detail::xoshiro256 rng(seed);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<index_t> col_idx;
  std::vector<T> values;
  col_idx.reserve(static_cast<std::size_t>(nnz));
  values.reserve(static_cast<std::size_t>(nnz));
  std::vector<std::uint64_t> picked;
  std::vector<std::uint64_t> scratch;
  for (index_t i = 0; i < rows; ++i) {
    detail::sample_sorted_distinct(rng, static_cast<std::uint64_t>(cols),
                                   static_cast<std::uint64_t>(per_row), picked, scratch);
    for (std::uint64_t j : picked) {
      col_idx.push_back(static_cast<index_t>(j));
      values.push_back(rng.uniform_nonzero<T>());
    }
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return csr<T, cpu>(unchecked, rows, cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// The GCOO paper's test matrices (Shi, Wang, Chu): square n × n, uniformly placed entries,
/// `sparsity` the fraction of zeros, i.e. random_sparse<T>(n, n, 1 − sparsity, seed)
/// (benchmark set: n ∈ {4000, 8000, 14000}, sparsity ∈ {0.9, …, 0.9995}).
template <scalar T>
csr<T, cpu> gcoo_paper(index_t n, double sparsity, std::uint64_t seed) {
  detail::generator_require(sparsity >= 0.0 && sparsity <= 1.0, "gcoo_paper",
                            "sparsity " + std::to_string(sparsity) + " is outside [0, 1]");
  return random_sparse<T>(n, n, 1.0 - sparsity, seed);
}

/// circuit's default skew: the probability of the lower half at each level of the hub-rank
/// descent (see circuit). 0.75 puts about 0.75^21 ≈ 0.24 % of the hub draws of a 1.6 M-row
/// matrix on its densest column, a few thousand entries, like the supply and ground nets.
inline constexpr double circuit_skew = 0.75;

/// Off-diagonal draws of an ordinary circuit row land within this many columns of the diagonal
/// with probability 1/2 (nets between nearby nodes), elsewhere through the skewed hub ranks.
inline constexpr index_t circuit_band = 16;

/// A square rows × rows matrix with the pattern of circuit-simulation (MNA) matrices such as
/// G3_circuit, Freescale, ASIC_*, rajat and circuit5M in SuiteSparse: short rows, a few very
/// dense columns and a few very long rows.
/// - Every row stores its diagonal (MNA matrices are nonsingular; the values are not made
///   dominant, only the pattern is modelled).
/// - An ordinary row has L entries, L = ⌊mean_per_row⌋ or ⌈mean_per_row⌉ (chosen so that the
///   expectation is mean_per_row to 2^-16) plus a triangular offset in [−h, h],
///   h = min(3, ⌊mean_per_row⌋ − 1), capped at rows: 1…8 for mean 4.8, 1…5 for 3, 3…9 for 6.
///   Each off-diagonal entry is, with probability 1/2, a column within circuit_band of the
///   diagonal (uniform over those inside the matrix), otherwise a hub column: a rank is built
///   bit by bit from the top, each bit 0 with probability `skew` (a one-dimensional R-MAT, so
///   rank r has probability skew^zeros(r) · (1 − skew)^ones(r), power-law-like, rank 0 the
///   most likely), ranks ≥ rows are redrawn, and rank r is column (r·stride + offset) mod rows
///   for a seeded stride coprime to rows, which scatters the dense columns over the matrix.
///   Duplicates are redrawn, so the row has exactly L distinct columns. The dense columns make
///   the transpose's rows unbalanced too.
/// - `long_rows` distinct rows, chosen uniformly, have exactly long_row_length entries: the
///   diagonal and long_row_length − 1 other columns uniform without repetition (supply nets).
///   An ordinary row whose L − 1 exceeds min(circuit_band, rows − 1), which only happens for
///   mean_per_row above 14 or tiny matrices, takes its columns the same way.
/// nnz ≈ (rows − long_rows) · mean_per_row + long_rows · long_row_length; when
/// long_row_length > ⌈mean_per_row⌉ + 3 exactly long_rows rows are that long. Values uniform
/// in [-1, 1) \ {0}. skew = 0.5 makes the hub columns uniform, 1 puts them all on one column.
/// Benchmark set: 1.6 M rows at mean 4.8 (the size and density of G3_circuit), 1 M at 3, 4 M
/// at 6, each with a few rows of 1000–5000.
/// Draws, in this order: the long rows' positions, the stride and offset of the hub map, every
/// row length, the columns row by row, the values in row-major order.
/// Throws invalid_matrix for rows < 0, mean_per_row outside [1, rows] (or NaN), long_rows
/// outside [0, rows], long_row_length outside [1, rows] when long_rows > 0, skew outside
/// [0.5, 1], or more than 2^31 − 1 entries. Time O(nnz · log2 rows) (a hub draw
/// descends log2 rows levels, two per 64-bit draw; an ordinary row sorts at most 17
/// columns; long rows use sample_sorted_distinct); extra memory O(long_row_length) beyond the
/// result. Deterministic on every platform.
template <scalar T>
csr<T, cpu> circuit(index_t rows, double mean_per_row, index_t long_rows, index_t long_row_length,
                    std::uint64_t seed, double skew = circuit_skew) {
  constexpr const char* name = "circuit";
  detail::generator_require(rows >= 0, name, "negative size " + std::to_string(rows));
  detail::generator_require(mean_per_row >= 1.0 && mean_per_row <= static_cast<double>(rows), name,
                            "mean_per_row " + std::to_string(mean_per_row) +
                                " is outside [1, rows = " + std::to_string(rows) + "]");
  detail::generator_require(long_rows >= 0 && long_rows <= rows, name,
                            "long_rows " + std::to_string(long_rows) +
                                " is outside [0, rows = " + std::to_string(rows) + "]");
  detail::generator_require(long_rows == 0 || (long_row_length >= 1 && long_row_length <= rows),
                            name,
                            "long_row_length " + std::to_string(long_row_length) +
                                " is outside [1, rows = " + std::to_string(rows) + "]");
  detail::generator_require(skew >= 0.5 && skew <= 1.0, name,
                            "skew " + std::to_string(skew) + " is outside [0.5, 1]");
  const auto n = static_cast<std::uint64_t>(rows);
  // Scaling by a power of two is exact and so is the truncation: portable fixed-point numbers.
  const auto mean_fixed = static_cast<std::uint64_t>(mean_per_row * 65536.0);
  const std::uint64_t whole = mean_fixed >> 16;
  const std::uint64_t fraction = mean_fixed & 0xffff;
  const std::uint64_t spread = std::min<std::uint64_t>(3, whole - 1);
  const auto low_half = static_cast<std::uint64_t>(skew * 4294967296.0);  // of 32-bit draws
  const auto long_count = static_cast<std::uint64_t>(long_rows);
  const auto long_length = static_cast<std::uint64_t>(long_rows > 0 ? long_row_length : 0);
  // Every ordinary row has at least whole − spread entries: refuse before allocating when even
  // that does not fit.
  detail::generator_fit(name, "nnz of at least",
                        (n - long_count) * std::min(n, whole - spread) + long_count * long_length);

  detail::xoshiro256 rng(seed);
  std::vector<std::uint64_t> long_at;
  std::vector<std::uint64_t> scratch;
  detail::sample_sorted_distinct(rng, n, long_count, long_at, scratch);
  std::uint64_t stride = 1;
  std::uint64_t offset = 0;
  if (n >= 2) {
    do {
      stride = 1 + rng.below(n - 1);
    } while (std::gcd(stride, n) != 1);
    offset = rng.below(n);
  }

  std::vector<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, 0);
  std::uint64_t nnz = 0;
  for (std::uint64_t i = 0, next_long = 0; i < n; ++i) {
    std::uint64_t length = long_length;
    if (next_long < long_at.size() && long_at[next_long] == i) {
      ++next_long;
    } else {
      const std::uint64_t base = whole + ((rng() >> 48) < fraction ? 1 : 0);
      const std::uint64_t up = rng.below(spread + 1);
      length = std::min(n, base + up - rng.below(spread + 1));  // base ≥ spread + 1: no wrap
    }
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(length);
    nnz += length;
  }
  detail::generator_fit(name, "nnz", nnz);
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i)
    row_ptr[i + 1] += row_ptr[i];

  const std::uint64_t levels = static_cast<std::uint64_t>(std::bit_width(n - (n > 0)));
  auto hub_column = [&] {
    for (;;) {
      std::uint64_t rank = 0;
      for (std::uint64_t level = 0; level < levels; level += 2) {
        const std::uint64_t r = rng();
        rank = (rank << 1) | ((r >> 32) >= low_half ? 1 : 0);
        if (level + 1 < levels) rank = (rank << 1) | ((r & 0xffffffff) >= low_half ? 1 : 0);
      }
      if (rank < n) return (rank * stride + offset) % n;
    }
  };
  const auto band = static_cast<std::uint64_t>(circuit_band);
  auto off_diagonal = [&](std::uint64_t i) {
    if (rng() >> 63) return hub_column();
    const std::uint64_t first = i > band ? i - band : 0;
    const std::uint64_t last = std::min(n - 1, i + band);
    const std::uint64_t c = first + rng.below(last - first);  // skips i below
    return c >= i ? c + 1 : c;
  };

  std::vector<index_t> col_idx;
  std::vector<T> values;
  col_idx.reserve(static_cast<std::size_t>(nnz));
  values.reserve(static_cast<std::size_t>(nnz));
  std::vector<std::uint64_t> picked;
  const std::uint64_t local_reach = std::min(band, n > 0 ? n - 1 : 0);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto length = static_cast<std::uint64_t>(row_ptr[i + 1] - row_ptr[i]);
    if (length - 1 <= local_reach) {
      // The band alone holds at least local_reach other columns, so the redraws end quickly
      // whatever the skew. Sorted sets do not depend on which duplicate was dropped.
      picked.assign(1, i);
      while (picked.size() < length) {
        for (std::size_t k = picked.size(); k < length; ++k)
          picked.push_back(off_diagonal(i));
        std::sort(picked.begin(), picked.end());
        picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
      }
      for (std::uint64_t c : picked)
        col_idx.push_back(static_cast<index_t>(c));
    } else {
      // Uniform over the other n − 1 columns (p ≥ i stands for p + 1), the diagonal merged in.
      detail::sample_sorted_distinct(rng, n - 1, length - 1, picked, scratch);
      bool diagonal_done = false;
      for (std::uint64_t p : picked) {
        if (!diagonal_done && p >= i) {
          col_idx.push_back(static_cast<index_t>(i));
          diagonal_done = true;
        }
        col_idx.push_back(static_cast<index_t>(p >= i ? p + 1 : p));
      }
      if (!diagonal_done) col_idx.push_back(static_cast<index_t>(i));
    }
  }
  values.resize(col_idx.size());
  for (auto& v : values)
    v = rng.uniform_nonzero<T>();
  return csr<T, cpu>(unchecked, rows, rows, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

}  // namespace generate
/// The float and double instantiations, compiled once into the library (see
/// SPADE_MATRIX_MARKET_INSTANCES for why); SPADE_HEADER_ONLY turns this off.
#define SPADE_GENERATOR_INSTANCES(PREFIX, T)                                                       \
  PREFIX template csr<T, cpu> random_sparse<T>(index_t, index_t, double, std::uint64_t);           \
  PREFIX template dense<T, cpu, row_major> random_dense<T, row_major>(index_t, index_t,            \
                                                                      std::uint64_t);              \
  PREFIX template dense<T, cpu, col_major> random_dense<T, col_major>(index_t, index_t,            \
                                                                      std::uint64_t);              \
  PREFIX template vector<T, cpu> random_vector<T>(index_t, std::uint64_t);                         \
  PREFIX template csr<T, cpu> generate::stencil7<T>(index_t, index_t, index_t);                    \
  PREFIX template csr<T, cpu> generate::stencil27<T>(index_t, index_t, index_t);                   \
  PREFIX template csr<T, cpu> generate::rmat<T>(index_t, index_t, double, double, double,          \
                                                std::uint64_t);                                    \
  PREFIX template csr<T, cpu> generate::rmat<T>(index_t, index_t, std::uint64_t);                  \
  PREFIX template csr<T, cpu> generate::block_diagonal<T>(index_t, index_t, std::uint64_t);        \
  PREFIX template csr<T, cpu> generate::block_diagonal<T>(index_t, index_t, index_t,               \
                                                          std::uint64_t);                          \
  PREFIX template csr<T, cpu> generate::banded<T>(index_t, index_t, index_t, std::uint64_t);       \
  PREFIX template csr<T, cpu> generate::uniform_rows<T>(index_t, index_t, index_t, std::uint64_t); \
  PREFIX template csr<T, cpu> generate::gcoo_paper<T>(index_t, double, std::uint64_t);             \
  PREFIX template csr<T, cpu> generate::circuit<T>(index_t, double, index_t, index_t,              \
                                                   std::uint64_t, double);
#ifndef SPADE_HEADER_ONLY
SPADE_GENERATOR_INSTANCES(extern, float)
SPADE_GENERATOR_INSTANCES(extern, double)
#endif

}  // namespace spade
