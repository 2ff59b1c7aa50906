// Pools (see pools.hpp). The device-side pools belong to the backend that allocated from them;
// the active backend is the one asked for statistics and limits (a switch of backends is only
// allowed with no device storage alive). A trim reaches every backend that has been active: a
// pinned host storage of the old backend released after a switch returns its block to that
// backend's pool, which a trim of "all memory" must empty too.
#include "storage/pools.hpp"

#include "device/allocation_registry.hpp"
#include "device/device_backend.hpp"
#include "memory/host_allocator.hpp"

namespace gts {
namespace {

void backend_trim(pool_memory memory, int64_t keep_bytes) {
  device::backend& current = device::active();
  current.allocations().pool_trim(memory, keep_bytes);
  for (device::backend* b : device::used_backends()) {
    if (b != &current) b->allocations().pool_trim(memory, keep_bytes);
  }
}

}  // namespace

pool_counters pool_stats(pool_memory memory) {
  if (memory == pool_memory::host) return host_pool().counters();
  return device::active().allocations().pool_stats(memory);
}

void pool_trim(pool_memory memory, int64_t keep_bytes) {
  if (memory == pool_memory::host) {
    host_pool().trim(keep_bytes);
  } else {
    backend_trim(memory, keep_bytes);
  }
}

void pool_set_limit(pool_memory memory, int64_t limit_bytes) {
  if (memory == pool_memory::host) {
    host_pool().set_limit(limit_bytes);
  } else {
    device::active().allocations().pool_set_limit(memory, limit_bytes);
  }
}

void pool_reset_counters() {
  host_pool().reset_counters();
  device::active().allocations().pool_reset_counters();
}

}  // namespace gts
