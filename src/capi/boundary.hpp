// The C boundary: runs C++ inside a noexcept wrapper that turns every exception into a status
// code plus a thread-local message. The only place in the library that knows status numbers.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "common/errors.hpp"
#include "gtstorage/gtstorage.h"

namespace gts::capi {

/// Records @p message as this thread's last error and returns @p status.
int set_error(int status, const char* message) noexcept;
/// Clears this thread's last error (after a successful call).
void clear_error() noexcept;
int status_of(error_kind kind) noexcept;

template <class F>
int guarded(F&& body) noexcept {
  try {
    body();
    clear_error();
    return GTSTORAGE_OK;
  } catch (const gts::error& e) {
    return set_error(status_of(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return set_error(GTSTORAGE_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return set_error(GTSTORAGE_ERROR_INTERNAL,
                     (std::string("internal error: ") + e.what()).c_str());
  } catch (...) {
    return set_error(GTSTORAGE_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace gts::capi
