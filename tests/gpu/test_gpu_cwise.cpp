// The element-wise language on the GPU: every function and operator against std:: element by
// element (the cases of tests/cwise_cases.hpp), one kernel launch per fused expression, the
// kernel cache in memory and on disk, deterministic reductions, sparse values maps.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <spade/spade.hpp>
#include <string>

#include "cwise_cases.hpp"
#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::row_major;

TEST_CASE_TEMPLATE("every element-wise function and operator matches std:: on the gpu", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (auto [rows, cols] : {std::pair<int, int>{0, 0}, {1, 1}, {31, 33}, {33, 31}, {1, 40}}) {
    spade::testing::check_every_operation<T, gpu, row_major>(rows, cols, seed);
    spade::testing::check_every_operation<T, gpu, col_major>(rows, cols, seed + 1);
  }
}

TEST_CASE_TEMPLATE("NaN and Inf on the gpu go through every function as std:: takes them", T, float,
                   double) {
  spade::testing::check_nan_and_inf<T, gpu>();
}

TEST_CASE_TEMPLATE("a gpu expression that reads its destination writes it in place", T, float,
                   double) {
  spade::testing::check_aliasing<T, gpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("gpu reductions match a long double sum and repeat bit for bit", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (std::size_t n : {0, 1, 31, 33, 1000003})
    spade::testing::check_reductions<T, gpu>(n, seed);
}

TEST_CASE_TEMPLATE("unary maps of a gpu sparse operand keep its pattern", T, float, double) {
  spade::testing::check_sparse_values<T, gpu>(spade::testing::fresh_seed());
}

TEST_CASE("one fused expression is one kernel launch; the kernel comes from memory, then disk") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("spade-gpu-jit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("SPADE_CACHE_DIR", dir.c_str(), 1);
  const auto v =
      spade::testing::uniform_values<float>(spade::testing::fresh_seed(), 1000003, -1, 1);
  const spade::vector<float, gpu> x = spade::to_gpu(spade::vector<float, cpu>(v));
  const spade::vector<float, gpu> z = spade::to_gpu(spade::vector<float, cpu>(v));
  spade::vector<float, gpu> y(1000003);
  y = spade::exp(x) + spade::cwise_product(x, z) * 2.0f - 1.0f;  // compiled (or from disk)
  spade::reset_jit_stats();
  y = spade::exp(x) + spade::cwise_product(x, z) * 2.0f - 1.0f;
  CHECK(spade::jit_stats().launches == 1);
  CHECK(spade::jit_stats().memory_hits == 1);
  CHECK(spade::jit_stats().compiled == 0);
  CHECK(spade::testing::contains(
      spade::explain(spade::exp(x) + spade::cwise_product(x, z) * 2.0f - 1.0f),
      "loaded in this process"));

  spade::jit_forget_loaded_kernels();
  spade::reset_jit_stats();
  y = spade::exp(x) + spade::cwise_product(x, z) * 2.0f - 1.0f;
  CHECK(spade::jit_stats().disk_hits == 1);
  CHECK(spade::jit_stats().compiled == 0);
  CHECK(spade::jit_stats().launches == 1);
  const auto host = spade::to_cpu(y).values();
  std::size_t bad = 0;
  for (std::size_t k = 0; k < v.size(); ++k)
    if (!spade::testing::close_to(host[k], std::exp(double(v[k])) + 2.0 * v[k] * v[k] - 1, 8))
      ++bad;
  CHECK(bad == 0u);

  // A reduction over a fused producer is one launch too; the product inside runs first.
  const auto A =
      spade::to_gpu(spade::csr<float, cpu>(2.0f * spade::csr<float, cpu>::identity(1000003)));
  spade::reset_jit_stats();
  const float r = spade::norm(spade::abs(z - A * x));
  CHECK(spade::jit_stats().launches == 1);
  double want = 0;
  for (float e : v)
    want += double(e) * e;
  CHECK(r == doctest::Approx(std::sqrt(want)).epsilon(1e-4));

  ::unsetenv("SPADE_CACHE_DIR");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("explain names the fused kernel and the nested plans it reads") {
  const auto a = spade::to_gpu(spade::dense<double, cpu>::ones(4, 4));
  const std::string text = spade::explain(spade::exp(a * a) - a);
  CHECK(spade::testing::contains(text, "element-wise -> dense(row_major)<double, gpu> 4x4"));
  CHECK(spade::testing::contains(text, "one fused kernel spade_fused_map"));
  CHECK(spade::testing::contains(text, "input evaluated first:"));
  CHECK(spade::testing::contains(text, "product -> dense(row_major)<double, gpu> 4x4"));
}

TEST_CASE_TEMPLATE("row_sums, col_sums and diagonal of dense trees and of a csr", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  for (auto [rows, cols] :
       {std::pair<int, int>{0, 0}, {1, 1}, {5, 0}, {0, 5}, {31, 33}, {33, 31}, {3000, 3}}) {
    spade::testing::check_vector_reductions<T, gpu, row_major>(rows, cols, seed);
    spade::testing::check_vector_reductions<T, gpu, col_major>(rows, cols, seed + 1);
  }
  spade::testing::check_sparse_vector_reductions<T, gpu>(seed);
}

TEST_CASE_TEMPLATE("as_diagonal scales rows and columns; a csr keeps its pattern", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_diagonal_scaling<T, gpu, row_major>(seed);
  spade::testing::check_diagonal_scaling<T, gpu, col_major>(seed + 5);
}

TEST_CASE_TEMPLATE("cwise_product of a csr and a dense matrix keeps the csr's pattern", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_masked_product<T, gpu, row_major>(seed);
  spade::testing::check_masked_product<T, gpu, col_major>(seed + 3);
}
