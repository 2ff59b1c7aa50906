// The memory behind a storage and all of its views: a host side and/or a device side, the one
// sync state they share (GDP-3 SyncState), per-buffer transfer counters, and the wrap release
// callback. Views hold it through shared_ptr, so the last view to go frees it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "device/device_backend.hpp"
#include "kernels/strided_array.hpp"
#include "memory/host_allocator.hpp"
#include "storage/stats.hpp"

namespace gts {

// The storage layer's own vocabulary. src/capi translates the public enum values of
// gtstorage.h into these (and back); no layer below it knows the ABI's numbers.

enum class sync_state { clean, host_dirty, device_dirty };
/// A side of a buffer set; its value is the index of the side in per-side arrays.
enum class side : int32_t { host = 0, device = 1 };
enum class managed_kind { none, mirror, unified };

enum class side_owner {
  none,        ///< No buffer on this side.
  host_block,  ///< Allocated by allocate_host().
  backend,     ///< Allocated by the device backend (device, unified or pinned memory).
  alias,       ///< Same memory as the other side (unified memory); freed there.
  wrapped,     ///< Caller's memory; never freed by us.
};

struct side_buffer {
  side_owner owner = side_owner::none;
  std::byte* base = nullptr;  ///< Start of the allocation (or of the wrapped span).
  int64_t bytes = 0;          ///< Size of the allocation (or of the wrapped span).
  host_block block{};         ///< For side_owner::host_block.
  device::memory_kind kind = device::memory_kind::device;  ///< For side_owner::backend.
  int device_id = 0;                                       ///< Device ordinal of backend memory.
  int dl_device_type = 1;  ///< DLPack device type reported for this side.
  int dl_device_id = 0;
  /// The whole root array on this side (element (0, …, 0) of the storage as created): syncs
  /// always move the whole buffer, whichever view asked.
  strided_array full;  // not value-initialized: that would clear its unused dimensions
  /// The root array covers [base, base + bytes) exactly, padding included, so the whole side can
  /// move as one contiguous copy.
  bool dense_allocation = false;
  /// Caller memory wrapped read-only: a sync must not copy into it.
  bool readonly = false;

  [[nodiscard]] bool present() const { return owner != side_owner::none; }
};

using release_callback = void (*)(void*);

class buffer_set {
 public:
  buffer_set();
  ~buffer_set();
  buffer_set(const buffer_set&) = delete;
  buffer_set& operator=(const buffer_set&) = delete;

  side_buffer host;
  side_buffer device;
  managed_kind managed = managed_kind::none;
  /// The device backend that allocated (or was given) this set's device/pinned memory; it frees
  /// and syncs them even if the active backend is switched later. Null for host-only sets.
  device::backend* backend = nullptr;
  release_callback release = nullptr;
  void* release_user_data = nullptr;
  transfer_counters transfers;
  uint64_t default_stream = 0;

  [[nodiscard]] side_buffer& get(side s) { return s == side::host ? host : device; }
  [[nodiscard]] const side_buffer& get(side s) const { return s == side::host ? host : device; }
  /// Both sides exist as separate memory and must be kept in sync.
  [[nodiscard]] bool mirrored() const {
    return host.present() && device.present() && host.owner != side_owner::alias &&
           device.owner != side_owner::alias;
  }

  sync_state state() const;
  /// Whether work the library queued on this set's memory without waiting for it (see
  /// queued_on) may still be running. One load: every access path asks.
  [[nodiscard]] bool has_pending() const {
    return pending_event_.load(std::memory_order_acquire) != 0;
  }
  /// Waits on the host for the work queued_on() recorded, before anyone touches the data.
  void wait_pending();
  /// Makes later work on @p stream of backend @p be wait for the work queued_on() recorded,
  /// without blocking the host (the host waits instead where the event is another backend's).
  void order_after_pending(device::backend& be, uint64_t stream);
  /// The library queued work that reads or writes this set's memory on @p stream of @p be
  /// (device @p device_id) and returns without waiting for it: an async sync, an async
  /// copy_sides from or into it, a prefetch. An event recorded there now becomes the set's
  /// pending event (replacing the previous one, which the caller ordered the stream after with
  /// order_after_pending or waited for): the release of the memory (and so the reuse of a pooled
  /// block), host access through the library, gtstorage_wait_stream and every later synchronous
  /// operation wait for it. Where no event can be recorded the host waits for the stream now.
  void queued_on(device::backend& be, int device_id, uint64_t stream);
  // The sync verbs (GDP-3). Thread-safe. @p stream: where transfers run (0: the default
  // stream); @p wait: return after they are done (else they stay queued, recorded as pending).
  // Host-only and device-only sets have nothing to keep in sync: the verbs do nothing there.
  // Unified memory is one buffer: a sync moves its pages (a prefetch) to where they will be
  // used, and with @p wait every verb waits for @p stream.

