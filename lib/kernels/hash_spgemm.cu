// Hash-based two-phase sparse × sparse product (paper 004, OpSparse), re-sized for the device it
// runs on: products per row → bins → symbolic (distinct columns per row) → bins by row length →
// numeric (values, sorted rows). docs/spgemm.md derives every size used here.
// The kernels are in kernels/hash_spgemm/ (common, binning, tables, sorted_rows, long_rows,
// streams); this file drives them (product_run), describes a report and instantiates.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <functional>
#include <limits>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "detail/cub_temp.cuh"
#include "detail/library_support.cuh"
#include "kernels/hash_spgemm/binning.cuh"
#include "kernels/hash_spgemm/common.cuh"
#include "kernels/hash_spgemm/long_rows.cuh"
#include "kernels/hash_spgemm/sorted_rows.cuh"
#include "kernels/hash_spgemm/streams.cuh"
#include "kernels/hash_spgemm/tables.cuh"
#include "kernels/instantiate.hpp"
#include "spade/device/kernels.hpp"

namespace spade::device {

namespace {

// ---- the product ------------------------------------------------------------------------------

// Numeric binning counts a row's products / this as its length when that is more (bin_ranges).
constexpr int numeric_products_per_slot = 8;
// Products per block of the long-row path (docs/spgemm.md).
constexpr std::int64_t long_products_per_block = 4096;
// A numeric row goes to the dense accumulator only when it holds at least this share of C's
// columns, so walking its bitmap costs at most 2 words per entry.
constexpr std::int64_t dense_fill_divisor = 64;

int per_entry_for(double mean_b_row) {
  int t = 1;
  while (t < 32 && t < mean_b_row)
    t *= 2;
  return t;
}

template <class T>
class product_run {
 public:
  product_run(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b, context& ctx,
              hash_spgemm_report* report, bool timed, std::int64_t dense_row_min)
      : a_(a), b_(b), ctx_(ctx), stream_(detail::stream_of(ctx)), report_(report), timed_(timed) {
    // An error left by earlier, unrelated CUDA calls of this thread is not ours to report.
    (void)cudaGetLastError();
    p_ = operands<T>{a.row_ptr().data(), a.col_idx().data(), a.values().data(),
                     b.row_ptr().data(), b.col_idx().data(), b.values().data(),
                     a.rows(),           b.cols(),           alpha};
    const auto& d = ctx.properties();
    symbolic_shapes_ = make_shapes(d, phase::symbolic, sizeof(T));
    // Rows of up to sorted_widths.back() products are sorted in registers, not hashed.
    std::erase_if(symbolic_shapes_,
                  [](const table_shape& s) { return s.max_work <= sorted_widths.back(); });
    numeric_shapes_ = make_shapes(d, phase::numeric, sizeof(T));
    route_long_rows_dense(dense_row_min < 0 ? hash_spgemm_dense_row_min : dense_row_min);
    per_entry_ = per_entry_for(b.rows() > 0 ? static_cast<double>(b.nnz()) / b.rows() : 0.0);
    if (report_) {
      *report_ = hash_spgemm_report{};
      for (const auto& s : symbolic_shapes_)
        report_->symbolic_tables.push_back(s.table_size);
      for (const auto& s : numeric_shapes_)
        report_->numeric_tables.push_back(s.table_size);
      report_->sorted_widths.assign(sorted_widths.begin(), sorted_widths.end());
    }
  }

