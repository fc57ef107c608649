// Device profiles (core/device_profile.hpp) and the gpu plans explain(e, profile) previews from
// cpu operands, with no device: JSON in and out, bad files, the shipped profiles, and previews
// checked against what the steps decide on the same facts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <set>
#include <spade/spade.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"

using spade::cpu;
using spade::index_t;
using spade::testing::contains;
using spade::testing::fresh_seed;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string repository = std::string(SPADE_TEST_DATA_DIR) + "/../..";

/// The message of the spade::io_error that `read` throws ("" when it throws none).
template <class Read>
std::string io_error_of(Read&& read) {
  try {
    read();
  } catch (const spade::io_error& e) {
    return e.what();
  }
  return "";
}

/// The kernel on the first "chosen: " line of a plan.
std::string chosen_kernel(const std::string& plan) {
  const auto at = plan.find("chosen: ");
  if (at == std::string::npos) return "";
  const auto begin = at + 8;
  return plan.substr(begin, plan.find_first_of(" \n", begin) - begin);
}

}  // namespace

TEST_CASE("for_each_threshold names every field of spade::thresholds, in order") {
  // The declarations read from the header itself, so a field added without its JSON name fails.
  const std::string header = read_text(repository + "/include/spade/core/tuning.hpp");
  const auto body_at = header.find("struct thresholds {");
  REQUIRE(body_at != std::string::npos);
  const std::string body = header.substr(body_at, header.find("\n};", body_at) - body_at);
  const std::regex field(R"(\n  (?:double|long|int|std::int64_t) (\w+) = )");
  std::vector<std::string> declared;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), field);
       it != std::sregex_iterator(); ++it)
    declared.push_back((*it)[1]);
  std::vector<std::string> visited;
  spade::thresholds t;
  spade::for_each_threshold(t, [&](const char* name, auto&) { visited.emplace_back(name); });
  CHECK(declared.size() >= 37);
  CHECK(visited == declared);
}

TEST_CASE("a device profile reads back what it wrote, every threshold included") {
  spade::device_profile p = spade::h100_profile();
  p.name = "test \"device\"";
  p.tuning.densify_density = 0.123456789012345;
  p.tuning.gcoo_min_rows = 777;
  p.tuning.rowwise_max_nnz = std::int64_t{1} << 40;
  p.memory_bandwidth = 3.35e12;
  const std::string json = spade::to_json(p);
  const spade::device_profile back = spade::profile_from_json(json);
  CHECK(back.name == p.name);
  CHECK(back.sm_count == p.sm_count);
  CHECK(back.l2_cache_bytes == p.l2_cache_bytes);
  CHECK(back.memory_bandwidth == p.memory_bandwidth);
  CHECK(back.tuning.densify_density == p.tuning.densify_density);
  CHECK(back.tuning.gcoo_min_rows == 777);
  CHECK(back.tuning.rowwise_max_nnz == std::int64_t{1} << 40);
  CHECK(spade::to_json(back) == json);
  // A threshold left out keeps its default.
  const std::string without =
      std::regex_replace(json, std::regex("\\s*\"tiled_min_fill\": [0-9.e+-]+,"), "");
  REQUIRE(without != json);
  CHECK(spade::profile_from_json(without).tuning.tiled_min_fill ==
        spade::default_thresholds.tiled_min_fill);
}

TEST_CASE("a malformed device profile throws io_error naming what is wrong") {
  const std::string good = spade::to_json(spade::h100_profile());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  CHECK(
      contains(io_error_of([&] { spade::profile_from_json(with("\"sm_count\"", "\"sm_cuont\"")); }),
               "unknown key 'sm_cuont'"));
  CHECK(
      contains(io_error_of([&] { spade::profile_from_json(with("\"tiled_min_fill\"", "\"x\"")); }),
               "unknown threshold 'x'"));
  CHECK(contains(io_error_of([&] {
                   spade::profile_from_json(with("\"sm_count\": 132", "\"sm_count\": \"many\""));
                 }),
                 "'sm_count' needs a whole number"));
  CHECK(contains(io_error_of([&] { spade::profile_from_json(with("\"sm_count\": 132,", "")); }),
                 "no 'sm_count'"));
  CHECK(contains(io_error_of([&] { spade::profile_from_json(with("profile 1", "profile 9")); }),
                 "format 'spade device profile 9'"));
  CHECK(contains(
      io_error_of([&] { spade::profile_from_json(good.substr(0, good.size() / 2), "half.json"); }),
      "half.json:"));
  CHECK(contains(io_error_of([&] { spade::profile_from_json(good + "x"); }), "after the profile"));
  CHECK(contains(io_error_of([&] { spade::load_device_profile("/nonexistent/h300.json"); }),
                 "no such device profile"));
}

TEST_CASE("the shipped profiles are the committed captures of docs/profiles") {
  for (const std::string name : {"h100", "h200"}) {
    CAPTURE(name);
    const std::string path = repository + "/docs/profiles/" + name + ".json";
    const spade::device_profile file = spade::load_device_profile(path);
    const spade::device_profile shipped = spade::load_device_profile(name);
    // The note says where the thresholds come from; the rest is the capture.
    spade::device_profile captured = file;
    captured.note = shipped.note;
    CHECK(spade::to_json(captured) == spade::to_json(shipped));
    CHECK(shipped.resident_threads() ==
          std::int64_t{shipped.sm_count} * shipped.max_threads_per_sm);
  }
}

