// Part of the GPU backend (gpu_backend.inl): blocks from the runtime and the pools that keep
// them. Storages' pinned host memory comes from a block cache, their device memory from a
// stream-ordered pool per device (with a limit, docs/memory-pools.md), and staging buffers of
// layout-changing copies from a second pool per device that keeps its blocks mapped across
// synchronizations. Out of device memory, what the pools keep goes back to the device and the
// allocation is tried once more.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/errors.hpp"
#include "memory/block_cache.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

class gpu_pools {
 public:
  // Pinned blocks come page-aligned from the runtime; pooled requests need at most that.
  static constexpr std::size_t pinned_alignment = 4096;

  explicit gpu_pools(gpu_devices& devices) : devices_(devices) {}

  // ---- blocks from the runtime ----
  void* raw_allocate(std::size_t total, memory_kind kind, int dev) {
    device_guard g(dev);
    devices_.mark_used(dev);
    const char* fn = GTS_GPU_FN(Malloc);
    for (int attempt = 0;; ++attempt) {
      void* p = nullptr;
      gpuError_t e = gpuSuccess;
      switch (kind) {
        case memory_kind::device:
          e = gpuMalloc(&p, total);
          break;
        case memory_kind::unified:
          fn = GTS_GPU_FN(MallocManaged);
          e = gpuMallocManaged(&p, total, gpuMemAttachGlobal);
          break;
        case memory_kind::pinned_host:
          fn = GTS_GPU_FN(HostAlloc);
          e = gpuHostAlloc(&p, total, gpuHostAllocPortable);
          break;
      }
      if (e == gpuSuccess) return p;
      // Out of device memory: give back what the staging pool keeps, then try once more.
      if (e == gpuErrorMemoryAllocation && attempt == 0 && kind != memory_kind::pinned_host &&
          release_staging(dev)) {
        (void)gpuGetLastError();
        continue;
      }
      raise_error(e, std::string(fn) + " of " + std::to_string(total) + " bytes on device " +
                         std::to_string(dev));
    }
  }

  // Returns the staging pool's unused memory on @p dev (current) to the device; false if there
  // is no pool.
  bool release_staging(int dev) {
    gpuMemPool_t pool = nullptr;
    {
      dev_info& d = devices_.info(dev);
      std::lock_guard<std::mutex> lock(d.mu);
      pool = d.pool;
    }
    if (pool == nullptr) return false;
    // Frees still queued behind work return their blocks to the pool when that work is done.
    if (gpuDeviceSynchronize() != gpuSuccess) return false;
    return gpuMemPoolTrimTo(pool, 0) == gpuSuccess;
  }

  static void raw_free(void* base, memory_kind kind, int dev) noexcept {
    int prev = -1;
    if (gpuGetDevice(&prev) != gpuSuccess) prev = -1;
    const bool switch_dev = prev != dev && gpuSetDevice(dev) == gpuSuccess;
    const gpuError_t e = kind == memory_kind::pinned_host ? gpuFreeHost(base) : gpuFree(base);
    // Errors here (e.g. the runtime already unloaded at process exit) cannot be reported.
    if (e != gpuSuccess) (void)gpuGetLastError();
    if (switch_dev && prev >= 0 && gpuSetDevice(prev) != gpuSuccess) (void)gpuGetLastError();
  }

  // Device -> other device: pack the source on its own device (if it has gaps), bring its dense
  // span to the destination device, change the layout there (one peer memcpy straight into the

  // ---- storages' pinned host memory ----
  /// A block of at least @p want bytes of pinned memory for device @p dev: a kept one, else a new
  /// one. Sets @p usable to the block's size.
  void* take_pinned(std::size_t want, int dev, std::size_t& usable) {
    block_cache::block b;
    if (pinned_pool_.counters().limit_bytes > 0 &&
        pinned_pool_.take(want, want, pinned_alignment, dev, b)) {
      usable = b.bytes;
      return b.ptr;
    }
    void* base = raw_allocate(want, memory_kind::pinned_host, dev);
    pinned_pool_.allocated(want);
    usable = want;
    return base;
  }

  /// Keeps a block from take_pinned(), or frees it when the pool is full.
  void give_back_pinned(void* base, std::size_t usable, int dev) noexcept {
    block_cache::block b;
    b.ptr = base;
    b.bytes = usable;
    b.alignment = pinned_alignment;
    b.device = dev;
    if (pinned_pool_.put(b)) return;
    pinned_pool_.released(usable);
    raw_free(base, memory_kind::pinned_host, dev);
  }

  // ---- storages' device memory ----
  // The limit on device memory a storage pool keeps: set by gtstorage_pool_set_limit, else
  // GTSTORAGE_POOL / GTSTORAGE_POOL_LIMIT, else (-1) a quarter of each device's memory.
  int64_t device_pool_limit() noexcept {
    int64_t v = device_limit_.load(std::memory_order_relaxed);
    if (v == -2) {
      v = pool_limit_from_environment(-1);
      int64_t expected = -2;
      device_limit_.compare_exchange_strong(expected, v, std::memory_order_relaxed);
      v = device_limit_.load(std::memory_order_relaxed);
    }
    return v;
  }