  csr<T, gpu> run(bool values) {
    const index_t m = a_.rows();
    const index_t n = b_.cols();
    device_buffer<index_t> row_ptr(static_cast<std::size_t>(m) + 1, ctx_);
    if (m == 0 || n == 0 || a_.nnz() == 0 || b_.nnz() == 0) {
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    mark("start");
    // Setup: products per row into C's row pointers, bins counted (Algorithm 1).
    const bin_ranges sym_ranges = ranges_of(symbolic_shapes_, true);
    device_buffer<bin_counters> counters(2, ctx_);
    counters.fill_zero();
    SPADE_CUDA_TRY(cudaMemsetAsync(row_ptr.data() + m, 0, sizeof(index_t), stream_),
                   "clearing C's last row pointer (hash_spgemm)");
    device_buffer<index_t> row_products(static_cast<std::size_t>(m), ctx_);
    count_bins<T><<<binning_blocks(m), setup_threads, 0, stream_>>>(
        p_, nullptr, m, true, row_ptr.data(), row_products.data(), sym_ranges, counters.data());
    SPADE_CHECK_LAUNCH("counting the products per row (hash_spgemm)");
    mark("products per row");
    // Allocated while the count runs (the paper's overlap of allocation and kernels).
    device_buffer<index_t> bins(static_cast<std::size_t>(m), ctx_);
    bin_counters sym{};
    ctx_.copy_to_host(&sym, counters.data(), sizeof(sym));
    constexpr int sorted_bins = static_cast<int>(sorted_widths.size());
    std::int64_t sorted_count = 0;  // rows sorted in registers: the first bins' segments
    for (int w = 0; w < sorted_bins; ++w)
      sorted_count += static_cast<std::int64_t>(sym.size[w]);
    if (report_) {
      report_->products = static_cast<std::int64_t>(sym.total);
      report_->sorted_rows.assign(sym.size, sym.size + sorted_bins);
      report_->symbolic_bins.assign(sym.size + sorted_bins, sym.size + sym_ranges.count);
    }
    if (sym.total == 0) {  // no products: every row of C is empty
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    const bin_starts sym_starts =
        place(sym_ranges, sym, row_ptr.data(), nullptr, m, counters.data(), bins);
    const index_t* sym_rows = bins_or_identity(bins);
    if (values) stage_sorted_rows(sym);
    mark("symbolic binning");

    // The sorted rows add their lengths to the numeric counters' total (nnz(C)) themselves.
    symbolic(sym, sym_starts, sym_rows, row_ptr.data(), &counters.data()[1].total);
    mark("symbolic");

    // Numeric binning by row length (pass 1) of the rows not sorted in registers — the symbolic
    // bins after the sorted ones, in their own bin array — nnz(C) to the host, then C's arrays.
    bin_ranges num_ranges = ranges_of(numeric_shapes_, false);
    if (!numeric_shapes_.empty()) {
      num_ranges.products = row_products.data();
      num_ranges.products_per_slot = numeric_products_per_slot;
      num_ranges.products_cap = numeric_shapes_.back().max_work;
    }
    const std::int64_t hashed_count = m - sorted_count;
    const index_t* hashed_list = sorted_count && hashed_count ? sym_rows + sorted_count : nullptr;
    device_buffer<index_t> hashed_bins(
        sorted_count && hashed_count ? static_cast<std::size_t>(hashed_count) : std::size_t{0},
        ctx_);
    device_buffer<index_t>& num_bin_array = sorted_count ? hashed_bins : bins;
    if (hashed_count) {
      count_bins<T><<<binning_blocks(hashed_count), setup_threads, 0, stream_>>>(
          p_, hashed_list, hashed_count, false, row_ptr.data(), nullptr, num_ranges,
          counters.data() + 1);
      SPADE_CHECK_LAUNCH("counting the row lengths of C (hash_spgemm)");
    }
    bin_counters num{};
    ctx_.copy_to_host(&num, counters.data() + 1, sizeof(num));
    if (report_) {
      report_->nnz = static_cast<std::int64_t>(num.total);
      report_->numeric_bins.assign(num.size, num.size + num_ranges.count);
    }
    if (num.total > static_cast<unsigned long long>(INT_MAX))
      throw invalid_matrix("hash_spgemm: " + std::to_string(num.total) + " nonzeros in the " +
                           detail::shape_text(m, n) +
                           " product exceed the 32-bit index type (at most 2147483647)");
    const auto nnz = static_cast<std::size_t>(num.total);
    c_bytes_ =
        nnz * (sizeof(index_t) + sizeof(T)) + (static_cast<std::size_t>(m) + 1) * sizeof(index_t);
    if (!values) {
      row_ptr.fill_zero();
      return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), {}, {});
    }
    // C's arrays. Where only the staging area stood in their way, it goes and the short rows are
    // computed again in the numeric phase instead.
    device_buffer<index_t> col_idx;
    device_buffer<T> c_values;
    try {
      col_idx = device_buffer<index_t>(nnz, ctx_);
      c_values = device_buffer<T>(nnz, ctx_);
    } catch (const out_of_memory&) {
      if (!staged_) throw;
      unstage();
      if (report_) report_->sorted_staged = false;
      col_idx = device_buffer<index_t>(nnz, ctx_);
      c_values = device_buffer<T>(nnz, ctx_);
    }
    const bin_starts num_starts = place(num_ranges, num, row_ptr.data(), hashed_list, hashed_count,
                                        counters.data() + 1, num_bin_array);
    // Identity over a list is the list itself.
    const index_t* num_rows = identity_ ? hashed_list : num_bin_array.data();
    mark("numeric binning");
    detail::cub_run(ctx_, "summing C's row lengths (hash_spgemm)", [&](void* temp, std::size_t& b) {
      return cub::DeviceScan::ExclusiveSum(temp, b, row_ptr.data(), row_ptr.data(), m + 1, stream_);
    });
    mark("row offsets");

    numeric(sym, sym_starts, sym_rows, num, num_starts, num_rows, row_ptr.data(), col_idx.data(),
            c_values.data());
    mark("numeric");
    unstage();
    finish_report(nnz);
    return csr<T, gpu>(unchecked, m, n, std::move(row_ptr), std::move(col_idx),
                       std::move(c_values));
  }

