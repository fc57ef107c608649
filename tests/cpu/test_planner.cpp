// The planner as types: plan_of<E> for every cell of the rule tables (cpu and gpu spaces, float
// and double), has_kernel, explain(), the conversion cache (conversion_counter) and eval<K>.
// gpu expressions are only built (from empty objects, which touch no device), never evaluated.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <spade/spade.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

using spade::col_major;
using spade::cpu;
using spade::gpu;
using spade::row_major;
using spade::plan::convert;
using spade::plan::lhs;
using spade::plan::rhs;
namespace kernels = spade::kernels;
namespace rules = spade::plan::rules;

using spade::testing::contains;

namespace {

template <class... Cs>
using candidates = spade::plan::candidates<Cs...>;
template <class K, class... Steps>
using candidate = spade::plan::candidate<K, spade::plan::steps<Steps...>>;

template <class E, class Expected>
constexpr bool plans = std::is_same_v<typename spade::plan_of<E>::candidates, Expected>;
template <class E, class Rule>
constexpr bool rule_is = std::is_same_v<typename spade::plan_of<E>::rule, Rule>;

/// Every operand kind of one scalar and space, default-constructed (empty): expressions built
/// from them compute nothing, so gpu ones need no device.
template <class T, class S>
struct operands {
  spade::dense<T, S, row_major> row;
  spade::dense<T, S, col_major> col;
  spade::csr<T, S> csr;
  spade::coo<T, S> coo;
  spade::vector<T, S> vec;
};

using spade::testing::fresh_seed;

}  // namespace

// ---- products: 4 left operand kinds × 5 right ones, per space -------------------------------

template <class T>
void cpu_product_cells() {
  using K = kernels::eigen_product;
  using csr = spade::csr<T, cpu>;
  operands<T, cpu> o;
  // dense × dense, dense × vector: no conversions.
  static_assert(plans<decltype(o.row * o.row), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.row * o.col), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.col * o.row), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.col * o.col), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.row * o.vec), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.col * o.vec), candidates<candidate<K>>>);
  // dense × sparse: Eigen takes csr; a coo is converted.
  static_assert(plans<decltype(o.row * o.csr), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.col * o.csr), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.row * o.coo), candidates<candidate<K, convert<rhs, csr>>>>);
  static_assert(plans<decltype(o.col * o.coo), candidates<candidate<K, convert<rhs, csr>>>>);
  // sparse × dense, sparse × vector.
  static_assert(plans<decltype(o.csr * o.row), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.csr * o.col), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.csr * o.vec), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.coo * o.row), candidates<candidate<K, convert<lhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.col), candidates<candidate<K, convert<lhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.vec), candidates<candidate<K, convert<lhs, csr>>>>);
  // sparse × sparse: both operands csr, lhs converted first.
  static_assert(plans<decltype(o.csr * o.csr), candidates<candidate<K>>>);
  static_assert(plans<decltype(o.csr * o.coo), candidates<candidate<K, convert<rhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.csr), candidates<candidate<K, convert<lhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.coo),
                      candidates<candidate<K, convert<lhs, csr>, convert<rhs, csr>>>>);
}

