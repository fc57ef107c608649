// Row partitions and halo splits (formats/partition.hpp), the host side of several-GPU products:
// balance bounds, empty parts, products per row counted independently, and y = A·x rebuilt
// exactly from every part's local and remote blocks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <spade/formats/partition.hpp>
#include <spade/spade.hpp>
#include <utility>
#include <vector>

#include "test_support.hpp"

using spade::cpu;
using spade::index_t;
using spade::detail::row_partition;

namespace {

using csr_d = spade::csr<double, cpu>;
using spade::testing::fresh_seed;
using spade::testing::splitmix64;

/// A rows × cols csr: each position present with probability `density`, rows i with
/// i % 7 == 3 empty, and `long_rows` rows (from row 1 on, every fifth) filled to `long_length`
/// entries; values small integers, so every sum below is exact in double.
csr_d random_matrix(index_t rows, index_t cols, double density, index_t long_rows,
                    index_t long_length, std::uint64_t seed) {
  splitmix64 rng{seed};
  std::vector<index_t> row_ptr{0}, col_idx;
  std::vector<double> values;
  for (index_t r = 0; r < rows; ++r) {
    const bool is_long = long_rows > 0 && r % 5 == 1 && r / 5 < long_rows;
    if (r % 7 != 3) {
      for (index_t c = 0; c < cols; ++c) {
        const bool take = is_long ? rng.below(static_cast<std::uint64_t>(cols)) <
                                        static_cast<std::uint64_t>(long_length)
                                  : rng.chance(density);
        if (take) {
          col_idx.push_back(c);
          values.push_back(static_cast<double>(static_cast<int>(rng.below(9)) - 4));
        }
      }
    }
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return csr_d(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
}

void check_shape(const row_partition& p, index_t rows, index_t parts) {
  REQUIRE(p.parts() == parts);
  CHECK(p.first.front() == 0);
  CHECK(p.rows() == rows);
  for (index_t k = 0; k < parts; ++k)
    CHECK(p.begin(k) <= p.end(k));
  // owner() agrees with the blocks on every row.
  for (index_t k = 0; k < parts; ++k)
    for (index_t r = p.begin(k); r < p.end(k); ++r)
      CHECK(p.owner(r) == k);
}

/// Each part's work is within the largest row's work (and one for rounding) of total / parts.
void check_balance(const row_partition& p, const std::vector<std::int64_t>& prefix) {
  std::int64_t largest_row = 0;
  for (std::size_t r = 0; r + 1 < prefix.size(); ++r)
    largest_row = std::max(largest_row, prefix[r + 1] - prefix[r]);
  const double share = static_cast<double>(prefix.back()) / p.parts();
  for (index_t k = 0; k < p.parts(); ++k) {
    const std::int64_t work =
        prefix[static_cast<std::size_t>(p.end(k))] - prefix[static_cast<std::size_t>(p.begin(k))];
    CAPTURE(k);
    // Each boundary lies within half a row of its target, and targets are rounded down.
    CHECK(static_cast<double>(work) <= share + static_cast<double>(largest_row) + 1.0);
  }
}

std::vector<std::int64_t> entry_prefix(const csr_d& a) {
  std::vector<std::int64_t> prefix{0};
  for (index_t r = 0; r < a.rows(); ++r)
    prefix.push_back(prefix.back() + a.row_ptr()[static_cast<std::size_t>(r) + 1] -
                     a.row_ptr()[static_cast<std::size_t>(r)] + 1);
  return prefix;
}

}  // namespace

TEST_CASE("balanced_rows: boundaries, balance, empty parts, no work") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed};
  SUBCASE("random work, 1 to 9 parts") {
    std::vector<std::int64_t> prefix{0};
    for (int r = 0; r < 1000; ++r)
      prefix.push_back(prefix.back() + static_cast<std::int64_t>(rng.chance(0.01) ? rng.below(5000)
                                                                                  : rng.below(20)));
    for (index_t parts = 1; parts <= 9; ++parts) {
      const row_partition p = spade::detail::balanced_rows(prefix, parts);
      check_shape(p, 1000, parts);
      check_balance(p, prefix);
    }
  }
  SUBCASE("equal rows split evenly") {
    std::vector<std::int64_t> prefix{0};
    for (int r = 0; r < 12; ++r)
      prefix.push_back(prefix.back() + 3);
    CHECK(spade::detail::balanced_rows(prefix, 4).first == std::vector<index_t>{0, 3, 6, 9, 12});
    CHECK(spade::detail::balanced_rows(prefix, 1).first == std::vector<index_t>{0, 12});
  }
  SUBCASE("one heavy row takes a part of its own") {
    // Rows 0..3 cost 1, row 4 costs 100, rows 5..8 cost 1: two parts cut next to row 4.
    const std::vector<std::int64_t> prefix{0, 1, 2, 3, 4, 104, 105, 106, 107, 108};
    const row_partition p = spade::detail::balanced_rows(prefix, 2);
    CHECK((p.first == std::vector<index_t>{0, 4, 9} || p.first == std::vector<index_t>{0, 5, 9}));
    check_balance(p, prefix);
  }
  SUBCASE("more parts than rows: empty parts, every row owned once") {
    const std::vector<std::int64_t> prefix{0, 2, 4, 6};
    const row_partition p = spade::detail::balanced_rows(prefix, 8);
    check_shape(p, 3, 8);
    index_t non_empty = 0;
    for (index_t k = 0; k < 8; ++k)
      non_empty += p.size(k) > 0;
    CHECK(non_empty == 3);
  }
  SUBCASE("no work: rows split evenly; no rows") {
    CHECK(spade::detail::balanced_rows(std::vector<std::int64_t>(11, 0), 3).first ==
          std::vector<index_t>{0, 3, 6, 10});
    CHECK(spade::detail::balanced_rows({0}, 4).first == std::vector<index_t>{0, 0, 0, 0, 0});
  }
  SUBCASE("bad arguments") {
    CHECK_THROWS_AS(spade::detail::balanced_rows({0, 1}, 0), spade::error);
    CHECK_THROWS_AS(spade::detail::balanced_rows({}, 2), spade::error);
    CHECK_THROWS_AS(spade::detail::balanced_rows({1, 2}, 2), spade::error);
    CHECK_THROWS_AS(spade::detail::balanced_rows({0, 5, 3}, 2), spade::error);
    const row_partition none;
    CHECK(none.parts() == 0);
    CHECK(none.rows() == 0);
  }
}

