// Choices measured on this device by `spade tune` (spade::tune_spmm): the table, its file, the
// operand classes.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"

namespace spade {

namespace detail {

/// The fastest of `times` (nullptr when empty).
inline const std::pair<std::string, double>* fastest_of(
    const std::vector<std::pair<std::string, double>>& times) {
  const auto it = std::min_element(
      times.begin(), times.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  return it == times.end() ? nullptr : &*it;
}

}  // namespace detail

/// One operand class of one table: the time of each choice that was measured on it (the
/// geometric mean over the `count` matrices measured), and the matrices' names.
struct tuned_entry {
  int count = 0;
  std::vector<std::pair<std::string, double>> milliseconds;  ///< choice → time, in file order
  /// Per matrix measured, in order: its fingerprint (tune_fingerprint) → its fastest choice.
  std::vector<std::pair<std::string, std::string>> fastest;
  std::vector<std::string> matrices;

  /// The fastest choice (nullptr when none was measured).
  const std::pair<std::string, double>* best() const { return detail::fastest_of(milliseconds); }
  /// Matrices `choice` was the fastest on.
  int wins_of(std::string_view choice) const {
    return static_cast<int>(std::count_if(fastest.begin(), fastest.end(),
                                          [&](const auto& m) { return m.second == choice; }));
  }
  /// Whether the fastest choice was the fastest on every matrix measured.
  bool unanimous() const {
    const auto* b = best();
    return b != nullptr && wins_of(b->first) == count;
  }
  /// What the planner follows for an operand of fingerprint `operand`: the choice that was
  /// fastest on that very matrix, if it was measured (`*measured` set); else the class's fastest
  /// choice when it was the fastest on every one of at least two matrices; else "" (the rules).
  /// On matrices left out of the tuning, classes decided by one matrix, or split between
  /// choices, picked worse than the rules (docs/planner.md).
  std::string decision_for(std::string_view operand, bool* measured = nullptr) const {
    if (measured) *measured = false;
    for (const auto& [fingerprint, choice] : fastest)
      if (fingerprint == operand) {
        if (measured) *measured = true;
        return choice;
      }
    return count >= 2 && unanimous() ? best()->first : std::string();
  }
  /// The time of `choice` (a negative value when it was not measured).
  double time_of(std::string_view choice) const {
    for (const auto& [name, ms] : milliseconds)
      if (name == choice) return ms;
    return -1.0;
  }
  /// "tiled_spmm 0.081 ms, cusparse_spmm 0.101 ms over 2 matrices (bcsstk17, s1rmq4m1)"
  /// (times to 3 significant digits; the file keeps them whole).
  std::string describe() const {
    std::ostringstream text;
    text.precision(3);
    auto sorted = milliseconds;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.second < y.second; });
    for (std::size_t k = 0; k < sorted.size(); ++k)
      text << (k ? ", " : "") << sorted[k].first << " " << sorted[k].second << " ms";
    text << " over " << count << (count == 1 ? " matrix" : " matrices");
    if (const auto* b = best(); b != nullptr && count > 1)
      text << ", " << b->first << " fastest on " << wins_of(b->first);
    if (!matrices.empty()) {
      text << " (";
      for (std::size_t k = 0; k < matrices.size(); ++k)
        text << (k ? ", " : "") << matrices[k];
      text << ")";
    }
    return text.str();
  }
};

/// The choices of the "cusparse" table, cusparseSpMM's CSR algorithms: "alg1", "alg2", "alg3".
inline constexpr std::array<std::string_view, 3> cusparse_spmm_algorithm_choices{"alg1", "alg2",
                                                                                 "alg3"};

/// The number (1–3) of a "cusparse" table choice, 0 for any other text.
inline int cusparse_spmm_algorithm_number(std::string_view choice) {
  for (std::size_t k = 0; k < cusparse_spmm_algorithm_choices.size(); ++k)
    if (choice == cusparse_spmm_algorithm_choices[k]) return static_cast<int>(k) + 1;
  return 0;
}

