// The C boundary of the libraries built on libgtstorage's C ABI (libgtstorage_mpi,
// libgtstorage_python), header-only: an exception becomes a status plus the thread-local message
// of libgtstorage, recorded through the public gtstorage_set_error(), so that callers read one
// error channel whichever library failed.
#pragma once

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "capi/boundary.hpp"  // status_of and the struct-size contract (header-only parts)
#include "common/errors.hpp"

namespace gts::component {

/// A failure of a libgtstorage call made on the caller's behalf: its public status and message
/// pass through unchanged (prefixed with what was being done).
class status_error : public std::runtime_error {
 public:
  status_error(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  [[nodiscard]] int status() const noexcept { return status_; }

 private:
  int status_;
};

/// Runs @p body; returns GTSTORAGE_OK, or the status of what it threw with its message recorded.
template <class F>
int guarded(F&& body) noexcept {
  try {
    body();
    return gtstorage_set_error(GTSTORAGE_OK, nullptr);
  } catch (const status_error& e) {
    return gtstorage_set_error(e.status(), e.what());
  } catch (...) {
    return gts::capi::record_current_exception(gtstorage_set_error);
  }
}

/// Throws the error of a failed gtstorage call (its status and message), prefixed by @p context.
[[noreturn]] inline void fail_gtstorage(int status, const std::string& context) {
  const char* message = gtstorage_last_error();
  throw status_error(status, context + ": " +
                                 (message != nullptr && *message != '\0'
                                      ? std::string(message)
                                      : std::string(gtstorage_status_name(status))));
}

/// Calls a gtstorage function and rethrows its failure (status and message) with @p context.
inline void check_gts(int status, const std::string& context) {
  if (__builtin_expect(status != GTSTORAGE_OK, 0)) fail_gtstorage(status, context);
}

}  // namespace gts::component