TEST_CASE("partition_by_entries and partition_by_products balance what the product reads") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d a = random_matrix(301, 257, 0.02, 4, 200, seed);
  for (index_t parts : {1, 2, 3, 7, 400}) {
    CAPTURE(parts);
    const row_partition p = spade::detail::partition_by_entries(a, parts);
    check_shape(p, a.rows(), parts);
    check_balance(p, entry_prefix(a));
  }
  // Products per row counted here by walking B's rows entry by entry.
  const csr_d b = random_matrix(257, 90, 0.05, 2, 80, seed + 1);
  std::vector<std::int64_t> prefix{0};
  for (index_t r = 0; r < a.rows(); ++r) {
    std::int64_t products = 1;
    for (index_t k = a.row_ptr()[static_cast<std::size_t>(r)];
         k < a.row_ptr()[static_cast<std::size_t>(r) + 1]; ++k) {
      const index_t row_of_b = a.col_idx()[static_cast<std::size_t>(k)];
      for (index_t j = b.row_ptr()[static_cast<std::size_t>(row_of_b)];
           j < b.row_ptr()[static_cast<std::size_t>(row_of_b) + 1]; ++j)
        ++products;
    }
    prefix.push_back(prefix.back() + products);
  }
  for (index_t parts : {1, 2, 5, 64}) {
    CAPTURE(parts);
    const row_partition p = spade::detail::partition_by_products(a, b, parts);
    CHECK(p == spade::detail::balanced_rows(prefix, parts));
    check_shape(p, a.rows(), parts);
    check_balance(p, prefix);
  }
  CHECK_THROWS_AS(spade::detail::partition_by_products(a, a, 2), spade::dimension_mismatch);
  // The short-row circuit family with its few long rows (issue 17's class).
  const auto circuit = spade::generate::circuit<double>(20000, 4.0, 3, 2000, seed);
  const row_partition c = spade::detail::partition_by_entries(circuit, 4);
  check_shape(c, circuit.rows(), 4);
  check_balance(c, entry_prefix(circuit));
}