/// The tuned choices of one device, by table ("spmm": the kernel of a sparse × dense product of
/// a class; "cusparse": the algorithm cusparseSpMM runs it with; "gcoo": the rows per group
/// gcoo_spmm's conversion uses) and operand class (the keys
/// spmm_tune_class / gcoo_tune_class make). Read from and written to a text file, one entry per
/// line: `<table> <class> <count> <choice>=<ms>... fastest=<fingerprint>:<choice>,...
/// [from=<name>,...]`.
struct tuned_table {
  /// The first line of every file; a file written by another format version is ignored.
  static constexpr std::string_view format_line = "spade-tune 1";
  /// Names kept per entry (the first ones measured).
  static constexpr std::size_t max_names = 8;

  std::string device;   ///< the device_tune_key the times were measured on
  std::string source;   ///< the file read, if any
  std::string problem;  ///< why the file was ignored ("" when it was read or absent)
  std::map<std::string, std::map<std::string, tuned_entry>, std::less<>> tables;

  /// The entry of `table` for `operand_class`, or nullptr.
  const tuned_entry* find(std::string_view table, std::string_view operand_class) const {
    const auto t = tables.find(table);
    if (t == tables.end()) return nullptr;
    const auto e = t->second.find(std::string(operand_class));
    return e == t->second.end() ? nullptr : &e->second;
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& [name, entries] : tables)
      n += entries.size();
    return n;
  }

  /// Adds one matrix's times for `operand_class`: each choice's time becomes the geometric mean
  /// over the matrices measured so far (every matrix of a class is timed with the same choices,
  /// so comparing these means compares the choices' geometric-mean ratios), and the matrix's
  /// fingerprint (tune_fingerprint) is kept with its fastest choice: the fastest of
  /// `milliseconds`, or `fastest` when given (one of them: a choice that runs faster on this
  /// matrix than on the others of its class, as cuSPARSE at its own tuned algorithm).
  void add(const std::string& table, const std::string& operand_class,
           const std::vector<std::pair<std::string, double>>& milliseconds,
           const std::string& matrix, const std::string& fingerprint,
           std::string_view fastest = {}) {
    if (milliseconds.empty()) throw std::invalid_argument("tuned_table::add: no times");
    const std::string* fastest_choice = nullptr;
    double fastest_ms = 0;
    for (const auto& [choice, ms] : milliseconds) {
      if (fastest.empty() ? fastest_choice == nullptr || ms < fastest_ms : choice == fastest) {
        fastest_choice = &choice;
        fastest_ms = ms;
      }
    }
    if (fastest_choice == nullptr)
      throw std::invalid_argument("tuned_table::add: fastest choice " + std::string(fastest) +
                                  " has no time");
    tuned_entry& e = tables[table][operand_class];
    const double old_weight = e.count;
    for (const auto& [choice, ms] : milliseconds) {
      if (!(ms > 0))
        throw std::invalid_argument("tuned_table::add: time of " + choice + " is not positive");
      auto it = std::find_if(e.milliseconds.begin(), e.milliseconds.end(),
                             [&](const auto& p) { return p.first == choice; });
      if (it == e.milliseconds.end()) {
        e.milliseconds.emplace_back(choice, ms);
      } else {
        it->second =
            std::exp((old_weight * std::log(it->second) + std::log(ms)) / (old_weight + 1));
      }
    }
    ++e.count;
    e.fastest.emplace_back(fingerprint, *fastest_choice);
    measured_[table].insert(fingerprint);
    if (e.matrices.size() < max_names) e.matrices.push_back(name_token(matrix));
  }

  /// Whether some entry of `table` measured the matrix of `fingerprint` (at any width): a
  /// look-up that needs no operand class.
  bool measured(std::string_view table, std::string_view fingerprint) const {
    const auto t = measured_.find(table);
    return t != measured_.end() && t->second.find(fingerprint) != t->second.end();
  }

  /// The file's text (format_line, `device <key>`, then one line per entry).
  std::string to_text() const {
    std::ostringstream out;
    out << format_line << "\ndevice " << device << '\n';
    for (const auto& [table, entries] : tables)
      for (const auto& [operand_class, e] : entries) {
        out << table << ' ' << operand_class << ' ' << e.count;
        for (const auto& [choice, ms] : e.milliseconds)
          out << ' ' << choice << '=' << number(ms);
        out << " fastest=";
        for (std::size_t k = 0; k < e.fastest.size(); ++k)
          out << (k ? "," : "") << e.fastest[k].first << ':' << e.fastest[k].second;
        if (!e.matrices.empty()) {
          out << " from=";
          for (std::size_t k = 0; k < e.matrices.size(); ++k)
            out << (k ? "," : "") << e.matrices[k];
        }
        out << '\n';
      }
    return out.str();
  }

  /// Reads a file's text. Anything malformed leaves the table empty with `problem` saying which
  /// line and why: the planner then applies its rules (a half-read table could mislead it).
  static tuned_table parse(std::string_view text, const std::string& source = "") {
    tuned_table t;
    t.source = source;
    std::istringstream in{std::string(text)};
    std::string line;
    int number_of_line = 0;
    const auto fail = [&](const std::string& why) {
      tuned_table bad;
      bad.source = source;
      bad.problem = (source.empty() ? std::string("tune table") : source) + " line " +
                    std::to_string(number_of_line) + ": " + why;
      return bad;
    };
    while (std::getline(in, line)) {
      ++number_of_line;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (number_of_line == 1) {
        if (line != format_line)
          return fail("expected '" + std::string(format_line) +
                      "' (written by another version of "
                      "Spade? run `spade tune` again)");
        continue;
      }
      if (line.empty() || line[0] == '#') continue;
      std::istringstream words(line);
      std::string table, operand_class, count_text;
      words >> table;
      if (table == "device") {
        if (!(words >> t.device)) return fail("device line without a key");
        continue;
      }
      if (!(words >> operand_class >> count_text)) return fail("expected <table> <class> <count>");
      tuned_entry e;
      if (!read_number(count_text, e.count) || e.count < 1)
        return fail("bad count '" + count_text + "'");
      std::string word;
      while (words >> word) {
        const auto eq = word.find('=');
        if (eq == std::string::npos || eq == 0)
          return fail("expected <choice>=<ms>, not '" + word + "'");
        const std::string key = word.substr(0, eq);
        const std::string value = word.substr(eq + 1);
        if (key == "fastest") {
          std::istringstream items(value);
          for (std::string item; std::getline(items, item, ',');) {
            const auto colon = item.find(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
              return fail("expected fastest=<fingerprint>:<choice>,..., not '" + value + "'");
            e.fastest.emplace_back(item.substr(0, colon), item.substr(colon + 1));
          }
          continue;
        }
        if (key == "from") {
          std::istringstream names(value);
          for (std::string name; std::getline(names, name, ',');)
            if (!name.empty()) e.matrices.push_back(name);
          continue;
        }
        double ms = 0;
        if (!read_number(value, ms) || !(ms > 0) || !std::isfinite(ms))
          return fail("bad time '" + value + "' for " + key);
        if (table == "cusparse" && cusparse_spmm_algorithm_number(key) == 0)
          return fail("'" + key + "' is no cuSPARSE SpMM algorithm (alg1, alg2, alg3)");
        e.milliseconds.emplace_back(key, ms);
      }
      if (e.milliseconds.empty()) return fail("no times for " + table + " " + operand_class);
      for (const auto& [fingerprint, choice] : e.fastest)
        if (e.time_of(choice) < 0)
          return fail(choice + " fastest on " + fingerprint + ", but it has no time");
      if (static_cast<int>(e.fastest.size()) != e.count)
        return fail(std::to_string(e.fastest.size()) + " fastest choices for " +
                    std::to_string(e.count) + " matrices in " + table + " " + operand_class);
      for (const auto& [fingerprint, choice] : e.fastest)
        t.measured_[table].insert(fingerprint);
      if (!t.tables[table].emplace(operand_class, std::move(e)).second)
        return fail("a second entry for " + table + " " + operand_class);
    }
    if (number_of_line == 0) return fail("empty file");
    return t;
  }

 private:
  // Per table, the fingerprints of the matrices its entries measured (measured()).
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> measured_;

  template <class V>
  static bool read_number(const std::string& text, V& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc{} && end == text.data() + text.size();
  }
  static std::string number(double value) {
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return ec == std::errc{} ? std::string(buffer, end) : std::string("0");
  }
  // Names go in a comma-separated, space-separated field.
  static std::string name_token(std::string name) {
    for (char& c : name)
      if (c == ',' || c == ' ' || c == '\t' || c == '=' || static_cast<unsigned char>(c) < 0x20)
        c = '_';
    return name.empty() ? std::string("unnamed") : name;
  }
};

