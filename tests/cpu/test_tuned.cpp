// The tune table of core/tuned.hpp without a device: operand classes, the file format (written,
// read back, malformed), the geometric means of added matrices, and the per-device file look-up.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <spade/spade.hpp>

#include "test_support.hpp"

using spade::tuned_table;
using spade::testing::contains;

namespace {

/// A scratch cache directory for these tests (test_support.hpp).
struct scratch_cache : spade::testing::scratch_tune_cache {
  scratch_cache() : scratch_tune_cache("spade-tune-test-") {}
};

spade::device_properties test_device() {
  spade::device_properties p;
  p.name = "Test GPU (x)";
  p.compute_major = 9;
  p.compute_minor = 0;
  p.sm_count = 4;
  return p;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("operand classes: precision, rows in 4x ranges, mean row and fill in 2x, spread, width") {
  // 100000 rows: log2 16.6 -> 16; mean 16.5 -> 4; longest 40 is 2.4x the mean -> s0; tiles of
  // 37.2 -> t5.
  CHECK(spade::gcoo_tune_class(8, 100000, 16.5, 40, 37.2) == "f64.r16.m4.s0.t5");
  // 2^17 rows fall in the range that starts at 2^16; 2^18 starts the next one; no fill: "t-".
  CHECK(spade::gcoo_tune_class(4, 131072, 7.0, 100, 0) == "f32.r16.m2.s1.t-");
  CHECK(spade::gcoo_tune_class(4, 262144, 7.0, 100, 1) == "f32.r18.m2.s1.t0");
  CHECK(spade::gcoo_tune_class(4, 262144, 7.0, 7 * 32, 64) == "f32.r18.m2.s1.t6");
  CHECK(spade::gcoo_tune_class(4, 262144, 7.0, 7 * 32 + 1, 64) == "f32.r18.m2.s2.t6");
  CHECK(spade::gcoo_tune_class(4, 262144, 0.5, 1, 0) == "f32.r18.m0.s0.t-");
  // The product's class: no rows, but whether A, B and C fit in L2. The width rounds to the
  // nearest power of two, 2 to 2048; no fill counted: "t-".
  CHECK(spade::spmm_tune_class(8, 16.5, 40, 128, 37.2, true) == "f64.m4.s0.n128.t5.l2");
  CHECK(spade::spmm_tune_class(8, 16.5, 40, 96, 64, false) == "f64.m4.s0.n128.t6.dram");
  CHECK(spade::spmm_tune_class(8, 16.5, 40, 90, 1, true) == "f64.m4.s0.n64.t0.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 1000, 5000, 0, true) == "f32.m4.s2.n2048.t-.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 16, 0, true) == "f32.m4.s0.n16.t-.l2");
  // Narrow B (the "cusparse" table): 3 rounds up to 4, 5 down, 6 up to 8, 12 up to 16.
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 1, 0, true) == "f32.m4.s0.n2.t-.l2");
  CHECK(spade::tune_width(1) == 2);
  CHECK(spade::tune_width(3) == 4);
  CHECK(spade::tune_width(5) == 4);
  CHECK(spade::tune_width(6) == 8);
  CHECK(spade::tune_width(23) == 32);
  CHECK(spade::tune_width(22) == 16);
  CHECK(spade::tune_width(100000) == 2048);
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 2, 0, true) == "f32.m4.s0.n2.t-.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 3, 0, true) == "f32.m4.s0.n4.t-.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 5, 0, true) == "f32.m4.s0.n4.t-.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 6, 0, true) == "f32.m4.s0.n8.t-.l2");
  CHECK(spade::spmm_tune_class(4, 16.5, 40, 12, 0, true) == "f32.m4.s0.n16.t-.l2");
  // Widths tune_spmm and `spade tune` refuse: one below 2, or two of one class (the first pair
  // in order); distinct classes pass.
  using spade::detail::tune_columns_problem;
  CHECK(tune_columns_problem(std::vector<std::int64_t>{2, 4, 8, 32, 128, 512}).empty());
  CHECK(tune_columns_problem(std::vector<int>{}).empty());
  CHECK(tune_columns_problem(std::vector<std::int64_t>{4, 1}) ==
        "width 1 is below tune_min_cusparse_columns (2), where the planner uses no tuned choice");
  CHECK(tune_columns_problem(std::vector<int>{32, 4, 6, 3}) ==
        "widths 4 and 3 fall in one operand class (n4): give one");
  CHECK(tune_columns_problem(std::vector<int>{22, 16}) ==
        "widths 22 and 16 fall in one operand class (n16): give one");
  // The "cusparse" table's choices and their numbers; anything else is 0 (the rules decide).
  CHECK(spade::cusparse_spmm_algorithm_number("alg1") == 1);
  CHECK(spade::cusparse_spmm_algorithm_number("alg3") == 3);
  CHECK(spade::cusparse_spmm_algorithm_number("alg4") == 0);
  CHECK(spade::cusparse_spmm_algorithm_number("tiled_spmm") == 0);
  // 1000 x 1000 with 10^4 float entries, N = 100: 80000 + 4004 + 2000·100·4 = 884004 bytes.
  CHECK(spade::spmm_fits_l2(4, 1000, 1000, 10000, 100, 884004));
  CHECK_FALSE(spade::spmm_fits_l2(4, 1000, 1000, 10000, 100, 884003));
}

