// Run-time choice among a plan's candidates: thresholds first, then the kernel's own checks.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "spade/device/kernels.hpp"
#include "spade/eval/operands.hpp"
#include "spade/plan/rule_table.hpp"
#include "spade/plan/thresholds.hpp"

namespace spade::detail {

template <class M>
double density_of(const M& m) {
  const double cells = static_cast<double>(m.rows()) * static_cast<double>(m.cols());
  return cells > 0 ? static_cast<double>(m.nnz()) / cells : 0.0;
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

template <class A>
std::string densify_reason(const A& a, index_t n) {
  const double density = density_of(a);
  const double cells = static_cast<double>(a.rows()) * static_cast<double>(a.cols());
  const auto& t = tuning();
  const bool wide = n >= t.densify_wide_columns;
  const double threshold = wide ? t.densify_density_wide : t.densify_density;
  if (density < threshold || cells > t.densify_max_elements) return {};
  std::ostringstream why;
  why << "lhs density " << density
      << " >= " << (wide ? "densify_density_wide " : "densify_density ") << threshold;
  if (wide) why << " (N = " << n << " >= densify_wide_columns " << t.densify_wide_columns << ")";
  why << " (and " << cells << " elements <= densify_max_elements " << t.densify_max_elements
      << "): a dense GEMM is faster";
  return why.str();
}

/// Mean entries per row of a sparse operand (0 for no rows).
template <class A>
double mean_row_length(const A& a) {
  return a.rows() > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows()) : 0.0;
}

/// The longest row of a csr operand (its cached row profile); -1 for other formats, where rows
/// are not at hand.
template <class A>
index_t longest_row(const A& a) {
  if constexpr (is_csr_v<A>)
    return row_profile_of(a).longest;
  else
    return -1;
}

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

/// Why ellr_spmv should not run op(A)·x or op(A)·X for X of `vectors` columns ("" = it
/// should); the thresholds of spade::tuning().
template <class A>
std::string ellr_decline_reason(const A& a, index_t vectors, const operation_facts& facts) {
  if (facts.lhs_transposed)
    return "the sparse operand is transposed (ellr has no transposed product)";
  if (facts.rhs_transposed) return "the dense operand is transposed";
  if (vectors > device::ellr_max_vectors)
    return "N = " + std::to_string(vectors) + " > ellr_max_vectors " +
           std::to_string(device::ellr_max_vectors);
  if constexpr (is_ellr_v<A>) {
    return {};  // the user's own format
  } else if constexpr (!is_csr_v<A>) {
    return "row lengths unknown for this format (convert to csr to let ellr_spmv compete)";
  } else if (a.nnz() == 0 || vectors == 0) {
    return "the product has no terms (A has no entries or X no columns): no conversion pays";
  } else {
    using ellr_type = ellr<typename A::value_type, typename A::space_type>;
    const auto& t = tuning();
    std::ostringstream why;
    const row_profile& profile = row_profile_of(a);
    const ellr_layout layout = planned_ellr_layout(a);
    // Padding the kernel would read past: none past a row's length, so count it with one lane.
    const double padding = profile.padding(ellr_layout{layout.slice_height, layout.sort_window});
    const std::int64_t resident_threads = resident_threads_of(a);
    if (resident_threads > 0 && a.rows() >= resident_threads &&
        profile.mean > t.ellr_full_device_max_mean_row) {
      why << a.rows() << " rows fill the device's " << resident_threads
          << " resident threads and the mean row length " << profile.mean
          << " > ellr_full_device_max_mean_row " << t.ellr_full_device_max_mean_row
          << ": cuSPARSE streams such rows faster";
    } else if (profile.longest > t.ellr_max_row_spread * profile.mean) {
      why << "longest row " << profile.longest << " > ellr_max_row_spread " << t.ellr_max_row_spread
          << " x mean row length " << profile.mean;
    } else if (padding > t.ellr_max_padding) {
      why << "the planned ellr would be " << padding << " padding > ellr_max_padding "
          << t.ellr_max_padding;
    } else if (!a.cache().template contains<ellr_type>() &&
               product_uses_of(a).count + 1 < t.ellr_min_uses) {
      why << "product " << product_uses_of(a).count + 1 << " with this operand < ellr_min_uses "
          << t.ellr_min_uses
          << ": it runs as it is; a later one converts it to ellr once (cached on it)";
    }
    return why.str();
  }
}

/// The facts that chose ellr_spmv, for explain.
template <class A>
std::string ellr_accept_reason(const A& a) {
  std::ostringstream why;
  if constexpr (is_ellr_v<A>) {
    why << "the operand is an ellr";
  } else if constexpr (is_csr_v<A>) {
    using ellr_type = ellr<typename A::value_type, typename A::space_type>;
    const auto& t = tuning();
    const row_profile& profile = row_profile_of(a);
    const ellr_layout layout = planned_ellr_layout(a);
    why << "longest row " << profile.longest << " <= ellr_max_row_spread " << t.ellr_max_row_spread
        << " x mean row length " << profile.mean << "; ";
    const ellr_layout one_lane{layout.slice_height, layout.sort_window};
    if (layout.slice_height == 0)
      why << "the paper's layout: padding " << profile.padding(one_lane)
          << " <= ellr_plain_max_padding " << t.ellr_plain_max_padding;
    else
      why << "SELL-" << layout.slice_height << "-" << layout.sort_window
          << " (paper's layout would pad " << profile.padding(ellr_layout{})
          << " > ellr_plain_max_padding " << t.ellr_plain_max_padding << "): padding "
          << profile.padding(one_lane);
    why << " <= ellr_max_padding " << t.ellr_max_padding << "; " << layout.lanes
        << " thread(s) per row, entries interleaved to match (slots stored: padding "
        << profile.padding(layout) << "); "
        << (a.cache().template contains<ellr_type>()
                ? "the ellr is cached on the operand (conversion reused)"
                : "converted now, then cached on the operand");
  }
  return why.str();
}

/// Why gcoo_spmm should not run on A·B ("" = it should); the thresholds of spade::tuning().
template <class A, class B>
std::string gcoo_decline_reason(const A& a, const B& b, const operation_facts& facts) {
  if (facts.lhs_transposed)
    return "the sparse operand is transposed (gcoo has no transposed product)";
  if (facts.destination_col_major) return "the destination is col-major";
  if constexpr (is_gcoo_v<A>) return {};  // the user's own format
  const auto& t = tuning();
  const index_t n = facts.rhs_transposed ? b.rows() : b.cols();
  std::ostringstream why;
  const double mean = mean_row_length(a);
  // Rows below gcoo_min_rows need a wide B (and then short rows) or the widest B.
  const bool few_rows = a.rows() < t.gcoo_min_rows &&
                        !(n >= t.gcoo_widest_columns && a.rows() >= t.gcoo_widest_min_rows);
  if (n < t.gcoo_min_columns) {
    why << "N = " << n << " < gcoo_min_columns " << t.gcoo_min_columns;
  } else if (few_rows && n < t.gcoo_wide_columns) {
    why << a.rows() << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and N = " << n
        << " < gcoo_wide_columns " << t.gcoo_wide_columns;
  } else if (few_rows && a.rows() < t.gcoo_wide_min_rows) {
    why << a.rows() << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and < gcoo_wide_min_rows "
        << t.gcoo_wide_min_rows;
  } else if (few_rows && mean > t.gcoo_wide_max_mean_row) {
    why << a.rows() << " rows < gcoo_min_rows " << t.gcoo_min_rows << " and mean row length "
        << mean << " > gcoo_wide_max_mean_row " << t.gcoo_wide_max_mean_row;
  } else if (const index_t longest = longest_row(a); longest < 0) {
    why << "row lengths unknown for this format (convert to csr to let gcoo_spmm compete)";
  } else if (longest > t.gcoo_max_row_spread * mean) {
    why << "longest row " << longest << " > gcoo_max_row_spread " << t.gcoo_max_row_spread
        << " x mean row length " << mean;
  }
  return why.str();
}

struct tile_census_key {};

/// The census of A·B in tiles (device::count_tiles) on csr forms of the operands: a csr as it
/// is, any other format through its cached csr conversion. Counted once per pair and cached on
/// A, keyed by B's identity: a write to either operand's values forgets it (two kernels and a
/// synchronisation per evaluation cost up to 0.15 ms on the real set before it was cached).
template <class A, class B>
const device::tile_census& tile_census_of(const A& a, const B& b) {
  using T = typename A::value_type;
  return a.cache().template get_or_make_for<tile_census_key, device::tile_census>(
      b.cache().identity(), [&] {
        return device::count_tiles(cached_convert<csr<T, gpu>>(a), cached_convert<csr<T, gpu>>(b));
      });
}

/// The census criteria against spade::tuning(), as explain prints them.
inline std::string tile_census_text(const device::tile_census& census) {
  const auto& t = tuning();
  std::ostringstream out;
  out << census.products << " element products in " << census.tile_pairs
      << " tile pairs: " << census.products_per_tile_pair()
      << " per pair (tiled_min_products_per_pair " << t.tiled_min_products_per_pair
      << "); mean tile fill A " << census.a_fill() << ", B " << census.b_fill()
      << " (tiled_min_fill " << t.tiled_min_fill << ")";
  return out.str();
}

/// Why tiled_spgemm should not run A·B ("" = it should): the paper's criteria, re-measured
/// (spade::tuning(), docs/tiled.md).
template <class A, class B>
std::string tiled_decline_reason(const A& a, const B& b, const operation_facts& facts) {
  if (facts.lhs_transposed || facts.rhs_transposed)
    return "an operand is transposed (tiles have no transposed product)";
  if constexpr (is_tiled_v<A> && is_tiled_v<B>) {
    return {};  // the user's own format
  } else {
    const auto& t = tuning();
    std::ostringstream why;
    if (static_cast<double>(a.nnz()) < t.tiled_min_nnz) {
      why << "nnz(A) " << a.nnz() << " < tiled_min_nnz " << t.tiled_min_nnz;
      return why.str();
    }
    const device::tile_census& census = tile_census_of(a, b);
    if (census.products_per_tile_pair() < t.tiled_min_products_per_pair ||
        census.a_fill() < t.tiled_min_fill || census.b_fill() < t.tiled_min_fill)
      why << "tiles too sparse: " << tile_census_text(census);
    return why.str();
  }
}

/// Why candidate `Kernel` of `Rule` should not run on these operands ("" = it should).
/// Only preferences live here; a later candidate is always there to fall back to.
template <class Rule, class Kernel, class A, class B>
std::string decline_reason(const A& a, const B& b, const operation_facts& facts) {
  if constexpr (std::is_same_v<Kernel, kernels::tiled_spgemm>) {
    return tiled_decline_reason(a, b, facts);
  } else if constexpr (std::is_same_v<Kernel, kernels::tiled_spgemm_fp16>) {
    return "fp16 inputs lose precision; eval<kernels::tiled_spgemm_fp16> forces it";
  } else if constexpr (std::is_same_v<Kernel, kernels::ellr_spmv>) {
    if constexpr (is_vector_v<B>) {
      return ellr_decline_reason(a, 1, facts);
    } else {
      const index_t n = facts.rhs_transposed ? b.rows() : b.cols();
      // The densify rule holds for every sparse kernel of A·X, this one included.
      if constexpr (!is_ellr_v<A>)
        if (std::string why = densify_reason(a, n); !why.empty()) return why;
      return ellr_decline_reason(a, n, facts);
    }
  } else if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                       std::is_same_v<typename A::space_type, gpu>) {
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm_paper>) {
      return "the paper's kernel is the benchmark baseline; eval<kernels::gcoo_spmm_paper> "
             "forces it";
    } else if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>) {
      // A gcoo operand (the user's format, or a sparse_view) is never densified: that would
      // convert a view's dense matrix to gcoo and back.
      if constexpr (!is_gcoo_v<A>)
        if (std::string why = densify_reason(a, facts.rhs_transposed ? b.rows() : b.cols());
            !why.empty())
          return why;
      return gcoo_decline_reason(a, b, facts);
    } else if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmm>) {
      return densify_reason(a, facts.rhs_transposed ? b.rows() : b.cols());
    }
  }
  return {};
}

