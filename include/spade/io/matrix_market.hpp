// Reading and writing Matrix Market files (.mtx, and gzip-compressed .mtx.gz) on the host.
#pragma once

#include <charconv>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"
#include "spade/core/space.hpp"
#include "spade/cpu/convert.hpp"
#include "spade/formats/coo.hpp"
#include "spade/formats/csr.hpp"
#include "spade/formats/dense.hpp"
#include "spade/formats/ellr.hpp"
#include "spade/formats/gcoo.hpp"
#include "spade/formats/tiled.hpp"
#include "spade/io/detail/matrix_market_file.hpp"
#include "spade/io/detail/matrix_market_header.hpp"
#include "spade/io/detail/matrix_market_parse.hpp"

namespace spade {

/// What a Matrix Market file declares in its banner and size line.
struct matrix_market_info {
  std::string format;    ///< "coordinate" or "array"
  std::string field;     ///< "real", "integer" or "pattern"
  std::string symmetry;  ///< "general", "symmetric" or "skew-symmetric"
  index_t rows = 0;
  index_t cols = 0;
  /// Entries stored in the file, before symmetric expansion: the size line's count for the
  /// coordinate format, rows·cols (or the triangle's size) for the array format.
  std::size_t stored_entries = 0;
};

namespace detail::mm {

inline matrix_market_info info_of(const header& h) {
  return {h.format_name, h.field_name, h.symmetry_name,
          h.rows,        h.cols,       static_cast<std::size_t>(h.entries)};
}

// Room for "-2147483648 -2147483648 " and the longest shortest-form double, with margin.
inline constexpr std::size_t max_entry_chars = 96;

template <class T>
char* put_entry(char* out, index_t i, index_t j, T v) {
  out = std::to_chars(out, out + 12, i + 1).ptr;
  *out++ = ' ';
  out = std::to_chars(out, out + 12, j + 1).ptr;
  *out++ = ' ';
  out = std::to_chars(out, out + 32, v).ptr;
  *out++ = '\n';
  return out;
}

inline void put_header(output_file& file, std::string_view format, index_t rows, index_t cols,
                       const std::string* entries) {
  std::string text = "%%MatrixMarket matrix " + std::string(format) + " real general\n";
  text += std::to_string(rows) + " " + std::to_string(cols);
  if (entries) text += " " + *entries;
  text += "\n";
  file.write(text);
}

}  // namespace detail::mm

/// Parses Matrix Market text held in memory; `name` labels error messages.
///
/// Reads the coordinate format (real, integer or pattern values; a pattern entry is 1) and
/// the array format (dense, column-major; only its nonzero values become entries), with
/// general, symmetric or skew-symmetric symmetry. Symmetric matrices are expanded: each
/// off-diagonal entry (i, j) also gives (j, i), negated for skew-symmetric ones (whose
/// diagonal must be empty). Repeated entries are summed in file order. Comment ('%') and
/// blank lines may appear anywhere after the banner. Real values are rounded to T as
/// std::from_chars does, so write_matrix_market's output reads back bit-exact; values beyond
/// T's range become ±inf or ±0.
///
/// Throws io_error(name, line, message) naming the 1-based line of the first problem (line
/// 0 = the whole input): bad banner, unsupported or unknown qualifiers (complex, hermitian),
/// bad size line, sizes beyond the 32-bit index type (also after expansion), indices out of
/// range, non-numeric values, missing values, trailing text, too many or too few entries.
///
/// Complexity O(text + rows + nnz) (O(nnz log) when rows list columns out of order), using up
/// to max_chunks threads for large texts; extra memory about 2·(nnz·(8 + sizeof(T))) bytes.
/// The result does not depend on the number of threads.
template <scalar T>
csr<T, cpu> parse_matrix_market(std::string_view text, const std::string& name = "<memory>",
                                matrix_market_info* info = nullptr) {
  detail::mm::header h;
  const std::size_t chunks = detail::mm::default_chunk_count(text.size());
  csr<T, cpu> result = detail::mm::parse_text<T>(text, name, chunks, &h);
  if (info) *info = detail::mm::info_of(h);
  return result;
}

/// Reads a Matrix Market file, gzip-compressed or not (told by its first bytes, not its
/// name), as parse_matrix_market does; errors name the file. The whole (decompressed) file
/// is held in memory while it is parsed.
template <scalar T>
csr<T, cpu> read_matrix_market(const std::filesystem::path& path,
                               matrix_market_info* info = nullptr) {
  const std::string text = detail::mm::read_file_text(path);
  return parse_matrix_market<T>(text, path.string(), info);
}

/// Writes `a` as '%%MatrixMarket matrix coordinate real general' with 1-based indices, one
/// entry a line in row order, values in the shortest form that reads back bit-exact. A path
/// ending in ".gz" is written gzip-compressed. Throws io_error(path, 0, ...) when the file
/// cannot be created or written. O(nnz).
template <scalar T>
void write_matrix_market(const std::filesystem::path& path, const csr<T, cpu>& a) {
  detail::mm::output_file file(path);
  const std::string nnz = std::to_string(a.nnz());
  detail::mm::put_header(file, "coordinate", a.rows(), a.cols(), &nnz);
  const auto& row_ptr = a.row_ptr();
  const auto& col_idx = a.col_idx();
  const auto& values = a.values();
  for (index_t i = 0; i < a.rows() && !row_ptr.empty(); ++i)
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
      char* out = file.reserve(detail::mm::max_entry_chars);
      file.commit(detail::mm::put_entry(out, i, col_idx[k], values[k]));
    }
  file.close();
}

