// The kernel steps of plan/steps/ decide GPU plans from facts alone (plan/facts.hpp): no device,
// no operands. Each case builds the facts a gpu product would have and checks the decision and
// its text against spade::tuning()'s thresholds, and that a costly fact is asked for only where
// the step's order reaches it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <spade/spade.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace kernels = spade::kernels;
namespace rules = spade::plan::rules;
using spade::index_t;
using spade::plan::decision;
using spade::plan::format;
using spade::plan::product_facts;
using spade::plan::row_profile;
using spade::plan::step;
using spade::plan::tile_census;
using spade::testing::contains;

namespace {

/// A gpu csr of `rows` square with rows of `length` entries (and one of `longest`) times a
/// dense B of `vectors` columns, row profile included.
struct spmm_facts {
  row_profile profile;
  product_facts facts;

  spmm_facts(index_t rows, index_t length, index_t longest, index_t vectors) {
    profile.lengths.assign(static_cast<std::size_t>(rows), length);
    profile.lengths.front() = longest;
    std::int64_t nnz = 0;
    for (const index_t l : profile.lengths)
      nnz += l;
    profile.longest = std::max(length, longest);
    profile.mean = static_cast<double>(nnz) / rows;
    facts.lhs = {format::csr, true, rows, rows, nnz};
    facts.rhs = {format::dense, true, rows, vectors, std::int64_t{rows} * vectors};
    facts.vectors = vectors;
    facts.lhs_row_profile = [this]() -> const row_profile& { return profile; };
    facts.lhs_group_size = [] { return index_t{4}; };
    facts.lhs_uses_as_is = [] { return 0L; };
    facts.lhs_ellr_cached = [] { return false; };
    facts.lhs_gcoo_cached = [] { return false; };
    facts.lhs_ellr_layout = [] { return spade::ellr_layout{0, 0, 1}; };
  }
  spmm_facts(const spmm_facts&) = delete;
};

/// A cpu csr of `rows` square: one diagonal entry per row, except the rows `is_long` picks,
/// which hold `long_length` entries at columns 0, stride, 2·stride, …
template <class T, class IsLong>
spade::csr<T, spade::cpu> diagonal_with_long_rows(index_t rows, index_t long_length, index_t stride,
                                                  IsLong is_long) {
  std::vector<index_t> row_ptr{0}, col_idx;
  row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  for (index_t r = 0; r < rows; ++r) {
    if (is_long(r))
      for (index_t k = 0; k < long_length; ++k)
        col_idx.push_back(k * stride);
    else
      col_idx.push_back(r);
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  std::vector<T> values(col_idx.size(), T(1));
  return spade::csr<T, spade::cpu>(rows, rows, std::move(row_ptr), std::move(col_idx),
                                   std::move(values));
}

template <class Kernel, class Rule = rules::sparse_times_dense>
decision decide(const product_facts& f) {
  return spade::plan::decide_candidate<Rule, Kernel>(f);
}

}  // namespace

TEST_CASE("gcoo_spmm's step: the sparse x dense thresholds, from facts alone") {
  const auto& t = spade::tuning();
  const auto rows = static_cast<index_t>(t.gcoo_min_rows);
  const auto wide = static_cast<index_t>(t.gcoo_min_columns);

  spmm_facts accepted(rows, 5, 10, wide);
  const decision ok = decide<kernels::gcoo_spmm>(accepted.facts);
  CHECK(ok.ok);
  CHECK(ok.reason.empty());
  const std::string why =
      step<kernels::gcoo_spmm>::why_chosen<rules::sparse_times_dense>(accepted.facts);
  CHECK(contains(why, "groups of 4 rows"));
  CHECK(contains(why, "N = " + std::to_string(wide)));

  // Below gcoo_narrow_min_columns gcoo_spmm never runs, however often A is used.
  const auto narrowest = static_cast<index_t>(t.gcoo_narrow_min_columns);
  const long many_uses = 1000;
  REQUIRE(many_uses >= t.gcoo_narrow_min_uses);
  spmm_facts too_narrow(rows, 5, 10, narrowest - 1);
  too_narrow.facts.lhs_uses_as_is = [many_uses] { return many_uses; };
  const decision no = decide<kernels::gcoo_spmm>(too_narrow.facts);
  CHECK_FALSE(no.ok);
  CHECK(no.reason == "N = " + std::to_string(narrowest - 1) + " < gcoo_narrow_min_columns " +
                         std::to_string(t.gcoo_narrow_min_columns));

  // One row longer than gcoo_max_row_spread times the mean.
  const auto spread = static_cast<index_t>(t.gcoo_max_row_spread * 5.0) + 100;
  spmm_facts skewed(rows, 5, spread, wide);
  const decision skew = decide<kernels::gcoo_spmm>(skewed.facts);
  CHECK_FALSE(skew.ok);
  CHECK(contains(skew.reason, "longest row " + std::to_string(spread) + " > gcoo_max_row_spread"));

  spmm_facts transposed(rows, 5, 10, wide);
  transposed.facts.lhs_transposed = true;
  CHECK(decide<kernels::gcoo_spmm>(transposed.facts).reason ==
        "the sparse operand is transposed (gcoo has no transposed product)");

  // A gcoo operand is the user's choice: no threshold applies, and no row profile is read.
  spmm_facts own(10, 5, 10, 1);
  own.facts.lhs.kind = format::gcoo;
  own.facts.lhs_row_profile = []() -> const row_profile& {
    FAIL("a gcoo operand's row profile was asked for");
    throw;
  };
  CHECK(decide<kernels::gcoo_spmm>(own.facts).ok);

  // Outside the sparse x dense rule, or on the cpu, the step does not decline.
  CHECK(decide<kernels::gcoo_spmm, rules::sparse_times_vector>(too_narrow.facts).ok);
  too_narrow.facts.lhs.on_gpu = false;
  CHECK(decide<kernels::gcoo_spmm>(too_narrow.facts).ok);
}

TEST_CASE("gcoo_spmm's step: narrow B over a large A, from the gcoo_narrow_min_uses-th product") {
  const auto& t = spade::tuning();
  const auto rows = static_cast<index_t>(t.gcoo_min_rows);
  const auto narrowest = static_cast<index_t>(t.gcoo_narrow_min_columns);
  const auto widest_narrow = static_cast<index_t>(t.gcoo_min_columns) - 1;
  REQUIRE(narrowest <= widest_narrow);
  const long enough_uses = t.gcoo_narrow_min_uses - 1;  // the next product is the min_uses-th

  for (const index_t n : {narrowest, widest_narrow}) {
    CAPTURE(n);
    spmm_facts narrow(rows, 5, 10, n);
    // The products before the gcoo_narrow_min_uses-th run cuSPARSE on A as it is.
    const decision first = decide<kernels::gcoo_spmm>(narrow.facts);
    CHECK_FALSE(first.ok);
    CHECK(contains(first.reason, "product 1 with this operand < gcoo_narrow_min_uses " +
                                     std::to_string(t.gcoo_narrow_min_uses)));
    narrow.facts.lhs_uses_as_is = [enough_uses] { return enough_uses - 1; };
    CHECK_FALSE(decide<kernels::gcoo_spmm>(narrow.facts).ok);
    narrow.facts.lhs_uses_as_is = [enough_uses] { return enough_uses; };
    CHECK(decide<kernels::gcoo_spmm>(narrow.facts).ok);
    // A gcoo already cached on A (an earlier wide product made it) runs at once.
    narrow.facts.lhs_uses_as_is = [] { return 0L; };
    narrow.facts.lhs_gcoo_cached = [] { return true; };
    CHECK(decide<kernels::gcoo_spmm>(narrow.facts).ok);
    const std::string why =
        step<kernels::gcoo_spmm>::why_chosen<rules::sparse_times_dense>(narrow.facts);
    CHECK(contains(why, "(narrow B: gcoo_narrow_min_columns " +
                            std::to_string(t.gcoo_narrow_min_columns) + ")"));
  }

  // Narrow B over fewer rows than gcoo_min_rows, or skewed rows: declined for good.
  spmm_facts fewer(rows - 1, 5, 10, narrowest);
  fewer.facts.lhs_uses_as_is = [enough_uses] { return enough_uses; };
  CHECK(contains(decide<kernels::gcoo_spmm>(fewer.facts).reason,
                 std::to_string(rows - 1) + " rows < gcoo_min_rows"));
  const auto spread = static_cast<index_t>(t.gcoo_max_row_spread * 5.0) + 100;
  spmm_facts skewed(rows, 5, spread, narrowest);
  skewed.facts.lhs_uses_as_is = [enough_uses] { return enough_uses; };
  CHECK(contains(decide<kernels::gcoo_spmm>(skewed.facts).reason, "> gcoo_max_row_spread"));

  // Double: rows longer than gcoo_fp64_wide_max_mean_row on average are declined from
  // gcoo_fp64_narrow_long_row_columns columns on; shorter rows or a narrower B run.
  const auto long_row = static_cast<index_t>(t.gcoo_fp64_wide_max_mean_row) + 1;
  const auto from = static_cast<index_t>(t.gcoo_fp64_narrow_long_row_columns);
  REQUIRE(from > narrowest);
  spmm_facts long_rows(rows, long_row, long_row, from);
  long_rows.facts.lhs.value_bytes = 8;
  long_rows.facts.lhs_uses_as_is = [enough_uses] { return enough_uses; };
  const decision long_no = decide<kernels::gcoo_spmm>(long_rows.facts);
  CHECK_FALSE(long_no.ok);
  CHECK(contains(long_no.reason, "gcoo_fp64_narrow_long_row_columns " + std::to_string(from)));
  long_rows.facts.vectors = from - 1;
  CHECK(decide<kernels::gcoo_spmm>(long_rows.facts).ok);
  long_rows.facts.lhs.value_bytes = 4;  // float keeps long rows
  long_rows.facts.vectors = from;
  CHECK(decide<kernels::gcoo_spmm>(long_rows.facts).ok);
  const auto short_row = static_cast<index_t>(t.gcoo_fp64_wide_max_mean_row);
  spmm_facts short_rows(rows, short_row, short_row, from);
  short_rows.facts.lhs.value_bytes = 8;
  short_rows.facts.lhs_uses_as_is = [enough_uses] { return enough_uses; };
  CHECK(decide<kernels::gcoo_spmm>(short_rows.facts).ok);

  // Without a use count the narrow rule never converts.
  spmm_facts unknown(rows, 5, 10, narrowest);
  unknown.facts.lhs_uses_as_is = nullptr;
  CHECK(contains(decide<kernels::gcoo_spmm>(unknown.facts).reason,
                 "product 1 with this operand < gcoo_narrow_min_uses"));

  // The narrow bounds touch narrow B only: raised past gcoo_min_columns, B of gcoo_min_columns
  // columns still runs gcoo_spmm.
  const spade::thresholds saved = t;
  spade::tuning().gcoo_narrow_min_columns = 2 * t.gcoo_min_columns;
  spmm_facts wide(rows, 5, 10, static_cast<index_t>(t.gcoo_min_columns));
  const bool wide_ok = decide<kernels::gcoo_spmm>(wide.facts).ok;
  spade::tuning() = saved;
  CHECK(wide_ok);
}
TEST_CASE("gcoo_spmm's step: in double at wide N, long rows go to cuSPARSE") {
  const auto& t = spade::tuning();
  const auto rows = static_cast<index_t>(t.gcoo_min_rows) * 2;
  const auto wide = static_cast<index_t>(t.gcoo_wide_columns);
  const auto long_rows = static_cast<index_t>(t.gcoo_fp64_wide_max_mean_row) + 7;
  const auto short_rows = static_cast<index_t>(t.gcoo_fp64_wide_max_mean_row) - 4;
  REQUIRE(short_rows > 0);

  spmm_facts in_float(rows, long_rows, long_rows, wide);
  CHECK(decide<kernels::gcoo_spmm>(in_float.facts).ok);

  spmm_facts in_double(rows, long_rows, long_rows, wide);
  in_double.facts.lhs.value_bytes = 8;
  const decision no = decide<kernels::gcoo_spmm>(in_double.facts);
  CHECK_FALSE(no.ok);
  CHECK(contains(no.reason, "double with N = " + std::to_string(wide) + " >= gcoo_wide_columns " +
                                std::to_string(wide)));
  CHECK(contains(no.reason, "> gcoo_fp64_wide_max_mean_row"));
  // cuSPARSE runs instead.
  CHECK(decide<kernels::cusparse_spmm>(in_double.facts).ok);

  spmm_facts narrower(rows, long_rows, long_rows, wide - 1);
  narrower.facts.lhs.value_bytes = 8;
  CHECK(decide<kernels::gcoo_spmm>(narrower.facts).ok);

  spmm_facts shorter(rows, short_rows, short_rows, wide);
  shorter.facts.lhs.value_bytes = 8;
  CHECK(decide<kernels::gcoo_spmm>(shorter.facts).ok);

  // A gcoo operand still runs gcoo_spmm.
  in_double.facts.lhs.kind = spade::plan::format::gcoo;
  CHECK(decide<kernels::gcoo_spmm>(in_double.facts).ok);
}

TEST_CASE("gcoo_spmm's step: fewer rows than gcoo_min_rows, from a narrower B in double") {
  const auto& t = spade::tuning();
  REQUIRE(t.gcoo_fp64_wide_columns < t.gcoo_wide_columns);
  REQUIRE(t.gcoo_fp64_wide_columns > t.gcoo_min_columns);
  const auto rows = static_cast<index_t>(t.gcoo_wide_min_rows) + 1;
  const auto n = static_cast<index_t>(t.gcoo_fp64_wide_columns);
  const auto short_rows = static_cast<index_t>(t.gcoo_wide_max_mean_row) - 1;
  REQUIRE(rows < t.gcoo_min_rows);

  spmm_facts in_float(rows, short_rows, short_rows, n);
  const decision no = decide<kernels::gcoo_spmm>(in_float.facts);
  CHECK_FALSE(no.ok);
  CHECK(contains(no.reason, "and N = " + std::to_string(n) + " < gcoo_wide_columns " +
                                std::to_string(t.gcoo_wide_columns)));

  spmm_facts in_double(rows, short_rows, short_rows, n);
  in_double.facts.lhs.value_bytes = 8;
  CHECK(decide<kernels::gcoo_spmm>(in_double.facts).ok);

  spmm_facts narrower(rows, short_rows, short_rows, n - 1);
  narrower.facts.lhs.value_bytes = 8;
  CHECK(contains(decide<kernels::gcoo_spmm>(narrower.facts).reason,
                 "< gcoo_fp64_wide_columns " + std::to_string(n)));

  // The wide rule's other conditions still apply: long rows decline.
  spmm_facts long_rows(rows, short_rows + 3, short_rows + 3, n);
  long_rows.facts.lhs.value_bytes = 8;
  CHECK(contains(decide<kernels::gcoo_spmm>(long_rows.facts).reason, "> gcoo_wide_max_mean_row"));
}

TEST_CASE("the densify rule declines every sparse kernel of a dense enough lhs") {
  const auto& t = spade::tuning();
  // 100 x 100 with every row full: density 1.
  spmm_facts full(100, 100, 100, static_cast<index_t>(t.gcoo_min_columns));
  for (const decision& d :
       {decide<kernels::gcoo_spmm>(full.facts), decide<kernels::cusparse_spmm>(full.facts),
        decide<kernels::ellr_spmv>(full.facts)}) {
    CHECK_FALSE(d.ok);
    CHECK(contains(d.reason, "lhs density 1 >= densify_density"));
    CHECK(contains(d.reason, "a dense GEMM is faster"));
  }
  // The same matrix times a vector: ellr_spmv is not densified (sparse x vector has no gate).
  full.facts.rhs = {format::vector, true, 100, 1, 100};
  full.facts.vectors = 1;
  CHECK_FALSE(contains(decide<kernels::ellr_spmv, rules::sparse_times_vector>(full.facts).reason,
                       "dense GEMM"));
  // An operand in the kernel's own format is not densified for that kernel; cuBLAS never
  // declines.
  full.facts.rhs = {format::dense, true, 100, 100, 10000};
  full.facts.vectors = static_cast<index_t>(t.gcoo_min_columns);
  full.facts.lhs.kind = format::gcoo;
  CHECK_FALSE(contains(decide<kernels::gcoo_spmm>(full.facts).reason, "dense GEMM"));
  CHECK(contains(decide<kernels::cusparse_spmm>(full.facts).reason, "dense GEMM"));
  CHECK(decide<kernels::cublas_gemm>(full.facts).ok);
}

TEST_CASE("ellr_spmv's step: width, transposes and the first product") {
  const auto& t = spade::tuning();
  spmm_facts f(1000, 5, 6, 1);
  f.facts.rhs = {format::vector, true, 1000, 1, 1000};

  const decision first = decide<kernels::ellr_spmv, rules::sparse_times_vector>(f.facts);
  if (t.ellr_min_uses > 1) {
    CHECK_FALSE(first.ok);
    CHECK(contains(first.reason, "product 1 with this operand < ellr_min_uses " +
                                     std::to_string(t.ellr_min_uses)));
  }
  // From the ellr_min_uses-th product on (or once converted), it runs.
  f.facts.lhs_uses_as_is = [&t] { return static_cast<long>(t.ellr_min_uses); };
  CHECK(decide<kernels::ellr_spmv, rules::sparse_times_vector>(f.facts).ok);
  f.facts.lhs_uses_as_is = [] { return 0L; };
  f.facts.lhs_ellr_cached = [] { return true; };
  CHECK(decide<kernels::ellr_spmv, rules::sparse_times_vector>(f.facts).ok);
  const std::string why = step<kernels::ellr_spmv>::why_chosen<rules::sparse_times_vector>(f.facts);
  CHECK(contains(why, "the paper's layout: padding"));
  CHECK(contains(why, "the ellr is cached on the operand (conversion reused)"));

  f.facts.vectors = static_cast<index_t>(spade::plan::ellr_max_vectors) + 1;
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason ==
        "N = " + std::to_string(f.facts.vectors) + " > ellr_max_vectors " +
            std::to_string(spade::plan::ellr_max_vectors));
  // Past 8 columns only 16 (and 12 in float), of a row-major X, on fewer rows than the device's
  // resident threads.
  CHECK(spade::plan::ellr_max_vectors == 16);
  // Each width of `widths` declines with "N = <width>" and `reason`, at value_bytes `bytes`.
  auto declines_past_8 = [&](int bytes, std::initializer_list<index_t> widths,
                             const std::string& reason) {
    f.facts.lhs.value_bytes = bytes;
    for (const index_t n : widths) {
      f.facts.vectors = n;
      CHECK(decide<kernels::ellr_spmv>(f.facts).reason == "N = " + std::to_string(n) + reason);
    }
  };
  declines_past_8(4, {9, 10, 11, 13, 14, 15},
                  ": past 8 columns in float only N = 12 or 16 (X's rows whole 16-byte pieces); "
                  "rows read in pairs or one element at a time lost to cuSPARSE");
  declines_past_8(8, {9, 10, 12, 14, 15},
                  ": past 8 columns in double only N = 16 (10-14 columns lost to cuSPARSE on "
                  "random rows)");
  f.facts.lhs.value_bytes = 4;
  f.facts.vectors = 12;
  CHECK(decide<kernels::ellr_spmv>(f.facts).ok);
  CHECK(contains(step<kernels::ellr_spmv>::why_chosen<rules::sparse_times_vector>(f.facts),
                 "12 columns split over 2 threads of 8"));
  f.facts.vectors = 8;
  CHECK(decide<kernels::ellr_spmv>(f.facts).ok);
  f.facts.vectors = 16;
  f.facts.resident_threads = 270336;
  CHECK(decide<kernels::ellr_spmv>(f.facts).ok);
  // The launch explain names: 2 threads of 8 columns in float, 4 of 4 in double, on the
  // layout's one lane.
  CHECK(contains(step<kernels::ellr_spmv>::why_chosen<rules::sparse_times_vector>(f.facts),
                 "16 columns split over 2 threads of 8, 1 per row"));
  f.facts.lhs.value_bytes = 8;
  CHECK(contains(step<kernels::ellr_spmv>::why_chosen<rules::sparse_times_vector>(f.facts),
                 "16 columns split over 4 threads of 4, 1 per row"));
  f.facts.lhs.value_bytes = 4;
  f.facts.rhs_col_major = true;
  const std::string col_major_why =
      "a col-major X or Y: past 8 columns ellr_spmm reads such an X one element at a time, and it "
      "was measured on row-major ones only";
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason == col_major_why);
  f.facts.vectors = 8;
  CHECK(decide<kernels::ellr_spmv>(f.facts).ok);  // up to 8 columns either layout
  f.facts.vectors = 16;
  f.facts.rhs_col_major = false;
  f.facts.destination_col_major = true;
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason == col_major_why);
  f.facts.destination_col_major = false;
  f.facts.resident_threads = 1000;
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason ==
        "1000 rows fill the device's 1000 resident threads: past 8 columns gcoo_spmm and "
        "cuSPARSE ran faster");
  f.facts.resident_threads = 0;
  // In double, rows longer than ellr_wide_max_mean_row_fp64 on average decline at 16 columns
  // only. f's rows hold 5 entries (one 6): lower the bound below that.
  {
    const spade::testing::tuning_restorer restore;
    spade::tuning().ellr_wide_max_mean_row_fp64 = 4.0;
    CHECK(decide<kernels::ellr_spmv>(f.facts).ok);  // float
    f.facts.lhs.value_bytes = 8;
    CHECK(contains(decide<kernels::ellr_spmv>(f.facts).reason,
                   "> ellr_wide_max_mean_row_fp64 4: past 8 columns in double longer rows lost"));
    f.facts.vectors = 8;
    CHECK(decide<kernels::ellr_spmv>(f.facts).ok);
    spade::tuning().ellr_wide_max_mean_row_fp64 = 6.0;
    f.facts.vectors = 16;
    CHECK(decide<kernels::ellr_spmv>(f.facts).ok);
    f.facts.lhs.value_bytes = 4;
  }
  f.facts.vectors = 1;
  f.facts.rhs_transposed = true;
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason == "the dense operand is transposed");
  f.facts.lhs_transposed = true;
  CHECK(decide<kernels::ellr_spmv>(f.facts).reason ==
        "the sparse operand is transposed (ellr has no transposed product)");

  // A coo has no row lengths at hand.
  spmm_facts coo(1000, 5, 6, 1);
  coo.facts.lhs.kind = format::coo;
  coo.facts.rhs = {format::vector, true, 1000, 1, 1000};
  CHECK(contains(decide<kernels::ellr_spmv>(coo.facts).reason, "row lengths unknown"));
}

