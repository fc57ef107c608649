// Matrix Market read throughput (MB/s of uncompressed text) on a real matrix and a ~100 MB file.
//
// Usage: bench_matrix_market [matrix.mtx.gz] [synthetic MB]
// The real matrix defaults to ../shared/matrices/soc-Slashdot0902.mtx.gz (run from the repo
// root). Both inputs are written uncompressed to a temporary folder, so the timing measures
// parsing and assembly, not decompression. Each line reports the median of 5 timed reads
// after one warm-up read.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include <spade/io/matrix_market.hpp>

namespace {

namespace fs = std::filesystem;

// Decompressing through the reader itself keeps this program free of a second zlib path.
void decompress(const fs::path& from, const fs::path& to) {
  const std::string text = spade::detail::mm::read_file_text(from);
  std::FILE* f = std::fopen(to.string().c_str(), "wb");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", to.string().c_str());
    std::exit(1);
  }
}

// A coordinate real general file of about `megabytes` MB: rows of a 2^20 × 2^20 matrix with
// 16 entries each at LCG-chosen columns, values with 17 significant digits as real files
// written at full precision have.
void generate(const fs::path& to, double megabytes) {
  constexpr long long n = 1 << 20;
  constexpr long long per_row = 16;
  const auto target = static_cast<std::size_t>(megabytes * 1e6);
  std::string body;
  body.reserve(target + 64);
  std::uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 11;
  };
  long long entries = 0;
  char line[96];
  while (body.size() < target && entries < n * per_row) {
    const long long row = entries / per_row + 1;
    const auto col = static_cast<long long>(next() % n + 1);
    const double value = static_cast<double>(next()) / 9007199254740992.0 - 0.5;
    body.append(line, static_cast<std::size_t>(
                          std::snprintf(line, sizeof line, "%lld %lld %.17g\n", row, col, value)));
    ++entries;
  }
  std::FILE* f = std::fopen(to.string().c_str(), "wb");
  if (!f ||
      std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", n, n,
                   entries) < 0 ||
      std::fwrite(body.data(), 1, body.size(), f) != body.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", to.string().c_str());
    std::exit(1);
  }
}

void time_read(const fs::path& file) {
  const double megabytes = static_cast<double>(fs::file_size(file)) / 1e6;
  std::vector<double> seconds;
  std::int64_t nnz = 0;
  for (int run = 0; run < 6; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const auto a = spade::read_matrix_market<double>(file);
    const auto stop = std::chrono::steady_clock::now();
    nnz = a.nnz();
    if (run > 0) seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("%s: %.1f MB in %.3f s = %.1f MB/s (median of 5; nnz %lld)\n",
              file.filename().string().c_str(), megabytes, median, megabytes / median,
              static_cast<long long>(nnz));
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path real = argc > 1 ? argv[1] : "../shared/matrices/soc-Slashdot0902.mtx.gz";
  const double synthetic_mb = argc > 2 ? std::atof(argv[2]) : 100.0;
  const fs::path dir = fs::temp_directory_path() / ("spade_bench_mm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    std::string stem = real.filename().string();
    if (stem.ends_with(".gz")) stem.resize(stem.size() - 3);
    const fs::path plain = dir / stem;
    decompress(real, plain);
    time_read(plain);
    const fs::path generated = dir / "synthetic.mtx";
    generate(generated, synthetic_mb);
    time_read(generated);
  } catch (const spade::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
}
