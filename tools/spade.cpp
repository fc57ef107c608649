// The `spade` command-line tool: `spade info` describes matrix files, `spade device` the GPU,
// `spade multiply` plans, runs, times and checks one product, `spade tune` times the sparse × dense
// kernels on this GPU for the planner.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "load_matrix.hpp"
#include "matrix_summary.hpp"
#include "multiply.hpp"
#include "report.hpp"
#include "sparsity_plot.hpp"
#include "tune.hpp"

namespace {

using spade::tool::fixed;
using spade::tool::general;
using spade::tool::report;

// Exit codes: scripts/test.sh runs the gpu tests only when `spade device` exits 0.
constexpr int exit_ok = 0;
constexpr int exit_failure = 1;
constexpr int exit_no_gpu = 2;

constexpr const char* usage_text =
    "usage: spade <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  info <file.mtx[.gz]>...  describe Matrix Market files: shape, symmetry, row lengths,\n"
    "                           bandwidth, 8x8 tiles and the bytes each Spade format needs\n"
    "      --plot FILE.png      (one matrix) also write a picture: its spy plot and, below,\n"
    "                           the histogram of row lengths\n"
    "  device                   describe the CUDA device; exits 2 when there is none\n"
    "      --profile            print its profile (properties and thresholds) as JSON, for\n"
    "                           multiply --profile on machines without it\n"
    "  multiply <A.mtx[.gz]> [B.mtx[.gz] | --dense N | --vector] [options]\n"
    "                           plan and time A*B on the GPU (on the CPU without one):\n"
    "                           B from a file (sparse x sparse), a random dense matrix of N\n"
    "                           columns (default --dense 32) or a random vector\n"
    "      --kernel K           force kernel K (eigen_product, cublas_gemm, cusparse_spmm,\n"
    "                           cusparse_spmv, cublas_gemv, cusparse_spgemm, gcoo_spmm,\n"
    "                           gcoo_spmm_paper, ellr_spmv, csr_rowwise, hash_spgemm,\n"
    "                           tiled_spgemm, tiled_spgemm_fp16, tiled_spmm,\n"
    "                           tiled_spmm_tf32) if it is a candidate for the product;\n"
    "                           else list the candidates, exit 1\n"
    "      --check              report the max relative error against spade::reference\n"
    "                           (on the GPU; on the CPU the product is the reference)\n"
    "      --explain            print the plan: rule, candidates, conversions, choice\n"
    "      --profile P          with --explain: print the gpu plan for device profile P\n"
    "                           (h100, h200 or a file from `spade device --profile`)\n"
    "                           without running it; works without a GPU\n"
    "      --float, --double    scalar type (default double)\n"
    "      --repeat R           time R runs after one warm-up, report the median (default 5)\n"
    "  tune [FILE.mtx[.gz]...] [options]\n"
    "                           time cuSPARSE SpMM (ALG1, ALG2, ALG3), gcoo_spmm (p = 1, 2,\n"
    "                           4, 8) and tiled_spmm on each matrix (without files: a built-in\n"
    "                           generated set) and write the fastest per operand class to this\n"
    "                           GPU's tune file, which the planner then follows (the algorithm\n"
    "                           for the matrices measured only; docs/planner.md)\n"
    "      --columns LIST       widths of B, from 2 (default 2,4,8,32,128,512); below 16\n"
    "                           only cuSPARSE's algorithms are timed\n"
    "      --float, --double    only this scalar type (default both)\n"
    "      --samples S          timed runs per kernel (GPU time), median kept (default 15)\n"
    "      --add                add to the tune file instead of replacing it\n"
    "      --show               print the tune file; --forget deletes it\n"
    "  help, --help, -h         show this text\n";

/// "6212 B (6.07 KiB)": exact count first, for scripts; binary units for people.
std::string bytes_text(double bytes) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB"};
  // Whole bytes while a double holds them exactly (2^53); beyond, in floating point.
  std::string text = bytes < 0x1p53 ? std::to_string(static_cast<std::uint64_t>(bytes)) + " B"
                                    : general(bytes) + " B";
  if (bytes < 1024) return text;
  double scaled = bytes;
  int unit = -1;
  while (scaled >= 1024 && unit < 6) {
    scaled /= 1024;
    ++unit;
  }
  return text + " (" + fixed(scaled, 2) + " " + units[unit] + ")";
}

