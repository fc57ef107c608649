// Conjugate gradients written once for any space, so a test can run the same expressions on
// gpu and multi_gpu operands and compare the iteration counts.
#pragma once

#include <spade/spade.hpp>

namespace spade::testing {

/// Solves a·x = b from the given x until ‖r‖ <= tolerance·‖b‖ or `most` iterations; returns
/// the iterations taken.
template <class M, class V>
int conjugate_gradients(const M& a, const V& b, V& x, double tolerance, int most) {
  using T = typename V::value_type;
  V r = b - a * x;
  V p = r;
  double rr = spade::dot(r, r);
  const double stop = tolerance * tolerance * spade::dot(b, b);
  for (int it = 0; it < most; ++it) {
    if (rr <= stop) return it;
    V ap = a * p;
    const T alpha = static_cast<T>(rr / spade::dot(p, ap));
    x = x + alpha * p;
    r = r - alpha * ap;
    const double next = spade::dot(r, r);
    p = r + static_cast<T>(next / rr) * p;
    rr = next;
  }
  return most;
}

}  // namespace spade::testing
