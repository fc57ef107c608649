// GPU suite for per-device tuning: spade::tune_spmm times the kernels and fills a table, the
// planner follows the device's tune file (kernel, cuSPARSE's algorithm and gcoo's rows per
// group), a malformed file or SPADE_TUNE=off leaves the rules in charge, and every planned
// product matches Eigen.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "gpu/gpu_support.hpp"
#include "test_support.hpp"

namespace {

using spade::cpu;
using spade::gpu;
using spade::index_t;
using spade::row_major;
using spade::testing::contains;
using spade::testing::error_text;
using spade::testing::fresh_seed;
using spade::testing::no_device;
using spade::testing::pool_guard;
using spade::testing::random_dense;
using spade::testing::splitmix64;

/// A scratch cache directory for the tune files and kernels (test_support.hpp).
struct scratch_cache : spade::testing::scratch_tune_cache {
  scratch_cache() : scratch_tune_cache("spade-gpu-tune-test-") {}
};

std::string device_tune_file() {
  return spade::tuned_table_path(spade::device_tune_key(spade::default_context().properties()));
}

/// The kernel explain chose ("chosen: K (" …).
std::string chosen_kernel(const std::string& plan) {
  const std::string tag = "chosen: ";
  const auto at = plan.find(tag);
  if (at == std::string::npos) return "";
  const auto begin = at + tag.size();
  return plan.substr(begin, plan.find_first_of(" \n", begin) - begin);
}

/// Plans a·b on a fresh gpu copy of a_host (no conversion cached from an earlier plan), checks
/// the NaN-poisoned result against Eigen in double (|error| ≤ (row length + 2)·u·Σ|a||b|) and
/// returns explain's text.
template <class T>
std::string planned_and_checked(const spade::csr<T, cpu>& a_host,
                                const spade::dense<T, cpu, row_major>& b_host) {
  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  const spade::dense<T, gpu, row_major> b = spade::to_gpu(b_host);
  const std::string plan = spade::explain(a * b);
  spade::dense<T, cpu, row_major> poisoned(a_host.rows(), b_host.cols());
  std::fill(poisoned.values().begin(), poisoned.values().end(),
            std::numeric_limits<T>::quiet_NaN());
  spade::dense<T, gpu, row_major> c = spade::to_gpu(poisoned);
  c = a * b;
  const spade::dense<T, cpu, row_major> got = spade::to_cpu(c);
  std::size_t bad = 0;
  for (index_t i = 0; i < a_host.rows(); ++i) {
    const auto first = a_host.row_ptr()[static_cast<std::size_t>(i)];
    const auto last = a_host.row_ptr()[static_cast<std::size_t>(i) + 1];
    for (index_t j = 0; j < b_host.cols(); ++j) {
      double exact = 0, magnitude = 0;
      for (auto e = first; e < last; ++e) {
        const double term = double(a_host.values()[static_cast<std::size_t>(e)]) *
                            double(b_host(a_host.col_idx()[static_cast<std::size_t>(e)], j));
        exact += term;
        magnitude += std::abs(term);
      }
      const double bound =
          double(last - first + 2) * std::numeric_limits<T>::epsilon() * magnitude +
          std::numeric_limits<double>::min();
      if (!(std::abs(double(got(i, j)) - exact) <= bound)) ++bad;
    }
  }
  CAPTURE(plan);
  CHECK(bad == 0);
  return plan;
}

/// Square blocks of 16 on the diagonal, every entry stored: full 8×8 tiles, which the rules give
/// tiled_spmm at N = 32 and up.
template <class T>
spade::csr<T, cpu> full_blocks(index_t blocks, splitmix64& rng) {
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t r = 0; r < blocks * 16; ++r) {
    for (index_t c = (r / 16) * 16; c < (r / 16) * 16 + 16; ++c) {
      col_idx.push_back(c);
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(blocks * 16, blocks * 16, row_ptr, col_idx, values);
}

/// 20000 rows of 4 entries in random columns and one row of 2000: skewed (ellr_spmv declines)
/// and small (gcoo_spmm and tiled_spmm decline), so products with it run cuSPARSE at every width.
template <class T>
spade::csr<T, cpu> skewed_rows(splitmix64& rng) {
  constexpr index_t rows = 20000;
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<T> values;
  for (index_t r = 0; r < rows; ++r) {
    const index_t length = r == rows / 2 ? 2000 : 4;
    const index_t start = static_cast<index_t>(rng.next() % (rows - length));
    const index_t stride = r == rows / 2 ? 1 : static_cast<index_t>(1 + rng.next() % 97);
    for (index_t k = 0; k < length; ++k) {
      col_idx.push_back(std::min<index_t>(start + k * stride, rows - 1 - (length - 1 - k)));
      values.push_back(spade::testing::nonzero_value<T>(rng));
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return spade::csr<T, cpu>(rows, rows, row_ptr, col_idx, values);
}

}  // namespace

TEST_CASE_TEMPLATE(
    "tune_spmm times cuSPARSE's algorithms at every width; the planner runs the "
    "tuned one",
    T, float, double) {
  if (no_device("the tuning GPU tests")) return;
  const scratch_cache cache;
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a_host = skewed_rows<T>(rng);
  const auto narrow = random_dense<T, row_major>(a_host.cols(), 4, 0.0, rng);
  // Without a tune file: the rules' algorithm (ALG3: too few rows for ALG1, too small a C for
  // ALG2), and explain names it.
  const std::string ruled = planned_and_checked(a_host, narrow);
  REQUIRE(chosen_kernel(ruled) == "cusparse_spmm");
  CHECK(contains(ruled, "; cuSPARSE CSR ALG3 by the rules"));

  const spade::csr<T, gpu> a = spade::to_gpu(a_host);
  spade::tuned_table table =
      spade::tuned_table_to_fill(spade::default_context().properties(), false);
  spade::tune_options o;
  o.columns = {32, 4, 128};  // a narrow width between two wide ones
  o.samples = 5;
  const spade::tune_report r = spade::tune_spmm(a, "skewed", table, o);
  REQUIRE(r.skipped.empty());
  REQUIRE(r.widths.size() == 3);
  const auto& narrow_width = r.widths[1];
  // Every width times the three algorithms. The rules pick ALG3 at N = 4 and 32 (C too small
  // for ALG2); at N = 128 (C of 2.56·10⁶ elements) ALG2 in double (from 1.8·10⁶,
  // spmm_alg2_min_elements_fp64), ALG3 in float (from 5·10⁶).
  for (const auto& w : r.widths) {
    CAPTURE(w.columns);
    REQUIRE(w.cusparse_milliseconds.size() == 3);
    CHECK(w.cusparse_milliseconds[0].first == "alg1");
    CHECK(w.cusparse_milliseconds[1].first == "alg2");
    CHECK(w.cusparse_milliseconds[2].first == "alg3");
    for (const auto& [algorithm, ms] : w.cusparse_milliseconds)
      CHECK(ms > 0);
    CHECK(w.ruled_algorithm == (sizeof(T) == 8 && w.columns == 128 ? "alg2" : "alg3"));
    CHECK(table.find("cusparse", w.operand_class) != nullptr);
  }
  // Below tune_min_columns only the algorithms; from it the kernels too, cuSPARSE at the rules'
  // algorithm, and this matrix's fastest kernel counting cuSPARSE at its fastest algorithm.
  CHECK(narrow_width.milliseconds.empty());
  CHECK(narrow_width.gcoo_milliseconds.empty());
  CHECK(narrow_width.fastest_kernel.empty());
  CHECK(table.find("spmm", narrow_width.operand_class) == nullptr);
  for (const std::size_t k : {std::size_t{0}, std::size_t{2}}) {
    const auto& w = r.widths[k];
    CAPTURE(w.columns);
    REQUIRE(w.milliseconds.size() == 3);
    CHECK(w.milliseconds[0].first == "cusparse_spmm");
    CHECK(w.milliseconds[0].second ==  // the rules' algorithm's
          w.cusparse_milliseconds[sizeof(T) == 8 && w.columns == 128 ? 1 : 2].second);
    CHECK(w.gcoo_milliseconds.size() == 4);  // p = 1, 2, 4, 8 at both wide widths
    double fastest_ms = w.milliseconds[1].second;
    std::string fastest = w.milliseconds[1].first;
    for (const auto& [kernel, ms] : w.milliseconds)
      if (ms < fastest_ms) std::tie(fastest, fastest_ms) = std::tie(kernel, ms);
    for (const auto& [algorithm, ms] : w.cusparse_milliseconds)
      if (ms < fastest_ms) std::tie(fastest, fastest_ms) = std::pair{"cusparse_spmm", ms};
    CHECK(w.fastest_kernel == fastest);
    const spade::tuned_entry* e = table.find("spmm", w.operand_class);
    REQUIRE(e != nullptr);
    CHECK(e->fastest.at(0).second == fastest);
  }
  CHECK(table.size() == 6);  // three cusparse entries, two spmm entries, the gcoo entry
  spade::save_tuned_table(table, device_tune_file());
  // The planner runs the algorithm measured fastest on this matrix, and says so.
  const std::string fingerprint = spade::tune_fingerprint(a.rows(), a.cols(), a.nnz(), 2000);
  const std::string measured_best =
      table.find("cusparse", narrow_width.operand_class)->decision_for(fingerprint);
  const std::string tuned = planned_and_checked(a_host, narrow);
  CAPTURE(measured_best);
  CHECK(contains(tuned, "; cuSPARSE CSR ALG" + measured_best.substr(3) +
                            ", tuned on this device, this matrix measured, class " +
                            narrow_width.operand_class));

  // A file that names each algorithm in turn: the product runs it (and matches Eigen).
  using spade::device::spmm_algorithm;
  const spmm_algorithm algorithms[] = {spmm_algorithm::csr_alg1, spmm_algorithm::csr_alg2,
                                       spmm_algorithm::csr_alg3};
  const spade::dense<T, gpu, row_major> b = spade::to_gpu(narrow);
  const spade::dense<T, gpu, row_major> c(a.rows(), 4);
  const spade::dense<T, gpu, spade::col_major> c_col(a.rows(), 4);
  for (int fastest_number = 1; fastest_number <= 3; ++fastest_number) {
    CAPTURE(fastest_number);
    spade::tuned_table t = spade::tuned_table_to_fill(spade::default_context().properties(), false);
    std::vector<std::pair<std::string, double>> times;
    for (int k = 1; k <= 3; ++k)
      times.emplace_back("alg" + std::to_string(k), k == fastest_number ? 1.0 : 2.0 + k);
    t.add("cusparse", narrow_width.operand_class, times, "written", fingerprint);
    spade::save_tuned_table(t, device_tune_file());
    const std::string plan = planned_and_checked(a_host, narrow);
    CHECK(contains(plan, "; cuSPARSE CSR ALG" + std::to_string(fastest_number) + ", tuned"));
    CHECK(spade::detail::planned_spmm_algorithm(a, false, b, c) == algorithms[fastest_number - 1]);
    // What the tuner did not time keeps the rules' ALG3: Aᵀ, a col-major C.
    CHECK(spade::detail::planned_spmm_algorithm(a, false, b, c_col) == spmm_algorithm::csr_alg3);
    CHECK(spade::detail::planned_spmm_algorithm(a, true, b, c) == spmm_algorithm::csr_alg3);
  }
  // Other matrices of the class, unanimous: the rules still choose for this one. Measured at
  // another width only, explain says the entry did not measure it.
  {
    spade::tuned_table t = spade::tuned_table_to_fill(spade::default_context().properties(), false);
    for (const char* other : {"1x1x1x1", "2x2x2x2"})
      t.add("cusparse", narrow_width.operand_class, {{"alg1", 1.0}, {"alg2", 2.0}, {"alg3", 3.0}},
            other, other);
    spade::save_tuned_table(t, device_tune_file());
    std::string plan = planned_and_checked(a_host, narrow);
    CHECK(contains(plan, "; cuSPARSE CSR ALG3 by the rules"));
    CHECK_FALSE(contains(plan, "tuned cuSPARSE"));
    CHECK(spade::detail::planned_spmm_algorithm(a, false, b, c) == spmm_algorithm::csr_alg3);
    t.add("cusparse", r.widths[0].operand_class, {{"alg1", 1.0}, {"alg2", 2.0}, {"alg3", 3.0}},
          "skewed", fingerprint);
    spade::save_tuned_table(t, device_tune_file());
    plan = planned_and_checked(a_host, narrow);
    CHECK(contains(plan, "; cuSPARSE CSR ALG3 by the rules"));
    CHECK(contains(plan, "did not measure this matrix"));
    CHECK(spade::detail::planned_spmm_algorithm(a, false, b, c) == spmm_algorithm::csr_alg3);
  }
  // Off: the rules again.
  ::setenv("SPADE_TUNE", "off", 1);
  CHECK(contains(planned_and_checked(a_host, narrow), "; cuSPARSE CSR ALG3 by the rules"));
  ::unsetenv("SPADE_TUNE");
}

TEST_CASE_TEMPLATE("tune_spmm times every candidate and the planner follows what it measured", T,
                   float, double) {
  if (no_device("the tuning GPU tests")) return;
  const scratch_cache cache;
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a_host = full_blocks<T>(2048, rng);  // 32768 rows of 16
  const auto b_host = random_dense<T, row_major>(a_host.cols(), 32, 0.0, rng);
  // Without a tune file the rules choose, and explain says nothing of tuning.
  const std::string ruled = planned_and_checked(a_host, b_host);
  CHECK(chosen_kernel(ruled) == "tiled_spmm");
  CHECK_FALSE(contains(ruled, "tune"));

  spade::tuned_table table =
      spade::tuned_table_to_fill(spade::default_context().properties(), false);
  spade::tune_options o;
  o.columns = {32};
  o.samples = 5;
  const spade::tune_report r = spade::tune_spmm(spade::to_gpu(a_host), "blocks", table, o);
  REQUIRE(r.skipped.empty());
  REQUIRE(r.widths.size() == 1);
  CHECK(r.widths[0].milliseconds.size() == 3);
  CHECK(r.widths[0].cusparse_milliseconds.size() == 3);
  CHECK(r.widths[0].gcoo_milliseconds.size() == 4);
  CHECK(r.held);  // no timed run synchronised
  // gcoo_spmm competes at the p its "gcoo" entry picks, the one the planner converts with.
  const spade::tuned_entry* group_sizes = table.find("gcoo", r.gcoo_class);
  REQUIRE(group_sizes != nullptr);
  CHECK(spade::group_size_choice(r.widths[0].gcoo_group_size) == group_sizes->best()->first);
  for (const auto& [kernel, ms] : r.widths[0].milliseconds)
    CHECK(ms > 0);
  CHECK(table.size() == 3);  // the class's spmm, cusparse and gcoo entries
  const spade::tuned_entry* measured = table.find("spmm", r.widths[0].operand_class);
  REQUIRE(measured != nullptr);
  spade::save_tuned_table(table, device_tune_file());

  // The planner now runs what was measured fastest, and says so.
  const std::string tuned = planned_and_checked(a_host, b_host);
  CHECK(chosen_kernel(tuned) == measured->fastest.at(0).second);
  CHECK(contains(tuned,
                 "tuned on this device, this matrix measured, class " + r.widths[0].operand_class));
  // Off: the rules again.
  ::setenv("SPADE_TUNE", "off", 1);
  CHECK(chosen_kernel(planned_and_checked(a_host, b_host)) == "tiled_spmm");
  ::unsetenv("SPADE_TUNE");
}

TEST_CASE("a tune file picks the kernel and gcoo's rows per group; a malformed one is ignored") {
  if (no_device("the tuning GPU tests")) return;
  using T = double;
  const scratch_cache cache;
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  const auto a_host = full_blocks<T>(2048, rng);
  const auto b_host = random_dense<T, row_major>(a_host.cols(), 32, 0.0, rng);
  const std::string spmm_class = spade::spmm_tune_class(
      8, 16.0, 16, 32, 64.0,
      spade::spmm_fits_l2(8, a_host.rows(), a_host.cols(), a_host.nnz(), 32,
                          spade::default_context().properties().l2_cache_bytes));
  const std::string gcoo_class = spade::gcoo_tune_class(8, a_host.rows(), 16.0, 16, 64.0);
  const std::string fingerprint =
      spade::tune_fingerprint(a_host.rows(), a_host.cols(), a_host.nnz(), 16);
  const auto write_table = [&](double gcoo, double tiled, double cusparse) {
    spade::tuned_table t = spade::tuned_table_to_fill(spade::default_context().properties(), false);
    t.add("spmm", spmm_class,
          {{"gcoo_spmm", gcoo}, {"tiled_spmm", tiled}, {"cusparse_spmm", cusparse}}, "written",
          fingerprint);
    t.add("gcoo", gcoo_class, {{"p1", 3.0}, {"p2", 1.0}, {"p4", 2.0}}, "written", fingerprint);
    spade::save_tuned_table(t, device_tune_file());
  };

  write_table(1.0, 2.0, 3.0);
  const std::string gcoo_plan = planned_and_checked(a_host, b_host);
  CHECK(chosen_kernel(gcoo_plan) == "gcoo_spmm");
  CHECK(contains(gcoo_plan, "groups of 2 rows"));  // the "gcoo" entry's p, not the rule's
  CHECK(contains(gcoo_plan,
                 "tiled_spmm: tuned on this device: gcoo_spmm was fastest on this matrix"));
  write_table(2.0, 3.0, 1.0);
  CHECK(chosen_kernel(planned_and_checked(a_host, b_host)) == "cusparse_spmm");
  // A class the file does not hold (B of 128 columns): the rules, and explain says so.
  const auto wide = random_dense<T, row_major>(a_host.cols(), 128, 0.0, rng);
  const std::string unlisted = planned_and_checked(a_host, wide);
  CHECK(chosen_kernel(unlisted) == "tiled_spmm");
  CHECK(contains(unlisted, "no tuned entry for class"));

  // A malformed file: the rules, and explain names the file and the line.
  {
    std::ofstream out(device_tune_file(), std::ios::binary | std::ios::trunc);
    out << spade::tuned_table::format_line << "\nspmm " << spmm_class << " 1 gcoo_spmm=fast\n";
  }
  spade::forget_tuned_tables();
  const std::string ignored = planned_and_checked(a_host, b_host);
  CHECK(chosen_kernel(ignored) == "tiled_spmm");
  CHECK(contains(ignored, "tune file ignored: " + device_tune_file() + " line 2: bad time 'fast'"));
}

TEST_CASE("tune_spmm skips what the row-wise kernels take and refuses widths it cannot use") {
  if (no_device("the tuning GPU tests")) return;
  pool_guard guard;
  splitmix64 rng{fresh_seed()};
  spade::tuned_table table;
  const auto small = spade::to_gpu(full_blocks<double>(4, rng));  // 64 x 64
  CHECK(contains(spade::tune_spmm(small, "small", table).skipped, "row-wise"));
  const spade::csr<double, gpu> empty(5000, 5000);
  CHECK(spade::tune_spmm(empty, "empty", table).skipped == "no entries");
  CHECK(table.size() == 0);
  spade::tune_options o;
  o.columns = {1};
  const auto a = spade::to_gpu(full_blocks<double>(64, rng));
  CHECK_THROWS_AS(spade::tune_spmm(a, "narrow", table, o), spade::invalid_matrix);
  o.columns = {32, 4, 3};  // 3 and 4 are one class, n4
  CHECK(contains(error_text([&] { (void)spade::tune_spmm(a, "same class", table, o); }),
                 "spade::tune_spmm: widths 4 and 3 fall in one operand class (n4): give one"));
  CHECK(table.size() == 0);
}
