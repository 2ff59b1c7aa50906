// The tools interface of a device backend: what tests, the bench and the library's bookkeeping
// ask of a device besides moving data (device_backend.hpp has that core). Events and streams
// the caller creates, device properties, pointer queries, pool statistics and control, and the
// backend's counters. Reached through backend::tools(); every backend implements both.
//
// Stream and event handles are uint64_t, as in the core interface (a cudaStream_t/hipStream_t;
// 0, 1 and 2 name the default stream of the device the work is for).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "device/device_types.hpp"
#include "memory/block_cache.hpp"

namespace gts::device {

/// What a backend has moved and holds: transfers by direction since start or reset_transfers(),
/// and bytes currently allocated by kind. Written by the backend's implementation, read through
/// backend_tools.
class usage_counters {
 public:
  void note_transfer(direction dir, std::size_t bytes) noexcept;
  void note_allocation(memory_kind kind, int64_t delta_bytes) noexcept;
  [[nodiscard]] transfer_counters transfers() const noexcept;
  void reset_transfers() noexcept;
  [[nodiscard]] int64_t allocated_bytes(memory_kind kind) const noexcept;

 private:
  std::array<std::atomic<int64_t>, 3> count_{};
  std::array<std::atomic<int64_t>, 3> bytes_{};
  std::array<std::atomic<int64_t>, 3> allocated_{};
};

class backend_tools {
 public:
  backend_tools() = default;
  virtual ~backend_tools() = default;
  backend_tools(const backend_tools&) = delete;
  backend_tools& operator=(const backend_tools&) = delete;

  // ---- devices and pointers ----
  /// Properties of @p device_id (-1 = current). Throws no_device / invalid_argument.
  [[nodiscard]] virtual device_properties properties(int device_id) = 0;
  /// Waits for all work on device @p device_id (-1 = current).
  virtual void synchronize_device(int device_id) = 0;
  /// What @p ptr points into (never throws; unknown addresses are pointer_space::host).
  [[nodiscard]] virtual pointer_info query_pointer(const void* ptr) noexcept = 0;
  /// The bounds [*base, *base + *bytes) of the allocation that contains @p ptr, where the backend
  /// knows them: its own allocations (the bytes requested), and device, managed or pinned memory
  /// of any allocator where the runtime reports the range (CUDA's cuMemGetAddressRange, HIP's
  /// hipMemGetAddressRange, the simulated runtime). False when unknown (ordinary host memory).
  virtual bool allocation_range(const void* ptr, const void** base, std::size_t* bytes) noexcept {
    (void)ptr, (void)base, (void)bytes;
    return false;
  }

  // ---- streams and events ----
  /// A new non-blocking stream on @p device_id (-1 = current).
  virtual uint64_t create_stream(int device_id) = 0;
  /// Destroys a stream from create_stream(); 0 and unknown values are ignored.
  virtual void destroy_stream(uint64_t stream) noexcept = 0;
  /// True when @p stream is known to name no live stream of this backend (destroyed, or never
  /// created). Only a backend that can check a handle says so (the emulated device); a real
  /// runtime cannot, and may crash on a dead one, so this is false there. Never blocks.
  [[nodiscard]] virtual bool stream_known_dead(uint64_t stream) const noexcept {
    (void)stream;
    return false;
  }
  /// A new event on @p device_id (-1 = current), able to time.
  virtual uint64_t create_event(int device_id) = 0;
  virtual void destroy_event(uint64_t event) noexcept = 0;
  /// Records @p event on @p stream.
  virtual void record_event(uint64_t event, uint64_t stream) = 0;
  /// Makes later work on @p stream wait for @p event.
  virtual void wait_event(uint64_t stream, uint64_t event) = 0;
  /// Blocks until @p event completed.
  virtual void synchronize_event(uint64_t event) = 0;
  /// True when @p event completed.
  virtual bool event_done(uint64_t event) = 0;
  /// Milliseconds between two completed events.
  virtual float elapsed_ms(uint64_t start, uint64_t end) = 0;

  // ---- pools (backend::allocate_pooled) ----
  /// Counters of the pool of @p memory (pinned_host or device); limit 0 where there is none.
  [[nodiscard]] virtual pool_counters pool_stats(pool_memory memory) noexcept {
    (void)memory;
    return {};
  }
  /// Frees kept blocks of @p memory until at most @p keep_bytes are kept; returns bytes freed.
  virtual int64_t pool_trim(pool_memory memory, int64_t keep_bytes) noexcept {
    (void)memory, (void)keep_bytes;
    return 0;
  }
  /// Sets the limit on kept bytes of @p memory (0: not pooled).
  virtual void pool_set_limit(pool_memory memory, int64_t limit_bytes) noexcept {
    (void)memory, (void)limit_bytes;
  }
  /// Resets hits, misses, evictions and high-water marks of this backend's pools.
  virtual void pool_reset_counters() noexcept {}

  // ---- counters ----
  /// Transfer counters of this backend (every copy and copy_strided, by direction).
  [[nodiscard]] transfer_counters counters() const noexcept { return usage_.transfers(); }
  void reset_counters() noexcept { usage_.reset_transfers(); }
  /// Bytes currently allocated through this backend, by kind.
  [[nodiscard]] int64_t allocated_bytes(memory_kind kind) const noexcept {
    return usage_.allocated_bytes(kind);
  }

 protected:
  /// Where the implementation records its transfers and allocations.
  usage_counters& usage() noexcept { return usage_; }

 private:
  usage_counters usage_;
};

}  // namespace gts::device
