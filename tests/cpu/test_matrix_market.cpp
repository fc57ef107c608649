// Matrix Market I/O: round trips of the real matrices, hand-checked small files, malformed input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <spade/spade.hpp>

#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

template <class T>
using host_csr = spade::csr<T, spade::cpu>;

/// A folder of its own under the system temp folder, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::random_device seed;
    path_ = fs::temp_directory_path() / ("spade_mm_test_" + std::to_string(seed()));
    fs::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Bit patterns, so that NaN payloads and the sign of zero count.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class T>
void check_identical(const host_csr<T>& a, const host_csr<T>& b) {
  CHECK(a.rows() == b.rows());
  CHECK(a.cols() == b.cols());
  CHECK(a.row_ptr() == b.row_ptr());
  CHECK(a.col_idx() == b.col_idx());
  CHECK(same_bits(a.values(), b.values()));
}

/// Row pointers, columns and values written out by hand.
template <class T>
void check_csr(const host_csr<T>& a, spade::index_t rows, spade::index_t cols,
               const std::vector<spade::index_t>& row_ptr,
               const std::vector<spade::index_t>& col_idx, const std::vector<T>& values) {
  CHECK(a.rows() == rows);
  CHECK(a.cols() == cols);
  CHECK(a.row_ptr() == row_ptr);
  CHECK(a.col_idx() == col_idx);
  CHECK(a.values() == values);
}

}  // namespace

TEST_CASE_TEMPLATE("every real matrix reads, writes and reads back bit-exact", T, float, double) {
  // Expanded entry counts from shared/matrices/README.md (the collection's numbers).
  const std::map<std::string, spade::index_t> expanded = {
      {"bcsstk03.mtx.gz", 640},        {"jagmesh7.mtx.gz", 7450},
      {"Chem97ZtZ.mtx.gz", 7361},      {"zenios.mtx.gz", 27191},
      {"ex10hs.mtx.gz", 57308},        {"bcsstk13.mtx.gz", 83883},
      {"olm1000.mtx.gz", 3996},        {"cage10.mtx.gz", 150645},
      {"delaunay_n16.mtx.gz", 393150}, {"soc-Slashdot0902.mtx.gz", 948464},
      {"s1rmq4m1.mtx.gz", 262411},     {"ck104.mtx.gz", 992}};
  const auto files = spade::testing::real_matrices();
  REQUIRE(!files.empty());
  temp_dir dir;
  std::size_t checked_counts = 0;
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    CAPTURE(name);
    spade::matrix_market_info info;
    const auto a = spade::read_matrix_market<T>(file, &info);
    CHECK(info.format == "coordinate");
    CHECK(info.rows == a.rows());
    CHECK(info.cols == a.cols());
    if (info.symmetry == "general") CHECK(static_cast<std::size_t>(a.nnz()) <= info.stored_entries);
    if (const auto it = expanded.find(name); it != expanded.end()) {
      CHECK(a.nnz() == it->second);
      ++checked_counts;
    }
    for (const char* suffix : {".mtx", ".mtx.gz"}) {
      const fs::path copy = dir.path() / (name + suffix);
      CAPTURE(copy);
      spade::write_matrix_market(copy, a);
      spade::matrix_market_info again;
      const auto b = spade::read_matrix_market<T>(copy, &again);
      check_identical(a, b);
      CHECK(again.field == "real");
      CHECK(again.symmetry == "general");
      CHECK(again.stored_entries == static_cast<std::size_t>(a.nnz()));
    }
  }
  CHECK(checked_counts >= 3);
}

TEST_CASE("the result does not depend on how many chunks parse the text") {
  for (const auto& file : spade::testing::real_matrices()) {
    CAPTURE(file);
    if (fs::file_size(file) > (std::size_t{1} << 20)) continue;
    const std::string text = spade::detail::mm::read_file_text(file);
    const auto one = spade::detail::mm::parse_text<double>(text, file.string(), 1);
    for (std::size_t chunks : {2, 3, 7}) {
      CAPTURE(chunks);
      check_identical(one, spade::detail::mm::parse_text<double>(text, file.string(), chunks));
    }
  }
}

