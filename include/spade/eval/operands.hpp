// Resolving expression children to storage operands: scale and transpose fold in, nested
// expressions are evaluated into temporaries, and plan conversion steps run through the cache.
#pragma once

#include <type_traits>
#include <utility>

#include "spade/core/conversion_cache.hpp"
#include "spade/device/vendor.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/convert.hpp"
#include "spade/plan/steps.hpp"

namespace spade {

template <class E>
expr::result_t<E> eval(const E& e);

namespace detail {

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
  } else {
    const auto temporary = spade::eval(x);
    return f(temporary, transposed, scale);
  }
}

/// `source` converted to Target, cached on `source` (hit reported through `hit`).
template <class Target, class Source>
const Target& cached_convert(const Source& source, bool* hit = nullptr) {
  if constexpr (std::is_same_v<Target, Source>) {
    if (hit) *hit = true;
    return source;
  } else {
    return source.cache().template get_or_make<Target, Target>(
        [&] { return convert<Target>(source); }, hit);
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
    ++conversion_counter();
    if constexpr (is_csr_v<M>) {
      if constexpr (std::is_same_v<S, gpu>) {
        return device::transpose(a);
      } else {
        const auto c = convert<coo<T, cpu>>(a);
        return convert<csr<T, cpu>>(
            coo<T, cpu>(unchecked, a.cols(), a.rows(), c.col_idx(), c.row_idx(), c.values()));
      }
    } else if constexpr (is_coo_v<M>) {
      // A coordinate list transposes by swapping its index arrays (order is free in coo).
      return M(unchecked, a.cols(), a.rows(), a.col_idx(), a.row_idx(), a.values());
    } else {
      // A row-major rows×cols block read as col-major is its cols×rows transpose.
      using L = typename M::layout_type;
      using other = std::conditional_t<std::is_same_v<L, row_major>, col_major, row_major>;
      auto flipped = convert<dense<T, S, other>>(a);
      return M(unchecked, a.cols(), a.rows(), std::move(flipped.values()));
    }
  });
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
  } else if constexpr (expr::is_scaled_v<E> || expr::is_transposed_v<E>) {
    return refers_to(e.inner, target);
  } else {
    return refers_to(e.lhs, target) || refers_to(e.rhs, target);
  }
}

}  // namespace detail
}  // namespace spade
