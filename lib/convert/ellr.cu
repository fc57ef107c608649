// GPU csr ↔ ellr conversions: row lengths off the row pointers, block-local length sorts for
// SELL-C-σ windows, CUB scans for slice offsets and row pointers, thread-per-row copies.
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "convert/instantiate.hpp"
#include "detail/cub_temp.cuh"
#include "spade/core/error.hpp"
#include "spade/device/convert.hpp"

namespace spade::device {

namespace {

constexpr int block_threads = 256;
// A sort window is sorted by one block: block_threads threads × sort_items keys each.
constexpr int sort_items = 8;
static_assert(block_threads * sort_items == detail::ellr_max_sort_window);

__device__ std::int64_t first_thread() {
  return std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ std::int64_t thread_stride() {
  return std::int64_t{gridDim.x} * blockDim.x;
}

// ---- csr → ellr ------------------------------------------------------------------------------

struct length_params {
  const index_t* d_row_ptr;  // (rows + 1)
  index_t* d_row_lengths;    // (rows), by position = row
  std::int64_t rows;
};

__global__ void __launch_bounds__(block_threads) row_lengths_kernel(length_params p) {
  for (std::int64_t r = first_thread(); r < p.rows; r += thread_stride())
    p.d_row_lengths[r] = p.d_row_ptr[r + 1] - p.d_row_ptr[r];
}

struct window_sort_params {
  const index_t* d_row_ptr;  // (rows + 1)
  index_t* d_row_lengths;    // (rows), by position
  index_t* d_row_order;      // (rows), by position
  std::int64_t rows;
  std::int64_t window;
};

// One block per window: keys are row lengths (-1 for the slots past the last row, so they sort
// behind every row), values the rows. CUB's block radix sort is stable, so rows of equal length
// keep their order, as std::stable_sort does on the host.
__global__ void __launch_bounds__(block_threads) window_sort_kernel(window_sort_params p) {
  using sorter = cub::BlockRadixSort<index_t, block_threads, sort_items, index_t>;
  __shared__ typename sorter::TempStorage temp;
  const std::int64_t first = std::int64_t{blockIdx.x} * p.window;
  const std::int64_t end = std::min(first + p.window, p.rows);
  index_t keys[sort_items];
  index_t rows[sort_items];
  for (int i = 0; i < sort_items; ++i) {
    const std::int64_t q = first + std::int64_t{threadIdx.x} * sort_items + i;
    const bool real = q < end;
    keys[i] = real ? p.d_row_ptr[q + 1] - p.d_row_ptr[q] : -1;
    rows[i] = real ? static_cast<index_t>(q) : -1;
  }
  sorter(temp).SortDescending(keys, rows);
  for (int i = 0; i < sort_items; ++i) {
    const std::int64_t q = first + std::int64_t{threadIdx.x} * sort_items + i;
    if (q < end) {
      p.d_row_lengths[q] = keys[i];
      p.d_row_order[q] = rows[i];
    }
  }
}

struct slice_width_params {
  const index_t* d_row_lengths;  // (rows), by position
  std::int64_t* d_slice_slots;   // (slices + 1): width·height of each slice, then 0
  std::int64_t rows;
  std::int64_t slices;
  std::int64_t height;
  std::int64_t lanes;
};

__device__ std::int64_t round_to_lanes(std::int64_t width, std::int64_t lanes) {
  return (width + lanes - 1) / lanes * lanes;
}

// A warp per slice (slices are short: the paper's single tall slice is measured by a device
// reduction instead).
__global__ void __launch_bounds__(block_threads) slice_width_kernel(slice_width_params p) {
  const std::int64_t warps = thread_stride() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t s = first_thread() / 32; s <= p.slices; s += warps) {
    if (s == p.slices) {
      if (lane == 0) p.d_slice_slots[s] = 0;  // the exclusive scan makes this the total
      continue;
    }
    const std::int64_t end = std::min((s + 1) * p.height, p.rows);
    index_t widest = 0;
    for (std::int64_t q = s * p.height + lane; q < end; q += 32)
      widest = max(widest, p.d_row_lengths[q]);
    widest = __reduce_max_sync(0xffffffffu, widest);
    if (lane == 0) p.d_slice_slots[s] = round_to_lanes(widest, p.lanes) * p.height;
  }
}

struct single_slice_params {
  const index_t* d_width;       // (1)
  std::int64_t* d_slice_slots;  // (2)
  std::int64_t height;
  std::int64_t lanes;
};

__global__ void single_slice_kernel(single_slice_params p) {
  p.d_slice_slots[0] = round_to_lanes(*p.d_width, p.lanes) * p.height;
  p.d_slice_slots[1] = 0;
}

struct summary_params {
  const std::int64_t* d_total_slots;  // (1)
  const index_t* d_longest;           // (1)
  std::int64_t* d_summary;            // (2): total slots, longest row
};

// Gathers the two numbers the host needs into one array, so one copy brings both back.
__global__ void summary_kernel(summary_params p) {
  p.d_summary[0] = *p.d_total_slots;
  p.d_summary[1] = *p.d_longest;
}

template <class T>
struct fill_params {
  const index_t* d_row_ptr;             // (rows + 1)
  const index_t* d_csr_col;             // (nnz)
  const T* d_csr_values;                // (nnz)
  const index_t* d_row_lengths;         // (rows), by position
  const index_t* d_row_order;           // (rows) or null
  const std::int64_t* d_slice_offsets;  // (slices + 1)
  index_t* d_col_idx;                   // (slots)
  T* d_values;                          // (slots)
  std::int64_t rows;
  std::int64_t height;
  std::int64_t lanes;
  std::int64_t positions;  // slices · height: the padding positions past the last row too
};

// A thread per position writes its whole row of the slice, padding included, so no memset
// pass over the padded arrays is needed: for a fixed k a warp's stores fall in one run of
// 32·lanes slots.
template <class T>
__global__ void __launch_bounds__(block_threads) fill_kernel(fill_params<T> p) {
  for (std::int64_t q = first_thread(); q < p.positions; q += thread_stride()) {
    const std::int64_t slice = q / p.height;
    const std::int64_t base = p.d_slice_offsets[slice];
    const std::int64_t i = q - slice * p.height;
    const std::int64_t width = (p.d_slice_offsets[slice + 1] - p.d_slice_offsets[slice]) / p.height;
    std::int64_t length = 0;
    std::int64_t begin = 0;
    if (q < p.rows) {
      const std::int64_t row = p.d_row_order ? p.d_row_order[q] : q;
      length = p.d_row_lengths[q];
      begin = p.d_row_ptr[row];
    }
    for (std::int64_t k = 0; k < width; ++k) {
      const bool entry = k < length;
      const std::int64_t at = base + detail::ellr_slot(p.height, p.lanes, i, k);
      p.d_col_idx[at] = entry ? p.d_csr_col[begin + k] : 0;
      p.d_values[at] = entry ? p.d_csr_values[begin + k] : T(0);
    }
  }
}

// ---- ellr → csr ------------------------------------------------------------------------------

struct scatter_length_params {
  const index_t* d_row_lengths;  // (rows), by position
  const index_t* d_row_order;    // (rows) or null
  index_t* d_counts;             // (rows + 1), by row, then 0
  std::int64_t rows;
};

__global__ void __launch_bounds__(block_threads) scatter_lengths_kernel(scatter_length_params p) {
  for (std::int64_t q = first_thread(); q <= p.rows; q += thread_stride()) {
    if (q == p.rows)
      p.d_counts[q] = 0;
    else
      p.d_counts[p.d_row_order ? p.d_row_order[q] : q] = p.d_row_lengths[q];
  }
}

template <class T>
struct gather_params {
  const index_t* d_row_lengths;         // (rows), by position
  const index_t* d_row_order;           // (rows) or null
  const std::int64_t* d_slice_offsets;  // (slices + 1)
  const index_t* d_col_idx;             // (slots)
  const T* d_values;                    // (slots)
  const index_t* d_row_ptr;             // (rows + 1)
  index_t* d_csr_col;                   // (nnz)
  T* d_csr_values;                      // (nnz)
  std::int64_t rows;
  std::int64_t height;
  std::int64_t lanes;
};

template <class T>
__global__ void __launch_bounds__(block_threads) gather_kernel(gather_params<T> p) {
  for (std::int64_t q = first_thread(); q < p.rows; q += thread_stride()) {
    const std::int64_t slice = q / p.height;
    const std::int64_t base = p.d_slice_offsets[slice];
    const std::int64_t i = q - slice * p.height;
    const std::int64_t row = p.d_row_order ? p.d_row_order[q] : q;
    const std::int64_t begin = p.d_row_ptr[row];
    const index_t length = p.d_row_lengths[q];
    for (index_t k = 0; k < length; ++k) {
      const std::int64_t at = base + detail::ellr_slot(p.height, p.lanes, i, k);
      p.d_csr_col[begin + k] = p.d_col_idx[at];
      p.d_csr_values[begin + k] = p.d_values[at];
    }
  }
}

}  // namespace

template <scalar T>
ellr<T, gpu> csr_to_ellr(const csr<T, gpu>& a, ellr_layout layout) {
  detail::check_ellr_layout("csr_to_ellr", layout);
  const index_t rows = a.rows();
  const index_t height = detail::ellr_slice_height(rows, layout);
  if (rows == 0)
    return ellr<T, gpu>(unchecked, 0, a.cols(), 0, 0, height, layout, {}, {}, {}, {}, {});
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  const std::int64_t slices = (std::int64_t{rows} + height - 1) / height;

  device_buffer<index_t> row_lengths(static_cast<std::size_t>(rows), ctx);
  device_buffer<index_t> row_order;
  if (detail::ellr_sorts(layout)) {
    row_order = device_buffer<index_t>(static_cast<std::size_t>(rows), ctx);
    const window_sort_params sp{a.row_ptr().data(), row_lengths.data(), row_order.data(), rows,
                                layout.sort_window};
    const std::int64_t windows = (std::int64_t{rows} + layout.sort_window - 1) / layout.sort_window;
    window_sort_kernel<<<static_cast<unsigned int>(windows), block_threads, 0, stream>>>(sp);
    SPADE_CHECK_LAUNCH("sorting rows by length inside each sort window (csr_to_ellr)");
  } else {
    const length_params lp{a.row_ptr().data(), row_lengths.data(), rows};
    row_lengths_kernel<<<detail::grid_blocks(rows, block_threads, ctx), block_threads, 0, stream>>>(
        lp);
    SPADE_CHECK_LAUNCH("reading row lengths off csr row pointers (csr_to_ellr)");
  }

  // Slice widths → offsets by one exclusive scan; the total and the longest row come back to
  // the host in one copy (the only synchronisation) to size the padded arrays.
  device_buffer<std::int64_t> slice_slots(static_cast<std::size_t>(slices) + 1, ctx);
  device_buffer<index_t> longest(1, ctx);
  detail::cub_run(ctx, "finding the longest row (cub::DeviceReduce::Max)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceReduce::Max(d_temp, bytes, row_lengths.data(), longest.data(),
                                                  rows, stream);
                  });
  if (slices == 1) {
    single_slice_kernel<<<1, 1, 0, stream>>>(
        {longest.data(), slice_slots.data(), height, layout.lanes});
    SPADE_CHECK_LAUNCH("sizing the single slice (csr_to_ellr)");
  } else {
    const slice_width_params wp{row_lengths.data(), slice_slots.data(), rows, slices, height,
                                layout.lanes};
    slice_width_kernel<<<detail::grid_blocks((slices + 1) * 32, block_threads, ctx), block_threads,
                         0, stream>>>(wp);
    SPADE_CHECK_LAUNCH("measuring slice widths (csr_to_ellr)");
  }
  device_buffer<std::int64_t> slice_offsets(static_cast<std::size_t>(slices) + 1, ctx);
  detail::cub_run(ctx, "scanning slice widths into offsets (cub::DeviceScan)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, slice_slots.data(),
                                                         slice_offsets.data(), slices + 1, stream);
                  });
  device_buffer<std::int64_t> summary(2, ctx);  // total slots, longest row
  summary_kernel<<<1, 1, 0, stream>>>(
      {slice_offsets.data() + slices, longest.data(), summary.data()});
  SPADE_CHECK_LAUNCH("gathering the ellr's size (csr_to_ellr)");
  const std::vector<std::int64_t> sizes = summary.to_host();
  const std::int64_t slots = sizes[0];
  const auto width = static_cast<index_t>(sizes[1]);

  device_buffer<index_t> col_idx(static_cast<std::size_t>(slots), ctx);
  device_buffer<T> values(static_cast<std::size_t>(slots), ctx);
  if (slots > 0) {
    const fill_params<T> fp{a.row_ptr().data(),
                            a.col_idx().data(),
                            a.values().data(),
                            row_lengths.data(),
                            row_order.data(),
                            slice_offsets.data(),
                            col_idx.data(),
                            values.data(),
                            rows,
                            height,
                            layout.lanes,
                            slices * height};
    fill_kernel<T>
        <<<detail::grid_blocks(fp.positions, block_threads, ctx), block_threads, 0, stream>>>(fp);
    SPADE_CHECK_LAUNCH("copying csr rows into padded ellr slices (csr_to_ellr)");
  }
  return ellr<T, gpu>(unchecked, rows, a.cols(), a.nnz(), width, height, layout, std::move(values),
                      std::move(col_idx), std::move(row_lengths), std::move(slice_offsets),
                      std::move(row_order));
}

