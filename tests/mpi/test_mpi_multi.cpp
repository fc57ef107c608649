// multi_gpu over MPI (mpirun -np 2 or more, one GPU per rank): SpMV, SpMM and SpGEMM against a
// double-precision host product and the single-GPU one, element-wise trees, reductions, gather
// on every rank, explain, and a CG with the single-GPU iteration count. Exit status 0 when every
// check on every rank passed; skipped (exit 0, with a line) when a node has fewer GPUs than
// ranks, unless SPADE_TEST_MUST_RUN is set (tests/mpi/run_rank.sh). Also run with each rank
// shown only its own GPU (run_rank.sh --own-gpu).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <spade/mpi.hpp>
#include <spade/spade.hpp>

#include "conjugate_gradients.hpp"
#include "test_support.hpp"

namespace {

int rank = 0;
int checks = 0;
int failures = 0;

void check(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::printf("rank %d FAILED: %s\n", rank, what.c_str());
  }
}

/// y = A·X in double on the host, X rows × width in row-major order, and Σ|a||x| per element.
void host_product(const spade::csr<double, spade::cpu>& a, const std::vector<double>& x, int width,
                  std::vector<double>& y, std::vector<double>& scale) {
  y.assign(static_cast<std::size_t>(a.rows()) * width, 0.0);
  scale.assign(y.size(), 0.0);
  for (int r = 0; r < a.rows(); ++r)
    for (int k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k)
      for (int j = 0; j < width; ++j) {
        const double v = a.values()[k] * x[static_cast<std::size_t>(a.col_idx()[k]) * width + j];
        y[static_cast<std::size_t>(r) * width + j] += v;
        scale[static_cast<std::size_t>(r) * width + j] += std::abs(v);
      }
}

bool close(const std::vector<double>& got, const std::vector<double>& want,
           const std::vector<double>& scale, double k) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <=
          k * std::numeric_limits<double>::epsilon() * scale[i] + 1e-300))
      return false;
  return true;
}

