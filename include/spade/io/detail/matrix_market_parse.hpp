// Matrix Market text to csr: chunks parsed in parallel, errors placed on file lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/core/storage.hpp"
#include "spade/formats/csr.hpp"
#include "spade/io/detail/matrix_market_entries.hpp"
#include "spade/io/detail/matrix_market_header.hpp"

namespace spade::detail::mm {

/// Smallest data section worth a thread of its own: below it a thread costs more than it saves.
inline constexpr std::size_t min_chunk_bytes = std::size_t{1} << 20;
/// Smallest data section parsed on several threads when it is cut into several chunks (tests
/// and the fuzzer cut small texts, which are then parsed chunk after chunk).
inline constexpr std::size_t min_parallel_bytes = std::size_t{1} << 16;
/// Most threads one read uses; parsing is memory-bound well before this many cores.
inline constexpr std::size_t max_chunks = 8;

/// One chunk per core (at most max_chunks), none smaller than min_chunk_bytes.
inline std::size_t default_chunk_count(std::size_t data_bytes) {
  const std::size_t cores =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, max_chunks);
  return std::clamp<std::size_t>(data_bytes / min_chunk_bytes, 1, cores);
}

/// parts + 1 offsets into data, each just after a newline (or 0 or data.size()), so no line
/// is split between chunks.
inline std::vector<std::size_t> split_at_newlines(std::string_view data, std::size_t parts) {
  std::vector<std::size_t> bounds{0};
  for (std::size_t k = 1; k < parts; ++k) {
    const std::size_t target = std::max(bounds.back(), data.size() / parts * k);
    const std::size_t newline = target == 0 ? std::string_view::npos : data.find('\n', target - 1);
    bounds.push_back(target == 0                         ? 0
                     : newline == std::string_view::npos ? data.size()
                                                         : newline + 1);
  }
  bounds.push_back(data.size());
  return bounds;
}

