// spade-bench's matrix sets (../shared/BENCHMARKS.md, "Sets"): the real matrices of a directory
// and the seeded synthetic families of spade::generate, each made on demand (one in memory at
// a time).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <spade/spade.hpp>

namespace spade::bench {

template <class T>
struct matrix_case {
  std::string family;  // "real" or the generator's name
  std::string name;
  std::function<csr<T, cpu>()> make;
  bool quick = false;  // in the --quick subset
};

struct set_options {
  std::string matrix_dir;  // real matrices: every *.mtx.gz / *.mtx here; empty: none
  bool quick = false;
  bool real = true;
  bool synthetic = true;
  bool heldout = false;  // the held-out set: never part of "all"
  bool graphs = false;   // the small generated graphs: never part of "all"
  std::string only;      // keep only cases whose name contains this
  std::uint64_t seed = 20240601;
};

/// Sets `o`'s set flags from a --sets value (all, real, synthetic, heldout or graphs); anything
/// else is a usage error.
inline void select_sets(set_options& o, const std::string& sets) {
  if (sets != "all" && sets != "real" && sets != "synthetic" && sets != "heldout" &&
      sets != "graphs")
    throw std::invalid_argument("--sets takes all, real, synthetic, heldout or graphs, not '" +
                                sets + "'");
  o.real = sets == "all" || sets == "real";
  o.synthetic = sets == "all" || sets == "synthetic";
  o.heldout = sets == "heldout";
  o.graphs = sets == "graphs";
}

/// Real matrices in the quick subset: the ones BENCHMARKS.md quotes cuSPARSE figures for,
/// plus a mesh and a power-law graph.
inline bool quick_real(const std::string& name) {
  for (const char* q : {"cage11", "soc-Slashdot0902", "delaunay_n16", "email-Enron"})
    if (name == q) return true;
  return false;
}

inline std::string gcoo_name(index_t n, double sparsity) {
  char text[64];
  std::snprintf(text, sizeof text, "gcoo_paper_n%d_s%g", n, sparsity);
  return text;
}

/// A generated circuit (spade::generate::circuit): `rows` rows of `mean` entries, `long_rows` of
/// them `long_length` long.
struct circuit_case {
  const char* name;
  index_t rows;
  double mean;
  index_t long_rows, long_length;
  bool quick = false;  // part of --quick
};

template <class T>
void add_circuit(std::vector<matrix_case<T>>& cases, const circuit_case& c, std::uint64_t seed) {
  cases.push_back({"circuit", c.name,
                   [c, seed] {
                     return spade::generate::circuit<T>(c.rows, c.mean, c.long_rows, c.long_length,
                                                        seed);
                   },
                   c.quick});
}

template <class T>
std::vector<matrix_case<T>> matrix_set(const set_options& o) {
  namespace fs = std::filesystem;
  namespace gen = spade::generate;
  std::vector<matrix_case<T>> cases;
  if (o.real && !o.matrix_dir.empty()) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(o.matrix_dir)) {
      const std::string f = entry.path().filename().string();
      if (f.ends_with(".mtx.gz") || f.ends_with(".mtx")) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::string name = path.filename().string();
      name = name.substr(0, name.find(".mtx"));
      cases.push_back(
          {"real", name, [path] { return read_matrix_market<T>(path); }, quick_real(name)});
    }
  }
  if (o.synthetic) {
    const std::uint64_t seed = o.seed;
    cases.push_back(
        {"stencil27", "stencil27_100^3", [] { return gen::stencil27<T>(100, 100, 100); }, true});
    cases.push_back(
        {"stencil7", "stencil7_160^3", [] { return gen::stencil7<T>(160, 160, 160); }, false});
    cases.push_back({"uniform_rows", "uniform_rows_2^20x16",
                     [seed] { return gen::uniform_rows<T>(1 << 20, 1 << 20, 16, seed); }, true});
    cases.push_back(
        {"rmat", "rmat_s20_ef16", [seed] { return gen::rmat<T>(20, 16, seed); }, false});
    // 16384 dense blocks of 8…64 rows: ≈ 0.59 M rows, ≈ 25.5 M entries.
    cases.push_back({"block_diagonal", "block_diagonal_16384x(8..64)",
                     [seed] { return gen::block_diagonal<T>(16384, 8, 64, seed); }, false});
    // Dense blocks of one size (the tiled SpGEMM's best and worst fits): 8 fills whole tiles,
    // 12 straddles them.
    cases.push_back({"block_diagonal", "block_diagonal_2^16x8",
                     [seed] { return gen::block_diagonal<T>(1 << 16, 8, seed); }, false});
    cases.push_back({"block_diagonal", "block_diagonal_2^15x12",
                     [seed] { return gen::block_diagonal<T>(1 << 15, 12, seed); }, false});
    cases.push_back({"block_diagonal", "block_diagonal_2^12x32",
                     [seed] { return gen::block_diagonal<T>(1 << 12, 32, seed); }, false});
    // 2^20 rows, 8 below and 8 above the diagonal: 17 per row.
    cases.push_back({"banded", "banded_2^20_l8_u8",
                     [seed] { return gen::banded<T>(1 << 20, 8, 8, seed); }, false});
    // Circuit simulation: short rows, hub columns, a few supply-net rows. 1.6 M at 4.8 per row
    // is G3_circuit's size, the class where the planner lost to cuSPARSE (issue 17), so it is
    // quick; 1 M at 3 and 4 M at 6 bracket it (≈ 3.0, 7.7 and 24 M entries).
    for (const auto& c : {circuit_case{"circuit_1M_3", 1000000, 3.0, 4, 1000, false},
                          circuit_case{"circuit_1.6M_4.8", 1600000, 4.8, 8, 2000, true},
                          circuit_case{"circuit_4M_6", 4000000, 6.0, 16, 5000, false}})
      add_circuit(cases, c, seed);
    for (index_t n : {4000, 8000, 14000})
      for (double s : {0.9, 0.98, 0.99, 0.995, 0.999, 0.9995}) {
        const bool quick = (n == 4000 && s == 0.99) || (n == 14000 && s == 0.999);
        cases.push_back({"gcoo_paper", gcoo_name(n, s),
                         [n, s, seed] { return gen::gcoo_paper<T>(n, s, seed); }, quick});
      }
  }
  if (o.heldout) {
    // Large regular matrices that no planner threshold was fitted on: new sizes and row
    // lengths of the synthetic families, to check a rule before it lands (docs/benchmarks).
    const std::uint64_t seed = o.seed + 1;
    cases.push_back(
        {"stencil27", "stencil27_128^3", [] { return gen::stencil27<T>(128, 128, 128); }, true});
    cases.push_back(
        {"stencil7", "stencil7_128^3", [] { return gen::stencil7<T>(128, 128, 128); }, true});
    cases.push_back({"banded", "banded_2^21_l4_u4",
                     [seed] { return gen::banded<T>(1 << 21, 4, 4, seed); }, true});
    cases.push_back({"banded", "banded_2^19_l16_u16",
                     [seed] { return gen::banded<T>(1 << 19, 16, 16, seed); }, true});
    cases.push_back({"uniform_rows", "uniform_rows_2^20x32",
                     [seed] { return gen::uniform_rows<T>(1 << 20, 1 << 20, 32, seed); }, true});
    cases.push_back({"block_diagonal", "block_diagonal_2^18x4",
                     [seed] { return gen::block_diagonal<T>(1 << 18, 4, seed); }, true});
    cases.push_back({"block_diagonal", "block_diagonal_32768x(4..40)",
                     [seed] { return gen::block_diagonal<T>(32768, 4, 40, seed); }, true});
    // Seven more, added after the narrow gcoo rule was fitted on the seven above and the
    // synthetic set (docs/benchmarks/spmm-narrow-gcoo-2026-11-28.md): its first unseen check.
    cases.push_back(
        {"stencil27", "stencil27_90^3", [] { return gen::stencil27<T>(90, 90, 90); }, false});
    cases.push_back(
        {"stencil7", "stencil7_200^3", [] { return gen::stencil7<T>(200, 200, 200); }, false});
    cases.push_back({"banded", "banded_2^22_l2_u2",
                     [seed] { return gen::banded<T>(1 << 22, 2, 2, seed); }, false});
    cases.push_back({"banded", "banded_2^20_l12_u12",
                     [seed] { return gen::banded<T>(1 << 20, 12, 12, seed); }, false});
    cases.push_back({"uniform_rows", "uniform_rows_2^21x8",
                     [seed] { return gen::uniform_rows<T>(1 << 21, 1 << 21, 8, seed); }, false});
    cases.push_back({"uniform_rows", "uniform_rows_2^19x24",
                     [seed] { return gen::uniform_rows<T>(1 << 19, 1 << 19, 24, seed); }, false});
    cases.push_back({"block_diagonal", "block_diagonal_2^17x6",
                     [seed] { return gen::block_diagonal<T>(1 << 17, 6, seed); }, false});
  }
  if (o.graphs) {
    // Small skewed graphs, 2 048 to 131 072 rows: the class of the real set's power-law graphs
    // (wiki-Vote, PGPgiantcompo, ego-Facebook, as-caida, email-Enron, soc-Slashdot0902), made
    // to check a rule fitted on those few matrices before it lands (docs/benchmarks). R-MAT
    // with Graph500's probabilities (longest rows hundreds of times the mean) and with milder
    // ones (a, b, c) = (0.45, 0.2, 0.2), nearer the real graphs' 20-200, and small circuits.
    const std::uint64_t seed = o.seed + 2;
    struct rmat_case {
      index_t scale, edge_factor;
      bool mild, quick;
    };
    auto add_rmat = [&](const rmat_case& g) {
      const std::string name = std::string(g.mild ? "rmat_mild_s" : "rmat_s") +
                               std::to_string(g.scale) + "_ef" + std::to_string(g.edge_factor);
      cases.push_back({"rmat", name,
                       [g, seed] {
                         return g.mild ? gen::rmat<T>(g.scale, g.edge_factor, 0.45, 0.2, 0.2, seed)
                                       : gen::rmat<T>(g.scale, g.edge_factor, seed);
                       },
                       g.quick});
    };
    for (const auto& g : {rmat_case{12, 8, false, false}, rmat_case{12, 32, true, false},
                          rmat_case{13, 4, false, false}, rmat_case{13, 16, true, true},
                          rmat_case{14, 8, true, false}, rmat_case{14, 16, false, true},
                          rmat_case{15, 4, true, false}, rmat_case{15, 8, false, false},
                          rmat_case{15, 16, true, false}, rmat_case{16, 4, false, false},
                          rmat_case{16, 8, true, true}, rmat_case{17, 8, false, false}})
      add_rmat(g);
    add_circuit(cases, {"circuit_12k_4", 12000, 4.0, 4, 400}, seed);
    add_circuit(cases, {"circuit_40k_6", 40000, 6.0, 8, 1500}, seed);
    // Added after the small-graph ALG1 rule was fitted on the graphs above and the real set
    // (docs/benchmarks/spmm-alg1-small-graphs-2026-11-28.md), as its unseen check: five R-MAT
    // graphs, a small circuit with a few long rows and one with many.
    for (const auto& g : {rmat_case{11, 16, false, false}, rmat_case{12, 8, true, false},
                          rmat_case{13, 16, false, false}, rmat_case{13, 32, true, false},
                          rmat_case{14, 16, true, false}})
      add_rmat(g);
    add_circuit(cases, {"circuit_6k_3", 6000, 3.0, 4, 300}, seed);
    add_circuit(cases, {"circuit_10k_5_hubs", 10000, 5.0, 150, 200}, seed);
  }
  std::vector<matrix_case<T>> kept;
  for (auto& c : cases)
    if ((!o.quick || c.quick) && (o.only.empty() || c.name.find(o.only) != std::string::npos))
      kept.push_back(std::move(c));
  return kept;
}

}  // namespace spade::bench
