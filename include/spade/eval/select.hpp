// Run-time choice among a plan's candidates: each candidate's step (plan/steps/) decides on the
// node's facts, in the rule's order; explain records the same decisions.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "spade/eval/operands.hpp"
#include "spade/plan/copies.hpp"
#include "spade/plan/facts.hpp"
#include "spade/plan/rule_table.hpp"
#include "spade/plan/steps/all.hpp"

namespace spade::detail {

/// Calls run(candidate) for the first candidate that `Forced` allows (void: any) and whose
/// step does not decline (the last candidate never does: it is the fallback); records the
/// reasoning in *log when given, with the copies the chosen kernel's run makes (plan/copies.hpp).
/// Returns false if none ran. The facts come from make_facts(), called at most once.
template <class Rule, class Forced, class... Cs, class MakeFacts, class Run>
bool select_with_facts(plan::candidates<Cs...>, MakeFacts&& make_facts, Run&& run,
                       std::string* log = nullptr) {
  // Built at the first step that asks: a forced kernel or a rule of one candidate needs none.
  std::optional<plan::product_facts> facts;
  auto facts_now = [&]() -> const plan::product_facts& {
    if (!facts) facts.emplace(make_facts());
    return *facts;
  };
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
      if (!last) {
        const plan::decision d = plan::decide_candidate<Rule, K>(facts_now());
        if (!d.ok) {
          if (log) *log += std::string("  declined: ") + K::name + ": " + d.reason + "\n";
          return;
        }
      }
      if (log)
        *log += std::string("  chosen: ") + K::name + " (" +
                plan::step<K>::template why_chosen<Rule>(facts_now()) + ")\n";
    }
    if (log) {
      const plan::product_facts& f = facts_now();
      *log +=
          plan::copies_text(plan::copies_for<K>(f.lhs_transposed, f.lhs.sparse(), f.rhs_transposed,
                                                f.rhs.sparse(), f.destination_col_major),
                            "  ");
    }
    done = true;
    run(candidate);
  };
  (consider(Cs{}), ...);
  return done;
}

/// The run of a selection that only records its reasoning (explain).
struct ignore_candidate {
  template <class C>
  void operator()(C) const {}
};

/// select_with_facts on the facts of storage operands `a` and `b` (product_facts_of).
template <class Rule, class Forced, class Candidates, class A, class B, class Run>
bool select_candidate(Candidates candidates, const A& a, const B& b, const operation_facts& flags,
                      Run&& run, std::string* log = nullptr) {
  return select_with_facts<Rule, Forced>(
      candidates, [&] { return product_facts_of(a, b, flags); }, std::forward<Run>(run), log);
}

}  // namespace spade::detail
