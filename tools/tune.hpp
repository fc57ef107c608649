// `spade tune`: times the sparse × dense kernels on this GPU and writes its tune file.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "load_matrix.hpp"
#include "multiply.hpp"
#include "report.hpp"

namespace spade::tool {

struct tune_command_options {
  std::vector<std::string> files;
  tune_options timing;
  bool single = true;   // time float
  bool doubles = true;  // time double
  bool add = false;
  bool show = false;
  bool forget = false;
};

/// Widths from "4,32,128,512": each from tune_min_cusparse_columns to 65536.
inline std::vector<index_t> parse_columns(const std::string& text) {
  std::vector<index_t> columns;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    columns.push_back(static_cast<index_t>(parse_count("--columns", item, 65536)));
  if (columns.empty()) throw usage_error("--columns needs at least one width");
  if (const std::string problem = detail::tune_columns_problem(columns); !problem.empty())
    throw usage_error("--columns: " + problem);
  return columns;
}

/// " alg1 0.0140 alg2 0.0189": each choice's time in ms, 4 decimals.
inline std::string times_text(const std::vector<std::pair<std::string, double>>& times) {
  std::string text;
  for (const auto& [choice, ms] : times)
    text += " " + choice + " " + fixed(ms, 4);
  return text;
}

inline tune_command_options parse_tune(const std::vector<std::string>& args) {
  tune_command_options o;
  const auto value_of = [&](std::size_t& k) -> const std::string& {
    if (k + 1 >= args.size()) throw usage_error(args[k] + " needs a value");
    return args[++k];
  };
  bool only_float = false, only_double = false;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& arg = args[k];
    if (arg == "--columns") {
      o.timing.columns = parse_columns(value_of(k));
    } else if (arg == "--samples") {
      o.timing.samples = static_cast<int>(parse_count(arg, value_of(k), 10000));
    } else if (arg == "--float") {
      only_float = true;
    } else if (arg == "--double") {
      only_double = true;
    } else if (arg == "--add") {
      o.add = true;
    } else if (arg == "--show") {
      o.show = true;
    } else if (arg == "--forget") {
      o.forget = true;
    } else if (arg.starts_with("-")) {
      throw usage_error("unknown option '" + arg + "'");
    } else {
      o.files.push_back(arg);
    }
  }
  if (only_float || only_double) {
    o.single = only_float;
    o.doubles = only_double;
  }
  if (o.show && o.forget) throw usage_error("--show and --forget: give one");
  if ((o.show || o.forget) && (!o.files.empty() || o.add))
    throw usage_error(std::string(o.show ? "--show" : "--forget") + " takes no files or --add");
  return o;
}

/// A matrix `spade tune` times: its name and how to make it in T.
template <class T>
using tune_matrix = std::pair<std::string, std::function<csr<T, cpu>()>>;

/// Without files: generated matrices of the classes the planner's rules were measured on
/// (meshes, bands, blocks of dense tiles, random rows, a power-law graph), each with 10^5 to
/// 3·10^5 rows so the whole set times in about a minute.
template <class T>
std::vector<tune_matrix<T>> default_tune_set() {
  return {
      {"stencil27_48^3", [] { return generate::stencil27<T>(48, 48, 48); }},
      {"stencil7_64^3", [] { return generate::stencil7<T>(64, 64, 64); }},
      {"banded_2^18_17", [] { return generate::banded<T>(1 << 18, 8, 8, 1); }},
      {"block_diagonal_8192x16", [] { return generate::block_diagonal<T>(8192, 16, 2); }},
      {"uniform_rows_2^17_16", [] { return generate::uniform_rows<T>(1 << 17, 1 << 17, 16, 3); }},
      {"rmat_17_16", [] { return generate::rmat<T>(17, 16, 4); }},
  };
}

template <class T>
void tune_type(const tune_command_options& o, tuned_table& table, std::ostream& out) {
  std::vector<tune_matrix<T>> matrices;
  if (o.files.empty()) {
    matrices = default_tune_set<T>();
  } else {
    for (const std::string& file : o.files)
      matrices.emplace_back(std::filesystem::path(file).filename().string(),
                            [file] { return load_matrix<T>(file); });
  }
  const char* type = sizeof(T) == 8 ? "double" : "float";
  for (const auto& [name, make] : matrices) {
    const csr<T, gpu> a = to_gpu(make());
    const tune_report r = tune_spmm(a, name, table, o.timing);
    out << type << ' ' << name << " (" << a.rows() << " x " << a.cols() << ", " << a.nnz()
        << " entries)";
    if (!r.skipped.empty()) {
      out << ": skipped, " << r.skipped << '\n';
      continue;
    }
    out << ", class " << r.gcoo_class << '\n';
    for (const auto& w : r.widths) {
      out << "  N = " << w.columns << ":";
      if (w.columns >= tune_min_columns) {
        for (const auto& [kernel, ms] : w.milliseconds) {
          out << ' ' << kernel << ' ' << fixed(ms, 4) << " ms";
          if (kernel == kernels::cusparse_spmm::name) out << " (" << w.ruled_algorithm << ")";
        }
        if (w.gcoo_group_size > 0) out << " (p " << w.gcoo_group_size << ")";
        out << "; gcoo" << times_text(w.gcoo_milliseconds);
        if (!w.fastest_kernel.empty()) out << "; fastest " << w.fastest_kernel;
        out << ";";
      }
      out << " cuSPARSE" << times_text(w.cusparse_milliseconds);
      if (const auto* best = detail::fastest_of(w.cusparse_milliseconds))
        out << ", fastest " << best->first << " (the rules' " << w.ruled_algorithm << ")";
      out << "; class " << w.operand_class << '\n';
    }
    if (!r.held)
      out << "  (a timed run synchronised: some times include the host's gaps between runs)\n";
  }
}

/// Runs `spade tune`; `out` gets the report. Exit codes as the tool's (0, 1, 2 without a GPU).
inline int command_tune(const tune_command_options& o, std::ostream& out) {
  std::string reason;
  if (!device_available(&reason)) {
    out << "no GPU: " << reason << " (spade tune times kernels on the GPU it tunes for)\n";
    return 2;
  }
  const device_properties& p = default_context().properties();
  const std::string path = tuned_table_path(device_tune_key(p));
  if (path.empty())
    throw usage_error(
        "no directory for the tune file: set SPADE_CACHE_DIR, XDG_CACHE_HOME or HOME");
  if (o.forget) {
    std::error_code ec;
    const bool removed = std::filesystem::remove(path, ec);
    if (ec) throw usage_error("cannot delete " + path + ": " + ec.message());
    out << (removed ? "deleted " : "no tune file at ") << path << '\n';
    forget_tuned_tables();
    return 0;
  }
  if (o.show) {
    const tuned_table table = detail::read_tuned_table(path);
    if (!table.problem.empty()) {
      out << "ignored by the planner: " << table.problem << '\n';
      return 1;
    }
    if (table.size() == 0) {
      out << "no tune file at " << path << " (the planner's rules apply)\n";
      return 0;
    }
    out << path << '\n' << table.to_text();
    return 0;
  }
  tuned_table table = tuned_table_to_fill(p, o.add);
  if (o.single) tune_type<float>(o, table, out);
  if (o.doubles) tune_type<double>(o, table, out);
  save_tuned_table(table, path);
  out << "wrote " << table.size() << " tuned entries to " << path << '\n';
  return 0;
}

}  // namespace spade::tool