TEST_CASE("partition_for_products: rows that read other parts weigh a second pass") {
  using spade::detail::partition_for_products;
  constexpr std::int64_t pass = spade::detail::row_pass_cost;
  REQUIRE(pass == 3);  // the cuts worked out by hand below assume it
  // 200 rows of two entries each. Rows 0-99 read columns r and (r + 1) % 100; rows 100-199
  // read columns r - 100 and r. Every row costs 2 + 3 = 5 until cut, so the first cut is 100.
  // With a cut at b >= 100, the rows from b on read column r - 100 < b of part 0 and cost 8;
  // the rows before b read only columns below b and cost 5. By hand: cut 100 -> 5·100 = 500
  // before, 800 after, total 1300, target 650: 500 + 18·8 = 644 (off 6), 500 + 19·8 = 652
  // (off 2), so 119. Then 595 + k·8 against (595 + 81·8) / 2 = 621.5, floored to 621: 122
  // (619, off 2). Then 610 + k·8 against 617: 123 (618, off 1), where 5b = 8(200 - b) settles.
  std::vector<index_t> ptr{0}, col;
  for (index_t r = 0; r < 200; ++r) {
    const index_t a = r < 100 ? r : r - 100, b = r < 100 ? (r + 1) % 100 : r;
    col.push_back(std::min(a, b));
    col.push_back(std::max(a, b));
    ptr.push_back(static_cast<index_t>(col.size()));
  }
  const csr_d twin(200, 200, ptr, col, std::vector<double>(col.size(), 1.0));
  CHECK(partition_for_products(twin, 2, 0).first == std::vector<index_t>{0, 100, 200});
  CHECK(partition_for_products(twin, 2, 1).first == std::vector<index_t>{0, 119, 200});
  CHECK(partition_for_products(twin, 2, 2).first == std::vector<index_t>{0, 122, 200});
  CHECK(partition_for_products(twin, 2).first == std::vector<index_t>{0, 123, 200});
  CHECK(partition_for_products(twin, 2, 50).first == std::vector<index_t>{0, 123, 200});
  CHECK(partition_for_products(twin, 1).first == std::vector<index_t>{0, 200});

  // A non-square matrix gets the first cut only: entries plus the pass cost per row.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d wide = random_matrix(301, 257, 0.02, 4, 200, seed);
  std::vector<std::int64_t> prefix{0};
  for (index_t r = 0; r < wide.rows(); ++r)
    prefix.push_back(prefix.back() + wide.row_ptr()[static_cast<std::size_t>(r) + 1] -
                     wide.row_ptr()[static_cast<std::size_t>(r)] + pass);
  for (index_t parts : {1, 2, 3, 7, 400}) {
    CAPTURE(parts);
    const row_partition p = partition_for_products(wide, parts);
    CHECK(p == spade::detail::balanced_rows(prefix, parts));
    check_shape(p, wide.rows(), parts);
  }

  // On a power-law graph the cut's worst part, costed the way the model costs it under that
  // cut, is no worse than the worst part of the cut by entries.
  const auto graph = spade::generate::rmat<double>(13, 16, 1);
  const auto worst_part = [&](const row_partition& cut) {
    std::int64_t worst = 0;
    for (index_t p = 0; p < cut.parts(); ++p) {
      std::int64_t cost = 0;
      for (index_t r = cut.begin(p); r < cut.end(p); ++r) {
        const auto i = static_cast<std::size_t>(r);
        bool other = false;
        for (index_t k = graph.row_ptr()[i]; k < graph.row_ptr()[i + 1]; ++k) {
          const index_t c = graph.col_idx()[static_cast<std::size_t>(k)];
          other = other || c < cut.begin(p) || c >= cut.end(p);
        }
        cost += graph.row_ptr()[i + 1] - graph.row_ptr()[i] + pass + (other ? pass : 0);
      }
      worst = std::max(worst, cost);
    }
    return worst;
  };
  for (index_t parts : {2, 4}) {
    CAPTURE(parts);
    const row_partition modelled = partition_for_products(graph, parts);
    check_shape(modelled, graph.rows(), parts);
    const std::int64_t by_model = worst_part(modelled);
    const std::int64_t by_entries = worst_part(spade::detail::partition_by_entries(graph, parts));
    CAPTURE(by_model);
    CAPTURE(by_entries);
    CHECK(by_model < by_entries);
  }
}

