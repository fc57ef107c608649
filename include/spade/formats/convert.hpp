// spade::convert<Format>(A): explicit format conversion, done in the space where A lives.
#pragma once

#include <type_traits>

#include "spade/core/conversion_cache.hpp"
#include "spade/cpu/convert.hpp"
#include "spade/device/convert.hpp"
#include "spade/formats/traits.hpp"

namespace spade {

namespace detail {

template <class To, class From>
To convert_between(const From& a) {
  using T = typename From::value_type;
  using S = typename From::space_type;
  static_assert(std::is_same_v<typename To::value_type, T>,
                "spade::convert: the target scalar type must equal the source's; convert values "
                "explicitly");
  static_assert(std::is_same_v<typename To::space_type, S>,
                "spade::convert: converts within one space; use spade::to_gpu / spade::to_cpu "
                "to move between spaces");
  constexpr bool on_cpu = std::is_same_v<S, cpu>;
  if constexpr (!std::is_same_v<To, From> &&
                !(is_coo_v<From> && is_dense_v<To>)&&!(is_dense_v<From> && is_coo_v<To>))
    ++conversion_counter();  // two-hop conversions count each hop below
  if constexpr (std::is_same_v<To, From>) {
    return a;
  } else if constexpr (is_csr_v<From> && is_coo_v<To>) {
    if constexpr (on_cpu)
      return host::csr_to_coo(a);
    else
      return device::csr_to_coo(a);
  } else if constexpr (is_coo_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::coo_to_csr(a);
    else
      return device::coo_to_csr(a);
  } else if constexpr (is_csr_v<From> && is_dense_v<To>) {
    using L = typename To::layout_type;
    if constexpr (on_cpu)
      return host::csr_to_dense<L>(a);
    else
      return device::csr_to_dense<T, L>(a);
  } else if constexpr (is_dense_v<From> && is_csr_v<To>) {
    if constexpr (on_cpu)
      return host::dense_to_csr(a);
    else
      return device::dense_to_csr(a);
  } else if constexpr (is_dense_v<From> && is_dense_v<To>) {
    using L = typename To::layout_type;
    if constexpr (on_cpu)
      return host::relayout<L>(a);
    else
      return device::relayout<T, typename From::layout_type, L>(a);
  } else if constexpr (is_coo_v<From> && is_dense_v<To>) {
    return convert_between<To>(convert_between<csr<T, S>>(a));
  } else if constexpr (is_dense_v<From> && is_coo_v<To>) {
    return convert_between<To>(convert_between<csr<T, S>>(a));
  } else {
    static_assert(sizeof(To) == 0, "spade::convert: no conversion between these formats");
  }
}

}  // namespace detail

/// Converts `a` to format `Format` (spade::csr, spade::coo, spade::dense — row-major), same
/// scalar, same space; on the gpu the work runs there. Sparse → dense writes explicit zeros;
/// dense → sparse keeps entries unequal to zero; coo sources have repeated entries summed.
template <template <class...> class Format, matrix M>
auto convert(const M& a) {
  return detail::convert_between<Format<typename M::value_type, typename M::space_type>>(a);
}

/// Converts `a` to the exact type `Target`, e.g. convert<dense<double, cpu, col_major>>(a).
template <matrix Target, matrix M>
Target convert(const M& a) {
  return detail::convert_between<Target>(a);
}

}  // namespace spade
