// The allocation interface of a device backend: what it knows of the memory it and the runtime
// handed out (pointer queries, for wrapping foreign buffers; storage/storage_wrap) and the control
// of its pools (the public gtstorage_pool_* functions; storage/pools). Reached through
// backend::allocations(); every backend implements it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/device_types.hpp"
#include "device/interface.hpp"
#include "memory/block_cache.hpp"

namespace gts::device {

class allocation_registry : public interface {
 public:
  // ---- pointers ----
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
};

}  // namespace gts::device