std::string yes_no(bool value) {
  return value ? "yes" : "no";
}

// "512 x 341": a picture's size in pixels.
std::string pixels_text(int width, int height) {
  return std::to_string(width) + " x " + std::to_string(height);
}

void report_file(const std::filesystem::path& path, const std::string& plot_path) {
  auto loaded = spade::tool::load_entries(path);
  const spade::matrix_market_info& info = loaded.info;
  spade::tool::matrix_summary s;
  std::optional<spade::tool::sparsity_plot> plot;
  if (!plot_path.empty()) plot.emplace(info.rows, info.cols);
  if (loaded.has_csr) {
    s = spade::tool::summarize(loaded.a);
    if (plot) {
      const auto& row_ptr = loaded.a.row_ptr();
      const auto& col_idx = loaded.a.col_idx();
      for (spade::index_t i = 0; i < loaded.a.rows(); ++i) {
        plot->add_rows(static_cast<std::uint64_t>(row_ptr[i + 1] - row_ptr[i]));
        for (spade::index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
          plot->add_entry(i, col_idx[k]);
      }
    }
  } else {
    // A shape far larger than the entries: no per-row arrays (see per_row_arrays_fit).
    std::vector<spade::tool::summary_entry<double>> entries;
    entries.reserve(loaded.expanded_entries);
    spade::detail::mm::for_each_entry(loaded.h, loaded.chunks, [&](auto i, auto j, double v) {
      entries.push_back({i, j, v});
    });
    loaded.chunks.clear();
    if (plot) {
      // Row lengths from the sorted row indices (duplicates of one (i, j) count once, as in the
      // summary); the rows no entry names are empty.
      std::vector<std::pair<spade::index_t, spade::index_t>> cells;
      cells.reserve(entries.size());
      for (const auto& e : entries)
        cells.emplace_back(e.row, e.col);
      std::sort(cells.begin(), cells.end());
      cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
      std::uint64_t named_rows = 0;
      for (std::size_t k = 0; k < cells.size();) {
        std::size_t end = k;
        for (; end < cells.size() && cells[end].first == cells[k].first; ++end)
          plot->add_entry(cells[end].first, cells[end].second);
        plot->add_rows(end - k);
        ++named_rows;
        k = end;
      }
      plot->add_rows(0, static_cast<std::uint64_t>(info.rows) - named_rows);
    }
    s = spade::tool::summarize_entries(info.rows, info.cols, std::move(entries));
  }
  const std::uint64_t summed = loaded.expanded_entries - s.nnz;

  report r;
  r.add("file", path.string());
  r.add("rows", s.rows);
  r.add("cols", s.cols);
  r.add("nnz", summed == 0 ? std::to_string(s.nnz)
                           : std::to_string(s.nnz) + " (" + std::to_string(summed) +
                                 " duplicate entries summed)");
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
  const auto both = [](double single, double twice) {
    return "float " + bytes_text(single) + ", double " + bytes_text(twice);
  };
  r.add("bytes csr", both(f.csr, d.csr));
  r.add("bytes coo", both(f.coo, d.coo));
  r.add("bytes dense", both(f.dense, d.dense));
  r.add("bytes gcoo p=4", both(f.gcoo, d.gcoo));
  r.add("bytes ellr (planned format)", both(f.ellr, d.ellr));
  r.add("bytes tiled 8x8 (planned format)", both(f.tiled, d.tiled));
  if (plot) {
    plot->write_png(plot_path);
    const double cells_down = static_cast<double>(info.rows) / plot->spy_cells_down();
    const double cells_across = static_cast<double>(info.cols) / plot->spy_cells_across();
    const int zoom = plot->spy_width() / plot->spy_cells_across();
    const std::string scale =
        zoom > 1 ? std::to_string(zoom) + " x " + std::to_string(zoom) + " pixels per cell"
                 : "a pixel per " + general(cells_down) + " x " + general(cells_across) + " cells";
    r.add("plot", plot_path + " (" + pixels_text(plot->width(), plot->height()) + " px)");
    r.add("plot top", "spy plot, " + pixels_text(plot->spy_width(), plot->spy_height()) + " px, " +
                          scale + "; darker = more entries (log scale), white = none");
    std::string bins;
    for (std::size_t b = 0; b < plot->bins().size(); ++b) {
      if (plot->bins()[b] == 0) continue;
      if (!bins.empty()) bins += ", ";
      bins += spade::tool::sparsity_plot::bin_label(b) + ": " + std::to_string(plot->bins()[b]);
    }
    r.add("plot bottom",
          "rows per row length, one bar per bin (0, 1, 2-3, 4-7, ...; height "
          "linear, tallest = " +
              std::to_string(plot->bins().empty()
                                 ? 0
                                 : *std::max_element(plot->bins().begin(), plot->bins().end())) +
              " rows)");
    r.add("row lengths", bins.empty() ? "no rows" : bins);
  }
  r.print(std::cout);
}

int command_info(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string plot_path;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--plot") {
      if (k + 1 == args.size() || args[k + 1].empty()) {
        std::cerr << "spade info: --plot needs a file name (the PNG to write)\n";
        return exit_failure;
      }
      plot_path = args[++k];
    } else {
      files.push_back(args[k]);
    }
  }
  if (files.empty()) {
    std::cerr << "spade info: no file given\n\n" << usage_text;
    return exit_failure;
  }
  if (!plot_path.empty() && files.size() > 1) {
    std::cerr << "spade info: --plot draws one matrix; " << files.size() << " files given\n";
    return exit_failure;
  }
  int status = exit_ok;
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (k > 0) std::cout << '\n';
    try {
      report_file(files[k], plot_path);
    } catch (const spade::error& e) {
      std::cout.flush();
      std::cerr << "spade info: " << e.what() << '\n';
      status = exit_failure;
    }
  }
  return status;
}

