#include "mpi/halo_regions.hpp"

namespace gts::mpi {

std::vector<direction> directions(int ndim, bool faces_only) {
  std::vector<direction> out;
  int total = 1;
  for (int k = 0; k < ndim; ++k) total *= 3;
  for (int index = 0; index < total; ++index) {
    direction d;
    d.index = index;
    int nonzero = 0;
    for (int k = 0, rest = index; k < ndim; ++k, rest /= 3) {
      d.offset[k] = rest % 3 - 1;
      nonzero += d.offset[k] != 0 ? 1 : 0;
    }
    if (nonzero == 0 || (faces_only && nonzero != 1)) continue;
    out.push_back(d);
  }
  return out;
}

int opposite_index(const direction& d, int ndim) {
  int index = 0;
  for (int k = ndim - 1; k >= 0; --k) index = index * 3 + (1 - d.offset[k]);
  return index;
}

std::string direction_name(const direction& d, int ndim, const char* labels) {
  std::string name;
  for (int k = 0; k < ndim; ++k) {
    if (d.offset[k] != 0) name += std::string(d.offset[k] > 0 ? "+" : "-") + labels[k];
  }
  return name;
}

int64_t region::count() const {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= extent[d];
  return n;
}

int64_t field_geometry::interior(int k) const {
  const int a = axis[k];
  return shape[a] - halo[a][0] - halo[a][1];
}

namespace {

region whole(const field_geometry& f) {
  region r;
  r.ndim = f.ndim;
  for (int d = 0; d < f.ndim; ++d) r.extent[d] = f.shape[d];
  return r;
}

// The block of direction @p d: along an axis where d does not move, the interior; towards the
// upper neighbour (offset 1), @p send: the last interior layers, which fill its lower halo (as
// wide as ours); else our upper halo, which it fills. Towards the lower neighbour, the mirror.
region exchange_region(const field_geometry& f, const direction& d, int ndim, bool send) {
  region r = whole(f);
  for (int k = 0; k < ndim; ++k) {
    const int a = f.axis[k];
    const int64_t lo = f.halo[a][0], n = f.interior(k);
    const int64_t below = f.width[k][0], above = f.width[k][1];
    switch (d.offset[k]) {
      case 0:
        r.start[a] = lo, r.extent[a] = n;
        break;
      case 1:
        r.start[a] = send ? lo + n - below : lo + n, r.extent[a] = send ? below : above;
        break;
      default:
        r.start[a] = send ? lo : lo - below, r.extent[a] = send ? above : below;
        break;
    }
  }
  return r;
}

}  // namespace

region send_region(const field_geometry& f, const direction& d, int ndim) {
  return exchange_region(f, d, ndim, true);
}

region recv_region(const field_geometry& f, const direction& d, int ndim) {
  return exchange_region(f, d, ndim, false);
}

}  // namespace gts::mpi