TEST_CASE("explain(e, profile) previews the gpu plan of cpu operands with the profile's facts") {
  using T = double;
  const spade::device_profile h100 = spade::h100_profile();
  // The preview leaves the caller's thresholds alone.
  const spade::thresholds before = spade::tuning();

  SUBCASE("sparse x vector on a first product: cuSPARSE, with ellr declined until a second") {
    const auto a = spade::random_sparse<T>(5000, 5000, 0.001, fresh_seed());
    const spade::vector<T, cpu> x(a.cols());
    const std::string plan = spade::explain(a * x, h100);
    CHECK(contains(plan, "previewed for NVIDIA H100"));
    CHECK(contains(plan, "csr<double, gpu> 5000x5000"));
    CHECK(contains(plan, "rule \"sparse x vector\""));
    CHECK(contains(plan, "declined: ellr_spmv: product 1 with this operand < ellr_min_uses 2"));
    CHECK(chosen_kernel(plan) == "cusparse_spmv");
    // The cpu plan of the same expression is Eigen's.
    CHECK(chosen_kernel(spade::explain(a * x)) != "cusparse_spmv");
  }
  SUBCASE("the resident threads come from the profile: they decide gcoo_spmm's p and lanes") {
    // 600000 rows of 4: past gcoo_min_rows, N = 32, rows even.
    std::vector<index_t> row_ptr(600001);
    std::vector<index_t> col_idx(2400000);
    std::vector<T> values(2400000, 1.0);
    for (index_t r = 0; r <= 600000; ++r)
      row_ptr[static_cast<std::size_t>(r)] = 4 * r;
    for (std::size_t e = 0; e < col_idx.size(); ++e)
      col_idx[e] = static_cast<index_t>((e / 4 * 7 + e % 4 * 1009) % 600000);
    for (index_t r = 0; r < 600000; ++r)
      std::sort(col_idx.begin() + 4 * r, col_idx.begin() + 4 * r + 4);
    const spade::csr<T, cpu> a(600000, 600000, row_ptr, col_idx, values);
    const spade::dense<T, cpu> b(600000, 32);
    const std::string plan = spade::explain(a * b, h100);
    CHECK(chosen_kernel(plan) == "gcoo_spmm");
    // 600000 / 4 = 150000 groups >= 8448 resident warps of an H100: groups of 4.
    CHECK(contains(plan, "groups of 4 rows"));
    // A device of 256000 resident warps: 150000 groups of 4 would leave warps idle, 300000
    // groups of 2 do not.
    spade::device_profile wide = h100;
    wide.sm_count = 1000;
    wide.max_threads_per_sm = 8192;
    CHECK(contains(spade::explain(a * b, wide), "groups of 2 rows"));
  }
  SUBCASE("the profile's thresholds decide, not spade::tuning()") {
    const auto a = spade::random_sparse<T>(300, 300, 0.2, fresh_seed());
    const spade::dense<T, cpu> b(300, 64);
    // Density 0.2 >= densify_density 0.15: cuBLAS on the densified operand.
    CHECK(chosen_kernel(spade::explain(a * b, h100)) == "cublas_gemm");
    spade::device_profile strict = h100;
    strict.tuning.densify_density = 0.5;
    CHECK(chosen_kernel(spade::explain(a * b, strict)) != "cublas_gemm");
  }
  SUBCASE("sparse x sparse: the tile census and hash_spgemm's counts, on the host") {
    const auto a = spade::random_sparse<T>(2000, 2000, 0.002, fresh_seed());
    const std::string plan = spade::explain(a * a, h100);
    CHECK(chosen_kernel(plan) == "hash_spgemm");
    // Products and nnz(C) counted independently of the preview: by hand, and Eigen's
    // (structural) product.
    const auto eigen_a = spade::to_eigen(a);
    const Eigen::SparseMatrix<T, Eigen::RowMajor, int> c = eigen_a * eigen_a;
    std::int64_t products = 0;
    for (const index_t k : a.col_idx())
      products +=
          a.row_ptr()[static_cast<std::size_t>(k) + 1] - a.row_ptr()[static_cast<std::size_t>(k)];
    CHECK(contains(plan, std::to_string(products) + " products, nnz(C) " +
                             std::to_string(c.nonZeros()) + ","));
    CHECK(contains(plan, "counted on the host"));
  }
  auto thresholds_json = [](const spade::thresholds& t) {
    spade::device_profile p;
    p.tuning = t;
    return spade::to_json(p);
  };
  CHECK(thresholds_json(spade::tuning()) == thresholds_json(before));
}

TEST_CASE("the host tile census counts what device::count_tiles counts, by hand") {
  // A: rows 0 and 9 hold entries in tiles (0,0), (0,1), (1,0); B: tile rows 0 and 1 hold 2 and 1.
  const std::vector<index_t> a_row_ptr = {0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3};
  const std::vector<index_t> a_col_idx = {1, 9, 3};
  // B 11 x 16: row 1 has columns 0 and 8 (two tiles of tile row 0), row 9 has column 2.
  const std::vector<index_t> b_row_ptr = {0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3};
  const std::vector<index_t> b_col_idx = {0, 8, 2};
  const auto census =
      spade::detail::host_tile_census(11, 11, a_row_ptr, a_col_idx, 11, 16, b_row_ptr, b_col_idx);
  CHECK(census.a_tiles == 3);
  CHECK(census.b_tiles == 3);
  CHECK(census.a_nnz == 3);
  CHECK(census.b_nnz == 3);
  // Entry (0,1) meets B's row 1 (2 entries), (0,9) row 9 (1), (9,3) row 3 (0).
  CHECK(census.products == 3);
  // A's tiles (0,0) and (1,0) meet B's tile row 0 (2 tiles each), (0,1) tile row 1 (1 tile).
  CHECK(census.tile_pairs == 5);
}