 private:
  // The staging area of the rows sorted in registers of at least staged_min_width products
  // (staged_sorted): each row gets its width in slots. It costs up to twice their products in
  // (column, value) pairs for a while, so it is optional: without the memory, those rows are
  // computed twice as the narrower ones always are.
  void stage_sorted_rows(const bin_counters& sym) {
    std::int64_t slots = 0;
    std::int64_t rows = 0;
    for (std::size_t w = 0; w < sorted_widths.size(); ++w) {
      stage_base_[w] = slots;
      if (sorted_widths[w] >= staged_min_width) {
        rows += static_cast<std::int64_t>(sym.size[w]);
        slots += static_cast<std::int64_t>(sym.size[w]) * sorted_widths[w];
      }
    }
    const std::int64_t least_products = rows * (staged_min_width / 2 + 1);
    if (slots == 0 || least_products * staged_min_share < static_cast<std::int64_t>(sym.total))
      return;
    try {
      stage_cols_ = device_buffer<index_t>(static_cast<std::size_t>(slots), ctx_);
      stage_values_ = device_buffer<T>(static_cast<std::size_t>(slots), ctx_);
      staged_ = true;
    } catch (const out_of_memory&) {
      unstage();
    }
    if (report_) report_->sorted_staged = staged_;
  }

  void unstage() {
    stage_cols_ = device_buffer<index_t>();
    stage_values_ = device_buffer<T>();
    staged_ = false;
  }

  staging_area stage_of(int width) {
    std::size_t w = 0;
    while (sorted_widths[w] != width)
      ++w;
    return staging_area{stage_cols_.data(), stage_base_[w]};
  }

  // Numeric rows of at least `row_min` entries that also fill at least 1/dense_fill_divisor of
  // C's columns take the dense accumulator, which writes them sorted without a sort; the shared
  // tables stop below that length. 0: only rows too long for shared memory do.
  void route_long_rows_dense(std::int64_t row_min) {
    if (row_min <= 0) return;
    const std::int64_t cut =
        std::max(row_min, (std::int64_t{b_.cols()} + dense_fill_divisor - 1) / dense_fill_divisor);
    for (std::size_t k = 0; k < numeric_shapes_.size(); ++k) {
      if (numeric_shapes_[k].max_work >= cut) {
        numeric_shapes_[k].max_work = cut - 1;
        numeric_shapes_.resize(k + 1);
        break;
      }
    }
    if (report_) {
      report_->numeric_tables.clear();
      for (const auto& s : numeric_shapes_)
        report_->numeric_tables.push_back(s.table_size);
    }
  }