/// What tells one matrix from another within a tune entry: rows, columns, entries and the
/// longest row ("15606x15606x91756x10"); the entry's class adds the tile fill. Values do not
/// change a product's time; two patterns alike in all five (16×16 diagonal blocks and random
/// rows of 16 are alike in the first four) are taken for one.
inline std::string tune_fingerprint(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                    std::int64_t longest_row) {
  return std::to_string(rows) + "x" + std::to_string(cols) + "x" + std::to_string(nnz) + "x" +
         std::to_string(longest_row);
}

/// The name of gcoo's choice of `p` rows per group in the "gcoo" table: "p4".
inline std::string group_size_choice(long p) {
  std::string name = "p";  // appended, not concatenated: GCC 12 warns falsely on "p" + string
  name += std::to_string(p);
  return name;
}

/// floor(log2(x)) for x ≥ 1, else 0: the buckets of the operand classes.
inline int tune_log2_bucket(double x) {
  return x >= 1 ? static_cast<int>(std::floor(std::log2(x))) : 0;
}

namespace detail {

// The parts both operand classes share.
inline std::string tune_precision(int value_bytes) {
  if (value_bytes == 8) return "f64";
  if (value_bytes == 4) return "f32";
  std::string name = "f";  // appended, not concatenated: GCC 12 warns falsely on "f" + string
  name += std::to_string(8 * value_bytes);
  return name;
}
// ".m<mean row bucket>.s<spread>": spread is longest / mean, ≤ 4 → 0, ≤ 32 → 1, more → 2.
inline std::string tune_row_lengths(double mean_row, std::int64_t longest_row) {
  const double spread = mean_row > 0 ? static_cast<double>(longest_row) / mean_row : 0.0;
  const int spread_class = spread <= 4 ? 0 : spread <= 32 ? 1 : 2;
  return ".m" + std::to_string(tune_log2_bucket(mean_row)) + ".s" + std::to_string(spread_class);
}
// ".t<tile fill bucket>", or ".t-" when the fill was not counted (0).
inline std::string tune_tile_fill(double tile_fill) {
  return tile_fill > 0 ? ".t" + std::to_string(tune_log2_bucket(tile_fill)) : std::string(".t-");
}

}  // namespace detail