  // The pool storages' device memory comes from on @p dev (null: not pooled, because the limit

  // The pool storages' device memory comes from on @p dev (null: not pooled, because the limit
  // is 0 or the device has no stream-ordered pools).
  gpuMemPool_t storage_pool_for(int dev) {
    const int64_t limit = device_pool_limit();
    if (limit == 0) return nullptr;
    dev_info& d = devices_.info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.storage_pool_tried) {
      d.storage_pool_tried = true;
      if (d.pools) {
        gpuDeviceProp prop{};
        const uint64_t total =
            gpuGetDeviceProperties(&prop, dev) == gpuSuccess ? prop.totalGlobalMem : 0;
        d.storage_pool = create_pool(dev, limit > 0 ? static_cast<uint64_t>(limit) : total / 4);
      }
    }
    return d.storage_pool;
  }

  /// @p total bytes from @p pool of device @p dev, freed later in the order of @p stream
  /// (give_back_device()); counted as a hit or a miss of the pool.
  void* take_device(std::size_t total, int dev, gpuMemPool_t pool, uint64_t stream) {
    device_guard g(dev);
    devices_.mark_used(dev);
    dev_info& d = devices_.info(dev);
    void* base = nullptr;
    std::lock_guard<std::mutex> lock(d.mu);
    uint64_t before = 0, after = 0;
    (void)gpuMemPoolGetAttribute(pool, gpuMemPoolAttrReservedMemCurrent, &before);
    gpuError_t e = gpuMallocFromPoolAsync(&base, total, pool, to_stream(stream));
    if (e == gpuErrorMemoryAllocation) {
      // Out of device memory: give back what the pools keep, then try once more.
      (void)gpuGetLastError();
      (void)gpuDeviceSynchronize();
      (void)gpuMemPoolTrimTo(pool, 0);
      (void)gpuGetLastError();
      e = gpuMallocFromPoolAsync(&base, total, pool, to_stream(stream));
    }
    if (e != gpuSuccess) {
      raise_error(e, std::string(GTS_GPU_FN(MallocFromPoolAsync)) + " of " + std::to_string(total) +
                         " bytes on device " + std::to_string(dev));
    }
    (void)gpuMemPoolGetAttribute(pool, gpuMemPoolAttrReservedMemCurrent, &after);
    (void)gpuGetLastError();
    (after > before ? d.pool_misses : d.pool_hits) += 1;
    return base;
  }

  /// Back to the device's pool behind the work queued on @p stream before the release; the
  /// block is reused only after that work (stream-ordered reuse).
  static void give_back_device(void* base, int dev, uint64_t stream) noexcept {
    int prev = -1;
    if (gpuGetDevice(&prev) != gpuSuccess) prev = -1;
    const bool switch_dev = prev != dev && gpuSetDevice(dev) == gpuSuccess;
    if (gpuFreeAsync(base, to_stream(stream)) != gpuSuccess) {
      (void)gpuGetLastError();
      if (gpuFreeAsync(base, nullptr) != gpuSuccess) {  // its stream is gone
        (void)gpuGetLastError();
        (void)gpuDeviceSynchronize();
        (void)gpuFree(base);
      }
    }
    (void)gpuGetLastError();
    if (switch_dev && prev >= 0) (void)gpuSetDevice(prev);
  }

  // ---- staging buffers ----
  // The library's staging pool on @p dev (null: the device has no pools, use cudaMalloc). Its
  // release threshold keeps freed blocks mapped across synchronizations; raw_allocate trims it
  // when device memory runs out.
  gpuMemPool_t staging_pool(int dev) {
    dev_info& d = devices_.info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.pool_tried) {
      d.pool_tried = true;
      if (d.pools) d.pool = create_pool(dev, staging_keep_bytes(dev));
    }
    return d.pool;
  }

  // ---- statistics and control ----
  pool_counters stats(pool_memory memory) noexcept {
    try {
      if (memory == pool_memory::pinned_host) return pinned_pool_.counters();
      pool_counters c;
      if (devices_.known_count() == 0) return c;
      c.limit_bytes = device_pool_limit();  // per device
      if (c.limit_bytes < 0) {
        gpuDeviceProp prop{};
        c.limit_bytes = gpuGetDeviceProperties(&prop, 0) == gpuSuccess
                            ? static_cast<int64_t>(prop.totalGlobalMem / 4)
                            : 0;
        (void)gpuGetLastError();
      }
      c.held_blocks = -1;  // the runtime does not say
      for (int dev = 0; dev < devices_.known_count(); ++dev) {
        dev_info& d = devices_.info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        uint64_t reserved = 0, used_now = 0, high = 0;
        device_guard g(dev);
        if (gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &reserved) !=
                gpuSuccess ||
            gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrUsedMemCurrent, &used_now) !=
                gpuSuccess ||
            gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemHigh, &high) !=
                gpuSuccess) {
          (void)gpuGetLastError();
          continue;
        }
        c.held_bytes += static_cast<int64_t>(reserved - std::min(reserved, used_now));
        c.in_use_bytes += static_cast<int64_t>(used_now);
        c.high_water_bytes += static_cast<int64_t>(high);
        c.hits += d.pool_hits;
        c.misses += d.pool_misses;
        c.evictions += d.pool_evictions;
      }
      return c;
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
    return {};
  }

  int64_t trim(pool_memory memory, int64_t keep_bytes) noexcept {
    try {
      if (memory == pool_memory::pinned_host) return pinned_pool_.trim(keep_bytes);
      int64_t freed = 0;
      for (int dev = 0; dev < devices_.known_count(); ++dev) {
        dev_info& d = devices_.info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        // The runtime releases only blocks whose stream-ordered free it has seen complete on
        // the host: a storage released just before (its cudaFreeAsync still queued, or run but
        // not yet observed) would stay reserved. A trim is rare and explicit: wait first.
        (void)gpuDeviceSynchronize();
        uint64_t before = 0, after = 0;
        (void)gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &before);
        (void)gpuMemPoolTrimTo(d.storage_pool, static_cast<std::size_t>(keep_bytes));
        (void)gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &after);
        (void)gpuGetLastError();
        if (before > after) {
          freed += static_cast<int64_t>(before - after);
          d.pool_evictions += 1;
        }
      }
      return freed;
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
    return 0;
  }

  void set_limit(pool_memory memory, int64_t limit_bytes) noexcept {
    try {
      if (memory == pool_memory::pinned_host) {
        pinned_pool_.set_limit(limit_bytes);
        return;
      }
      device_limit_.store(limit_bytes, std::memory_order_relaxed);
      for (int dev = 0; dev < devices_.known_count(); ++dev) {
        dev_info& d = devices_.info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        uint64_t keep = static_cast<uint64_t>(limit_bytes);
        (void)gpuMemPoolSetAttribute(d.storage_pool, gpuMemPoolAttrReleaseThreshold, &keep);
        (void)gpuDeviceSynchronize();  // as in pool_trim: queued frees become releasable
        (void)gpuMemPoolTrimTo(d.storage_pool, static_cast<std::size_t>(limit_bytes));
        (void)gpuGetLastError();
      }
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
  }

  void reset_counters() noexcept {
    try {
      pinned_pool_.reset_counters();
      for (int dev = 0; dev < devices_.known_count(); ++dev) {
        dev_info& d = devices_.info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        d.pool_hits = d.pool_misses = d.pool_evictions = 0;
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        uint64_t zero = 0;
        (void)gpuMemPoolSetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemHigh, &zero);
        (void)gpuGetLastError();
      }
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
  }

 private:
  // A stream-ordered pool of device memory on @p dev that keeps up to @p keep unused bytes
  // mapped; null when the runtime refuses.
  static gpuMemPool_t create_pool(int dev, uint64_t keep) {
    device_guard g(dev);
    gpuMemPoolProps props{};
    props.allocType = gpuMemAllocationTypePinned;
    props.location.type = gpuMemLocationTypeDevice;
    props.location.id = dev;
    gpuMemPool_t pool = nullptr;
    gpuMemPool_t made = nullptr;
    if (gpuMemPoolCreate(&pool, &props) == gpuSuccess &&
        gpuMemPoolSetAttribute(pool, gpuMemPoolAttrReleaseThreshold, &keep) == gpuSuccess) {
      made = pool;
    }
    (void)gpuGetLastError();
    return made;
  }

  // How much unused staging memory the pool keeps mapped across synchronizations:
  // GTSTORAGE_DEVICE_STAGING_KEEP bytes, by default a sixteenth of the device's memory, at most
  // 1 GiB (the largest layout-changing transfer of a typical field, without holding memory that
  // other libraries of the application may need).
  uint64_t staging_keep_bytes(int dev) {
    if (const char* env = std::getenv("GTSTORAGE_DEVICE_STAGING_KEEP")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0') return v;
    }
    gpuDeviceProp prop{};
    const uint64_t total =
        gpuGetDeviceProperties(&prop, dev) == gpuSuccess ? prop.totalGlobalMem : 0;
    (void)gpuGetLastError();
    return std::min<uint64_t>(total / 16, uint64_t(1) << 30);
  }

  static void release_pinned(const block_cache::block& b) noexcept {
    raw_free(b.ptr, memory_kind::pinned_host, b.device);
  }

  gpu_devices& devices_;
  block_cache pinned_pool_{release_pinned,
                           pool_limit_from_environment(physical_memory_bytes() / 8)};
  std::atomic<int64_t> device_limit_{-2};  // -2: not read yet; -1: a quarter of each device
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
