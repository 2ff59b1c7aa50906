#include "storage/buffer_set.hpp"

#include <string>

#include "common/errors.hpp"
#include "device/stream_ordering.hpp"
#include "kernels/kernels.hpp"

namespace gts {

// host/device are default-initialized on purpose (their strided_array keeps unused dimensions
// uncleared; see strided_array.hpp).
// cppcheck-suppress uninitMemberVar
buffer_set::buffer_set() {
  stats().live_buffers.fetch_add(1, std::memory_order_relaxed);
}

buffer_set::~buffer_set() {
  // Work the library queued on these buffers without waiting (an async sync or copy) may still
  // be moving data into or out of them: it must land before the memory is freed, reused from
  // a pool, or handed back to its owner (a wrapped buffer's release callback lets CuPy's pool
  // or NumPy reuse it at once).
  if (has_pending()) release_after_pending();
  release_after_marks();
  for (side_buffer* b : {&host, &device}) {
    switch (b->owner) {
      case side_owner::host_block:
        free_host(b->block);
        stats().host_bytes.fetch_sub(static_cast<int64_t>(b->block.bytes),
                                     std::memory_order_relaxed);
        break;
      case side_owner::backend:
        backend->free(b->base, b->kind, b->device_id);
        (b->kind == device::memory_kind::pinned_host ? stats().host_bytes : stats().device_bytes)
            .fetch_sub(b->bytes, std::memory_order_relaxed);
        break;
      default:
        break;
    }
  }
  if (release != nullptr) release(release_user_data);
  stats().live_buffers.fetch_sub(1, std::memory_order_relaxed);
}

bool buffer_set::orders_release() const {
  return backend != nullptr &&
         (device.owner == side_owner::backend ||
          (host.owner == side_owner::backend && host.kind == device::memory_kind::pinned_host));
}

namespace {

// An event recorded on @p stream of @p be now (device @p device_id); 0 where none could be
// recorded (a stream of another device, no event left), after waiting on the host for the
// stream instead: the stream is valid now. Throws only if that wait fails.
uint64_t record_after(device::backend& be, int device_id, uint64_t stream) {
  try {
    const uint64_t event = be.ordering().create_event(device_id);
    try {
      be.ordering().record_event(event, stream);
    } catch (...) {
      be.ordering().destroy_event(event);
      throw;
    }
    return event;
  } catch (...) {
    be.synchronize(stream);
    return 0;
  }
}

}  // namespace

uint64_t buffer_set::record_on(uint64_t stream) {
  return record_after(*backend, device.present() ? device.device_id : host.device_id, stream);
}

void buffer_set::leave_stream(uint64_t stream) noexcept {
  if (stream == 0 || stream == default_stream || !orders_release()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  try {
    for (stream_mark& m : marks_) {
      if (m.stream == stream) {
        // The same stream again: recorded later, the event covers the earlier work too. The
        // stream first waits for the earlier record (a no-op on the same stream), so a new
        // stream that got a destroyed one's address cannot cut short the wait for its work.
        backend->ordering().wait_event(stream, m.event);
        backend->ordering().record_event(m.event, stream);
        return;
      }
    }
    if (marks_.size() == max_stream_marks) {
      const stream_mark oldest = marks_.front();
      marks_.erase(marks_.begin());
      try {
        backend->ordering().synchronize_event(oldest.event);
      } catch (...) {
        backend->ordering().destroy_event(oldest.event);
        throw;
      }
      backend->ordering().destroy_event(oldest.event);
    }
    const uint64_t event = record_on(stream);
    if (event != 0) marks_.push_back({stream, event});
  } catch (...) {
    // A failed device: wait for all of it (the stream may be the failure); if that fails too,
    // nothing runs there any more.
    try {
      backend->ordering().synchronize_device(device.present() ? device.device_id : host.device_id);
    } catch (...) {
    }
  }
}

// Backend-owned device memory goes back to the device's stream-ordered pool (or to the runtime)
// on default_stream, the stream it was allocated on. Work the application queued on the other
// streams its handles used may still use it: default_stream waits for the events those handles
// recorded when they left their streams (leave_stream), so the block is reused only after that
// work, and nothing blocks. Pinned host memory goes back to the device backend's host-side cache
// at once, and the next storage that takes the block writes it from the host, where no stream
// orders the write: an upload the application queued from the host side could read the next
// owner's data. So the host waits for those events first, as cudaFreeHost (the unpooled
// release) waits for the whole device.
void buffer_set::release_after_marks() noexcept {
  if (marks_.empty()) return;
  const bool host_waits =
      host.owner == side_owner::backend && host.kind == device::memory_kind::pinned_host;
  for (const stream_mark& m : marks_) {
    try {
      if (host_waits) {
        backend->ordering().synchronize_event(m.event);
      } else {
        backend->ordering().wait_event(default_stream, m.event);
      }
    } catch (...) {
      try {
        backend->ordering().synchronize_device(device.present() ? device.device_id
                                                                : host.device_id);
      } catch (...) {
      }
    }
    backend->ordering().destroy_event(m.event);
  }
  marks_.clear();
}

void buffer_set::set_pending(device::backend* be, int device_id, uint64_t event) noexcept {
  const uint64_t old = pending_event_.load(std::memory_order_relaxed);
  if (old != 0 && pending_backend_ != nullptr) pending_backend_->ordering().destroy_event(old);
  pending_backend_ = be;
  pending_device_ = device_id;
  pending_event_.store(event, std::memory_order_release);
}

void buffer_set::finish_pending() {
  const uint64_t event = pending_event_.load(std::memory_order_relaxed);
  device::backend* const be = pending_backend_;
  pending_event_.store(0, std::memory_order_relaxed);  // forgotten first: destroyed below
  pending_backend_ = nullptr;
  try {
    be->ordering().synchronize_event(event);
  } catch (...) {
    be->ordering().destroy_event(event);
    throw;
  }
  be->ordering().destroy_event(event);
}

void buffer_set::wait_pending() {
  if (!has_pending()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (has_pending()) finish_pending();
}

void buffer_set::order_after_pending(device::backend& be, uint64_t stream) {
  if (!has_pending()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!has_pending()) return;
  if (pending_backend_ == &be) {
    try {
      be.ordering().wait_event(stream, pending_event_.load(std::memory_order_relaxed));
      return;
    } catch (...) {
      // The host waits instead (below); a dead stream then fails in the work queued next.
    }
  }
  finish_pending();
}

void buffer_set::note_queued(device::backend& be, int device_id, uint64_t stream) {
  // Where no event could be recorded the host waited for the stream, and so for everything
  // the stream was ordered after: the earlier pending event too.
  const uint64_t event = record_after(be, device_id, stream);
  set_pending(event != 0 ? &be : nullptr, device_id, event);
}

void buffer_set::queued_on(device::backend& be, int device_id, uint64_t stream) {
  const std::lock_guard<std::mutex> lock(mutex_);
  note_queued(be, device_id, stream);
}

// Device memory only the backend owns goes back stream-ordered (see release_after_marks):
// default_stream waits for the event, and nothing blocks. Memory the host can reach (host
// blocks, pinned and unified memory, a wrapped buffer handed back to its owner) is written by
// its next owner from the host at once, so the host waits.
void buffer_set::release_after_pending() noexcept {
  const uint64_t event = pending_event_.load(std::memory_order_relaxed);
  device::backend* const be = pending_backend_;
  const bool stream_ordered = be == backend && !host.present() &&
                              device.owner == side_owner::backend &&
                              device.kind == device::memory_kind::device && release == nullptr;
  try {
    if (stream_ordered) {
      be->ordering().wait_event(default_stream, event);
    } else {
      be->ordering().synchronize_event(event);
    }
  } catch (...) {
    // The device failed: wait for all of it; if that fails too, nothing runs there any more.
    try {
      be->ordering().synchronize_device(pending_device_);
    } catch (...) {
    }
  }
  be->ordering().destroy_event(event);
  pending_event_.store(0, std::memory_order_relaxed);
  pending_backend_ = nullptr;
}

sync_state buffer_set::state() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

// Moves the whole buffer to side @p to. Layouts equal and both sides dense: one contiguous copy
// of the padded allocation; otherwise an element-wise (layout-changing) copy of the root array.
void buffer_set::copy_side(side to, uint64_t stream) {
  side_buffer& dst = get(to);
  const side_buffer& src = get(to == side::host ? side::device : side::host);
  const auto dir =
      to == side::device ? device::direction::host_to_device : device::direction::device_to_host;
  // An empty storage has nothing to move: no device call, no transfer counted.
  if (src.full.size() == 0) return;
  device::backend& be = *backend;
  int64_t moved = 0;
  bool same_layout = dst.full.ndim == src.full.ndim;
  for (int d = 0; same_layout && d < dst.full.ndim; ++d) {
    same_layout = dst.full.strides[d] == src.full.strides[d];
  }
  // A transfer that fails part-way is drained before the error goes on: nothing records it as
  // pending, and the release that may follow must not free memory it still writes.
  if (same_layout && dst.dense_allocation && src.dense_allocation && dst.bytes == src.bytes) {
    device::enqueue_or_drain(be, stream, [&] {
      be.copy(dst.base, src.base, static_cast<size_t>(src.bytes), dir, stream);
    });
    moved = src.bytes;
  } else {
    device::enqueue_or_drain(be, stream, [&] { be.copy_strided(dst.full, src.full, dir, stream); });
    moved = src.full.size() * src.full.type.itemsize;
  }
  record_transfer(&transfers, dir, moved);
}

void buffer_set::wait(uint64_t stream) {
  if (stream == 0) stream = default_stream;
  // Always blocking (also from gtstorage_sync_async): a consumer waits here for a producer's
  // stream before it reads the buffer, and for the work the library queued on the memory on
  // any stream (an async copy into a host-only storage, whose set has no backend).
  wait_pending();
  if (backend != nullptr) backend->synchronize(stream);
}

bool buffer_set::unified() const {
  return host.owner == side_owner::alias || device.owner == side_owner::alias;
}

void buffer_set::unified_sync(const side* to, uint64_t stream, bool wait) {
  const side_buffer& b = host.owner == side_owner::alias ? device : host;
  device::backend& be = *backend;
  if (to != nullptr) {
    order_after_pending(be, stream);
    be.prefetch(b.base, static_cast<size_t>(b.bytes), *to == side::device ? b.device_id : -1,
                stream);
    if (!wait) queued_on(be, b.device_id, stream);
  }
  if (wait) {
    wait_pending();
    be.synchronize(stream);
  }
}

void buffer_set::move_to(side to, uint64_t stream, bool wait) {
  if (get(to).readonly) {
    fail(error_kind::readonly, std::string("op: the ") + (to == side::host ? "host" : "device") +
                                   " side is caller memory wrapped read-only; syncing would "
                                   "write into it");
  }
  copy_side(to, stream);
  if (wait) {
    backend->synchronize(stream);
  } else {
    note_queued(*backend, device.device_id, stream);
  }
  state_ = sync_state::clean;
}

void buffer_set::mark(sync_state dirty, bool force, const char* verb) {
  const sync_state other =
      dirty == sync_state::host_dirty ? sync_state::device_dirty : sync_state::host_dirty;
  if (state_ == other && !force) {
    fail(error_kind::sync_conflict,
         std::string("op: ") + verb +
             " while the other side is already marked modified; "
             "sync first (or pass GTSTORAGE_SYNC_FLAG_FORCE to discard the other side's changes)");
  }
  state_ = dirty;
}

template <class Locked>
void buffer_set::run_verb(const side* unified_to, uint64_t stream, bool wait, Locked&& locked) {
  if (stream == 0) stream = default_stream;
  if (unified()) {
    unified_sync(unified_to, stream, wait);
    return;
  }
  if (!mirrored()) return;  // host-only or device-only: nothing to keep in sync
  const std::lock_guard<std::mutex> lock(mutex_);
  // Work queued earlier (an async sync or copy) must land before a verb reads or overwrites
  // the memory.
  if (has_pending()) finish_pending();
  locked(stream);
}

void buffer_set::sync_to(side to, bool force, uint64_t stream, bool wait) {
  run_verb(&to, stream, wait, [&](uint64_t st) {
    const sync_state from = to == side::device ? sync_state::host_dirty : sync_state::device_dirty;
    if (state_ == from || force) move_to(to, st, wait);
  });
}

void buffer_set::synchronize(uint64_t stream, bool wait) {
  const side pages_to = side::host;  // GDP-3's synchronize of one buffer: its pages to the host
  run_verb(&pages_to, stream, wait, [&](uint64_t st) {
    if (state_ == sync_state::host_dirty) {
      move_to(side::device, st, wait);
    } else if (state_ == sync_state::device_dirty) {
      move_to(side::host, st, wait);
    }
  });
}

void buffer_set::acquire(side s, bool force, uint64_t stream, bool wait) {
  run_verb(&s, stream, wait, [&](uint64_t st) {
    const sync_state other = s == side::host ? sync_state::device_dirty : sync_state::host_dirty;
    if (state_ == other || (force && state_ == sync_state::clean)) move_to(s, st, wait);
  });
}

void buffer_set::modify(side s, bool force, uint64_t stream, bool wait) {
  run_verb(nullptr, stream, wait, [&](uint64_t) {
    if (s == side::host) {
      mark(sync_state::host_dirty, force, "set_host_modified");
    } else {
      mark(sync_state::device_dirty, force, "set_device_modified");
    }
  });
}

void buffer_set::mark_synchronized(uint64_t stream, bool wait) {
  run_verb(nullptr, stream, wait, [&](uint64_t) { state_ = sync_state::clean; });
}

}  // namespace gts
