// Products and sums of storage operands planned once in the library, declared extern here.
#pragma once

#include "spade/core/space.hpp"
#include "spade/eval/evaluate.hpp"
#include "spade/eval/explain.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/vector.hpp"
#include "spade/plan/rule_table.hpp"

// planned_product, planned_sum and explain_choice hold the run-time choice among a plan's
// candidates and every candidate's run (conversions, kernel, result copy): most of the code a
// user file compiles for `a * d` or `a + s`. They depend only on the operands' storage types, so
// the float and double instances for every pairing of storage types that the planner runs are
// compiled once into the library (lib/host/planned_cpu.cpp, planned_gpu.cpp) and only declared
// in user files, as the Eigen kernels are (SPADE_HOST_INSTANCES). Measured with
// bench/compile_time.sh (docs/benchmarks/README.md, "Compile time"). An expression over other
// destination types, or eval<Kernel>, still instantiates them in the user's file.
// SPADE_HEADER_ONLY turns this off.
namespace spade::detail::planned_types {
template <class T, class S>
using drow = dense<T, S, row_major>;
template <class T, class S>
using dcol = dense<T, S, col_major>;
template <class T, class S>
using vec = vector<T, S>;
template <class T, class S>
using csr_ = csr<T, S>;
template <class T, class S>
using coo_ = coo<T, S>;
template <class T, class S>
using gcoo_ = gcoo<T, S>;
template <class T, class S>
using ellr_ = ellr<T, S>;
template <class T, class S>
using tiled_ = tiled<T, S>;

/// The plan and natural result of Node<const A&, const B&> (Node: expr::product or expr::sum).
template <template <class, class> class Node, class A, class B>
struct pairing {
  using plan = plan_of<Node<const A&, const B&>>;
  using rule = typename plan::rule;
  using candidates = typename plan::candidates;
  using result = expr::result_t<Node<const A&, const B&>>;
};
}  // namespace spade::detail::planned_types

// The pairing of planned_types::A<T, S> and B<T, S> under expr::NODE (product or sum).
#define SPADE_PLANNED_PAIRING(NODE, T, S, A, B) \
  planned_types::pairing<expr::NODE, planned_types::A<T, S>, planned_types::B<T, S>>

// One product pairing: its planned run into the natural result type, and its explain text.
#define SPADE_PLANNED_PRODUCT(PREFIX, T, S, A, B)                                                \
  PREFIX template void planned_product<SPADE_PLANNED_PAIRING(product, T, S, A, B)::rule, void,   \
                                       SPADE_PLANNED_PAIRING(product, T, S, A, B)::candidates,   \
                                       SPADE_PLANNED_PAIRING(product, T, S, A, B)::result,       \
                                       planned_types::A<T, S>, planned_types::B<T, S>>(          \
      SPADE_PLANNED_PAIRING(product, T, S, A, B)::result&, index_t, index_t, T,                  \
      const planned_types::A<T, S>&, bool, const planned_types::B<T, S>&, bool, T);              \
  PREFIX template std::string                                                                    \
  explain_choice<SPADE_PLANNED_PAIRING(product, T, S, A, B)::rule,                               \
                 SPADE_PLANNED_PAIRING(product, T, S, A, B)::candidates, planned_types::A<T, S>, \
                 planned_types::B<T, S>>(const planned_types::A<T, S>&,                          \
                                         const planned_types::B<T, S>&, const operation_facts&);

// One sum pairing, likewise.
#define SPADE_PLANNED_SUM(PREFIX, T, S, A, B)                                                    \
  PREFIX template void planned_sum<SPADE_PLANNED_PAIRING(sum, T, S, A, B)::rule, void,           \
                                   SPADE_PLANNED_PAIRING(sum, T, S, A, B)::candidates,           \
                                   SPADE_PLANNED_PAIRING(sum, T, S, A, B)::result,               \
                                   planned_types::A<T, S>, planned_types::B<T, S>>(              \
      SPADE_PLANNED_PAIRING(sum, T, S, A, B)::result&, index_t, index_t, T,                      \
      const planned_types::A<T, S>&, bool, T, const planned_types::B<T, S>&, bool);              \
  PREFIX template std::string explain_choice<SPADE_PLANNED_PAIRING(sum, T, S, A, B)::rule,       \
                                             SPADE_PLANNED_PAIRING(sum, T, S, A, B)::candidates, \
                                             planned_types::A<T, S>, planned_types::B<T, S>>(    \
      const planned_types::A<T, S>&, const planned_types::B<T, S>&, const operation_facts&);

// Every pairing the rule tables plan (plan/rules/): dense x dense, sparse x dense, dense x
// sparse, sparse x vector, dense x vector, sparse x sparse (csr and coo among themselves, tiled
// with tiled), dense + dense, sparse + sparse, vector + vector.
#define SPADE_PLANNED_INSTANCES(PREFIX, T, S)         \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, drow, drow)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, drow, dcol)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, dcol, drow)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, dcol, dcol)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, csr_, drow)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, csr_, dcol)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, coo_, drow)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, coo_, dcol)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, gcoo_, drow)    \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, gcoo_, dcol)    \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, ellr_, drow)    \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, tiled_, drow)   \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, drow, csr_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, dcol, csr_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, drow, coo_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, csr_, vec)      \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, coo_, vec)      \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, gcoo_, vec)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, ellr_, vec)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, tiled_, vec)    \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, drow, vec)      \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, dcol, vec)      \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, csr_, csr_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, csr_, coo_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, coo_, csr_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, coo_, coo_)     \
  SPADE_PLANNED_PRODUCT(PREFIX, T, S, tiled_, tiled_) \
  SPADE_PLANNED_SUM(PREFIX, T, S, drow, drow)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, drow, dcol)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, dcol, drow)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, dcol, dcol)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, csr_, csr_)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, csr_, coo_)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, coo_, csr_)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, coo_, coo_)         \
  SPADE_PLANNED_SUM(PREFIX, T, S, vec, vec)

#ifndef SPADE_HEADER_ONLY
namespace spade::detail {
SPADE_PLANNED_INSTANCES(extern, float, cpu)
SPADE_PLANNED_INSTANCES(extern, double, cpu)
SPADE_PLANNED_INSTANCES(extern, float, gpu)
SPADE_PLANNED_INSTANCES(extern, double, gpu)
}  // namespace spade::detail
#endif