TEST_CASE("split_part: local and remote blocks rebuild y = A*x, halos name what owners send") {
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed + 7};
  struct shape {
    index_t rows, cols, parts;
    double density;
  };
  for (const shape s :
       {shape{120, 120, 3, 0.05}, shape{97, 61, 4, 0.1}, shape{33, 31, 1, 0.2}, shape{5, 9, 8, 0.5},
        shape{1, 1, 2, 1.0}, shape{0, 0, 3, 0.0}, shape{40, 40, 5, 0.0}}) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    CAPTURE(s.parts);
    const csr_d a = random_matrix(s.rows, s.cols, s.density, 2, s.cols / 2, seed);
    std::vector<double> x(static_cast<std::size_t>(s.cols));
    for (double& v : x)
      v = static_cast<double>(static_cast<int>(rng.below(11)) - 5);
    // y = A·x, entry by entry (integers: exact).
    std::vector<double> y(static_cast<std::size_t>(s.rows), 0.0);
    for (index_t r = 0; r < s.rows; ++r)
      for (index_t k = a.row_ptr()[static_cast<std::size_t>(r)];
           k < a.row_ptr()[static_cast<std::size_t>(r) + 1]; ++k)
        y[static_cast<std::size_t>(r)] +=
            a.values()[static_cast<std::size_t>(k)] *
            x[static_cast<std::size_t>(a.col_idx()[static_cast<std::size_t>(k)])];

    const row_partition rows = spade::detail::partition_by_entries(a, s.parts);
    std::vector<std::int64_t> column_work(static_cast<std::size_t>(s.cols) + 1);
    for (index_t c = 0; c <= s.cols; ++c)
      column_work[static_cast<std::size_t>(c)] = c;
    const row_partition cols = spade::detail::balanced_rows(column_work, s.parts);
    std::size_t entries = 0;
    for (index_t p = 0; p < s.parts; ++p) {
      CAPTURE(p);
      const auto block = spade::detail::split_part(a, rows, cols, p);
      CHECK(block.local.rows() == rows.size(p));
      CHECK(block.local.cols() == cols.size(p));
      CHECK(block.remote.rows() == rows.size(p));
      CHECK(block.remote.cols() == static_cast<index_t>(block.halo.size()));
      entries += static_cast<std::size_t>(block.local.nnz() + block.remote.nnz());
      // The halo: sorted, distinct, none owned by p, grouped by owner as halo_first says.
      CHECK(std::is_sorted(block.halo.begin(), block.halo.end()));
      CHECK(std::set<index_t>(block.halo.begin(), block.halo.end()).size() == block.halo.size());
      REQUIRE(block.halo_first.size() == static_cast<std::size_t>(s.parts) + 1);
      CHECK(block.halo_first.front() == 0);
      CHECK(block.halo_first.back() == static_cast<index_t>(block.halo.size()));
      for (index_t q = 0; q < s.parts; ++q)
        for (index_t h = block.halo_first[static_cast<std::size_t>(q)];
             h < block.halo_first[static_cast<std::size_t>(q) + 1]; ++h) {
          CHECK(q != p);
          CHECK(cols.owner(block.halo[static_cast<std::size_t>(h)]) == q);
        }
      // y_p = local · x_p + remote · x[halo]: the local sum first, then the remote one.
      for (index_t r = 0; r < rows.size(p); ++r) {
        double sum = 0;
        const auto i = static_cast<std::size_t>(r);
        for (index_t k = block.local.row_ptr()[i]; k < block.local.row_ptr()[i + 1]; ++k)
          sum += block.local.values()[static_cast<std::size_t>(k)] *
                 x[static_cast<std::size_t>(cols.begin(p) +
                                            block.local.col_idx()[static_cast<std::size_t>(k)])];
        for (index_t k = block.remote.row_ptr()[i]; k < block.remote.row_ptr()[i + 1]; ++k)
          sum += block.remote.values()[static_cast<std::size_t>(k)] *
                 x[static_cast<std::size_t>(block.halo[static_cast<std::size_t>(
                     block.remote.col_idx()[static_cast<std::size_t>(k)])])];
        CHECK(sum == y[static_cast<std::size_t>(rows.begin(p) + r)]);
      }
      // Both blocks are valid csr matrices (sorted columns within rows).
      CHECK_NOTHROW(csr_d(block.local.rows(), block.local.cols(), block.local.row_ptr(),
                          block.local.col_idx(), block.local.values()));
      CHECK_NOTHROW(csr_d(block.remote.rows(), block.remote.cols(), block.remote.row_ptr(),
                          block.remote.col_idx(), block.remote.values()));
    }
    CHECK(entries == static_cast<std::size_t>(a.nnz()));
  }
}