TEST_CASE_TEMPLATE("coordinate general", T, float, double) {
  spade::matrix_market_info info;
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate real general\n"
      "3 4 5\n"
      "1 1 1.5\n"
      "3 4 -2e1\n"
      "2 2 .25\n"
      "1 3 4\n"
      "3 1 +7.0\n",
      "general", &info);
  check_csr<T>(a, 3, 4, {0, 2, 3, 5}, {0, 2, 1, 0, 3}, {1.5, 4, 0.25, 7, -20});
  CHECK(info.format == "coordinate");
  CHECK(info.field == "real");
  CHECK(info.symmetry == "general");
  CHECK(info.rows == 3);
  CHECK(info.cols == 4);
  CHECK(info.stored_entries == 5);
}

TEST_CASE_TEMPLATE("symmetric files store the lower triangle and read expanded", T, float, double) {
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 4\n"
      "1 1 2\n"
      "2 1 -1\n"
      "3 2 5\n"
      "3 3 4\n");
  check_csr<T>(a, 3, 3, {0, 2, 4, 6}, {0, 1, 0, 2, 1, 2}, {2, -1, -1, 5, 5, 4});
}

TEST_CASE_TEMPLATE("skew-symmetric mirrors negated", T, float, double) {
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate real skew-symmetric\n"
      "3 3 2\n"
      "2 1 3\n"
      "3 1 -4\n");
  check_csr<T>(a, 3, 3, {0, 2, 3, 4}, {1, 2, 0, 0}, {-3, 4, 3, -4});
}

TEST_CASE_TEMPLATE("pattern entries are 1", T, float, double) {
  spade::matrix_market_info info;
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate pattern symmetric\n"
      "3 3 3\n"
      "2 1\n"
      "3 3\n"
      "3 1\n",
      "pattern", &info);
  check_csr<T>(a, 3, 3, {0, 2, 3, 5}, {1, 2, 0, 0, 2}, {1, 1, 1, 1, 1});
  CHECK(info.field == "pattern");
  CHECK(info.symmetry == "symmetric");
  CHECK(info.stored_entries == 3);
}

TEST_CASE_TEMPLATE("integer values", T, float, double) {
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate integer general\n"
      "2 2 3\n"
      "1 2 -7\n"
      "2 1 +12\n"
      "2 2 0\n");
  check_csr<T>(a, 2, 2, {0, 1, 3}, {1, 0, 1}, {-7, 12, 0});
}

TEST_CASE_TEMPLATE("array general is column-major and keeps only nonzeros", T, float, double) {
  spade::matrix_market_info info;
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix array real general\n"
      "% a 2 x 3 matrix [1 0 3; 0 5 6]\n"
      "2 3\n"
      "1\n0\n0\n5\n3\n6\n",
      "array", &info);
  check_csr<T>(a, 2, 3, {0, 2, 4}, {0, 2, 1, 2}, {1, 3, 5, 6});
  CHECK(info.format == "array");
  CHECK(info.stored_entries == 6);
}

TEST_CASE_TEMPLATE("array symmetric stores the lower triangle column by column", T, float, double) {
  // [1 2 4; 2 3 0; 4 0 6]: columns of the lower triangle are (1 2 4) (3 0) (6).
  spade::matrix_market_info info;
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix array real symmetric\n"
      "3 3\n"
      "1\n2\n4\n3\n0\n6\n",
      "array symmetric", &info);
  check_csr<T>(a, 3, 3, {0, 3, 5, 7}, {0, 1, 2, 0, 1, 0, 2}, {1, 2, 4, 2, 3, 4, 6});
  CHECK(info.stored_entries == 6);
}

TEST_CASE("array skew-symmetric stores the strict lower triangle") {
  const auto a = spade::parse_matrix_market<double>(
      "%%MatrixMarket matrix array real skew-symmetric\n"
      "3 3\n"
      "1\n2\n3\n");
  check_csr<double>(a, 3, 3, {0, 2, 4, 6}, {1, 2, 0, 2, 0, 1}, {-1, -2, 1, -3, 2, 3});
}

TEST_CASE("comments, blank lines, tabs and CRLF anywhere after the banner") {
  const auto a = spade::parse_matrix_market<double>(
      "%%MatrixMarket Matrix COORDINATE Real General\r\n"
      "% comment\r\n"
      "\r\n"
      "  % indented comment\n"
      "2 2 3   \n"
      "\n"
      "1\t1\t1\n"
      "% between entries\n"
      "   \n"
      "  2 2 2  \r\n"
      "%\n"
      "1 2 3\n"
      "% at the end, without a newline");
  check_csr<double>(a, 2, 2, {0, 2, 3}, {0, 1, 1}, {1, 3, 2});
}

