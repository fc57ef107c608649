// Matrix Market data lines: parses one newline-aligned chunk, stopping at its first error.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "spade/core/scalar.hpp"
#include "spade/io/detail/matrix_market_header.hpp"

namespace spade::detail::mm {

/// What one chunk of the data section holds. Lines are counted from the chunk's start, so
/// the caller turns them into file lines once the chunks before it are known.
template <class T>
struct chunk {
  std::vector<index_t> row;   ///< zero-based (coordinate format only)
  std::vector<index_t> col;   ///< zero-based (coordinate format only)
  std::vector<T> value;       ///< empty for pattern matrices
  std::uint64_t entries = 0;  ///< entries read before the end or the first error
  std::size_t newlines = 0;   ///< newlines in the whole chunk (when it did not fail)
  bool failed = false;
  std::size_t error_newlines = 0;  ///< newlines before the failing line
  std::string error;
};

/// Positive or negative decimal integer, saturated at ±10^17 so that any length of digits is
/// read without overflow (such values are out of range anyway). False when not an integer.
inline bool parse_index(const char* p, const char* end, std::int64_t& out) noexcept {
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (p == end) return false;
  std::int64_t value = 0;
  constexpr std::int64_t cap = 100'000'000'000'000'000;
  for (; p != end; ++p) {
    const unsigned digit = static_cast<unsigned char>(*p) - unsigned{'0'};
    if (digit > 9) return false;
    value = value >= cap ? cap : value * 10 + digit;
  }
  out = negative ? -value : value;
  return true;
}

/// The common case of an index, 1 to 18 plain digits ending at a separator: parsed while
/// scanning, p advanced past it. False (p unchanged) sends the caller to the careful path.
inline bool parse_plain_index(const char*& p, const char* end, std::int64_t& out) noexcept {
  constexpr std::ptrdiff_t max_digits = 18;  // 10^18 - 1 fits in int64_t
  const char* q = p;
  std::int64_t value = 0;
  for (; q != end; ++q) {
    const unsigned digit = static_cast<unsigned char>(*q) - unsigned{'0'};
    if (digit > 9) break;
    if (q - p == max_digits) return false;
    value = value * 10 + digit;
  }
  if (q == p || (q != end && class_of(*q) == token_char)) return false;
  p = q;
  out = value;
  return true;
}

/// Value of a real number that std::from_chars found out of range for T: its decimal exponent
/// says whether it overflowed (±inf, as strtod gives) or underflowed (±0).
template <class T>
T out_of_range_value(const char* p, const char* end) noexcept {
  const bool negative = *p == '-';
  if (*p == '-' || *p == '+') ++p;
  std::int64_t integer_digits = 0;
  std::int64_t leading_fraction_zeros = 0;
  bool nonzero = false;
  for (; p != end && *p >= '0' && *p <= '9'; ++p) {
    if (*p != '0') nonzero = true;
    if (nonzero) ++integer_digits;
  }
  if (p != end && *p == '.') {
    for (++p; p != end && *p >= '0' && *p <= '9' && !nonzero; ++p) {
      if (*p != '0')
        nonzero = true;
      else
        ++leading_fraction_zeros;
    }
    while (p != end && *p >= '0' && *p <= '9')
      ++p;
  }
  std::int64_t exponent = 0;
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative_exponent = p != end && *p == '-';
    if (p != end && (*p == '-' || *p == '+')) ++p;
    for (; p != end && *p >= '0' && *p <= '9'; ++p)
      exponent = exponent > 1'000'000'000 ? exponent : exponent * 10 + (*p - '0');
    if (negative_exponent) exponent = -exponent;
  }
  const std::int64_t magnitude =
      (integer_digits > 0 ? integer_digits : -leading_fraction_zeros) + exponent;
  const T value = magnitude > 0 ? std::numeric_limits<T>::infinity() : T(0);
  return negative ? -value : value;
}

enum class value_status { ok, not_numeric, not_integer, integer_out_of_range };

/// A real value rounded to T as std::from_chars does (so written shortest forms read back
/// bit-exact); values beyond T's range become ±inf or ±0. A leading '+' is allowed.
template <class T>
value_status parse_real(const char* p, const char* end, T& out) noexcept {
  if (p != end && *p == '+') {
    ++p;
    if (p == end || *p == '-') return value_status::not_numeric;
  }
  const auto [ptr, ec] = std::from_chars(p, end, out);
  if (ptr != end) return value_status::not_numeric;
  if (ec == std::errc::result_out_of_range) {
    out = out_of_range_value<T>(p, end);
    return value_status::ok;
  }
  return ec == std::errc() ? value_status::ok : value_status::not_numeric;
}

