// Facts of a gpu plan previewed from cpu operands for a device_profile (explain(e, profile)).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/device_profile.hpp"
#include "spade/core/tuning.hpp"
#include "spade/eval/operands.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/formats/traits.hpp"
#include "spade/plan/facts.hpp"

namespace spade::detail {

/// The type an expression or operand would have with its storage on the gpu (const and
/// references kept): the plan a gpu copy of cpu operands gets.
template <class X>
struct on_gpu {
  using type = X;
};
template <class X>
using on_gpu_t = typename on_gpu<X>::type;
template <class X>
struct on_gpu<const X> {
  using type = const on_gpu_t<X>;
};
template <class X>
struct on_gpu<X&> {
  using type = on_gpu_t<X>&;
};
template <class T, class S, class L>
struct on_gpu<dense<T, S, L>> {
  using type = dense<T, gpu, L>;
};
template <class T, class S>
struct on_gpu<vector<T, S>> {
  using type = vector<T, gpu>;
};
template <class T, class S>
struct on_gpu<csr<T, S>> {
  using type = csr<T, gpu>;
};
template <class T, class S>
struct on_gpu<coo<T, S>> {
  using type = coo<T, gpu>;
};
template <class T, class S>
struct on_gpu<gcoo<T, S>> {
  using type = gcoo<T, gpu>;
};
template <class T, class S>
struct on_gpu<ellr<T, S>> {
  using type = ellr<T, gpu>;
};
template <class T, class S>
struct on_gpu<tiled<T, S>> {
  using type = tiled<T, gpu>;
};
template <class L, class R>
struct on_gpu<expr::product<L, R>> {
  using type = expr::product<on_gpu_t<L>, on_gpu_t<R>>;
};
template <class L, class R>
struct on_gpu<expr::sum<L, R>> {
  using type = expr::sum<on_gpu_t<L>, on_gpu_t<R>>;
};
template <class E>
struct on_gpu<expr::scaled<E>> {
  using type = expr::scaled<on_gpu_t<E>>;
};
template <class E>
struct on_gpu<expr::transposed<E>> {
  using type = expr::transposed<on_gpu_t<E>>;
};
template <class E>
struct on_gpu<expr::sparse_view<E>> {
  using type = expr::sparse_view<on_gpu_t<E>>;
};

/// Makes spade::tuning() hold `values` while it lives (explain(e, profile) plans with the
/// profile's thresholds), then puts the caller's back, also when explain throws.
class tuning_override {
 public:
  explicit tuning_override(const thresholds& values) : saved_(tuning()) { tuning() = values; }
  ~tuning_override() { tuning() = saved_; }
  tuning_override(const tuning_override&) = delete;
  tuning_override& operator=(const tuning_override&) = delete;

