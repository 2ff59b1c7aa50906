#include "capi/interface.hpp"

#include <cstring>
#include <string>

#include "common/errors.hpp"

namespace gts::capi {

void fail_no_buffer(const storage& s, side sd) {
  const bool host = sd == side::host;
  fail(error_kind::no_such_buffer, std::string("side: the storage has no ") +
                                       (host ? "host" : "device") + " buffer (it is " +
                                       (s.has(side::host) ? "host-only" : "device-only") + ")");
}

// Hot path (a few ns budget). ndim is small (typically 3): without __restrict the compiler
// versions the loop on run-time alias checks between *out and the storage, and vectorized it
// needs remainder loops; both cost more than the copies themselves. The caller's struct never
// overlaps the library's own.
__attribute__((optimize("no-tree-vectorize"))) void fill_interface(
    const storage& __restrict s, side sd, gtstorage_interface_info* __restrict out) {
  if (!s.has(sd)) fail_no_buffer(s, sd);
  const int k = static_cast<int>(sd);
  const side_buffer& b = s.buffers->get(sd);
  const int n = s.ndim;
  out->ndim = static_cast<uint32_t>(n);
  out->data = s.data[k];
  for (int d = 0; d < n; ++d) {
    out->shape[d] = s.shape[d];
    out->strides[d] = s.strides[k][d];
    out->layout[d] = s.layouts[k][d];
    out->halo[d][0] = s.halo[d][0];
    out->halo[d][1] = s.halo[d][1];
    out->origin[d] = s.halo[d][0];
    out->aligned_index[d] = s.aligned_index[d];
    std::memcpy(out->dims[d], s.dims[d].data(), GTSTORAGE_DIM_LABEL_SIZE);
  }
  std::memcpy(out->typestr, s.typestr.data(), GTSTORAGE_TYPESTR_SIZE);
  out->itemsize = s.type.itemsize;
  out->nbytes = s.nbytes;
  out->allocation = b.base;
  out->allocation_bytes = b.bytes;
  out->byte_offset = s.data[k] - b.base;
  out->readonly = s.readonly ? 1 : 0;
  out->device_type = b.dl_device_type;
  out->device_id = b.dl_device_id;
  out->side = static_cast<int32_t>(sd);
  out->sync_state =
      static_cast<int32_t>(s.buffers->mirrored() ? s.buffers->state() : sync_state::clean);
  out->is_c_contiguous = s.c_contiguous[k] ? 1 : 0;
  out->stream = s.stream;
}

}  // namespace gts::capi
