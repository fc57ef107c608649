// Resolving expression children to storage operands: scale and transpose fold in, nested
// expressions are evaluated into temporaries, and plan conversion steps run through the cache.
#pragma once

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/core/conversion_cache.hpp"
#include "spade/device/vendor.hpp"
#include "spade/expr/nodes.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/convert.hpp"
#include "spade/plan/steps.hpp"
#include "spade/plan/thresholds.hpp"

namespace spade {

template <class E>
expr::result_t<E> eval(const E& e);

namespace detail {

/// Threads the device holding gpu operand `a` keeps resident (0 for a cpu or empty operand).
template <class A>
std::int64_t resident_threads_of(const A& a) {
  if constexpr (std::is_same_v<typename A::space_type, gpu>) {
    if (const context* ctx = a.values().owner(); ctx != nullptr)
      return std::int64_t{ctx->properties().sm_count} * ctx->properties().max_threads_per_sm;
  }
  return 0;
}

/// p of the gcoo the planner makes from gpu operand `a` (tuning().gcoo_planner_group_size), or
/// a gcoo's own. The gcoo is cached on `a` with the p of its first conversion: changing the
/// threshold later affects operands not converted yet.
template <class A>
index_t planned_group_size(const A& a) {
  const auto& t = tuning();
  if constexpr (is_gcoo_v<A>) {
    return a.group_size();
  } else if (t.gcoo_planner_group_size > 0) {
    return static_cast<index_t>(t.gcoo_planner_group_size);
  } else if constexpr (std::is_same_v<typename A::space_type, gpu>) {
    const context* ctx = a.values().owner();
    if (ctx == nullptr) return static_cast<index_t>(t.gcoo_group_size);  // empty: any p
    const auto& device = ctx->properties();
    const std::int64_t resident_warps =
        std::int64_t{device.sm_count} * device.max_threads_per_sm / 32;
    for (const index_t p : {4, 2})
      if (a.rows() / p >= resident_warps) return p;
    return 1;
  } else {
    return static_cast<index_t>(t.gcoo_group_size);
  }
}

struct row_profile_key {};

/// A csr operand's row lengths on the host, read once (one copy of the row pointers) and cached
/// on it: the planner's facts for gcoo_spmm and ellr_spmv.
struct row_profile {
  std::vector<index_t> lengths;
  index_t longest = 0;
  double mean = 0.0;
  /// Padding of ellr `layout`, computed on first use for each layout (a host sort of the
  /// lengths for a sorted one) and kept.
  double padding(const ellr_layout& layout) const {
    for (const auto& [known, share] : paddings)
      if (known == layout) return share;
    const auto shape =
        plan_ellr_shape(static_cast<index_t>(lengths.size()), layout,
                        [&](index_t r) { return lengths[static_cast<std::size_t>(r)]; });
    paddings.emplace_back(layout, shape.padding());
    return paddings.back().second;
  }
  mutable std::vector<std::pair<ellr_layout, double>> paddings;
};

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

/// The ellr layout the planner makes from `a`: the paper's while its padding is at most
/// tuning().ellr_plain_max_padding, else SELL-C-σ, either with as many lanes as ELLR-T gives a
/// row on this device; an ellr keeps its own.
template <class A>
ellr_layout planned_ellr_layout(const A& a) {
  if constexpr (is_ellr_v<A>) {
    return a.layout();
  } else if constexpr (is_csr_v<A>) {
    const auto& t = tuning();
    const row_profile& profile = row_profile_of(a);
    // Lanes as many as the threads ELLR-T will give a row, so those threads read side by side.
    const std::int64_t resident = resident_threads_of(a);
    const index_t lanes =
        resident > 0 ? detail::ellr_threads_per_row(a.rows(), profile.mean, resident) : 1;
    if (profile.padding(ellr_layout{}) <= t.ellr_plain_max_padding) return ellr_layout{0, 0, lanes};
    return ellr_layout{static_cast<index_t>(t.ellr_slice_height),
                       static_cast<index_t>(t.ellr_sort_window), lanes};
  } else {
    return {};
  }
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
  } else if constexpr (expr::is_scaled_v<E> || expr::is_transposed_v<E> ||
                       expr::is_sparse_view_v<E>) {
    return refers_to(e.inner, target);
  } else {
    return refers_to(e.lhs, target) || refers_to(e.rhs, target);
  }
}

}  // namespace detail
}  // namespace spade