TEST_CASE("split_part rejects partitions that do not fit the matrix") {
  const csr_d a = random_matrix(10, 8, 0.3, 0, 0, 1);
  const row_partition rows =
      spade::detail::balanced_rows(std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2);
  const row_partition cols8 = spade::detail::balanced_rows(std::vector<std::int64_t>(9, 0), 2);
  const row_partition cols8_in3 = spade::detail::balanced_rows(std::vector<std::int64_t>(9, 0), 3);
  CHECK_NOTHROW(spade::detail::split_part(a, rows, cols8, 1));
  CHECK_THROWS_AS(spade::detail::split_part(a, rows, cols8_in3, 0), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::detail::split_part(a, cols8, cols8, 0), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::detail::split_part(a, rows, cols8, 2), spade::dimension_mismatch);
  CHECK_THROWS_WITH_AS(spade::detail::split_part(a, rows, cols8_in3, 0),
                       doctest::Contains("the part counts must be equal"),
                       spade::dimension_mismatch);
}

TEST_CASE("halo exchange: a distributed A*X simulated part by part equals A*X") {
  // Every part keeps only its block of X (n columns, row-major); what it sends is read through
  // sends[q][p] from its own block, delivered in part order into the receiver's halo rows; then
  // each part computes local * X_p + remote * X_halo. Integer values: exact.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  splitmix64 rng{seed + 3};
  for (const index_t parts : {1, 2, 3, 6, 70}) {
    for (const index_t n : {1, 3}) {
      CAPTURE(parts);
      CAPTURE(n);
      const csr_d a = random_matrix(64, 64, 0.06, 3, 40, seed + static_cast<std::uint64_t>(parts));
      std::vector<double> x(static_cast<std::size_t>(a.cols() * n));
      for (double& v : x)
        v = static_cast<double>(static_cast<int>(rng.below(7)) - 3);
      const row_partition rows = spade::detail::partition_by_entries(a, parts);
      const row_partition& cols = rows;  // a square operand: x is cut like A's rows
      std::vector<spade::detail::part_block<double>> blocks;
      for (index_t p = 0; p < parts; ++p)
        blocks.push_back(spade::detail::split_part(a, rows, cols, p));
      const auto exchange = spade::detail::exchange_of(blocks, cols);
      REQUIRE(exchange.sends.size() == static_cast<std::size_t>(parts));

      for (index_t p = 0; p < parts; ++p) {
        const auto& block = blocks[static_cast<std::size_t>(p)];
        // The halo rows of X as p receives them: from each q in order, q's own rows.
        std::vector<double> halo_rows;
        for (index_t q = 0; q < parts; ++q) {
          const auto& list =
              exchange.sends[static_cast<std::size_t>(q)][static_cast<std::size_t>(p)];
          if (q == p) CHECK(list.empty());
          for (const index_t own : list) {
            CHECK(own >= 0);
            CHECK(own < cols.size(q));
            for (index_t j = 0; j < n; ++j)
              halo_rows.push_back(x[static_cast<std::size_t>((cols.begin(q) + own) * n + j)]);
          }
        }
        REQUIRE(halo_rows.size() == block.halo.size() * static_cast<std::size_t>(n));
        for (index_t r = 0; r < rows.size(p); ++r) {
          const auto i = static_cast<std::size_t>(r);
          for (index_t j = 0; j < n; ++j) {
            double want = 0, got = 0;
            const index_t global = rows.begin(p) + r;
            for (index_t k = a.row_ptr()[static_cast<std::size_t>(global)];
                 k < a.row_ptr()[static_cast<std::size_t>(global) + 1]; ++k)
              want += a.values()[static_cast<std::size_t>(k)] *
                      x[static_cast<std::size_t>(a.col_idx()[static_cast<std::size_t>(k)] * n + j)];
            for (index_t k = block.local.row_ptr()[i]; k < block.local.row_ptr()[i + 1]; ++k)
              got += block.local.values()[static_cast<std::size_t>(k)] *
                     x[static_cast<std::size_t>(
                         (cols.begin(p) + block.local.col_idx()[static_cast<std::size_t>(k)]) * n +
                         j)];
            for (index_t k = block.remote.row_ptr()[i]; k < block.remote.row_ptr()[i + 1]; ++k)
              got += block.remote.values()[static_cast<std::size_t>(k)] *
                     halo_rows[static_cast<std::size_t>(
                         block.remote.col_idx()[static_cast<std::size_t>(k)] * n + j)];
            CHECK(got == want);
          }
        }
      }
    }
  }
  const csr_d a = random_matrix(8, 8, 0.5, 0, 0, seed);
  const row_partition two = spade::detail::partition_by_entries(a, 2);
  std::vector<spade::detail::part_block<double>> one_block{
      spade::detail::split_part(a, two, two, 0)};
  CHECK_THROWS_AS(spade::detail::exchange_of(one_block, two), spade::dimension_mismatch);
  // Blocks split over another partition (three parts) do not fit an exchange over two.
  const row_partition three = spade::detail::partition_by_entries(a, 3);
  std::vector<spade::detail::part_block<double>> wrong_blocks{
      spade::detail::split_part(a, three, three, 0), spade::detail::split_part(a, three, three, 1)};
  CHECK_THROWS_AS(spade::detail::exchange_of(wrong_blocks, two), spade::dimension_mismatch);
}