TEST_CASE("tiled_spgemm's step: nnz first, the census only after, then the tile criteria") {
  const auto& t = spade::tuning();
  product_facts f;
  const auto nnz = static_cast<std::int64_t>(t.tiled_min_nnz);
  f.lhs = {format::csr, true, 100000, 100000, nnz - 1};
  f.rhs = f.lhs;
  int census_calls = 0;
  tile_census census;
  f.census = [&]() -> const tile_census& {
    ++census_calls;
    return census;
  };
  const decision small = decide<kernels::tiled_spgemm, rules::sparse_times_sparse>(f);
  CHECK_FALSE(small.ok);
  CHECK(contains(small.reason, " < tiled_min_nnz "));
  CHECK(census_calls == 0);  // the cheap criterion spares the census's kernels

  f.lhs.nnz = nnz;
  // Tiles of 64 entries each, 512 element products per tile pair: the densest there is.
  census = {1000, 1000, 64000, 64000, 512000, 1000};
  CHECK(decide<kernels::tiled_spgemm, rules::sparse_times_sparse>(f).ok);
  CHECK(census_calls == 1);
  CHECK(contains(step<kernels::tiled_spgemm>::why_chosen<rules::sparse_times_sparse>(f),
                 "512000 element products in 1000 tile pairs: 512 per pair"));

  // One entry per tile: too sparse on every criterion.
  census = {1000, 1000, 1000, 1000, 1000, 1000};
  const decision sparse = decide<kernels::tiled_spgemm, rules::sparse_times_sparse>(f);
  CHECK_FALSE(sparse.ok);
  CHECK(contains(sparse.reason, "tiles too sparse: 1000 element products in 1000 tile pairs"));

  f.rhs_transposed = true;
  CHECK(decide<kernels::tiled_spgemm, rules::sparse_times_sparse>(f).reason ==
        "an operand is transposed (tiles have no transposed product)");
  f.rhs_transposed = false;
  f.lhs.kind = format::tiled;
  f.rhs.kind = format::tiled;
  f.lhs.nnz = 1;
  CHECK(decide<kernels::tiled_spgemm, rules::sparse_times_sparse>(f).ok);
  CHECK_FALSE(decide<kernels::tiled_spgemm_fp16, rules::sparse_times_sparse>(f).ok);
}