  /// Makes side @p to current: copies the other side over it if that side is modified (or
  /// always, with @p force); both sides are then equal.
  void sync_to(side to, bool force, uint64_t stream, bool wait);
  /// Copies whichever side is modified over the other.
  void synchronize(uint64_t stream, bool wait);
  /// Makes side @p s current before compute there: as sync_to(@p s), and with @p force also
  /// when neither side is modified.
  void acquire(side s, bool force, uint64_t stream, bool wait);
  /// Marks side @p s modified (its compute wrote it); refused (sync_conflict) while the other
  /// side is marked modified, unless @p force discards that side's changes.
  void modify(side s, bool force, uint64_t stream, bool wait);
  /// Declares both sides equal without copying.
  void mark_synchronized(uint64_t stream, bool wait);
  /// Waits on the host for @p stream (0: the default stream) and for the work the library
  /// queued on this set's memory (always blocking); changes no state.
  void wait(uint64_t stream);
  /// A handle of this set stops using @p stream: gtstorage_set_stream moves it to another one,
  /// or its last reference is released. The work the application queued there so far may
  /// still use this set's memory, so an event is recorded on @p stream now, while the stream is
  /// still valid (a stream must stay valid as long as a handle uses it, never longer), and the
  /// release of backend-owned memory waits for those events: device memory on the device
  /// (nothing blocks), pinned host memory on the host. The release never touches the streams
  /// themselves: the application may destroy a stream once no handle uses it. Nothing to do
  /// for sets without backend-owned memory and for default_stream. Thread-safe; never throws
  /// (where no event can be recorded, e.g. a stream of another device, the host waits for the
  /// stream now).
  void leave_stream(uint64_t stream) noexcept;

 private:
  void copy_side(side to, uint64_t stream);  // requires lock
  /// Unified memory: one buffer, both sides alias it.
  [[nodiscard]] bool unified() const;
  /// The common course of the verbs: the stream (0: the default one), unified memory's
  /// unified_sync(@p unified_to), nothing for a set without two sides; otherwise @p locked(stream)
  /// under the lock, after the pending work landed.
  template <class Locked>
  void run_verb(const side* unified_to, uint64_t stream, bool wait, Locked&& locked);
  /// A verb on unified memory: prefetch to @p to (null: no move), then wait if asked.
  void unified_sync(const side* to, uint64_t stream, bool wait);
  /// Copies the other side over @p to and marks the set clean (requires lock): refused where
  /// @p to is caller memory wrapped read-only.
  void move_to(side to, uint64_t stream, bool wait);
  /// Marks @p dirty (requires lock); @p verb names the operation in a conflict's message.
  void mark(sync_state dirty, bool force, const char* verb);
  /// Whether this set's release must be ordered after the work on the streams it left.
  [[nodiscard]] bool orders_release() const;
  /// An event recorded on @p stream now, on this set's device; 0 where none could be recorded,
  /// after waiting on the host for @p stream instead. Throws only if that wait fails.
  uint64_t record_on(uint64_t stream);
  /// Waits on the host for the pending event and forgets it (requires lock).
  void finish_pending();
  /// Replaces the pending event by @p event of @p be on @p device_id (requires lock; 0: none),
  /// destroying the previous one.
  void set_pending(device::backend* be, int device_id, uint64_t event) noexcept;
  /// queued_on() with the lock held.
  void note_queued(device::backend& be, int device_id, uint64_t stream);
  /// Orders the release after the pending event (see ~buffer_set); clears it.
  void release_after_pending() noexcept;
  /// Orders the release of backend-owned memory after the stream marks (see leave_stream).
  void release_after_marks() noexcept;
  /// An event recorded on a stream a handle of this set left (see leave_stream); one per
  /// stream, recorded again when a handle leaves the same stream later.
  struct stream_mark {
    uint64_t stream = 0;
    uint64_t event = 0;
  };
  /// At most this many marks; a ninth stream makes the host wait for the oldest mark first.
  static constexpr std::size_t max_stream_marks = 8;
  std::vector<stream_mark> marks_;
  mutable std::mutex mutex_;
  sync_state state_ = sync_state::clean;
  /// Recorded after the last work the library queued on this memory without waiting (0:
  /// none), and the backend it belongs to (a host-only set has no backend of its own, yet an
  /// async copy from a device may write into it). An event, not the stream: the caller may
  /// destroy its stream before the next sync or release. Written under the lock; read without
  /// it by has_pending().
  std::atomic<uint64_t> pending_event_{0};
  device::backend* pending_backend_ = nullptr;
  int pending_device_ = 0;
};

}  // namespace gts