template <class T>
void gpu_product_cells() {
  using csr = spade::csr<T, gpu>;
  using dense_row = spade::dense<T, gpu, row_major>;
  using spmm = kernels::cusparse_spmm;
  using gemm = kernels::cublas_gemm;
  using gemv = kernels::cublas_gemv;
  using spmv = kernels::cusparse_spmv;
  using hash = kernels::hash_spgemm;
  using spgemm = kernels::cusparse_spgemm;
  operands<T, gpu> o;
  // dense × dense: GEMM takes any layouts; dense × vector: GEMV.
  static_assert(plans<decltype(o.row * o.row), candidates<candidate<gemm>>>);
  static_assert(plans<decltype(o.row * o.col), candidates<candidate<gemm>>>);
  static_assert(plans<decltype(o.col * o.row), candidates<candidate<gemm>>>);
  static_assert(plans<decltype(o.col * o.col), candidates<candidate<gemm>>>);
  static_assert(plans<decltype(o.row * o.vec), candidates<candidate<gemv>>>);
  static_assert(plans<decltype(o.col * o.vec), candidates<candidate<gemv>>>);
  // dense × sparse: the sparse operand is densified (row-major) for GEMM.
  static_assert(
      plans<decltype(o.row * o.csr), candidates<candidate<gemm, convert<rhs, dense_row>>>>);
  static_assert(
      plans<decltype(o.col * o.csr), candidates<candidate<gemm, convert<rhs, dense_row>>>>);
  static_assert(plans<decltype(o.row * o.coo),
                      candidates<candidate<gemm, convert<rhs, csr>, convert<rhs, dense_row>>>>);
  static_assert(plans<decltype(o.col * o.coo),
                      candidates<candidate<gemm, convert<rhs, csr>, convert<rhs, dense_row>>>>);
  // sparse × dense: ELLPACK-R (ours, N <= 8), the tiled SpMM (ours, tensor cores), GCOO SpMM
  // (ours), cuSPARSE SpMM on csr, the paper's GCOO kernel and plain TF32 tiles (forced only),
  // GEMM on the densified operand last.
  using gcoo_spmm = kernels::gcoo_spmm;
  using gcoo_paper = kernels::gcoo_spmm_paper;
  using ellr_spmv = kernels::ellr_spmv;
  using rowwise = kernels::csr_rowwise;
  using tiled_spmm_k = kernels::tiled_spmm;
  using tiled_tf32 = kernels::tiled_spmm_tf32;
  using gcoo_t = spade::gcoo<T, gpu>;
  using ellr_t = spade::ellr<T, gpu>;
  using tiles_t = spade::tiled<T, gpu>;
  static_assert(plans<decltype(o.csr * o.row),
                      candidates<candidate<ellr_spmv, convert<lhs, ellr_t>>,
                                 candidate<tiled_spmm_k, convert<lhs, tiles_t>>,
                                 candidate<gcoo_spmm, convert<lhs, gcoo_t>>, candidate<rowwise>,
                                 candidate<spmm>, candidate<gcoo_paper, convert<lhs, gcoo_t>>,
                                 candidate<tiled_tf32, convert<lhs, tiles_t>>,
                                 candidate<gemm, convert<lhs, dense_row>>>>);
  // The gcoo kernels read B row-major: a col-major B is a conversion step of their plans; the
  // tiled ones read either layout.
  static_assert(
      plans<decltype(o.csr * o.col),
            candidates<candidate<ellr_spmv, convert<lhs, ellr_t>>,
                       candidate<tiled_spmm_k, convert<lhs, tiles_t>>,
                       candidate<gcoo_spmm, convert<lhs, gcoo_t>, convert<rhs, dense_row>>,
                       candidate<rowwise>, candidate<spmm>,
                       candidate<gcoo_paper, convert<lhs, gcoo_t>, convert<rhs, dense_row>>,
                       candidate<tiled_tf32, convert<lhs, tiles_t>>,
                       candidate<gemm, convert<lhs, dense_row>>>>);
  static_assert(
      plans<decltype(o.coo * o.row),
            candidates<candidate<ellr_spmv, convert<lhs, csr>, convert<lhs, ellr_t>>,
                       candidate<tiled_spmm_k, convert<lhs, csr>, convert<lhs, tiles_t>>,
                       candidate<gcoo_spmm, convert<lhs, csr>, convert<lhs, gcoo_t>>,
                       candidate<rowwise, convert<lhs, csr>>, candidate<spmm, convert<lhs, csr>>,
                       candidate<gcoo_paper, convert<lhs, csr>, convert<lhs, gcoo_t>>,
                       candidate<tiled_tf32, convert<lhs, csr>, convert<lhs, tiles_t>>,
                       candidate<gemm, convert<lhs, csr>, convert<lhs, dense_row>>>>);
  static_assert(
      plans<decltype(o.coo * o.col),
            candidates<candidate<ellr_spmv, convert<lhs, csr>, convert<lhs, ellr_t>>,
                       candidate<tiled_spmm_k, convert<lhs, csr>, convert<lhs, tiles_t>>,
                       candidate<gcoo_spmm, convert<lhs, csr>, convert<lhs, gcoo_t>,
                                 convert<rhs, dense_row>>,
                       candidate<rowwise, convert<lhs, csr>>, candidate<spmm, convert<lhs, csr>>,
                       candidate<gcoo_paper, convert<lhs, csr>, convert<lhs, gcoo_t>,
                                 convert<rhs, dense_row>>,
                       candidate<tiled_tf32, convert<lhs, csr>, convert<lhs, tiles_t>>,
                       candidate<gemm, convert<lhs, csr>, convert<lhs, dense_row>>>>);
  // sparse × vector: ELLPACK-R (ours) on the converted operand, the row-wise kernel (ours) on
  // small operands, else SpMV on csr.
  static_assert(
      plans<decltype(o.csr * o.vec), candidates<candidate<ellr_spmv, convert<lhs, ellr_t>>,
                                                candidate<rowwise>, candidate<spmv>>>);
  static_assert(
      plans<decltype(o.coo * o.vec),
            candidates<candidate<ellr_spmv, convert<lhs, csr>, convert<lhs, ellr_t>>,
                       candidate<rowwise, convert<lhs, csr>>, candidate<spmv, convert<lhs, csr>>>>);
  // sparse × sparse: the tiled SpGEMM on both operands as tiles (through csr), Spade's hash
  // SpGEMM on two csr, the fp16 tiled mode, cuSPARSE's SpGEMM last.
  using tiled_mm = kernels::tiled_spgemm;
  using tiled_fp16 = kernels::tiled_spgemm_fp16;
  using tiled_t = spade::tiled<T, gpu>;
  static_assert(
      plans<decltype(o.csr * o.csr),
            candidates<candidate<tiled_mm, convert<lhs, tiled_t>, convert<rhs, tiled_t>>,
                       candidate<hash>,
                       candidate<tiled_fp16, convert<lhs, tiled_t>, convert<rhs, tiled_t>>,
                       candidate<spgemm>>>);
  static_assert(
      plans<decltype(o.csr * o.coo), candidates<candidate<tiled_mm, convert<lhs, tiled_t>,
                                                          convert<rhs, csr>, convert<rhs, tiled_t>>,
                                                candidate<hash, convert<rhs, csr>>,
                                                candidate<tiled_fp16, convert<lhs, tiled_t>,
                                                          convert<rhs, csr>, convert<rhs, tiled_t>>,
                                                candidate<spgemm, convert<rhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.csr),
                      candidates<candidate<tiled_mm, convert<lhs, csr>, convert<lhs, tiled_t>,
                                           convert<rhs, tiled_t>>,
                                 candidate<hash, convert<lhs, csr>>,
                                 candidate<tiled_fp16, convert<lhs, csr>, convert<lhs, tiled_t>,
                                           convert<rhs, tiled_t>>,
                                 candidate<spgemm, convert<lhs, csr>>>>);
  static_assert(plans<decltype(o.coo * o.coo),
                      candidates<candidate<tiled_mm, convert<lhs, csr>, convert<lhs, tiled_t>,
                                           convert<rhs, csr>, convert<rhs, tiled_t>>,
                                 candidate<hash, convert<lhs, csr>, convert<rhs, csr>>,
                                 candidate<tiled_fp16, convert<lhs, csr>, convert<lhs, tiled_t>,
                                           convert<rhs, csr>, convert<rhs, tiled_t>>,
                                 candidate<spgemm, convert<lhs, csr>, convert<rhs, csr>>>>);
}