TEST_CASE("tiled_spmm's step: N, nnz, then the tile fill against float's or double's threshold") {
  const auto& t = spade::tuning();
  REQUIRE(t.tiled_spmm_min_fill_fp64 < t.tiled_spmm_min_fill);
  REQUIRE(t.tiled_spmm_min_columns < t.tiled_spmm_wide_columns);
  const auto rows = static_cast<index_t>(t.tiled_spmm_min_nnz) / 4 + 1;  // nnz just above
  const auto wide = static_cast<index_t>(t.tiled_spmm_wide_columns);
  const double between = (t.tiled_spmm_min_fill_fp64 + t.tiled_spmm_min_fill) / 2;
  int fill_asked = 0;
  auto with_fill = [&](spmm_facts& s, double fill) {
    s.facts.lhs_tile_fill = [&fill_asked, fill] {
      ++fill_asked;
      return fill;
    };
  };

  // A fill between the two thresholds: double runs on the tensor cores, float declines.
  spmm_facts in_double(rows, 4, 4, wide);
  in_double.facts.lhs.value_bytes = 8;
  with_fill(in_double, between);
  CHECK(decide<kernels::tiled_spmm>(in_double.facts).ok);
  spmm_facts in_float(rows, 4, 4, wide);
  with_fill(in_float, between);
  const decision no = decide<kernels::tiled_spmm>(in_float.facts);
  CHECK_FALSE(no.ok);
  CHECK(contains(no.reason, "tiles too sparse: mean tile fill"));
  CHECK(contains(no.reason, "< tiled_spmm_min_fill "));
  with_fill(in_float, t.tiled_spmm_min_fill);
  CHECK(decide<kernels::tiled_spmm>(in_float.facts).ok);
  with_fill(in_double, t.tiled_spmm_min_fill_fp64 - 1);
  CHECK(
      contains(decide<kernels::tiled_spmm>(in_double.facts).reason, "< tiled_spmm_min_fill_fp64 "));
  // Narrower than tiled_spmm_wide_columns, double needs float's fill.
  spmm_facts narrow_double(rows, 4, 4, static_cast<index_t>(t.tiled_spmm_min_columns));
  narrow_double.facts.lhs.value_bytes = 8;
  with_fill(narrow_double, between);
  CHECK(
      contains(decide<kernels::tiled_spmm>(narrow_double.facts).reason, "< tiled_spmm_min_fill "));
  with_fill(narrow_double, t.tiled_spmm_min_fill);
  CHECK(decide<kernels::tiled_spmm>(narrow_double.facts).ok);

  // Double with A, B and C in L2: the lower threshold, unless gcoo_spmm would run the product.
  // 5000 rows of 12 entries: too few rows for gcoo_spmm.
  REQUIRE(t.tiled_spmm_min_fill_fp64_l2 < t.tiled_spmm_min_fill_fp64);
  REQUIRE(5000 < t.gcoo_wide_min_rows);
  REQUIRE(5000 * 12 >= t.tiled_spmm_min_nnz);
  const double l2_fill = (t.tiled_spmm_min_fill_fp64_l2 + t.tiled_spmm_min_fill_fp64) / 2;
  spmm_facts l2_double(5000, 12, 12, wide);
  l2_double.facts.lhs.value_bytes = 8;
  with_fill(l2_double, l2_fill);
  CHECK(
      contains(decide<kernels::tiled_spmm>(l2_double.facts).reason, "< tiled_spmm_min_fill_fp64 "));
  l2_double.facts.fits_l2 = true;
  REQUIRE_FALSE(decide<kernels::gcoo_spmm>(l2_double.facts).ok);
  CHECK(decide<kernels::tiled_spmm>(l2_double.facts).ok);
  CHECK(contains(step<kernels::tiled_spmm>::why_chosen<rules::sparse_times_dense>(l2_double.facts),
                 ">= tiled_spmm_min_fill_fp64_l2 8 (A, B and C fit in L2)"));
  with_fill(l2_double, t.tiled_spmm_min_fill_fp64_l2 - 1);
  CHECK(contains(decide<kernels::tiled_spmm>(l2_double.facts).reason,
                 "< tiled_spmm_min_fill_fp64_l2 "));
  // Float with A, B and C in L2 and B of tiled_spmm_wide_columns_fp32 columns has a threshold of
  // its own, between double's and float's, and does not defer to gcoo_spmm; narrower, it keeps
  // float's.
  REQUIRE(t.tiled_spmm_min_fill_fp64_l2 < t.tiled_spmm_min_fill_fp32_l2);
  REQUIRE(t.tiled_spmm_min_fill_fp32_l2 < t.tiled_spmm_min_fill);
  REQUIRE(t.tiled_spmm_wide_columns < t.tiled_spmm_wide_columns_fp32);
  const auto wide_fp32 = static_cast<index_t>(t.tiled_spmm_wide_columns_fp32);
  spmm_facts l2_float(rows, 4, 4, wide_fp32);
  l2_float.facts.fits_l2 = true;
  with_fill(l2_float, l2_fill);
  REQUIRE(l2_fill < t.tiled_spmm_min_fill_fp32_l2);
  CHECK(contains(decide<kernels::tiled_spmm>(l2_float.facts).reason,
                 "< tiled_spmm_min_fill_fp32_l2 "));
  with_fill(l2_float, t.tiled_spmm_min_fill_fp32_l2);
  CHECK(decide<kernels::tiled_spmm>(l2_float.facts).ok);
  CHECK(contains(step<kernels::tiled_spmm>::why_chosen<rules::sparse_times_dense>(l2_float.facts),
                 ">= tiled_spmm_min_fill_fp32_l2 24 (A, B and C fit in L2)"));
  l2_float.facts.fits_l2 = false;
  CHECK(contains(decide<kernels::tiled_spmm>(l2_float.facts).reason, "< tiled_spmm_min_fill "));
  spmm_facts gcoo_float(static_cast<index_t>(t.gcoo_min_rows), 4, 4, wide_fp32);
  gcoo_float.facts.fits_l2 = true;
  REQUIRE(decide<kernels::gcoo_spmm>(gcoo_float.facts).ok);
  with_fill(gcoo_float, t.tiled_spmm_min_fill_fp32_l2);
  CHECK(decide<kernels::tiled_spmm>(gcoo_float.facts).ok);
  for (const index_t n : {static_cast<index_t>(t.tiled_spmm_min_columns), wide, wide_fp32 - 1}) {
    spmm_facts narrow_float(rows, 4, 4, n);
    narrow_float.facts.fits_l2 = true;
    with_fill(narrow_float, t.tiled_spmm_min_fill_fp32_l2);
    CHECK(
        contains(decide<kernels::tiled_spmm>(narrow_float.facts).reason, "< tiled_spmm_min_fill "));
  }
  // Rows enough for gcoo_spmm: it keeps the products the L2 threshold alone admits.
  spmm_facts gcoo_rows(static_cast<index_t>(t.gcoo_min_rows), 4, 4, wide);
  gcoo_rows.facts.lhs.value_bytes = 8;
  gcoo_rows.facts.fits_l2 = true;
  REQUIRE(decide<kernels::gcoo_spmm>(gcoo_rows.facts).ok);
  with_fill(gcoo_rows, l2_fill);
  const decision to_gcoo = decide<kernels::tiled_spmm>(gcoo_rows.facts);
  CHECK_FALSE(to_gcoo.ok);
  CHECK(contains(to_gcoo.reason, "gcoo_spmm takes this L2-resident product"));
  with_fill(gcoo_rows, t.tiled_spmm_min_fill_fp64);
  CHECK(decide<kernels::tiled_spmm>(gcoo_rows.facts).ok);

  // N and nnz decline before the fill is counted.
  fill_asked = 0;
  spmm_facts narrow(rows, 4, 4, static_cast<index_t>(t.tiled_spmm_min_columns) - 1);
  with_fill(narrow, 64);
  CHECK(contains(decide<kernels::tiled_spmm>(narrow.facts).reason, "< tiled_spmm_min_columns"));
  spmm_facts small(rows / 2, 4, 4, wide);
  with_fill(small, 64);
  CHECK(contains(decide<kernels::tiled_spmm>(small.facts).reason, "< tiled_spmm_min_nnz"));
  CHECK(fill_asked == 0);
}