  static unsigned binning_blocks(std::int64_t rows) {
    constexpr std::int64_t per_block = std::int64_t{setup_threads} * binning_rows_per_thread;
    return static_cast<unsigned>((rows + per_block - 1) / per_block);
  }

  unsigned blocks_for(std::int64_t items) const {
    return static_cast<unsigned>((items + setup_threads - 1) / setup_threads);
  }

  // Symbolic (`sorted`): the register-sorted widths first, then the tables, then the long path.
  static bin_ranges ranges_of(const std::vector<table_shape>& shapes, bool sorted) {
    bin_ranges r;
    if (sorted)
      for (const int w : sorted_widths)
        r.upper[r.count++] = w;
    for (const auto& s : shapes)
      r.upper[r.count++] = s.max_work;
    r.upper[r.count++] = std::numeric_limits<std::int64_t>::max();  // the long-row path
    return r;
  }

  // Pass 2 (Algorithm 2) unless one bin holds every row, when bins are the identity (Algorithm
  // 3's case, without even its kernel).
  bin_starts place(const bin_ranges& ranges, const bin_counters& c, const index_t* work,
                   const index_t* list, std::int64_t count, bin_counters* d_counters,
                   device_buffer<index_t>& bins) {
    bin_starts starts;
    std::int64_t at = 0;
    int filled = 0;
    for (int b = 0; b < ranges.count; ++b) {
      starts.start[b] = at;
      at += static_cast<std::int64_t>(c.size[b]);
      filled += c.size[b] != 0;
    }
    identity_ = filled <= 1;
    if (!identity_) {
      fill_bins<<<binning_blocks(count), setup_threads, 0, stream_>>>(
          work, list, count, ranges, starts, d_counters, bins.data());
      SPADE_CHECK_LAUNCH("placing rows into bins (hash_spgemm)");
    }
    return starts;
  }

  const index_t* bins_or_identity(const device_buffer<index_t>& bins) const {
    return identity_ ? nullptr : bins.data();
  }

  // Runs the launches of one phase: `jobs` — the tables from the largest down, then the sorted
  // rows — spread over the context stream and the side streams. With a long path, the jobs go
  // to the side streams only and the long path then runs on the context stream, which owns its
  // workspace: it reads its split back to the host, and the jobs queued before it run meanwhile
  // (queued after it, they waited for that synchronisation, 0.3 ms on a circuit matrix).
  void launch_jobs(std::vector<std::function<void(cudaStream_t)>>& jobs,
                   const std::function<void()>& long_path) {
    if (jobs.empty() && !long_path) return;
    if (jobs.empty() || (jobs.size() == 1 && !long_path)) {  // no streams to fork
      if (!jobs.empty()) jobs.front()(stream_);
      if (long_path) long_path();
      return;
    }
    stream_fan fan(stream_, ctx_.properties().ordinal);
    std::lock_guard<std::mutex> lock(fan.mutex());
    fan.fork();
    for (auto& job : jobs)
      job(long_path ? fan.next_side() : fan.next());
    if (long_path) long_path();
    fan.join();
  }

  // The sorted-row launches of a phase, widest first, for the symbolic bins' first segments.
  template <class Launch>
  void add_sorted_jobs(std::vector<std::function<void(cudaStream_t)>>& jobs,
                       const bin_counters& sym, const bin_starts& sym_starts,
                       const index_t* sym_rows, Launch launch) {
    for (int w = static_cast<int>(sorted_widths.size()) - 1; w >= 0; --w) {
      const auto count = static_cast<std::int64_t>(sym.size[w]);
      if (count == 0) continue;
      const int width = sorted_widths[static_cast<std::size_t>(w)];
      const sorted_rows l{sym_rows, sym_starts.start[w], count};
      jobs.emplace_back([=](cudaStream_t s) { launch(sorted_kernels_for<T>(width), width, l, s); });
    }
  }

