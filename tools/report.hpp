// How the spade tool prints: aligned `key: value` reports and number formatting.
#pragma once

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace spade::tool {

/// Collects `key: value` lines and prints them with the values in one column.
class report {
 public:
  template <class Value>
  void add(std::string key, const Value& value) {
    std::ostringstream text;
    text << value;
    lines_.emplace_back(std::move(key), text.str());
  }
  void print(std::ostream& out) const {
    std::size_t width = 0;
    for (const auto& line : lines_)
      width = std::max(width, line.first.size());
    for (const auto& [key, value] : lines_)
      out << key << ':' << std::string(width - key.size() + 1, ' ') << value << '\n';
  }

 private:
  std::vector<std::pair<std::string, std::string>> lines_;
};

inline std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

inline std::string general(double value, int digits = 4) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

/// A duration with at least 3 significant digits in the unit that keeps it in [1, 1000):
/// "412 ns", "41.2 µs", "4.12 ms", "1.50 s" (and "1234 s" beyond).
inline std::string duration_text(double seconds) {
  static constexpr struct {
    double scale;
    const char* unit;
  } units[] = {{1e-9, "ns"}, {1e-6, "\u00b5s"}, {1e-3, "ms"}, {1, "s"}};
  std::size_t k = 0;
  while (k + 1 < std::size(units) && seconds >= units[k + 1].scale)
    ++k;
  const double value = seconds / units[k].scale;
  // Decimals for 3 significant digits; a value that rounds up to 1000 keeps no decimals.
  const int decimals = value >= 99.95 ? 0 : value >= 9.995 ? 1 : 2;
  return fixed(value, decimals) + " " + units[k].unit;
}

}  // namespace spade::tool