/// Runs fn(0) … fn(n - 1), on threads when `parallel` (fn(0) on the calling thread), else in
/// turn; rethrows the first exception (say bad_alloc) after every task has finished.
template <class Fn>
void run_tasks(std::size_t n, bool parallel, Fn fn) {
  std::vector<std::exception_ptr> errors(n);
  auto guarded = [&](std::size_t k) {
    try {
      fn(k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t k = 1; k < n; ++k) {
    if (!parallel) {
      guarded(k);
      continue;
    }
    try {
      threads.emplace_back(guarded, k);
    } catch (const std::system_error&) {
      guarded(k);  // no thread to be had: the work still gets done, only slower
    }
  }
  guarded(0);
  for (auto& thread : threads)
    thread.join();
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

/// Calls emit(row, col, value) for every entry of the expanded matrix, in file order, each
/// mirrored entry right after the entry it mirrors. Array values equal to zero are skipped.
template <class T, class Emit>
void for_each_entry(const header& h, const std::vector<chunk<T>>& chunks, Emit&& emit) {
  const bool mirror = h.symmetry != symmetry_kind::general;
  const bool negate = h.symmetry == symmetry_kind::skew_symmetric;
  auto put = [&](index_t r, index_t c, T v) {
    emit(r, c, v);
    if (mirror && r != c) emit(c, r, negate ? -v : v);
  };
  if (h.format == format_kind::coordinate) {
    for (const auto& part : chunks) {
      const std::size_t n = part.row.size();
      if (part.value.empty()) {
        for (std::size_t k = 0; k < n; ++k)
          put(part.row[k], part.col[k], T(1));
      } else {
        for (std::size_t k = 0; k < n; ++k)
          put(part.row[k], part.col[k], part.value[k]);
      }
    }
    return;
  }
  // Column-major; symmetric arrays hold the lower triangle with its diagonal, skew-symmetric
  // ones without it (the declared count was checked, so positions stay in range).
  const index_t skip = h.symmetry == symmetry_kind::general ? -1 : negate ? 1 : 0;
  index_t i = skip < 0 ? 0 : skip;
  index_t j = 0;
  for (const auto& part : chunks) {
    for (const T v : part.value) {
      if (v != T(0)) put(i, j, v);
      if (++i == h.rows) {
        ++j;
        i = skip < 0 ? 0 : j + skip;
      }
    }
  }
}

/// Sorts one row's entries by column, stably (equal columns keep file order); true when two
/// entries share a column. Rows read from files are short or already sorted, so insertion
/// sort does most of the work.
template <class T>
bool sort_row(index_t* col, T* val, std::size_t n, std::vector<std::pair<index_t, T>>& scratch) {
  bool sorted = true;
  for (std::size_t k = 1; k < n && sorted; ++k)
    sorted = col[k - 1] < col[k];
  if (sorted) return false;
  constexpr std::size_t insertion_limit = 32;
  if (n <= insertion_limit) {
    for (std::size_t k = 1; k < n; ++k) {
      const index_t c = col[k];
      const T v = val[k];
      std::size_t m = k;
      for (; m > 0 && col[m - 1] > c; --m) {
        col[m] = col[m - 1];
        val[m] = val[m - 1];
      }
      col[m] = c;
      val[m] = v;
    }
  } else {
    scratch.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      scratch[k] = {col[k], val[k]};
    std::stable_sort(scratch.begin(), scratch.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < n; ++k)
      std::tie(col[k], val[k]) = scratch[k];
  }
  for (std::size_t k = 1; k < n; ++k)
    if (col[k - 1] == col[k]) return true;
  return false;
}

/// In rows already sorted stably by column, sums each run of equal columns in order (the
/// effect of sort_and_sum_rows on such rows, in one pass) and closes the gaps. O(nnz).
template <class T>
void sum_repeated_columns(std::vector<index_t>& row_ptr, std::vector<index_t>& col_idx,
                          std::vector<T>& values) {
  std::size_t write = 0;
  std::size_t begin = 0;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r) {
    const auto end = static_cast<std::size_t>(row_ptr[r + 1]);
    row_ptr[r] = static_cast<index_t>(write);
    for (std::size_t k = begin; k < end; ++k) {
      if (k > begin && col_idx[k] == col_idx[k - 1]) {
        values[write - 1] += values[k];
      } else {
        col_idx[write] = col_idx[k];
        values[write] = values[k];
        ++write;
      }
    }
    begin = end;
  }
  row_ptr.back() = static_cast<index_t>(write);
  col_idx.resize(write);
  values.resize(write);
}

/// Builds the csr of the parsed chunks with a counting sort by row, which keeps file order
/// within each row; rows out of column order are then sorted stably, and repeated columns are
/// summed in that (file) order, as sort_and_sum_rows would. `threads` workers each
/// own a range of rows and scan every entry. O(threads·nnz + rows) when rows come in column
/// order, plus O(nnz log) otherwise.
template <class T>
csr<T, cpu> assemble(const header& h, const std::vector<chunk<T>>& chunks, const std::string& name,
                     std::size_t threads, std::uint64_t max_entries) {
  const auto rows = static_cast<std::size_t>(h.rows);
  threads = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(rows, 1));
  auto first_row = [&](std::size_t t) { return static_cast<index_t>(rows * t / threads); };

  std::vector<index_t> row_ptr(rows + 1, 0);
  std::vector<std::uint64_t> totals(threads, 0);
  const bool parallel = threads > 1;
  run_tasks(threads, parallel, [&](std::size_t t) {
    const index_t lo = first_row(t);
    const index_t hi = first_row(t + 1);
    std::uint64_t total = 0;
    index_t* counts = row_ptr.data() + 1;
    for_each_entry(h, chunks, [&](index_t r, index_t, T) {
      // Each count stays below 2^31: past max_entries this worker only counts the total.
      if (r >= lo && r < hi && ++total <= max_entries) ++counts[r];
    });
    totals[t] = total;
  });
  std::uint64_t total = 0;
  for (const std::uint64_t t : totals)
    total += t;
  if (total > max_entries)
    throw io_error(name, h.size_line,
                   "the matrix has " + std::to_string(total) +
                       " entries after symmetric expansion, too many for the 32-bit index type "
                       "(at most " +
                       std::to_string(max_entries) + ")");
  for (std::size_t r = 0; r < rows; ++r)
    row_ptr[r + 1] += row_ptr[r];

  std::vector<index_t> col_idx(total);
  std::vector<T> values(total);
  std::vector<char> repeats(threads, 0);
  run_tasks(threads, parallel, [&](std::size_t t) {
    const index_t lo = first_row(t);
    const index_t hi = first_row(t + 1);
    std::vector<index_t> next(row_ptr.begin() + lo, row_ptr.begin() + hi);
    for_each_entry(h, chunks, [&](index_t r, index_t c, T v) {
      if (r < lo || r >= hi) return;
      const auto k = static_cast<std::size_t>(next[static_cast<std::size_t>(r - lo)]++);
      col_idx[k] = c;
      values[k] = v;
    });
    std::vector<std::pair<index_t, T>> scratch;
    bool repeated = false;
    for (index_t r = lo; r < hi; ++r) {
      const auto begin = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r)]);
      const auto end = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(r) + 1]);
      repeated |= sort_row(col_idx.data() + begin, values.data() + begin, end - begin, scratch);
    }
    repeats[t] = repeated;
  });
  if (std::find(repeats.begin(), repeats.end(), 1) != repeats.end())
    sum_repeated_columns(row_ptr, col_idx, values);
  return csr<T, cpu>(unchecked, h.rows, h.cols, std::move(row_ptr), std::move(col_idx),
                     std::move(values));
}

