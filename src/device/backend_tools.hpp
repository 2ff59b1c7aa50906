// The tools interface of a device backend: what only the tests and the bench ask of a device
// (device properties, streams they create, event queries and timing, the backend's counters).
// The library itself never includes this header (tests/lint/layering checks that no file of
// src/ outside src/device does); what it needs is in the core (device_backend.hpp), the
// ordering (stream_ordering.hpp) and the allocation (allocation_registry.hpp) interfaces.
// Reached through backend::tools(); every backend implements it.
//
// Stream and event handles are uint64_t, as in the core interface (a cudaStream_t/hipStream_t;
// 0, 1 and 2 name the default stream of the device the work is for).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "device/device_types.hpp"
#include "device/interface.hpp"
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

class backend_tools : public interface {
 public:
  /// Properties of @p device_id (-1 = current). Throws no_device / invalid_argument.
  [[nodiscard]] virtual device_properties properties(int device_id) = 0;

  // ---- streams and events (stream_ordering has the rest) ----
  /// A new non-blocking stream on @p device_id (-1 = current).
  virtual uint64_t create_stream(int device_id) = 0;
  /// Destroys a stream from create_stream(); 0 and unknown values are ignored.
  virtual void destroy_stream(uint64_t stream) noexcept = 0;
  /// True when @p event completed.
  virtual bool event_done(uint64_t event) = 0;
  /// Milliseconds between two completed events.
  virtual float elapsed_ms(uint64_t start, uint64_t end) = 0;

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