/// The class of a sparse operand for gcoo's rows per group: precision, rows (4× ranges),
/// mean row length (2× ranges), row spread (longest / mean: ≤ 4, ≤ 32, more) and the mean fill of
/// its 8×8 tiles (2× ranges; "t-" when not counted: fewer than tiled_spmm_min_nnz entries), e.g.
/// "f64.r16.m4.s0.t6" for 2^16 to 2^18 − 1 rows of 16 to 31 entries on average, none above 4×
/// that, in tiles of 64 to 127 entries (which tells 16×16 diagonal blocks from random rows of 16).
inline std::string gcoo_tune_class(int value_bytes, std::int64_t rows, double mean_row,
                                   std::int64_t longest_row, double tile_fill) {
  return detail::tune_precision(value_bytes) + ".r" +
         std::to_string(tune_log2_bucket(static_cast<double>(rows)) / 2 * 2) +
         detail::tune_row_lengths(mean_row, longest_row) + detail::tune_tile_fill(tile_fill);
}

/// Whether C = A·B with B of `columns` columns reads and writes less than the L2 cache holds:
/// A (values, column indices, row pointers), B and C, each once.
inline bool spmm_fits_l2(int value_bytes, std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                         std::int64_t columns, std::size_t l2_bytes) {
  const double bytes =
      static_cast<double>(nnz) * (value_bytes + 4) + static_cast<double>(rows + 1) * 4 +
      static_cast<double>(rows + cols) * static_cast<double>(columns) * value_bytes;
  return bytes <= static_cast<double>(l2_bytes);
}