template <class T>
value_status parse_integer(const char* p, const char* end, T& out) noexcept {
  const char* digits = p;
  if (digits != end && *digits == '+') {
    ++digits;
    if (digits == end || *digits == '-') return value_status::not_numeric;
  }
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(digits, end, value);
  if (ptr == end && ec == std::errc()) {
    out = static_cast<T>(value);
    return value_status::ok;
  }
  if (ptr == end && ec == std::errc::result_out_of_range) return value_status::integer_out_of_range;
  T real;
  return parse_real(p, end, real) == value_status::ok ? value_status::not_integer
                                                      : value_status::not_numeric;
}

/// The common case of a value, std::from_chars reading the whole token: p advanced past it.
/// False (p unchanged) sends the caller to the careful path, which also explains errors.
template <field_kind Field, class T>
bool parse_plain_value(const char*& p, const char* end, T& out) noexcept {
  if constexpr (Field == field_kind::integer) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(p, end, value);
    if (ec != std::errc() || (ptr != end && class_of(*ptr) == token_char)) return false;
    out = static_cast<T>(value);
    p = ptr;
  } else {
    const auto [ptr, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || (ptr != end && class_of(*ptr) == token_char)) return false;
    p = ptr;
  }
  return true;
}

inline std::string value_error(value_status status, std::string_view token) {
  switch (status) {
    case value_status::not_integer:
      return "non-integer value " + quote(token) + " in an integer matrix";
    case value_status::integer_out_of_range:
      return "integer value " + quote(token) + " is out of the 64-bit range";
    default:
      return "non-numeric value " + quote(token);
  }
}

inline std::string more_entries_error(const header& h) {
  return "more entries than the " + std::to_string(h.entries) +
         " declared by the size line (line " + std::to_string(h.size_line) + ")";
}

/// Reserves for the chunk's share of the declared entries, bounded by what its text can hold
/// (min_line bytes an entry), so a forged size line cannot make a small file allocate much.
template <class T>
void reserve_for(chunk<T>& out, const header& h, std::size_t chunk_bytes, std::size_t data_bytes,
                 std::size_t min_line, bool coordinate, bool with_values) {
  const double share = data_bytes == 0 ? 0.0 : static_cast<double>(chunk_bytes) / data_bytes;
  const auto by_share =
      static_cast<std::uint64_t>(static_cast<double>(h.entries) * share * 1.05) + 16;
  const std::uint64_t by_text = chunk_bytes / min_line + 1;
  const auto n = static_cast<std::size_t>(by_share < by_text ? by_share : by_text);
  if (coordinate) {
    out.row.reserve(n);
    out.col.reserve(n);
  }
  if (with_values) out.value.reserve(n);
}

/// Parses coordinate lines 'row col [value]' until the end of `part` or the first error.
/// Reading stops with an error at the (max_entries + 1)-th entry.
template <class T, field_kind Field>
void parse_coordinate(const header& h, std::string_view part, std::uint64_t max_entries,
                      chunk<T>& out) {
  const char* p = part.data();
  const char* const end = p + part.size();
  const auto rows = static_cast<std::int64_t>(h.rows);
  const auto cols = static_cast<std::int64_t>(h.cols);
  const bool skew = h.symmetry == symmetry_kind::skew_symmetric;
  std::size_t newlines = 0;
  auto fail = [&](std::string message) {
    out.failed = true;
    out.error_newlines = newlines;
    out.error = std::move(message);
  };
  auto range = [](std::int64_t n) { return " is out of range [1, " + std::to_string(n) + "]"; };
  for (;;) {
    p = skip_blanks(p, end);
    if (p == end) break;
    if (*p == '\n') {
      ++p;
      ++newlines;
      continue;
    }
    if (*p == '%') {
      const void* newline = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (!newline) break;
      p = static_cast<const char*>(newline) + 1;
      ++newlines;
      continue;
    }
    if (out.entries == max_entries) return fail(more_entries_error(h));

    const char* token = p;
    std::int64_t i = 0;
    if (!parse_plain_index(p, end, i)) {
      p = token_end(p, end);
      if (!parse_index(token, p, i))
        return fail("malformed row index " + quote({token, static_cast<std::size_t>(p - token)}));
    }
    if (i < 1 || i > rows) return fail("row index " + std::string(token, p) + range(rows));

    p = skip_blanks(p, end);
    if (p == end || *p == '\n') return fail("missing column index");
    token = p;
    std::int64_t j = 0;
    if (!parse_plain_index(p, end, j)) {
      p = token_end(p, end);
      if (!parse_index(token, p, j))
        return fail("malformed column index " +
                    quote({token, static_cast<std::size_t>(p - token)}));
    }
    if (j < 1 || j > cols) return fail("column index " + std::string(token, p) + range(cols));

    T value{};
    if constexpr (Field != field_kind::pattern) {
      p = skip_blanks(p, end);
      if (p == end || *p == '\n') return fail("missing value");
      token = p;
      if (!parse_plain_value<Field>(p, end, value)) {
        p = token_end(p, end);
        const value_status status = Field == field_kind::integer ? parse_integer(token, p, value)
                                                                 : parse_real(token, p, value);
        if (status != value_status::ok)
          return fail(value_error(status, {token, static_cast<std::size_t>(p - token)}));
      }
    }
    p = skip_blanks(p, end);
    if (p != end && *p != '\n') {
      token = p;
      p = token_end(p, end);
      return fail("unexpected text " + quote({token, static_cast<std::size_t>(p - token)}) +
                  " after the entry");
    }
    if (skew && i == j)
      return fail("diagonal entry (" + std::to_string(i) + ", " + std::to_string(j) +
                  ") in a skew-symmetric matrix, whose diagonal is zero by definition");
    out.row.push_back(static_cast<index_t>(i - 1));
    out.col.push_back(static_cast<index_t>(j - 1));
    if constexpr (Field != field_kind::pattern) out.value.push_back(value);
    ++out.entries;
    if (p != end) {
      ++p;
      ++newlines;
    }
  }
  out.newlines = newlines;
}