/// Throws the io_error of the earliest problem among parsed chunks (`part(k)` is chunk k's text
/// in `data`), naming its 1-based line: a chunk's own error, an entry past the declared count,
/// or a text that ends before the declared count.
template <class T, class Part>
void throw_first_error(const header& h, const std::vector<chunk<T>>& chunks, std::string_view data,
                       Part&& part, const std::string& name) {
  std::size_t line = h.size_line + 1;  // first line of chunk k
  std::uint64_t before = 0;            // entries in the chunks before k
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const chunk<T>& c = chunks[k];
    if (before + c.entries > h.entries || (c.failed && before + c.entries == h.entries)) {
      // The first undeclared entry lies in this chunk, at or ahead of any error it reported
      // (every error is on an entry line, which read alone would already be one too many):
      // re-read the chunk with the exact allowance to find its line.
      chunk<T> again;
      parse_chunk(h, part(k), 0, h.entries - before, again);
      throw io_error(name, line + again.error_newlines, again.error);
    }
    if (c.failed) throw io_error(name, line + c.error_newlines, c.error);
    before += c.entries;
    line += c.newlines;
  }
  if (before < h.entries) {
    const bool partial_last_line = !data.empty() && data.back() != '\n';
    throw io_error(name, line + (partial_last_line ? 1 : 0),
                   "file ends after " + std::to_string(before) + " of the " +
                       std::to_string(h.entries) + " entries declared by the size line (line " +
                       std::to_string(h.size_line) + "): truncated?");
  }
}

/// Parses a whole Matrix Market text split into `chunk_count` newline-aligned chunks, parsed
/// in parallel. Every error is an io_error naming the 1-based line of the earliest problem,
/// whatever the chunk count. The header is stored in `*out_header` when given. `max_entries`
/// (the index type's limit; tests lower it) bounds the entries after symmetric expansion.
template <class T>
csr<T, cpu> parse_text(std::string_view text, const std::string& name, std::size_t chunk_count,
                       header* out_header = nullptr,
                       std::uint64_t max_entries = std::numeric_limits<index_t>::max()) {
  const header h = parse_header(text, name);
  if (out_header) *out_header = h;
  const std::string_view data = text.substr(h.data_offset);
  const auto bounds = split_at_newlines(data, std::max<std::size_t>(chunk_count, 1));
  const std::size_t n = bounds.size() - 1;
  auto part = [&](std::size_t k) { return data.substr(bounds[k], bounds[k + 1] - bounds[k]); };

  std::vector<chunk<T>> chunks(n);
  const bool parallel = data.size() >= min_parallel_bytes;
  run_tasks(n, parallel,
            [&](std::size_t k) { parse_chunk(h, part(k), data.size(), h.entries, chunks[k]); });

  throw_first_error(h, chunks, data, part, name);
  return assemble(h, chunks, name, parallel ? n : 1, max_entries);
}

}  // namespace spade::detail::mm