/// The width of B an operand class names: `columns` rounded to the nearest power of two, from 2
/// to 2048 (3 → 4, 5 → 4, 6 → 8, 12 → 16).
inline std::int64_t tune_width(std::int64_t columns) {
  const int power = std::clamp(static_cast<int>(std::lround(std::log2(
                                   static_cast<double>(std::max<std::int64_t>(columns, 1))))),
                               1, 11);
  return std::int64_t{1} << power;
}

/// The class of a sparse × dense product for the kernel choice ("spmm" table) and cuSPARSE's
/// algorithm ("cusparse" table): precision, mean row length (2× ranges), row spread (as
/// gcoo_tune_class), the width of B (tune_width; the kernel choice starts at tune_min_columns), the
/// mean fill of A's 8×8 tiles (2× ranges; "t-" when not counted: A is below tiled_spmm_min_nnz) and
/// whether the product fits in L2 ("l2") or streams from DRAM ("dram"), e.g.
/// "f64.m4.s0.n128.t5.l2". The rows count only through the last: leaving them out let more matrices
/// share a class, which picked better on matrices left out of the tuning (docs/planner.md has the
/// measurement).
inline std::string spmm_tune_class(int value_bytes, double mean_row, std::int64_t longest_row,
                                   std::int64_t columns, double tile_fill, bool fits_l2) {
  return detail::tune_precision(value_bytes) + detail::tune_row_lengths(mean_row, longest_row) +
         ".n" + std::to_string(tune_width(columns)) + detail::tune_tile_fill(tile_fill) +
         (fits_l2 ? ".l2" : ".dram");
}

/// The narrowest B a tuned kernel choice applies to (below it ellr_spmv and cuSPARSE SpMV-like
/// paths compete, which `spade tune` does not time).
inline constexpr std::int64_t tune_min_columns = 16;

/// The narrowest B a tuned cuSPARSE algorithm applies to: below tune_min_columns `spade tune`
/// times only cuSPARSE's algorithms (the ALG1 rule's narrow products on skewed graphs are where
/// the rules miss most: docs/planner.md).
inline constexpr std::int64_t tune_min_cusparse_columns = 2;