/// Parses array lines (one value each, column by column) until the end of `part` or the first
/// error; positions are assigned later, once the chunks before this one are counted.
template <class T, field_kind Field>
void parse_array(const header& h, std::string_view part, std::uint64_t max_entries, chunk<T>& out) {
  const char* p = part.data();
  const char* const end = p + part.size();
  std::size_t newlines = 0;
  auto fail = [&](std::string message) {
    out.failed = true;
    out.error_newlines = newlines;
    out.error = std::move(message);
  };
  for (;;) {
    p = skip_blanks(p, end);
    if (p == end) break;
    if (*p == '\n') {
      ++p;
      ++newlines;
      continue;
    }
    if (*p == '%') {
      const void* newline = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
      if (!newline) break;
      p = static_cast<const char*>(newline) + 1;
      ++newlines;
      continue;
    }
    if (out.entries == max_entries) return fail(more_entries_error(h));
    const char* token = p;
    T value{};
    if (!parse_plain_value<Field>(p, end, value)) {
      p = token_end(p, end);
      const value_status status = Field == field_kind::integer ? parse_integer(token, p, value)
                                                               : parse_real(token, p, value);
      if (status != value_status::ok)
        return fail(value_error(status, {token, static_cast<std::size_t>(p - token)}));
    }
    p = skip_blanks(p, end);
    if (p != end && *p != '\n') {
      token = p;
      p = token_end(p, end);
      return fail("unexpected text " + quote({token, static_cast<std::size_t>(p - token)}) +
                  " after the value (the array format has one value a line)");
    }
    out.value.push_back(value);
    ++out.entries;
    if (p != end) {
      ++p;
      ++newlines;
    }
  }
  out.newlines = newlines;
}

/// Parses one chunk of the data section. `data_bytes` (the whole section's size) sizes the
/// reservation; `max_entries` bounds how many entries this chunk may hold before failing.
template <class T>
void parse_chunk(const header& h, std::string_view part, std::size_t data_bytes,
                 std::uint64_t max_entries, chunk<T>& out) {
  if (h.format == format_kind::array) {
    reserve_for(out, h, part.size(), data_bytes, 2, false, true);
    if (h.field == field_kind::integer)
      parse_array<T, field_kind::integer>(h, part, max_entries, out);
    else
      parse_array<T, field_kind::real>(h, part, max_entries, out);
    return;
  }
  switch (h.field) {
    case field_kind::pattern:
      reserve_for(out, h, part.size(), data_bytes, 4, true, false);
      return parse_coordinate<T, field_kind::pattern>(h, part, max_entries, out);
    case field_kind::integer:
      reserve_for(out, h, part.size(), data_bytes, 6, true, true);
      return parse_coordinate<T, field_kind::integer>(h, part, max_entries, out);
    case field_kind::real:
      reserve_for(out, h, part.size(), data_bytes, 6, true, true);
      return parse_coordinate<T, field_kind::real>(h, part, max_entries, out);
  }
}

}  // namespace spade::detail::mm