TEST_CASE("row exchange: a distributed A*B (SpGEMM) simulated part by part equals A*B") {
  // B is cut by rows like A's columns; each part keeps its block of B, receives the rows its
  // halo names (gather_rows by each owner, stack_rows in part order), and computes
  // local * B_p + remote * B_halo with Spade's cpu products. Positive integer values: no
  // cancellation, so patterns and values must match A*B exactly.
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  auto positive = [](csr_d m) {
    auto& v = m.values();
    for (std::size_t k = 0; k < v.size(); ++k)
      v[k] = static_cast<double>(k % 5 + 1);
    return m;
  };
  const csr_d a = positive(random_matrix(57, 64, 0.07, 2, 30, seed));
  const csr_d b = positive(random_matrix(64, 45, 0.08, 2, 20, seed + 1));
  const csr_d ab = a * b;
  for (const index_t parts : {1, 2, 4, 9, 80}) {
    CAPTURE(parts);
    const row_partition rows = spade::detail::partition_by_products(a, b, parts);
    const row_partition cols = spade::detail::partition_by_entries(b, parts);
    std::vector<spade::detail::part_block<double>> blocks;
    for (index_t p = 0; p < parts; ++p)
      blocks.push_back(spade::detail::split_part(a, rows, cols, p));
    const auto exchange = spade::detail::exchange_of(blocks, cols);
    // Each part's own rows of B.
    std::vector<csr_d> b_blocks;
    for (index_t q = 0; q < parts; ++q) {
      std::vector<index_t> own(static_cast<std::size_t>(cols.size(q)));
      for (index_t r = 0; r < cols.size(q); ++r)
        own[static_cast<std::size_t>(r)] = cols.begin(q) + r;
      b_blocks.push_back(spade::detail::gather_rows(b, own));
    }
    for (index_t p = 0; p < parts; ++p) {
      CAPTURE(p);
      const auto& block = blocks[static_cast<std::size_t>(p)];
      std::vector<csr_d> received;
      for (index_t q = 0; q < parts; ++q)
        received.push_back(spade::detail::gather_rows(
            b_blocks[static_cast<std::size_t>(q)],
            exchange.sends[static_cast<std::size_t>(q)][static_cast<std::size_t>(p)]));
      const csr_d b_halo = spade::detail::stack_rows(received, b.cols());
      REQUIRE(b_halo.rows() == static_cast<index_t>(block.halo.size()));
      const csr_d c_p = block.local * b_blocks[static_cast<std::size_t>(p)] + block.remote * b_halo;
      const csr_d want = spade::rows(ab, rows.begin(p), rows.size(p));
      CHECK(c_p.rows() == want.rows());
      CHECK(c_p.row_ptr() == want.row_ptr());
      CHECK(c_p.col_idx() == want.col_idx());
      CHECK(c_p.values() == want.values());
    }
  }
  CHECK_THROWS_AS(spade::detail::gather_rows(b, {64}), spade::dimension_mismatch);
  CHECK_THROWS_AS(spade::detail::stack_rows(std::vector<csr_d>{a}, b.cols()),
                  spade::dimension_mismatch);
  CHECK(spade::detail::stack_rows(std::vector<csr_d>{}, 3).rows() == 0);
}

