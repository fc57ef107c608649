// The spade command-line tool, run as a subprocess: its report lines and its exit codes.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "../../tools/matrix_summary.hpp"
#include "../../tools/multiply.hpp"
#include "../../tools/sparsity_plot.hpp"
#include "test_support.hpp"

#ifndef SPADE_TOOL_PATH

TEST_CASE("spade tool") {
  MESSAGE("the spade tool is not built (SPADE_BUILD_TOOLS=OFF): nothing to test");
}

#else

namespace {

struct outcome {
  int exit_code = -1;
  std::string text;
};

// Runs `spade <arguments>` through the shell; `streams` picks what is captured, e.g.
// "2>/dev/null" for stdout only or "2>&1 >/dev/null" for stderr only.
outcome run_tool(const std::string& arguments, const std::string& streams = "2>/dev/null") {
  const std::string command = "'" SPADE_TOOL_PATH "' " + arguments + " " + streams;
  outcome result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    result.text.append(buffer, got);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

// Built by appending: GCC 12 gives a false -Wrestrict for "'" + std::string + "'".
std::string quoted(const std::filesystem::path& path) {
  std::string text(1, '\'');
  text += path.string();
  text += '\'';
  return text;
}

// The `key: value` lines of a report, values trimmed.
std::map<std::string, std::string> fields_of(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      const std::size_t value = line.find_first_not_of(' ', colon + 1);
      fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
    }
    begin = end + 1;
  }
  return fields;
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("spade_test_tool_" + name);
}

// What --check reports: the max relative error on the GPU (below `tolerance`); on the CPU, where
// the product and the reference are both Eigen, a line saying the check was skipped and why.
void check_reported(std::map<std::string, std::string>& fields, double tolerance) {
  if (spade::device_available()) {
    CHECK(fields.count("check") == 0);
    REQUIRE(fields.count("max relative error") == 1);
    CHECK(std::stod(fields["max relative error"]) < tolerance);
  } else {
    CHECK(fields.count("max relative error") == 0);
    CHECK(fields["check"] ==
          "skipped \u2014 on the CPU the product runs on Eigen, which is also the reference");
  }
}

// "5.63 µs": a number of at least 3 significant digits, a space, ns, µs, ms or s.
void check_time_text(const std::string& text) {
  CAPTURE(text);
  const std::size_t space = text.find(' ');
  REQUIRE(space != std::string::npos);
  const std::string number = text.substr(0, space);
  const std::string unit = text.substr(space + 1);
  CHECK((unit == "ns" || unit == "\u00b5s" || unit == "ms" || unit == "s"));
  REQUIRE(number.find_first_not_of("0123456789.") == std::string::npos);
  std::string digits;
  for (const char c : number)
    if (c != '.') digits += c;
  const std::size_t first = digits.find_first_not_of('0');
  CHECK(first != std::string::npos);
  if (first != std::string::npos) CHECK(digits.size() - first >= 3);
  CHECK(std::stod(number) > 0);
}

}  // namespace

TEST_CASE("spade info describes bcsstk03") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const outcome run = run_tool("info " + quoted(file));
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  auto fields = fields_of(run.text);
  CHECK(fields["file"] == file.string());
  CHECK(fields["rows"] == "112");
  CHECK(fields["cols"] == "112");
  CHECK(fields["nnz"] == "640");
  CHECK(fields["stored entries"] == "376");
  CHECK(fields["field"] == "real");
  CHECK(fields["symmetry"] == "symmetric");
  CHECK(fields["pattern symmetric"] == "yes");
  CHECK(fields["value symmetric"] == "yes");
  CHECK(fields["empty rows"] == "0");
  CHECK(fields.count("bytes csr") == 1);
  CHECK(fields.count("bytes gcoo p=4") == 1);
  // 113 row pointers + 640 (column, value) pairs.
  CHECK(fields["bytes csr"].starts_with("float " + std::to_string(113 * 4 + 640 * 8) + " B"));
}

