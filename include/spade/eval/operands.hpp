// Resolving expression children to storage operands: scale and transpose fold in, nested
// expressions are evaluated into temporaries, and plan conversion steps run through the cache.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/core/strided.hpp"
#include "spade/core/tuned.hpp"
#include "spade/core/tuning.hpp"
#include "spade/expr/cwise.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/expr/view.hpp"
#include "spade/formats/convert.hpp"
#include "spade/plan/facts.hpp"
#include "spade/plan/steps.hpp"

namespace spade {

template <class E>
expr::result_t<E> eval(const E& e);

namespace detail {

/// The facts and copies that only a space's back end can compute: device/facts.hpp specialises
/// it for the gpu with `transpose(csr)`, `count_tiles(csr, csr)` (the tile census) and
/// `spgemm_profile(csr, csr)` (hash_spgemm's profile, as text). Named through the operands'
/// space type, so it is looked up where the facts are used, after <spade/spade.hpp> has
/// declared every back end.
template <class Space>
struct fact_backend {
  static_assert(sizeof(Space) == 0,
                "spade: no back end computes facts for this space; include <spade/spade.hpp>");
};

/// Threads the device holding gpu operand `a` keeps resident (0 for a cpu or empty operand).
template <class A>
std::int64_t resident_threads_of(const A& a) {
  if constexpr (std::is_same_v<typename A::space_type, gpu>) {
    if (const context* ctx = a.values().owner(); ctx != nullptr)
      return std::int64_t{ctx->properties().sm_count} * ctx->properties().max_threads_per_sm;
  }
  return 0;
}

/// L2 cache bytes of the device holding gpu operand `a` (0 for a cpu or empty operand).
template <class A>
std::int64_t l2_cache_bytes_of(const A& a) {
  if constexpr (std::is_same_v<typename A::space_type, gpu>) {
    if (const context* ctx = a.values().owner(); ctx != nullptr)
      return ctx->properties().l2_cache_bytes;
  }
  return 0;
}

/// p of the gcoo the planner makes from sparse operand `a` for a device of `resident` threads
/// (tuning().gcoo_planner_group_size; 0 resident: no device, tuning().gcoo_group_size), or a
/// gcoo's own.
template <class A>
index_t planned_group_size_for(const A& a, std::int64_t resident) {
  const auto& t = tuning();
  if constexpr (is_gcoo_v<A>) {
    return a.group_size();
  } else {
    if (t.gcoo_planner_group_size > 0) return static_cast<index_t>(t.gcoo_planner_group_size);
    if (resident <= 0) return static_cast<index_t>(t.gcoo_group_size);
    const std::int64_t resident_warps = resident / 32;
    for (const index_t p : {4, 2})
      if (a.rows() / p >= resident_warps) return p;
    return 1;
  }
}

struct row_profile_key {};
using plan::row_profile;

/// A csr operand's row profile (plan/facts.hpp), read once and cached on it.
template <class A>
const row_profile& row_profile_of(const A& a) {
  static_assert(is_csr_v<A>, "spade: internal: row profiles are read off csr row pointers");
  return a.cache().template get_or_make<row_profile_key, row_profile>([&] {
    std::vector<index_t> row_ptr;
    if constexpr (std::is_same_v<typename A::space_type, gpu>)
      row_ptr = a.row_ptr().to_host();
    else
      row_ptr = a.row_ptr();
    row_profile profile;
    profile.lengths.resize(static_cast<std::size_t>(a.rows()));
    for (std::size_t r = 0; r < profile.lengths.size(); ++r) {
      profile.lengths[r] = row_ptr[r + 1] - row_ptr[r];
      profile.longest = std::max(profile.longest, profile.lengths[r]);
    }
    profile.mean = a.rows() > 0 ? static_cast<double>(a.nnz()) / a.rows() : 0.0;
    return profile;
  });
}

template <class A>
double tile_fill_of(const A& a);  // below, with the other facts of a sparse × dense product

/// The tile fill a tune class names (core/tuned.hpp): the operand's, counted only where
/// tiled_spmm could be planned (nnz at least tuning().tiled_spmm_min_nnz), else 0, so that
/// classifying a small operand never launches the tile census.
template <class A>
double tune_tile_fill_of(const A& a) {
  return static_cast<double>(a.nnz()) >= tuning().tiled_spmm_min_nnz ? tile_fill_of(a) : 0.0;
}

/// The tune table of the device holding gpu operand `a` (core/tuned.hpp), or null (a cpu or
/// empty operand, no tune file, tuned choices off).
template <class A>
std::shared_ptr<const tuned_table> tuned_table_of(const A& a) {
  if constexpr (std::is_same_v<typename A::space_type, gpu>) {
    if (const context* ctx = a.values().owner(); ctx != nullptr) {
      auto table = tuned_table_for(ctx->properties());
      if (table->size() > 0 || !table->problem.empty()) return table;
    }
  }
  return nullptr;
}

/// p of the gcoo `spade tune` measured fastest on gpu csr `a` itself, else on every one of at
/// least two matrices of its class, on its device (0: the rules decide; tuned_entry::decision_for).
template <class A>
index_t tuned_group_size(const A& a) {
  if constexpr (is_csr_v<A> && std::is_same_v<typename A::space_type, gpu>) {
    if (a.nnz() == 0) return 0;
    const auto table = tuned_table_of(a);
    if (!table) return 0;
    const row_profile& rows = row_profile_of(a);
    const double fill = tune_tile_fill_of(a);
    const tuned_entry* e = table->find(
        "gcoo",
        gcoo_tune_class(sizeof(typename A::value_type), a.rows(), rows.mean, rows.longest, fill));
    const std::string choice =
        e ? e->decision_for(tune_fingerprint(a.rows(), a.cols(), a.nnz(), rows.longest))
          : std::string();
    if (choice.size() > 1 && choice[0] == 'p') {
      const int p = std::atoi(choice.c_str() + 1);
      if (p >= 1 && p <= 32) return static_cast<index_t>(p);
    }
  }
  return 0;
}

/// p of the gcoo the planner makes from operand `a` on its own device: a value set in
/// tuning().gcoo_planner_group_size, else the one its device's tune file decides
/// (tuned_group_size), else the resident-warp rule (a cpu or empty operand:
/// tuning().gcoo_group_size). The gcoo is cached on `a` with the p of its first conversion:
/// changing any of these later affects operands not converted yet.
template <class A>
index_t planned_group_size(const A& a) {
  if constexpr (!is_gcoo_v<A>)
    if (tuning().gcoo_planner_group_size <= 0)
      if (const index_t p = tuned_group_size(a); p > 0) return p;
  return planned_group_size_for(a, resident_threads_of(a));
}

/// Whether a planned cuSPARSE product C = op(A)·B (C of c_rows × c_cols) runs ALG2 rather than
/// ALG3: plan::spmm_alg2_preferred with A's longest row from its cached row profile. The profile
/// is read only where it can change the answer (a float ALG2 under the skewed-rows cut-off), and
/// not for op(A) = Aᵀ, whose rows are A's columns.
template <class A>
bool planned_spmm_alg2(const A& a, bool transposed, std::int64_t c_rows, std::int64_t c_cols) {
  constexpr bool double_precision = std::is_same_v<typename A::value_type, double>;
  const bool alg2 = plan::spmm_alg2_preferred(c_rows, c_cols, a.rows(), a.nnz(), double_precision);
  if constexpr (is_csr_v<A>)
    if (alg2 && !transposed && !double_precision &&
        c_rows * c_cols < tuning().spmm_alg3_skewed_max_elements)
      return plan::spmm_alg2_preferred(c_rows, c_cols, a.rows(), a.nnz(), double_precision,
                                       row_profile_of(a).longest);
  return alg2;
}

/// Whether a planned cuSPARSE product C = op(A)·B with B of c_cols columns runs ALG1:
/// plan::spmm_alg1_preferred with A's longest row and long-row count from its cached row
/// profile, read only for narrow B over an A that one of its rules can take (at least
/// spmm_alg1_min_rows rows, or at most spmm_alg1_small_max_rows); never for op(A) = Aᵀ.
template <class A>
bool planned_spmm_alg1(const A& a, bool transposed, std::int64_t c_cols) {
  if constexpr (is_csr_v<A>) {
    const auto& t = tuning();
    const bool small = a.rows() <= t.spmm_alg1_small_max_rows;
    if (!transposed && c_cols <= plan::spmm_alg1_widest() &&
        (small || a.rows() >= t.spmm_alg1_min_rows)) {
      const row_profile& profile = row_profile_of(a);
      return plan::spmm_alg1_preferred(
          c_cols, a.rows(), a.nnz(), profile.longest,
          small ? profile.rows_longer_than(static_cast<index_t>(t.spmm_alg1_small_long_row)) : -1);
    }
  }
  return false;
}

/// The ellr layout the planner makes from `a` for a device of `resident` threads: the paper's
/// while its padding is at most tuning().ellr_plain_max_padding, else SELL-C-σ, either with as
/// many lanes as ELLR-T gives a row there (one without a device); an ellr keeps its own.
template <class A>
ellr_layout planned_ellr_layout_for(const A& a, std::int64_t resident) {
  if constexpr (is_ellr_v<A>) {
    return a.layout();
  } else if constexpr (is_csr_v<A>) {
    const auto& t = tuning();
    const row_profile& profile = row_profile_of(a);
    // Lanes as many as the threads ELLR-T will give a row, so those threads read side by side.
    const index_t lanes =
        resident > 0 ? detail::ellr_threads_per_row(a.rows(), profile.mean, resident) : 1;
    if (profile.padding(ellr_layout{}) <= t.ellr_plain_max_padding) return ellr_layout{0, 0, lanes};
    return ellr_layout{static_cast<index_t>(t.ellr_slice_height),
                       static_cast<index_t>(t.ellr_sort_window), lanes};
  } else {
    return {};
  }
}

/// The ellr layout the planner makes from `a` on its own device.
template <class A>
ellr_layout planned_ellr_layout(const A& a) {
  return planned_ellr_layout_for(a, resident_threads_of(a));
}

/// `source` converted to Target, cached on `source` (hit reported through `hit`). A gpu gcoo
/// target gets the planner's group size, a gpu ellr target the planner's layout.
template <class Target, class Source>
const Target& cached_convert(const Source& source, bool* hit = nullptr) {
  if constexpr (std::is_same_v<Target, Source>) {
    if (hit) *hit = true;
    return source;
  } else if constexpr (is_gcoo_v<Target> && std::is_same_v<typename Target::space_type, gpu>) {
    return source.cache().template get_or_make<Target, Target>(
        [&] { return convert<Target>(source, planned_group_size(source)); }, hit);
  } else if constexpr (is_ellr_v<Target> && std::is_same_v<typename Target::space_type, gpu>) {
    return source.cache().template get_or_make<Target, Target>(
        [&] { return convert<ellr>(source, planned_ellr_layout(source)); }, hit);
  } else {
    return source.cache().template get_or_make<Target, Target>(
        [&] { return convert<Target>(source); }, hit);
  }
}

/// The gcoo a sparse_view stands for: its dense operand converted once with the planner's
/// group size, cached on that operand.
template <class V>
const expr::result_t<V>& viewed_gcoo(const V& view) {
  return cached_convert<expr::result_t<V>>(view.inner);
}

/// Calls f(storage, transposed, scale) with `x` seen as a storage operand: scaled and
/// transposed wrappers fold into the flags, any other expression is evaluated into a temporary
/// that lives until f returns.
template <class X, class F>
decltype(auto) with_operand(const X& x, F&& f, bool transposed = false,
                            typename X::value_type scale = 1) {
  if constexpr (matrix_or_vector<X>) {
    return f(x, transposed, scale);
  } else if constexpr (expr::is_scaled_v<X>) {
    return with_operand(x.inner, std::forward<F>(f), transposed, scale * x.factor);
  } else if constexpr (expr::is_transposed_v<X>) {
    return with_operand(x.inner, std::forward<F>(f), !transposed, scale);
  } else if constexpr (expr::is_sparse_view_v<X>) {
    return f(viewed_gcoo(x), transposed, scale);
  } else {
    const auto temporary = spade::eval(x);
    return f(temporary, transposed, scale);
  }
}

/// True when x, under scalings and transposes, is a dense matrix, a vector or a view of one.
template <class X>
constexpr bool strided_leaf() {
  if constexpr (expr::is_scaled_v<X> || expr::is_transposed_v<X>)
    return strided_leaf<expr::bare_t<decltype(X::inner)>>();
  else
    return expr::is_view_v<X> || is_dense_v<X> || is_vector_v<X>;
}
/// True when x, under scalings and transposes, is a view.
template <class X>
constexpr bool view_leaf() {
  if constexpr (expr::is_scaled_v<X> || expr::is_transposed_v<X>)
    return view_leaf<expr::bare_t<decltype(X::inner)>>();
  else
    return expr::is_view_v<X>;
}

/// A gpu product of a view of a dense matrix (a block, under scalings and transposes) with a
/// vector: cuBLAS GEMV reads the block in place through its leading dimension, where the general
/// path would copy it first (the copy costs as much as the GEMV). Measured on the H100
/// (docs/benchmarks/view-products-2026-11-25.md), only this case gains: GEMM on blocks of an
/// 8192² matrix ran at 0.96x (fp32) and 0.67x (fp64) of GEMM on contiguous copies, whose copy
/// costs 2 % of the GEMM, and GEMV with a strided x (a column of a row-major matrix) at 0.81x and
/// 0.60x of GEMV on a copy of x, which costs 4 %. So GEMM operands and a strided x are copied.
template <class L, class R>
constexpr bool strided_product() {
  using A = expr::result_t<L>;
  using B = expr::result_t<R>;
  return std::is_same_v<typename A::space_type, gpu> && is_dense_v<A> && is_vector_v<B> &&
         view_leaf<L>() && strided_leaf<L>() && strided_leaf<R>();
}

/// An operand of a strided product: where it lies, whether it is seen transposed, its scale.
template <class T>
struct strided_part {
  strided_operand<T> operand;
  bool transposed;
  T scale;
};

template <class X>
auto strided_part_of(const X& x, bool transposed = false,
                     typename X::value_type scale = typename X::value_type(1)) {
  using T = typename X::value_type;
  if constexpr (expr::is_scaled_v<X>) {
    return strided_part_of(x.inner, transposed, scale * x.factor);
  } else if constexpr (expr::is_transposed_v<X>) {
    return strided_part_of(x.inner, !transposed, scale);
  } else if constexpr (expr::is_view_v<X>) {
    return strided_part<T>{
        {x.data(), x.rows(), x.cols(), x.stride, X::row_order(), x.base_values().owner()},
        transposed,
        scale};
  } else if constexpr (is_vector_v<X>) {
    return strided_part<T>{{x.data(), x.size(), 1, 1, true, x.values().owner()}, transposed, scale};
  } else {
    return strided_part<T>{{x.data(), x.rows(), x.cols(), x.leading_dimension(),
                            std::is_same_v<typename X::layout_type, row_major>, x.values().owner()},
                           transposed,
                           scale};
  }
}

/// Runs the steps of `Steps` that apply to `Slot`, in order, each cached on its source.
template <class Slot, class M>
const M& apply_steps(const M& m, plan::steps<>) {
  return m;
}
template <class Slot, class M, class First, class... Rest>
decltype(auto) apply_steps(const M& m, plan::steps<First, Rest...>) {
  if constexpr (std::is_same_v<typename First::slot, Slot>) {
    return apply_steps<Slot>(cached_convert<typename First::target>(m), plan::steps<Rest...>{});
  } else {
    return apply_steps<Slot>(m, plan::steps<Rest...>{});
  }
}

struct transposed_copy_key {};

/// Aᵀ as a new object of the same type, cached on `a`: for kernels without an op flag.
template <class M>
const M& cached_transpose(const M& a) {
  return a.cache().template get_or_make<transposed_copy_key, M>([&]() -> M {
    using T = typename M::value_type;
    using S = typename M::space_type;
    // The transposition counts once, and each conversion it goes through counts too (gcoo, ellr
    // and tiled: only those).
    if constexpr (!is_gcoo_v<M> && !is_ellr_v<M> && !is_tiled_v<M>) ++conversion_counter();
    if constexpr (is_csr_v<M>) {
      if constexpr (std::is_same_v<S, gpu>) {
        return fact_backend<S>::transpose(a);
      } else {
        const auto c = convert<coo<T, cpu>>(a);
        return convert<csr<T, cpu>>(
            coo<T, cpu>(unchecked, a.cols(), a.rows(), c.col_idx(), c.row_idx(), c.values()));
      }
    } else if constexpr (is_coo_v<M>) {
      // A coordinate list transposes by swapping its index arrays (order is free in coo).
      return M(unchecked, a.cols(), a.rows(), a.col_idx(), a.row_idx(), a.values());
    } else if constexpr (is_gcoo_v<M> || is_ellr_v<M> || is_tiled_v<M>) {
      // Through the csr form (its conversion cached on `a` as well), back to a's own shape of
      // the format: gcoo keeps its group size, ellr its layout.
      const auto& t = cached_transpose(cached_convert<csr<T, S>>(a));
      if constexpr (is_gcoo_v<M>)
        return group_rows(t, a.group_size());
      else if constexpr (is_ellr_v<M>)
        return ellr_rows(t, a.layout());
      else
        return convert<M>(t);
    } else {
      // A row-major rows×cols block read as col-major is its cols×rows transpose.
      using L = typename M::layout_type;
      using other = std::conditional_t<std::is_same_v<L, row_major>, col_major, row_major>;
      auto flipped = convert<dense<T, S, other>>(a);
      return M(unchecked, a.cols(), a.rows(), std::move(flipped.values()));
    }
  });
}

template <class M>
inline constexpr bool is_col_major_v = false;
template <class T, class S>
inline constexpr bool is_col_major_v<dense<T, S, col_major>> = true;

/// What the operands alone do not say: transposition flags and the destination's layout.
struct operation_facts {
  bool lhs_transposed = false;
  bool rhs_transposed = false;
  bool destination_col_major = false;
};

struct product_uses_key {};
/// Products evaluated with a sparse operand as it is (kept in its cache, so a change of its
/// values starts the count again).
struct product_uses {
  mutable long count = 0;
};

template <class A>
const product_uses& product_uses_of(const A& a) {
  return a.cache().template get_or_make<product_uses_key, product_uses>(
      [] { return product_uses{}; });
}

struct tile_census_key {};

/// The census of A·B in tiles (device::count_tiles, through fact_backend) on csr forms of the
/// operands: a csr as it is, any other format through its cached csr conversion. Counted once per
/// pair and cached on A, keyed by B's identity: a write to either operand's values forgets it (two
/// kernels and a synchronisation per evaluation cost up to 0.15 ms on the real set before it was
/// cached).
template <class A, class B>
const plan::tile_census& tile_census_of(const A& a, const B& b) {
  using T = typename A::value_type;
  return a.cache().template get_or_make_for<tile_census_key, plan::tile_census>(
      b.cache().identity(), [&] {
        return fact_backend<typename A::space_type>::count_tiles(cached_convert<csr<T, gpu>>(a),
                                                                 cached_convert<csr<T, gpu>>(b));
      });
}

struct tile_fill_key {};

/// Entries per stored 8×8 tile of a sparse operand: a tiled one's own mean fill, any other
/// format's counted on its csr form (device::count_own_tiles) once and cached on the operand.
template <class A>
double tile_fill_of(const A& a) {
  using T = typename A::value_type;
  if constexpr (is_tiled_v<A>) {
    return a.mean_fill();
  } else {
    return a.cache().template get_or_make<tile_fill_key, double>([&] {
      if (a.nnz() == 0) return 0.0;
      const std::int64_t tiles =
          fact_backend<typename A::space_type>::count_own_tiles(cached_convert<csr<T, gpu>>(a));
      return tiles > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(tiles) : 0.0;
    });
  }
}

template <class M>
constexpr plan::format format_of() {
  if constexpr (is_vector_v<M>) return plan::format::vector;
  if constexpr (is_csr_v<M>) return plan::format::csr;
  if constexpr (is_coo_v<M>) return plan::format::coo;
  if constexpr (is_gcoo_v<M>) return plan::format::gcoo;
  if constexpr (is_ellr_v<M>) return plan::format::ellr;
  if constexpr (is_tiled_v<M>) return plan::format::tiled;
  return plan::format::dense;
}

template <class M>
plan::operand_facts operand_facts_of(const M& m) {
  plan::operand_facts f;
  f.kind = format_of<M>();
  f.on_gpu = std::is_same_v<typename M::space_type, gpu>;
  f.value_bytes = static_cast<int>(sizeof(typename M::value_type));
  if constexpr (is_vector_v<M>) {
    f.rows = m.size();
    f.cols = 1;
    f.nnz = m.size();
  } else {
    f.rows = m.rows();
    f.cols = m.cols();
    if constexpr (is_dense_v<M>)
      f.nnz = std::int64_t{m.rows()} * m.cols();
    else
      f.nnz = m.nnz();
  }
  return f;
}

/// hash_spgemm's profile of op(a)·op(b) (transposes cached on the operands), as explain shows it.
template <bool TransposeA, bool TransposeB, class A, class B>
std::function<std::string()> spgemm_profile_fact(const A& a, const B& b) {
  return [&a, &b] {
    const auto& lhs = [&]() -> const A& {
      if constexpr (TransposeA)
        return cached_transpose(a);
      else
        return a;
    }();
    const auto& rhs = [&]() -> const B& {
      if constexpr (TransposeB)
        return cached_transpose(b);
      else
        return b;
    }();
    return fact_backend<typename A::space_type>::spgemm_profile(lhs, rhs);
  };
}

/// What `spade tune` measured on gpu csr `a`'s class and device in tune table `table` for a
/// product with a dense B of `columns` columns (plan::tuned_choice; nothing below
/// `min_columns`, for an operand the row-wise kernels take, or without a tune file). Counts the
/// tile fill when A has tiled_spmm_min_nnz entries (the class needs it; cached on A). With
/// `measured_only`, a matrix the table never measured gets no class (so no tile census) and no
/// entry, and a class's choice is kept only for a matrix it measured.
template <class A>
plan::tuned_choice tuned_choice_of(const A& a, std::string_view table_name, index_t columns,
                                   std::int64_t min_columns, bool measured_only = false) {
  plan::tuned_choice choice;
  if constexpr (is_csr_v<A> && std::is_same_v<typename A::space_type, gpu>) {
    if (columns < min_columns || a.nnz() == 0 ||
        plan::rowwise_preferred(a.rows(), a.cols(), a.nnz()))
      return choice;
    const auto table = tuned_table_of(a);
    if (!table) return choice;
    choice.table = table.get();  // kept alive by the process's table cache
    const row_profile& rows = row_profile_of(a);
    const std::string fingerprint = tune_fingerprint(a.rows(), a.cols(), a.nnz(), rows.longest);
    if (measured_only && !table->measured(table_name, fingerprint)) return choice;
    const double fill = tune_tile_fill_of(a);
    constexpr int value_bytes = sizeof(typename A::value_type);
    choice.operand_class = spmm_tune_class(
        value_bytes, rows.mean, rows.longest, columns, fill,
        spmm_fits_l2(value_bytes, a.rows(), a.cols(), a.nnz(), columns, l2_cache_bytes_of(a)));
    choice.entry = table->find(table_name, choice.operand_class);
    if (choice.entry) choice.kernel = choice.entry->decision_for(fingerprint, &choice.measured);
    if (measured_only && !choice.measured) choice.kernel.clear();
  }
  return choice;
}

/// The kernel `spade tune` measured fastest for gpu csr `a` times a dense B of `columns` columns
/// ("spmm" table; from tune_min_columns).
template <class A>
plan::tuned_choice tuned_spmm_choice(const A& a, index_t columns) {
  return tuned_choice_of(a, "spmm", columns, tune_min_columns);
}

/// The rules' cusparseSpMM algorithm (1–3) for C = op(A)·B with C of c_rows × c_cols:
/// planned_spmm_alg1, else planned_spmm_alg2, else ALG3.
template <class A>
int ruled_spmm_algorithm(const A& a, bool transposed, std::int64_t c_rows, std::int64_t c_cols) {
  if (planned_spmm_alg1(a, transposed, c_cols)) return 1;
  return planned_spmm_alg2(a, transposed, c_rows, c_cols) ? 2 : 3;
}

/// The algorithm a planned cuSPARSE product C = op(A)·B (C of c_rows × c_cols) runs with: the
/// fastest of A's own measurement in the "cusparse" entry of its tune file, which `spade tune`
/// took with A not transposed and B and C row-major (`row_major_operands`); else the rules,
/// planned_spmm_alg1 and planned_spmm_alg2, and ALG3 when neither applies. Unlike the kernel
/// choice, a class's unanimous choice is not followed for matrices it did not measure: the
/// algorithm turns on C's size, which the class leaves out, and in a leave-half-out replay of
/// the real set's tune report the one class decision that differed from the rules lost 0.73×
/// (docs/planner.md). Explain and the runner both ask this.
template <class A>
plan::spmm_algorithm_choice planned_spmm_algorithm_choice(const A& a, bool transposed,
                                                          bool row_major_operands,
                                                          std::int64_t c_rows,
                                                          std::int64_t c_cols) {
  plan::spmm_algorithm_choice choice;
  if (!transposed && row_major_operands) {
    choice.tuned = tuned_choice_of(a, "cusparse", static_cast<index_t>(c_cols),
                                   tune_min_cusparse_columns, true);
    // A read table names only alg1–alg3 in "cusparse" (tuned_table::parse).
    if (const int number = cusparse_spmm_algorithm_number(choice.tuned.kernel); number > 0) {
      choice.number = number;
      return choice;
    }
  }
  choice.number = ruled_spmm_algorithm(a, transposed, c_rows, c_cols);
  return choice;
}

/// The facts the steps of a node over storage operands `a` and `b` decide on: the cheap ones
/// now, the costly ones as functions that compute them on first call and cache them on the
/// operands (plan/facts.hpp). The functions refer to `a` and `b`: use the facts while they live.
template <class A, class B>
plan::product_facts product_facts_of(const A& a, const B& b, const operation_facts& flags) {
  plan::product_facts f;
  f.lhs = operand_facts_of(a);
  f.rhs = operand_facts_of(b);
  f.lhs_transposed = flags.lhs_transposed;
  f.rhs_transposed = flags.rhs_transposed;
  f.destination_col_major = flags.destination_col_major;
  f.rhs_col_major = is_col_major_v<B>;
  if constexpr (is_vector_v<B>)
    f.vectors = 1;
  else
    f.vectors = flags.rhs_transposed ? b.rows() : b.cols();
  if constexpr (sparse_matrix<A>) {
    f.resident_threads = resident_threads_of(a);
    f.lhs_uses_as_is = [&a] { return product_uses_of(a).count; };
    if constexpr (std::is_same_v<typename A::space_type, gpu>) {
      f.lhs_group_size = [&a] { return planned_group_size(a); };
      if constexpr (!sparse_matrix<B>) {
        if (const std::int64_t l2 = l2_cache_bytes_of(a); l2 > 0)
          f.fits_l2 = spmm_fits_l2(f.lhs.value_bytes, a.rows(), a.cols(), a.nnz(), f.vectors, l2);
        f.lhs_tile_fill = [&a] { return tile_fill_of(a); };
        if constexpr (is_csr_v<A>) {
          f.tuned_spmm = [&a](index_t columns) { return tuned_spmm_choice(a, columns); };
          // cusparse_spmm reads B as it is and writes C in place (no layout copies).
          f.cusparse_spmm_algorithm =
              [&a, transposed = flags.lhs_transposed,
               row_major = !is_col_major_v<B> && !flags.destination_col_major,
               c_rows = std::int64_t{flags.lhs_transposed ? a.cols() : a.rows()},
               c_cols = std::int64_t{f.vectors}] {
                return planned_spmm_algorithm_choice(a, transposed, row_major, c_rows, c_cols);
              };
        }
      }
    }
    if constexpr (is_csr_v<A> || is_ellr_v<A>)
      f.lhs_ellr_layout = [&a] { return planned_ellr_layout(a); };
    if constexpr (is_csr_v<A>) {
      f.lhs_row_profile = [&a]() -> const row_profile& { return row_profile_of(a); };
      f.lhs_ellr_cached = [&a] {
        using ellr_type = ellr<typename A::value_type, typename A::space_type>;
        return a.cache().template contains<ellr_type>();
      };
      f.lhs_gcoo_cached = [&a] {
        using gcoo_type = gcoo<typename A::value_type, typename A::space_type>;
        return a.cache().template contains<gcoo_type>();
      };
    }
    if constexpr (sparse_matrix<B> && std::is_same_v<typename A::space_type, gpu>) {
      f.census = [&a, &b]() -> const plan::tile_census& { return tile_census_of(a, b); };
      if constexpr (is_csr_v<A> && is_csr_v<B>) {
        // The flags pick one of four functions rather than ride in the capture: two references
        // fill std::function's inline storage, and a third member cost a heap allocation on
        // every gpu csr × csr product.
        if (flags.lhs_transposed)
          f.spgemm_profile = flags.rhs_transposed ? spgemm_profile_fact<true, true>(a, b)
                                                  : spgemm_profile_fact<true, false>(a, b);
        else
          f.spgemm_profile = flags.rhs_transposed ? spgemm_profile_fact<false, true>(a, b)
                                                  : spgemm_profile_fact<false, false>(a, b);
      }
    }
  }
  return f;
}

/// The data pointer of a storage operand (for alias checks).
template <class M>
const void* data_of(const M& m) {
  return m.values().data();
}

/// True when any storage leaf of expression `e` shares its values with `target`.
template <class E>
bool refers_to(const E& e, const void* target) {
  if constexpr (matrix_or_vector<E>) {
    return target && data_of(e) == target;
  } else if constexpr (expr::is_view_v<E>) {
    return target && static_cast<const void*>(e.base_values().data()) == target;
  } else if constexpr (expr::is_row_range_v<E>) {
    return target && data_of(*e.matrix) == target;
  } else if constexpr (expr::is_scaled_v<E> || expr::is_transposed_v<E> ||
                       expr::is_sparse_view_v<E> || expr::is_cwise_unary_v<E> ||
                       expr::is_cast_v<E> || expr::is_vector_reduction_v<E>) {
    return refers_to(e.inner, target);
  } else if constexpr (expr::is_diagonal_matrix_v<E>) {
    return refers_to(e.diag, target);
  } else if constexpr (expr::is_diagonal_scaled_v<E>) {
    return refers_to(e.diag, target) || refers_to(e.inner, target);
  } else if constexpr (expr::is_masked_product_v<E>) {
    return refers_to(e.dense, target) || refers_to(e.inner, target);
  } else {
    return refers_to(e.lhs, target) || refers_to(e.rhs, target);
  }
}

}  // namespace detail
}  // namespace spade
