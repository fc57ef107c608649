// spade-explain-preview: spade-bench explain's dump, previewed for a device profile with
// explain(e, profile) on a machine without a GPU. Blocks whose plan on the device depends on the
// products the dump ran before them (the planner converts some operands from their second
// product on) are skipped; the others should name the kernels the device's dump names
// (bench/explain_diff.py --chosen compares them).
//
//   spade-explain-preview --profile h100|h200|FILE [--double] [--matrices DIR]
//                         [--sets all|real|synthetic|heldout|graphs] [--quick] [--only S] [--n
//                         1,8,32,128,512]
//                         [--max-products P] [--seed S]
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <spade/spade.hpp>

#include "bench_sets.hpp"
#include "explain_dump.hpp"

namespace {

using namespace spade;
using namespace spade::bench;

template <class V>
V number(const std::string& option, const std::string& text) {
  V value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw std::invalid_argument(option + " takes a number, not '" + text + "'");
  return value;
}

template <class T>
int preview(const set_options& so, const std::vector<index_t>& widths, double max_products,
            const device_profile& profile) {
  for (const auto& mc : matrix_set<T>(so)) {
    const csr<T, cpu> a = mc.make();
    explain_matrix(mc.name, mc.family, a, widths, max_products,
                   [&](explain_kind kind, index_t n) -> std::string {
                     if (!previewable(kind, n))
                       return "skipped: on the device this plan depends on the products the dump "
                              "ran before it; a preview plans a fresh operand\n";
                     switch (kind) {
                       case explain_kind::vector_first:
                         return explain(a * vector<T, cpu>(a.cols()), profile);
                       case explain_kind::transposed_vector:
                         return explain(transpose(a) * vector<T, cpu>(a.rows()), profile);
                       case explain_kind::dense_first:
                         return explain(a * dense<T, cpu>(a.cols(), n), profile);
                       case explain_kind::dense_col_major:
                         return explain(a * dense<T, cpu, col_major>(a.cols(), n), profile);
                       case explain_kind::transposed_dense:
                         return explain(transpose(a) * dense<T, cpu>(a.rows(), n), profile);
                       case explain_kind::square:
                         return explain(a * a, profile);
                       case explain_kind::with_transpose:
                       default:
                         return explain(a * transpose(a), profile);
                     }
                   });
  }
  return 0;
}

int run(int argc, char** argv) {
  std::map<std::string, std::string> o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg == "--double" || arg == "--quick" || arg == "--float") {
      o[arg.substr(2)] = "1";
    } else if (arg.starts_with("--") && k + 1 < argc) {
      o[arg.substr(2)] = argv[++k];
    } else {
      throw std::invalid_argument("unknown argument '" + arg + "'");
    }
  }
  for (const auto& [key, value] : o)
    if (key != "double" && key != "float" && key != "quick" && key != "profile" &&
        key != "matrices" && key != "sets" && key != "only" && key != "n" &&
        key != "max-products" && key != "seed")
      throw std::invalid_argument("unknown option --" + key);
  if (!o.count("profile")) throw std::invalid_argument("--profile h100|h200|FILE is required");
  const device_profile profile = load_device_profile(o["profile"]);
  set_options so;
  const char* env = std::getenv("SPADE_MATRIX_DIR");
  so.matrix_dir = o.count("matrices") ? o["matrices"] : (env ? env : "");
  so.quick = o.count("quick") > 0;
  const std::string sets = o.count("sets") ? o["sets"] : "all";
  select_sets(so, sets);
  if (o.count("only")) so.only = o["only"];
  if (o.count("seed")) so.seed = number<std::uint64_t>("--seed", o["seed"]);
  std::vector<index_t> widths;
  std::string list = o.count("n") ? o["n"] : "1,8,32,128,512";
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    widths.push_back(number<index_t>("--n", list.substr(at, comma - at)));
    at = comma + 1;
  }
  const double max_products =
      o.count("max-products") ? number<double>("--max-products", o["max-products"]) : 2e9;
  std::printf("spade-explain-preview --profile %s\ndevice: previewed for %s (%s)\n",
              o["profile"].c_str(), profile.name.c_str(), profile.note.c_str());
  if (so.real && so.matrix_dir.empty())
    std::printf("no --matrices DIR and no $SPADE_MATRIX_DIR: real matrices skipped\n");
  return o.count("double") ? preview<double>(so, widths, max_products, profile)
                           : preview<float>(so, widths, max_products, profile);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spade-explain-preview: %s\n", e.what());
    return 1;
  }
}