  // Blocks for `rows` rows of `width` threads, `rows_per_group` rows per group.
  static unsigned sorted_blocks(std::int64_t rows, int width, int rows_per_group) {
    const std::int64_t groups = (rows + rows_per_group - 1) / rows_per_group;
    return static_cast<unsigned>((groups * width + sorted_threads - 1) / sorted_threads);
  }

  void symbolic(const bin_counters& c, const bin_starts& starts, const index_t* bin_rows,
                index_t* row_nnz, unsigned long long* sorted_nnz) {
    const int sorted_bins = static_cast<int>(sorted_widths.size());
    const int long_bin = sorted_bins + static_cast<int>(symbolic_shapes_.size());
    std::function<void()> long_path;
    if (c.size[long_bin])
      long_path = [&] {
        long_rows(bin_rows, starts.start[long_bin], static_cast<std::int64_t>(c.size[long_bin]),
                  /*numeric=*/false, row_nnz, nullptr, nullptr, nullptr);
      };
    std::vector<std::function<void(cudaStream_t)>> jobs;
    for (int b = long_bin - 1; b >= sorted_bins; --b) {
      if (c.size[b] == 0) continue;
      jobs.emplace_back([=, this](cudaStream_t s) {
        const table_shape& sh = symbolic_shapes_[static_cast<std::size_t>(b - sorted_bins)];
        const auto k = kernels_for<T>(sh.block, sh.group);
        allow_shared(k.symbolic, sh.shared_bytes);
        const auto rows = static_cast<std::int64_t>(c.size[b]);
        const int per_block = sh.block / sh.group;
        const bin_launch l{bin_rows, starts.start[b], rows, sh.table_size,
                           std::min(per_entry_, sh.group)};
        k.symbolic<<<static_cast<unsigned>((rows + per_block - 1) / per_block), sh.block,
                     sh.shared_bytes, s>>>(p_, l, row_nnz);
        SPADE_CHECK_LAUNCH("counting the columns of C's rows (hash_spgemm symbolic)");
      });
    }
    add_sorted_jobs(
        jobs, c, starts, bin_rows,
        [=, this](const sorted_kernels<T>& k, int width, sorted_rows l, cudaStream_t s) {
          if (staged_ && width >= staged_min_width) {
            k.staged<<<sorted_blocks(l.count, width, sorted_numeric_rows), sorted_threads, 0, s>>>(
                p_, l, stage_of(width), stage_values_.data(), row_nnz, sorted_nnz);
            SPADE_CHECK_LAUNCH("summing C's short rows into the staging area (hash_spgemm)");
            return;
          }
          k.symbolic<<<sorted_blocks(l.count, width, sorted_symbolic_rows), sorted_threads, 0, s>>>(
              p_, l, row_nnz, sorted_nnz);
          SPADE_CHECK_LAUNCH("counting the columns of C's short rows (hash_spgemm symbolic)");
        });
    launch_jobs(jobs, long_path);
  }

