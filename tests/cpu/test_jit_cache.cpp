// The kernel cache of generated kernels, without a GPU: NVRTC compiles the source an expression
// type makes (for sm_90), the disk cache stores it, and a corrupt file, an unwritable directory,
// two processes at once and a compile error each do what docs/api.md says.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <spade/spade.hpp>
#include <string>

#include "test_support.hpp"

namespace fs = std::filesystem;
using spade::gpu;
using spade::device::jit_origin;

namespace {

/// A fresh cache directory named by $SPADE_CACHE_DIR while the object lives.
struct scratch_cache : spade::testing::scratch_cache_dir {
  scratch_cache() : scratch_cache_dir("spade-jit-test-") {}
};

/// The fused map source of a float expression of every kind of node, made with a distinct
/// constant so each test compiles a source of its own.
std::string sample_source(const std::string& tag) {
  using D = spade::dense<float, gpu, spade::row_major>;
  using C = spade::dense<float, gpu, spade::col_major>;
  using E =
      decltype(spade::exp(std::declval<const D&>()) * 2.0f +
               spade::cwise_max(spade::abs(std::declval<const C&>()), std::declval<const D&>()) -
               spade::pow(spade::cast<float>(spade::cast<double>(std::declval<const D&>())), 2.0f));
  return "// " + tag + "\n" +
         spade::detail::fused_map_source<float>(
             spade::detail::fused_signature_of<false, true, E>());
}

}  // namespace