TEST_CASE("spade info measures a generated matrix as the generator defines it") {
  // stencil7 on 3³: rows of 4..7 entries, neighbours up to a plane (9) away on both sides.
  const auto path = temp_file("stencil7.mtx");
  spade::write_matrix_market(path, spade::generate::stencil7<double>(3, 3, 3));
  auto fields = fields_of(run_tool("info " + quoted(path)).text);
  CHECK(fields["rows"] == "27");
  CHECK(fields["nnz"] == std::to_string(7 * 27 - 6 * 9));
  CHECK(fields["symmetry"] == "general");
  CHECK(fields["pattern symmetric"] == "yes");
  CHECK(fields["value symmetric"] == "yes");
  CHECK(fields["row length min"] == "4");
  CHECK(fields["row length max"] == "7");
  CHECK(fields["bandwidth"] == "9");
  CHECK(fields["bandwidth lower"] == "9");
  CHECK(fields["bandwidth upper"] == "9");
  // 27×27 has 4×4 tiles of 8×8; entries reach 9 columns from the diagonal, which misses only
  // the two corner tiles (rows 0–7 reach column 16 < 24, and symmetrically).
  CHECK(fields["tiles 8x8 non-empty"].starts_with("14 of 16"));

  const auto banded = temp_file("banded.mtx");
  spade::write_matrix_market(banded, spade::generate::banded<double>(20, 2, 3, 1));
  fields = fields_of(run_tool("info " + quoted(banded)).text);
  CHECK(fields["bandwidth"] == "3");
  CHECK(fields["bandwidth lower"] == "2");
  CHECK(fields["bandwidth upper"] == "3");
  CHECK(fields["pattern symmetric"] == "no");

  const auto wide = temp_file("wide.mtx");
  spade::write_matrix_market(wide, spade::random_sparse<double>(20, 30, 0.2, 1));
  fields = fields_of(run_tool("info " + quoted(wide)).text);
  CHECK(fields["nnz"] == "120");
  CHECK(fields["pattern symmetric"] == "no (not square)");
  std::filesystem::remove(path);
  std::filesystem::remove(banded);
  std::filesystem::remove(wide);
}

