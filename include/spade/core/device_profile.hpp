// A GPU described for the planner (device_profile): plans previewed on a machine without one.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "spade/core/context.hpp"
#include "spade/core/error.hpp"
#include "spade/core/tuning.hpp"

namespace spade {

/// What the planner reads about a device: the properties its facts use (resident threads,
/// shared memory for hash_spgemm's tables, L2) and the thresholds calibrated on it.
/// `spade device --profile` writes the one of the device at hand as JSON; `spade::explain(e,
/// profile)` and `spade multiply --explain --profile` plan for it on any machine.
struct device_profile {
  std::string name;
  /// Where the thresholds come from (a profile of a device the thresholds were not measured
  /// on says so).
  std::string note;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  std::int64_t global_memory_bytes = 0;
  std::int64_t shared_memory_per_sm = 0;
  std::int64_t shared_memory_per_block_optin = 0;
  std::int64_t reserved_shared_memory_per_block = 0;
  std::int64_t l2_cache_bytes = 0;
  /// Peak DRAM bandwidth from the memory clock and bus width (bytes per second).
  double memory_bandwidth = 0.0;
  thresholds tuning = default_thresholds;

  /// Threads the device keeps resident: SMs × threads per SM.
  std::int64_t resident_threads() const noexcept {
    return std::int64_t{sm_count} * max_threads_per_sm;
  }
};

/// Calls visit(name, field) for every field of `t`, in declaration order: the one list the
/// JSON form of a profile is read and written by (tests/cpu/test_device_profile.cpp checks it
/// against the declarations in core/tuning.hpp).
template <class Thresholds, class Visit>
requires std::is_same_v<std::remove_const_t<Thresholds>, thresholds>
void for_each_threshold(Thresholds& t, Visit&& visit) {
  visit("densify_density", t.densify_density);
  visit("densify_density_wide", t.densify_density_wide);
  visit("densify_wide_columns", t.densify_wide_columns);
  visit("densify_max_elements", t.densify_max_elements);
  visit("gcoo_group_size", t.gcoo_group_size);
  visit("gcoo_planner_group_size", t.gcoo_planner_group_size);
  visit("gcoo_min_columns", t.gcoo_min_columns);
  visit("gcoo_min_rows", t.gcoo_min_rows);
  visit("gcoo_max_row_spread", t.gcoo_max_row_spread);
  visit("gcoo_narrow_min_columns", t.gcoo_narrow_min_columns);
  visit("gcoo_fp64_narrow_long_row_columns", t.gcoo_fp64_narrow_long_row_columns);
  visit("gcoo_narrow_min_uses", t.gcoo_narrow_min_uses);
  visit("gcoo_wide_columns", t.gcoo_wide_columns);
  visit("gcoo_wide_min_rows", t.gcoo_wide_min_rows);
  visit("gcoo_wide_max_mean_row", t.gcoo_wide_max_mean_row);
  visit("gcoo_fp64_wide_columns", t.gcoo_fp64_wide_columns);
  visit("gcoo_widest_columns", t.gcoo_widest_columns);
  visit("gcoo_widest_min_rows", t.gcoo_widest_min_rows);
  visit("gcoo_fp64_wide_max_mean_row", t.gcoo_fp64_wide_max_mean_row);
  visit("ellr_max_padding", t.ellr_max_padding);
  visit("ellr_max_row_spread", t.ellr_max_row_spread);
  visit("ellr_min_uses", t.ellr_min_uses);
  visit("ellr_plain_max_padding", t.ellr_plain_max_padding);
  visit("ellr_slice_height", t.ellr_slice_height);
  visit("ellr_sort_window", t.ellr_sort_window);
  visit("ellr_full_device_max_mean_row", t.ellr_full_device_max_mean_row);
  visit("tiled_min_nnz", t.tiled_min_nnz);
  visit("tiled_min_products_per_pair", t.tiled_min_products_per_pair);
  visit("tiled_min_fill", t.tiled_min_fill);
  visit("tiled_spmm_min_columns", t.tiled_spmm_min_columns);
  visit("tiled_spmm_min_nnz", t.tiled_spmm_min_nnz);
  visit("tiled_spmm_min_fill", t.tiled_spmm_min_fill);
  visit("tiled_spmm_min_fill_fp64", t.tiled_spmm_min_fill_fp64);
  visit("tiled_spmm_min_fill_fp64_l2", t.tiled_spmm_min_fill_fp64_l2);
  visit("tiled_spmm_min_fill_fp32_l2", t.tiled_spmm_min_fill_fp32_l2);
  visit("tiled_spmm_wide_columns_fp32", t.tiled_spmm_wide_columns_fp32);
  visit("tiled_spmm_wide_columns", t.tiled_spmm_wide_columns);
  visit("tiled_max_batch_pairs", t.tiled_max_batch_pairs);
  visit("ellr_lanes_max_resident_share", t.ellr_lanes_max_resident_share);
  visit("ellr_lanes_min_entries_per_lane", t.ellr_lanes_min_entries_per_lane);
  visit("ellr_split_max_threads_per_row", t.ellr_split_max_threads_per_row);
  visit("ellr_split_max_threads_per_row_fp64", t.ellr_split_max_threads_per_row_fp64);
  visit("ellr_wide_half_threads_min_rows", t.ellr_wide_half_threads_min_rows);
  visit("ellr_wide_half_max_entries_per_thread", t.ellr_wide_half_max_entries_per_thread);
  visit("ellr_wide_max_mean_row_fp64", t.ellr_wide_max_mean_row_fp64);
  visit("spmm_alg2_min_columns", t.spmm_alg2_min_columns);
  visit("spmm_alg2_min_elements", t.spmm_alg2_min_elements);
  visit("spmm_alg2_min_elements_fp64", t.spmm_alg2_min_elements_fp64);
  visit("spmm_alg2_wide_columns", t.spmm_alg2_wide_columns);
  visit("spmm_alg2_wide_min_mean_row", t.spmm_alg2_wide_min_mean_row);
  visit("spmm_alg2_wide_max_mean_row", t.spmm_alg2_wide_max_mean_row);
  visit("spmm_alg2_short_row_max_mean", t.spmm_alg2_short_row_max_mean);
  visit("spmm_alg2_short_row_min_columns_fp64", t.spmm_alg2_short_row_min_columns_fp64);
  visit("spmm_alg2_short_row_min_elements_fp64", t.spmm_alg2_short_row_min_elements_fp64);
  visit("spmm_alg3_skewed_min_spread", t.spmm_alg3_skewed_min_spread);
  visit("spmm_alg3_skewed_max_elements", t.spmm_alg3_skewed_max_elements);
  visit("spmm_alg1_max_columns", t.spmm_alg1_max_columns);
  visit("spmm_alg1_min_rows", t.spmm_alg1_min_rows);
  visit("spmm_alg1_min_spread", t.spmm_alg1_min_spread);
  visit("spmm_alg1_short_row_max_columns", t.spmm_alg1_short_row_max_columns);
  visit("spmm_alg1_short_row_max_mean", t.spmm_alg1_short_row_max_mean);
  visit("spmm_alg1_small_max_rows", t.spmm_alg1_small_max_rows);
  visit("spmm_alg1_small_long_row", t.spmm_alg1_small_long_row);
  visit("spmm_alg1_small_min_long_rows", t.spmm_alg1_small_min_long_rows);
  visit("spmm_alg1_small_max_columns", t.spmm_alg1_small_max_columns);
  visit("spmm_alg1_small_max_work", t.spmm_alg1_small_max_work);
  visit("rowwise_max_extent", t.rowwise_max_extent);
  visit("rowwise_max_nnz", t.rowwise_max_nnz);
}

namespace detail::profile_json {

/// The shortest text that reads back to the same value.
template <class V>
std::string number_text(V value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc{} ? std::string(buffer, end) : std::string("0");
}

inline std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// A reader of the JSON subset profiles are written in: objects, strings, numbers. Errors
/// name the source and the line.
class reader {
 public:
  reader(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t k = 0; k < at_ && k < text_.size(); ++k)
      line += text_[k] == '\n';
    throw io_error(source_, line, "device profile: " + what);
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\t' || text_[at_] == '\r'))
      ++at_;
  }
  bool peek(char c) {
    skip_space();
    return at_ < text_.size() && text_[at_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) break;
        c = text_[at_++];
        if (c != '"' && c != '\\' && c != '/')
          fail("unsupported escape '\\" + std::string(1, c) + "'");
      }
      out += c;
    }
    if (at_ >= text_.size()) fail("unterminated string");
    ++at_;
    return out;
  }
  template <class V>
  V number(const std::string& key) {
    skip_space();
    const char* first = text_.data() + at_;
    const char* last = text_.data() + text_.size();
    V value{};
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec != std::errc{} || end == first)
      fail("'" + key + "' needs a " + (std::is_integral_v<V> ? "whole " : "") + "number");
    at_ += static_cast<std::size_t>(end - first);
    return value;
  }
  /// Calls field(key) for every key of an object; `field` reads the value.
  template <class Field>
  void object(Field&& field) {
    expect('{');
    if (peek('}')) {
      ++at_;
      return;
    }
    while (true) {
      const std::string key = string();
      expect(':');
      field(key);
      if (peek(',')) {
        ++at_;
        continue;
      }
      expect('}');
      return;
    }
  }
  void end() {
    skip_space();
    if (at_ != text_.size()) fail("unexpected text after the profile");
  }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t at_ = 0;
};

