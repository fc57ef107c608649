// ELLPACK-R sparse × vector (paper 003) and its variants: T threads per row (ELLR-T), sliced
// length-sorted storage (SELL-C-σ), and up to 32 right-hand sides in one pass over A (past 8
// split over 2 or 4 threads of a row).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/instantiate.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

std::string ellr_spmv_launch::describe() const {
  return std::to_string(threads_per_row) + " thread(s) per row, " +
         std::to_string(vectors_per_pass) + " vector(s) per pass" +
         (column_groups > 1
              ? ", X's columns split over " + std::to_string(column_groups) + " threads"
              : std::string()) +
         (wide_loads     ? ", 16-byte loads of X rows"
          : paired_loads ? ", X rows read in element pairs"
                         : "");
}

namespace {

constexpr int block_threads = 256;

template <class T>
struct spmv_params {
  const T* values;                    // (slots)
  const index_t* col_idx;             // (slots)
  const index_t* row_lengths;         // (rows), by position
  const index_t* row_order;           // (rows) or null: the row each position holds
  const std::int64_t* slice_offsets;  // (slices + 1)
  const T* x;                         // element (c, v) at c·x_row + v·x_col
  T* y;                               // element (r, v) at r·y_row + v·y_col
  std::int64_t rows;
  std::int64_t height;
  int lane_shift;  // log2 of the layout's lanes
  std::int64_t x_row, x_col, y_row, y_col;
  int vectors;  // ≤ NV
  T alpha;
  T beta;
};

// How a thread reads the X row of an entry.
enum class x_reads {
  scalar,  // one load per column, any layout and stride, the first p.vectors of NV columns
  wide,    // 16-byte loads: X row-major with exactly NV columns, rows 16-byte aligned
  // 16-byte loads of a piece's first `count` columns, 0 past them: X row-major with fewer
  // columns than a pass of 16 or 32 splits, a whole number of 16-byte vectors, rows aligned
  wide_partial,
  // the same in 8-byte loads (float pairs): rows of an even number of floats, 8-byte aligned
  paired_partial,
  paired,  // X row-major (x_row columns apart) with NL < NV columns, 2-element aligned: pairs
};

// The NV values of X's row c from column col0 on (col0 > 0 when a row's columns are split over
// threads; columns from the piece's `count` on are 0). Paired: a row starts on a pair boundary
// or one element past it, by the parity of c · x_row + col0 (col0 is even); the pairs are loaded
// from the first boundary inside the row and the one element left over (an odd NL's first or
// last, or, for an even NL, none, since then x_row is even) singly, so NL = 5 costs 3 loads
// instead of 5 and nothing outside the row is read.
template <class T, int NV, x_reads Reads, int NL>
__device__ __forceinline__ void load_x_row(const spmv_params<T>& p, index_t c, int col0, int count,
                                           T (&out)[NV]) {
  if constexpr (Reads == x_reads::wide || Reads == x_reads::wide_partial ||
                Reads == x_reads::paired_partial) {
    static_assert(Reads != x_reads::paired_partial || sizeof(T) == 4, "float pairs only");
    constexpr int per_load = Reads == x_reads::paired_partial ? 2 : 16 / sizeof(T);
    static_assert(NV % per_load == 0, "wide loads need whole vectors");
    using vec = std::conditional_t<Reads == x_reads::paired_partial, float2,
                                   std::conditional_t<sizeof(T) == 4, float4, double2>>;
    const vec* row = reinterpret_cast<const vec*>(p.x + std::int64_t{c} * p.x_row + col0);
#pragma unroll
    for (int l = 0; l < NV / per_load; ++l) {
      // A partial piece (count a multiple of per_load) stops at its own columns: the next ones
      // belong to X's next row, or lie past X.
      const bool inside = Reads == x_reads::wide || l * per_load < count;
      const vec v = inside ? __ldg(row + l) : vec{};
      const T* parts = reinterpret_cast<const T*>(&v);
#pragma unroll
      for (int i = 0; i < per_load; ++i)
        out[l * per_load + i] = parts[i];
    }
  } else if constexpr (Reads == x_reads::paired) {
    static_assert(NL >= 2 && NL <= NV, "paired reads take 2 to NV columns");
    using pair = std::conditional_t<sizeof(T) == 4, float2, double2>;
    constexpr int pairs = NL / 2;
    const std::int64_t start = std::int64_t{c} * p.x_row + col0;
    const bool shifted = (start & 1) != 0;  // only for odd NL: an even x_row keeps rows aligned
    const T* row = p.x + start;
    const pair* vec = reinterpret_cast<const pair*>(row + (shifted ? 1 : 0));
    T lo[pairs], hi[pairs];
#pragma unroll
    for (int j = 0; j < pairs; ++j) {
      const pair v = __ldg(vec + j);
      lo[j] = v.x;
      hi[j] = v.y;
    }
    if constexpr (NL % 2 == 1) {
      const T single = __ldg(row + (shifted ? 0 : NL - 1));
#pragma unroll
      for (int i = 0; i < NL; ++i) {
        const T aligned = i == NL - 1 ? single : (i % 2 == 0 ? lo[i / 2] : hi[i / 2]);
        const T after = i == 0 ? single : ((i - 1) % 2 == 0 ? lo[(i - 1) / 2] : hi[(i - 1) / 2]);
        out[i] = shifted ? after : aligned;
      }
    } else {
#pragma unroll
      for (int i = 0; i < NL; ++i)
        out[i] = i % 2 == 0 ? lo[i / 2] : hi[i / 2];
    }
#pragma unroll
    for (int v = NL; v < NV; ++v)
      out[v] = T(0);
  } else {
    const T* row = p.x + std::int64_t{c} * p.x_row + std::int64_t{col0} * p.x_col;
#pragma unroll
    for (int v = 0; v < NV; ++v)
      out[v] = v < count ? __ldg(row + v * p.x_col) : T(0);
  }
}

// Sums the Count values sum[0..Count) of the Width threads sharing a row, butterfly rounds from
// offset Offset down to 1. While a thread holds more than one value a round is a reduce-scatter:
// the pair splits the values in halves, each keeps one half (the upper one when its offset bit
// is set) and adds its partner's copy of it, so NV sums cost about NV shuffles instead of
// NV·log2(Width) — with 8 doubles and 16 threads per row the plain butterfly's 32 shuffles
// outweighed the row's few entries. `first` gains the first column the kept values stand for.
// Every column still adds the same pairs in the same order as the plain butterfly did. The
// Width threads sit Stride apart in the warp (Stride threads split X's columns at each lane).
template <class T, int Width, int Count, int Offset, int Stride, int NV>
__device__ __forceinline__ void reduce_row_sums(T (&sum)[NV], int lane, int& first) {
  if constexpr (Offset > 0) {
    if constexpr (Count > 1) {
      constexpr int half = Count / 2;
      const bool upper = (lane & Offset) != 0;
#pragma unroll
      for (int i = 0; i < half; ++i) {
        const T send = upper ? sum[i] : sum[i + half];
        const T keep = upper ? sum[i + half] : sum[i];
        sum[i] = keep + __shfl_xor_sync(0xffffffffu, send, Offset * Stride, Width * Stride);
      }
      if (upper) first += half;
      reduce_row_sums<T, Width, half, Offset / 2, Stride>(sum, lane, first);
    } else {
      sum[0] += __shfl_xor_sync(0xffffffffu, sum[0], Offset * Stride, Width * Stride);
      reduce_row_sums<T, Width, 1, Offset / 2, Stride>(sum, lane, first);
    }
  }
}

// TPR · CG consecutive threads share one stored position q (one row): CG threads at each of
// TPR lanes, each of the CG summing its own piece of NV columns (CG = 1: all of the pass). The
// lanes walk the row's entries k = lane, lane + TPR, … up to the row's own length — never into
// the padding — then their sums meet by shuffles. When TPR equals the layout's lanes a warp's
// loads for one step are one contiguous run (lanes = 1: the paper's column-major slice,
// consecutive rows adjacent), the CG threads of a lane reading the same entry; other TPR stay
// correct, only less coalesced. Threads past the last row run with length 0 so every shuffle
// has its full warp. After the reduction each thread holds `kept` consecutive columns of its
// piece, and one lane in every `spread` writes them.
template <class T, int TPR, int NV, x_reads Reads, int NL, int CG>
__global__ void __launch_bounds__(block_threads) ellr_spmv_kernel(spmv_params<T> p) {
  static_assert(TPR * CG <= 32, "a row's threads share one warp");
  const std::int64_t thread = std::int64_t{blockIdx.x} * block_threads + threadIdx.x;
  const std::int64_t q = thread / (TPR * CG);
  const int within = static_cast<int>(thread % (TPR * CG));
  const int lane = within / CG;
  const int col0 = (within % CG) * NV;  // the piece's first column
  const int count = min(NV, p.vectors - col0);
  const bool real = q < p.rows;
  index_t length = 0;
  std::int64_t base = 0;
  if (real) {
    const std::int64_t slice = q / p.height;
    base = __ldg(p.slice_offsets + slice) + ((q - slice * p.height) << p.lane_shift);
    length = __ldg(p.row_lengths + q);
  }
  // A piece past X's width (a split of fewer columns than the pass) reads and sums nothing but
  // still takes its part in the shuffles.
  if (count <= 0) length = 0;
  const index_t lane_mask = (index_t{1} << p.lane_shift) - 1;
  const std::int64_t group_stride = p.height << p.lane_shift;
  T sum[NV];
#pragma unroll
  for (int v = 0; v < NV; ++v)
    sum[v] = T(0);
#pragma unroll 4
  for (index_t k = lane; k < length; k += TPR) {
    const std::int64_t at = base + std::int64_t{k >> p.lane_shift} * group_stride + (k & lane_mask);
    const index_t c = __ldg(p.col_idx + at);
    const T a = __ldg(p.values + at);
    T xs[NV];
    load_x_row<T, NV, Reads, NL>(p, c, col0, count, xs);
    // Paired reads know their width: the columns past it stay 0 without multiply-adds.
    constexpr int used = Reads == x_reads::paired ? NL : NV;
#pragma unroll
    for (int v = 0; v < used; ++v)
      sum[v] += a * xs[v];
  }
  int first = 0;
  reduce_row_sums<T, TPR, NV, TPR / 2, CG>(sum, lane, first);
  constexpr int kept = NV >= TPR ? NV / TPR : 1;
  constexpr int spread = TPR * kept / NV;
  if (!real || lane % spread != 0) return;
  const std::int64_t row = p.row_order ? std::int64_t{__ldg(p.row_order + q)} : q;
#pragma unroll
  for (int i = 0; i < kept; ++i) {
    const int v = col0 + first + i;
    if (v >= p.vectors) break;
    T* out = p.y + row * p.y_row + v * p.y_col;
    *out = p.beta == T(0) ? p.alpha * sum[i] : p.alpha * sum[i] + p.beta * *out;
  }
}

template <class T, int NV, x_reads Reads, int NL = NV, int CG = 1>
void launch_by_threads(int threads_per_row, const spmv_params<T>& p, cudaStream_t stream) {
  const std::int64_t threads = p.rows * threads_per_row * CG;
  const auto blocks = static_cast<unsigned int>((threads + block_threads - 1) / block_threads);
  // run_ellr keeps threads_per_row · CG within a warp; the rest are never built.
  auto launch = [&](auto tpr) {
    constexpr int TPR = decltype(tpr)::value;
    if constexpr (TPR * CG <= 32)
      ellr_spmv_kernel<T, TPR, NV, Reads, NL, CG><<<blocks, block_threads, 0, stream>>>(p);
  };
  switch (threads_per_row) {
    case 1:
      launch(std::integral_constant<int, 1>{});
      break;
    case 2:
      launch(std::integral_constant<int, 2>{});
      break;
    case 4:
      launch(std::integral_constant<int, 4>{});
      break;
    case 8:
      launch(std::integral_constant<int, 8>{});
      break;
    case 16:
      launch(std::integral_constant<int, 16>{});
      break;
    default:
      launch(std::integral_constant<int, 32>{});
      break;
  }
}

// A pass of NV sums over `vectors` columns of X, read as `reads` says (run_ellr chooses wide
// reads only where NV holds whole 16-byte vectors, paired ones only for fewer columns than NV
// or for NV = 2; anything else reads one element at a time).
template <class T, int NV>
void launch_pass(int threads_per_row, const spmv_params<T>& p, int vectors, x_reads reads,
                 cudaStream_t stream) {
  if constexpr (NV % (16 / sizeof(T)) == 0) {
    if (reads == x_reads::wide) {
      launch_by_threads<T, NV, x_reads::wide>(threads_per_row, p, stream);
      return;
    }
  }
  if (reads == x_reads::paired) {
    if constexpr (NV == 2) {
      launch_by_threads<T, 2, x_reads::paired, 2>(threads_per_row, p, stream);
      return;
    } else if constexpr (NV == 4) {
      if (vectors == 3) {
        launch_by_threads<T, 4, x_reads::paired, 3>(threads_per_row, p, stream);
        return;
      }
    } else if constexpr (NV == 8) {
      if (vectors == 5) {
        launch_by_threads<T, 8, x_reads::paired, 5>(threads_per_row, p, stream);
        return;
      }
      if (vectors == 6) {
        launch_by_threads<T, 8, x_reads::paired, 6>(threads_per_row, p, stream);
        return;
      }
      if (vectors == 7) {
        launch_by_threads<T, 8, x_reads::paired, 7>(threads_per_row, p, stream);
        return;
      }
    }
  }
  launch_by_threads<T, NV, x_reads::scalar>(threads_per_row, p, stream);
}

// A pass of `pass` sums with X's columns split over CG threads, each summing NV = pass / CG of
// them, read as `reads` says (run_ellr chooses wide reads only where every piece is whole
// 16-byte vectors, paired ones only for pieces of 2 on rows of an even width).
template <class T, int CG, int NV>
void launch_split(int threads_per_row, const spmv_params<T>& p, x_reads reads,
                  cudaStream_t stream) {
  if constexpr (NV % (16 / sizeof(T)) == 0) {
    if (reads == x_reads::wide) {
      launch_by_threads<T, NV, x_reads::wide, NV, CG>(threads_per_row, p, stream);
      return;
    }
    // Only the passes past 8 columns (16 and 32) carry columns X lacks under split pieces.
    if constexpr (NV * CG >= 16) {
      if (reads == x_reads::wide_partial) {
        launch_by_threads<T, NV, x_reads::wide_partial, NV, CG>(threads_per_row, p, stream);
        return;
      }
    }
  }
  if constexpr (sizeof(T) == 4 && NV * CG >= 16) {
    if (reads == x_reads::paired_partial) {
      launch_by_threads<T, NV, x_reads::paired_partial, NV, CG>(threads_per_row, p, stream);
      return;
    }
  }
  if constexpr (NV == 2) {
    if (reads == x_reads::paired) {
      launch_by_threads<T, 2, x_reads::paired, 2, CG>(threads_per_row, p, stream);
      return;
    }
  }
  launch_by_threads<T, NV, x_reads::scalar, NV, CG>(threads_per_row, p, stream);
}

bool aligned_to(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// Entries per row of `a` on average (0 without rows).
template <class T>
double mean_row_length(const ellr<T, gpu>& a) {
  return a.rows() > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows()) : 0.0;
}

// Threads per row when the caller gives none: the layout's lanes when it interleaves them
// (the planner chose both together), else detail::ellr_threads_per_row for this device.
template <class T>
int default_threads_per_row(const ellr<T, gpu>& a, const context& ctx) {
  if (a.lanes() > 1) return a.lanes();
  const auto& device = ctx.properties();
  const std::int64_t resident = std::int64_t{device.sm_count} * device.max_threads_per_sm;
  return detail::ellr_threads_per_row(a.rows(), mean_row_length(a), resident);
}

template <class T>
ellr_spmv_launch run_ellr(T alpha, const ellr<T, gpu>& a, const T* x, std::int64_t x_row,
                          std::int64_t x_col, T beta, T* y, std::int64_t y_row, std::int64_t y_col,
                          int vectors, bool x_row_major, int threads_per_row, int column_groups,
                          context& ctx) {
  const cudaStream_t stream = detail::stream_of(ctx);
  // A split asked for is checked first: the default threads below are sized by it.
  if (column_groups != 0 && column_groups != 1 && column_groups != 2 && column_groups != 4)
    throw invalid_matrix("ellr_spmm: " + std::to_string(column_groups) +
                         " column groups; choose 1, 2 or 4 (0: ellr_spmm chooses)");
  if (threads_per_row == 0) {
    // The default: fewer where a split asked for would take the row's threads past a warp;
    // past 8 columns also halved on large matrices (detail::ellr_wide_threads_per_row).
    const int lanes = default_threads_per_row(a, ctx);
    if (vectors > 8) {
      threads_per_row = detail::ellr_wide_default_launch(lanes, vectors, sizeof(T) == 8, a.rows(),
                                                         mean_row_length(a), column_groups)
                            .threads_per_row;
    } else {
      threads_per_row = std::min<int>(lanes, detail::ellr_max_lanes / std::max(column_groups, 1));
    }
  }
  if (threads_per_row < 1 || threads_per_row > detail::ellr_max_lanes ||
      (threads_per_row & (threads_per_row - 1)) != 0)
    throw invalid_matrix("ellr_spmv: " + std::to_string(threads_per_row) +
                         " threads per row; choose 1, 2, 4, 8, 16 or 32");
  // The pass carries 1, 2, 4, 8, 16 or 32 sums, at most 8 a thread (the reduce-scatter halves
  // them).
  const int pass = detail::ellr_pass_vectors(vectors);
  constexpr std::int64_t per_load = 16 / sizeof(T);
  // X row-major in rows of whole 16-byte vectors; wide_rows: as many columns as the pass carries.
  const bool vector_rows =
      x_row_major && vectors % per_load == 0 && x_row % per_load == 0 && aligned_to(x, 16);
  const bool wide_rows = vector_rows && vectors == pass;
  if (column_groups == 0)
    column_groups = detail::ellr_column_groups(threads_per_row, vectors, wide_rows, sizeof(T) == 8);
  if (!detail::ellr_split_possible(threads_per_row, column_groups, vectors))
    throw invalid_matrix("ellr_spmm: " + std::to_string(column_groups) + " column groups with " +
                         std::to_string(threads_per_row) + " threads per row and " +
                         std::to_string(vectors) +
                         " columns of X; choose 1, 2 or 4, each group keeping 2 to 8 of a "
                         "pass of " +
                         std::to_string(pass) + ", and at most 32 threads per row in all");
  int lane_shift = 0;
  while ((index_t{1} << lane_shift) < a.lanes())
    ++lane_shift;
  ellr_spmv_launch launch;
  launch.threads_per_row = threads_per_row;
  launch.column_groups = column_groups;
  const spmv_params<T> p{a.values().data(),
                         a.col_idx().data(),
                         a.row_lengths().data(),
                         a.row_order().data(),
                         a.slice_offsets().data(),
                         x,
                         y,
                         a.rows(),
                         a.slice_height(),
                         lane_shift,
                         x_row,
                         x_col,
                         y_row,
                         y_col,
                         vectors,
                         alpha,
                         beta};
  launch.vectors_per_pass = pass;
  if (vectors == 1) {
    launch_by_threads<T, 1, x_reads::scalar>(threads_per_row, p, stream);
  } else if (column_groups > 1) {
    // Each of the column_groups threads of a lane reads its own piece of X's row: with 16-byte
    // loads where every piece is whole such vectors, in pairs where pieces of 2 start on even
    // elements, else one element at a time.
    const int piece = pass / column_groups;
    const bool whole_pieces = (piece * sizeof(T)) % 16 == 0;
    // Past 8 columns X may hold fewer columns than the pass: its pieces still read whole
    // 16-byte vectors where its rows are made of them (N = 12 in float; 10, 12, 14 in double),
    // else float pairs where they are even (N = 10, 14), each piece up to its own last column.
    const bool partial = !wide_rows && x_row_major && vectors > 8 && vectors < pass;
    const bool wide_partial = partial && whole_pieces && vector_rows;
    const bool paired_partial = partial && !wide_partial && sizeof(T) == 4 && vectors % 2 == 0 &&
                                x_row % 2 == 0 && aligned_to(x, 8);
    launch.wide_loads = (wide_rows && whole_pieces) || wide_partial;
    launch.paired_loads =
        paired_partial || (!launch.wide_loads && x_row_major && x_col == 1 && piece == 2 &&
                           vectors % 2 == 0 && x_row % 2 == 0 && aligned_to(x, 2 * sizeof(T)));
    const x_reads reads = wide_partial          ? x_reads::wide_partial
                          : paired_partial      ? x_reads::paired_partial
                          : launch.wide_loads   ? x_reads::wide
                          : launch.paired_loads ? x_reads::paired
                                                : x_reads::scalar;
    if (column_groups == 2 && piece == 2)
      launch_split<T, 2, 2>(threads_per_row, p, reads, stream);
    else if (column_groups == 2 && piece == 4)
      launch_split<T, 2, 4>(threads_per_row, p, reads, stream);
    else if (column_groups == 2)
      launch_split<T, 2, 8>(threads_per_row, p, reads, stream);
    else if (piece == 2)
      launch_split<T, 4, 2>(threads_per_row, p, reads, stream);
    else if (piece == 4)
      launch_split<T, 4, 4>(threads_per_row, p, reads, stream);
    else
      launch_split<T, 4, 8>(threads_per_row, p, reads, stream);
  } else {
    // Row-major X reads whole 16-byte vectors where its rows are exactly that, else element
    // pairs where its rows start on pairs or are odd-sized (one single load covers the parity),
    // else one element at a time.
    launch.wide_loads = wide_rows;
    launch.paired_loads = !launch.wide_loads && x_row_major && x_col == 1 &&
                          (vectors < pass || pass == 2) && (vectors % 2 == 1 || x_row % 2 == 0) &&
                          aligned_to(x, 2 * sizeof(T));
    const x_reads reads = launch.wide_loads     ? x_reads::wide
                          : launch.paired_loads ? x_reads::paired
                                                : x_reads::scalar;
    if (pass == 2)
      launch_pass<T, 2>(threads_per_row, p, vectors, reads, stream);
    else if (pass == 4)
      launch_pass<T, 4>(threads_per_row, p, vectors, reads, stream);
    else
      launch_pass<T, 8>(threads_per_row, p, vectors, reads, stream);
  }
  SPADE_CHECK_LAUNCH("multiplying ellr by a vector (ellr_spmv)");
  return launch;
}

}  // namespace

