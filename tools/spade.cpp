// The `spade` command-line tool: `spade info` describes matrix files, `spade device` the GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "matrix_summary.hpp"

namespace {

// Exit codes: scripts/test.sh runs the gpu tests only when `spade device` exits 0.
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_no_gpu = 2;

// Reading a big .mtx.gz takes seconds; a line on stderr says the tool is not hung.
constexpr std::uintmax_t progress_threshold_bytes = 50ull * 1000 * 1000;

constexpr const char* usage_text =
    "usage: spade <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  info <file.mtx[.gz]>...  describe Matrix Market files: shape, symmetry, row lengths,\n"
    "                           bandwidth, 8x8 tiles and the bytes each Spade format needs\n"
    "  device                   describe the CUDA device; exits 2 when there is none\n"
    "  help, --help, -h         show this text\n";

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

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string general(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

/// "6212 B (6.07 KiB)": exact count first, for scripts; binary units for people.
std::string bytes_text(std::uint64_t bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  std::string text = std::to_string(bytes) + " B";
  if (bytes < 1024) return text;
  double scaled = static_cast<double>(bytes);
  int unit = -1;
  while (scaled >= 1024 && unit < 4) {
    scaled /= 1024;
    ++unit;
  }
  return text + " (" + fixed(scaled, 2) + " " + units[unit] + ")";
}

std::string yes_no(bool value) {
  return value ? "yes" : "no";
}

void report_file(const std::filesystem::path& path) {
  std::error_code size_error;
  const std::uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  if (!size_error && file_bytes > progress_threshold_bytes)
    std::cerr << "reading " << path.string() << " (" << file_bytes / (1000 * 1000) << " MB)..."
              << std::endl;

  spade::matrix_market_info info;
  const auto a = spade::read_matrix_market<double>(path, &info);
  const spade::tool::matrix_summary s = spade::tool::summarize(a);

  report r;
  r.add("file", path.string());
  r.add("rows", s.rows);
  r.add("cols", s.cols);
  r.add("nnz", s.nnz);
  r.add("stored entries", info.stored_entries);
  r.add("format", info.format);
  r.add("field", info.field);
  r.add("symmetry", info.symmetry);
  const std::string not_square = "no (not square)";
  r.add("pattern symmetric", s.square ? yes_no(s.pattern_symmetric) : not_square);
  r.add("value symmetric", s.square ? yes_no(s.value_symmetric) : not_square);
  r.add("skew-symmetric", s.square ? yes_no(s.skew_symmetric && s.nnz > 0) : not_square);
  r.add("density", general(s.density) + " (" + general(100 * s.density) + " %)");
  r.add("row length min", s.row_min);
  r.add("row length mean", fixed(s.row_mean, 3));
  r.add("row length max", s.row_max);
  r.add("row length stddev", fixed(s.row_stddev, 3));
  r.add("empty rows", s.empty_rows);
  r.add("bandwidth", s.bandwidth);
  r.add("bandwidth lower", s.lower_bandwidth);
  r.add("bandwidth upper", s.upper_bandwidth);
  const double share = s.tiles ? static_cast<double>(s.nonempty_tiles) / s.tiles : 0.0;
  r.add("tiles 8x8 non-empty", std::to_string(s.nonempty_tiles) + " of " + std::to_string(s.tiles) +
                                   " (" + general(100 * share) + " %)");
  const double fill =
      s.nonempty_tiles ? static_cast<double>(s.nnz) / (s.nonempty_tiles * 64.0) : 0.0;
  r.add("tiles 8x8 mean fill", fixed(fill, 4) + " (" + fixed(64 * fill, 2) + " of 64)");

  const auto f = spade::tool::bytes_of(s, sizeof(float));
  const auto d = spade::tool::bytes_of(s, sizeof(double));
  const auto both = [](std::uint64_t single, std::uint64_t twice) {
    return "float " + bytes_text(single) + ", double " + bytes_text(twice);
  };
  r.add("bytes csr", both(f.csr, d.csr));
  r.add("bytes coo", both(f.coo, d.coo));
  r.add("bytes dense", both(f.dense, d.dense));
  r.add("bytes gcoo p=4 (planned format)", both(f.gcoo, d.gcoo));
  r.add("bytes ellr (planned format)", both(f.ellr, d.ellr));
  r.add("bytes tiled 8x8 (planned format)", both(f.tiled, d.tiled));
  r.print(std::cout);
}

int command_info(const std::vector<std::string>& files) {
  if (files.empty()) {
    std::cerr << "spade info: no file given\n\n" << usage_text;
    return exit_failure;
  }
  int status = exit_ok;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (k > 0) std::cout << '\n';
    try {
      report_file(files[k]);
    } catch (const spade::error& e) {
      std::cout.flush();
      std::cerr << "spade info: " << e.what() << '\n';
      status = exit_failure;
    }
  }
  return status;
}

int command_device() {
  std::string reason;
  if (!spade::device_available(&reason)) {
    std::cout << "no GPU: " << reason << '\n';
    return exit_no_gpu;
  }
  try {
    const spade::device_properties& p = spade::default_context().properties();
    report r;
    r.add("device", std::to_string(p.ordinal) + ": " + p.name);
    r.add("compute capability",
          std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor));
    r.add("SMs", p.sm_count);
    r.add("memory", bytes_text(p.global_memory_bytes));
    r.add("shared memory per SM", bytes_text(p.shared_memory_per_sm));
    r.add("shared memory per block (opt-in)", bytes_text(p.shared_memory_per_block_optin));
    r.add("L2 cache", bytes_text(p.l2_cache_bytes));
    r.print(std::cout);
    return exit_ok;
  } catch (const spade::error& e) {
    std::cout << "no GPU: " << e.what() << '\n';
    return exit_no_gpu;
  }
}

int run(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << usage_text;
    return exit_failure;
  }
  const std::string& command = args[0];
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << usage_text;
    return exit_ok;
  }
  if (command == "info") return command_info({args.begin() + 1, args.end()});
  if (command == "device") {
    if (args.size() > 1) {
      std::cerr << "spade device: takes no arguments\n";
      return exit_failure;
    }
    return command_device();
  }
  std::cerr << "spade: unknown command '" << command << "'\n\n" << usage_text;
  return exit_failure;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run({argv + 1, argv + argc});
  } catch (const std::exception& e) {
    // Anything a command did not expect (bad_alloc on a huge file, say) still ends cleanly.
    std::cerr << "spade: " << e.what() << '\n';
    return exit_failure;
  }
}