TEST_CASE("a tune table: geometric means over the matrices added, the best choice, its text") {
  tuned_table t;
  t.device = "dev";
  t.add("spmm", "k", {{"a", 1.0}, {"b", 4.0}}, "m1", "1x1x1x1");
  REQUIRE(t.find("spmm", "k") != nullptr);
  CHECK(t.find("spmm", "k")->best()->first == "a");
  t.add("spmm", "k", {{"a", 4.0}, {"b", 1.0}}, "m 2,x", "2x2x2x2");
  const spade::tuned_entry& e = *t.find("spmm", "k");
  CHECK(e.count == 2);
  CHECK(e.time_of("a") == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(e.time_of("b") == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(e.time_of("c") < 0);
  t.add("spmm", "k", {{"a", 1.0}, {"b", 8.0}}, "m3", "3x3x3x3");
  CHECK(t.find("spmm", "k")->time_of("a") == doctest::Approx(std::cbrt(4.0)).epsilon(1e-12));
  CHECK(t.find("spmm", "k")->best()->first == "a");
  // Each matrix's fastest choice is counted: a won twice, b once, so the entry does not decide.
  CHECK(t.find("spmm", "k")->wins_of("a") == 2);
  CHECK(t.find("spmm", "k")->wins_of("b") == 1);
  CHECK_FALSE(t.find("spmm", "k")->unanimous());
  // A measured matrix gets its own fastest choice; another one of its class none (split class).
  bool measured = false;
  CHECK(t.find("spmm", "k")->decision_for("2x2x2x2", &measured) == "b");
  CHECK(measured);
  CHECK(t.find("spmm", "k")->decision_for("9x9x9x9", &measured).empty());
  CHECK_FALSE(measured);
  CHECK(spade::tune_fingerprint(15606, 15607, 91756, 10) == "15606x15607x91756x10");
  // Names that would break the line's fields are made plain.
  CHECK(t.find("spmm", "k")->matrices == std::vector<std::string>{"m1", "m_2_x", "m3"});
  CHECK(
      contains(t.find("spmm", "k")->describe(), "over 3 matrices, a fastest on 2 (m1, m_2_x, m3)"));
  // explain's text rounds the times to 3 significant digits: a is the cube root of 4.
  CHECK(contains(t.find("spmm", "k")->describe(), "a 1.59 ms, "));
  CHECK(t.find("spmm", "other") == nullptr);
  CHECK(t.find("gcoo", "k") == nullptr);
  CHECK_THROWS_AS(t.add("spmm", "k", {{"a", 0.0}}, "m4", "4x4x4x4"), std::invalid_argument);
  CHECK_THROWS_AS(t.add("spmm", "k", {}, "m4", "4x4x4x4"), std::invalid_argument);
  // A matrix's fastest choice given apart from the times (cuSPARSE at its own algorithm): the
  // class's means stay the times given, the matrix gets the choice named.
  tuned_table given;
  given.add("spmm", "o", {{"a", 1.0}, {"b", 2.0}}, "m", "5x5x5x5", "b");
  CHECK(given.find("spmm", "o")->best()->first == "a");
  CHECK(given.find("spmm", "o")->decision_for("5x5x5x5") == "b");
  CHECK_THROWS_AS(given.add("spmm", "o", {{"a", 1.0}}, "m", "6x6x6x6", "c"), std::invalid_argument);
  // Which matrices a table measured, whatever the class.
  CHECK(t.measured("spmm", "2x2x2x2"));
  CHECK_FALSE(t.measured("spmm", "9x9x9x9"));
  CHECK_FALSE(t.measured("cusparse", "2x2x2x2"));

  // Written and read back: the same entries, the same times to the last bit.
  t.add("gcoo", "g", {{"p1", 0.25}, {"p4", 0.125}}, "m1", "1x1x1x1");
  const tuned_table back = tuned_table::parse(t.to_text(), "file");
  CHECK(back.problem.empty());
  CHECK(back.device == "dev");
  CHECK(back.size() == 2);
  CHECK(back.to_text() == t.to_text());
  CHECK(back.find("gcoo", "g")->best()->first == "p4");
  CHECK(back.measured("spmm", "3x3x3x3"));
  CHECK(back.measured("gcoo", "1x1x1x1"));
  CHECK_FALSE(back.measured("gcoo", "3x3x3x3"));
  CHECK(back.find("gcoo", "g")->unanimous());
  // One matrix decides for itself only; two that agree decide for their whole class.
  CHECK(back.find("gcoo", "g")->decision_for("1x1x1x1") == "p4");
  CHECK(back.find("gcoo", "g")->decision_for("9x9x9x9").empty());
  t.add("gcoo", "g", {{"p1", 0.5}, {"p4", 0.25}}, "m2", "2x2x2x2");
  CHECK(t.find("gcoo", "g")->decision_for("9x9x9x9") == "p4");
  CHECK(contains(t.to_text(), " fastest=1x1x1x1:a,2x2x2x2:b,3x3x3x3:a from=m1,m_2_x,m3\n"));
  CHECK(back.find("spmm", "k")->wins_of("a") == 2);
  CHECK(back.find("spmm", "k")->decision_for("2x2x2x2") == "b");
  CHECK(back.find("spmm", "k")->time_of("b") == t.find("spmm", "k")->time_of("b"));
}

TEST_CASE("a malformed tune file is ignored whole, naming its line and what is wrong") {
  const std::string head = std::string(tuned_table::format_line) + "\ndevice d\n";
  const auto problem_of = [](const std::string& text) {
    const tuned_table t = tuned_table::parse(text, "f.txt");
    CHECK(t.size() == 0);
    return t.problem;
  };
  CHECK(contains(problem_of("spade-tune 0\n"), "f.txt line 1: expected 'spade-tune 1'"));
  CHECK(contains(problem_of(""), "empty file"));
  CHECK(contains(problem_of(head + "spmm k 1 a=1 fastest=f:a\nspmm k 1 a=x\n"),
                 "line 4: bad time 'x' for a"));
  CHECK(contains(problem_of(head + "spmm k 1 a=-1\n"), "bad time '-1' for a"));
  CHECK(contains(problem_of(head + "spmm k 1 a=nan\n"), "bad time"));
  CHECK(contains(problem_of(head + "spmm k 0 a=1\n"), "bad count '0'"));
  CHECK(contains(problem_of(head + "spmm k\n"), "expected <table> <class> <count>"));
  CHECK(contains(problem_of(head + "spmm k 1 a\n"), "expected <choice>=<ms>, not 'a'"));
  CHECK(contains(problem_of(head + "spmm k 1 from=x\n"), "no times for spmm k"));
  CHECK(contains(problem_of(head + "spmm k 1 a=1 fastest=f:a\nspmm k 1 a=1 fastest=f:a\n"),
                 "line 4: a second entry"));
  CHECK(contains(problem_of(head + "spmm k 1 a=1 fastest=f\n"),
                 "expected fastest=<fingerprint>:<choice>"));
  CHECK(contains(problem_of(head + "spmm k 1 a=1 fastest=f:\n"), "expected fastest="));
  CHECK(contains(problem_of(head + "spmm k 1 a=1 fastest=f:b\n"),
                 "b fastest on f, but it has no time"));
  CHECK(contains(problem_of(head + "spmm k 2 a=1 fastest=f:a\n"),
                 "1 fastest choices for 2 matrices in spmm k"));
  // The "cusparse" table holds cuSPARSE SpMM's algorithms only.
  CHECK(contains(problem_of(head + "cusparse k 1 alg1=1 alg4=2 fastest=f:alg1\n"),
                 "line 3: 'alg4' is no cuSPARSE SpMM algorithm (alg1, alg2, alg3)"));
  CHECK(tuned_table::parse(head + "cusparse k 1 alg1=1 alg3=2 fastest=f:alg1\n").problem.empty());
  // Comments, blank lines and CRLF line ends are fine.
  const tuned_table ok = tuned_table::parse(
      head + "# note\r\n\r\nspmm k 1 a=0.5 b=1 fastest=f:a from=x,y\r\n", "f.txt");
  CHECK(ok.problem.empty());
  CHECK(ok.find("spmm", "k")->matrices == std::vector<std::string>{"x", "y"});
}

TEST_CASE("each device reads its own tune file once, from the cache directory") {
  const scratch_cache cache;
  const spade::device_properties p = test_device();
  CHECK(spade::device_tune_key(p) == "Test_GPU__x__sm90_4sms");
  const std::string path = spade::tuned_table_path(spade::device_tune_key(p));
  CHECK(path == (cache.dir / "tune-Test_GPU__x__sm90_4sms.txt").string());
  // No file: an empty table without a problem.
  CHECK(spade::tuned_table_for(p)->size() == 0);
  CHECK(spade::tuned_table_for(p)->problem.empty());

  tuned_table t;
  t.device = spade::device_tune_key(p);
  t.add("spmm", "k", {{"tiled_spmm", 1.0}}, "m", "5x5x5x5");
  spade::save_tuned_table(t, path);
  const auto read = spade::tuned_table_for(p);
  CHECK(read->size() == 1);
  CHECK(read->source == path);
  CHECK(spade::tuned_table_for(p) == read);  // read once, then looked up

  // Another device has no file; tuned choices off: nothing for anyone.
  spade::device_properties other = p;
  other.sm_count = 8;
  CHECK(spade::tuned_table_for(other)->size() == 0);
  ::setenv("SPADE_TUNE", "off", 1);
  CHECK(spade::tuned_table_for(p)->size() == 0);
  ::unsetenv("SPADE_TUNE");

  // A file changed behind the cache is read again after forget_tuned_tables; a malformed one
  // yields an empty table that says why.
  write_file(path, "not a tune file\n");
  CHECK(spade::tuned_table_for(p)->size() == 1);
  spade::forget_tuned_tables();
  CHECK(spade::tuned_table_for(p)->size() == 0);
  CHECK(contains(spade::tuned_table_for(p)->problem, path + " line 1: expected 'spade-tune 1'"));
  CHECK(read->size() == 1);  // a table handed out earlier stays valid

  // No cache directory: nothing is read; saving says why.
  ::unsetenv("SPADE_CACHE_DIR");
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg ? xdg : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(spade::tuned_table_path("k").empty());
  CHECK(spade::tuned_table_for(p)->size() == 0);
  CHECK_THROWS_AS(spade::save_tuned_table(t, ""), spade::io_error);
  if (!saved_home.empty()) ::setenv("HOME", saved_home.c_str(), 1);
  if (!saved_xdg.empty()) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  // A directory that cannot be made: io_error naming the path.
  write_file((cache.dir / "plain").string(), "x");
  try {
    spade::save_tuned_table(t, (cache.dir / "plain" / "tune.txt").string());
    FAIL("no io_error");
  } catch (const spade::io_error& e) {
    CHECK(contains(e.what(), "plain"));
  }
}