/// The rule each product cell picks (the same in both spaces).
template <class T, class S>
void product_rules() {
  operands<T, S> o;
  static_assert(rule_is<decltype(o.row * o.col), rules::dense_times_dense>);
  static_assert(rule_is<decltype(o.coo * o.row), rules::sparse_times_dense>);
  static_assert(rule_is<decltype(o.csr * o.col), rules::sparse_times_dense>);
  static_assert(rule_is<decltype(o.col * o.coo), rules::dense_times_sparse>);
  static_assert(rule_is<decltype(o.csr * o.vec), rules::sparse_times_vector>);
  static_assert(rule_is<decltype(o.coo * o.vec), rules::sparse_times_vector>);
  static_assert(rule_is<decltype(o.col * o.vec), rules::dense_times_vector>);
  static_assert(rule_is<decltype(o.coo * o.csr), rules::sparse_times_sparse>);
  static_assert(rule_is<decltype(o.row + o.col), rules::dense_plus_dense>);
  static_assert(rule_is<decltype(o.csr - o.coo), rules::sparse_plus_sparse>);
  static_assert(rule_is<decltype(o.vec + o.vec), rules::vector_plus_vector>);
  // A vector on the left has no product rule (the operator refuses it: tests/compile_fail).
  using spade::expr::product_result;
  using spade::expr::sum_result;
  using spade::expr::unsupported;
  using V = spade::vector<T, S>;
  static_assert(
      std::is_same_v<typename product_result<V, spade::dense<T, S, row_major>>::type, unsupported>);
  static_assert(std::is_same_v<typename product_result<V, spade::csr<T, S>>::type, unsupported>);
  static_assert(std::is_same_v<typename product_result<V, V>::type, unsupported>);
  static_assert(
      std::is_same_v<typename sum_result<spade::dense<T, S, row_major>, spade::csr<T, S>>::type,
                     unsupported>);
  static_assert(std::is_same_v<typename sum_result<spade::coo<T, S>, V>::type, unsupported>);
}

