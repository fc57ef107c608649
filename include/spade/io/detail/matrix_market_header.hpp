// Matrix Market banner and size line: which matrix a file declares, and where its data starts.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "spade/core/error.hpp"
#include "spade/core/scalar.hpp"

namespace spade::detail::mm {

enum class format_kind { coordinate, array };
enum class field_kind { real, integer, pattern };
enum class symmetry_kind { general, symmetric, skew_symmetric };

/// Character classes of the data section: '\n' ends a line, the other C whitespace separates
/// tokens ('\r' included, so CRLF files read like LF files), everything else is token text.
enum char_class : unsigned char { token_char = 0, blank_char = 1, newline_char = 2 };

inline constexpr std::array<unsigned char, 256> char_classes = [] {
  std::array<unsigned char, 256> classes{};
  for (const char c : {' ', '\t', '\r', '\v', '\f'})
    classes[static_cast<unsigned char>(c)] = blank_char;
  classes['\n'] = newline_char;
  return classes;
}();

inline unsigned char class_of(char c) noexcept {
  return char_classes[static_cast<unsigned char>(c)];
}

inline const char* skip_blanks(const char* p, const char* end) noexcept {
  while (p != end && class_of(*p) == blank_char)
    ++p;
  return p;
}

inline const char* token_end(const char* p, const char* end) noexcept {
  while (p != end && class_of(*p) == token_char)
    ++p;
  return p;
}

/// A token for an error message: quoted, shortened, non-printable bytes escaped, so that a
/// binary file gives a readable message.
inline std::string quote(std::string_view token) {
  constexpr std::size_t max_shown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < max_shown; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (token.size() > max_shown) out += "...";
  return out + "'";
}

inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// What the banner and size line declare.
struct header {
  format_kind format = format_kind::coordinate;
  field_kind field = field_kind::real;
  symmetry_kind symmetry = symmetry_kind::general;
  std::string format_name, field_name, symmetry_name;
  index_t rows = 0;
  index_t cols = 0;
  /// Entries the file stores: the size line's third number, or what an array's shape implies.
  std::uint64_t entries = 0;
  std::size_t size_line = 0;    ///< 1-based line of the size line
  std::size_t data_offset = 0;  ///< byte offset of the line after the size line
};

/// Walks lines, counting them 1-based, without copying.
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t newline = text_.find('\n', pos_);
    const std::size_t stop = newline == std::string_view::npos ? text_.size() : newline;
    line = text_.substr(pos_, stop - pos_);
    pos_ = newline == std::string_view::npos ? text_.size() : newline + 1;
    ++line_;
    return true;
  }
  std::size_t line() const noexcept { return line_; }
  std::size_t offset() const noexcept { return pos_; }
  /// Once next() has returned false: the 1-based line just past the last one.
  std::size_t line_after_end() const noexcept { return line_ + 1; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;
};

inline std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  const char* p = line.data();
  const char* const end = p + line.size();
  for (;;) {
    p = skip_blanks(p, end);
    if (p == end) break;
    const char* start = p;
    while (p != end && class_of(*p) != blank_char)
      ++p;
    tokens.emplace_back(start, static_cast<std::size_t>(p - start));
  }
  return tokens;
}

/// Blank lines and comment lines (first non-blank character '%') carry no data.
inline bool is_skipped_line(std::string_view line) {
  const char* end = line.data() + line.size();
  const char* p = skip_blanks(line.data(), end);
  return p == end || *p == '%';
}

inline index_t parse_extent(std::string_view token, const char* what, const std::string& name,
                            std::size_t line, std::int64_t& full) {
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, full);
  const bool negative = !token.empty() && token[0] == '-';
  if (ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw io_error(
        name, line,
        std::string("malformed size line: ") + what + " " + quote(token) + " is not an integer");
  if (negative)
    throw io_error(name, line, std::string("negative ") + what + " " + std::string(token));
  if (ec == std::errc::result_out_of_range || full > std::numeric_limits<index_t>::max())
    throw io_error(name, line,
                   std::string(what) + " " + std::string(token) +
                       " exceeds the 32-bit index type (at most 2147483647)");
  return static_cast<index_t>(full);
}