TEST_CASE("transpose all-to-all: a distributed transpose simulated part by part equals the whole") {
  // What lib and distributed.hpp do on the GPUs, on the host: part p transposes its block; the
  // rows of that transpose that part q owns (transpose_partition) go to q, their columns moved
  // to A's row numbers; q stacks the slices in part order and gathers the stack's rows in
  // interleaved_rows order, its row pointers every parts-th gathered one. The expectation is
  // written out here, entry by entry.
  CHECK(spade::detail::interleaved_rows(3, 2) == std::vector<index_t>{0, 2, 4, 1, 3, 5});
  CHECK(spade::detail::interleaved_rows(1, 3) == std::vector<index_t>{0, 1, 2});
  CHECK(spade::detail::interleaved_rows(4, 0).empty());
  const std::uint64_t seed = fresh_seed();
  CAPTURE(seed);
  const csr_d matrices[] = {random_matrix(64, 64, 0.08, 2, 30, seed),
                            random_matrix(57, 64, 0.07, 2, 30, seed + 1),
                            random_matrix(64, 45, 0.08, 1, 20, seed + 2),
                            csr_d(0, 0),
                            csr_d(7, 0),
                            csr_d(0, 5)};
  for (const csr_d& a : matrices) {
    CAPTURE(a.rows());
    CAPTURE(a.cols());
    // Aᵀ by hand: the entries of each column of A, in row order.
    std::vector<std::vector<std::pair<index_t, double>>> columns(
        static_cast<std::size_t>(a.cols()));
    for (index_t r = 0; r < a.rows(); ++r)
      for (index_t k = a.row_ptr()[r]; k < a.row_ptr()[r + 1]; ++k)
        columns[static_cast<std::size_t>(a.col_idx()[k])].push_back({r, a.values()[k]});
    for (const index_t parts : {1, 2, 4, 9, 80}) {
      CAPTURE(parts);
      const row_partition rows = spade::detail::partition_by_entries(a, parts);
      const row_partition to = spade::detail::transpose_partition(rows, a.cols());
      check_shape(to, a.cols(), parts);
      if (a.rows() == a.cols()) {
        CHECK(to == rows);
      } else {
        for (index_t q = 0; q < parts; ++q)
          CHECK(std::abs(to.size(q) - a.cols() / parts) <= 1);
      }
      // Each part's transposed block, columns local to the block.
      std::vector<csr_d> flipped;
      for (index_t p = 0; p < parts; ++p) {
        const csr_d block = spade::rows(a, rows.begin(p), rows.size(p));
        flipped.push_back(csr_d(spade::transpose(block)));
      }
      for (index_t q = 0; q < parts; ++q) {
        CAPTURE(q);
        std::vector<index_t> mine(static_cast<std::size_t>(to.size(q)));
        for (index_t i = 0; i < to.size(q); ++i)
          mine[static_cast<std::size_t>(i)] = to.begin(q) + i;
        std::vector<csr_d> slices;
        for (index_t p = 0; p < parts; ++p) {
          csr_d slice = spade::detail::gather_rows(flipped[static_cast<std::size_t>(p)], mine);
          std::vector<index_t> col = slice.col_idx();
          for (auto& c : col)
            c += rows.begin(p);
          slices.emplace_back(spade::unchecked, slice.rows(), a.rows(), slice.row_ptr(),
                              std::move(col), slice.values());
        }
        const csr_d stack = spade::detail::stack_rows(slices, a.rows());
        REQUIRE(stack.rows() == parts * to.size(q));
        const csr_d gathered =
            spade::detail::gather_rows(stack, spade::detail::interleaved_rows(parts, to.size(q)));
        std::vector<index_t> ptr;
        for (index_t i = 0; i <= to.size(q); ++i)
          ptr.push_back(gathered.row_ptr()[static_cast<std::size_t>(i * parts)]);
        std::vector<index_t> want_ptr{0}, want_col;
        std::vector<double> want_val;
        for (index_t c = to.begin(q); c < to.end(q); ++c) {
          for (const auto& [r, v] : columns[static_cast<std::size_t>(c)]) {
            want_col.push_back(r);
            want_val.push_back(v);
          }
          want_ptr.push_back(static_cast<index_t>(want_col.size()));
        }
        CHECK(ptr == want_ptr);
        CHECK(gathered.col_idx() == want_col);
        CHECK(gathered.values() == want_val);
      }
    }
  }
}