TEST_CASE_TEMPLATE("duplicates are summed in file order", T, float, double) {
  const auto a = spade::parse_matrix_market<T>(
      "%%MatrixMarket matrix coordinate real general\n"
      "2 3 6\n"
      "1 3 1\n"
      "1 1 2\n"
      "1 3 10\n"
      "2 2 4\n"
      "1 3 100\n"
      "2 2 -4\n");
  check_csr<T>(a, 2, 3, {0, 2, 3}, {0, 2, 1}, {2, 111, 0});
}

TEST_CASE("symmetric entries given on both sides are summed") {
  const auto a = spade::parse_matrix_market<double>(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "2 2 2\n"
      "2 1 1\n"
      "1 2 2\n");
  check_csr<double>(a, 2, 2, {0, 1, 2}, {1, 0}, {3, 3});
}

TEST_CASE("empty, 1x1 and empty rows") {
  spade::matrix_market_info info;
  const auto empty = spade::parse_matrix_market<double>(
      "%%MatrixMarket matrix coordinate real general\n0 0 0\n", "empty", &info);
  check_csr<double>(empty, 0, 0, {0}, {}, {});
  CHECK(info.stored_entries == 0);

  const auto no_entries =
      spade::parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n3 2 0");
  check_csr<double>(no_entries, 3, 2, {0, 0, 0, 0}, {}, {});

  const auto one = spade::parse_matrix_market<float>(
      "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 -0.5\n");
  check_csr<float>(one, 1, 1, {0, 1}, {0}, {-0.5f});

  const auto gaps = spade::parse_matrix_market<double>(
      "%%MatrixMarket matrix coordinate real general\n5 5 2\n2 5 1\n5 1 2\n");
  check_csr<double>(gaps, 5, 5, {0, 0, 1, 1, 1, 2}, {4, 0}, {1, 2});

  const auto empty_array =
      spade::parse_matrix_market<double>("%%MatrixMarket matrix array real general\n0 4\n");
  check_csr<double>(empty_array, 0, 4, {0}, {}, {});
}

TEST_CASE("values out of range round as strtod does") {
  const auto a = spade::parse_matrix_market<float>(
      "%%MatrixMarket matrix coordinate real general\n1 4 4\n"
      "1 1 1e300\n1 2 -1e-300\n1 3 1e-40\n1 4 -2.5e39\n");
  REQUIRE(a.nnz() == 4);
  CHECK(a.values()[0] == INFINITY);
  CHECK(a.values()[1] == 0.0f);
  CHECK(std::signbit(a.values()[1]));
  CHECK(a.values()[2] == 1e-40f);  // subnormal, kept
  CHECK(a.values()[3] == -INFINITY);
}