// ---- sums -----------------------------------------------------------------------------------

template <class T>
void sum_cells() {
  {
    using K = kernels::eigen_sum;
    using csr = spade::csr<T, cpu>;
    operands<T, cpu> o;
    static_assert(plans<decltype(o.row + o.row), candidates<candidate<K>>>);
    static_assert(plans<decltype(o.row + o.col), candidates<candidate<K>>>);
    static_assert(plans<decltype(o.col - o.row), candidates<candidate<K>>>);
    static_assert(plans<decltype(o.col + o.col), candidates<candidate<K>>>);
    static_assert(plans<decltype(o.csr + o.csr), candidates<candidate<K>>>);
    static_assert(plans<decltype(o.csr - o.coo), candidates<candidate<K, convert<rhs, csr>>>>);
    static_assert(plans<decltype(o.coo + o.csr), candidates<candidate<K, convert<lhs, csr>>>>);
    static_assert(plans<decltype(o.coo + o.coo),
                        candidates<candidate<K, convert<lhs, csr>, convert<rhs, csr>>>>);
    static_assert(plans<decltype(o.vec - o.vec), candidates<candidate<K>>>);
  }
  {
    using geam = kernels::cublas_geam;
    using add = kernels::cusparse_csr_add;
    using csr = spade::csr<T, gpu>;
    operands<T, gpu> o;
    // GEAM wants one layout: a rhs of the other layout is converted to the lhs one.
    static_assert(plans<decltype(o.row + o.row), candidates<candidate<geam>>>);
    static_assert(
        plans<decltype(o.row + o.col),
              candidates<candidate<geam, convert<rhs, spade::dense<T, gpu, row_major>>>>>);
    static_assert(
        plans<decltype(o.col - o.row),
              candidates<candidate<geam, convert<rhs, spade::dense<T, gpu, col_major>>>>>);
    static_assert(plans<decltype(o.col + o.col), candidates<candidate<geam>>>);
    static_assert(plans<decltype(o.csr + o.csr), candidates<candidate<add>>>);
    static_assert(plans<decltype(o.csr - o.coo), candidates<candidate<add, convert<rhs, csr>>>>);
    static_assert(plans<decltype(o.coo + o.csr), candidates<candidate<add, convert<lhs, csr>>>>);
    static_assert(plans<decltype(o.coo + o.coo),
                        candidates<candidate<add, convert<lhs, csr>, convert<rhs, csr>>>>);
    static_assert(plans<decltype(o.vec + o.vec), candidates<candidate<kernels::spade_axpby>>>);
  }
}

// ---- wrappers, nesting, has_kernel ------------------------------------------------------------

