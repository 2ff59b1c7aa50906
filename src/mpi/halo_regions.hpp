// Which points of a field a halo exchange sends and receives, per neighbouring direction: pure
// geometry over a field's shape, halo and labels (no MPI, no storage). tests/mpi checks every
// point it describes against the global field (1-D, 2-D and 3-D grids, asymmetric halos and
// widths, faces only and with corners).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi/decomposition.hpp"

namespace gts::mpi {

inline constexpr int max_field_ndim = 16;

/// A direction to a neighbour: an offset in -1 … 1 per decomposed dim (not all 0).
struct direction {
  std::array<int, max_dims> offset{};
  int index = 0;  ///< sum over k of (offset[k] + 1) * 3^k: a tag, unique per direction.
};

/// Every direction of an @p ndim-dim grid (3^ndim - 1; only the 2 * ndim faces when
/// @p faces_only), in index order.
std::vector<direction> directions(int ndim, bool faces_only);
/// The index of the direction opposite to @p d.
int opposite_index(const direction& d, int ndim);
/// "+I-J"-style name of a direction, for messages.
std::string direction_name(const direction& d, int ndim, const char* labels);

/// A box of a field: per field dim, the first index and the extent.
struct region {
  int ndim = 0;
  std::array<int64_t, max_field_ndim> start{}, extent{};
  [[nodiscard]] int64_t count() const;  ///< Number of points (0 if any extent is 0).
};

/// What the geometry needs of one field (its labels mapped to the decomposed dims).
struct field_geometry {
  int ndim = 0;
  std::array<int64_t, max_field_ndim> shape{};
  std::array<std::array<int64_t, 2>, max_field_ndim> halo{};
  std::array<int, max_dims> axis{};                      ///< Field dim of each decomposed dim.
  std::array<std::array<int64_t, 2>, max_dims> width{};  ///< (lower, upper) exchanged per dim.
  [[nodiscard]] int64_t interior(int k) const;  ///< Interior extent along decomposed dim k.
};

/// The points this process sends to its neighbour in direction @p d: along a decomposed dim,
/// the interior (offset 0) or the interior points next to the face (offset ±1: as many as the
/// neighbour's halo on that side takes); along any other dim, everything.
region send_region(const field_geometry& f, const direction& d, int ndim);
/// The halo points the neighbour in direction @p d fills: along a decomposed dim, the interior
/// (offset 0) or the halo on that side (offset ±1, the exchanged width).
region recv_region(const field_geometry& f, const direction& d, int ndim);

}  // namespace gts::mpi
