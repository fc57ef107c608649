// Row partitions of a sparse matrix over several parts, and what each part reads of the others.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/formats/csr.hpp"

// The host side of the several-GPU plan (issue [R2 6/6], docs/multi-gpu.md): a matrix's rows
// are cut into contiguous blocks, one per part, balanced by the work of the product; for
// y = A·x with x cut the same way over A's columns, each part's rows split into the entries
// whose column it owns (read from its own block of x) and the others (read from a halo of x
// that the owners send). Pure host code on cpu matrices, so CI tests it without a GPU.
namespace spade::detail {

/// Contiguous row blocks: part p owns rows [first[p], first[p + 1]). Parts may be empty; a
/// default-constructed partition has no parts and no rows.
struct row_partition {
  std::vector<index_t> first{0};  // parts() + 1 entries: 0, non-decreasing, the row count last

  index_t parts() const noexcept { return static_cast<index_t>(first.size()) - 1; }
  index_t rows() const noexcept { return first.empty() ? 0 : first.back(); }
  index_t begin(index_t p) const { return first[static_cast<std::size_t>(p)]; }
  index_t end(index_t p) const { return first[static_cast<std::size_t>(p) + 1]; }
  index_t size(index_t p) const { return end(p) - begin(p); }
  /// The part that owns `row` (0 <= row < rows()).
  index_t owner(index_t row) const {
    const auto after = std::upper_bound(first.begin() + 1, first.end(), row);
    return static_cast<index_t>(after - (first.begin() + 1));
  }
  bool operator==(const row_partition&) const = default;
};

/// `parts` contiguous blocks of rows with work as even as whole rows allow. `work_prefix` has
/// rows + 1 entries, from 0, non-decreasing: row r costs work_prefix[r + 1] - work_prefix[r].
/// Boundary k is the row whose prefix lies nearest k/parts of the total (never before boundary
/// k - 1), so each part's work is within one row's work of total/parts; without any work the
/// rows are split evenly. Throws spade::error unless parts >= 1.
inline row_partition balanced_rows(const std::vector<std::int64_t>& work_prefix, index_t parts) {
  if (parts < 1)
    throw error("spade: a partition needs at least one part, not " + std::to_string(parts));
  if (work_prefix.empty() || work_prefix.front() != 0 ||
      !std::is_sorted(work_prefix.begin(), work_prefix.end()))
    throw error(
        "spade: a row-work prefix starts with 0, never decreases and has one entry more than "
        "rows");
  const auto rows = static_cast<index_t>(work_prefix.size() - 1);
  const std::int64_t total = work_prefix.back();
  row_partition result;
  result.first.assign(static_cast<std::size_t>(parts) + 1, 0);
  result.first.back() = rows;
  for (index_t k = 1; k < parts; ++k) {
    index_t boundary;
    if (total <= 0) {
      boundary = static_cast<index_t>(static_cast<std::int64_t>(rows) * k / parts);
    } else {
      // floor(total · k / parts) without overflowing the product.
      const std::int64_t target = total / parts * k + total % parts * k / parts;
      const auto at = std::lower_bound(work_prefix.begin(), work_prefix.end(), target);
      boundary = static_cast<index_t>(at - work_prefix.begin());
      if (boundary > 0 && target - work_prefix[static_cast<std::size_t>(boundary) - 1] <
                              work_prefix[static_cast<std::size_t>(boundary)] - target)
        --boundary;
    }
    result.first[static_cast<std::size_t>(k)] =
        std::clamp(boundary, result.first[static_cast<std::size_t>(k) - 1], rows);
  }
  return result;
}

/// The prefix of a work that costs each row of `a` its entries plus `per_row`.
template <class T>
std::vector<std::int64_t> entry_work_prefix(const csr<T, cpu>& a, std::int64_t per_row) {
  const auto& row_ptr = a.row_ptr();
  std::vector<std::int64_t> prefix(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (index_t r = 0; r < a.rows(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    prefix[i + 1] = prefix[i] + (row_ptr[i + 1] - row_ptr[i]) + per_row;
  }
  return prefix;
}

/// The rows of `a` in `parts` blocks balanced by their entries, each row counted one more for
/// its output (SpMV / SpMM: a part's time is its entries read plus its rows written).
template <class T>
row_partition partition_by_entries(const csr<T, cpu>& a, index_t parts) {
  return balanced_rows(entry_work_prefix(a, 1), parts);
}

/// What one row costs an SpMV or SpMM pass besides its entries (its row pointers, its output
/// row, the warp or block that visits it), in entries. Fitted on the H200 from the parts of an
/// R-MAT scale-22 SpMV on two GPUs (2026-11-28, docs/benchmarks/multi-rmat-2026-11-28.md): a
/// part's local product cost 7.8 ps per entry and 21 ps per row, its remote product about the
/// same per entry and 19 ps per row, so a row weighs about 2.5 entries per pass.
inline constexpr std::int64_t row_pass_cost = 3;

/// The rows of `a` in `parts` blocks balanced by the modelled time of y = A·x with x split like
/// the rows (distribute's default): each row costs its entries plus row_pass_cost, plus
/// row_pass_cost again when it reads an entry of x another part owns, since such a row is
/// visited twice (by the local product and by the remote one, docs/multi-gpu.md). Which rows
/// read other parts depends on the cut, so the cut is made without that term first and then
/// remade from the rows the last cut sends to the remote product, at most `refinements` times
/// (R-MAT settles after two). For a non-square `a` (x cannot be split like its rows) only the
/// first cut is made. O(entries) per refinement, on the host.
template <class T>
row_partition partition_for_products(const csr<T, cpu>& a, index_t parts, int refinements = 3) {
  std::vector<std::int64_t> prefix = entry_work_prefix(a, row_pass_cost);
  row_partition cut = balanced_rows(prefix, parts);
  if (a.rows() != a.cols() || parts < 2) return cut;
  const auto& row_ptr = a.row_ptr();
  const auto& col_idx = a.col_idx();
  for (int round = 0; round < refinements; ++round) {
    for (index_t p = 0; p < parts; ++p) {
      const index_t first = cut.begin(p), end = cut.end(p);
      for (index_t r = first; r < end; ++r) {
        const auto i = static_cast<std::size_t>(r);
        bool reads_other = false;
        for (index_t k = row_ptr[i]; k < row_ptr[i + 1] && !reads_other; ++k) {
          const index_t c = col_idx[static_cast<std::size_t>(k)];
          reads_other = c < first || c >= end;
        }
        prefix[i + 1] = prefix[i] + (row_ptr[i + 1] - row_ptr[i]) + row_pass_cost +
                        (reads_other ? row_pass_cost : 0);
      }
    }
    row_partition next = balanced_rows(prefix, parts);
    if (next == cut) break;
    cut = std::move(next);
  }
  return cut;
}

/// The rows of `a` in `parts` blocks balanced by the products of A·B they make (SpGEMM: row r
/// of A·B costs the entries of the rows of B that row r of A names), each row counted one more.
/// Throws dimension_mismatch unless a.cols() == b.rows().
template <class T>
row_partition partition_by_products(const csr<T, cpu>& a, const csr<T, cpu>& b, index_t parts) {
  if (a.cols() != b.rows())
    throw dimension_mismatch("partition_by_products: A is " + std::to_string(a.rows()) + "x" +
                             std::to_string(a.cols()) + ", B is " + std::to_string(b.rows()) + "x" +
                             std::to_string(b.cols()) + " (A's columns must equal B's rows)");
  const auto& a_ptr = a.row_ptr();
  const auto& a_col = a.col_idx();
  const auto& b_ptr = b.row_ptr();
  std::vector<std::int64_t> prefix(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (index_t r = 0; r < a.rows(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    std::int64_t products = 1;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const auto c = static_cast<std::size_t>(a_col[static_cast<std::size_t>(k)]);
      products += b_ptr[c + 1] - b_ptr[c];
    }
    prefix[i + 1] = prefix[i] + products;
  }
  return balanced_rows(prefix, parts);
}

/// Part p's rows of A, split for y_p = A_p · x with x cut by `cols` (a partition of A's
/// columns): `local` holds the entries whose column p owns, columns rebased to p's block of x;
/// `remote` holds the others, columns renumbered to positions in `halo`, the sorted distinct
/// columns p reads from other parts. So y_p = local · x_p + remote · x[halo], and the entries
/// halo[halo_first[q]] .. halo[halo_first[q + 1] - 1] are what part q sends to p (none for
/// q = p). Both blocks keep A's column order within a row.
template <class T>
struct part_block {
  csr<T, cpu> local;                // size(p) × cols.size(p)
  csr<T, cpu> remote;               // size(p) × halo.size()
  std::vector<index_t> halo;        // global column indices, sorted, none owned by p
  std::vector<index_t> halo_first;  // cols.parts() + 1 entries into halo, by owning part
};

/// Throws dimension_mismatch unless `rows` and `cols` partition A's rows and columns into the
/// same number of parts.
template <class T>
void check_partitions(const csr<T, cpu>& a, const row_partition& rows, const row_partition& cols) {
  if (rows.rows() != a.rows() || cols.rows() != a.cols() || rows.parts() != cols.parts())
    throw dimension_mismatch("spade: partitions of " + std::to_string(rows.rows()) + " rows in " +
                             std::to_string(rows.parts()) + " parts and " +
                             std::to_string(cols.rows()) + " columns in " +
                             std::to_string(cols.parts()) + " parts do not fit a " +
                             std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                             " matrix (the part counts must be equal)");
}

/// A's rows of part p split into its local and remote blocks and its halo (part_block).
template <class T>
part_block<T> split_part(const csr<T, cpu>& a, const row_partition& rows, const row_partition& cols,
                         index_t p) {
  check_partitions(a, rows, cols);
  if (p < 0 || p >= rows.parts())
    throw dimension_mismatch("spade: part " + std::to_string(p) + " of " +
                             std::to_string(rows.parts()));
  const auto& row_ptr = a.row_ptr();
  const auto& col_idx = a.col_idx();
  const auto& values = a.values();
  const index_t own_first = cols.begin(p);
  const index_t own_end = cols.end(p);
  const auto first_entry =
      static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(rows.begin(p))]);
  const auto end_entry = static_cast<std::size_t>(row_ptr[static_cast<std::size_t>(rows.end(p))]);

  // The halo: every column outside p's block, once, in increasing order.
  std::vector<index_t> halo;
  for (std::size_t k = first_entry; k < end_entry; ++k)
    if (col_idx[k] < own_first || col_idx[k] >= own_end) halo.push_back(col_idx[k]);
  std::sort(halo.begin(), halo.end());
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());

  std::vector<index_t> local_ptr{0}, local_col, remote_ptr{0}, remote_col;
  std::vector<T> local_val, remote_val;
  for (index_t r = rows.begin(p); r < rows.end(p); ++r) {
    const auto i = static_cast<std::size_t>(r);
    for (auto k = static_cast<std::size_t>(row_ptr[i]);
         k < static_cast<std::size_t>(row_ptr[i + 1]); ++k) {
      const index_t c = col_idx[k];
      if (c >= own_first && c < own_end) {
        local_col.push_back(c - own_first);
        local_val.push_back(values[k]);
      } else {
        // Sorted columns stay sorted under their rank in the sorted halo.
        remote_col.push_back(
            static_cast<index_t>(std::lower_bound(halo.begin(), halo.end(), c) - halo.begin()));
        remote_val.push_back(values[k]);
      }
    }
    local_ptr.push_back(static_cast<index_t>(local_col.size()));
    remote_ptr.push_back(static_cast<index_t>(remote_col.size()));
  }

  std::vector<index_t> halo_first(static_cast<std::size_t>(cols.parts()) + 1, 0);
  for (index_t q = 0; q < cols.parts(); ++q)
    halo_first[static_cast<std::size_t>(q) + 1] = static_cast<index_t>(
        std::lower_bound(halo.begin(), halo.end(), cols.end(q)) - halo.begin());

  const index_t part_rows = rows.size(p);
  const auto halo_size = static_cast<index_t>(halo.size());
  return {csr<T, cpu>(unchecked, part_rows, cols.size(p), std::move(local_ptr),
                      std::move(local_col), std::move(local_val)),
          csr<T, cpu>(unchecked, part_rows, halo_size, std::move(remote_ptr), std::move(remote_col),
                      std::move(remote_val)),
          std::move(halo), std::move(halo_first)};
}

/// The halo exchange of a distributed product: sends[q][p] lists the positions in part q's own
/// block of x (0 = its first row) that part p reads, in the order of p's halo, so that
/// concatenating what every q sends to p in part order gives x[halo] of p. Empty for q = p.
struct halo_exchange {
  std::vector<std::vector<std::vector<index_t>>> sends;  // [from part][to part]
};

/// The exchange of `blocks` (split_part of every part, in part order) over x cut by `cols`.
/// Throws dimension_mismatch unless there is one block per part of `cols`.
template <class T>
halo_exchange exchange_of(const std::vector<part_block<T>>& blocks, const row_partition& cols) {
  if (static_cast<index_t>(blocks.size()) != cols.parts())
    throw dimension_mismatch("spade: " + std::to_string(blocks.size()) + " part blocks for " +
                             std::to_string(cols.parts()) + " parts");
  const auto parts = static_cast<std::size_t>(cols.parts());
  for (std::size_t p = 0; p < parts; ++p)
    if (blocks[p].halo_first.size() != parts + 1 ||
        blocks[p].halo_first.back() != static_cast<index_t>(blocks[p].halo.size()))
      throw dimension_mismatch("spade: part block " + std::to_string(p) +
                               " was not split over these " + std::to_string(parts) + " parts");
  halo_exchange result;
  result.sends.assign(parts, std::vector<std::vector<index_t>>(parts));
  for (std::size_t p = 0; p < parts; ++p) {
    const part_block<T>& block = blocks[p];
    for (std::size_t q = 0; q < parts; ++q) {
      const auto from = static_cast<std::size_t>(block.halo_first[q]);
      const auto to = static_cast<std::size_t>(block.halo_first[q + 1]);
      auto& list = result.sends[q][p];
      list.reserve(to - from);
      for (std::size_t h = from; h < to; ++h)
        list.push_back(block.halo[h] - cols.begin(static_cast<index_t>(q)));
    }
  }
  return result;
}

/// The rows `rows` of `block`, in that order, as a csr (a sender's part of a row exchange: the
/// rows of its block of B that another part's halo lists, for a distributed SpGEMM).
/// Throws dimension_mismatch on a row outside the block.
template <class T>
csr<T, cpu> gather_rows(const csr<T, cpu>& block, const std::vector<index_t>& rows) {
  const auto& row_ptr = block.row_ptr();
  std::vector<index_t> ptr{0}, col;
  std::vector<T> val;
  for (const index_t r : rows) {
    if (r < 0 || r >= block.rows())
      throw dimension_mismatch("spade: row " + std::to_string(r) + " of a block of " +
                               std::to_string(block.rows()) + " rows");
    const auto i = static_cast<std::size_t>(r);
    const auto from = static_cast<std::size_t>(row_ptr[i]);
    const auto to = static_cast<std::size_t>(row_ptr[i + 1]);
    col.insert(col.end(), block.col_idx().begin() + static_cast<std::ptrdiff_t>(from),
               block.col_idx().begin() + static_cast<std::ptrdiff_t>(to));
    val.insert(val.end(), block.values().begin() + static_cast<std::ptrdiff_t>(from),
               block.values().begin() + static_cast<std::ptrdiff_t>(to));
    ptr.push_back(static_cast<index_t>(col.size()));
  }
  return csr<T, cpu>(unchecked, static_cast<index_t>(rows.size()), block.cols(), std::move(ptr),
                     std::move(col), std::move(val));
}

/// `pieces` stacked in order (a receiver's halo rows, from each sender in part order). Throws
/// dimension_mismatch unless every piece has `cols` columns.
template <class T>
csr<T, cpu> stack_rows(const std::vector<csr<T, cpu>>& pieces, index_t cols) {
  std::vector<index_t> ptr{0}, col;
  std::vector<T> val;
  for (const csr<T, cpu>& piece : pieces) {
    if (piece.cols() != cols)
      throw dimension_mismatch("spade: stacking a piece of " + std::to_string(piece.cols()) +
                               " columns onto " + std::to_string(cols));
    const index_t base = static_cast<index_t>(col.size());
    for (std::size_t i = 1; i < piece.row_ptr().size(); ++i)
      ptr.push_back(base + piece.row_ptr()[i]);
    col.insert(col.end(), piece.col_idx().begin(), piece.col_idx().end());
    val.insert(val.end(), piece.values().begin(), piece.values().end());
  }
  const auto rows = static_cast<index_t>(ptr.size() - 1);
  return csr<T, cpu>(unchecked, rows, cols, std::move(ptr), std::move(col), std::move(val));
}

/// How a distributed transpose splits Aᵀ's rows (A's columns) over the parts of A's row
/// partition `rows`: like A's rows when A is square, so Aᵀ combines part by part with A and with
/// vectors split like A (A + Aᵀ, Aᵀ·x), else `cols` rows in equal blocks.
inline row_partition transpose_partition(const row_partition& rows, index_t cols) {
  if (rows.rows() == cols) return rows;
  return balanced_rows(std::vector<std::int64_t>(static_cast<std::size_t>(cols) + 1, 0),
                       rows.parts());
}

/// The order in which one part of a distributed transpose merges what it received: `parts`
/// slices of `rows` rows each, stacked slice after slice in part order (slice p: part p's
/// entries in these rows). Row i of the merged block is stack rows i, rows + i, 2·rows + i, …:
/// the result lists them so, and gathering the stack's rows in this order leaves row i's
/// entries together, from part 0's columns to the last part's (sorted: part p's columns are A's
/// rows of part p). The merged row i starts at the gathered pointer i · parts. The GPUs make
/// the same order in place (fill_interleaved_rows); this is its host statement, which the
/// simulated transpose of tests/cpu/test_partition.cpp runs.
inline std::vector<index_t> interleaved_rows(index_t parts, index_t rows) {
  std::vector<index_t> order;
  order.reserve(static_cast<std::size_t>(parts) * static_cast<std::size_t>(rows));
  for (index_t i = 0; i < rows; ++i)
    for (index_t p = 0; p < parts; ++p)
      order.push_back(p * rows + i);
  return order;
}

}  // namespace spade::detail
