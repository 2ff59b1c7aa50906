// The ordering interface of a device backend: what the library needs to order its own work after
// the application's streams (asynchronous copies, stream-ordered releases; storage/buffer_set)
// and to check a stream handle at the C API. Events the library records and waits for, and
// waits for a whole device. Reached through backend::ordering(); every backend implements it.
//
// Stream and event handles are uint64_t, as in the core interface (a cudaStream_t/hipStream_t;
// 0, 1 and 2 name the default stream of the device the work is for).
#pragma once

#include <cstdint>

#include "device/interface.hpp"

namespace gts::device {

class stream_ordering : public interface {
 public:
  /// A new event on @p device_id (-1 = current), able to time.
  virtual uint64_t create_event(int device_id) = 0;
  virtual void destroy_event(uint64_t event) noexcept = 0;
  /// Records @p event on @p stream.
  virtual void record_event(uint64_t event, uint64_t stream) = 0;
  /// Makes later work on @p stream wait for @p event.
  virtual void wait_event(uint64_t stream, uint64_t event) = 0;
  /// Blocks until @p event completed.
  virtual void synchronize_event(uint64_t event) = 0;
  /// Waits for all work on device @p device_id (-1 = current).
  virtual void synchronize_device(int device_id) = 0;
  /// True when @p stream is known to name no live stream of this backend (destroyed, or never
  /// created). Only a backend that can check a handle says so (the emulated device); a real
  /// runtime cannot, and may crash on a dead one, so this is false there. Never blocks.
  [[nodiscard]] virtual bool stream_known_dead(uint64_t stream) const noexcept {
    (void)stream;
    return false;
  }
};

}  // namespace gts::device