TEST_CASE("csr_rowwise takes small operands before cuSPARSE, after the densify rule") {
  product_facts f;
  f.lhs = {format::csr, true, 100, 100, 500};
  f.rhs = {format::vector, true, 100, 1, 100};
  const auto& t = spade::tuning();
  CHECK(decide<kernels::csr_rowwise, rules::sparse_times_vector>(f).ok);
  const std::string small = step<kernels::csr_rowwise>::why_chosen<rules::sparse_times_vector>(f);
  CHECK(small == "A is at most " + std::to_string(t.rowwise_max_extent) + "x" +
                     std::to_string(t.rowwise_max_extent) + " with at most " +
                     std::to_string(t.rowwise_max_nnz) +
                     " entries: one launch without workspace (docs/vendor-bugs.md)");
  // One row or one column past the extent, or one entry past the count: cuSPARSE.
  f.lhs.rows = t.rowwise_max_extent + 1;
  const decision tall = decide<kernels::csr_rowwise, rules::sparse_times_vector>(f);
  CHECK_FALSE(tall.ok);
  CHECK(contains(tall.reason, "A is " + std::to_string(t.rowwise_max_extent + 1) +
                                  "x100 with 500 entries, past rowwise_max_extent"));
  CHECK(decide<kernels::cusparse_spmv, rules::sparse_times_vector>(f).ok);
  f.lhs.rows = 100;
  f.lhs.cols = t.rowwise_max_extent + 1;
  CHECK_FALSE(decide<kernels::csr_rowwise, rules::sparse_times_vector>(f).ok);
  f.lhs.cols = 100;
  f.lhs.nnz = t.rowwise_max_nnz + 1;
  CHECK_FALSE(decide<kernels::csr_rowwise, rules::sparse_times_vector>(f).ok);
  // Times a dense B: a small operand dense enough for the densify rule goes to cuBLAS.
  f.rhs = {format::dense, true, 100, 16, 1600};
  f.vectors = 16;
  f.lhs.nnz = 500;  // density 0.05
  CHECK(decide<kernels::csr_rowwise, rules::sparse_times_dense>(f).ok);
  CHECK(contains(step<kernels::csr_rowwise>::why_chosen<rules::sparse_times_dense>(f),
                 "lhs density 0.05 vs densify_density"));
  f.lhs.nnz = 5000;  // density 0.5
  const decision dense_enough = decide<kernels::csr_rowwise, rules::sparse_times_dense>(f);
  CHECK_FALSE(dense_enough.ok);
  CHECK(contains(dense_enough.reason, "a dense GEMM is faster"));
}