/// Calls visit(name, field) for every device field of a profile (the thresholds apart).
template <class Profile, class Visit>
void for_each_device_field(Profile& p, Visit&& visit) {
  visit("compute_major", p.compute_major);
  visit("compute_minor", p.compute_minor);
  visit("sm_count", p.sm_count);
  visit("max_threads_per_sm", p.max_threads_per_sm);
  visit("max_blocks_per_sm", p.max_blocks_per_sm);
  visit("global_memory_bytes", p.global_memory_bytes);
  visit("shared_memory_per_sm", p.shared_memory_per_sm);
  visit("shared_memory_per_block_optin", p.shared_memory_per_block_optin);
  visit("reserved_shared_memory_per_block", p.reserved_shared_memory_per_block);
  visit("l2_cache_bytes", p.l2_cache_bytes);
  visit("memory_bandwidth", p.memory_bandwidth);
}

}  // namespace detail::profile_json

/// `p` as JSON: the device fields, then every threshold by name (for_each_threshold).
inline std::string to_json(const device_profile& p) {
  namespace pj = detail::profile_json;
  std::ostringstream out;
  out << "{\n  \"format\": \"spade device profile 1\",\n"
      << "  \"name\": " << pj::quoted(p.name) << ",\n"
      << "  \"note\": " << pj::quoted(p.note) << ",\n";
  pj::for_each_device_field(p, [&](const char* key, const auto& value) {
    out << "  \"" << key << "\": " << pj::number_text(value) << ",\n";
  });
  out << "  \"thresholds\": {";
  const char* separator = "\n";
  for_each_threshold(p.tuning, [&](const char* key, const auto& value) {
    out << separator << "    \"" << key << "\": " << pj::number_text(value);
    separator = ",\n";
  });
  out << "\n  }\n}\n";
  return out.str();
}

