// Part of the GPU backend (gpu_backend.inl): streams and events. The streams and events the
// backend created (and the device each belongs to), waits on a stream or a device, and how work
// for one device is ordered on a stream of another (bound_stream: the device's helper stream,
// joined to the caller's stream by two events).
#include <atomic>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>

#include "common/errors.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

inline gpuEvent_t to_event(uint64_t e) {
  return reinterpret_cast<gpuEvent_t>(e);
}

class gpu_streams {
 public:
  gpu_streams(backend& owner, gpu_devices& devices) : owner_(owner), devices_(devices) {}

  [[nodiscard]] bool stream_known_dead(uint64_t stream) const noexcept {
    return runtime_knows_dead(stream);
  }

  void synchronize(uint64_t stream) {
    devices_.require();
    if (!default_stream_handle(stream)) {
      check_stream_call(gpuStreamSynchronize(to_stream(stream)), GTS_GPU_FN(StreamSynchronize),
                        stream);
      check_joined_devices(stream);
      return;
    }
    // A default stream is per device: wait on the calling thread's current device (where a
    // producer handing over a buffer with stream 1 or 2 queued its work) and on each device this
    // backend has used.
    devices_.mark_used(devices_.current());
    const int n = devices_.known_count();
    std::exception_ptr first;
    for (int d = 0; d < n; ++d) {
      if (!devices_.used(d)) continue;
      try {
        device_guard g(d);
        check(gpuStreamSynchronize(to_stream(stream)), GTS_GPU_FN(StreamSynchronize));
      } catch (...) {
        // The other devices are still waited for: a caller frees its buffers once this
        // returns or throws, and their queued work may write them (a failed device runs
        // nothing more). The first failure is reported afterwards.
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

  void synchronize_device(int device_id) {
    const int dev = owner_.checked_device(device_id);
    device_guard g(dev);
    check(gpuDeviceSynchronize(), GTS_GPU_FN(DeviceSynchronize));
  }

  uint64_t create_stream(int device_id) {
    const int dev = owner_.checked_device(device_id);
    device_guard g(dev);
    gpuStream_t s = nullptr;
    check(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), GTS_GPU_FN(StreamCreateWithFlags));
    devices_.mark_used(dev);
    std::lock_guard<std::mutex> lock(mu_);
    streams_[reinterpret_cast<uint64_t>(s)] = dev;
    return reinterpret_cast<uint64_t>(s);
  }

  void destroy_stream(uint64_t stream) noexcept {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (streams_.erase(stream) == 0) return;  // 0, foreign or already destroyed.
    }
    if (gpuStreamDestroy(to_stream(stream)) != gpuSuccess) (void)gpuGetLastError();
  }

  uint64_t create_event(int device_id) {
    const int dev = owner_.checked_device(device_id);
    device_guard g(dev);
    gpuEvent_t e = nullptr;
    check(gpuEventCreateWithFlags(&e, gpuEventDefault), GTS_GPU_FN(EventCreateWithFlags));
    std::lock_guard<std::mutex> lock(mu_);
    events_[reinterpret_cast<uint64_t>(e)] = dev;
    return reinterpret_cast<uint64_t>(e);
  }

  void destroy_event(uint64_t event) noexcept {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (events_.erase(event) == 0) return;
    }
    if (gpuEventDestroy(to_event(event)) != gpuSuccess) (void)gpuGetLastError();
  }

  // An event is recorded with its own device current (a default-stream handle then names that
  // device's default stream); a stream of another device cannot record it, in CUDA's rules.
  void record_event(uint64_t event, uint64_t stream) {
    const int edev = event_device(event);
    const int sdev = stream_device(stream);
    if (sdev >= 0 && sdev != edev) {
      fail_arg("stream", hex(reinterpret_cast<void*>(stream)) + " belongs to device " +
                             std::to_string(sdev) + ", the event to device " +
                             std::to_string(edev) +
                             "; an event can only be recorded on a stream of its own device");
    }
    device_guard g(edev);
    check_stream_call(gpuEventRecord(to_event(event), to_stream(stream)), GTS_GPU_FN(EventRecord),
                      stream);
  }