/// Why the widths `columns` cannot be tuned together ("" when they can): one below
/// tune_min_cusparse_columns, where the planner uses no tuned choice, or two of one operand class
/// (tune_width: 3 and 4), whose times would go to one entry. tune_spmm and `spade tune` ask it.
namespace detail {
template <class Int>
std::string tune_columns_problem(const std::vector<Int>& columns) {
  for (const Int n : columns)
    if (n < tune_min_cusparse_columns)
      return "width " + std::to_string(n) + " is below tune_min_cusparse_columns (" +
             std::to_string(tune_min_cusparse_columns) +
             "), where the planner uses no tuned choice";
  for (std::size_t i = 0; i < columns.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (tune_width(columns[i]) == tune_width(columns[j]))
        return "widths " + std::to_string(columns[j]) + " and " + std::to_string(columns[i]) +
               " fall in one operand class (n" + std::to_string(tune_width(columns[i])) +
               "): give one";
  return {};
}
}  // namespace detail

/// A device's name in the tune file's name: "NVIDIA_H200_sm90_132sms".
inline std::string device_tune_key(const device_properties& p) {
  std::string key;
  for (const char c : p.name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    key += plain ? c : '_';
  }
  key += "_sm" + std::to_string(p.compute_major) + std::to_string(p.compute_minor) + "_" +
         std::to_string(p.sm_count) + "sms";
  return key;
}

/// The directory Spade caches in (compiled kernels, tune files): $SPADE_CACHE_DIR, else
/// $XDG_CACHE_HOME/spade, else $HOME/.cache/spade (read at each use, so a program may change
/// it); "" when none of these is set.
inline std::string cache_directory() {
  if (const char* dir = std::getenv("SPADE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/spade";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/spade";
  return {};
}

/// The tune file of device `key`: tune-<key>.txt in cache_directory(); "" when there is none.
inline std::string tuned_table_path(const std::string& key) {
  const std::string dir = cache_directory();
  return dir.empty() ? std::string() : dir + "/tune-" + key + ".txt";
}

namespace detail {

struct tuned_tables {
  std::mutex lock;
  std::map<std::string, std::shared_ptr<const tuned_table>, std::less<>> by_path;
  // Tables replaced by forget_tuned_tables() stay alive: a plan being made may point into one.
  std::vector<std::shared_ptr<const tuned_table>> retired;
};

inline tuned_tables& tuned_table_cache() {
  static tuned_tables tables;
  return tables;
}

inline tuned_table read_tuned_table(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return tuned_table{};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    tuned_table t;
    t.problem = path + ": cannot be read";
    return t;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return tuned_table::parse(text.str(), path);
}

}  // namespace detail

/// Whether tuned choices are used: not when $SPADE_TUNE is "off" or "0" (read at each use).
inline bool tuned_choices_enabled() {
  const char* v = std::getenv("SPADE_TUNE");
  return !(v && (std::string_view(v) == "off" || std::string_view(v) == "0"));
}

/// The table of device `p`, read from its tune file once per process (an empty table when there
/// is no file, when tuned choices are off, or when the file was malformed: then `problem` says
/// why). Cheap after the first call: a look-up by the file's path.
inline std::shared_ptr<const tuned_table> tuned_table_for(const device_properties& p) {
  static const auto empty = std::make_shared<const tuned_table>();
  if (!tuned_choices_enabled()) return empty;
  const std::string path = tuned_table_path(device_tune_key(p));
  if (path.empty()) return empty;
  auto& cache = detail::tuned_table_cache();
  std::lock_guard guard(cache.lock);
  if (const auto it = cache.by_path.find(path); it != cache.by_path.end()) return it->second;
  auto table = std::make_shared<const tuned_table>(detail::read_tuned_table(path));
  cache.by_path.emplace(path, table);
  return table;
}

/// Makes the next tuned_table_for() read the files again (after `spade tune` or
/// spade::save_tuned_table wrote one). Operands converted already keep their forms.
inline void forget_tuned_tables() {
  auto& cache = detail::tuned_table_cache();
  std::lock_guard guard(cache.lock);
  for (auto& [path, table] : cache.by_path)
    cache.retired.push_back(std::move(table));
  cache.by_path.clear();
}

/// Writes `table` to `path` (a file of a unique name renamed over it, so a reader never sees
/// half a table) and forgets the tables read so far. Throws io_error naming the path (no cache
/// directory, a directory that cannot be written).
inline void save_tuned_table(const tuned_table& table, const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty())
    throw io_error("(tune file)", 0,
                   "no directory for it: set SPADE_CACHE_DIR, XDG_CACHE_HOME or HOME");
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const fs::path temporary =
      target.string() + ".tmp" + std::to_string(reinterpret_cast<std::uintptr_t>(&table));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << table.to_text();
    if (!out.flush()) throw io_error(temporary.string(), 0, "cannot write the tune file");
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw io_error(path, 0, "cannot write the tune file: " + ec.message());
  }
  forget_tuned_tables();
}

}  // namespace spade