/// Reads a profile written by to_json (`source` names it in errors). Every device field is
/// required; a threshold left out keeps its default (profiles of older releases still load).
/// An unknown key, a missing field or a malformed value throws spade::io_error naming it.
inline device_profile profile_from_json(std::string_view text,
                                        const std::string& source = "device profile") {
  namespace pj = detail::profile_json;
  pj::reader in(text, source);
  device_profile p;
  std::vector<std::string> seen;
  in.object([&](const std::string& key) {
    seen.push_back(key);
    if (key == "format") {
      const std::string format = in.string();
      if (format != "spade device profile 1")
        in.fail("format '" + format + "', expected 'spade device profile 1'");
      return;
    }
    if (key == "name") {
      p.name = in.string();
      return;
    }
    if (key == "note") {
      p.note = in.string();
      return;
    }
    if (key == "thresholds") {
      in.object([&](const std::string& name) {
        bool known = false;
        for_each_threshold(p.tuning, [&](const char* field, auto& value) {
          if (known || name != field) return;
          known = true;
          value = in.template number<std::remove_reference_t<decltype(value)>>(name);
        });
        if (!known) in.fail("unknown threshold '" + name + "'");
      });
      return;
    }
    bool known = false;
    pj::for_each_device_field(p, [&](const char* field, auto& value) {
      if (known || key != field) return;
      known = true;
      value = in.template number<std::remove_reference_t<decltype(value)>>(key);
    });
    if (!known) in.fail("unknown key '" + key + "'");
  });
  in.end();
  auto require = [&](const char* key) {
    for (const auto& k : seen)
      if (k == key) return;
    throw io_error(source, 0, std::string("device profile: no '") + key + "'");
  };
  require("format");
  require("name");
  pj::for_each_device_field(p, [&](const char* key, auto&) { require(key); });
  if (p.sm_count <= 0 || p.max_threads_per_sm <= 0)
    throw io_error(source, 0, "device profile: sm_count and max_threads_per_sm must be positive");
  return p;
}

