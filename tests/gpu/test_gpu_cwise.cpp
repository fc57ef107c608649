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

TEST_CASE_TEMPLATE("SDDMM on the gpu: sampled at the csr's entries, either kernel", T, float,
                   double) {
  using spade::testing::check_sddmm;
  const std::uint64_t seed = spade::testing::fresh_seed();
  check_sddmm<T, gpu, row_major, row_major>(33, 31, 64, seed);      // 16-byte loads
  check_sddmm<T, gpu, row_major, row_major>(31, 33, 7, seed + 1);   // one element per load
  check_sddmm<T, gpu, col_major, row_major>(40, 37, 33, seed + 2);  // strided along k
  check_sddmm<T, gpu, row_major, col_major>(37, 40, 257, seed + 3);
  check_sddmm<T, gpu, col_major, col_major>(1, 1, 1, seed + 4);
  check_sddmm<T, gpu, row_major, row_major>(5, 4, 0, seed + 5);
  check_sddmm<T, gpu, row_major, row_major>(0, 0, 3, seed + 6);
  spade::testing::check_sddmm_of_empty<T, gpu>();
  check_sddmm<T, gpu, row_major, row_major>(1000003, 3, 32, seed + 7);
  check_sddmm<T, gpu, row_major, row_major, spade::kernels::sddmm>(300, 200, 128, seed + 8);
  check_sddmm<T, gpu, row_major, row_major, spade::kernels::cusparse_sddmm>(300, 200, 128,
                                                                            seed + 9);
  check_sddmm<T, gpu, col_major, row_major, spade::kernels::cusparse_sddmm>(33, 31, 9, seed + 10);
}

TEST_CASE_TEMPLATE("the sddmm kernels write every sampled value of a NaN-poisoned result", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  CAPTURE(seed);
  const auto [row_ptr, col_idx, values] =
      spade::testing::random_csr_parts<T>(65, 70, seed, 0.2, 9, 4);
  const auto s = spade::to_gpu(spade::csr<T, cpu>(65, 70, row_ptr, col_idx, values));
  const auto x = spade::to_gpu(spade::dense<T, cpu>::ones(65, 12));
  const auto y = spade::to_gpu(spade::dense<T, cpu>::constant(70, 12, T(0.5)));
  const std::vector<T> poison(values.size(), std::numeric_limits<T>::quiet_NaN());
  for (int vendor = 0; vendor < 2; ++vendor) {
    CAPTURE(vendor);
    spade::csr<T, gpu> out = spade::to_gpu(spade::csr<T, cpu>(65, 70, row_ptr, col_idx, poison));
    if (vendor)
      spade::device::cusparse_sddmm(T(1), s, x, spade::device::operation::none, y,
                                    spade::device::operation::transpose, out);
    else
      spade::device::sddmm(T(1), s, x, spade::device::operation::none, y,
                           spade::device::operation::transpose, out);
    const auto h = spade::to_cpu(out);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < values.size(); ++k)
      if (!(h.values()[k] == values[k] * T(6))) ++wrong;  // 12 terms of 1 · 0.5
    CHECK(wrong == 0u);
  }
  const std::string text = spade::explain(spade::cwise_product(s, x * spade::transpose(y)));
  CHECK(spade::testing::contains(text, "SDDMM -> csr<"));
  CHECK(spade::testing::contains(text, "kernel: sddmm"));
  CHECK(spade::testing::contains(text, "cusparse_sddmm"));
}

TEST_CASE_TEMPLATE("gpu views read and write blocks, rows, columns and segments in place", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_views<T, gpu, row_major>(31, 33, seed);
  spade::testing::check_views<T, gpu, col_major>(33, 31, seed + 1);
  spade::testing::check_views<T, gpu, row_major>(3, 3, seed + 2);
  spade::testing::check_view_errors<T, gpu>();

  // Writing a tree over views of both layouts into a view is one launch, no copy.
  auto d = spade::to_gpu(spade::dense<T, cpu>::ones(1000, 600));
  const auto e = spade::to_gpu(spade::dense<T, cpu, col_major>::ones(1000, 600));
  spade::block(d, 1, 2, 500, 300) = spade::exp(spade::block(e, 3, 4, 500, 300));  // compiled
  spade::reset_jit_stats();
  spade::block(d, 1, 2, 500, 300) = spade::exp(spade::block(e, 3, 4, 500, 300));
  CHECK(spade::jit_stats().launches == 1);
  const auto host = spade::to_cpu(d);
  CHECK(host(1, 2) == doctest::Approx(std::exp(1.0)));
  CHECK(host(500, 301) == doctest::Approx(std::exp(1.0)));
  CHECK(host(0, 2) == T(1));
  CHECK(host(501, 2) == T(1));
  CHECK(host(1, 302) == T(1));
}

TEST_CASE_TEMPLATE("gpu rows(A, first, count): the csr of a row range", T, float, double) {
  spade::testing::check_row_range<T, gpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("cwise_product of two gpu sparse operands keeps the entries both store", T,
                   float, double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_sparse_intersection<T, gpu>(41, 37, seed);
  spade::testing::check_sparse_intersection<T, gpu>(1, 1, seed + 1);
  spade::testing::check_sparse_intersection<T, gpu>(0, 0, seed + 2);
  spade::testing::check_sparse_intersection<T, gpu>(300, 2000, seed + 3);
  spade::testing::check_sparse_intersection<T, gpu>(1000003, 40, seed + 4);
  const auto a = spade::to_gpu(spade::csr<T, cpu>::identity(3));
  const std::string text = spade::explain(spade::cwise_product(a, a));
  CHECK(spade::testing::contains(text, "cwise_intersection"));
}

TEST_CASE_TEMPLATE("cast<U> of a gpu csr: the pattern kept, the values converted", T, float,
                   double) {
  spade::testing::check_sparse_cast<T, gpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE(
    "gpu cast<half> and cast<bfloat16>: rounded to nearest even bit for bit, exact back", T, float,
    double) {
  spade::testing::check_reduced_precision<T, gpu>({0, 1, 33, 1000003},
                                                  spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE(
    "gpu cast, as_diagonal scaling and cwise_product with a dense matrix of a coo or an ellr: the "
    "csr of its entries",
    T, float, double) {
  spade::testing::check_other_sparse_formats<T, gpu>(spade::testing::fresh_seed());
}

TEST_CASE_TEMPLATE("gpu views of views: blocks of blocks, rows, columns and segments of views", T,
                   float, double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_views_of_views<T, gpu, row_major>(seed);
  spade::testing::check_views_of_views<T, gpu, col_major>(seed + 1);
}

TEST_CASE_TEMPLATE("gpu views as product operands: blocks, rows, columns and segments", T, float,
                   double) {
  const std::uint64_t seed = spade::testing::fresh_seed();
  spade::testing::check_view_products<T, gpu, row_major>(seed);
  spade::testing::check_view_products<T, gpu, col_major>(seed + 1);
}
