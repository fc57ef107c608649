// libFuzzer target: Matrix Market parsing must throw spade::error or return a valid csr.
//
// Any other outcome is a finding: a crash or sanitizer report, an exception of another type,
// a result that breaks csr invariants, or a result (or error line and message) that changes
// with the number of chunks the text is parsed in.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <spade/io/matrix_market.hpp>

namespace {

// What one parse gave: the matrix, or the error's line and message.
struct outcome {
  bool ok = false;
  std::size_t line = 0;
  std::string message;
  spade::csr<double, spade::cpu> matrix;
};

template <class Parse>
outcome run(Parse parse) {
  outcome out;
  try {
    out.matrix = parse();
    out.ok = true;
  } catch (const spade::io_error& e) {
    out.line = e.line();
    out.message = e.what();
  }
  return out;
}

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "finding: %s: %s\n", what, detail.c_str());
  std::abort();
}

bool same(const outcome& a, const outcome& b) {
  if (a.ok != b.ok) return false;
  if (!a.ok) return a.line == b.line && a.message == b.message;
  const auto& x = a.matrix;
  const auto& y = b.matrix;
  return x.rows() == y.rows() && x.cols() == y.cols() && x.row_ptr() == y.row_ptr() &&
         x.col_idx() == y.col_idx() && x.values().size() == y.values().size() &&
         (x.values().empty() ||  // memcmp must not see the null data() of empty vectors
          std::memcmp(x.values().data(), y.values().data(), x.values().size() * sizeof(double)) ==
              0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    // A valid header may ask for billions of rows, and csr needs rows + 1 row pointers:
    // correct, but beyond the fuzzer's memory limit, so such inputs are left out.
    if (spade::detail::mm::parse_header(text, "fuzz").rows > (1 << 20)) return -1;
  } catch (const spade::error&) {
  }
  const outcome whole = run([&] { return spade::parse_matrix_market<double>(text, "fuzz"); });
  const outcome chunked =
      run([&] { return spade::detail::mm::parse_text<double>(text, "fuzz", 3); });
  if (!same(whole, chunked))
    finding("one chunk and three chunks disagree",
            (whole.ok ? std::string("ok") : whole.message) + " vs " +
                (chunked.ok ? std::string("ok") : chunked.message));
  if (!whole.ok) {
    if (whole.message.empty()) finding("empty error message", "");
    return 0;
  }
  const auto& a = whole.matrix;
  try {
    const std::vector<spade::index_t> row_ptr = a.row_ptr();
    spade::detail::check_csr_structure(a.rows(), a.cols(), row_ptr, a.col_idx(), a.values().size());
    spade::detail::check_csr_sorted(row_ptr, a.col_idx());
  } catch (const spade::invalid_matrix& e) {
    finding("broken csr invariants", e.what());
  }
  // float parsing takes its own from_chars path; it must agree on the outcome.
  bool float_ok = false;
  try {
    float_ok = spade::parse_matrix_market<float>(text, "fuzz").nnz() <= a.nnz();
  } catch (const spade::io_error& e) {
    finding("float parse failed where double parse succeeded", e.what());
  }
  if (!float_ok) finding("float parse kept more entries than double parse", "");
  return 0;
}
