// Matrix Market file access: whole-file input (plain or gzip by magic bytes), buffered output.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "spade/core/error.hpp"

namespace spade::detail::mm {

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using file_handle = std::unique_ptr<std::FILE, file_closer>;

struct gz_closer {
  void operator()(gzFile f) const noexcept { gzclose(f); }
};
using gz_handle = std::unique_ptr<std::remove_pointer_t<gzFile>, gz_closer>;

inline std::string errno_text() {
  return std::strerror(errno);
}

// gzip's trailer stores the uncompressed size modulo 2^32; it is only a hint (the stream may
// be corrupt, concatenated or over 4 GiB), so it is capped by deflate's best ratio (~1032:1)
// lest a forged trailer make a tiny file reserve gigabytes.
inline std::size_t gzip_size_hint(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return 0;
  const long compressed = std::ftell(f);
  if (compressed < 18 || std::fseek(f, -4, SEEK_END) != 0) return 0;
  unsigned char trailer[4];
  if (std::fread(trailer, 1, 4, f) != 4) return 0;
  const std::size_t isize = std::size_t{trailer[0]} | std::size_t{trailer[1]} << 8 |
                            std::size_t{trailer[2]} << 16 | std::size_t{trailer[3]} << 24;
  return std::min(isize, static_cast<std::size_t>(compressed) * 1032 + 4096);
}

inline std::string read_gzip(const std::string& name, std::size_t hint) {
  gz_handle gz(gzopen(name.c_str(), "rb"));
  if (!gz) throw io_error(name, 0, "cannot open: " + errno_text());
  gzbuffer(gz.get(), 1 << 17);
  std::string text(std::max<std::size_t>(hint + 1, 1 << 16), '\0');
  std::size_t size = 0;
  for (;;) {
    if (size == text.size()) text.resize(text.size() * 2);
    const auto want = static_cast<unsigned>(std::min<std::size_t>(text.size() - size, INT_MAX));
    const int got = gzread(gz.get(), text.data() + size, want);
    if (got <= 0) break;
    size += static_cast<std::size_t>(got);
  }
  int code = Z_OK;
  const char* message = gzerror(gz.get(), &code);
  if (code == Z_BUF_ERROR)
    throw io_error(name, 0, "truncated gzip stream (unexpected end of file)");
  if (code != Z_OK) {
    std::string_view text_of_zlib(message ? message : "zlib error");
    const std::string prefix = name + ": ";  // gzerror names the file; io_error does already
    if (text_of_zlib.starts_with(prefix)) text_of_zlib.remove_prefix(prefix.size());
    throw io_error(name, 0, "corrupt gzip stream: " + std::string(text_of_zlib));
  }
  text.resize(size);
  return text;
}

/// The whole content of `path`, decompressed when it starts with the gzip magic bytes.
/// Throws io_error (line 0) when the file cannot be opened or read, or the gzip stream is
/// corrupt or truncated.
inline std::string read_file_text(const std::filesystem::path& path) {
  const std::string name = path.string();
  file_handle file(std::fopen(name.c_str(), "rb"));
  if (!file) throw io_error(name, 0, "cannot open: " + errno_text());
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, file.get());
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    const std::size_t hint = gzip_size_hint(file.get());
    file.reset();
    return read_gzip(name, hint);
  }
  std::string text(reinterpret_cast<const char*>(magic), got);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  // One byte more than the file, so the first read already meets the end of file.
  text.resize(std::max<std::size_t>(ec ? 0 : static_cast<std::size_t>(size) + 1, 1 << 16));
  std::size_t filled = got;
  while (!std::ferror(file.get()) && !std::feof(file.get())) {
    if (filled == text.size()) text.resize(text.size() * 2);
    filled += std::fread(text.data() + filled, 1, text.size() - filled, file.get());
  }
  if (std::ferror(file.get())) throw io_error(name, 0, "cannot read: " + errno_text());
  text.resize(filled);
  return text;
}

/// Buffered writer to a plain file, or a gzip stream when the name ends in ".gz". Errors
/// throw io_error(file, 0, ...); close() must be called to learn whether the data reached disk.
class output_file {
 public:
  explicit output_file(const std::filesystem::path& path) : name_(path.string()) {
    gzip_ = path.extension() == ".gz";
    if (gzip_) {
      gz_.reset(gzopen(name_.c_str(), "wb"));
      if (!gz_) throw io_error(name_, 0, "cannot open for writing: " + errno_text());
      gzbuffer(gz_.get(), 1 << 17);
    } else {
      file_.reset(std::fopen(name_.c_str(), "wb"));
      if (!file_) throw io_error(name_, 0, "cannot open for writing: " + errno_text());
    }
  }

  void write(std::string_view text) {
    while (!text.empty()) {
      const std::size_t n = std::min(text.size(), capacity / 2);
      char* out = reserve(n);
      std::memcpy(out, text.data(), n);
      commit(out + n);
      text.remove_prefix(n);
    }
  }
  /// Room for `n` (at most half a MiB) more characters; commit() the end of what was used.
  char* reserve(std::size_t n) {
    if (used_ + n > capacity) flush();
    return buffer_.get() + used_;
  }
  void commit(char* end) { used_ = static_cast<std::size_t>(end - buffer_.get()); }

  void close() {
    flush();
    if (gzip_) {
      const int code = gzclose(gz_.release());
      if (code != Z_OK)
        throw io_error(name_, 0,
                       "cannot finish the gzip stream (zlib error " + std::to_string(code) + ")");
    } else if (std::fclose(file_.release()) != 0) {
      throw io_error(name_, 0, "cannot close: " + errno_text());
    }
  }

 private:
  static constexpr std::size_t capacity = std::size_t{1} << 20;

  void flush() {
    if (used_ == 0) return;
    if (gzip_) {
      if (gzwrite(gz_.get(), buffer_.get(), static_cast<unsigned>(used_)) == 0) {
        int code = Z_OK;
        throw io_error(name_, 0, std::string("cannot write: ") + gzerror(gz_.get(), &code));
      }
    } else if (std::fwrite(buffer_.get(), 1, used_, file_.get()) != used_) {
      throw io_error(name_, 0, "cannot write: " + errno_text());
    }
    used_ = 0;
  }

  std::string name_;
  bool gzip_ = false;
  file_handle file_;
  gz_handle gz_;
  std::unique_ptr<char[]> buffer_ = std::make_unique<char[]>(capacity);
  std::size_t used_ = 0;
};

}  // namespace spade::detail::mm
