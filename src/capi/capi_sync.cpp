// The sync entry points of the C API: the verbs (gtstorage_sync_to, _modify, _need_sync,
// _mark_synchronized, _wait_stream), the deprecated op numbers of gtstorage_sync(_async),
// acquire and touch mapped onto them, the sync state and the storage's stream.
#include <cstdint>
#include <cstdio>
#include <string>

#include "capi/boundary.hpp"
#include "capi/entry_checks.hpp"
#include "capi/enums.hpp"
#include "device/device_backend.hpp"
#include "device/stream_ordering.hpp"
#include "storage/storage.hpp"

namespace gts::capi {

// A stream argument the backend of @p s knows to be dead (destroyed, or never created) is
// refused before anything is queued on it. Only the emulated device can tell; on a real runtime
// a dead stream stays the caller's error (gtstorage_set_stream()).
void check_stream(const gts::storage& s, uint64_t stream) {
  const gts::device::backend* be = s.buffers->backend;
  if (__builtin_expect(stream != 0 && be != nullptr, 0) &&
      be->ordering().stream_known_dead(stream)) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(stream));
    gts::fail_arg("stream", std::string(text) + " is not a live stream of the '" + be->name() +
                                "' device backend (destroyed, or never created)");
  }
}

}  // namespace gts::capi

using gts::capi::check_out;
using gts::capi::check_side;
using gts::capi::check_stream;
using gts::capi::guarded;
using gts::capi::table;

namespace {

// The arguments every sync verb checks: @p flags (FORCE only) and @p stream (0: the storage's
// own stream, else a stream the backend does not know to be dead).
struct sync_call {
  gts::buffer_set& buffers;
  bool force;
  uint64_t stream;
};
sync_call sync_args(const gts::storage& s, uint32_t flags, uint64_t stream) {
  if ((flags & ~uint32_t(GTSTORAGE_SYNC_FLAG_FORCE)) != 0) {
    gts::fail_arg("flags",
                  std::to_string(flags) + " has bits other than GTSTORAGE_SYNC_FLAG_FORCE");
  }
  check_stream(s, stream);
  return {*s.buffers, (flags & GTSTORAGE_SYNC_FLAG_FORCE) != 0, stream != 0 ? stream : s.stream};
}

// gtstorage_sync(_async)'s op numbers (deprecated) onto the verbs of the buffer set.
void apply_sync_op(const gts::storage& s, int32_t op, uint32_t flags, uint64_t stream, bool wait) {
  const sync_call c = sync_args(s, flags, stream);
  switch (op) {
    case GTSTORAGE_SYNC_HOST_TO_DEVICE:
      return c.buffers.sync_to(gts::side::device, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_DEVICE_TO_HOST:
      return c.buffers.sync_to(gts::side::host, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_SYNCHRONIZE:
      return c.buffers.synchronize(c.stream, wait);
    case GTSTORAGE_SYNC_SET_HOST_MODIFIED:
    case GTSTORAGE_SYNC_TOUCH_HOST:
      return c.buffers.modify(gts::side::host, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_SET_DEVICE_MODIFIED:
    case GTSTORAGE_SYNC_TOUCH_DEVICE:
      return c.buffers.modify(gts::side::device, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_SET_SYNCHRONIZED:
      return c.buffers.mark_synchronized(c.stream, wait);
    case GTSTORAGE_SYNC_ACQUIRE_HOST:
      return c.buffers.acquire(gts::side::host, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_ACQUIRE_DEVICE:
      return c.buffers.acquire(gts::side::device, c.force, c.stream, wait);
    case GTSTORAGE_SYNC_WAIT_STREAM:
      return c.buffers.wait(c.stream);
    default:
      gts::capi::fail_enum("op", op, "a gtstorage_sync_op (1 … 11)");
  }
}

}  // namespace

extern "C" {

int gtstorage_sync(gtstorage_handle handle, int32_t op, uint32_t flags) {
  return guarded([&] { apply_sync_op(table().get(handle), op, flags, 0, true); });
}

int gtstorage_sync_async(gtstorage_handle handle, int32_t op, uint32_t flags, uint64_t stream) {
  return guarded([&] { apply_sync_op(table().get(handle), op, flags, stream, false); });
}

int gtstorage_get_sync_state(gtstorage_handle handle, int32_t* out_state) {
  return guarded([&] {
    check_out(out_state, "out_state");
    *out_state = gts::capi::to_c(table().get(handle).buffers->state());
  });
}

int gtstorage_sync_to(gtstorage_handle handle, int32_t side, uint32_t flags) {
  return guarded([&] {
    check_side(side);
    const sync_call c = sync_args(table().get(handle), flags, 0);
    c.buffers.sync_to(gts::capi::side_of(side), c.force, c.stream, true);
  });
}

int gtstorage_sync_to_async(gtstorage_handle handle, int32_t side, uint32_t flags,
                            uint64_t stream) {
  return guarded([&] {
    check_side(side);
    const sync_call c = sync_args(table().get(handle), flags, stream);
    c.buffers.sync_to(gts::capi::side_of(side), c.force, c.stream, false);
  });
}

int gtstorage_modify(gtstorage_handle handle, int32_t side, uint32_t flags) {
  return guarded([&] {
    check_side(side);
    const sync_call c = sync_args(table().get(handle), flags, 0);
    c.buffers.modify(gts::capi::side_of(side), c.force, c.stream, true);
  });
}

int gtstorage_need_sync(gtstorage_handle handle, int32_t side, int32_t* out_need) {
  return guarded([&] {
    check_out(out_need, "out_need");
    check_side(side);
    const gts::sync_state st = table().get(handle).buffers->state();
    const gts::sync_state other_dirty =
        side == GTSTORAGE_SIDE_HOST ? gts::sync_state::device_dirty : gts::sync_state::host_dirty;
    *out_need = st == other_dirty ? 1 : 0;
  });
}

int gtstorage_mark_synchronized(gtstorage_handle handle) {
  return guarded([&] {
    const sync_call c = sync_args(table().get(handle), 0, 0);
    c.buffers.mark_synchronized(c.stream, true);
  });
}

int gtstorage_wait_stream(gtstorage_handle handle, uint64_t stream) {
  return guarded([&] {
    const sync_call c = sync_args(table().get(handle), 0, stream);
    c.buffers.wait(c.stream);
  });
}

int gtstorage_acquire(gtstorage_handle handle, int32_t side) {
  return guarded([&] {
    check_side(side);
    const sync_call c = sync_args(table().get(handle), 0, 0);
    c.buffers.acquire(gts::capi::side_of(side), false, c.stream, true);
  });
}

// GDP-3's touch is modify under another name (TOUCH_* are SET_*_MODIFIED).
int gtstorage_touch(gtstorage_handle handle, int32_t side) {
  return guarded([&] {
    check_side(side);
    const sync_call c = sync_args(table().get(handle), 0, 0);
    c.buffers.modify(gts::capi::side_of(side), false, c.stream, true);
  });
}

int gtstorage_set_stream(gtstorage_handle handle, uint64_t stream) {
  return guarded([&] {
    gts::storage& st = table().get(handle);
    check_stream(st, stream);
    if (st.stream != stream) st.buffers->leave_stream(st.stream);
    st.stream = stream;
  });
}

}  // extern "C"