template <scalar T>
csr<T, gpu> ellr_to_csr(const ellr<T, gpu>& a) {
  const index_t rows = a.rows();
  context& ctx = detail::context_of(a.row_lengths(), a.col_idx(), a.values());
  const cudaStream_t stream = detail::stream_of(ctx);
  device_buffer<index_t> row_ptr(static_cast<std::size_t>(rows) + 1, ctx);
  if (rows == 0) {
    row_ptr.fill_zero();
    return csr<T, gpu>(unchecked, 0, a.cols(), std::move(row_ptr), {}, {});
  }
  device_buffer<index_t> counts(static_cast<std::size_t>(rows) + 1, ctx);
  const scatter_length_params lp{a.row_lengths().data(), a.row_order().data(), counts.data(), rows};
  scatter_lengths_kernel<<<detail::grid_blocks(std::int64_t{rows} + 1, block_threads, ctx),
                           block_threads, 0, stream>>>(lp);
  SPADE_CHECK_LAUNCH("placing ellr row lengths in row order (ellr_to_csr)");
  detail::cub_run(ctx, "scanning row lengths into row pointers (cub::DeviceScan)",
                  [&](void* d_temp, std::size_t& bytes) {
                    return cub::DeviceScan::ExclusiveSum(d_temp, bytes, counts.data(),
                                                         row_ptr.data(), rows + 1, stream);
                  });
  const auto nnz = static_cast<std::size_t>(a.nnz());
  device_buffer<index_t> col_idx(nnz, ctx);
  device_buffer<T> values(nnz, ctx);
  if (nnz > 0) {
    const gather_params<T> gp{a.row_lengths().data(),
                              a.row_order().data(),
                              a.slice_offsets().data(),
                              a.col_idx().data(),
                              a.values().data(),
                              row_ptr.data(),
                              col_idx.data(),
                              values.data(),
                              rows,
                              a.slice_height(),
                              a.lanes()};
    gather_kernel<T>
        <<<detail::grid_blocks(rows, block_threads, ctx), block_threads, 0, stream>>>(gp);
    SPADE_CHECK_LAUNCH("copying ellr rows into csr (ellr_to_csr)");
  }
  return csr<T, gpu>(unchecked, rows, a.cols(), std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

SPADE_CONVERT_ELLR_INSTANTIATIONS(float)
SPADE_CONVERT_ELLR_INSTANTIATIONS(double)

}  // namespace spade::device