TEST_CASE("spade reports bad input on stderr with exit code 1") {
  const auto missing = temp_file("does_not_exist.mtx");
  std::filesystem::remove(missing);
  outcome run = run_tool("info " + quoted(missing), "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find(missing.filename().string()) != std::string::npos);

  const auto malformed = temp_file("malformed.mtx");
  std::ofstream(malformed) << "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n";
  run = run_tool("info " + quoted(malformed), "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find(malformed.filename().string()) != std::string::npos);
  std::filesystem::remove(malformed);

  run = run_tool("frobnicate", "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find("unknown command") != std::string::npos);

  CHECK(run_tool("").exit_code == 1);
  CHECK(run_tool("info").exit_code == 1);
  run = run_tool("--help");
  CHECK(run.exit_code == 0);
  CHECK(run.text.find("usage: spade") != std::string::npos);
}

TEST_CASE("spade device exits 0 with a device or 2 with the reason") {
  const outcome run = run_tool("device");
  CAPTURE(run.text);
  if (spade::device_available()) {
    CHECK(run.exit_code == 0);
    CHECK(run.text.find("compute capability") != std::string::npos);
  } else {
    CHECK(run.exit_code == 2);
    CHECK(run.text.starts_with("no GPU: "));
  }
}

TEST_CASE("spade tune: bad options exit 1 naming them; --show and --forget need a GPU") {
  // Option errors come before the device is looked at, so they read the same everywhere.
  const std::pair<const char*, const char*> refused[] = {
      {"tune --columns 1",
       "spade tune: --columns: width 1 is below tune_min_cusparse_columns (2), where the planner "
       "uses no tuned choice"},
      {"tune --columns 4,3", "--columns: widths 4 and 3 fall in one operand class (n4): give one"},
      {"tune --columns 32,x", "--columns takes a whole number from 1 to 65536, not 'x'"},
      {"tune --samples 0", "--samples takes a whole number"},
      {"tune --show --forget", "--show and --forget: give one"},
      {"tune --show a.mtx", "--show takes no files or --add"},
      {"tune --fast", "unknown option '--fast'"},
  };
  outcome run;
  for (const auto& [args, message] : refused) {
    CAPTURE(args);
    run = run_tool(args, "2>&1 >/dev/null");
    CHECK(run.exit_code == 1);
    CHECK(run.text.find(message) != std::string::npos);
  }

  // --show in an empty cache directory: no file with a GPU, the reason without one.
  const spade::testing::scratch_cache_dir cache("spade-tool-tune-");
  // Narrow widths, from 2, are taken (no usage error: it goes on to the device).
  CHECK(run_tool("tune --columns 2,4,8 --show", "2>&1").exit_code != 1);
  run = run_tool("tune --show");
  CAPTURE(run.text);
  if (spade::device_available()) {
    CHECK(run.exit_code == 0);
    CHECK(run.text.find("no tune file at " + cache.dir.string() + "/tune-") != std::string::npos);
  } else {
    CHECK(run.exit_code == 2);
    CHECK(run.text.starts_with("no GPU: "));
  }
}

// `spade multiply` runs on the GPU when there is one, else on the CPU: the checks below hold
// either way, with the kernel names of the space that ran.
TEST_CASE("spade multiply: sparse x dense with --check and --explain") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const outcome run = run_tool("multiply " + quoted(file) + " --dense 8 --check --explain");
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.text.find("rule \"sparse x dense\"") != std::string::npos);
  CHECK(run.text.find("candidates (in order)") != std::string::npos);
  auto fields = fields_of(run.text);
  CHECK(fields["B"] == "random dense 112x8");
  CHECK(fields["result"] == "112x8");
  CHECK(fields["scalar"] == "double");
  CHECK(fields["device"].starts_with(spade::device_available() ? "gpu" : "cpu (no GPU: "));
  CHECK(fields["flop"] == std::to_string(2 * 640 * 8) + " (2 * nnz(A) * N)");
  CHECK(fields["runs"] == "5 timed after 1 warm-up");
  REQUIRE(fields.count("time median") == 1);
  check_time_text(fields["time median"]);
  CHECK(fields.count("GFLOP/s") == 1);
  check_reported(fields, 1e-12);
}

TEST_CASE("spade multiply: sparse x vector, in float, without --check") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  outcome run = run_tool("multiply " + quoted(file) + " --vector --repeat 3 --explain");
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.text.find("rule \"sparse x vector\"") != std::string::npos);
  auto fields = fields_of(run.text);
  CHECK(fields["B"] == "random vector of 112");
  CHECK(fields["result"] == "112x1");
  CHECK(fields["flop"] == "1280 (2 * nnz(A))");
  CHECK(fields["runs"] == "3 timed after 1 warm-up");
  CHECK(fields.count("max relative error") == 0);
  CHECK(fields.count("check") == 0);
  check_time_text(fields["time median"]);

  run = run_tool("multiply " + quoted(file) + " --vector --float --check");
  REQUIRE(run.exit_code == 0);
  fields = fields_of(run.text);
  CHECK(fields["scalar"] == "float");
  check_reported(fields, 1e-5);
}

TEST_CASE("spade multiply: sparse x sparse counts products on the host") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const auto a = spade::read_matrix_market<double>(file);
  std::uint64_t products = 0;  // Σ over entries a_ik of nnz(row k)
  for (const spade::index_t k : a.col_idx())
    products += static_cast<std::uint64_t>(a.row_ptr()[k + 1] - a.row_ptr()[k]);
  const Eigen::SparseMatrix<double, Eigen::RowMajor> e = spade::to_eigen(a);
  const Eigen::SparseMatrix<double, Eigen::RowMajor> square = e * e;

  const outcome run = run_tool("multiply " + quoted(file) + " " + quoted(file) + " --check");
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  auto fields = fields_of(run.text);
  CHECK(fields["flop"] ==
        std::to_string(2 * products) + " (2 * " + std::to_string(products) + " products)");
  CHECK(fields["result"] == "112x112, nnz " + std::to_string(square.nonZeros()));
  check_reported(fields, 1e-12);
}