namespace {

using spade::testing::tuning_restorer;

}  // namespace

TEST_CASE("the back ends' thresholds are spade::tuning()'s: a changed field changes the choice") {
  const tuning_restorer restore;
  auto& t = spade::tuning();
  // The row-wise hand-off (csr_rowwise's step and the cuSPARSE wrappers' guard).
  using spade::plan::rowwise_preferred;
  CHECK(rowwise_preferred(100, 100, 500));
  t.rowwise_max_extent = 64;
  CHECK_FALSE(rowwise_preferred(100, 100, 500));
  CHECK(rowwise_preferred(64, 64, 500));
  t.rowwise_max_nnz = 499;
  CHECK_FALSE(rowwise_preferred(64, 64, 500));
  product_facts f;
  f.lhs = {format::csr, true, 60, 60, 400};
  f.rhs = {format::vector, true, 60, 1, 60};
  CHECK(contains(step<kernels::csr_rowwise>::why_chosen<rules::sparse_times_vector>(f),
                 "A is at most 64x64 with at most 499 entries"));
  t = restore.saved;

  // cusparseSpMM's automatic algorithm: each of its three reasons for ALG2, then its cut-off
  // moved past the case.
  using spade::plan::spmm_alg2_preferred;
  CHECK(spmm_alg2_preferred(1000000, 64, 1000000, 5000000, false));  // C of 64 M elements
  t.spmm_alg2_min_elements = 100000000;
  CHECK_FALSE(spmm_alg2_preferred(1000000, 64, 1000000, 5000000, false));
  CHECK(spmm_alg2_preferred(1000, 512, 1000, 10000, false));  // wide B, 10 per row
  t.spmm_alg2_wide_min_mean_row = 16;
  CHECK_FALSE(spmm_alg2_preferred(1000, 512, 1000, 10000, false));
  CHECK(spmm_alg2_preferred(1600000, 32, 1600000, 7680000, true));  // fp64, 4.8 per row
  CHECK_FALSE(spmm_alg2_preferred(1600000, 32, 1600000, 7680000, false));
  t.spmm_alg2_short_row_max_mean = 4;
  CHECK_FALSE(spmm_alg2_preferred(1600000, 32, 1600000, 7680000, true));
  t = restore.saved;
  // Skewed rows (ego-Facebook's shape: 4039 rows, 176468 entries, longest 1045) keep ALG3 in
  // float below the size cut-off; an even spread, double, an unknown longest row or a larger C
  // leave the rules above.
  CHECK(spmm_alg2_preferred(4039, 512, 4039, 176468, false));
  CHECK_FALSE(spmm_alg2_preferred(4039, 512, 4039, 176468, false, 1045));
  CHECK(spmm_alg2_preferred(4039, 512, 4039, 176468, false, 60));
  CHECK(spmm_alg2_preferred(4039, 512, 4039, 176468, true, 1045));
  CHECK(spmm_alg2_preferred(26475, 512, 26475, 106762, false, 2628));     // C of 1.4·10⁷
  CHECK_FALSE(spmm_alg2_preferred(4039, 32, 4039, 176468, false, 1045));  // ALG3 anyway
  t.spmm_alg3_skewed_min_spread = 30;
  CHECK(spmm_alg2_preferred(4039, 512, 4039, 176468, false, 1045));
  t = restore.saved;
  t.spmm_alg3_skewed_max_elements = 2'000'000;
  CHECK(spmm_alg2_preferred(4039, 512, 4039, 176468, false, 1045));
  t = restore.saved;

  // The planned product reads the longest row off A's cached row profile: 4000 rows of 40
  // entries and one of 1000 (spread 24.8) keep ALG3 at N = 512; Aᵀ (rows unknown) and 4000
  // even rows go by the shapes.
  {
    const auto rows_of = [](spade::index_t long_row) {
      std::vector<spade::index_t> row_ptr{0}, col_idx;
      for (spade::index_t r = 0; r < 4000; ++r) {
        const spade::index_t length = r == long_row ? 1000 : 40;
        for (spade::index_t k = 0; k < length; ++k)
          col_idx.push_back(k);
        row_ptr.push_back(static_cast<spade::index_t>(col_idx.size()));
      }
      std::vector<float> values(col_idx.size(), 1.0f);
      return spade::csr<float, spade::cpu>(4000, 4000, std::move(row_ptr), std::move(col_idx),
                                           std::move(values));
    };
    const auto a = rows_of(7), b = rows_of(-1);
    CHECK_FALSE(spade::detail::planned_spmm_alg2(a, false, 4000, 512));
    CHECK(spade::detail::planned_spmm_alg2(a, true, 4000, 512));
    CHECK(spade::detail::planned_spmm_alg2(b, false, 4000, 512));
    CHECK_FALSE(spade::detail::planned_spmm_alg2(a, false, 4000, 32));
  }

  // ALG1 for narrow B over large skewed matrices (circuit_1.6M_4.8's shape: 1.6 M rows, 7.68 M
  // entries, longest row 2000; rmat_s20_ef16's: 2^20 rows, 16.1 M entries), at each bound: the
  // width (4, or 12 over rows of at most 8 entries on average), the rows, the spread, an unknown
  // longest row.
  using spade::plan::spmm_alg1_preferred;
  CHECK(spmm_alg1_preferred(2, 1600000, 7680000, 2000));
  CHECK(spmm_alg1_preferred(4, 1600000, 7680000, 2000));
  CHECK(spmm_alg1_preferred(5, 1600000, 7680000, 2000));
  CHECK(spmm_alg1_preferred(12, 1600000, 7680000, 2000));
  CHECK_FALSE(spmm_alg1_preferred(13, 1600000, 7680000, 2000));
  CHECK(spmm_alg1_preferred(4, 1048576, 16086549, 20000));
  CHECK_FALSE(spmm_alg1_preferred(5, 1048576, 16086549, 20000));
  CHECK(spmm_alg1_preferred(12, 1000000, 8000000, 2000));  // exactly 8 entries per row
  CHECK_FALSE(spmm_alg1_preferred(12, 1000000, 8000001, 2000));
  CHECK_FALSE(spmm_alg1_preferred(5, 1000000, 8000001, 2000));
  CHECK_FALSE(spmm_alg1_preferred(4, 1600000, 7680000, -1));
  CHECK(spmm_alg1_preferred(4, 1000000, 4000000, 80));  // exactly 20 times the mean
  CHECK_FALSE(spmm_alg1_preferred(4, 1000000, 4000000, 79));
  CHECK_FALSE(spmm_alg1_preferred(4, 999999, 4000000, 2000));
  CHECK_FALSE(spmm_alg1_preferred(4, 1000000, 0, 0));
  CHECK(spade::plan::spmm_alg1_widest() == 12);
  t.spmm_alg1_max_columns = 16;
  CHECK(spmm_alg1_preferred(16, 1048576, 16086549, 20000));
  CHECK(spade::plan::spmm_alg1_widest() == 16);
  t = restore.saved;
  t.spmm_alg1_short_row_max_columns = 16;
  CHECK(spmm_alg1_preferred(16, 1600000, 7680000, 2000));
  CHECK(spade::plan::spmm_alg1_widest() == 16);
  t.spmm_alg1_short_row_max_columns = 2;
  CHECK(spmm_alg1_preferred(4, 1600000, 7680000, 2000));
  CHECK_FALSE(spmm_alg1_preferred(5, 1600000, 7680000, 2000));
  CHECK(spade::plan::spmm_alg1_widest() == 12);  // the small-graph bound
  t.spmm_alg1_small_max_columns = 3;
  CHECK(spade::plan::spmm_alg1_widest() == 4);
  t = restore.saved;
  t.spmm_alg1_short_row_max_mean = 4;
  CHECK_FALSE(spmm_alg1_preferred(12, 1600000, 7680000, 2000));
  CHECK(spmm_alg1_preferred(4, 1600000, 7680000, 2000));
  t = restore.saved;
  t.spmm_alg1_min_spread = 500;
  CHECK_FALSE(spmm_alg1_preferred(4, 1600000, 7680000, 2000));
  t = restore.saved;
  t.spmm_alg1_min_rows = 100;
  CHECK(spmm_alg1_preferred(4, 1000, 4000, 80));
  t = restore.saved;

  // ALG1 for small skewed graphs with many long rows, at each bound. wiki-Vote's shape (8 297
  // rows, 103 689 entries, longest 893, 806 rows longer than 32) up to 11 columns (12 passes
  // 1.2·10⁶ entries × columns); PGPgiantcompo's (10 680, 48 632, 205, 197) up to 12, not 13;
  // ego-Facebook's (4 039, 176 468, 1 045, 1 693) up to 6; Chem97ZtZ's (2 541, 7 361, 101, 24)
  // not at all: too few long rows. An unknown count says no.
  CHECK(spmm_alg1_preferred(2, 8297, 103689, 893, 806));
  CHECK(spmm_alg1_preferred(11, 8297, 103689, 893, 806));
  CHECK_FALSE(spmm_alg1_preferred(12, 8297, 103689, 893, 806));
  CHECK(spmm_alg1_preferred(12, 10680, 48632, 205, 197));
  CHECK_FALSE(spmm_alg1_preferred(13, 10680, 48632, 205, 197));
  CHECK(spmm_alg1_preferred(6, 4039, 176468, 1045, 1693));
  CHECK_FALSE(spmm_alg1_preferred(8, 4039, 176468, 1045, 1693));
  CHECK_FALSE(spmm_alg1_preferred(4, 2541, 7361, 101, 24));
  CHECK_FALSE(spmm_alg1_preferred(4, 8297, 103689, 893, -1));
  CHECK(spmm_alg1_preferred(4, 12000, 48000, 2000, 64));  // exactly the rows and long rows
  CHECK_FALSE(spmm_alg1_preferred(4, 12001, 48000, 2000, 64));
  CHECK_FALSE(spmm_alg1_preferred(4, 12000, 48000, 2000, 63));
  CHECK(spmm_alg1_preferred(12, 10000, 100000, 200, 100));  // exactly 20 × the mean, 1.2·10⁶
  CHECK_FALSE(spmm_alg1_preferred(12, 10000, 100000, 199, 100));
  CHECK_FALSE(spmm_alg1_preferred(12, 10000, 100001, 2000, 100));
  t.spmm_alg1_small_max_rows = 5000;
  CHECK_FALSE(spmm_alg1_preferred(2, 8297, 103689, 893, 806));
  t = restore.saved;
  t.spmm_alg1_small_min_long_rows = 20;
  CHECK(spmm_alg1_preferred(4, 2541, 7361, 101, 24));
  t = restore.saved;
  t.spmm_alg1_small_max_columns = 4;
  CHECK_FALSE(spmm_alg1_preferred(5, 10680, 48632, 205, 197));
  t = restore.saved;
  t.spmm_alg1_small_max_work = 2'000'000;
  CHECK(spmm_alg1_preferred(8, 4039, 176468, 1045, 1693));
  t = restore.saved;

  // The planned product reads the longest row off A's cached row profile: 10⁶ rows of one entry
  // and one of 100 take ALG1 at 4 columns and, being short rows, at 12, not at 13, not as Aᵀ; 10⁶
  // even rows do not.
  {
    const auto rows_of = [](spade::index_t long_row) {
      return diagonal_with_long_rows<float>(1000000, 100, 1,
                                            [long_row](spade::index_t r) { return r == long_row; });
    };
    const auto a = rows_of(3), b = rows_of(-1);
    CHECK(spade::detail::planned_spmm_alg1(a, false, 4));
    CHECK(spade::detail::planned_spmm_alg1(a, false, 2));
    CHECK(spade::detail::planned_spmm_alg1(a, false, 12));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(a, false, 13));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(a, true, 4));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(b, false, 4));
    // The choice the runner and explain ask: the rules' answer where no tune file decides (a cpu
    // operand has none), whatever the layouts.
    using spade::detail::planned_spmm_algorithm_choice;
    CHECK(planned_spmm_algorithm_choice(a, false, true, 1000000, 4).number == 1);
    CHECK(planned_spmm_algorithm_choice(a, false, false, 1000000, 4).number == 1);
    CHECK(planned_spmm_algorithm_choice(b, false, true, 1000000, 4).number == 3);
    CHECK(planned_spmm_algorithm_choice(b, false, true, 1000000, 128).number == 2);  // C ≥ 5·10⁶
    CHECK_FALSE(planned_spmm_algorithm_choice(a, false, true, 1000000, 4).tuned.decides());
  }

  // A small graph's long rows come off the same profile: 4 000 rows of one entry, `long_rows`
  // of them of 50 (spread 50 / 2.2 ≥ 20 with 100) take ALG1 from 64 such rows, not as Aᵀ; the
  // length they are counted above follows spmm_alg1_small_long_row.
  {
    const auto graph = [](spade::index_t long_rows) {
      return diagonal_with_long_rows<double>(4000, 50, 80, [long_rows](spade::index_t r) {
        return r % 40 == 0 && r / 40 < long_rows;
      });
    };
    const auto many = graph(100), few = graph(63);
    CHECK(spade::detail::row_profile_of(many).rows_longer_than(32) == 100);
    CHECK(spade::detail::planned_spmm_alg1(many, false, 4));
    CHECK(spade::detail::planned_spmm_alg1(many, false, 12));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(many, false, 13));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(many, true, 4));
    CHECK_FALSE(spade::detail::planned_spmm_alg1(few, false, 4));
    CHECK(spade::detail::planned_spmm_algorithm_choice(many, false, true, 4000, 4).number == 1);
    t.spmm_alg1_small_long_row = 50;  // no row is longer than 50
    CHECK_FALSE(spade::detail::planned_spmm_alg1(many, false, 4));
    CHECK(spade::detail::row_profile_of(many).rows_longer_than(50) == 0);
    t = restore.saved;
  }

  // ELLR-T lanes: the share of the resident threads, then the entries per lane.
  using spade::detail::ellr_threads_per_row;
  constexpr std::int64_t h100 = 132 * 2048;
  CHECK(ellr_threads_per_row(15606, 5.9, h100) == 8);
  t.ellr_lanes_max_resident_share = 0.375;
  CHECK(ellr_threads_per_row(15606, 5.9, h100) == 4);
  CHECK(ellr_threads_per_row(1000000, 26.5, h100) == 1);
  t.ellr_lanes_min_entries_per_lane = 8.0;
  CHECK(ellr_threads_per_row(1000000, 26.5, h100) == 4);
}