TEST_CASE("generated sources compile for sm_90: maps and the three reductions, float and double") {
  if (!spade::built_with_cuda()) return;  // the CUDA-free build has no NVRTC
  scratch_cache cache;
  using D = spade::dense<double, gpu, spade::col_major>;
  using V = spade::vector<double, gpu>;
  using E =
      decltype(spade::log(spade::abs(std::declval<const D&>()) + 1.0) -
               spade::cwise_quotient(std::declval<const D&>(), std::declval<const D&>()) / 2.0);
  using F = decltype(spade::tanh(spade::sin(std::declval<const V&>())) +
                     spade::cwise_min(std::declval<const V&>(), 0.5) +
                     spade::inverse(spade::sqrt(spade::square(std::declval<const V&>()))) -
                     (1.0 - spade::cos(std::declval<const V&>())));
  const auto& sig = spade::detail::fused_signature_of<false, false, E>();
  CHECK(spade::device::jit_compile(spade::detail::fused_map_source<double>(sig), 90) ==
        jit_origin::compiled);
  for (auto kind : {spade::detail::reduction::sum, spade::detail::reduction::max,
                    spade::detail::reduction::min}) {
    const auto& fsig = spade::detail::fused_signature_of<false, true, F>();
    CHECK(spade::device::jit_compile(spade::detail::fused_reduce_source<double>(fsig, kind, false),
                                     90) == jit_origin::compiled);
  }
  CHECK(spade::device::jit_compile(sample_source("float sample"), 90) == jit_origin::compiled);
  // row_sums / col_sums (both directions), diagonal, and the csr row sums and diagonal.
  for (bool along_inner : {true, false})
    CHECK(spade::device::jit_compile(spade::detail::fused_axis_source<double>(sig, along_inner),
                                     90) == jit_origin::compiled);
  CHECK(spade::device::jit_compile(spade::detail::fused_diagonal_source<double>(sig), 90) ==
        jit_origin::compiled);
  using S = spade::csr<float, gpu>;
  using chain = decltype(spade::sqrt(spade::abs(std::declval<const S&>())) * 2.0f);
  const auto& csig = spade::detail::fused_signature_of<true, true, chain>();
  for (bool diagonal : {true, false})
    CHECK(spade::device::jit_compile(spade::detail::fused_csr_source<float>(csig, diagonal), 90) ==
          jit_origin::compiled);
  // Diagonal scalings: a dense map that reads the element's row and column, a csr values map.
  using VF = spade::vector<float, gpu>;
  using scaled_dense = decltype(spade::as_diagonal(std::declval<const VF&>()) *
                                spade::abs(std::declval<const spade::dense<float, gpu>&>()) *
                                spade::as_diagonal(std::declval<const VF&>()));
  CHECK(spade::device::jit_compile(
            spade::detail::fused_map_source<float>(
                spade::detail::fused_signature_of<false, false, scaled_dense>()),
            90) == jit_origin::compiled);
  using scaled_csr =
      decltype(spade::as_diagonal(std::declval<const VF&>()) * std::declval<const S&>() *
               spade::as_diagonal(std::declval<const VF&>()));
  const auto& ssig = spade::detail::fused_signature_of<true, true, scaled_csr>();
  CHECK(ssig.needs_rows);
  CHECK(spade::device::jit_compile(spade::detail::fused_csr_map_source<float>(ssig), 90) ==
        jit_origin::compiled);
  CHECK(spade::device::jit_compile(spade::detail::fused_csr_source<float>(ssig, false), 90) ==
        jit_origin::compiled);
  // A csr times a dense matrix of either layout.
  using masked = decltype(spade::cwise_product(
                              std::declval<const S&>(),
                              std::declval<const spade::dense<float, gpu, spade::col_major>&>()) +
                          spade::cwise_product(std::declval<const S&>(),
                                               std::declval<const spade::dense<float, gpu>&>()));
  (void)sizeof(masked*);
  using masked_chain = decltype(spade::abs(
      spade::cwise_product(std::declval<const S&>(),
                           std::declval<const spade::dense<float, gpu, spade::col_major>&>())));
  const auto& msig = spade::detail::fused_signature_of<true, true, masked_chain>();
  CHECK(spade::device::jit_compile(spade::detail::fused_csr_map_source<float>(msig), 90) ==
        jit_origin::compiled);
  // Views: blocks of both layouts read through their stride (the map tracking each element's
  // position), written into a view (the strided map), reduced and summed along an axis.
  using DR = spade::dense<float, gpu>;
  using DC = spade::dense<float, gpu, spade::col_major>;
  DR* no_rows = nullptr;
  DC* no_cols = nullptr;
  using viewed = decltype(spade::exp(spade::block(*no_rows, 0, 0, 0, 0)) -
                          spade::block(*no_cols, 0, 0, 0, 0) * 2.0f);
  const auto& vsig = spade::detail::fused_signature_of<false, true, viewed>();
  CHECK(vsig.needs_position);
  for (bool strided : {false, true})
    CHECK(spade::device::jit_compile(spade::detail::fused_map_source<float>(vsig, strided), 90) ==
          jit_origin::compiled);
  CHECK(spade::device::jit_compile(
            spade::detail::fused_reduce_source<float>(vsig, spade::detail::reduction::sum, true),
            90) == jit_origin::compiled);
  CHECK(spade::device::jit_compile(spade::detail::fused_axis_source<float>(vsig, true), 90) ==
        jit_origin::compiled);
  // A contiguous tree written into a view: the strided map without positions read.
  using plain = decltype(spade::abs(std::declval<const DR&>()));
  CHECK(
      spade::device::jit_compile(spade::detail::fused_map_source<float>(
                                     spade::detail::fused_signature_of<false, true, plain>(), true),
                                 90) == jit_origin::compiled);
  // Half and bfloat16: narrowing casts from float and double, widening into a float tree, a view
  // of a half matrix written from a double tree, a reduction over widened bfloat16 values.
  using HV = spade::vector<spade::half, gpu>;
  using BV = spade::vector<spade::bfloat16, gpu>;
  using FV = spade::vector<float, gpu>;
  using DV = spade::vector<double, gpu>;
  using HC = spade::dense<spade::half, gpu, spade::col_major>;
  const auto compiles = [](const std::string& source) {
    CHECK(spade::device::jit_compile(source, 90) == jit_origin::compiled);
  };
  using to_half = decltype(spade::cast<spade::half>(std::declval<const FV&>() * 2.0f));
  using to_bfloat16 = decltype(spade::cast<spade::bfloat16>(std::declval<const DV&>()));
  using across = decltype(spade::cast<spade::bfloat16>(std::declval<const HV&>()));
  using widened = decltype(spade::cast<float>(std::declval<const HV&>()) * 2.0f +
                           spade::cast<float>(std::declval<const BV&>()));
  using into_view = decltype(spade::cast<spade::half>(spade::exp(std::declval<const DC&>())));
  using from_view = decltype(spade::cast<double>(spade::row(*static_cast<HC*>(nullptr), 0)));
  const auto& hsig = spade::detail::fused_signature_of<false, true, to_half>();
  CHECK(hsig.needs_reduced_precision);
  CHECK(spade::testing::contains(hsig.body, "spade_narrow_half("));
  compiles(spade::detail::fused_map_source<spade::half>(hsig));
  compiles(spade::detail::fused_map_source<spade::bfloat16>(
      spade::detail::fused_signature_of<false, true, to_bfloat16>()));
  compiles(spade::detail::fused_map_source<spade::bfloat16>(
      spade::detail::fused_signature_of<false, true, across>()));
  compiles(spade::detail::fused_map_source<float>(
      spade::detail::fused_signature_of<false, true, widened>()));
  compiles(spade::detail::fused_map_source<spade::half>(
      spade::detail::fused_signature_of<false, false, into_view>(), true));
  compiles(spade::detail::fused_map_source<double>(
      spade::detail::fused_signature_of<false, true, from_view>()));
  compiles(spade::detail::fused_reduce_source<float>(
      spade::detail::fused_signature_of<false, true, widened>(), spade::detail::reduction::sum,
      false));
  // A float tree never carries the 16-bit prelude.
  CHECK_FALSE(spade::detail::fused_signature_of<false, true, plain>().needs_reduced_precision);
}

