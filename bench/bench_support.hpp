// spade-bench: checked CUDA/cuSPARSE/cuBLAS calls, RAII owners, options, statistics, CSV rows.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <spade/spade.hpp>

#include "detail/vendor_handles.hpp"

namespace spade::bench {

// ---- errors: a failing library call throws, naming the call and its status -----------------

/// A CUDA runtime call failed.
struct cuda_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A cuSPARSE or cuBLAS call failed; `status` is the library's code (cuSPARSE 11 is
/// CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, the documented SpGEMM failure on R-MAT).
struct library_failure : std::runtime_error {
  library_failure(const std::string& what, int code) : std::runtime_error(what), status(code) {}
  int status;
};

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw cuda_failure(std::string(call) + ": " + cudaGetErrorName(status) + " (" +
                       cudaGetErrorString(status) + ")");
}

inline void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw library_failure(std::string(call) + ": status " + std::to_string(int(status)) + " (" +
                              cusparseGetErrorName(status) + ")",
                          int(status));
}

inline void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw library_failure(std::string(call) + ": status " + std::to_string(int(status)) + " (" +
                              cublasGetStatusName(status) + ")",
                          int(status));
}

/// The stream every Spade call of the default context is ordered on.
inline cudaStream_t spade_stream() {
  return static_cast<cudaStream_t>(default_context().stream());
}

// ---- RAII owners of library objects (the library's own: detail/vendor_handles.hpp) ----------

using detail::const_dn_mat;
using detail::const_dn_vec;
using detail::const_sp_mat;
using detail::cublas_handle;
using detail::cusparse_handle;
using detail::dn_mat;
using detail::dn_vec;
using detail::sp_mat;
using detail::spgemm_descr;
using cuda_event = detail::owned<cudaEvent_t, &cudaEventDestroy>;

/// Device memory from the device's default stream-ordered pool, freed on `stream` (the
/// baselines' own allocations: Spade's pool is not theirs to use).
class raw_buffer {
 public:
  raw_buffer() = default;
  raw_buffer(std::size_t bytes, cudaStream_t stream) : bytes_(bytes), stream_(stream) {
    if (bytes_) check_cuda(cudaMallocAsync(&data_, bytes_, stream_), "cudaMallocAsync");
  }
  ~raw_buffer() { release(); }
  raw_buffer(const raw_buffer&) = delete;
  raw_buffer& operator=(const raw_buffer&) = delete;
  raw_buffer(raw_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        stream_(o.stream_) {}
  raw_buffer& operator=(raw_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      stream_ = o.stream_;
    }
    return *this;
  }
  void* get() const noexcept { return data_; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const noexcept { return bytes_; }
  void release() noexcept {
    if (data_) cudaFreeAsync(data_, stream_);
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

template <class T>
inline constexpr cudaDataType_t cuda_type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;

template <class T>
const char* precision_name() {
  return std::is_same_v<T, float> ? "fp32" : "fp64";
}

// ---- options --------------------------------------------------------------------------------

/// Parsed command line: `--name value` options and `--flag` switches after the subcommand.
/// Throws std::invalid_argument for a name in neither list or an option without its value.
class options {
 public:
  options(const std::vector<std::string>& args, const std::vector<std::string>& switches,
          const std::vector<std::string>& valued) {
    auto listed = [](const std::vector<std::string>& list, const std::string& name) {
      return std::find(list.begin(), list.end(), name) != list.end();
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
      const std::string name = a.substr(2);
      if (listed(switches, name)) {
        values_.insert_or_assign(name, std::string(1, '1'));
      } else if (listed(valued, name)) {
        if (i + 1 >= args.size()) throw std::invalid_argument("--" + name + " needs a value");
        values_.insert_or_assign(name, args[++i]);
      } else {
        throw std::invalid_argument("unknown option --" + name);
      }
    }
  }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string get(const std::string& name, const std::string& fallback = {}) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  long long number(const std::string& name, long long fallback) const {
    return has(name) ? std::stoll(get(name)) : fallback;
  }
  double real(const std::string& name, double fallback) const {
    return has(name) ? std::stod(get(name)) : fallback;
  }

 private:
  std::map<std::string, std::string> values_;
};

// ---- statistics -----------------------------------------------------------------------------

/// Median, minimum and maximum of a set of times (milliseconds).
struct stats {
  double median = NAN;
  double min = NAN;
  double max = NAN;
  int count = 0;
  /// A hold of the stream ran out before the host had queued every run (see timing.hpp): the
  /// figures may include host time.
  bool hold_expired = false;
};

inline stats summarize(std::vector<double> ms) {
  stats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  s.median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  s.min = ms.front();
  s.max = ms.back();
  s.count = static_cast<int>(n);
  return s;
}

inline double geomean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double log_sum = 0;
  for (double x : v)
    log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(v.size()));
}

// ---- CSV ------------------------------------------------------------------------------------

/// One CSV field: quoted when it holds a comma, quote or newline.
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

/// A number in a CSV cell: empty for NaN (not measured), else %.6g.
inline std::string cell(double v) {
  if (std::isnan(v)) return {};
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// Writes rows to a CSV file as they come, so a run cut short keeps what it measured.
class csv_writer {
 public:
  csv_writer(const std::string& path, const std::vector<std::string>& columns)
      : columns_(columns.size()) {
    if (path.empty()) return;
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) throw std::runtime_error("cannot write " + path);
    write(columns);
  }
  ~csv_writer() {
    if (file_) std::fclose(file_);
  }
  csv_writer(const csv_writer&) = delete;
  csv_writer& operator=(const csv_writer&) = delete;

  void write(const std::vector<std::string>& row) {
    if (!file_) return;
    if (row.size() != columns_) throw std::logic_error("csv row has the wrong number of cells");
    for (std::size_t i = 0; i < row.size(); ++i)
      std::fprintf(file_, "%s%s", i ? "," : "", csv_field(row[i]).c_str());
    std::fprintf(file_, "\n");
    std::fflush(file_);
  }

 private:
  std::size_t columns_;
  std::FILE* file_ = nullptr;
};

/// The device line every report starts with.
inline std::string device_line() {
  const device_properties& p = default_context().properties();
  int driver = 0;
  int runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  int cusparse_version = 0;
  cusparseGetProperty(MAJOR_VERSION, &cusparse_version);
  int cusparse_minor = 0;
  cusparseGetProperty(MINOR_VERSION, &cusparse_minor);
  char text[512];
  std::snprintf(text, sizeof text,
                "%s (sm_%d%d), %d SMs, %.1f GiB, L2 %.0f MiB; driver %d.%d, runtime %d.%d, "
                "cuSPARSE %d.%d",
                p.name.c_str(), p.compute_major, p.compute_minor, p.sm_count,
                static_cast<double>(p.global_memory_bytes) / (1024.0 * 1024 * 1024),
                static_cast<double>(p.l2_cache_bytes) / (1024.0 * 1024), driver / 1000,
                driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, cusparse_version,
                cusparse_minor);
  return text;
}

}  // namespace spade::bench