void run(const spade::cluster& where, std::uint64_t seed) {
  using spade::cpu;
  using spade::multi_gpu;
  const int n = 1000;
  const auto a = spade::random_sparse<double>(n, n, 0.01, seed);
  const auto b = spade::random_sparse<double>(n, 777, 0.01, seed + 1);
  const auto x = spade::random_vector<double>(n, seed + 2);
  const auto xs = spade::random_dense<double>(n, 4, seed + 3);
  const auto da = spade::distribute(a, where);
  check(da.nnz() == a.nnz(), "nnz of the distributed A");
  const auto dx = spade::distribute(x, where);  // split evenly, A by entries: a real exchange

  const spade::vector<double, multi_gpu> y = da * dx;
  std::vector<double> want, scale;
  host_product(a, x.values(), 1, want, scale);
  check(close(spade::gather(y).values(), want, scale, 2.0 * (n + 2)), "SpMV vs the host");

  const spade::dense<double, multi_gpu> ys = da * spade::distribute(xs, where);
  const auto ys_host = spade::gather(ys);
  host_product(a, xs.values(), 4, want, scale);
  check(close(ys_host.values(), want, scale, 2.0 * (n + 2)), "SpMM vs the host");

  const spade::csr<double, multi_gpu> c = da * spade::distribute(b, where);
  const auto c_host = spade::gather(c);
  check(c.nnz() == c_host.nnz(), "nnz of the distributed SpGEMM");
  {
    // The single-GPU product on this rank's GPU.
    spade::context_scope scope(where.context_of(where.my_parts().front()));
    const auto single = spade::to_cpu(spade::csr<double>(spade::to_gpu(a) * spade::to_gpu(b)));
    check(c_host.row_ptr() == single.row_ptr() && c_host.col_idx() == single.col_idx(),
          "SpGEMM pattern equals the single-GPU one");
    double worst = 0;
    for (std::size_t k = 0; k < single.values().size() && k < c_host.values().size(); ++k)
      worst = std::max(worst, std::abs(c_host.values()[k] - single.values()[k]));
    check(worst <= 1e-12, "SpGEMM values");
  }

  const auto dx2 = spade::distribute(spade::random_vector<double>(n, seed + 4), dx);
  const spade::vector<double, multi_gpu> z = 2.0 * dx - spade::cwise_product(dx, dx2);
  const auto z_host = spade::gather(z);
  const auto x2 = spade::gather(dx2);
  double dot = 0, sum = 0, largest = -1e300;
  bool z_ok = true;
  for (int i = 0; i < n; ++i) {
    const double xi = x.values()[static_cast<std::size_t>(i)];
    const double yi = x2.values()[static_cast<std::size_t>(i)];
    z_ok = z_ok &&
           std::abs(z_host.values()[static_cast<std::size_t>(i)] - (2 * xi - xi * yi)) <= 1e-15;
    dot += xi * yi;
    sum += xi;
    largest = std::max(largest, xi);
  }
  check(z_ok, "element-wise tree");
  check(std::abs(spade::dot(dx, dx2) - dot) <= 1e-12, "dot");
  check(std::abs(spade::sum(dx) - sum) <= 1e-12, "sum");
  check(spade::max_coeff(dx) == largest, "max_coeff");
  check(std::abs(spade::norm(dx) - std::sqrt(spade::dot(dx, dx))) <= 1e-12, "norm");
  check(spade::explain(da * dx).find("halo exchange") != std::string::npos, "explain");

  // CG: the distributed solve takes the single-GPU iteration count.
  const auto s = spade::generate::stencil7<double>(16, 15, 14);
  const spade::vector<double, cpu> rhs = spade::vector<double, cpu>::ones(s.rows());
  const spade::vector<double, cpu> zero = spade::vector<double, cpu>::zeros(s.rows());
  int single_its = 0;
  {
    spade::context_scope scope(where.context_of(where.my_parts().front()));
    spade::vector<double> x0 = spade::to_gpu(zero);
    single_its =
        spade::testing::conjugate_gradients(spade::to_gpu(s), spade::to_gpu(rhs), x0, 1e-10, 1000);
  }
  const auto ds = spade::distribute(s, where);
  auto dsol = spade::distribute(zero, ds);
  const int its =
      spade::testing::conjugate_gradients(ds, spade::distribute(rhs, ds), dsol, 1e-10, 1000);
  check(its == single_its && its > 10 && its < 1000,
        "CG iterations " + std::to_string(its) + " vs single-GPU " + std::to_string(single_its));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  try {
    spade::cluster where;
    try {
      where = spade::cluster::from_mpi(MPI_COMM_WORLD);
    } catch (const spade::no_device& e) {
      // run_rank.sh sets SPADE_TEST_MUST_RUN where the node shows a GPU per rank.
      const bool must_run = std::getenv("SPADE_TEST_MUST_RUN") != nullptr;
      if (rank == 0)
        std::printf(
            "mpi_test_multi: %s: %s\n",
            must_run ? "FAILURE: no cluster although the node shows a GPU per rank" : "skipped",
            e.what());
      MPI_Finalize();
      return must_run ? 1 : 0;
    }
    where.set_timeout(120);
    check(where.size() == ranks, "one part per rank");
    check(where.my_parts().size() == 1 && where.my_parts().front() == rank, "this rank's part");
    // One seed for every rank (the inputs must be the same everywhere), fresh on every run.
    auto seed = static_cast<unsigned long long>(spade::testing::fresh_seed());
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("mpi_test_multi: %d ranks, seed %llu\n", ranks, seed);
    run(where, seed);
  } catch (const std::exception& e) {
    ++failures;
    std::printf("rank %d FAILED: exception: %s\n", rank, e.what());
  }
  int total = 0, all_checks = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("mpi_test_multi: %d checks on %d ranks, %d failed: %s\n", all_checks, ranks, total,
                total ? "FAILURE" : "SUCCESS");
  MPI_Finalize();
  return total ? 1 : 0;
}
