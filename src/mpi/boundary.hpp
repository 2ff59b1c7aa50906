// The C boundary of libgtstorage_mpi: exceptions become a status plus the thread-local message
// of libgtstorage (recorded through gtstorage_set_error(), so callers read one error channel),
// and MPI return codes become gts::error(communication) naming the MPI function.
#pragma once

#include <mpi.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "capi/boundary.hpp"  // status_of and the struct-size contract (header-only parts)
#include "common/errors.hpp"
#include "gtstorage/gtstorage_mpi.h"

namespace gts::mpi {

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

template <class F>
int guarded(F&& body) noexcept {
  try {
    body();
    return gtstorage_set_error(GTSTORAGE_OK, nullptr);
  } catch (const status_error& e) {
    return gtstorage_set_error(e.status(), e.what());
  } catch (const gts::error& e) {
    return gtstorage_set_error(gts::capi::status_of(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return gtstorage_set_error(GTSTORAGE_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return gtstorage_set_error(GTSTORAGE_ERROR_INTERNAL,
                               (std::string("internal error: ") + e.what()).c_str());
  } catch (...) {
    return gtstorage_set_error(GTSTORAGE_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

/// "MPI_Isend: <MPI's error string>" for a return code other than MPI_SUCCESS.
std::string mpi_error_text(const char* function, int rc);

/// Throws error_kind::communication naming @p function when @p rc is not MPI_SUCCESS.
inline void check_mpi(int rc, const char* function) {
  if (__builtin_expect(rc != MPI_SUCCESS, 0))
    fail(error_kind::communication, mpi_error_text(function, rc));
}

/// Throws the error of a failed gtstorage call (its status and message), prefixed by @p context.
[[noreturn]] void fail_gtstorage(int status, const std::string& context);

/// Calls a gtstorage function and rethrows its failure (status and message) with @p context.
inline void check_gts(int status, const std::string& context) {
  if (__builtin_expect(status != GTSTORAGE_OK, 0)) fail_gtstorage(status, context);
}

/// MPI is initialized and not finalized (else error_kind::communication saying which).
void require_mpi(const char* function);

}  // namespace gts::mpi
