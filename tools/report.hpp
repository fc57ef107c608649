// How the spade tool prints: aligned `key: value` reports and number formatting.
#pragma once

#include <algorithm>
#include <cstdio>
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

}  // namespace spade::tool
