// Part of the GPU backend (gpu_backend.inl): the allocation map. Every block the backend hands
// out is recorded under the pointer it returned, with its kind, device and where it goes back
// to (the runtime or a pool); the map also answers what a pointer is and which device it lives
// on. Alignment: the runtimes align device and managed blocks to 256 bytes and pinned blocks to
// pages; beyond that, a block is over-allocated and an aligned pointer into it handed out.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "common/errors.hpp"
#include "device/backend_tools.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

// Bytes to over-allocate for @p alignment (0 where the runtime's own alignment suffices). An
// alignment that is not a power of two (GT4Py allows 24 bytes for <f8) takes alignment - 1 extra
// bytes, as GT4Py does, and the offset comes from the address the runtime returned.
std::size_t alignment_extra(std::size_t alignment) {
  const bool power_of_two = (alignment & (alignment - 1)) == 0;
  return !power_of_two ? alignment - 1 : alignment > 256 ? alignment : 0;
}

// @p want plus @p extra bytes, or an overflow error naming the request.
std::size_t padded_size(std::size_t want, std::size_t extra, std::size_t bytes,
                        std::size_t alignment) {
  if (want > SIZE_MAX - extra) {
    fail(error_kind::overflow, "bytes: " + std::to_string(bytes) + " plus alignment " +
                                   std::to_string(alignment) + " overflows");
  }
  return want + extra;
}

// The first address at or after @p base that is a multiple of @p alignment.
uintptr_t align_up(void* base, std::size_t alignment) {
  const auto b = reinterpret_cast<uintptr_t>(base);
  const bool power_of_two = (alignment & (alignment - 1)) == 0;
  return power_of_two ? (b + alignment - 1) & ~(uintptr_t(alignment) - 1)
                      : b + (alignment - b % alignment) % alignment;
}

class gpu_memory {
 public:
  gpu_memory(backend& owner, gpu_devices& devices, gpu_pools& pools, usage_counters& usage)
      : owner_(owner), devices_(devices), pools_(pools), usage_(usage) {}

