// Host memory for storages. Small blocks come from aligned operator new; blocks of 2 MiB and more
// are mmap'ed, 2 MiB-aligned and advised for transparent huge pages (a first touch of fresh memory
// then faults once per 2 MiB instead of once per 4 KiB), and are known to be zero on arrival so
// zeros() needs no fill pass.
#pragma once

#include <cstddef>

namespace gts {

struct host_block {
  void* ptr = nullptr;
  std::size_t bytes = 0;  ///< Usable bytes starting at ptr.
  /// Power of two the underlying block is aligned to: (ptr - shift) % alignment == 0.
  std::size_t alignment = 0;
  /// ptr - start of the underlying block: non-zero only for an alignment that is not a power of
  /// two, whose block is over-allocated and starts at the first multiple of it.
  std::size_t shift = 0;
  bool fresh_zero = false;  ///< Memory is known to read as zero (fresh anonymous mapping).
  bool mapped = false;      ///< Came from mmap (freed with munmap).
  bool pooled = false;      ///< Goes back to the host pool when freed (block_cache.hpp).
};

/// Allocates @p bytes at an address that is a multiple of @p alignment (any positive value; one
/// that is not a power of two costs alignment - 1 extra bytes): this thread's parked block when
/// it is the last small block freed here with that size and alignment, else with @p pooled a
/// block released earlier when one fits (host_pool()), which returns there when freed.
/// Throws gts::error (out_of_memory) on failure, naming the size.
host_block allocate_host(std::size_t bytes, std::size_t alignment, bool pooled = true);

/// Frees a block from allocate_host(); a default-constructed block is ignored.
void free_host(const host_block& block) noexcept;

class block_cache;
/// The cache of released pageable host blocks (limit: GTSTORAGE_POOL_LIMIT, default 1/8 of RAM).
block_cache& host_pool() noexcept;

/// Size from which blocks are mmap'ed and huge-page aligned.
inline constexpr std::size_t huge_page_bytes = std::size_t(2) << 20;

}  // namespace gts