TEST_CASE("spade multiply: --kernel forces a candidate and rejects the others") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const bool gpu = spade::device_available();
  const std::string spmm = gpu ? "cusparse_spmm" : "eigen_product";
  outcome run = run_tool("multiply " + quoted(file) + " --dense 4 --kernel " + spmm + " --check");
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  CHECK(fields_of(run.text)["kernel"] == spmm + " (forced)");

  // SpGEMM cannot compute sparse x dense in either space: the message lists what can.
  run = run_tool("multiply " + quoted(file) + " --dense 4 --kernel cusparse_spgemm",
                 "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find("cusparse_spgemm") != std::string::npos);
  const auto candidates_at = run.text.find("candidates: ");
  CHECK(candidates_at != std::string::npos);
  CHECK(run.text.find(spmm, candidates_at) != std::string::npos);

  run =
      run_tool("multiply " + quoted(file) + " --vector --kernel no_such_kernel", "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find("unknown kernel 'no_such_kernel'") != std::string::npos);
  CHECK(run.text.find(gpu ? "cusparse_spmv" : "eigen_product") != std::string::npos);
}

// Spade's own GPU kernels (gcoo_spmm, the paper's baseline, ellr_spmv) are known by name: they
// run where there is a GPU; without one the message says so and names the cpu candidates.
TEST_CASE("spade multiply: --kernel takes Spade's GPU kernels") {
  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const bool gpu = spade::device_available();
  for (const auto& [kernel, operand] :
       {std::pair<std::string, std::string>{"gcoo_spmm", "--dense 4"},
        {"gcoo_spmm_paper", "--dense 4"},
        {"ellr_spmv", "--dense 4"},
        {"ellr_spmv", "--vector"}}) {
    CAPTURE(kernel);
    CAPTURE(operand);
    const std::string arguments =
        "multiply " + quoted(file) + " " + operand + " --kernel " + kernel + " --check";
    if (gpu) {
      const outcome run = run_tool(arguments);
      CAPTURE(run.text);
      REQUIRE(run.exit_code == 0);
      auto fields = fields_of(run.text);
      CHECK(fields["kernel"] == kernel + " (forced)");
      check_reported(fields, 1e-12);
    } else {
      const outcome run = run_tool(arguments, "2>&1 >/dev/null");
      CAPTURE(run.text);
      CHECK(run.exit_code == 1);
      CHECK(run.text.find("unknown kernel") == std::string::npos);
      CHECK(run.text.find("kernel '" + kernel + "' runs on the GPU and there is no GPU here") !=
            std::string::npos);
      const std::string rule = operand == "--vector" ? "sparse x vector" : "sparse x dense";
      CHECK(run.text.find(rule + " runs on the cpu; candidates: eigen_product") !=
            std::string::npos);
    }
  }
}

TEST_CASE("spade multiply: bad input exits 1 with a message on stderr") {
  const auto missing = temp_file("missing_multiply.mtx");
  std::filesystem::remove(missing);
  outcome run = run_tool("multiply " + quoted(missing), "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find(missing.filename().string()) != std::string::npos);

  const auto file = spade::testing::data_dir() / "matrices" / "bcsstk03.mtx.gz";
  const auto other = spade::testing::data_dir() / "matrices" / "cage10.mtx.gz";
  run = run_tool("multiply " + quoted(file) + " " + quoted(other), "2>&1 >/dev/null");
  CHECK(run.exit_code == 1);
  CHECK(run.text.find("112x112") != std::string::npos);
  for (const std::string arguments :
       {"multiply", "multiply --dense 8", "multiply A.mtx --dense 0", "multiply A.mtx --repeat",
        "multiply A.mtx --vector --dense 3", "multiply A.mtx --frobnicate"}) {
    CAPTURE(arguments);
    run = run_tool(arguments, "2>&1 >/dev/null");
    CHECK(run.exit_code == 1);
    CHECK(run.text.starts_with("spade multiply: "));
  }
  run = run_tool("--help");
  CHECK(run.text.find("multiply <A.mtx[.gz]>") != std::string::npos);
}

#endif

namespace {

// Every kernel the planner lists for a product the tool builds (A csr, B dense, vector or csr,
// in Space) is one `--kernel` accepts: evaluator_for finds it (throws usage_error if not).
template <class A, class B>
void every_candidate_is_accepted() {
  using E = std::remove_cvref_t<decltype(std::declval<const A&>() * std::declval<const B&>())>;
  std::vector<std::string> names;
  [&]<class... Cs>(spade::plan::candidates<Cs...>) {
    (names.emplace_back(Cs::kernel::name), ...);
  }(typename spade::plan_of<E>::candidates{});
  REQUIRE(!names.empty());
  for (const std::string& name : names) {
    CAPTURE(name);
    spade::tool::evaluator<E> chosen = nullptr;
    CHECK_NOTHROW(chosen = spade::tool::evaluator_for<E>(name));
    const bool found = chosen != nullptr;
    CHECK(found);
  }
}

template <class Space, class T>
void tool_products_accept_their_candidates() {
  using spade::tool::to_space;
  using A = decltype(to_space<Space>(std::declval<const spade::csr<T, spade::cpu>&>()));
  using D = decltype(to_space<Space>(spade::random_dense<T>(1, 1, 1)));
  using V = decltype(to_space<Space>(spade::random_vector<T>(1, 1)));
  every_candidate_is_accepted<A, D>();
  every_candidate_is_accepted<A, V>();
  every_candidate_is_accepted<A, A>();
}

}  // namespace

TEST_CASE("spade multiply --kernel knows every candidate of the planner") {
  tool_products_accept_their_candidates<spade::gpu, double>();
  tool_products_accept_their_candidates<spade::gpu, float>();
  tool_products_accept_their_candidates<spade::cpu, double>();
  tool_products_accept_their_candidates<spade::cpu, float>();
}

TEST_CASE("spade multiply prints times with 3 significant digits") {
  using spade::tool::duration_text;
  CHECK(duration_text(4.0e-7) == "400 ns");
  CHECK(duration_text(4.123e-7) == "412 ns");
  CHECK(duration_text(4.0e-6) == "4.00 \u00b5s");
  CHECK(duration_text(4.123e-4) == "412 \u00b5s");
  CHECK(duration_text(5.63e-6) == "5.63 \u00b5s");
  CHECK(duration_text(1.0e-3) == "1.00 ms");
  CHECK(duration_text(0.0123456) == "12.3 ms");
  CHECK(duration_text(0.99996) == "1000 ms");
  CHECK(duration_text(2.5) == "2.50 s");
  CHECK(duration_text(1234.5) == "1234 s");
}

// A header may claim a shape whose dense size passes 2^64 bytes: the sizes must not wrap.
TEST_CASE("spade info's byte counts do not wrap on absurd shapes") {
  spade::tool::matrix_summary s;
  s.rows = 2000000000;
  s.cols = 2000000000;
  s.nnz = 1;
  s.row_max = 1;
  s.nonempty_tiles = 1;
  const auto d = spade::tool::bytes_of(s, sizeof(double));
  CHECK(d.dense == doctest::Approx(3.2e19));
  CHECK(d.csr == doctest::Approx(8000000004.0 + 12.0));
  const auto f = spade::tool::bytes_of(s, sizeof(float));
  CHECK(f.dense == doctest::Approx(1.6e19));  // 16000000000000000000 wrapped to garbage before
}

#ifdef SPADE_TOOL_PATH
// 2e9 × 2e9 with one entry: per-row arrays would take ~48 GB; the entries path takes none.
TEST_CASE("spade info summarizes an absurd shape with few entries from its entries") {
  const auto path = temp_file("absurd.mtx");
  std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n"
                         "2000000000 2000000000 1\n2000000000 5 3.5\n";
  const outcome run = run_tool("info " + quoted(path));
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  auto fields = fields_of(run.text);
  CHECK(fields["rows"] == "2000000000");
  CHECK(fields["nnz"] == "1");
  CHECK(fields["empty rows"] == "1999999999");
  CHECK(fields["row length min"] == "0");
  CHECK(fields["row length max"] == "1");
  CHECK(fields["bandwidth lower"] == "1999999995");
  CHECK(fields["bandwidth upper"] == "0");
  CHECK(fields["tiles 8x8 non-empty"].starts_with("1 of 62500000000000000"));
  std::filesystem::remove(path);
}

TEST_CASE("spade info says when duplicate entries were summed") {
  // Symmetric: (2,1) twice and (1,2) once all land on (2,1) and (1,2) after expansion:
  // 7 expanded entries, 3 positions, 4 summed away.
  const auto dup = temp_file("duplicates.mtx");
  std::ofstream(dup) << "%%MatrixMarket matrix coordinate real symmetric\n4 4 4\n"
                        "1 1 1\n2 1 2\n1 2 3\n2 1 4\n";
  auto fields = fields_of(run_tool("info " + quoted(dup)).text);
  CHECK(fields["nnz"] == "3 (4 duplicate entries summed)");
  CHECK(fields["stored entries"] == "4");
  CHECK(fields["value symmetric"] == "yes");

  const auto plain = temp_file("no_duplicates.mtx");
  std::ofstream(plain) << "%%MatrixMarket matrix coordinate real general\n4 4 3\n"
                          "1 1 1\n2 1 2\n1 2 3\n";
  const outcome run = run_tool("info " + quoted(plain));
  CHECK(run.text.find("summed") == std::string::npos);
  fields = fields_of(run.text);
  CHECK(fields["nnz"] == "3");
  CHECK(fields["stored entries"] == "3");
  std::filesystem::remove(dup);
  std::filesystem::remove(plain);
}
#endif

namespace {
void check_same_summary(const spade::csr<double, spade::cpu>& a) {
  std::vector<spade::tool::summary_entry<double>> entries;
  for (spade::index_t i = 0; i < a.rows(); ++i)
    for (auto k = a.row_ptr()[i]; k < a.row_ptr()[i + 1]; ++k)
      entries.push_back({i, a.col_idx()[k], a.values()[k]});
  // A repeated position summed away must not change anything: split the first entry in two.
  if (!entries.empty()) {
    auto half = entries.front();
    half.value /= 2;
    entries.front().value -= half.value;
    entries.push_back(half);
  }
  const auto x = spade::tool::summarize(a);
  const auto y = spade::tool::summarize_entries(a.rows(), a.cols(), entries);
  CHECK(x.nnz == y.nnz);
  CHECK(x.pattern_symmetric == y.pattern_symmetric);
  CHECK(x.value_symmetric == y.value_symmetric);
  CHECK(x.skew_symmetric == y.skew_symmetric);
  CHECK(x.row_min == y.row_min);
  CHECK(x.row_max == y.row_max);
  CHECK(x.row_mean == doctest::Approx(y.row_mean));
  CHECK(x.row_stddev == doctest::Approx(y.row_stddev));
  CHECK(x.empty_rows == y.empty_rows);
  CHECK(x.bandwidth == y.bandwidth);
  CHECK(x.lower_bandwidth == y.lower_bandwidth);
  CHECK(x.upper_bandwidth == y.upper_bandwidth);
  CHECK(x.tiles == y.tiles);
  CHECK(x.nonempty_tiles == y.nonempty_tiles);
}
}  // namespace

namespace {

// The picture's pixels back from its PNG file: the chunks walked, IDAT inflated with zlib, the
// filter byte of every scanline checked to be 0 (what write_png writes).
struct decoded_png {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

std::uint32_t big_endian(const std::string& bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t k = 0; k < 4; ++k)
    v = v << 8 | static_cast<std::uint8_t>(bytes[at + k]);
  return v;
}

decoded_png read_png(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 8);
  CHECK(bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  decoded_png png;
  std::string idat;
  bool ended = false;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const std::uint32_t length = big_endian(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    const std::string data = bytes.substr(at + 8, length);
    const std::uint32_t crc = big_endian(bytes, at + 8 + length);
    CHECK(crc == static_cast<std::uint32_t>(
                     crc32(0L, reinterpret_cast<const Bytef*>(bytes.data() + at + 4), 4 + length)));
    if (type == "IHDR") {
      png.width = big_endian(data, 0);
      png.height = big_endian(data, 4);
      CHECK(static_cast<int>(data[8]) == 8);  // bits per channel
      CHECK(static_cast<int>(data[9]) == 2);  // RGB
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + length;
  }
  CHECK(ended);
  const std::size_t stride = 1 + 3 * std::size_t{png.width};
  std::vector<std::uint8_t> raw(stride * png.height);
  uLongf raw_size = static_cast<uLongf>(raw.size());
  REQUIRE(uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                     static_cast<uLong>(idat.size())) == Z_OK);
  REQUIRE(raw_size == raw.size());
  for (std::uint32_t y = 0; y < png.height; ++y) {
    CHECK(raw[y * stride] == 0);
    png.rgb.insert(png.rgb.end(), raw.begin() + static_cast<std::ptrdiff_t>(y * stride + 1),
                   raw.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride));
  }
  return png;
}

std::array<int, 3> pixel(const decoded_png& png, std::uint32_t x, std::uint32_t y) {
  const std::size_t at = (std::size_t{y} * png.width + x) * 3;
  return {png.rgb[at], png.rgb[at + 1], png.rgb[at + 2]};
}

}  // namespace

TEST_CASE("sparsity_plot counts entries per pixel and rows per power-of-two length") {
  // 1000 x 500 at side 100: pixels of 10 x 10 cells on a 50 x 100 grid.
  spade::tool::sparsity_plot plot(1000, 500, 100);
  CHECK(plot.spy_cells_across() == 50);
  CHECK(plot.spy_cells_down() == 100);
  CHECK(plot.spy_width() == 50);  // no zoom: more cells than pixels
  plot.add_entry(0, 0);
  plot.add_entry(9, 9);
  plot.add_entry(10, 0);
  plot.add_entry(999, 499);
  CHECK(plot.pixel_count(0, 0) == 2);
  CHECK(plot.pixel_count(0, 1) == 1);
  CHECK(plot.pixel_count(49, 99) == 1);
  CHECK(plot.pixel_count(1, 0) == 0);
  for (std::uint64_t length : {0, 1, 2, 3, 4, 7, 8, 1000})
    plot.add_rows(length);
  plot.add_rows(0, 5);
  // bins: 0 | 1 | 2-3 | 4-7 | 8-15 | ... | 512-1023
  REQUIRE(plot.bins().size() == 11);
  CHECK(plot.bins()[0] == 6);
  CHECK(plot.bins()[1] == 1);
  CHECK(plot.bins()[2] == 2);
  CHECK(plot.bins()[3] == 2);
  CHECK(plot.bins()[4] == 1);
  CHECK(plot.bins()[10] == 1);
  CHECK(spade::tool::sparsity_plot::bin_label(0) == "0");
  CHECK(spade::tool::sparsity_plot::bin_label(3) == "4-7");
  CHECK(spade::tool::sparsity_plot::bin_label(10) == "512-1023");
  // A small matrix is zoomed: 20 x 20 at side 512 is 25 pixels per cell.
  spade::tool::sparsity_plot small(20, 20);
  CHECK(small.spy_cells_across() == 20);
  CHECK(small.spy_width() == 500);
  // Empty shapes draw a blank one-pixel grid, no division by zero.
  spade::tool::sparsity_plot empty(0, 0);
  CHECK(empty.spy_cells_across() == 1);
  CHECK(empty.pixels().size() == static_cast<std::size_t>(empty.width() * empty.height() * 3));
}

#ifdef SPADE_TOOL_PATH
TEST_CASE("spade info --plot writes a PNG of the spy plot and the row-length histogram") {
  // A 20 x 20 diagonal plus one entry at (0, 19): rows of length 1, and one of length 2.
  const auto matrix = temp_file("plot.mtx");
  {
    std::ofstream out(matrix);
    out << "%%MatrixMarket matrix coordinate real general\n20 20 21\n";
    for (int k = 1; k <= 20; ++k)
      out << k << ' ' << k << " 1\n";
    out << "1 20 2\n";
  }
  const auto picture = temp_file("plot.png");
  std::filesystem::remove(picture);
  const outcome run = run_tool("info --plot " + quoted(picture) + " " + quoted(matrix));
  CAPTURE(run.text);
  REQUIRE(run.exit_code == 0);
  auto fields = fields_of(run.text);
  CHECK(fields["plot"] == picture.string() + " (500 x 636 px)");
  CHECK(fields["plot top"].starts_with("spy plot, 500 x 500 px, 25 x 25 pixels per cell"));
  CHECK(fields["row lengths"] == "1: 19, 2-3: 1");
  const decoded_png png = read_png(picture);
  CHECK(png.width == 500);
  CHECK(png.height == 636);
  const std::array<int, 3> white = {255, 255, 255};
  for (std::uint32_t k = 0; k < 20; ++k) {
    CHECK(pixel(png, 25 * k + 12, 25 * k + 12) != white);              // the diagonal
    if (k > 0 && k < 19) CHECK(pixel(png, 25 * k + 12, 12) == white);  // row 0 between
  }
  CHECK(pixel(png, 25 * 19 + 12, 12) != white);  // (0, 19)
  CHECK(pixel(png, 12, 25 * 19 + 12) == white);  // (19, 0)
  // Three bins (0, 1, 2-3; the empty-row bin is always drawn) of 500/3 = 166 pixels: the
  // tallest bar (19 rows of length 1) fills the histogram's 128 rows, the 2-3 bar 128/19 = 7.
  const std::array<int, 3> bar = {70, 110, 170};
  const std::uint32_t base = 500 + 8 + 128 - 2;  // just above the axis
  CHECK(pixel(png, 80, base) == white);
  CHECK(pixel(png, 166 + 80, base) == bar);
  CHECK(pixel(png, 166 + 80, 500 + 8) == bar);
  CHECK(pixel(png, 332 + 80, base) == bar);
  CHECK(pixel(png, 332 + 80, base - 5) == bar);  // rows top+121 .. top+127 (the axis)
  CHECK(pixel(png, 332 + 80, base - 6) == white);

  // One file only; a missing name; an unwritable path names the file.
  CHECK(run_tool("info --plot " + quoted(picture) + " " + quoted(matrix) + " " + quoted(matrix),
                 "2>&1")
            .exit_code == 1);
  const outcome no_name = run_tool("info " + quoted(matrix) + " --plot", "2>&1 >/dev/null");
  CHECK(no_name.exit_code == 1);
  CHECK(no_name.text.find("--plot needs a file name") != std::string::npos);
  const outcome unwritable =
      run_tool("info --plot /nonexistent-dir/x.png " + quoted(matrix), "2>&1 >/dev/null");
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.text.find("/nonexistent-dir/x.png") != std::string::npos);

  // An absurd shape goes through the entries path: one pixel per 3.9e6 x 3.9e6 cells, the
  // empty rows counted without per-row arrays.
  const auto absurd = temp_file("plot_absurd.mtx");
  std::ofstream(absurd) << "%%MatrixMarket matrix coordinate real general\n"
                           "2000000000 2000000000 3\n2000000000 5 3.5\n1 1 1\n1 7 1\n";
  const outcome big = run_tool("info --plot " + quoted(picture) + " " + quoted(absurd));
  CAPTURE(big.text);
  REQUIRE(big.exit_code == 0);
  fields = fields_of(big.text);
  CHECK(fields["row lengths"] == "0: 1999999998, 1: 1, 2-3: 1");
  const decoded_png big_png = read_png(picture);
  CHECK(big_png.width == 512);
  CHECK(pixel(big_png, 0, 0) != white);    // (1, 1) and (1, 7)
  CHECK(pixel(big_png, 0, 511) != white);  // (2e9, 5)
  CHECK(pixel(big_png, 511, 0) == white);
  std::filesystem::remove(matrix);
  std::filesystem::remove(absurd);
  std::filesystem::remove(picture);
}
#endif

TEST_CASE("summarize_entries agrees with summarize on csr matrices") {
  check_same_summary(spade::generate::stencil7<double>(3, 3, 3));
  check_same_summary(spade::generate::banded<double>(20, 2, 3, 1));
  check_same_summary(spade::random_sparse<double>(20, 30, 0.2, 1));
  check_same_summary(spade::random_sparse<double>(50, 40, 0.05, 2));
  CHECK(spade::tool::summarize_entries<double>(5, 5, {}).empty_rows == 5);
}
