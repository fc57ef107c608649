// std::ostream << for every matrix, vector and expression: a header line, then the values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "spade/core/expression.hpp"
#include "spade/eval/evaluate.hpp"
#include "spade/expr/result.hpp"
#include "spade/formats/convert.hpp"
#include "spade/formats/traits.hpp"
#include "spade/formats/transfer.hpp"

namespace spade {

namespace detail::print {

/// A dimension of more than max_shown rows (or columns) shows its first and last edge_items.
inline constexpr index_t max_shown = 12;
inline constexpr index_t edge_items = 5;
/// A sparse matrix lists at most this many stored entries, then how many it left out.
inline constexpr index_t max_entries_shown = 20;

/// The indices 0 … n-1 shown: all of them, or the first and last edge_items around a -1 (the
/// gap).
inline std::vector<index_t> shown_indices(index_t n) {
  std::vector<index_t> at;
  const bool elided = n > max_shown;
  for (index_t i = 0; i < n; ++i) {
    if (elided && i == edge_items) {
      at.push_back(-1);
      i = n - edge_items;
    }
    at.push_back(i);
  }
  return at;
}

/// `v` as `like` would print it: its precision and floating-point format, no width.
template <class T>
std::string number(const std::ostream& like, T v) {
  std::ostringstream text;
  text.flags(like.flags());
  text.precision(like.precision());
  text << v;
  return text.str();
}

/// "csr<double, gpu> 5x7, nnz 12": format, scalar, space, shape.
template <class M>
std::string header(const M& m) {
  std::ostringstream h;
  h << expr::format_name<M>() << "<" << scalar_name<typename M::value_type>() << ", "
    << M::space_type::name << "> ";
  if constexpr (is_vector_v<M>) {
    h << m.size();
  } else {
    h << m.rows() << "x" << m.cols();
    if constexpr (sparse_matrix<M>) h << ", nnz " << m.nnz();
  }
  return h.str();
}

/// Rows of right-aligned cells, two spaces apart; an empty cell text is the elision mark.
inline void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width;
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.resize(c + 1, 0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c) line += "  ";
      line += std::string(width[c] - row[c].size(), ' ') + row[c];
    }
    out << line << '\n';
  }
}

/// The values of a host dense matrix or vector (the elided parts as "...").
template <class M>
void print_values(std::ostream& out, const M& m) {
  std::vector<std::vector<std::string>> cells;
  if constexpr (is_vector_v<M>) {
    for (const index_t i : shown_indices(m.size()))
      cells.push_back(
          {i < 0 ? std::string("...") : number(out, m.values()[static_cast<std::size_t>(i)])});
  } else {
    const auto columns = shown_indices(m.cols());
    for (const index_t i : shown_indices(m.rows())) {
      std::vector<std::string> row;
      for (const index_t j : columns)
        row.push_back(i < 0 || j < 0 ? std::string("...")
                                     : number(out, m.values()[m.offset(i, j)]));
      cells.push_back(std::move(row));
    }
  }
  print_table(out, cells);
}

/// The stored entries of a host csr, "(i, j)  value" in row order, at most max_entries_shown.
template <class T>
void print_entries(std::ostream& out, const csr<T, cpu>& m) {
  std::vector<std::vector<std::string>> cells;
  index_t listed = 0;
  for (index_t i = 0; i < m.rows() && listed < max_entries_shown; ++i)
    for (index_t k = m.row_ptr()[static_cast<std::size_t>(i)];
         k < m.row_ptr()[static_cast<std::size_t>(i) + 1] && listed < max_entries_shown;
         ++k, ++listed) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "(" + temporary.
      std::string at = "(";
      at += std::to_string(i);
      at += ", ";
      at += std::to_string(m.col_idx()[static_cast<std::size_t>(k)]);
      at += ")";
      cells.push_back({std::move(at), number(out, m.values()[static_cast<std::size_t>(k)])});
    }
  print_table(out, cells);
  if (m.nnz() > listed) out << "... (" << (m.nnz() - listed) << " more stored entries)\n";
}

}  // namespace detail::print

/// Prints `m`: a header line (format, scalar, space, shape, and nnz for sparse formats), then
/// a dense matrix's or vector's values row by row (right-aligned, in the stream's precision and
/// floating-point format) or a sparse matrix's stored entries as "(i, j)  value". More than 12
/// rows or columns show their first and last 5 around "..."; at most 20 stored entries are
/// listed. A gpu object is copied to the host first (synchronises).
template <matrix_or_vector M>
std::ostream& operator<<(std::ostream& out, const M& m) {
  out << detail::print::header(m) << '\n';
  if constexpr (std::is_same_v<typename M::space_type, gpu>) {
    const auto host = to_cpu(m);
    if constexpr (is_vector_v<M> || is_dense_v<M>)
      detail::print::print_values(out, host);
    else if constexpr (is_csr_v<M>)
      detail::print::print_entries(out, host);
    else
      detail::print::print_entries(out, convert<csr>(host));
  } else if constexpr (is_vector_v<M> || is_dense_v<M>) {
    detail::print::print_values(out, m);
  } else if constexpr (is_csr_v<M>) {
    detail::print::print_entries(out, m);
  } else {
    detail::print::print_entries(out, convert<csr>(m));
  }
  return out;
}

/// Prints the value of expression `e`: evaluated (spade::eval) into its natural type, which
/// the header line names.
template <expression E>
requires(!matrix_or_vector<E>) std::ostream& operator<<(std::ostream& out, const E& e) {
  return out << spade::eval(e);
}

}  // namespace spade