TEST_CASE_TEMPLATE("dense and coo write, and read back", T, float, double) {
  temp_dir dir;
  spade::dense<T, spade::cpu, spade::col_major> d(3, 2);
  d(0, 0) = T(1) / T(3);
  d(2, 0) = T(-2.5);
  d(1, 1) = std::nextafter(T(1), T(2));
  const fs::path dense_path = dir.path() / "dense.mtx.gz";
  spade::write_matrix_market(dense_path, d);
  spade::matrix_market_info info;
  const auto from_dense = spade::read_matrix_market<T>(dense_path, &info);
  CHECK(info.format == "array");
  CHECK(info.stored_entries == 6);
  check_csr<T>(from_dense, 3, 2, {0, 1, 2, 3}, {0, 1, 0}, {d(0, 0), d(1, 1), d(2, 0)});

  spade::coo<T, spade::cpu> c(2, 2, {1, 0, 1}, {0, 1, 0}, {T(0.1), T(2), T(0.2)});
  const fs::path coo_path = dir.path() / "coo.mtx";
  spade::write_matrix_market(coo_path, c);
  const auto from_coo = spade::read_matrix_market<T>(coo_path);
  check_csr<T>(from_coo, 2, 2, {0, 1, 2}, {1, 0}, {T(2), T(0.1) + T(0.2)});

  const host_csr<T> empty(0, 0);
  spade::write_matrix_market(dir.path() / "empty.mtx", empty);
  CHECK(read_bytes(dir.path() / "empty.mtx") ==
        "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
}

TEST_CASE("plain and gzip files are told apart by content, not name") {
  temp_dir dir;
  const host_csr<double> a(2, 2, {0, 1, 2}, {1, 0}, {0.1, 1e-310});
  spade::write_matrix_market(dir.path() / "a.mtx.gz", a);
  fs::rename(dir.path() / "a.mtx.gz", dir.path() / "gzip_without_suffix.mtx");
  check_identical(a, spade::read_matrix_market<double>(dir.path() / "gzip_without_suffix.mtx"));
  spade::write_matrix_market(dir.path() / "b.mtx", a);
  fs::rename(dir.path() / "b.mtx", dir.path() / "plain_with_suffix.mtx.gz");
  check_identical(a, spade::read_matrix_market<double>(dir.path() / "plain_with_suffix.mtx.gz"));
}

TEST_CASE("files that cannot be opened or written throw io_error for the whole file") {
  temp_dir dir;
  const fs::path missing = dir.path() / "missing.mtx";
  try {
    spade::read_matrix_market<double>(missing);
    FAIL("no exception");
  } catch (const spade::io_error& e) {
    CHECK(e.file() == missing.string());
    CHECK(e.line() == 0);
    CHECK(std::string(e.what()).find("cannot open") != std::string::npos);
  }
  CHECK_THROWS_AS(spade::read_matrix_market<double>(dir.path()), spade::io_error);
  const host_csr<double> a(1, 1);
  for (const char* name : {"x.mtx", "x.mtx.gz"}) {
    CAPTURE(name);
    try {
      spade::write_matrix_market(dir.path() / "no_such_folder" / name, a);
      FAIL("no exception");
    } catch (const spade::io_error& e) {
      CHECK(e.line() == 0);
      CHECK(std::string(e.what()).find("cannot open for writing") != std::string::npos);
    }
  }
}

TEST_CASE("more entries than the index type holds after symmetric expansion") {
  const std::string text =
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 1\n3 1 1\n";
  CHECK(spade::detail::mm::parse_text<double>(text, "limit", 1, nullptr, 5).nnz() == 5);
  try {
    spade::detail::mm::parse_text<double>(text, "limit", 1, nullptr, 4);
    FAIL("no exception");
  } catch (const spade::io_error& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).find("after symmetric expansion") != std::string::npos);
  }
}

