#include "mpi/boundary.hpp"

namespace gts::mpi {

std::string mpi_error_text(const char* function, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS || length <= 0) {
    return std::string(function) + ": MPI error " + std::to_string(rc);
  }
  return std::string(function) + ": " + std::string(text, static_cast<std::size_t>(length));
}

void require_mpi(const char* function) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    fail(error_kind::communication, std::string(function) + ": MPI is already finalized");
  }
  if (!initialized) {
    fail(error_kind::communication,
         std::string(function) + ": MPI is not initialized (call MPI_Init first)");
  }
}

}  // namespace gts::mpi
