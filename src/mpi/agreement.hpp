// Collective calls fail together: after each collective step every process learns whether any
// process failed, so none is left waiting in a later step for one that has already returned.
//
// Every step is a nonblocking collective polled until a deadline (GTSTORAGE_MPI_AGREE_TIMEOUT),
// so a process that cannot take part at all (an invalid communicator or decomposition handle)
// becomes an error on the others instead of a hang. A collective operation cannot be cancelled
// (the MPI standard, "Nonblocking Collective Operations": MPI_Cancel and MPI_Request_free are
// erroneous on its request): after the deadline it stays pending on its communicator, so its
// buffers and output handle are kept until the process exits, and that communicator must never
// be used for a collective operation again (the library leaks its own instead of freeing them).
#pragma once

#include <mpi.h>

#include <exception>
#include <string>
#include <vector>

#include "common/errors.hpp"

namespace gts::mpi {

/// The environment variable of the deadline, in seconds.
inline constexpr const char* timeout_variable = "GTSTORAGE_MPI_AGREE_TIMEOUT";
/// The deadline without the variable.
inline constexpr double default_timeout_seconds = 60;

/// How long a process waits in one collective step for the others.
struct deadline {
  double seconds = default_timeout_seconds;  ///< 0: no deadline (wait as long as it takes).
  /// A bad value of the variable (seconds is then the default): a failure of this process
  /// that the call reports collectively, like a bad argument.
  std::exception_ptr error;

  /// GTSTORAGE_MPI_AGREE_TIMEOUT: a decimal number of seconds >= 0; unset or empty = default.
  static deadline from_environment();
};

/// A deadline passed: some process never joined a collective operation, which was left pending
/// on its communicator (error_kind::communication).
class abandoned_error : public error {
 public:
  explicit abandoned_error(const std::string& message)
      : error(error_kind::communication, message) {}
};

/// MPI_Comm_idup of @p comm, waited for until the deadline (abandoned_error after it, naming
/// @p left: the communicator that keeps the pending operation). The copy has MPI_ERRORS_RETURN.
MPI_Comm duplicate(MPI_Comm comm, const deadline& limit, const char* function, const char* left);

/// An argument of a collective call that every process must pass with the same value.
struct same_value {
  std::string name;  ///< The parameter, as the message names it ("ndim", "proc_dims[1]").
  int value = 0;     ///< Meaningful only where the process found no failure of its own.
  std::string (*show)(int) = nullptr;  ///< How a value is written (default: the number).
};

/// Collective over @p comm. Returns when no process passed a failure and every entry of @p same
/// is equal on every process (all of them must pass the same names, in the same order).
/// Otherwise a process that failed rethrows its own @p local error, and every other one throws
/// error_kind::communication naming the lowest failed rank and that rank's message; when none
/// failed but values differ, every process throws the same error_kind::invalid_argument naming
/// the first parameter that differs, two of its values and ranks that passed them. Each step
/// waits at most @p limit (abandoned_error after it: @p comm keeps the pending operation).
void agree(MPI_Comm comm, const std::exception_ptr& local, const char* function,
           const deadline& limit, const std::vector<same_value>& same = {});

/// Minimum of @p value over @p comm (a collective step with the deadline, as agree()).
int minimum(MPI_Comm comm, int value, const char* function, const deadline& limit);

}  // namespace gts::mpi
