// A Cartesian grid of processes over up to three labelled dims (I, J, K) of a global domain:
// the grid's own communicator (a duplicate of the caller's, MPI_ERRORS_RETURN), coordinates,
// neighbours in every direction (diagonals included) and the block split of global extents.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>

namespace gts::mpi {

inline constexpr int max_dims = 3;

/// What gtstorage_decomp_create() was asked for (the C boundary has read the options struct).
struct decomp_request {
  int64_t comm = 0;            ///< Fortran handle.
  int ndim = 0;                ///< 1 … max_dims.
  const char* dims = nullptr;  ///< Labels; NULL = "IJK"[:ndim].
  const int32_t* proc_dims = nullptr;
  const int32_t* periodic = nullptr;
  bool reorder = false;
  /// A failure the C boundary found in this process's arguments: reported collectively, like
  /// the ones create() finds (this process still takes part).
  std::exception_ptr failed;
};

class decomposition {
 public:
  /// Collective over the request's communicator (see gtstorage_decomp_create()).
  static std::shared_ptr<decomposition> create(const decomp_request& req);
  ~decomposition();
  decomposition(const decomposition&) = delete;
  decomposition& operator=(const decomposition&) = delete;

  [[nodiscard]] MPI_Comm comm() const { return comm_; }
  [[nodiscard]] int ndim() const { return ndim_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] char label(int k) const { return labels_[k]; }
  [[nodiscard]] int proc_dims(int k) const { return proc_dims_[k]; }
  [[nodiscard]] bool periodic(int k) const { return periodic_[k] != 0; }
  [[nodiscard]] int coord(int k) const { return coords_[k]; }

  /// Rank of the process at @p offset (ndim entries in -1 … 1) from this one; MPI_PROC_NULL
  /// past the edge of a dim that is not periodic.
  [[nodiscard]] int neighbor(const int* offset) const;
  /// Coordinates of @p rank in the grid.
  void coords_of(int rank, int* out) const;
  /// First global index and extent of the block of @p rank (-1 = this one) for @p global.
  void local_extent(int rank, const int64_t* global, int64_t* offset, int64_t* extent) const;

  /// A collective operation on comm() was abandoned at its deadline (some process never joined
  /// it): the communicator is never used for a collective call again, nor freed.
  void mark_abandoned() { abandoned_.store(true); }
  [[nodiscard]] bool abandoned() const { return abandoned_.load(); }

 private:
  decomposition() = default;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int ndim_ = 0, rank_ = 0, size_ = 1;
  std::array<char, max_dims> labels_{};
  std::array<int, max_dims> proc_dims_{}, periodic_{}, coords_{};
  std::atomic<bool> abandoned_{false};
};

/// The labels of @p dims ("IJ", "I,J,K"; NULL = "IJK"[:ndim]) into @p out; throws naming "dims".
void parse_labels(const char* dims, int ndim, char* out);

}  // namespace gts::mpi