template <class T, class S>
void wrapped_and_nested() {
  operands<T, S> o;
  using base = typename spade::plan_of<decltype(o.coo * o.row)>::candidates;
  // Scaling and transposition fold into the node they wrap: the same candidates.
  static_assert(plans<decltype(T(2) * (o.coo * o.row)), base>);
  static_assert(plans<decltype((o.coo * o.row) * T(2)), base>);
  static_assert(plans<decltype(-(o.coo * o.row)), base>);
  static_assert(plans<decltype(spade::transpose(o.coo * o.row)), base>);
  static_assert(plans<decltype(T(2) * o.coo * o.row), base>);
  static_assert(plans<decltype(spade::transpose(o.coo) * o.row), base>);
  static_assert(plans<decltype(o.coo * spade::transpose(o.col)),
                      typename spade::plan_of<decltype(o.coo * o.col)>::candidates>);
  // A nested product is planned on its result type: A·(B·W) is sparse × dense(row).
  using nested = spade::plan_of<decltype(o.coo * (o.csr * o.row))>;
  static_assert(std::is_same_v<typename nested::lhs_type, spade::coo<T, S>>);
  static_assert(std::is_same_v<typename nested::rhs_type, spade::dense<T, S, row_major>>);
  static_assert(std::is_same_v<typename nested::candidates, base>);
  using outer = spade::plan_of<decltype((o.csr * o.coo) * o.vec)>;
  static_assert(std::is_same_v<typename outer::lhs_type, spade::csr<T, S>>);
  static_assert(std::is_same_v<typename outer::rule, rules::sparse_times_vector>);
  // A storage type has nothing to plan.
  static_assert(spade::plan_of<spade::csr<T, S>>::candidates::size == 0);
  static_assert(!spade::plan_of<spade::csr<T, S>>::template has_kernel<kernels::eigen_product>);
}

template <class T>
void has_kernel_cases() {
  operands<T, cpu> c;
  operands<T, gpu> g;
  using cpu_spmm = spade::plan_of<decltype(c.coo * c.row)>;
  static_assert(cpu_spmm::template has_kernel<kernels::eigen_product>);
  static_assert(!cpu_spmm::template has_kernel<kernels::eigen_sum>);
  static_assert(!cpu_spmm::template has_kernel<kernels::cusparse_spmm>);
  using gpu_spmm = spade::plan_of<decltype(g.coo * g.row)>;
  static_assert(gpu_spmm::template has_kernel<kernels::cusparse_spmm>);
  static_assert(gpu_spmm::template has_kernel<kernels::cublas_gemm>);
  static_assert(!gpu_spmm::template has_kernel<kernels::cusparse_spgemm>);
  static_assert(!gpu_spmm::template has_kernel<kernels::eigen_product>);
  static_assert(
      spade::plan_of<decltype(g.csr * g.coo)>::template has_kernel<kernels::cusparse_spgemm>);
  static_assert(
      !spade::plan_of<decltype(g.csr * g.row)>::template has_kernel<kernels::cusparse_spgemm>);
  static_assert(spade::plan_of<decltype(g.col * g.vec)>::template has_kernel<kernels::cublas_gemv>);
  static_assert(
      !spade::plan_of<decltype(g.col * g.vec)>::template has_kernel<kernels::cublas_gemm>);
  static_assert(spade::plan_of<decltype(g.vec - g.vec)>::template has_kernel<kernels::spade_axpby>);
  static_assert(spade::plan_of<decltype(c.row + c.col)>::template has_kernel<kernels::eigen_sum>);
  static_assert(
      !spade::plan_of<decltype(c.row + c.col)>::template has_kernel<kernels::eigen_product>);
  static_assert(
      spade::plan_of<decltype(T(3) * spade::transpose(c.csr * c.coo))>::template has_kernel<
          kernels::eigen_product>);
}

TEST_CASE_TEMPLATE("plan_of: candidates and conversion steps of every table cell", T, float,
                   double) {
  cpu_product_cells<T>();
  gpu_product_cells<T>();
  product_rules<T, cpu>();
  product_rules<T, gpu>();
  sum_cells<T>();
  wrapped_and_nested<T, cpu>();
  wrapped_and_nested<T, gpu>();
  has_kernel_cases<T>();
  // The candidate types expose their parts.
  using gpu_coo_plan = spade::plan_of<decltype(spade::coo<T, gpu>() * spade::dense<T, gpu>())>;
  static_assert(gpu_coo_plan::candidates::size == 8);
  using first = spade::plan::candidate<kernels::cusparse_spmm,
                                       spade::plan::steps<convert<lhs, spade::csr<T, gpu>>>>;
  static_assert(std::is_same_v<typename first::kernel, kernels::cusparse_spmm>);
  static_assert(first::conversions::size == 1);
}