/// For explain: what hash_spgemm will meet, from its setup and symbolic phases run now on the
/// (cached) csr operands: products, nnz(C), compression ratio and the bins of both phases.
template <class A, class B>
std::string hash_spgemm_accept_reason(const A& a, const B& b, const operation_facts& facts) {
  if constexpr (is_csr_v<A> && is_csr_v<B>) {
    const auto report = device::hash_spgemm_profile(facts.lhs_transposed ? cached_transpose(a) : a,
                                                    facts.rhs_transposed ? cached_transpose(b) : b);
    return "Spade's hash SpGEMM for every sparse product (cuSPARSE only when forced); profiled "
           "now (setup and symbolic phases): " +
           report.describe();
  } else {
    return "Spade's hash SpGEMM for every sparse product (cuSPARSE only when forced); products "
           "and bins are known once the operands are csr";
  }
}

/// What decided for the candidate that runs, before the row-wise note.
template <class Rule, class Kernel, class A, class B>
std::string accept_reason_core(const A& a, const B& b, const operation_facts& facts) {
  if constexpr (std::is_same_v<Kernel, kernels::ellr_spmv>) {
    return ellr_accept_reason(a);
  } else if constexpr (std::is_same_v<Kernel, kernels::hash_spgemm>) {
    return hash_spgemm_accept_reason(a, b, facts);
  } else if constexpr (std::is_same_v<Kernel, kernels::tiled_spgemm>) {
    if constexpr (is_tiled_v<A> && is_tiled_v<B>)
      return "both operands are tiled";
    else
      return "8x8 tiles dense enough: " + tile_census_text(tile_census_of(a, b)) + "; nnz(A) " +
             std::to_string(a.nnz()) + " >= tiled_min_nnz " +
             std::to_string(tuning().tiled_min_nnz) +
             "; fp64 on DMMA, fp32 as 3xTF32 (the tiled forms are cached on the operands)";
  } else if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                       std::is_same_v<typename A::space_type, gpu>) {
    const auto& t = tuning();
    std::ostringstream why;
    const index_t n = facts.rhs_transposed ? b.rows() : b.cols();
    const bool wide = n >= t.densify_wide_columns;
    why << "lhs density " << density_of(a) << " vs "
        << (wide ? "densify_density_wide " : "densify_density ")
        << (wide ? t.densify_density_wide : t.densify_density) << "; N = " << n
        << " vs gcoo_min_columns " << t.gcoo_min_columns << "; " << a.rows()
        << " rows vs gcoo_min_rows " << t.gcoo_min_rows;
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>)
      why << "; mean row length " << mean_row_length(a) << "; groups of " << planned_group_size(a)
          << " rows";
    return why.str();
  }
  return "the first candidate that accepts these operands";
}