/// The profile of a device at hand, with the thresholds in force (spade::tuning()).
inline device_profile profile_of(const device_properties& d) {
  device_profile p;
  p.name = d.name;
  p.note = "captured with spade device --profile";
  p.compute_major = d.compute_major;
  p.compute_minor = d.compute_minor;
  p.sm_count = d.sm_count;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.global_memory_bytes = static_cast<std::int64_t>(d.global_memory_bytes);
  p.shared_memory_per_sm = static_cast<std::int64_t>(d.shared_memory_per_sm);
  p.shared_memory_per_block_optin = static_cast<std::int64_t>(d.shared_memory_per_block_optin);
  p.reserved_shared_memory_per_block =
      static_cast<std::int64_t>(d.reserved_shared_memory_per_block);
  p.l2_cache_bytes = static_cast<std::int64_t>(d.l2_cache_bytes);
  p.memory_bandwidth = d.memory_bandwidth;
  p.tuning = tuning();
  return p;
}

/// The profiles shipped with Spade, captured with `spade device --profile` (profiles/*.json
/// hold the same values; tests/cpu/test_device_profile.cpp compares them).
namespace detail {

/// A Hopper (sm_90) profile of 132 SMs: what the H100 and H200 have in common.
inline device_profile hopper_132_sms(std::string name, std::string note, std::int64_t memory,
                                     std::int64_t l2, double bandwidth) {
  device_profile p;
  p.name = std::move(name);
  p.note = std::move(note);
  p.compute_major = 9;
  p.compute_minor = 0;
  p.sm_count = 132;
  p.max_threads_per_sm = 2048;
  p.max_blocks_per_sm = 32;
  p.global_memory_bytes = memory;
  p.shared_memory_per_sm = 233472;
  p.shared_memory_per_block_optin = 232448;
  p.reserved_shared_memory_per_block = 1024;
  p.l2_cache_bytes = l2;
  p.memory_bandwidth = bandwidth;
  return p;
}

}  // namespace detail

inline device_profile h100_profile() {
  return detail::hopper_132_sms("NVIDIA H100 80GB HBM3",
                                "captured on the device; thresholds measured on it", 85017493504,
                                52428800, 3.35232e12);
}

inline device_profile h200_profile() {
  return detail::hopper_132_sms(
      "NVIDIA H200", "captured on the device; thresholds measured on the H100, not re-calibrated",
      150109880320, 62914560, 4.814304e12);
}

/// A shipped profile by name ("h100", "h200") or a profile file by path.
inline device_profile load_device_profile(const std::string& name_or_path) {
  if (name_or_path == "h100") return h100_profile();
  if (name_or_path == "h200") return h200_profile();
  std::ifstream file(name_or_path, std::ios::binary);
  if (!file)
    throw io_error(name_or_path, 0,
                   "no such device profile: give h100, h200 or the path of a file written by "
                   "`spade device --profile`");
  std::ostringstream text;
  text << file.rdbuf();
  return profile_from_json(text.str(), name_or_path);
}

}  // namespace spade
