// Collective calls fail together: after each collective step every process learns whether any
// process failed, so none is left waiting in a later step for one that has already returned.
#pragma once

#include <mpi.h>

#include <exception>

namespace gts::mpi {

/// Collective over @p comm. Returns when no process passed a failure. Otherwise a process that
/// failed rethrows its own @p local error, and every other one throws error_kind::communication
/// naming the lowest failed rank and that rank's message.
void agree(MPI_Comm comm, const std::exception_ptr& local, const char* function);

}  // namespace gts::mpi