TEST_CASE("malformed files throw io_error naming the line and the problem") {
  struct expectation {
    const char* file;
    std::size_t line;
    const char* message;
  };
  const expectation cases[] = {
      {"bad_banner.mtx", 1, "missing %%MatrixMarket banner"},
      {"no_banner.mtx", 1, "missing %%MatrixMarket banner"},
      {"empty.mtx", 1, "missing %%MatrixMarket banner"},
      {"vector_object.mtx", 1, "unsupported object 'vector'"},
      {"unknown_format.mtx", 1, "unknown format 'sparse'"},
      {"complex.mtx", 1, "unsupported field 'complex'"},
      {"unknown_field.mtx", 1, "unknown field 'float'"},
      {"hermitian.mtx", 1, "unsupported symmetry 'hermitian'"},
      {"unknown_symmetry.mtx", 1, "unknown symmetry 'upper'"},
      {"short_banner.mtx", 1, "banner is missing the symmetry"},
      {"array_pattern.mtx", 1, "'pattern' field needs the 'coordinate' format"},
      {"missing_size.mtx", 5, "missing size line"},
      {"malformed_size.mtx", 3, "column count 'x' is not an integer"},
      {"size_too_short.mtx", 2, "expected 'rows cols entries'"},
      {"negative_size.mtx", 2, "negative row count -3"},
      {"rows_too_large.mtx", 2, "row count 3000000000 exceeds the 32-bit index type"},
      {"entries_too_large.mtx", 2, "entry count 2147483648 exceeds the 32-bit index type"},
      {"size_trailing.mtx", 2, "unexpected text '7' after the size line"},
      {"symmetric_not_square.mtx", 2, "must be square"},
      {"truncated.mtx", 7, "file ends after 3 of the 5 entries"},
      {"truncated_no_newline.mtx", 5, "file ends after 2 of the 3 entries"},
      {"too_many_entries.mtx", 6, "more entries than the 2 declared"},
      {"row_index_zero.mtx", 4, "row index 0 is out of range [1, 3]"},
      {"column_out_of_range.mtx", 5, "column index 4 is out of range [1, 3]"},
      {"negative_index.mtx", 3, "row index -1 is out of range [1, 3]"},
      {"malformed_index.mtx", 3, "malformed row index '1.5'"},
      {"non_numeric_value.mtx", 4, "non-numeric value 'abc'"},
      {"value_bad_exponent.mtx", 3, "non-numeric value '1.0e'"},
      {"missing_value.mtx", 4, "missing value"},
      {"missing_column.mtx", 3, "missing column index"},
      {"trailing_garbage.mtx", 4, "unexpected text 'junk' after the entry"},
      {"pattern_with_value.mtx", 4, "unexpected text '1.0' after the entry"},
      {"integer_not_integer.mtx", 4, "non-integer value '2.5'"},
      {"skew_diagonal.mtx", 4, "diagonal entry (2, 2) in a skew-symmetric matrix"},
      {"array_truncated.mtx", 6, "file ends after 3 of the 4 entries"},
      {"array_too_many.mtx", 7, "more entries than the 4 declared"},
      {"array_two_per_line.mtx", 3, "unexpected text '2.0' after the value"},
      {"crlf_bad_value.mtx", 5, "non-numeric value 'x3'"},
      {"nul_byte.mtx", 3, "non-numeric value '1\\x00'"},
      {"truncated.mtx.gz", 0, "truncated gzip stream"},
      {"bad_trailer.mtx.gz", 0, "corrupt gzip stream"},
  };
  const fs::path dir = spade::testing::data_dir() / "malformed";
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    files += entry.is_regular_file();
  CHECK(files == std::size(cases));  // every file in the corpus has its expectation here

  for (const auto& c : cases) {
    const fs::path path = dir / c.file;
    CAPTURE(path);
    REQUIRE(fs::exists(path));
    bool threw = false;
    try {
      spade::read_matrix_market<double>(path);
    } catch (const spade::io_error& e) {
      threw = true;
      CAPTURE(e.what());
      CHECK(e.file() == path.string());
      CHECK(e.line() == c.line);
      CHECK(std::string(e.what()).find(c.message) != std::string::npos);
    }
    CHECK(threw);
    if (c.line == 0) continue;
    // However the text is cut into chunks, the same (earliest) error is reported.
    const std::string text = read_bytes(path);
    for (std::size_t chunks : {2, 3, 5, 16}) {
      CAPTURE(chunks);
      try {
        spade::detail::mm::parse_text<float>(text, c.file, chunks);
        FAIL("no exception");
      } catch (const spade::io_error& e) {
        CHECK(e.line() == c.line);
        CHECK(std::string(e.what()).find(c.message) != std::string::npos);
      }
    }
  }
}

TEST_CASE("the earliest of several errors is reported, wherever the chunks are cut") {
  std::string text = "%%MatrixMarket matrix coordinate real general\n100 100 90\n";
  for (int k = 1; k <= 80; ++k)
    text += std::to_string(k) + " " + std::to_string(k) + " 1\n";
  text += "1 1 oops\n";  // line 83: the first error
  text += "0 1 1\n";     // line 84
  for (int k = 0; k < 20; ++k)
    text += "1 1 1\n";  // lines 85-104: too many entries
  for (std::size_t chunks = 1; chunks <= 9; ++chunks) {
    CAPTURE(chunks);
    try {
      spade::detail::mm::parse_text<double>(text, "several", chunks);
      FAIL("no exception");
    } catch (const spade::io_error& e) {
      CHECK(e.line() == 83);
      CHECK(std::string(e.what()).find("non-numeric value 'oops'") != std::string::npos);
    }
  }
  // Without the bad lines, the 91st entry (line 93) is the first problem.
  std::string extra = "%%MatrixMarket matrix coordinate real general\n100 100 90\n";
  for (int k = 1; k <= 100; ++k)
    extra += std::to_string(k) + " 1 1\n";
  for (std::size_t chunks = 1; chunks <= 9; ++chunks) {
    CAPTURE(chunks);
    try {
      spade::detail::mm::parse_text<double>(extra, "extra", chunks);
      FAIL("no exception");
    } catch (const spade::io_error& e) {
      CHECK(e.line() == 93);
      CHECK(std::string(e.what()).find("more entries than the 90 declared") != std::string::npos);
    }
  }
}