TEST_CASE("gpu expressions are built from empty objects without touching a device") {
  operands<float, gpu> o;
  const auto e = o.coo * o.row;
  CHECK(e.rows() == 0);
  CHECK(e.cols() == 0);
  const auto nested = 2.0f * spade::transpose(o.csr * (o.coo * o.col)) + o.col;
  CHECK(nested.rows() == 0);
  const auto v = o.csr * o.vec;  // a vector counts as n × 1
  CHECK(v.rows() == 0);
  CHECK(v.cols() == 1);
}

// ---- explain ----------------------------------------------------------------------------------

TEST_CASE_TEMPLATE("explain names the rule, the conversions, the kernel and the density", T, float,
                   double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::convert<spade::coo>(spade::random_sparse<T>(8, 8, 0.25, seed));
  const auto b = spade::random_dense<T, col_major>(8, 3, seed + 1);
  const std::string text = spade::explain(a * b);
  CAPTURE(text);
  CHECK(contains(text, "rule \"sparse x dense\""));
  CHECK(contains(text, "coo<"));
  CHECK(contains(text, "8x8, nnz 16, density 0.25"));
  CHECK(contains(text, "lhs -> csr<"));
  CHECK(contains(text, "chosen: eigen_product"));

  const auto s = spade::random_sparse<T>(8, 8, 0.5, seed + 2);
  const std::string nested = spade::explain(T(2) * (s * (a * b)));
  CAPTURE(nested);
  CHECK(contains(nested, "scaled by 2"));
  CHECK(contains(nested, "evaluated first"));
  CHECK(contains(nested, "chosen at run time"));
  CHECK(contains(nested, "density 0.5"));

  auto c = spade::random_dense<T, col_major>(8, 3, seed + 3);
  const std::string fused = spade::explain(T(2) * (s * b) + T(3) * c);
  CAPTURE(fused);
  CHECK(contains(fused, "rule \"dense + dense\""));
  CHECK(contains(fused, "fused form"));
  CHECK(contains(spade::explain(s + a), "rule \"sparse + sparse\""));
  CHECK(contains(spade::explain(spade::transpose(s) * b), "transpose"));
}

TEST_CASE("explain on a gpu expression shows the density threshold at work (nothing runs)") {
  operands<float, gpu> o;
  const spade::thresholds saved = spade::tuning();
  const std::string text = spade::explain(o.coo * o.row);
  CAPTURE(text);
  CHECK(contains(text, "1. ellr_spmv: lhs -> csr<float, gpu>, lhs -> ellr<float, gpu>"));
  CHECK(contains(text, "2. tiled_spmm: lhs -> csr<float, gpu>, lhs -> tiled<float, gpu>"));
  CHECK(contains(text, "3. gcoo_spmm: lhs -> csr<float, gpu>, lhs -> gcoo<float, gpu>"));
  CHECK(contains(text, "4. csr_rowwise: lhs -> csr<float, gpu>"));
  CHECK(contains(text, "5. cusparse_spmm: lhs -> csr<float, gpu>"));
  CHECK(contains(text,
                 "8. cublas_gemm: lhs -> csr<float, gpu>, lhs -> dense(row_major)<float, gpu>"));
  CHECK(contains(text, "declined: tiled_spmm: N = 0 < tiled_spmm_min_columns"));
  // N = 0 columns: below gcoo_narrow_min_columns; an empty operand is small: the row-wise kernel
  // runs.
  CHECK(contains(text, "declined: gcoo_spmm: N = 0 < gcoo_narrow_min_columns"));
  CHECK(contains(text, "chosen: csr_rowwise"));
  CHECK(contains(text, "densify_density 0.15"));
  // Lowering the threshold to 0 makes even an empty matrix "dense enough": SpMM declines.
  spade::tuning().densify_density = 0.0;
  const std::string lowered = spade::explain(o.coo * o.row);
  spade::tuning() = saved;
  CAPTURE(lowered);
  CHECK(contains(lowered, "declined: gcoo_spmm"));
  CHECK(contains(lowered, "declined: csr_rowwise"));
  CHECK(contains(lowered, "declined: cusparse_spmm"));
  CHECK(contains(lowered, "declined: gcoo_spmm_paper"));
  CHECK(contains(lowered, "chosen: cublas_gemm"));
}

