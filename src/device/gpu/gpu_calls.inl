// Part of the GPU backend (gpu_backend.inl, which includes it after the runtime's names header):
// runtime errors as gts errors, stream handles, and the guard that keeps the caller's current
// device.
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/errors.hpp"
#include "kernels/strided_array.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

std::string error_text(gpuError_t e) {
  return std::string("'") + gpuGetErrorString(e) + "' (" + gpuGetErrorName(e) + ")";
}

[[noreturn]] void raise_error(gpuError_t e, const std::string& what) {
  (void)gpuGetLastError();  // Clear a non-sticky error so later calls do not report it again.
  error_kind kind = error_kind::device;
  if (e == gpuErrorMemoryAllocation) {
    kind = error_kind::out_of_memory;
  } else if (gpu_unavailable_error(e)) {
    kind = error_kind::no_device;
  } else if (e == gpuErrorNotSupported) {
    kind = error_kind::unsupported;
  }
  std::string text = std::string(GTS_GPU_NAME) + ": " + what + " failed: " + error_text(e);
  if (gpu_sticky_error(e)) {
    text += "; this error is sticky: the device cannot be used again by this process";
  }
  fail(kind, text);
}

inline void check(gpuError_t e, const char* fn) {
  if (e != gpuSuccess) raise_error(e, fn);
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

inline gpuStream_t to_stream(uint64_t s) {
#if defined(GTS_GPU_HIP)
  if (s == 1) return nullptr;  // CAI's legacy-stream handle: HIP's null stream (it has no 1)
#endif
  return reinterpret_cast<gpuStream_t>(s);
}

// A 1-D array of @p bytes bytes at @p p (for raw copies that take the strided paths).
strided_array bytes_array(void* p, std::size_t bytes) {
  strided_array a;
  a.data = static_cast<std::byte*>(p);
  a.ndim = 1;
  a.shape[0] = static_cast<int64_t>(bytes);
  a.strides[0] = 1;
  a.type = dtype{'u', 1};
  return a;
}

// 0 (the legacy default stream, as the library spells it), 1 (cudaStreamLegacy) and 2
// (cudaStreamPerThread) name the default stream of whichever device is current.
inline bool default_stream_handle(uint64_t s) {
  return s <= 2;
}

// A call that takes a caller's stream: an invalid handle is the caller's argument error.
inline void check_stream_call(gpuError_t e, const char* fn, uint64_t stream) {
  if (e == gpuSuccess) return;
  if (e == gpuErrorInvalidResourceHandle) {
    (void)gpuGetLastError();
    fail_arg("stream", hex(reinterpret_cast<void*>(stream)) + " is not a live stream of the " +
                           GTS_GPU_NAME + " backend (" + fn + " returned " + error_text(e) + ")");
  }
  raise_error(e, fn);
}

// Whether @p stream is known to name no live stream: only the emulated runtime knows its
// streams (a real one cannot check a handle, and may crash on a dead one).
inline bool runtime_knows_dead(uint64_t stream) noexcept {
  return !default_stream_handle(stream) && gpu_stream_known_dead(to_stream(stream));
}

#if defined(GTS_GPU_RUNTIME_VERSION)
// "12.4" for 12040.
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
#endif

// Makes @p dev current for the lifetime of the guard and restores the caller's device.
class device_guard {
 public:
  explicit device_guard(int dev) {
    if (gpuGetDevice(&prev_) != gpuSuccess) {
      (void)gpuGetLastError();
      prev_ = -1;
    }
    if (prev_ != dev) {
      check(gpuSetDevice(dev), GTS_GPU_FN(SetDevice));
      changed_ = true;
    }
  }
  ~device_guard() {
    if (changed_ && prev_ >= 0 && gpuSetDevice(prev_) != gpuSuccess) (void)gpuGetLastError();
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int prev_ = -1;
  bool changed_ = false;
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
