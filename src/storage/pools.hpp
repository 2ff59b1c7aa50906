// The memory pools as one thing for the C boundary: host pageable blocks (memory layer) and the
// active device backend's pinned-host and device pools, addressed by pool_memory.
#pragma once

#include <cstdint>

#include "memory/block_cache.hpp"

namespace gts {

/// Counters of the pool of @p memory.
pool_counters pool_stats(pool_memory memory);
/// Frees kept blocks of @p memory until at most @p keep_bytes are kept.
void pool_trim(pool_memory memory, int64_t keep_bytes);
/// Sets the limit on kept bytes of @p memory (0: not pooled).
void pool_set_limit(pool_memory memory, int64_t limit_bytes);
/// Resets hits, misses, evictions and high-water marks of every pool.
void pool_reset_counters();

}  // namespace gts
