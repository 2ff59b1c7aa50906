// The C boundary of libgtstorage_mpi: exceptions become a status plus the thread-local message
// of libgtstorage (recorded through gtstorage_set_error(), so callers read one error channel),
// and MPI return codes become gts::error(communication) naming the MPI function.
#pragma once

#include <mpi.h>

#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "capi/component_boundary.hpp"  // guarded, status_error, check_gts (header-only)
#include "common/errors.hpp"
#include "gtstorage/gtstorage_mpi.h"

namespace gts::mpi {

using component::check_gts;
using component::fail_gtstorage;
using component::guarded;
using component::status_error;

/// "MPI_Isend: <MPI's error string>" for a return code other than MPI_SUCCESS.
std::string mpi_error_text(const char* function, int rc);

/// Throws error_kind::communication naming @p function when @p rc is not MPI_SUCCESS.
inline void check_mpi(int rc, const char* function) {
  if (__builtin_expect(rc != MPI_SUCCESS, 0))
    fail(error_kind::communication, mpi_error_text(function, rc));
}

/// MPI is initialized and not finalized (else error_kind::communication saying which).
void require_mpi(const char* function);

}  // namespace gts::mpi