  // The stream's device is made current (for a default-stream handle: the event's device).
  void wait_event(uint64_t stream, uint64_t event) {
    const int edev = event_device(event);
    const int sdev = stream_device(stream);
    device_guard g(sdev >= 0 ? sdev : edev);
    check_stream_call(gpuStreamWaitEvent(to_stream(stream), to_event(event), 0),
                      GTS_GPU_FN(StreamWaitEvent), stream);
  }

  void synchronize_event(uint64_t event) {
    event_device(event);
    check(gpuEventSynchronize(to_event(event)), GTS_GPU_FN(EventSynchronize));
  }

  bool event_done(uint64_t event) {
    event_device(event);
    const gpuError_t e = gpuEventQuery(to_event(event));
    if (e == gpuSuccess) return true;
    if (e == gpuErrorNotReady) {
      (void)gpuGetLastError();
      return false;
    }
    raise_error(e, GTS_GPU_FN(EventQuery));
  }

  float elapsed_ms(uint64_t start, uint64_t end) {
    event_device(start);
    event_device(end);
    float ms = 0.0f;
    check(gpuEventElapsedTime(&ms, to_event(start), to_event(end)), GTS_GPU_FN(EventElapsedTime));
    return ms;
  }

  // Device a stream handle belongs to; -1 for default-stream handles (the current device's) and
  // for streams the runtime cannot place.
  int stream_device(uint64_t handle) {
    if (default_stream_handle(handle)) return -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = streams_.find(handle);
      if (it != streams_.end()) return it->second;
    }
#if defined(GTS_GPU_HAVE_STREAM_GET_DEVICE)
    int dev = -1;
    if (gpuStreamGetDevice(to_stream(handle), &dev) == gpuSuccess) return dev;
    (void)gpuGetLastError();
#endif
    return -1;
  }

  // The library's own non-blocking stream on @p dev, for work joined to another device's stream.
  gpuStream_t helper_stream(int dev) {
    dev_info& d = devices_.info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.helper == nullptr) {
      device_guard g(dev);
      check(gpuStreamCreateWithFlags(&d.helper, gpuStreamNonBlocking),
            GTS_GPU_FN(StreamCreateWithFlags));
    }
    return d.helper;
  }

  /// Device @p dev's helper stream took work joined to another device's stream.
  void note_joined(int dev) {
    joined_mask_.fetch_or(uint64_t(1) << dev, std::memory_order_relaxed);
  }

 private:
  // Device of a live event of this backend; invalid_argument for anything else.
  int event_device(uint64_t event) {
    devices_.require();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event);
    if (it == events_.end()) {
      fail_arg("event", hex(reinterpret_cast<void*>(event)) + " is not a live event of the " +
                            GTS_GPU_NAME + " backend");
    }
    return it->second;
  }

  // Work for a device that was ordered on another device's stream ran on the helper stream of
  // its own device (bound_stream), joined back by an event. Waiting for the caller's stream
  // waited for that work too, but a failure of it is the helper's device's (sticky) error,
  // which the wait on another device need not report: ask those devices, so that a read
  // through such a stream never returns success with data that did not arrive.
  void check_joined_devices(uint64_t stream) {
    const uint64_t joined = joined_mask_.load(std::memory_order_relaxed);
    if (joined == 0) return;
    const int sdev = stream_device(stream);
    for (int d = 0; d < 64; ++d) {
      if (((joined >> d) & 1u) == 0 || d == sdev) continue;
      gpuStream_t helper = nullptr;
      {
        dev_info& di = devices_.info(d);
        std::lock_guard<std::mutex> lock(di.mu);
        helper = di.helper;
      }
      if (helper == nullptr) continue;
      device_guard g(d);
      const gpuError_t e = gpuStreamQuery(helper);
      if (e == gpuErrorNotReady) {
        (void)gpuGetLastError();
        continue;
      }
      check(e, GTS_GPU_FN(StreamQuery));
    }
  }

  backend& owner_;
  gpu_devices& devices_;
  std::mutex mu_;
  std::map<uint64_t, int> streams_;       // created here -> device
  std::map<uint64_t, int> events_;        // created here -> device
  std::atomic<uint64_t> joined_mask_{0};  // devices whose helper stream took joined work
};

