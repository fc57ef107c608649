// Memory-space tags (cpu, gpu, multi_gpu) and dense layout tags (row_major, col_major).
#pragma once

#include <concepts>

namespace spade {

/// Host memory; evaluated with Eigen.
struct cpu {
  static constexpr const char* name = "cpu";
};
/// CUDA device memory; evaluated by the kernels in lib/.
struct gpu {
  static constexpr const char* name = "gpu";
};

/// Rows split over the GPUs of a spade::cluster (spade/multi/distributed.hpp): each GPU holds a
/// contiguous block of rows as an ordinary gpu object; products exchange what they need.
struct multi_gpu {
  static constexpr const char* name = "multi_gpu";
};

template <class S>
concept space = std::same_as<S, cpu> || std::same_as<S, gpu> || std::same_as<S, multi_gpu>;

/// Element (i, j) at i * cols + j.
struct row_major {
  static constexpr const char* name = "row_major";
};
/// Element (i, j) at j * rows + i (Eigen's and cuBLAS's default).
struct col_major {
  static constexpr const char* name = "col_major";
};

template <class L>
concept layout = std::same_as<L, row_major> || std::same_as<L, col_major>;

}  // namespace spade
