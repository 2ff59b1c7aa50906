// A cache of released memory blocks, reused by size (Umpire's pools, the caching allocators of
// CuPy and PyTorch): models and Python drivers allocate the same temporaries in every time step,
// and a fresh block costs page faults and kernel zeroing on the host (2.6x a write into reused
// memory for 268 MB) and a device-wide synchronization on a GPU.
//
// Rules (docs/memory-pools.md):
//  - reuse by best fit: the smallest cached block of at least the requested size, of the same
//    device and at least the requested (power-of-two) alignment, and at most 1/8 larger than
//    what a fresh allocation of the request would be (the waste bound), so a large block is never
//    split and never wastes more than 12.5%;
//  - a per-process limit on the bytes held (not in use): a release that would exceed it evicts
//    the least recently cached blocks; a block larger than the limit is not cached; limit 0 turns
//    the cache off;
//  - thread-safe (one mutex; the actual frees run outside it);
//  - under AddressSanitizer a cached block is poisoned, so a use after release is still caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace gts {

/// Which memory a cache holds (the values of gtstorage_memory; translated at the C boundary).
enum class pool_memory : int { host = 0, pinned_host = 1, device = 2 };

struct pool_counters {
  int64_t held_bytes = 0;        ///< Bytes of cached (released, not in use) blocks.
  int64_t held_blocks = 0;       ///< Number of cached blocks.
  int64_t in_use_bytes = 0;      ///< Bytes of blocks of this memory handed out and not released.
  int64_t high_water_bytes = 0;  ///< Peak of in_use_bytes + held_bytes.
  int64_t hits = 0;              ///< Requests served from the cache.
  int64_t misses = 0;            ///< Requests that allocated fresh memory.
  int64_t evictions = 0;         ///< Blocks freed by the limit or a trim.
  int64_t limit_bytes = 0;       ///< Current limit on held_bytes (0: caching off).
};

class block_cache {
 public:
  struct block {
    void* ptr = nullptr;
    std::size_t bytes = 0;      ///< Usable bytes at ptr.
    std::size_t alignment = 0;  ///< Power of two ptr is aligned to.
    int device = 0;             ///< Device ordinal (pinned/device memory), 0 for host memory.
    uint32_t flags = 0;         ///< Owner's bits (e.g. "came from mmap"), returned unchanged.
  };
  using release_fn = void (*)(const block&) noexcept;

  /// @p release frees a block for good; @p limit is the initial limit on held bytes.
  block_cache(release_fn release, int64_t limit) noexcept;
  ~block_cache();
  block_cache(const block_cache&) = delete;
  block_cache& operator=(const block_cache&) = delete;

  /// A cached block for a request of @p bytes (a fresh block would be @p fresh_bytes long) at
  /// @p alignment on @p device; counts a hit or a miss. The block leaves the cache.
  bool take(std::size_t bytes, std::size_t fresh_bytes, std::size_t alignment, int device,
            block& out) noexcept;
  /// Keeps @p b for reuse; false (nothing kept, the caller frees it and calls released())
  /// when caching is off or the block exceeds the limit.
  bool put(const block& b) noexcept;
  /// Accounting of blocks the owner allocated fresh (after a miss) and freed for good.
  void allocated(std::size_t bytes) noexcept;
  void released(std::size_t bytes) noexcept;
  /// Frees cached blocks, oldest first, until at most @p keep_bytes are held; returns the bytes
  /// freed.
  int64_t trim(int64_t keep_bytes) noexcept;
  /// Sets the limit on held bytes (trimming to it); 0 turns caching off and frees all.
  void set_limit(int64_t limit) noexcept;
  [[nodiscard]] pool_counters counters() const noexcept;
  /// Resets hits, misses, evictions and the high-water mark (held and in-use bytes are kept).
  void reset_counters() noexcept;

 private:
  struct entry {
    block b;
    uint64_t seq;  // insertion order: eviction frees the oldest first
  };
  // Requires the lock: removes the oldest blocks until held <= keep, into @p victims.
  void evict_locked(int64_t keep, std::vector<block>& victims);
  void free_all(const std::vector<block>& victims) noexcept;

  release_fn release_;
  mutable std::mutex mu_;
  std::multimap<std::size_t, entry> blocks_;  // by usable size: best fit is lower_bound
  uint64_t seq_ = 0;
  pool_counters c_;
};

/// The limit a cache starts with: GTSTORAGE_POOL=0/off gives 0 (no caching); else
/// GTSTORAGE_POOL_LIMIT (bytes, with an optional K/M/G/T suffix, powers of 1024) or, unset,
/// @p default_bytes. A malformed value is ignored (the default applies) rather than failing
/// every allocation.
int64_t pool_limit_from_environment(int64_t default_bytes) noexcept;

/// Physical memory of this machine in bytes (0 if unknown).
int64_t physical_memory_bytes() noexcept;

}  // namespace gts
