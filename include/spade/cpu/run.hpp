// The cpu back end's runners (eval/run_kernel.hpp): Eigen products and sums, vector kernels.
#pragma once

#include <cstdint>

#include "spade/cpu/eigen.hpp"
#include "spade/cpu/evaluate.hpp"
#include "spade/eval/operands.hpp"
#include "spade/eval/run_kernel.hpp"
#include "spade/plan/kernels.hpp"

namespace spade::detail {

template <>
struct runner<kernels::eigen_product> {
  template <class A, class B, class Dest, class T>
  static void product(T alpha, const A& a, bool ta, const B& b, bool tb, T beta, Dest& dest) {
    if constexpr (is_coo_v<A> || is_coo_v<B>) {
      static_assert(sizeof(A) == 0, "spade: internal: eigen_product needs csr operands");
    } else {
      host::product_into(alpha, a, ta, b, tb, beta, dest);
    }
  }
  template <class A, class B, class T>
  static auto sparse_product(T alpha, const A& a, bool ta, const B& b, bool tb) {
    return host::sparse_product(alpha, a, ta, b, tb);
  }
};

template <>
struct runner<kernels::eigen_sum> {
  template <class X, class Y, class Dest, class T>
  static void sum(T a, const X& x, bool tx, T b, const Y& y, bool ty, Dest& dest) {
    host::sum_into(a, x, tx, b, y, ty, dest);
  }
  template <class X, class Y, class T>
  static auto sparse_sum(T a, const X& x, bool, T b, const Y& y, bool) {
    // Eigen adds sparse operands of one storage order only: run_steps passes transposed ones as
    // copies.
    return host::sparse_sum(a, x, b, y);
  }
};

template <>
struct vector_kernels<cpu> {
  template <class T>
  static void scale(T s, T* values, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i)
      values[i] *= s;
  }
  template <class V>
  static auto dot(const V& u, const V& v) {
    return host::eigen_view(u).dot(host::eigen_view(v));
  }
  template <class V>
  static auto norm(const V& u) {
    return host::eigen_view(u).norm();
  }
};

}  // namespace spade::detail
