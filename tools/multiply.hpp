// `spade multiply`: plan, run and time one product A·B (sparse × dense, sparse × vector or
// sparse × sparse) on the GPU, or on the CPU without one; optionally force the kernel, show the
// plan and check the result against spade::reference.
#pragma once

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "load_matrix.hpp"
#include "report.hpp"

namespace spade::tool {

/// A mistake on the command line: its message goes to stderr, the exit code is 1.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class operand_kind { dense, vector, sparse };

struct multiply_options {
  std::string a_path;
  std::string b_path;  ///< the sparse B, for operand_kind::sparse
  operand_kind kind = operand_kind::dense;
  index_t dense_columns = 32;
  std::string kernel;  ///< empty: the planner chooses
  bool check = false;
  bool explain = false;
  std::string profile;  ///< --profile: preview the gpu plan for this device, run nothing
  bool single = false;  ///< --float (default double)
  int repeat = 5;
  bool help = false;
};

/// Seeds of the random operands, fixed so that runs are comparable.
inline constexpr std::uint64_t dense_seed = 1;
inline constexpr std::uint64_t vector_seed = 2;

inline long parse_count(const std::string& option, const std::string& text, long max) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, status] = std::from_chars(text.data(), end, value);
  if (status != std::errc{} || stop != end || value < 1 || value > max)
    throw usage_error(option + " takes a whole number from 1 to " + std::to_string(max) +
                      ", not '" + text + "'");
  return value;
}

inline multiply_options parse_multiply(const std::vector<std::string>& args) {
  multiply_options o;
  std::string operand;  // the option that chose the second operand, if any
  const auto choose = [&](operand_kind kind, const std::string& what) {
    if (!operand.empty())
      throw usage_error("one second operand only (B.mtx, --dense N or --vector): got " + operand +
                        " and " + what);
    operand = what;
    o.kind = kind;
  };
  const auto value_of = [&](std::size_t& k) -> const std::string& {
    if (k + 1 >= args.size()) throw usage_error(args[k] + " needs a value");
    return args[++k];
  };
  std::vector<std::string> files;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& arg = args[k];
    if (arg == "--dense") {
      choose(operand_kind::dense, arg);
      o.dense_columns =
          static_cast<index_t>(parse_count(arg, value_of(k), std::numeric_limits<index_t>::max()));
    } else if (arg == "--vector") {
      choose(operand_kind::vector, arg);
    } else if (arg == "--kernel") {
      o.kernel = value_of(k);
    } else if (arg == "--repeat") {
      o.repeat = static_cast<int>(parse_count(arg, value_of(k), 1000000));
    } else if (arg == "--check") {
      o.check = true;
    } else if (arg == "--explain") {
      o.explain = true;
    } else if (arg == "--profile") {
      o.profile = value_of(k);
    } else if (arg == "--float" || arg == "--double") {
      o.single = arg == "--float";  // the last one given wins
    } else if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg.starts_with("-")) {
      throw usage_error("unknown option '" + arg + "'");
    } else {
      files.push_back(arg);
    }
  }
  if (o.help) return o;
  if (!o.profile.empty() && !o.explain)
    throw usage_error("--profile previews a plan without running it: give --explain with it");
  if (!o.profile.empty() && (!o.kernel.empty() || o.check))
    throw usage_error("--profile previews the planner's choice: it takes no --kernel or --check");
  if (files.empty()) throw usage_error("no matrix file given");
  if (files.size() > 2) throw usage_error("at most two matrix files (A and B), got more");
  o.a_path = files[0];
  if (files.size() == 2) {
    choose(operand_kind::sparse, files[1]);
    o.b_path = files[1];
  }
  return o;
}

/// Scalar multiplications in A·B for csr A and B: Σ over entries a_ik of nnz(row k of B).
template <class T>
std::uint64_t products_of(const csr<T, cpu>& a, const csr<T, cpu>& b) {
  std::uint64_t total = 0;
  for (const index_t k : a.col_idx())
    total += static_cast<std::uint64_t>(b.row_ptr()[k + 1] - b.row_ptr()[k]);
  return total;
}

/// max |result − reference| / max |reference| over all entries (0 when both are empty or
/// zero): the error at the scale of the result, so entries near zero do not dominate it.
template <class M, class R>
double max_relative_error(const M& result, const R& reference) {
  const auto max_abs = [](const auto& values) {
    return values.size() ? static_cast<double>(values.cwiseAbs().maxCoeff()) : 0.0;
  };
  auto want = to_eigen(reference);
  double difference = 0;
  if constexpr (sparse_matrix<M>) {
    want.makeCompressed();
    decltype(want) delta = to_eigen(result) - want;  // patterns may differ
    delta.makeCompressed();
    difference = max_abs(delta.coeffs());
    return difference == 0 ? 0.0 : difference / max_abs(want.coeffs());
  } else {
    difference = max_abs(to_eigen(result) - want);
    return difference == 0 ? 0.0 : difference / max_abs(want);
  }
}