// stream handle: the handle itself, unless it is a stream of another device. Then the device's
// internal stream waits for what the caller queued on its stream, and join_back() makes the
// caller's stream wait for the work queued here.
class bound_stream {
 public:
  bound_stream(gpu_streams& streams, int dev, uint64_t handle) : handle_(handle) {
    const int sdev = streams.stream_device(handle);
    if (sdev < 0 || sdev == dev) {
      s_ = to_stream(handle);
      return;
    }
    other_ = sdev;
    s_ = streams.helper_stream(dev);
    streams.note_joined(dev);
    gpuEvent_t queued = nullptr;
    {
      device_guard g(sdev);
      check(gpuEventCreateWithFlags(&queued, gpuEventDisableTiming),
            GTS_GPU_FN(EventCreateWithFlags));
      const gpuError_t e = gpuEventRecord(queued, to_stream(handle));
      if (e != gpuSuccess) (void)gpuEventDestroy(queued);
      check_stream_call(e, GTS_GPU_FN(EventRecord), handle);
    }
    const gpuError_t e = gpuStreamWaitEvent(s_, queued, 0);
    (void)gpuEventDestroy(queued);  // released once the wait no longer needs it
    check(e, GTS_GPU_FN(StreamWaitEvent));
  }
  [[nodiscard]] gpuStream_t get() const { return s_; }
  void join_back() {
    if (other_ < 0) return;
    gpuEvent_t done = nullptr;
    check(gpuEventCreateWithFlags(&done, gpuEventDisableTiming), GTS_GPU_FN(EventCreateWithFlags));
    gpuError_t e = gpuEventRecord(done, s_);
    if (e == gpuSuccess) {
      device_guard g(other_);
      e = gpuStreamWaitEvent(to_stream(handle_), done, 0);
    }
    (void)gpuEventDestroy(done);
    check(e, GTS_GPU_FN(StreamWaitEvent));
  }
  bound_stream(const bound_stream&) = delete;
  bound_stream& operator=(const bound_stream&) = delete;

 private:
  uint64_t handle_;
  int other_ = -1;
  gpuStream_t s_ = nullptr;
};

// The runtime policy of transfer_engine.hpp: one device (current, by the caller's guard) and

// Waits for @p s (on the current device) when it is destroyed by an exception: queued work
// that still reads memory the unwinding is about to free runs first. Errors of the wait
// itself are dropped (the exception in flight says what failed).
class drain_on_error {
 public:
  explicit drain_on_error(gpuStream_t s) : s_(s), uncaught_(std::uncaught_exceptions()) {}
  ~drain_on_error() {
    if (std::uncaught_exceptions() > uncaught_ && gpuStreamSynchronize(s_) != gpuSuccess) {
      (void)gpuGetLastError();
    }
  }
  drain_on_error(const drain_on_error&) = delete;
  drain_on_error& operator=(const drain_on_error&) = delete;

 private:
  gpuStream_t s_;
  int uncaught_;
};

// An event recorded on @p s (current device), for another stream to wait on.
gpuEvent_t record_join(gpuStream_t s) {
  gpuEvent_t e = nullptr;
  check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), GTS_GPU_FN(EventCreateWithFlags));
  const gpuError_t r = gpuEventRecord(e, s);
  if (r != gpuSuccess) {
    (void)gpuEventDestroy(e);
    raise_error(r, GTS_GPU_FN(EventRecord));
  }
  return e;
}

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