/// Parses the banner, skips comment and blank lines, parses the size line. Throws io_error
/// naming the offending line for anything the Matrix Market format does not allow or Spade
/// does not support (complex and hermitian matrices, vectors).
inline header parse_header(std::string_view text, const std::string& name) {
  line_reader reader(text);
  std::string_view line;
  const bool has_first = reader.next(line);
  const auto banner = split_tokens(has_first ? line : std::string_view());
  if (!has_first || banner.empty() || lower(banner[0]) != "%%matrixmarket")
    throw io_error(name, 1,
                   "missing %%MatrixMarket banner: the first line must start with "
                   "'%%MatrixMarket matrix'");
  static constexpr const char* parts[] = {"object", "format", "field", "symmetry"};
  if (banner.size() < 5)
    throw io_error(name, 1,
                   std::string("banner is missing the ") + parts[banner.size() - 1] +
                       " (expected '%%MatrixMarket matrix <format> <field> <symmetry>')");
  if (banner.size() > 5)
    throw io_error(name, 1, "unexpected text " + quote(banner[5]) + " after the banner's symmetry");

  header h;
  const std::string object = lower(banner[1]);
  if (object != "matrix")
    throw io_error(name, 1, "unsupported object " + quote(banner[1]) + ": only 'matrix' is read");
  h.format_name = lower(banner[2]);
  if (h.format_name == "coordinate")
    h.format = format_kind::coordinate;
  else if (h.format_name == "array")
    h.format = format_kind::array;
  else
    throw io_error(name, 1,
                   "unknown format " + quote(banner[2]) + " (expected 'coordinate' or 'array')");
  h.field_name = lower(banner[3]);
  if (h.field_name == "real")
    h.field = field_kind::real;
  else if (h.field_name == "integer")
    h.field = field_kind::integer;
  else if (h.field_name == "pattern")
    h.field = field_kind::pattern;
  else if (h.field_name == "complex")
    throw io_error(name, 1, "unsupported field 'complex': Spade reads real, integer and pattern");
  else
    throw io_error(name, 1,
                   "unknown field " + quote(banner[3]) +
                       " (expected 'real', 'integer', 'pattern' or 'complex')");
  h.symmetry_name = lower(banner[4]);
  if (h.symmetry_name == "general")
    h.symmetry = symmetry_kind::general;
  else if (h.symmetry_name == "symmetric")
    h.symmetry = symmetry_kind::symmetric;
  else if (h.symmetry_name == "skew-symmetric")
    h.symmetry = symmetry_kind::skew_symmetric;
  else if (h.symmetry_name == "hermitian")
    throw io_error(name, 1,
                   "unsupported symmetry 'hermitian': Spade reads general, symmetric and "
                   "skew-symmetric");
  else
    throw io_error(name, 1,
                   "unknown symmetry " + quote(banner[4]) +
                       " (expected 'general', 'symmetric', 'skew-symmetric' or 'hermitian')");
  if (h.format == format_kind::array && h.field == field_kind::pattern)
    throw io_error(name, 1, "the 'pattern' field needs the 'coordinate' format, not 'array'");

  bool found = false;
  while (reader.next(line)) {
    if (is_skipped_line(line)) continue;
    found = true;
    break;
  }
  if (!found)
    throw io_error(name, reader.line_after_end(), "missing size line (file ends after the header)");
  h.size_line = reader.line();
  h.data_offset = reader.offset();
  const auto sizes = split_tokens(line);
  const std::size_t wanted = h.format == format_kind::coordinate ? 3 : 2;
  const char* shape = h.format == format_kind::coordinate ? "'rows cols entries'" : "'rows cols'";
  if (sizes.size() < wanted)
    throw io_error(name, h.size_line,
                   "malformed size line: expected " + std::string(shape) + " for the " +
                       h.format_name + " format, found " + std::to_string(sizes.size()) +
                       " number" + (sizes.size() == 1 ? "" : "s"));
  std::int64_t full = 0;
  h.rows = parse_extent(sizes[0], "row count", name, h.size_line, full);
  h.cols = parse_extent(sizes[1], "column count", name, h.size_line, full);
  if (h.format == format_kind::coordinate) {
    parse_extent(sizes[2], "entry count", name, h.size_line, full);
    h.entries = static_cast<std::uint64_t>(full);
  }
  if (sizes.size() > wanted)
    throw io_error(name, h.size_line,
                   "unexpected text " + quote(sizes[wanted]) + " after the size line " + shape);
  if (h.symmetry != symmetry_kind::general && h.rows != h.cols)
    throw io_error(name, h.size_line,
                   "a " + h.symmetry_name + " matrix must be square, the size line says " +
                       std::to_string(h.rows) + " x " + std::to_string(h.cols));
  if (h.format == format_kind::array) {
    const auto n = static_cast<std::uint64_t>(h.rows);
    switch (h.symmetry) {
      case symmetry_kind::general:
        h.entries = n * static_cast<std::uint64_t>(h.cols);
        break;
      case symmetry_kind::symmetric:
        h.entries = n * (n + 1) / 2;
        break;
      case symmetry_kind::skew_symmetric:
        h.entries = n == 0 ? 0 : n * (n - 1) / 2;
        break;
    }
  }
  return h;
}

}  // namespace spade::detail::mm