/// The kernels `--kernel` knows by name: every kernel a product rule of the planner lists as a
/// candidate (tests/cpu/test_tool.cpp checks that none is missing).
using named_kernels =
    std::tuple<kernels::eigen_product, kernels::cublas_gemm, kernels::cusparse_spmm,
               kernels::cusparse_spmv, kernels::cublas_gemv, kernels::cusparse_spgemm,
               kernels::gcoo_spmm, kernels::gcoo_spmm_paper, kernels::ellr_spmv,
               kernels::csr_rowwise, kernels::hash_spgemm, kernels::tiled_spgemm,
               kernels::tiled_spgemm_fp16, kernels::tiled_spmm, kernels::tiled_spmm_tf32>;

template <class E>
std::string candidate_names() {
  std::string names;
  [&]<class... Cs>(plan::candidates<Cs...>) {
    ((names += (names.empty() ? "" : ", ") + std::string(Cs::kernel::name)), ...);
  }(typename plan_of<E>::candidates{});
  return names;
}

template <class E>
using evaluator = decltype(eval(std::declval<const E&>())) (*)(const E&);

/// What `--kernel name` asks for: eval(e) for an empty name, eval<K>(e) for the kernel K of
/// that name when plan_of<E> lists K (checked at compile time for every K). Otherwise throws
/// usage_error naming the candidates (E's operands on the cpu: the tool found no GPU, and a
/// GPU kernel gets a message that says so).
template <class E>
evaluator<E> evaluator_for(const std::string& name) {
  if (name.empty()) return [](const E& e) { return eval(e); };
  evaluator<E> chosen = nullptr;
  bool is_known = false;
  bool is_gpu_kernel = false;
  std::string known;
  std::apply(
      [&](auto... tags) {
        const auto consider = [&]<class K>(K) {
          known += (known.empty() ? "" : ", ") + std::string(K::name);
          is_known = is_known || name == K::name;
          if (name == K::name) is_gpu_kernel = std::is_same_v<typename K::space, gpu>;
          if constexpr (plan_of<E>::template has_kernel<K>)
            if (name == K::name) chosen = [](const E& e) { return eval<K>(e); };
        };
        (consider(tags), ...);
      },
      named_kernels{});
  if (chosen) return chosen;
  const std::string what =
      std::string(plan_of<E>::rule::name) + " on the " + expr::result_t<E>::space_type::name;
  if (!is_known)
    throw usage_error("unknown kernel '" + name + "' (known: " + known + "); candidates for " +
                      what + ": " + candidate_names<E>());
  if (is_gpu_kernel && std::is_same_v<typename expr::result_t<E>::space_type, cpu>)
    throw usage_error("kernel '" + name + "' runs on the GPU and there is no GPU here, so " +
                      std::string(plan_of<E>::rule::name) +
                      " runs on the cpu; candidates: " + candidate_names<E>());
  throw usage_error("kernel '" + name + "' cannot compute " + what +
                    "; candidates: " + candidate_names<E>());
}

/// The kernel explain() reports as chosen for the top node ("" when it does not say).
inline std::string chosen_kernel(const std::string& plan) {
  const std::size_t at = plan.find("chosen: ");
  if (at == std::string::npos) return "";
  const std::size_t begin = at + 8;
  return plan.substr(begin, plan.find_first_of(" \n", begin) - begin);
}

template <class Space, class M>
auto to_space(const M& m) {
  if constexpr (std::is_same_v<Space, gpu>)
    return to_gpu(m);
  else
    return m;
}

/// What --check reports on the cpu instead of comparing the result with itself.
inline constexpr const char* cpu_check_skipped =
    "skipped \u2014 on the CPU the product runs on Eigen, which is also the reference";

