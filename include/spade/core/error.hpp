// The spade::error exception family: every run-time failure a user can see.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace spade {

/// Base of every exception Spade throws; catch this to catch them all.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Operand shapes do not fit the operation (message carries both shapes).
class dimension_mismatch : public error {
 public:
  using error::error;
};

/// A matrix's invariants are broken: sizes, row pointers, out-of-range or unsorted indices.
class invalid_matrix : public error {
 public:
  using error::error;
};

/// Reading or writing a file failed; carries the file and the 1-based line (0 = whole file).
class io_error : public error {
 public:
  io_error(std::string file, std::size_t line, const std::string& what)
      : error(file + (line ? ":" + std::to_string(line) : std::string()) + ": " + what),
        file_(std::move(file)),
        line_(line) {}
  const std::string& file() const noexcept { return file_; }
  std::size_t line() const noexcept { return line_; }

 private:
  std::string file_;
  std::size_t line_;
};

/// A CUDA runtime or library call failed; the message names the call and what Spade was doing.
class cuda_error : public error {
 public:
  using error::error;
};

/// Device (or host) memory could not be allocated for the named request.
class out_of_memory : public error {
 public:
  using error::error;
};

/// A gpu type was used where no usable CUDA device is present; carries the CUDA error text.
class no_device : public error {
 public:
  using error::error;
};

}  // namespace spade
