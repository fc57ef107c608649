// Run-time choice among a plan's candidates: thresholds first, then the kernel's own checks.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

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
std::string densify_reason(const A& a) {
  const double density = density_of(a);
  const double cells = static_cast<double>(a.rows()) * static_cast<double>(a.cols());
  const auto& t = tuning();
  if (density < t.densify_density || cells > t.densify_max_elements) return {};
  std::ostringstream why;
  why << "lhs density " << density << " >= densify_density " << t.densify_density << " (and "
      << cells << " elements <= densify_max_elements " << t.densify_max_elements
      << "): a dense GEMM is faster";
  return why.str();
}

/// Mean entries per row of a sparse operand (0 for no rows).
template <class A>
double mean_row_length(const A& a) {
  return a.rows() > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows()) : 0.0;
}

/// Why candidate `Kernel` of `Rule` should not run on these operands ("" = it should).
/// Only preferences live here; a later candidate is always there to fall back to.
template <class Rule, class Kernel, class A, class B>
std::string decline_reason(const A& a, const B& b, const operation_facts& facts) {
  if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                std::is_same_v<typename A::space_type, gpu>) {
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm_paper>) {
      return "the paper's kernel is the benchmark baseline; eval<kernels::gcoo_spmm_paper> "
             "forces it";
    } else if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>) {
      if (std::string why = densify_reason(a); !why.empty()) return why;
      if (facts.lhs_transposed)
        return "the sparse operand is transposed (gcoo has no transposed product)";
      if (facts.destination_col_major) return "the destination is col-major";
      const auto& t = tuning();
      const index_t n = facts.rhs_transposed ? b.rows() : b.cols();
      std::ostringstream why;
      if (n < t.gcoo_min_columns) {
        why << "N = " << n << " < gcoo_min_columns " << t.gcoo_min_columns;
        return why.str();
      }
      if (mean_row_length(a) > t.gcoo_max_mean_row_length) {
        why << "mean row length " << mean_row_length(a) << " > gcoo_max_mean_row_length "
            << t.gcoo_max_mean_row_length;
        return why.str();
      }
      return {};
    } else if constexpr (std::is_same_v<Kernel, kernels::cusparse_spmm>) {
      return densify_reason(a);
    }
  }
  return {};
}

/// What decided for the candidate that runs (for explain).
template <class Rule, class Kernel, class A, class B>
std::string accept_reason(const A& a, const B& b, const operation_facts& facts) {
  if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                std::is_same_v<typename A::space_type, gpu>) {
    const auto& t = tuning();
    std::ostringstream why;
    why << "lhs density " << density_of(a) << " vs densify_density " << t.densify_density
        << "; N = " << (facts.rhs_transposed ? b.rows() : b.cols()) << " vs gcoo_min_columns "
        << t.gcoo_min_columns << "; mean row length " << mean_row_length(a)
        << " vs gcoo_max_mean_row_length " << t.gcoo_max_mean_row_length;
    if constexpr (std::is_same_v<Kernel, kernels::gcoo_spmm>)
      why << "; groups of " << t.gcoo_group_size << " rows";
    return why.str();
  }
  return "the first candidate that accepts these operands";
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