TEST_CASE("explain lists the copies the chosen kernel's run makes (nothing runs)") {
  operands<float, gpu> o;
  // cuSPARSE SpMM / the row-wise kernel take op(A) by flag and a transposed B as a copy.
  const std::string flag = spade::explain(spade::transpose(o.csr) * o.row);
  CAPTURE(flag);
  CHECK(contains(flag, "chosen: csr_rowwise"));
  CHECK_FALSE(contains(flag, "copy:"));
  const std::string rhs = spade::explain(o.csr * spade::transpose(o.row));
  CAPTURE(rhs);
  CHECK(contains(rhs, "chosen: csr_rowwise"));
  CHECK(contains(rhs, "copy: rhs transposed into a copy"));
  // hash_spgemm reads rows: both transposed operands are copies (coo operands: a csr pair would
  // be profiled on the device).
  const std::string spgemm = spade::explain(spade::transpose(o.coo) * spade::transpose(o.coo));
  CAPTURE(spgemm);
  CHECK(contains(spgemm, "chosen: hash_spgemm"));
  CHECK(contains(spgemm, "copy: lhs transposed into a copy"));
  CHECK(contains(spgemm, "copy: rhs transposed into a copy"));
  // cuBLAS takes both flags.
  CHECK_FALSE(contains(spade::explain(spade::transpose(o.row) * spade::transpose(o.col)), "copy:"));
  // On the host, Eigen's sparse sum needs one storage order: the transposed operand is copied.
  const auto s = spade::random_sparse<double>(6, 6, 0.3, fresh_seed());
  CHECK(contains(spade::explain(spade::transpose(s) + s), "copy: lhs transposed into a copy"));
  CHECK_FALSE(contains(spade::explain(spade::transpose(s) * s), "copy:"));
}

// ---- the conversion cache and eval<K> ---------------------------------------------------------

TEST_CASE_TEMPLATE("conversions are cached on the source operand and invalidated by writes", T,
                   float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  auto a = spade::convert<spade::coo>(spade::random_sparse<T>(20, 30, 0.2, seed));
  const auto b = spade::random_dense<T, row_major>(30, 4, seed + 1);
  auto count = [] { return spade::conversion_counter().load(); };

  std::size_t before = count();
  const spade::dense<T, cpu, row_major> first = a * b;
  CHECK(count() - before == 1);  // coo -> csr
  before = count();
  const spade::dense<T, cpu, row_major> second = a * b;
  CHECK(count() - before == 0);  // cached
  CHECK(first.values() == second.values());

  a.values()[0] *= T(2);  // a write through values() drops the cached csr
  before = count();
  const spade::dense<T, cpu, row_major> third = a * b;
  CHECK(count() - before == 1);
  CHECK(third.values() != first.values());

  // Both operands the same coo: converted once, reused for the other side.
  auto sq = spade::convert<spade::coo>(spade::random_sparse<T>(12, 12, 0.3, seed + 2));
  before = count();
  const spade::csr<T, cpu> square = sq * sq;
  CHECK(count() - before == 1);
  // A copy starts with an empty cache.
  const auto copy = a;
  before = count();
  const spade::dense<T, cpu, row_major> from_copy = copy * b;
  CHECK(count() - before == 1);
  CHECK(from_copy.values() == third.values());
  // Operands already in the kernel's format convert nothing.
  const auto s = spade::random_sparse<T>(20, 30, 0.2, seed + 3);
  before = count();
  const spade::dense<T, cpu, row_major> direct = s * b;
  const spade::csr<T, cpu> sum = s + s;
  CHECK(count() - before == 0);
  (void)square;
  (void)direct;
  (void)sum;
}

TEST_CASE_TEMPLATE("eval<K> forces a kernel and agrees with eval", T, float, double) {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const auto a = spade::random_sparse<T>(9, 11, 0.3, seed);
  const auto c = spade::convert<spade::coo>(a);
  const auto b = spade::random_dense<T, col_major>(11, 4, seed + 1);
  const auto x = spade::random_vector<T>(11, seed + 2);
  const auto forced = spade::eval<kernels::eigen_product>(a * b);
  static_assert(
      std::is_same_v<std::remove_const_t<decltype(forced)>, spade::dense<T, cpu, col_major>>);
  CHECK(forced.values() == spade::eval(a * b).values());
  CHECK(spade::eval<kernels::eigen_product>(c * b).values() == spade::eval(c * b).values());
  CHECK(spade::eval<kernels::eigen_product>(T(2) * (c * x)).values() ==
        spade::eval(T(2) * (c * x)).values());
  CHECK(spade::eval<kernels::eigen_product>(c * spade::transpose(a)).values() ==
        spade::eval(c * spade::transpose(a)).values());
  CHECK(spade::eval<kernels::eigen_sum>(a - c).values() == spade::eval(a - c).values());
  CHECK(spade::eval<kernels::eigen_sum>(b + b).values() == spade::eval(b + b).values());
}