template <scalar T>
ellr_spmv_launch ellr_spmv(T alpha, const ellr<T, gpu>& a, const vector<T, gpu>& x, T beta,
                           vector<T, gpu>& y, int threads_per_row) {
  detail::require_shapes(x.size() == a.cols() && y.size() == a.rows(), "ellr_spmv",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", x has " +
                             std::to_string(x.size()) + " entries, y has " +
                             std::to_string(y.size()));
  if (a.rows() == 0) return {};
  context& ctx = detail::context_of(a.row_lengths(), a.values(), x.values(), y.values());
  return run_ellr(alpha, a, x.data(), 1, 0, beta, y.data(), 1, 0, 1, true, threads_per_row, 1, ctx);
}

template <scalar T, layout LX, layout LY>
ellr_spmv_launch ellr_spmm(T alpha, const ellr<T, gpu>& a, const dense<T, gpu, LX>& x, T beta,
                           dense<T, gpu, LY>& y, int threads_per_row, int column_groups) {
  detail::require_shapes(x.rows() == a.cols() && y.rows() == a.rows() && y.cols() == x.cols(),
                         "ellr_spmm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", X is " +
                             detail::shape_text(x.rows(), x.cols()) + ", Y is " +
                             detail::shape_text(y.rows(), y.cols()));
  if (x.cols() > detail::ellr_max_split_vectors)
    throw dimension_mismatch(
        "ellr_spmm: X has " + std::to_string(x.cols()) + " columns; one pass takes at most " +
        std::to_string(detail::ellr_max_split_vectors) + " (more than 8 only split over threads)");
  if (a.rows() == 0 || x.cols() == 0) return {};
  context& ctx = detail::context_of(a.row_lengths(), a.values(), x.values(), y.values());
  constexpr bool x_rows = std::is_same_v<LX, row_major>;
  constexpr bool y_rows = std::is_same_v<LY, row_major>;
  const std::int64_t x_row = x_rows ? x.cols() : 1, x_col = x_rows ? 1 : x.rows();
  const std::int64_t y_row = y_rows ? y.cols() : 1, y_col = y_rows ? 1 : y.rows();
  return run_ellr(alpha, a, x.data(), x_row, x_col, beta, y.data(), y_row, y_col,
                  static_cast<int>(x.cols()), x_rows, threads_per_row, column_groups, ctx);
}

SPADE_KERNELS_ELLR_INSTANTIATIONS(float)
SPADE_KERNELS_ELLR_INSTANTIATIONS(double)

}  // namespace spade::device