 private:
  thresholds saved_;
};

/// Calls tile(tile_row, tile_col) once per stored 8×8 tile of a csr, tile row by tile row.
template <class Tile>
void for_each_host_tile(index_t rows, index_t cols, const std::vector<index_t>& row_ptr,
                        const std::vector<index_t>& col_idx, Tile&& tile) {
  std::vector<index_t> stamp(static_cast<std::size_t>((std::int64_t{cols} + 7) / 8), -1);
  for (index_t first = 0; first < rows; first += 8) {
    const index_t tile_row = first / 8;
    const index_t last = std::min<index_t>(rows, first + 8);
    for (index_t r = first; r < last; ++r)
      for (index_t e = row_ptr[static_cast<std::size_t>(r)];
           e < row_ptr[static_cast<std::size_t>(r) + 1]; ++e) {
        const index_t tile_col = col_idx[static_cast<std::size_t>(e)] / 8;
        if (stamp[static_cast<std::size_t>(tile_col)] == tile_row) continue;
        stamp[static_cast<std::size_t>(tile_col)] = tile_row;
        tile(tile_row, tile_col);
      }
  }
}

/// The tile census of A·B counted on the host from csr arrays, as device::count_tiles counts it
/// on the device: stored 8×8 tiles of each operand, element products and tile pairs.
inline plan::tile_census host_tile_census(index_t a_rows, index_t a_cols,
                                          const std::vector<index_t>& a_row_ptr,
                                          const std::vector<index_t>& a_col_idx, index_t b_rows,
                                          index_t b_cols, const std::vector<index_t>& b_row_ptr,
                                          const std::vector<index_t>& b_col_idx) {
  plan::tile_census census;
  census.a_nnz = static_cast<std::int64_t>(a_col_idx.size());
  census.b_nnz = static_cast<std::int64_t>(b_col_idx.size());
  if (census.a_nnz == 0 || census.b_nnz == 0) return census;
  std::vector<std::int64_t> b_row_tiles(static_cast<std::size_t>((std::int64_t{b_rows} + 7) / 8));
  for_each_host_tile(b_rows, b_cols, b_row_ptr, b_col_idx, [&](index_t tile_row, index_t) {
    ++census.b_tiles;
    ++b_row_tiles[static_cast<std::size_t>(tile_row)];
  });
  for_each_host_tile(a_rows, a_cols, a_row_ptr, a_col_idx, [&](index_t, index_t tile_col) {
    ++census.a_tiles;
    census.tile_pairs += b_row_tiles[static_cast<std::size_t>(tile_col)];
  });
  for (const index_t k : a_col_idx)
    census.products +=
        b_row_ptr[static_cast<std::size_t>(k) + 1] - b_row_ptr[static_cast<std::size_t>(k)];
  return census;
}

/// The start of hash_spgemm's profile (products, nnz(C), compression ratio) counted on the
/// host; its bins depend on the device's kernels and are left out.
inline std::string host_spgemm_profile(index_t a_rows, const std::vector<index_t>& a_row_ptr,
                                       const std::vector<index_t>& a_col_idx, index_t b_cols,
                                       const std::vector<index_t>& b_row_ptr,
                                       const std::vector<index_t>& b_col_idx) {
  std::int64_t products = 0;
  std::int64_t nnz = 0;
  std::vector<index_t> stamp(static_cast<std::size_t>(b_cols), -1);
  for (index_t i = 0; i < a_rows; ++i)
    for (index_t e = a_row_ptr[static_cast<std::size_t>(i)];
         e < a_row_ptr[static_cast<std::size_t>(i) + 1]; ++e) {
      const auto k = static_cast<std::size_t>(a_col_idx[static_cast<std::size_t>(e)]);
      for (index_t q = b_row_ptr[k]; q < b_row_ptr[k + 1]; ++q) {
        ++products;
        const auto c = static_cast<std::size_t>(b_col_idx[static_cast<std::size_t>(q)]);
        if (stamp[c] != i) {
          stamp[c] = i;
          ++nnz;
        }
      }
    }
  std::ostringstream out;
  out << products << " products, nnz(C) " << nnz << ", compression ratio "
      << (nnz > 0 ? static_cast<double>(products) / static_cast<double>(nnz) : 0.0)
      << "; counted on the host (the bins are known only on the device)";
  return out.str();
}

/// The host csr of a cpu sparse operand: itself, or its conversion cached on it.
template <class A>
const auto& host_csr_of(const A& a) {
  return cached_convert<csr<typename A::value_type, cpu>>(a);
}

struct preview_census_key {};
struct preview_tile_fill_key {};

/// The facts a gpu copy of cpu operands `a` and `b` would give a node's steps on the device
/// `profile` describes: the operands' own shapes and entries, that device's resident threads,
/// and the costly facts computed on the host where the device would compute them. The copy is
/// fresh: no product has run with it and it holds no ellr yet. Refers to `a`, `b` and
/// `profile`: use the facts while they live.
template <class A, class B>
plan::product_facts preview_facts_of(const A& a, const B& b, const operation_facts& flags,
                                     const device_profile& profile) {
  static_assert(
      std::is_same_v<typename A::space_type, cpu> && std::is_same_v<typename B::space_type, cpu>,
      "spade: internal: previews are planned from cpu operands");
  plan::product_facts f = product_facts_of(a, b, flags);
  f.lhs.on_gpu = true;
  f.rhs.on_gpu = true;
  if constexpr (sparse_matrix<A>) {
    const std::int64_t resident = profile.resident_threads();
    f.resident_threads = resident;
    f.lhs_uses_as_is = [] { return 0L; };
    f.lhs_group_size = [&a, resident] { return planned_group_size_for(a, resident); };
    if constexpr (is_csr_v<A> || is_ellr_v<A>)
      f.lhs_ellr_layout = [&a, resident] { return planned_ellr_layout_for(a, resident); };
    if constexpr (is_csr_v<A>) {
      f.lhs_ellr_cached = [] { return false; };
      f.lhs_gcoo_cached = [] { return false; };
    }
    if constexpr (!sparse_matrix<B>) {
      f.fits_l2 = spmm_fits_l2(f.lhs.value_bytes, a.rows(), a.cols(), a.nnz(), f.vectors,
                               static_cast<std::size_t>(profile.l2_cache_bytes));
      f.lhs_tile_fill = [&a] {
        return a.cache().template get_or_make<preview_tile_fill_key, double>([&] {
          const auto& ha = host_csr_of(a);
          std::int64_t tiles = 0;
          for_each_host_tile(ha.rows(), ha.cols(), ha.row_ptr(), ha.col_idx(),
                             [&](index_t, index_t) { ++tiles; });
          return tiles > 0 ? static_cast<double>(ha.nnz()) / static_cast<double>(tiles) : 0.0;
        });
      };
    }
    if constexpr (sparse_matrix<B>) {
      f.census = [&a, &b]() -> const plan::tile_census& {
        return a.cache().template get_or_make_for<preview_census_key, plan::tile_census>(
            b.cache().identity(), [&] {
              const auto& ha = host_csr_of(a);
              const auto& hb = host_csr_of(b);
              return host_tile_census(ha.rows(), ha.cols(), ha.row_ptr(), ha.col_idx(), hb.rows(),
                                      hb.cols(), hb.row_ptr(), hb.col_idx());
            });
      };
      if constexpr (is_csr_v<A> && is_csr_v<B>) {
        // Not the hot path: the flags ride in the capture.
        f.spgemm_profile = [&a, &b, ta = flags.lhs_transposed, tb = flags.rhs_transposed] {
          const A& lhs = ta ? cached_transpose(a) : a;
          const B& rhs = tb ? cached_transpose(b) : b;
          return host_spgemm_profile(lhs.rows(), lhs.row_ptr(), lhs.col_idx(), rhs.cols(),
                                     rhs.row_ptr(), rhs.col_idx());
        };
      }
    }
  }
  return f;
}

}  // namespace spade::detail