TEST_CASE("the disk cache: cold, warm, corrupt and truncated files, an unwritable directory") {
  if (!spade::built_with_cuda()) return;
  scratch_cache cache;
  const std::string source = sample_source("cache " + std::to_string(spade::testing::fresh_seed()));
  const fs::path file = cache.dir / (spade::device::jit_key(source, 90) + ".cubin");

  spade::reset_jit_stats();
  std::size_t bytes = 0;
  CHECK(spade::device::jit_compile(source, 90, &bytes) == jit_origin::compiled);
  CHECK(bytes > 0);
  CHECK(fs::exists(file));
  CHECK(spade::jit_stats().compiled == 1);
  CHECK(spade::jit_stats().disk_writes == 1);
  CHECK(spade::device::jit_lookup(source, 90) == jit_origin::disk);

  CHECK(spade::device::jit_compile(source, 90) == jit_origin::disk);
  CHECK(spade::jit_stats().disk_hits == 1);
  CHECK(spade::jit_stats().compiled == 1);

  SUBCASE("a flipped byte in the binary is rejected and recompiled") {
    const auto size = fs::file_size(file);
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 17));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(size - 17));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  SUBCASE("a truncated file is rejected and recompiled") {
    fs::resize_file(file, fs::file_size(file) / 2);
  }
  SUBCASE("a file of another source under the same name is rejected") {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << "SPADE-JIT-1\nnot this source";
  }
  CHECK(spade::device::jit_compile(source, 90) == jit_origin::compiled);
  CHECK(spade::jit_stats().disk_rejected == 1);
  CHECK(spade::jit_stats().compiled == 2);
  CHECK(spade::device::jit_compile(source, 90) == jit_origin::disk);  // rewritten whole
}

TEST_CASE("an unwritable cache directory disables the disk cache and nothing else") {
  if (!spade::built_with_cuda()) return;
  scratch_cache cache;
  // A path under a regular file can be created by nobody, root included.
  std::ofstream(cache.dir / "a-file") << "x";
  ::setenv("SPADE_CACHE_DIR", (cache.dir / "a-file" / "cache").c_str(), 1);
  const std::string source =
      sample_source("unwritable " + std::to_string(spade::testing::fresh_seed()));
  spade::reset_jit_stats();
  CHECK(spade::device::jit_compile(source, 90) == jit_origin::compiled);
  CHECK(spade::device::jit_compile(source, 90) == jit_origin::compiled);
  CHECK(spade::jit_stats().disk_failures == 2);
  CHECK(spade::jit_stats().disk_writes == 0);
  if (::geteuid() != 0) {  // permissions bind only other users than root
    ::setenv("SPADE_CACHE_DIR", cache.dir.c_str(), 1);
    fs::permissions(cache.dir, fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(spade::device::jit_compile(source + "// ro\n", 90) == jit_origin::compiled);
    CHECK(spade::jit_stats().disk_failures == 3);
  }
}

TEST_CASE("two processes compiling one new source at once share the cache file") {
  if (!spade::built_with_cuda()) return;
  scratch_cache cache;
  const std::string source =
      sample_source("two processes " + std::to_string(spade::testing::fresh_seed()));
  pid_t children[2];
  for (pid_t& child : children) {
    child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int status = 0;
      try {
        status = spade::device::jit_compile(source, 90) == jit_origin::compiled ? 0 : 3;
      } catch (...) {
        status = 4;
      }
      ::_exit(status);
    }
  }
  for (pid_t child : children) {
    int status = -1;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  spade::reset_jit_stats();
  CHECK(spade::device::jit_compile(source, 90) == jit_origin::disk);
  CHECK(spade::jit_stats().disk_rejected == 0);
  std::size_t leftovers = 0;
  for (const auto& entry : fs::directory_iterator(cache.dir))
    if (entry.path().string().find(".tmp.") != std::string::npos) ++leftovers;
  CHECK(leftovers == 0u);
}

TEST_CASE("a source NVRTC rejects is a cuda_error carrying the compiler's log") {
  if (!spade::built_with_cuda()) {
    CHECK_THROWS_AS(spade::device::jit_compile("x", 90), spade::no_device);
    return;
  }
  scratch_cache cache;
  try {
    spade::device::jit_compile("extern \"C\" __global__ void k() { undeclared_name = 1; }", 90);
    FAIL("no cuda_error");
  } catch (const spade::cuda_error& e) {
    CHECK(spade::testing::contains(e.what(), "NVRTC failed"));
    CHECK(spade::testing::contains(e.what(), "undeclared_name"));
  }
}
