#include "capi/interface.hpp"

#include <cstring>
#include <string>

#include "common/errors.hpp"
#include "layout/layout_map.hpp"

namespace gts::capi {

void fail_no_buffer(const storage& s, side sd) {
  const bool host = sd == side::host;
  fail(error_kind::no_such_buffer,
       std::string("side: the storage has no ") + (host ? "host" : "device") + " buffer (it is " +
           (s.has(side::host) ? "host-only" : "device-only") + ")");
}

void fill_interface(const storage& s, side sd, gtstorage_interface_info* out) {
  if (!s.has(sd)) fail_no_buffer(s, sd);
  const int k = static_cast<int>(sd);
  const side_buffer& b = s.buffers->get(sd);
  const int n = s.ndim;
  out->ndim = static_cast<uint32_t>(n);
  out->data = s.data[k];
  const int64_t itemsize = s.type.itemsize;
  int64_t count = 1;
  int64_t expected = itemsize;
  bool c_contiguous = true;
  for (int d = n - 1; d >= 0; --d) {
    const int64_t extent = s.shape[d];
    const int64_t stride = s.strides[k][d];
    out->shape[d] = extent;
    out->strides[d] = stride;
    out->halo[d][0] = s.halo[d][0];
    out->halo[d][1] = s.halo[d][1];
    out->origin[d] = s.halo[d][0];
    out->aligned_index[d] = s.aligned_index[d];
    std::memcpy(out->dims[d], s.dims[d].data(), GTSTORAGE_DIM_LABEL_SIZE);
    if (extent != 1 && stride != expected) c_contiguous = false;
    expected *= extent;
    count *= extent;
  }
  const layout_map layout = layout_from_strides(s.strides[k].data(), n);
  std::memcpy(out->layout, layout.data(), sizeof(int32_t) * static_cast<size_t>(n));
  // typestr: built by hand, this is a hot path (no std::string).
  char* t = out->typestr;
  *t++ = itemsize == 1 ? '|' : '<';
  *t++ = s.type.kind;
  if (itemsize >= 10) *t++ = static_cast<char>('0' + itemsize / 10);
  *t++ = static_cast<char>('0' + itemsize % 10);
  *t = '\0';
  out->itemsize = itemsize;
  out->nbytes = count * itemsize;
  out->allocation = b.base;
  out->allocation_bytes = b.bytes;
  out->byte_offset = s.data[k] - b.base;
  out->readonly = s.readonly ? 1 : 0;
  out->device_type = b.dl_device_type;
  out->device_id = b.dl_device_id;
  out->side = static_cast<int32_t>(sd);
  out->sync_state = static_cast<int32_t>(s.buffers->mirrored() ? s.buffers->state() : sync_state::clean);
  out->is_c_contiguous = c_contiguous || count == 0 ? 1 : 0;
  out->stream = s.stream;
}

}  // namespace gts::capi