// ---- the copies a kernel's run makes (plan/copies.hpp) -----------------------------------------

namespace {

using spade::plan::copy_kind;

template <class Kernel>
std::vector<copy_kind> copies(bool ta, bool lhs_sparse, bool tb, bool rhs_sparse,
                              bool col_major_destination) {
  const auto steps =
      spade::plan::copies_for<Kernel>(ta, lhs_sparse, tb, rhs_sparse, col_major_destination);
  return {steps.begin(), steps.end()};
}

}  // namespace

TEST_CASE("copies_for: the transposes a kernel has no op flag for, and its result's conversion") {
  using v = std::vector<copy_kind>;
  // Op flags on both sides: no copies, whatever is transposed.
  CHECK(copies<kernels::cublas_gemm>(true, false, true, false, true).empty());
  CHECK(copies<kernels::eigen_product>(true, true, true, true, false).empty());
  CHECK(copies<kernels::cusparse_spmv>(true, true, false, false, false).empty());
  // cuSPARSE SpMM and the row-wise kernel: op(A) by flag, a transposed B copied.
  CHECK(copies<kernels::cusparse_spmm>(true, true, false, false, false).empty());
  CHECK(copies<kernels::cusparse_spmm>(true, true, true, false, true) ==
        v{copy_kind::transpose_rhs});
  CHECK(copies<kernels::csr_rowwise>(false, true, true, false, false) ==
        v{copy_kind::transpose_rhs});
  // Row-wise SpGEMM and cuSPARSE's: both operands copied when transposed.
  CHECK(copies<kernels::hash_spgemm>(true, true, true, true, false) ==
        v{copy_kind::transpose_lhs, copy_kind::transpose_rhs});
  CHECK(copies<kernels::cusparse_spgemm>(false, true, true, true, false) ==
        v{copy_kind::transpose_rhs});
  CHECK(copies<kernels::cusparse_csr_add>(true, true, false, true, false) ==
        v{copy_kind::transpose_lhs});
  // Eigen's sum: dense operands by flag, sparse ones (one storage order only) copied.
  CHECK(copies<kernels::eigen_sum>(true, false, true, false, false).empty());
  CHECK(copies<kernels::eigen_sum>(true, true, true, true, false) ==
        v{copy_kind::transpose_lhs, copy_kind::transpose_rhs});
  // gcoo writes row-major only: a col-major destination is a result relayout.
  CHECK(copies<kernels::gcoo_spmm>(false, true, false, false, false).empty());
  CHECK(copies<kernels::gcoo_spmm>(false, true, false, false, true) ==
        v{copy_kind::result_from_row_major});
  CHECK(copies<kernels::gcoo_spmm_paper>(true, true, true, false, true) ==
        v{copy_kind::transpose_lhs, copy_kind::transpose_rhs, copy_kind::result_from_row_major});
  CHECK(copies<kernels::ellr_spmv>(true, true, false, false, true) == v{copy_kind::transpose_lhs});
  // Tiles: always converted back to csr.
  CHECK(copies<kernels::tiled_spgemm>(false, true, false, true, false) ==
        v{copy_kind::result_from_tiles});
  CHECK(copies<kernels::tiled_spgemm_fp16>(true, true, false, true, false) ==
        v{copy_kind::transpose_lhs, copy_kind::result_from_tiles});
  // Each copy has its own line of text.
  const auto steps = spade::plan::copies_for<kernels::tiled_spgemm>(true, true, true, true, false);
  const std::string text = spade::plan::copies_text(steps, "  ");
  CAPTURE(text);
  CHECK(contains(text, "  copy: lhs transposed into a copy"));
  CHECK(contains(text, "  copy: rhs transposed into a copy"));
  CHECK(contains(text, "  copy: result computed as tiles, then converted to csr"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);
}

TEST_CASE("explain names cuSPARSE's algorithm and whether a tuned entry or the rules chose it") {
  using spade::plan::spmm_algorithm_choice;
  using spade::plan::tuned_choice;
  spade::tuned_table table;
  table.source = "tune-test.txt";
  table.add("cusparse", "cls", {{"alg1", 1.0}, {"alg2", 3.0}, {"alg3", 2.0}}, "m", "this");
  spmm_facts s(1000, 4, 4, 4);
  const auto why = [&] {
    return step<kernels::cusparse_spmm>::why_chosen<rules::sparse_times_dense>(s.facts);
  };
  // No such fact (a cpu operand, a preview): nothing about the algorithm.
  CHECK_FALSE(contains(why(), "ALG"));
  std::string operand = "this";
  int rules_number = 3;
  s.facts.cusparse_spmm_algorithm = [&] {
    spmm_algorithm_choice c;
    c.tuned = tuned_choice{&table, table.find("cusparse", "cls"), "cls", {}, false};
    if (c.tuned.entry) c.tuned.kernel = c.tuned.entry->decision_for(operand, &c.tuned.measured);
    if (!c.tuned.measured) c.tuned.kernel.clear();  // as detail::planned_spmm_algorithm_choice
    c.number =
        c.tuned.decides() ? spade::cusparse_spmm_algorithm_number(c.tuned.kernel) : rules_number;
    return c;
  };
  CHECK(contains(why(),
                 "; cuSPARSE CSR ALG1, tuned on this device, this matrix measured, class "
                 "cls: alg1 1 ms, alg3 2 ms, alg2 3 ms over 1 matrix (m); tune-test.txt"));
  // Another matrix of the class: the measured ones do not decide for it, even unanimous.
  operand = "other";
  table.add("cusparse", "cls", {{"alg1", 1.0}, {"alg2", 3.0}, {"alg3", 2.0}}, "m2", "second");
  CHECK(contains(why(),
                 "; cuSPARSE CSR ALG3 by the rules (spmm_alg1_*, spmm_alg2_*, "
                 "spmm_alg3_skewed_*); the tuned cuSPARSE entry for class cls (alg1 1 ms"));
  CHECK(contains(why(), "is followed only for the matrices it measured"));
  // Without an entry: the rules' number, and nothing about tuning.
  table = {};
  rules_number = 2;
  CHECK(contains(why(), "; cuSPARSE CSR ALG2 by the rules"));
  CHECK_FALSE(contains(why(), "tuned"));
  // Only cusparse_spmm says it.
  CHECK_FALSE(
      contains(step<kernels::gcoo_spmm>::why_chosen<rules::sparse_times_dense>(s.facts), "ALG"));
}

TEST_CASE(
    "a tuned entry picks sparse x dense's kernel over the rules; without one the rules decide") {
  using spade::plan::tuned_choice;
  spade::tuned_table table;
  table.source = "tune-test.txt";
  const auto entry = [&](double gcoo, double tiled, double cusparse) {
    table = {};
    table.source = "tune-test.txt";
    table.add("spmm", "cls",
              {{"gcoo_spmm", gcoo}, {"tiled_spmm", tiled}, {"cusparse_spmm", cusparse}}, "m",
              "this");
  };
  // The operand is the matrix of fingerprint "this" (what eval/operands.hpp computes on a device).
  std::string operand = "this";
  int fill_asked = 0;
  // 1000 rows of 4: every rule declines gcoo_spmm (too few rows for N = 32) and tiled_spmm (nnz).
  spmm_facts s(1000, 4, 4, 32);
  s.facts.lhs_tile_fill = [&fill_asked] {
    ++fill_asked;
    return 64.0;
  };
  index_t asked_columns = 0;
  s.facts.tuned_spmm = [&](index_t columns) {
    asked_columns = columns;
    tuned_choice c{&table, table.find("spmm", "cls"), "cls", {}, false};
    if (c.entry) c.kernel = c.entry->decision_for(operand, &c.measured);
    return c;
  };
  const auto cusparse_why = [&] {
    return step<kernels::cusparse_spmm>::why_chosen<rules::sparse_times_dense>(s.facts);
  };

  entry(1.0, 2.0, 3.0);  // gcoo_spmm fastest
  CHECK(decide<kernels::gcoo_spmm>(s.facts).ok);
  CHECK(asked_columns == 32);
  const decision tiled_no = decide<kernels::tiled_spmm>(s.facts);
  CHECK_FALSE(tiled_no.ok);
  CHECK(tiled_no.reason == "tuned on this device: gcoo_spmm was fastest on this matrix");
  CHECK(fill_asked == 0);
  CHECK(contains(step<kernels::gcoo_spmm>::why_chosen<rules::sparse_times_dense>(s.facts),
                 "; tuned on this device, this matrix measured, class cls: gcoo_spmm 1 ms, "
                 "tiled_spmm 2 ms, cusparse_spmm 3 ms over 1 matrix (m); tune-test.txt"));

  entry(2.0, 1.0, 3.0);  // tiled_spmm fastest, below every tiled threshold
  CHECK(decide<kernels::tiled_spmm>(s.facts).ok);
  const auto tiled_why = [&] {
    return step<kernels::tiled_spmm>::why_chosen<rules::sparse_times_dense>(s.facts);
  };
  CHECK(contains(tiled_why(),
                 "; tuned on this device, this matrix measured, class cls: tiled_spmm 1 ms"));
  CHECK_FALSE(contains(tiled_why(), "tiled_spmm_min_fill"));  // no threshold decided it
  CHECK_FALSE(decide<kernels::gcoo_spmm>(s.facts).ok);

  entry(2.0, 3.0, 1.0);  // cuSPARSE fastest: both of Spade's kernels step aside
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason,
                 "cusparse_spmm was fastest on this matrix"));
  CHECK(contains(decide<kernels::tiled_spmm>(s.facts).reason,
                 "cusparse_spmm was fastest on this matrix"));
  CHECK(decide<kernels::cusparse_spmm>(s.facts).ok);
  CHECK(contains(cusparse_why(),
                 "tuned on this device, this matrix measured, class cls: cusparse_spmm 1 ms"));

  // What the tuner did not time keeps the rules: a transposed A, a col-major C.
  entry(1.0, 2.0, 3.0);
  s.facts.destination_col_major = true;
  CHECK(decide<kernels::gcoo_spmm>(s.facts).reason == "the destination is col-major");
  CHECK(contains(decide<kernels::tiled_spmm>(s.facts).reason, "< tiled_spmm_min_nnz"));
  s.facts.destination_col_major = false;
  s.facts.lhs_transposed = true;
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason, "transposed"));
  s.facts.lhs_transposed = false;
  // The user's own formats run whatever the entry says.
  entry(3.0, 2.0, 1.0);
  s.facts.lhs.kind = format::gcoo;
  CHECK(decide<kernels::gcoo_spmm>(s.facts).ok);
  s.facts.lhs.kind = format::tiled;
  CHECK(decide<kernels::tiled_spmm>(s.facts).ok);
  s.facts.lhs.kind = format::csr;

  // Another matrix of the class: one measured matrix does not decide for it, two that agree do,
  // two that disagree do not.
  operand = "other";
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason, "< gcoo_min_rows"));
  CHECK(contains(cusparse_why(), "; the tuned entry for class cls (cusparse_spmm 1 ms"));
  CHECK(contains(cusparse_why(), "does not decide for a matrix it did not measure"));
  table.add("spmm", "cls", {{"gcoo_spmm", 1.5}, {"tiled_spmm", 2.0}, {"cusparse_spmm", 1.0}}, "m2",
            "second");
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason,
                 "tuned on this device: cusparse_spmm was fastest on its class cls"));
  CHECK(contains(cusparse_why(), "; tuned on this device, fastest on every matrix, class cls"));
  table.add("spmm", "cls", {{"gcoo_spmm", 0.1}, {"tiled_spmm", 2.0}, {"cusparse_spmm", 1.0}}, "m3",
            "third");
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason, "< gcoo_min_rows"));
  CHECK(contains(cusparse_why(),
                 "gcoo_spmm fastest on 1 (m, m2, m3); tune-test.txt) does not decide"));
  operand = "third";  // ... but that matrix itself gets its own fastest
  CHECK(decide<kernels::gcoo_spmm>(s.facts).ok);
  operand = "this";

  // A tune file without this class: the rules decide and explain says so.
  s.facts.tuned_spmm = [&](index_t) { return tuned_choice{&table, nullptr, "other", {}, false}; };
  CHECK(contains(decide<kernels::gcoo_spmm>(s.facts).reason, "< gcoo_min_rows"));
  CHECK(contains(cusparse_why(),
                 "; no tuned entry for class other in tune-test.txt (the rules decided)"));
  CHECK(contains(tiled_why(), ">= tiled_spmm_min_fill "));
  CHECK(contains(tiled_why(), "; no tuned entry for class other"));
  CHECK(contains(step<kernels::gcoo_spmm>::why_chosen<rules::sparse_times_dense>(s.facts),
                 "; no tuned entry for class other"));
  // A malformed file: the rules decide and explain says why the file was ignored.
  table.problem = "tune-test.txt line 3: bad time 'x' for a";
  CHECK(contains(cusparse_why(), "; tune file ignored: tune-test.txt line 3: bad time"));
  // No tune file: nothing about tuning.
  s.facts.tuned_spmm = [](index_t) { return tuned_choice{}; };
  CHECK_FALSE(contains(cusparse_why(), "tune"));
  // Products other than sparse x dense never ask.
  asked_columns = 0;
  s.facts.tuned_spmm = [&](index_t columns) {
    asked_columns = columns;
    return tuned_choice{};
  };
  CHECK(decide<kernels::gcoo_spmm, rules::sparse_times_sparse>(s.facts).ok);
  CHECK(asked_columns == 0);
}