int command_device(bool profile) {
  std::string reason;
  if (!spade::device_available(&reason)) {
    std::cout << "no GPU: " << reason << '\n';
    return exit_no_gpu;
  }
  try {
    const spade::device_properties& p = spade::default_context().properties();
    if (profile) {
      std::cout << spade::to_json(spade::profile_of(p));
      return exit_ok;
    }
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
    const bool profile = args.size() == 2 && args[1] == "--profile";
    if (args.size() > 1 && !profile) {
      std::cerr << "spade device: takes no arguments but --profile\n";
      return exit_failure;
    }
    return command_device(profile);
  }
  if (command == "multiply") {
    try {
      const auto options = spade::tool::parse_multiply({args.begin() + 1, args.end()});
      if (options.help) {
        std::cout << usage_text;
        return exit_ok;
      }
      return spade::tool::command_multiply(options, std::cout);
    } catch (const std::runtime_error& e) {  // spade::error and spade::tool::usage_error
      std::cout.flush();
      std::cerr << "spade multiply: " << e.what() << '\n';
      return exit_failure;
    }
  }
  if (command == "tune") {
    try {
      return spade::tool::command_tune(spade::tool::parse_tune({args.begin() + 1, args.end()}),
                                       std::cout);
    } catch (const std::runtime_error& e) {
      std::cout.flush();
      std::cerr << "spade tune: " << e.what() << '\n';
      return exit_failure;
    }
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
