#include "mpi/agreement.hpp"

#include <cstring>
#include <string>

#include "mpi/boundary.hpp"

namespace gts::mpi {

void agree(MPI_Comm comm, const std::exception_ptr& local, const char* function) {
  int rank = 0, size = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  int mine = local ? rank : size, first = size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (first == size) return;
  char message[1024] = "";
  if (rank == first) {
    try {
      std::rethrow_exception(local);
    } catch (const std::exception& e) {
      std::strncpy(message, e.what(), sizeof message - 1);
    } catch (...) {
      std::strncpy(message, "unknown error", sizeof message - 1);
    }
  }
  check_mpi(MPI_Bcast(message, sizeof message, MPI_CHAR, first, comm), "MPI_Bcast");
  if (local) std::rethrow_exception(local);
  message[sizeof message - 1] = '\0';
  fail(error_kind::communication,
       std::string(function) + ": failed on rank " + std::to_string(first) + ": " + message);
}

}  // namespace gts::mpi