/// For explain: the cuSPARSE wrappers hand small operands to Spade's row-wise kernels.
template <class Kernel, class A>
std::string rowwise_note(const A& a) {
  if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmm> ||
                std::is_same_v<Kernel, kernels::cusparse_spmv>) {
    if (device::rowwise_preferred(a.rows(), a.cols(), a.nnz()))
      return std::string("; A is at most ") + std::to_string(device::rowwise_max_extent) + "x" +
             std::to_string(device::rowwise_max_extent) + " with at most " +
             std::to_string(device::rowwise_max_nnz) + " entries, so " + Kernel::name +
             " runs Spade's row-wise kernel instead (docs/vendor-bugs.md)";
  }
  return {};
}

/// What decided for the candidate that runs (for explain).
template <class Rule, class Kernel, class A, class B>
std::string accept_reason(const A& a, const B& b, const operation_facts& facts) {
  std::string why = accept_reason_core<Rule, Kernel>(a, b, facts);
  if constexpr (std::is_same_v<typename A::space_type, gpu> && !is_dense_v<A>)
    why += rowwise_note<Kernel>(a);
  return why;
}

/// Calls run(candidate) for the first candidate that `Forced` allows (void: any) and that
/// does not decline; records the reasoning in *log when given. Returns false if none ran.
template <class Rule, class Forced, class... Cs, class A, class B, class Run>
bool select_candidate(plan::candidates<Cs...>, const A& a, const B& b, const operation_facts& facts,
                      Run&& run, std::string* log = nullptr) {
  bool done = false;
  int index = 0;
  auto consider = [&](auto candidate) {
    using C = decltype(candidate);
    using K = typename C::kernel;
    ++index;
    if (done) return;
    const bool last = index == static_cast<int>(sizeof...(Cs));
    if constexpr (!std::is_void_v<Forced>) {
      if (!std::is_same_v<K, Forced>) return;
      if (log) *log += std::string("  chosen: ") + K::name + " (forced by eval<" + K::name + ">)\n";
    } else {
      const std::string reason = last ? std::string() : decline_reason<Rule, K>(a, b, facts);
      if (!reason.empty()) {
        if (log) *log += std::string("  declined: ") + K::name + ": " + reason + "\n";
        return;
      }
      if (log)
        *log += std::string("  chosen: ") + K::name + " (" + accept_reason<Rule, K>(a, b, facts) +
                ")\n";
    }
    done = true;
    run(candidate);
  };
  (consider(Cs{}), ...);
  return done;
}

}  // namespace spade::detail