// ---- docs/planner.md's rule tables against plan_of ------------------------------------------

namespace {

template <class... Cs>
std::vector<std::string> kernel_names(spade::plan::candidates<Cs...>) {
  return {Cs::kernel::name...};
}

/// The candidates plan_of<E> lists, by kernel name, in order.
template <class E>
std::vector<std::string> planned(const E&) {
  return kernel_names(typename spade::plan_of<E>::candidates{});
}

/// The backticked names of one table cell, in order (`ellr_spmv` (lhs → ellr; …); `gcoo_spmm` …).
std::vector<std::string> names_in(const std::string& cell) {
  std::vector<std::string> names;
  for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
    const std::size_t end = cell.find('`', at + 1);
    if (end == std::string::npos) break;
    names.push_back(cell.substr(at + 1, end - at - 1));
    at = end;
  }
  return names;
}

/// docs/planner.md's rule rows: the rule text (second column) → its gpu and cpu cells' names.
struct doc_rule {
  std::vector<std::string> gpu, cpu;
};
std::map<std::string, doc_rule> planner_doc_rules() {
  std::ifstream in(spade::testing::data_dir() / ".." / ".." / "docs" / "planner.md");
  REQUIRE(in.good());
  std::map<std::string, doc_rule> rules;
  std::string line;
  while (std::getline(in, line)) {
    // "| 2 | sparse × dense → dense | gpu cell | cpu cell |": a numbered row of a rule table.
    if (line.size() < 4 || line[0] != '|' || line[2] < '1' || line[2] > '9') continue;
    std::vector<std::string> cells;
    std::size_t at = 1;
    for (std::size_t bar = line.find('|', at); bar != std::string::npos;
         at = bar + 1, bar = line.find('|', at))
      cells.push_back(line.substr(at, bar - at));
    if (cells.size() != 4) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    rules[trim(cells[1])] = {names_in(cells[2]), names_in(cells[3])};
  }
  return rules;
}

}  // namespace

TEST_CASE_TEMPLATE("docs/planner.md's rule tables list plan_of's candidates, in order", T, float,
                   double) {
  const auto doc = planner_doc_rules();
  operands<T, gpu> g;
  operands<T, cpu> c;
  auto check = [&](const std::string& rule, const std::vector<std::string>& gpu_names,
                   const std::vector<std::string>& cpu_names) {
    CAPTURE(rule);
    REQUIRE(doc.count(rule) == 1);
    auto listed = [](const std::vector<std::string>& names) {  // printable when they differ
      std::string text;
      for (const auto& n : names)
        text += (text.empty() ? "" : ", ") + n;
      return text;
    };
    CHECK(listed(doc.at(rule).gpu) == listed(gpu_names));
    CHECK(listed(doc.at(rule).cpu) == listed(cpu_names));
  };
  check("dense × dense → dense", planned(g.row * g.col), planned(c.row * c.col));
  check("sparse × dense → dense", planned(g.csr * g.row), planned(c.csr * c.row));
  check("dense × sparse → dense", planned(g.row * g.csr), planned(c.row * c.csr));
  check("sparse × vector → vector", planned(g.csr * g.vec), planned(c.csr * c.vec));
  check("dense × vector → vector", planned(g.row * g.vec), planned(c.row * c.vec));
  check("sparse × sparse → csr", planned(g.csr * g.csr), planned(c.csr * c.csr));
  check("dense ± dense → dense (lhs layout)", planned(g.row + g.row), planned(c.row + c.row));
  check("sparse ± sparse → csr", planned(g.csr + g.csr), planned(c.csr + c.csr));
  check("vector ± vector → vector", planned(g.vec + g.vec), planned(c.vec + c.vec));
  CHECK(doc.size() == 9);  // every rule row of both tables is checked above
}