  void numeric(const bin_counters& sym, const bin_starts& sym_starts, const index_t* sym_rows,
               const bin_counters& c, const bin_starts& starts, const index_t* bin_rows,
               const index_t* c_row_ptr, index_t* c_col_idx, T* c_values) {
    const int long_bin = static_cast<int>(numeric_shapes_.size());
    std::function<void()> long_path;
    if (c.size[long_bin])
      long_path = [&] {
        long_rows(bin_rows, starts.start[long_bin], static_cast<std::int64_t>(c.size[long_bin]),
                  /*numeric=*/true, nullptr, c_row_ptr, c_col_idx, c_values);
      };
    std::vector<std::function<void(cudaStream_t)>> jobs;
    for (int b = long_bin - 1; b >= 0; --b) {
      if (c.size[b] == 0) continue;
      jobs.emplace_back([=, this](cudaStream_t s) {
        const table_shape& sh = numeric_shapes_[static_cast<std::size_t>(b)];
        const auto k = kernels_for<T>(sh.block, sh.group);
        allow_shared(k.numeric, sh.shared_bytes);
        const auto rows = static_cast<std::int64_t>(c.size[b]);
        const int per_block = sh.block / sh.group;
        const bin_launch l{bin_rows, starts.start[b], rows, sh.table_size,
                           std::min(per_entry_, sh.group)};
        k.numeric<<<static_cast<unsigned>((rows + per_block - 1) / per_block), sh.block,
                    sh.shared_bytes, s>>>(p_, l, c_row_ptr, c_col_idx, c_values);
        SPADE_CHECK_LAUNCH("computing the values of C's rows (hash_spgemm numeric)");
      });
    }
    add_sorted_jobs(
        jobs, sym, sym_starts, sym_rows,
        [=, this](const sorted_kernels<T>& k, int width, sorted_rows l, cudaStream_t s) {
          if (staged_ && width >= staged_min_width) {
            k.copy<<<sorted_blocks(l.count, width, copy_rows), sorted_threads, 0, s>>>(
                l, stage_of(width), stage_values_.data(), c_row_ptr, c_col_idx, c_values);
            SPADE_CHECK_LAUNCH("copying C's short rows from the staging area (hash_spgemm)");
            return;
          }
          k.numeric<<<sorted_blocks(l.count, width, sorted_numeric_rows), sorted_threads, 0, s>>>(
              p_, l, c_row_ptr, c_col_idx, c_values);
          SPADE_CHECK_LAUNCH("computing the values of C's short rows (hash_spgemm numeric)");
        });
    launch_jobs(jobs, long_path);
  }

  // The long-row path for `count` rows bins[first…]: blocks per row by products, then batches of
  // as many rows as the workspace budget has slots for.
  void long_rows(const index_t* bin_rows, std::int64_t first, std::int64_t count, bool numeric,
                 index_t* row_nnz, const index_t* c_row_ptr, index_t* c_col_idx, T* c_values) {
    const cudaStream_t s = stream_;
    const std::int64_t words = (std::int64_t{b_.cols()} + 31) / 32;
    const std::size_t slot_bytes =
        static_cast<std::size_t>(words) * 4 +
        (numeric ? static_cast<std::size_t>(b_.cols()) * sizeof(T) : std::size_t{0});
    // Budget: symbolic 16 bytes per row of A (O(rows)); numeric half of C's bytes (a quarter
    // left circuit_1.6M_4.8's 8 long rows in two batches of serial launches in fp64). At least
    // one slot, and never more than half the free memory.
    std::size_t budget = numeric ? c_bytes_ / 2 : static_cast<std::size_t>(a_.rows()) * 16;
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess)
      budget = std::min(budget, free_bytes / 2);
    const std::int64_t slots = std::clamp<std::int64_t>(
        static_cast<std::int64_t>(budget / slot_bytes), 1, std::max<std::int64_t>(count, 1));
    if (slot_bytes > free_bytes && free_bytes != 0)
      throw out_of_memory("hash_spgemm: a long row of C needs a dense accumulator of " +
                          std::to_string(slot_bytes) + " bytes (" + std::to_string(b_.cols()) +
                          " columns); " + std::to_string(free_bytes) + " bytes are free");

    device_buffer<index_t> offsets(static_cast<std::size_t>(count) + 1, ctx_);
    long_row_blocks<T><<<blocks_for(count * 32), setup_threads, 0, s>>>(
        p_, bin_rows, first, count, long_products_per_block, offsets.data(),
        numeric ? nullptr : row_nnz);
    SPADE_CHECK_LAUNCH("splitting long rows across blocks (hash_spgemm)");
    SPADE_CUDA_TRY(cudaMemsetAsync(offsets.data() + count, 0, sizeof(index_t), s),
                   "splitting long rows across blocks (hash_spgemm)");
    detail::cub_run(ctx_, "splitting long rows across blocks (hash_spgemm)",
                    [&](void* temp, std::size_t& bytes) {
                      return cub::DeviceScan::ExclusiveSum(temp, bytes, offsets.data(),
                                                           offsets.data(), count + 1, s);
                    });
    std::vector<index_t> host_offsets(static_cast<std::size_t>(count) + 1);
    SPADE_CUDA_TRY(
        cudaMemcpyAsync(host_offsets.data(), offsets.data(), host_offsets.size() * sizeof(index_t),
                        cudaMemcpyDeviceToHost, s),
        "reading the long-row split (hash_spgemm)");
    SPADE_CUDA_TRY(cudaStreamSynchronize(s), "reading the long-row split (hash_spgemm)");

