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

/// Why candidate `Kernel` of `Rule` should not run on these operands ("" = it should).
/// Only preferences live here; a later candidate is always there to fall back to.
template <class Rule, class Kernel, class A, class B>
std::string decline_reason(const A& a, const B&) {
  if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                std::is_same_v<Kernel, kernels::cusparse_spmm>) {
    const double density = density_of(a);
    const double cells = static_cast<double>(a.rows()) * static_cast<double>(a.cols());
    const auto& t = tuning();
    if (density >= t.densify_density && cells <= t.densify_max_elements) {
      std::ostringstream why;
      why << "lhs density " << density << " >= densify_density " << t.densify_density << " (and "
          << cells << " elements <= densify_max_elements " << t.densify_max_elements
          << "): a dense GEMM is faster";
      return why.str();
    }
  }
  return {};
}

/// What decided for the candidate that runs (for explain).
template <class Rule, class Kernel, class A, class B>
std::string accept_reason(const A& a, const B&) {
  if constexpr (std::is_same_v<Rule, plan::rules::sparse_times_dense> &&
                std::is_same_v<typename A::space_type, gpu>) {
    std::ostringstream why;
    why << "lhs density " << density_of(a) << " vs densify_density " << tuning().densify_density;
    return why.str();
  }
  return "the first candidate that accepts these operands";
}

/// Calls run(candidate) for the first candidate that `Forced` allows (void: any) and that
/// does not decline; records the reasoning in *log when given. Returns false if none ran.
template <class Rule, class Forced, class... Cs, class A, class B, class Run>
bool select_candidate(plan::candidates<Cs...>, const A& a, const B& b, Run&& run,
                      std::string* log = nullptr) {
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
      const std::string reason = last ? std::string() : decline_reason<Rule, K>(a, b);
      if (!reason.empty()) {
        if (log) *log += std::string("  declined: ") + K::name + ": " + reason + "\n";
        return;
      }
      if (log)
        *log += std::string("  chosen: ") + K::name + " (" + accept_reason<Rule, K>(a, b) + ")\n";
    }
    done = true;
    run(candidate);
  };
  (consider(Cs{}), ...);
  return done;
}

}  // namespace spade::detail
