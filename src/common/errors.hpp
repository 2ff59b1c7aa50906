// Internal error model. Inside the library failures are C++ exceptions of one type carrying an
// error_kind; only src/capi translates kinds into the public status codes, so no other layer
// depends on the ABI's numbering.
#pragma once

#include <stdexcept>
#include <string>

namespace gts {

enum class error_kind {
  invalid_argument,
  invalid_handle,
  out_of_memory,
  overflow,
  no_such_buffer,
  no_device,
  device,
  unknown_preset,
  shape_mismatch,
  sync_conflict,
  readonly,
  unsupported,
  buffer_too_small,
  driver_too_old,
  communication,  ///< Between processes (libgtstorage_mpi): an MPI call or another rank failed.
  python,         ///< Python code (libgtstorage_python) raised, or the interpreter is unusable.
  internal,
};

class error : public std::runtime_error {
 public:
  error(error_kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  [[nodiscard]] error_kind kind() const noexcept { return kind_; }

 private:
  error_kind kind_;
};

[[noreturn]] inline void fail(error_kind kind, const std::string& message) {
  throw error(kind, message);
}

/// Throws invalid_argument naming the parameter: "<param>: <what>".
[[noreturn]] inline void fail_arg(const std::string& param, const std::string& what) {
  throw error(error_kind::invalid_argument, param + ": " + what);
}

}  // namespace gts