    const std::size_t workspace_bytes = static_cast<std::size_t>(slots) * slot_bytes;
    device_buffer<std::byte> workspace(workspace_bytes, ctx_);
    const std::size_t value_bytes =
        numeric ? static_cast<std::size_t>(slots) * b_.cols() * sizeof(T) : 0;
    T* dense_values = numeric ? reinterpret_cast<T*>(workspace.data()) : nullptr;
    auto* bitmaps = reinterpret_cast<unsigned*>(workspace.data() + value_bytes);
    // Numeric: the compaction's chunks per row and their column counts (slots × chunks; none
    // for the symbolic phase, which does not compact).
    const std::int64_t chunks = (words + compact_chunk_words - 1) / compact_chunk_words;
    device_buffer<index_t> chunk_counts(numeric ? static_cast<std::size_t>(slots * chunks) : 0,
                                        ctx_);
    if (numeric)  // cleared once: compact_long leaves every slot zeroed behind it
      SPADE_CUDA_TRY(cudaMemsetAsync(workspace.data(), 0, workspace_bytes, s),
                     "clearing the long-row workspace (hash_spgemm)");
    if (report_) {
      report_->long_rows[numeric ? 1 : 0] = count;
      report_->long_batches[numeric ? 1 : 0] = (count + slots - 1) / slots;
      report_->workspace_bytes = std::max(report_->workspace_bytes, workspace_bytes);
    }
    for (std::int64_t r = 0; r < count; r += slots) {
      const std::int64_t r_end = std::min(count, r + slots);
      const long_batch l{bin_rows, first, offsets.data(), r, r_end, per_entry_, words};
      const std::int64_t items = host_offsets[r_end] - host_offsets[r];
      if (!numeric) {
        SPADE_CUDA_TRY(
            cudaMemsetAsync(bitmaps, 0, static_cast<std::size_t>(r_end - r) * words * 4, s),
            "clearing the long-row bitmaps (hash_spgemm)");
        symbolic_long<T>
            <<<static_cast<unsigned>(items), long_threads, 0, s>>>(p_, l, bitmaps, row_nnz);
        SPADE_CHECK_LAUNCH("counting the columns of long rows (hash_spgemm symbolic)");
      } else {
        numeric_long<T>
            <<<static_cast<unsigned>(items), long_threads, 0, s>>>(p_, l, dense_values, bitmaps);
        SPADE_CHECK_LAUNCH("computing the values of long rows (hash_spgemm numeric)");
        const auto blocks = static_cast<unsigned>((r_end - r) * chunks);
        count_long_chunks<<<blocks, compact_threads, 0, s>>>(l, bitmaps, chunks,
                                                             chunk_counts.data());
        SPADE_CHECK_LAUNCH("counting the columns of long rows by chunk (hash_spgemm numeric)");
        compact_long<T><<<blocks, compact_threads, 0, s>>>(l, b_.cols(), dense_values, bitmaps,
                                                           chunks, chunk_counts.data(), c_row_ptr,
                                                           c_col_idx, c_values);
        SPADE_CHECK_LAUNCH("writing long rows in column order (hash_spgemm numeric)");
      }
    }
  }

  // Phase boundaries as events on the context stream when timing was asked for.
  void mark(const char* name) {
    if (!report_ || !timed_) return;
    cudaEvent_t e = nullptr;
    SPADE_CUDA_TRY(cudaEventCreate(&e), "timing hash_spgemm phases");
    SPADE_CUDA_TRY(cudaEventRecord(e, stream_), "timing hash_spgemm phases");
    events_.push_back(e);
    names_.push_back(name);
  }

