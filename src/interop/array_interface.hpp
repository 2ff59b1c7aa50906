// The array descriptor of a storage view: what NumPy's __array_interface__, the CUDA Array
// Interface and the Fortran shim are built from. Interop fills the geometry, memory and layout
// fields; the enum-valued fields (side, sync state) are the C boundary's to translate, so this
// layer never sees the public header: @p Out is gtstorage_interface_info, named by src/capi.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "storage/storage.hpp"

namespace gts::interop {

/// Throws no_such_buffer: "side: the storage has no host buffer (it is device-only)".
[[noreturn]] void fail_no_buffer(const storage& s, side sd);

// Hot path (a few ns budget). ndim is small (typically 3): without __restrict the compiler
// versions the loop on run-time alias checks between *out and the storage, and vectorized it
// needs remainder loops; both cost more than the copies themselves. The caller's struct never
// overlaps the library's own.
template <class Out>
__attribute__((optimize("no-tree-vectorize"))) inline void describe(const storage& __restrict s,
                                                                    side sd, Out* __restrict out) {
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
    static_assert(sizeof out->dims[d] == sizeof s.dims[d], "dims label size");
    std::memcpy(out->dims[d], s.dims[d].data(), sizeof out->dims[d]);
  }
  static_assert(sizeof out->typestr == sizeof s.typestr, "typestr size");
  std::memcpy(out->typestr, s.typestr.data(), sizeof out->typestr);
  out->itemsize = s.type.itemsize;
  out->nbytes = s.nbytes;
  out->allocation = b.base;
  out->allocation_bytes = b.bytes;
  out->byte_offset = s.data[k] - b.base;
  out->readonly = s.readonly ? 1 : 0;
  out->device_type = b.dl_device_type;
  out->device_id = b.dl_device_id;
  out->is_c_contiguous = s.c_contiguous[k] ? 1 : 0;
  out->stream = s.stream;
}

/// The sync state a descriptor reports: the buffers' state for a mirrored pair, else clean.
inline sync_state reported_sync_state(const storage& s) {
  return s.buffers->mirrored() ? s.buffers->state() : sync_state::clean;
}

}  // namespace gts::interop