/// Plans, runs (one warm-up, then `repeat` timed runs) and reports a_host · b_host in Space.
template <class Space, class A, class B>
int time_product(const A& a_host, const B& b_host, double flop, const std::string& flop_rule,
                 const multiply_options& o, report& r, std::ostream& out) {
  if (!o.profile.empty()) {  // --explain --profile: the gpu plan for that device, on the host
    r.print(out);
    out << explain(a_host * b_host, load_device_profile(o.profile)) << '\n';
    return 0;
  }
  const auto a = to_space<Space>(a_host);
  const auto b = to_space<Space>(b_host);
  const auto e = a * b;  // refers to a and b; evaluated below
  using E = std::remove_const_t<decltype(e)>;
  const evaluator<E> evaluate = evaluator_for<E>(o.kernel);
  const std::string plan = explain(e);
  if (o.explain) out << plan << '\n';
  const auto finish = [] {
    if constexpr (std::is_same_v<Space, gpu>) default_context().synchronize();
  };

  auto result = evaluate(e);  // warm-up: handles, workspaces, caches, page faults
  finish();
  std::vector<double> seconds;
  for (int k = 0; k < o.repeat; ++k) {
    const auto start = std::chrono::steady_clock::now();
    result = evaluate(e);
    finish();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const std::size_t half = seconds.size() / 2;
  const double median =
      seconds.size() % 2 ? seconds[half] : (seconds[half - 1] + seconds[half]) / 2;

  const std::string chosen = o.kernel.empty() ? chosen_kernel(plan) : o.kernel;
  r.add("kernel", (chosen.empty() ? std::string("see --explain") : chosen) +
                      (o.kernel.empty() ? " (planner's choice)" : " (forced)"));
  std::string shape = std::to_string(e.rows()) + "x" + std::to_string(e.cols());
  if constexpr (sparse_matrix<decltype(result)>) shape += ", nnz " + std::to_string(result.nnz());
  r.add("result", shape);
  r.add("runs", std::to_string(o.repeat) + " timed after 1 warm-up");
  r.add("time median", duration_text(median));
  r.add("flop", general(flop, 6) + " (" + flop_rule + ")");
  r.add("GFLOP/s", median > 0 ? fixed(flop / median * 1e-9, 3) : std::string("-"));
  if (o.check) {
    if constexpr (std::is_same_v<Space, cpu>)
      r.add("check", cpu_check_skipped);
    else
      r.add("max relative error", general(max_relative_error(result, reference(e)), 3));
  }
  r.print(out);
  return 0;
}

template <class T, class Space>
int multiply(const multiply_options& o, const std::string& device, std::ostream& out) {
  const csr<T, cpu> a = load_matrix<T>(o.a_path);
  const double nnz = static_cast<double>(a.nnz());
  report r;
  r.add("A", o.a_path + ": " + std::to_string(a.rows()) + "x" + std::to_string(a.cols()) +
                 ", nnz " + std::to_string(a.nnz()));
  switch (o.kind) {
    case operand_kind::dense: {
      const auto b = random_dense<T>(a.cols(), o.dense_columns, dense_seed);
      r.add("B", "random dense " + std::to_string(b.rows()) + "x" + std::to_string(b.cols()));
      r.add("scalar", std::is_same_v<T, float> ? "float" : "double");
      r.add("device", device);
      return time_product<Space>(a, b, 2 * nnz * o.dense_columns, "2 * nnz(A) * N", o, r, out);
    }
    case operand_kind::vector: {
      const auto x = random_vector<T>(a.cols(), vector_seed);
      r.add("B", "random vector of " + std::to_string(x.size()));
      r.add("scalar", std::is_same_v<T, float> ? "float" : "double");
      r.add("device", device);
      return time_product<Space>(a, x, 2 * nnz, "2 * nnz(A)", o, r, out);
    }
    case operand_kind::sparse:
    default: {
      const csr<T, cpu> b = load_matrix<T>(o.b_path);
      r.add("B", o.b_path + ": " + std::to_string(b.rows()) + "x" + std::to_string(b.cols()) +
                     ", nnz " + std::to_string(b.nnz()));
      r.add("scalar", std::is_same_v<T, float> ? "float" : "double");
      r.add("device", device);
      if (a.cols() != b.rows())
        throw dimension_mismatch("A*B needs cols(A) = rows(B); A is " + std::to_string(a.rows()) +
                                 "x" + std::to_string(a.cols()) + ", B is " +
                                 std::to_string(b.rows()) + "x" + std::to_string(b.cols()));
      const std::uint64_t products = products_of(a, b);
      return time_product<Space>(a, b, 2 * static_cast<double>(products),
                                 "2 * " + std::to_string(products) + " products", o, r, out);
    }
  }
}

/// `spade multiply ...`: runs on the GPU when one is usable, else on the CPU (and says so).
inline int command_multiply(const multiply_options& o, std::ostream& out) {
  if (!o.profile.empty()) {
    const std::string device = "none: previewed for the profile " + o.profile;
    return o.single ? multiply<float, cpu>(o, device, out) : multiply<double, cpu>(o, device, out);
  }
  std::string why;
  if (device_available(&why)) {
    const device_properties& p = default_context().properties();
    const std::string device = "gpu " + std::to_string(p.ordinal) + ": " + p.name;
    return o.single ? multiply<float, gpu>(o, device, out) : multiply<double, gpu>(o, device, out);
  }
  const std::string device = "cpu (no GPU: " + why + ")";
  return o.single ? multiply<float, cpu>(o, device, out) : multiply<double, cpu>(o, device, out);
}

}  // namespace spade::tool
