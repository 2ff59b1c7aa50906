// Part of the GPU backend (gpu_backend.inl): which devices there are (asked of the runtime once,
// or again after reinitialize()), why there are none, what each can do, and which ones the
// library has used (a wait on a default stream covers those).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/errors.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

constexpr int max_tracked_devices = 64;

// What the runtime says about one device, and the library's state on it.
struct dev_info {
  int sms = 1;
  bool pools = false;
  bool concurrent_managed = false;
  std::size_t max_pitch = 0;
  // Created on first use (a pool or stream initializes the device's context, which a rank
  // that uses one GPU of a node must not pay on the others).
  std::mutex mu;
  bool pool_tried = false;
  gpuMemPool_t pool = nullptr;
  // The pool of storages' device memory (allocate_pooled), created on first use.
  bool storage_pool_tried = false;
  gpuMemPool_t storage_pool = nullptr;
  int64_t pool_hits = 0, pool_misses = 0, pool_evictions = 0;
  gpuStream_t helper = nullptr;
};

class gpu_devices {
 public:
  int count() noexcept {
    init();
    return count_.load(std::memory_order_acquire);
  }
  /// count() as last probed, without probing (0 before the first probe).
  [[nodiscard]] int known_count() const noexcept { return count_.load(std::memory_order_acquire); }

  no_device_status no_device() {
    init();
    std::lock_guard<std::mutex> lock(init_mu_);
    return {reason_kind_, reason_};
  }

  /// Probes the runtime again at the next query (the simulated machine was reconfigured).
  void reinitialize() {
    std::lock_guard<std::mutex> lock(init_mu_);
    inited_.store(false, std::memory_order_release);
  }

  void require() {
    if (count() == 0) {
      const no_device_status why = no_device();
      fail(why.kind, why.reason);
    }
  }

  /// The calling thread's current device.
  int current() {
    require();
    int dev = 0;
    check(gpuGetDevice(&dev), GTS_GPU_FN(GetDevice));
    return dev;
  }

  dev_info& info(int dev) { return devices_[static_cast<std::size_t>(dev)]; }

  [[nodiscard]] bool used(int dev) const {
    return dev < 64 && ((used_mask_.load(std::memory_order_relaxed) >> dev) & 1u) != 0;
  }
  void mark_used(int dev) {
    if (dev >= 0 && dev < 64) used_mask_.fetch_or(uint64_t(1) << dev, std::memory_order_relaxed);
  }

 private:
  // Asks the runtime (once, or again after reinitialize()) what devices there are.
  void init() noexcept {
    if (inited_.load(std::memory_order_acquire)) return;
    try {
      std::lock_guard<std::mutex> lock(init_mu_);
      if (inited_.load(std::memory_order_relaxed)) return;
      probe();
      inited_.store(true, std::memory_order_release);
    } catch (...) {
      // A string allocation failed: report no device rather than terminate.
    }
  }

  void probe() {
    reason_.clear();
    reason_kind_ = error_kind::no_device;
    int n = 0;
    const gpuError_t e = gpuGetDeviceCount(&n);
    if (e != gpuSuccess || n <= 0) {
      (void)gpuGetLastError();
      count_.store(0, std::memory_order_release);
      reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + GTS_GPU_FN(GetDeviceCount) +
                (e != gpuSuccess ? " returned " + error_text(e) : std::string(" found 0 devices"));
#if defined(GTS_GPU_RUNTIME_VERSION)
      int driver = 0;
      if (gpuDriverGetVersion(&driver) != gpuSuccess) driver = 0;
      (void)gpuGetLastError();
      const int built = GTS_GPU_RUNTIME_VERSION;
      if (e == gpuErrorInsufficientDriver && driver > 0 && driver < built) {
        // A GPU is probably there, and the fix is known: say so, with both versions.
        reason_kind_ = error_kind::driver_too_old;
        reason_ = std::string("no usable ") + GTS_GPU_LABEL + " device: the driver supports CUDA " +
                  cuda_version_text(driver) + ", but this gtstorage was built with CUDA " +
                  cuda_version_text(built) + ", which needs a driver for CUDA " +
                  cuda_version_text(built) + " or newer" +
                  (built >= 13000   ? " (Linux driver branch 580 or later)"
                   : built >= 12000 ? " (Linux driver branch 525 or later)"
                                    : "") +
                  "; update the driver, or build gtstorage with a CUDA Toolkit no newer than " +
                  cuda_version_text(driver) + " (docs/gpu-validation.md, \"Driver floor\")";
      } else if (e == gpuErrorInsufficientDriver && driver == 0) {
        reason_ += " (no driver is installed)";
      }
#endif
      if (const char* v = std::getenv(GTS_GPU_VISIBLE_ENV)) {
        if (e == gpuErrorNoDevice || e == gpuSuccess) {
          reason_ += std::string(" (" GTS_GPU_VISIBLE_ENV "='") + v + "')";
        }
      }
      // The runtime's own account of a machine without devices (the emulated machine's
      // configuration), if it has one.
      const std::string why = gpu_no_device_reason(e);
      if (!why.empty()) reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + why;
      return;
    }
    n = std::min(n, max_tracked_devices);
    for (int dev = 0; dev < n; ++dev) {
      dev_info& d = devices_[static_cast<std::size_t>(dev)];
      int v = 0;
      d.sms = gpuDeviceGetAttribute(&v, gpuDevAttrMultiProcessorCount, dev) == gpuSuccess && v > 0
                  ? v
                  : 1;
      v = 0;
      d.pools =
          gpuDeviceGetAttribute(&v, gpuDevAttrMemoryPoolsSupported, dev) == gpuSuccess && v != 0;
      v = 0;
      d.concurrent_managed =
          gpuDeviceGetAttribute(&v, gpuDevAttrConcurrentManagedAccess, dev) == gpuSuccess && v != 0;
      v = 0;
      d.max_pitch = gpuDeviceGetAttribute(&v, gpuDevAttrMaxPitch, dev) == gpuSuccess && v > 0
                        ? static_cast<std::size_t>(v)
                        : std::size_t(INT32_MAX);
      (void)gpuGetLastError();
    }
    count_.store(n, std::memory_order_release);
  }

  std::atomic<bool> inited_{false};
  std::mutex init_mu_;
  std::atomic<int> count_{0};
  std::string reason_;
  error_kind reason_kind_ = error_kind::no_device;
  std::array<dev_info, max_tracked_devices> devices_;
  std::atomic<uint64_t> used_mask_{0};
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