  void finish_report(std::size_t nnz) {
    if (!report_) return;
    if (timed_ && !events_.empty()) {
      SPADE_CUDA_TRY(cudaEventSynchronize(events_.back()), "timing hash_spgemm phases");
      for (std::size_t i = 1; i < events_.size(); ++i) {
        float ms = 0;
        cudaEventElapsedTime(&ms, events_[i - 1], events_[i]);
        report_->phase_ms.emplace_back(names_[i], ms);
      }
    }
    for (auto e : events_)
      cudaEventDestroy(e);
    events_.clear();
    report_->nnz = static_cast<std::int64_t>(nnz);
  }

 private:
  std::size_t c_bytes_ = 0;
  const csr<T, gpu>& a_;
  const csr<T, gpu>& b_;
  context& ctx_;
  cudaStream_t stream_;
  hash_spgemm_report* report_;
  bool timed_;
  operands<T> p_{};
  std::vector<table_shape> symbolic_shapes_;
  std::vector<table_shape> numeric_shapes_;
  int per_entry_ = 1;
  bool identity_ = false;
  // The staging area of the short rows (stage_sorted_rows), where it was allocated.
  bool staged_ = false;
  device_buffer<index_t> stage_cols_;
  device_buffer<T> stage_values_;
  std::array<std::int64_t, sorted_widths.size()> stage_base_{};

  std::vector<cudaEvent_t> events_;
  std::vector<std::string> names_;
};

}  // namespace

std::string hash_spgemm_report::describe() const {
  std::ostringstream out;
  out << products << " products, nnz(C) " << nnz << ", compression ratio " << compression_ratio();
  auto bins = [&](const char* what, const std::vector<std::int64_t>& rows,
                  const std::vector<unsigned>& tables, std::int64_t long_count,
                  std::int64_t batches) {
    out << "; " << what << " bins (rows per table size):";
    for (std::size_t b = 0; b < rows.size(); ++b) {
      if (b < tables.size())
        out << " " << tables[b] << ":" << rows[b];
      else
        out << " long:" << rows[b];
    }
    if (long_count) out << " (" << batches << " batch(es) of dense accumulators)";
  };
  out << "; rows sorted in registers (rows per width):";
  for (std::size_t w = 0; w < sorted_rows.size() && w < sorted_widths.size(); ++w)
    out << " " << sorted_widths[w] << ":" << sorted_rows[w];
  if (sorted_staged) out << " (summed once, staged)";
  bins("symbolic", symbolic_bins, symbolic_tables, long_rows[0], long_batches[0]);
  bins("numeric", numeric_bins, numeric_tables, long_rows[1], long_batches[1]);
  for (const auto& [name, ms] : phase_ms)
    out << "; " << name << " " << ms << " ms";
  return out.str();
}

template <scalar T>
csr<T, gpu> hash_spgemm(T alpha, const csr<T, gpu>& a, const csr<T, gpu>& b,
                        hash_spgemm_report* report, bool time_phases, std::int64_t dense_row_min) {
  detail::require_shapes(a.cols() == b.rows(), "hash_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  product_run<T> run(alpha, a, b, ctx, report, time_phases, dense_row_min);
  return run.run(true);
}

template <scalar T>
hash_spgemm_report hash_spgemm_profile(const csr<T, gpu>& a, const csr<T, gpu>& b) {
  detail::require_shapes(a.cols() == b.rows(), "hash_spgemm",
                         "A is " + detail::shape_text(a.rows(), a.cols()) + ", B is " +
                             detail::shape_text(b.rows(), b.cols()));
  context& ctx = detail::context_of(a.row_ptr(), a.col_idx(), a.values(), b.row_ptr(), b.col_idx(),
                                    b.values());
  hash_spgemm_report report;
  product_run<T> run(T(1), a, b, ctx, &report, false, -1);
  run.run(false);
  return report;
}

SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(float)
SPADE_KERNELS_HASH_SPGEMM_INSTANTIATIONS(double)

}  // namespace spade::device