  void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind, int device_id) {
    if (alignment == 0) alignment = 256;
    const int dev = owner_.checked_device(device_id);
    const std::size_t want = bytes == 0 ? 1 : bytes;
    std::size_t extra = alignment_extra(alignment);
    for (int attempt = 0; attempt < 2; ++attempt) {
      const std::size_t total = padded_size(want, extra, bytes, alignment);
      void* base = pools_.raw_allocate(total, kind, dev);
      const uintptr_t a = align_up(base, alignment);
      if (a + want <= reinterpret_cast<uintptr_t>(base) + total) {
        return remember(a, record{base, bytes, kind, dev});
      }
      gpu_pools::raw_free(base, kind, dev);  // The runtime gave less alignment than documented.
      extra = alignment;
    }
    fail(error_kind::internal, "allocate: could not align a block to " + std::to_string(alignment));
  }

  void* allocate_pooled(std::size_t bytes, std::size_t alignment, memory_kind kind, int device_id,
                        uint64_t stream) {
    if (alignment == 0) alignment = 256;
    const bool power_of_two = (alignment & (alignment - 1)) == 0;
    if (kind == memory_kind::pinned_host && power_of_two &&
        alignment <= gpu_pools::pinned_alignment) {
      const int dev = owner_.checked_device(device_id);
      std::size_t usable = 0;
      void* base = pools_.take_pinned(bytes == 0 ? 1 : bytes, dev, usable);
      return remember(reinterpret_cast<uintptr_t>(base),
                      record{base, bytes, memory_kind::pinned_host, dev, true, usable, 0});
    }
    if (kind == memory_kind::device) {
      const int dev = owner_.checked_device(device_id);
      // A block larger than the limit is never kept (docs/memory-pools.md), so it does not come
      // from the pool either: released there, the runtime would keep it until the device's next
      // synchronization, above the limit (issue 23, F13).
      const int64_t limit = pools_.device_pool_limit();
      if (limit < 0 || bytes <= static_cast<uint64_t>(limit)) {
        if (gpuMemPool_t pool = pools_.storage_pool_for(dev)) {
          // Pool blocks are 256-byte aligned like cudaMalloc's; larger or odd alignments
          // over-allocate.
          const std::size_t total =
              padded_size(bytes == 0 ? 1 : bytes, alignment_extra(alignment), bytes, alignment);
          void* base = pools_.take_device(total, dev, pool, stream);
          return remember(align_up(base, alignment),
                          record{base, bytes, memory_kind::device, dev, true, total, stream});
        }
      }
    }
    return allocate(bytes, alignment, kind, device_id);
  }

  void free(void* ptr) noexcept {
    if (ptr == nullptr) return;
    record r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == allocs_.end()) return;
      r = it->second;
      allocs_.erase(it);
    }
    usage_.note_allocation(r.kind, -static_cast<int64_t>(r.bytes));
    if (r.pooled && r.kind == memory_kind::pinned_host) {
      pools_.give_back_pinned(r.base, r.usable, r.device);
    } else if (r.pooled) {
      gpu_pools::give_back_device(r.base, r.device, r.stream);
    } else {
      gpu_pools::raw_free(r.base, r.kind, r.device);
    }
  }

  pointer_info query_pointer(const void* ptr) noexcept {
    pointer_info pi;
    if (ptr == nullptr) return pi;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto key = reinterpret_cast<uintptr_t>(ptr);
      auto it = allocs_.upper_bound(key);
      if (it != allocs_.begin()) {
        --it;
        const record& r = it->second;
        if (key < it->first + (r.bytes == 0 ? 1 : r.bytes)) {
          pi.owned = true;
          pi.base = reinterpret_cast<void*>(it->first);
          pi.bytes = r.bytes;
          pi.device_id = r.device;
          pi.space = r.kind == memory_kind::device    ? pointer_space::device
                     : r.kind == memory_kind::unified ? pointer_space::unified
                                                      : pointer_space::pinned_host;
          return pi;
        }
      }
    }
    if (devices_.count() == 0) return pi;
    gpuPointerAttributes attr{};
    if (gpuPointerGetAttributes(&attr, ptr) != gpuSuccess) {
      (void)gpuGetLastError();  // Unregistered host memory on older runtimes.
      return pi;
    }
    switch (gpu_pointer_space(attr)) {
      case gpu_space::device:
        pi.space = pointer_space::device;
        pi.device_id = attr.device;
        devices_.mark_used(attr.device);  // waits on default streams include it from now on
        break;
      case gpu_space::unified:
        pi.space = pointer_space::unified;
        pi.device_id = attr.device;
        devices_.mark_used(attr.device);
        break;
      case gpu_space::pinned:
        pi.space = pointer_space::pinned_host;
        pi.device_id = attr.device;  // the device current when it was allocated
        break;
      case gpu_space::host:
        break;
    }
    return pi;
  }

  bool allocation_range(const void* ptr, const void** base, std::size_t* bytes) noexcept {
    if (ptr == nullptr) return false;
    const pointer_info pi = query_pointer(ptr);
    if (pi.owned) {
      *base = pi.base;
      *bytes = pi.bytes;
      return true;
    }
    if (pi.space == pointer_space::host) return false;  // no runtime range for host memory
    void* b = nullptr;
    std::size_t n = 0;
    if (gpu_address_range(ptr, &b, &n) != gpuSuccess) {
      (void)gpuGetLastError();
      return false;
    }
    *base = b;
    *bytes = n;
    return true;
  }

  // Device that @p p lives on: the allocation record, else the runtime, else the current one.
  int device_of(const void* p) {
    const pointer_info pi = query_pointer(p);
    int dev = pi.device_id;
    const int n = devices_.known_count();
    if (dev < 0 || dev >= n || pi.space == pointer_space::pinned_host) {
      dev = devices_.current();
      if (dev < 0 || dev >= n) dev = 0;
    }
    devices_.mark_used(dev);
    return dev;
  }

 private:
  struct record {
    void* base = nullptr;
    std::size_t bytes = 0;
    memory_kind kind = memory_kind::device;
    int device = 0;
    bool pooled = false;     // pinned: back to the block cache; device: cudaFreeAsync into its pool
    std::size_t usable = 0;  // pinned pooled: bytes of the block at base
    uint64_t stream = 0;     // device pooled: the stream the block is freed on
  };

  // Records the block handed out at @p address and counts its bytes.
  void* remember(uintptr_t address, const record& r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      allocs_[address] = r;
    }
    usage_.note_allocation(r.kind, static_cast<int64_t>(r.bytes));
    return reinterpret_cast<void*>(address);
  }

  backend& owner_;
  gpu_devices& devices_;
  gpu_pools& pools_;
  usage_counters& usage_;
  std::mutex mu_;
  std::map<uintptr_t, record> allocs_;
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