/// Writes the entries of `a` as stored (repeats included: reading sums them), in the format
/// of the csr overload.
template <scalar T>
void write_matrix_market(const std::filesystem::path& path, const coo<T, cpu>& a) {
  detail::mm::output_file file(path);
  const std::string nnz = std::to_string(a.nnz());
  detail::mm::put_header(file, "coordinate", a.rows(), a.cols(), &nnz);
  for (std::size_t k = 0; k < a.row_idx().size(); ++k) {
    char* out = file.reserve(detail::mm::max_entry_chars);
    file.commit(detail::mm::put_entry(out, a.row_idx()[k], a.col_idx()[k], a.values()[k]));
  }
  file.close();
}

/// Writes the entries of `a` in stored order (group by group, each in column order), in the
/// format of the csr overload; reading it back gives the same matrix as csr. O(nnz).
template <scalar T>
void write_matrix_market(const std::filesystem::path& path, const gcoo<T, cpu>& a) {
  detail::mm::output_file file(path);
  const std::string nnz = std::to_string(a.nnz());
  detail::mm::put_header(file, "coordinate", a.rows(), a.cols(), &nnz);
  for (std::size_t k = 0; k < a.row_idx().size(); ++k) {
    char* out = file.reserve(detail::mm::max_entry_chars);
    file.commit(detail::mm::put_entry(out, a.row_idx()[k], a.col_idx()[k], a.values()[k]));
  }
  file.close();
}

/// Writes the entries of `a` row by row, through a host csr (padding is not written); reading
/// it back gives the same matrix as csr. O(rows + nnz).
template <scalar T>
void write_matrix_market(const std::filesystem::path& path, const ellr<T, cpu>& a) {
  write_matrix_market(path, host::ellr_to_csr(a));
}

/// Writes the entries of `a` row by row, through a host csr; reading it back gives the same
/// matrix as csr (explicit zeros included). O(rows + tiles + nnz).
template <scalar T>
void write_matrix_market(const std::filesystem::path& path, const tiled<T, cpu>& a) {
  write_matrix_market(path, host::tiled_to_csr(a));
}

/// Writes `a` as '%%MatrixMarket matrix array real general': every value, column by column
/// (zeros included), in the shortest form that reads back bit-exact. ".gz" compresses.
/// Reading it back gives the csr of its nonzeros. Throws io_error(path, 0, ...). O(rows·cols).
template <scalar T, layout Layout>
void write_matrix_market(const std::filesystem::path& path, const dense<T, cpu, Layout>& a) {
  detail::mm::output_file file(path);
  detail::mm::put_header(file, "array", a.rows(), a.cols(), nullptr);
  for (index_t j = 0; j < a.cols(); ++j)
    for (index_t i = 0; i < a.rows(); ++i) {
      char* out = file.reserve(detail::mm::max_entry_chars);
      out = std::to_chars(out, out + 32, a(i, j)).ptr;
      *out++ = '\n';
      file.commit(out);
    }
  file.close();
}

/// The float and double instantiations of this header, compiled once into the library
/// (lib/host/instantiations.cpp): user translation units do not re-instantiate the parser and
/// writer, which would cost seconds of compile time each. SPADE_HEADER_ONLY turns this off.
#define SPADE_MATRIX_MARKET_INSTANCES(PREFIX, T)                                                  \
  PREFIX template csr<T, cpu> parse_matrix_market<T>(std::string_view, const std::string&,        \
                                                     matrix_market_info*);                        \
  PREFIX template csr<T, cpu> read_matrix_market<T>(const std::filesystem::path&,                 \
                                                    matrix_market_info*);                         \
  PREFIX template void write_matrix_market<T>(const std::filesystem::path&, const csr<T, cpu>&);  \
  PREFIX template void write_matrix_market<T>(const std::filesystem::path&, const coo<T, cpu>&);  \
  PREFIX template void write_matrix_market<T>(const std::filesystem::path&, const gcoo<T, cpu>&); \
  PREFIX template void write_matrix_market<T, row_major>(const std::filesystem::path&,            \
                                                         const dense<T, cpu, row_major>&);        \
  PREFIX template void write_matrix_market<T, col_major>(const std::filesystem::path&,            \
                                                         const dense<T, cpu, col_major>&);
#ifndef SPADE_HEADER_ONLY
SPADE_MATRIX_MARKET_INSTANCES(extern, float)
SPADE_MATRIX_MARKET_INSTANCES(extern, double)
#endif

}  // namespace spade
