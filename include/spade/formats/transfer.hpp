// spade::to_gpu / spade::to_cpu: the same matrix or vector in the other memory space.
#pragma once

#include <utility>

#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/formats/traits.hpp"
#include "spade/formats/vector.hpp"

namespace spade {

namespace detail {

template <space To, class Array>
storage<typename Array::value_type, To> move_array(const Array& array) {
  using T = typename Array::value_type;
  constexpr bool from_cpu = std::is_same_v<Array, std::vector<T>>;
  if constexpr (std::is_same_v<To, cpu>) {
    if constexpr (from_cpu)
      return array;
    else
      return array.to_host();
  } else {
    if constexpr (from_cpu)
      return device_buffer<T>(array);
    else
      return array;
  }
}

template <space To, class M>
rebind_space_t<M, To> to_space(const M& a) {
  using Result = rebind_space_t<M, To>;
  if constexpr (is_dense_v<M>) {
    return Result(unchecked, a.rows(), a.cols(), move_array<To>(a.values()));
  } else if constexpr (is_vector_v<M>) {
    return Result(move_array<To>(a.values()));
  } else if constexpr (is_csr_v<M>) {
    return Result(unchecked, a.rows(), a.cols(), move_array<To>(a.row_ptr()),
                  move_array<To>(a.col_idx()), move_array<To>(a.values()));
  } else if constexpr (is_gcoo_v<M>) {
    return Result(unchecked, a.rows(), a.cols(), a.group_size(), move_array<To>(a.values()),
                  move_array<To>(a.group_offsets()), move_array<To>(a.group_nnz()),
                  move_array<To>(a.row_idx()), move_array<To>(a.col_idx()));
  } else if constexpr (is_ellr_v<M>) {
    return Result(unchecked, a.rows(), a.cols(), a.nnz(), a.width(), a.slice_height(), a.layout(),
                  move_array<To>(a.values()), move_array<To>(a.col_idx()),
                  move_array<To>(a.row_lengths()), move_array<To>(a.slice_offsets()),
                  move_array<To>(a.row_order()));
  } else if constexpr (is_tiled_v<M>) {
    return Result(unchecked, a.rows(), a.cols(), move_array<To>(a.tile_row()),
                  move_array<To>(a.tile_col()), move_array<To>(a.tile_offset()),
                  move_array<To>(a.bitmap()), move_array<To>(a.values()));
  } else {
    return Result(unchecked, a.rows(), a.cols(), move_array<To>(a.row_idx()),
                  move_array<To>(a.col_idx()), move_array<To>(a.values()));
  }
}

}  // namespace detail

/// Copies `a` to device memory (same format). Throws no_device without a GPU (unless `a` is
/// empty), out_of_memory when it does not fit. A gpu argument is copied on the device.
template <matrix_or_vector M>
auto to_gpu(const M& a) {
  return detail::to_space<gpu>(a);
}

/// Copies `a` to host memory (same format); returns when the data is on the host.
template <matrix_or_vector M>
auto to_cpu(const M& a) {
  return detail::to_space<cpu>(a);
}

}  // namespace spade
