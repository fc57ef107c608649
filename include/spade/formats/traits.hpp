// Compile-time facts about Spade's matrix and vector types: which format, which space.
#pragma once

#include <type_traits>

#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"

namespace spade {

template <storage_scalar T, space Space, layout Layout>
class dense;
template <storage_scalar T, space Space>
class vector;
template <scalar T, space Space>
class csr;
template <scalar T, space Space>
class coo;
template <scalar T, space Space>
class gcoo;
template <scalar T, space Space>
class ellr;
template <scalar T, space Space>
class tiled;

template <class M>
inline constexpr bool is_dense_v = false;
template <class T, class S, class L>
inline constexpr bool is_dense_v<dense<T, S, L>> = true;

template <class M>
inline constexpr bool is_vector_v = false;
template <class T, class S>
inline constexpr bool is_vector_v<vector<T, S>> = true;

template <class M>
inline constexpr bool is_csr_v = false;
template <class T, class S>
inline constexpr bool is_csr_v<csr<T, S>> = true;

template <class M>
inline constexpr bool is_coo_v = false;
template <class T, class S>
inline constexpr bool is_coo_v<coo<T, S>> = true;

template <class M>
inline constexpr bool is_gcoo_v = false;
template <class T, class S>
inline constexpr bool is_gcoo_v<gcoo<T, S>> = true;

template <class M>
inline constexpr bool is_ellr_v = false;
template <class T, class S>
inline constexpr bool is_ellr_v<ellr<T, S>> = true;

template <class M>
inline constexpr bool is_tiled_v = false;
template <class T, class S>
inline constexpr bool is_tiled_v<tiled<T, S>> = true;

/// Any of Spade's sparse formats.
template <class M>
concept sparse_matrix = is_csr_v<M> || is_coo_v<M> || is_gcoo_v<M> || is_ellr_v<M> || is_tiled_v<M>;
/// Any of Spade's matrix types (dense or sparse).
template <class M>
concept matrix = sparse_matrix<M> || is_dense_v<M>;
/// Any matrix or vector type.
template <class M>
concept matrix_or_vector = matrix<M> || is_vector_v<M>;

/// The same format and scalar, in another space (dense keeps its layout).
template <class M, space To>
struct rebind_space;
template <class T, class S, class L, space To>
struct rebind_space<dense<T, S, L>, To> {
  using type = dense<T, To, L>;
};
template <class T, class S, space To>
struct rebind_space<vector<T, S>, To> {
  using type = vector<T, To>;
};
template <class T, class S, space To>
struct rebind_space<csr<T, S>, To> {
  using type = csr<T, To>;
};
template <class T, class S, space To>
struct rebind_space<coo<T, S>, To> {
  using type = coo<T, To>;
};
template <class T, class S, space To>
struct rebind_space<gcoo<T, S>, To> {
  using type = gcoo<T, To>;
};
template <class T, class S, space To>
struct rebind_space<ellr<T, S>, To> {
  using type = ellr<T, To>;
};
template <class T, class S, space To>
struct rebind_space<tiled<T, S>, To> {
  using type = tiled<T, To>;
};
template <class M, space To>
using rebind_space_t = typename rebind_space<M, To>::type;

}  // namespace spade
