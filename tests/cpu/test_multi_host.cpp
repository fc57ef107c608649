// The multi_gpu types where no GPU can be used: clusters report no_device, an empty cluster is
// refused by distribute, and empty multi_gpu objects behave as values. (Everything that runs on
// GPUs is in tests/gpu/test_gpu_multi.cpp and tests/mpi/.)
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include <spade/spade.hpp>

#include "test_support.hpp"

using spade::cpu;
using spade::multi_gpu;

TEST_CASE("without a usable GPU a cluster reports no_device naming why") {
  std::string reason;
  if (spade::device_available(&reason)) {
    MESSAGE("a GPU is present: the no-device checks are for machines without one");
    return;
  }
  CHECK_THROWS_AS(spade::cluster::local(), spade::no_device);
  CHECK_THROWS_AS(spade::cluster::local(2), spade::no_device);
}

TEST_CASE("distribute refuses an empty cluster, on any machine") {
  const auto a = spade::generate::stencil7<double>(3, 3, 3);
  const spade::cluster none;
  CHECK(none.size() == 0);
  CHECK(none.my_parts().empty());
  CHECK(none.describe() == "an empty cluster");
  CHECK_THROWS_WITH_AS(spade::distribute(a, none), doctest::Contains("the cluster has no GPUs"),
                       spade::error);
  CHECK_THROWS_AS(spade::distribute(spade::vector<double, cpu>::ones(27), none), spade::error);
  CHECK_THROWS_AS(spade::distribute(spade::dense<double, cpu>(27, 2), none), spade::error);
}

TEST_CASE("empty multi_gpu objects are values: copied, moved, compared by shape") {
  spade::csr<double, multi_gpu> a;
  CHECK(a.rows() == 0);
  CHECK(a.cols() == 0);
  CHECK(a.nnz() == 0);
  CHECK(a.local_parts() == 0);
  spade::csr<double, multi_gpu> b = a;
  spade::csr<double, multi_gpu> c = std::move(b);
  c = a;
  c = std::move(a);
  CHECK(c.rows() == 0);
  spade::vector<double, multi_gpu> x;
  spade::vector<double, multi_gpu> y = x;
  y = std::move(x);
  CHECK(y.size() == 0);
  spade::dense<float, multi_gpu, spade::col_major> d;
  CHECK(d.rows() == 0);
  CHECK(d.cols() == 0);
}

TEST_CASE("the stacked halo product is chosen at its measured bounds, on any machine") {
  // detail::stacked_product_preferred decides from the halo plan's entry counts and X's width
  // only (docs/benchmarks/multi-stacked-2026-11-28.md): 2 or more columns, rows of X of at most
  // 128 bytes, a quarter or more of the entries remote. Here the counts are set by hand.
  using spade::detail::stacked_product_preferred;
  spade::detail::halo_plan<double> plan;
  CHECK_FALSE(stacked_product_preferred(plan, 8));  // no entries at all
  plan.local_entries = 75;
  plan.remote_entries = 25;                         // exactly a quarter
  CHECK_FALSE(stacked_product_preferred(plan, 1));  // SpMV: overlapped
  CHECK(stacked_product_preferred(plan, 2));
  CHECK(stacked_product_preferred(plan, 8));         // 64-byte rows
  CHECK(stacked_product_preferred(plan, 16));        // 128-byte rows
  CHECK_FALSE(stacked_product_preferred(plan, 17));  // 136-byte rows
  CHECK_FALSE(stacked_product_preferred(plan, 32));
  plan.local_entries = 76;
  plan.remote_entries = 24;  // under a quarter (a stencil's boundary is under 2 %)
  CHECK_FALSE(stacked_product_preferred(plan, 8));

  spade::detail::halo_plan<float> narrow;
  narrow.local_entries = 50;
  narrow.remote_entries = 50;
  CHECK(stacked_product_preferred(narrow, 16));        // 64-byte rows of float
  CHECK(stacked_product_preferred(narrow, 32));        // 128 bytes
  CHECK_FALSE(stacked_product_preferred(narrow, 33));  // 132 bytes
}
