// Host allocator (see host_allocator.hpp for the why). Large blocks are mapped with room for
// alignment, then the unaligned head and the unused tail are unmapped again, so the block
// starts on a 2 MiB boundary and the kernel can back it with transparent huge pages. Small
// blocks come from the global operator new (so a host program's replacement is honoured),
// aligned by hand for alignments up to 4 KiB because that is several times faster than the
// aligned operator new.
#include "memory/host_allocator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "common/errors.hpp"
#include "common/tls.hpp"
#include "memory/block_cache.hpp"

namespace gts {
namespace {

// Small blocks up to this alignment carry their raw pointer in a header (see allocate_host).
constexpr std::size_t header_align_limit = 4096;

[[noreturn]] void out_of_memory(std::size_t bytes, std::size_t alignment, const char* why) {
  fail(error_kind::out_of_memory, "cannot allocate " + std::to_string(bytes) +
                                      " bytes of host memory (alignment " +
                                      std::to_string(alignment) + " bytes): " + why);
}

std::size_t page_size() {
  static const std::size_t size = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t(4096);
  }();
  return size;
}

// Rounds n up to a multiple of the power of two m; false if that overflows.
bool round_up(std::size_t n, std::size_t m, std::size_t* out) {
  if (n > SIZE_MAX - (m - 1)) return false;
  *out = (n + m - 1) & ~(m - 1);
  return true;
}

host_block allocate_mapped(std::size_t bytes, std::size_t alignment) {
  const std::size_t align = std::max({alignment, huge_page_bytes, page_size()});
  std::size_t length = 0;
  // Usable length is a whole number of huge pages so the tail page can be a huge page too.
  if (!round_up(bytes, huge_page_bytes, &length) || length > SIZE_MAX - align) {
    out_of_memory(bytes, alignment, "size exceeds the address space");
  }
  const std::size_t mapped = length + align;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) out_of_memory(bytes, alignment, std::strerror(errno));
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = (base + align - 1) & ~(uintptr_t(align) - 1);
  const std::size_t head = start - base;
  const std::size_t tail = mapped - head - length;
  // Trimming cannot fail for page-aligned ranges inside our own mapping; ignore the result so
  // a failure only leaves the slack mapped instead of losing the block.
  if (head != 0) munmap(raw, head);
  if (tail != 0) munmap(reinterpret_cast<void*>(start + length), tail);
  void* ptr = reinterpret_cast<void*>(start);
#ifdef MADV_HUGEPAGE
  // Advice only: without THP support the block is still valid, just backed by small pages.
  madvise(ptr, length, MADV_HUGEPAGE);
#endif
  host_block block;
  block.ptr = ptr;
  block.bytes = length;
  block.alignment = align;
  block.fresh_zero = true;  // anonymous mappings read as zero until written
  block.mapped = true;
  return block;
}

void release_block(const host_block& block) noexcept;
// A block leaving the caller (or a parked slot): to the pool if it is pooled, else freed.
void give_back(const host_block& block) noexcept;

// One small block per thread is kept when it is freed and handed out again to the next request
// of the same size and alignment on that thread, past the pool and its lock: a model's time loop
// creates and releases the same small temporaries over and over. The one create-path cache kept
// besides the plan memo and the pools, for the figure of docs/architecture.md ("The path of one
// call"). Not under AddressSanitizer, which would then miss a use after free.
#if defined(__SANITIZE_ADDRESS__)
#define GTS_PARK_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTS_PARK_BLOCKS 0
#endif
#endif
#ifndef GTS_PARK_BLOCKS
#define GTS_PARK_BLOCKS 1
#endif

constexpr std::size_t park_limit = std::size_t(64) << 10;

// Trivially destructible, so that an access is one TLS address computation (no guard); the
// thread-exit cleanup is the reaper below, constructed on the first park of each thread.
struct parked_block {
  host_block block{};       // ptr == nullptr: none parked
  bool reaper_set = false;  // this thread's reaper is registered
  bool dead = false;        // the reaper ran (thread exit): free directly from now on
};

#if GTS_PARK_BLOCKS
thread_local parked_block parked;

struct parked_reaper {
  parked_reaper() = default;
  parked_reaper(const parked_reaper&) = delete;
  parked_reaper& operator=(const parked_reaper&) = delete;
  ~parked_reaper() {
    parked_block& p = parked;
    p.dead = true;
    if (p.block.ptr != nullptr) give_back(p.block);
    p.block.ptr = nullptr;
  }
};
thread_local parked_reaper reaper;
#endif

#if GTS_PARK_BLOCKS
// Registers the reaper's destructor for this thread's exit (once; out of the fast path).
__attribute__((noinline)) void register_reaper(parked_block& p) noexcept {
  static_cast<void>(&reaper);
  p.reaper_set = true;
}
#endif

// Takes this thread's parked block if it is @p request bytes aligned to @p align.
bool take_parked(std::size_t request, std::size_t align, host_block& out) {
#if GTS_PARK_BLOCKS
  parked_block& p = tls_ref(parked);
  if (p.block.ptr != nullptr && p.block.bytes == request && p.block.alignment == align) {
    out = p.block;
    p.block.ptr = nullptr;
    return true;
  }
#else
  (void)request, (void)align, (void)out;
#endif
  return false;
}

// Parks @p block in this thread's slot (replacing a parked one, which is freed); false if the
// block is not a small heap block or the slot is gone.
bool park(const host_block& block) noexcept {
#if GTS_PARK_BLOCKS
  if (block.mapped || block.shift != 0 || block.bytes > park_limit ||
      block.alignment > header_align_limit) {
    return false;
  }
  parked_block& p = tls_ref(parked);
  if (p.dead) return false;
  if (!p.reaper_set) register_reaper(p);
  // A pooled block leaves the pool's books as it is parked: it is in no storage's use any more
  // (it stayed counted in the pool's in-use bytes, issue 23, F4), and from now on it is this
  // thread's unpooled block, freed directly when it leaves the slot. Only its first park costs
  // the pool's lock; a create + release loop then parks and takes it without the pool.
  if (block.pooled) host_pool().released(block.bytes);
  const host_block previous = p.block;
  p.block = block;
  p.block.pooled = false;
  p.block.fresh_zero = false;
  if (previous.ptr != nullptr) give_back(previous);
  return true;
#else
  (void)block;
  return false;
#endif
}

// allocate_host() without the parked block (out of line: the parked path stays small).
__attribute__((noinline)) host_block allocate_new(std::size_t bytes, std::size_t alignment) {
  if (alignment == 0) fail_arg("alignment", "must be positive, got 0");
  if ((alignment & (alignment - 1)) != 0) {
    // Not a power of two (GT4Py allows e.g. 24 bytes for <f8): no allocator aligns to that, so
    // over-allocate by alignment - 1 bytes, as GT4Py does, and start at the first multiple of
    // the alignment inside the block.
    if (bytes > SIZE_MAX - (alignment - 1)) {
      out_of_memory(bytes, alignment, "size exceeds the address space");
    }
    // Not pooled: the pool keeps blocks by their start, and this one is handed out shifted.
    host_block block = allocate_host(bytes + (alignment - 1), alignof(std::max_align_t), false);
    const auto raw = reinterpret_cast<uintptr_t>(block.ptr);
    const std::size_t shift = (alignment - raw % alignment) % alignment;
    block.ptr = static_cast<std::byte*>(block.ptr) + shift;
    block.bytes -= shift;
    block.shift = shift;
    return block;
  }
  if (bytes >= huge_page_bytes) return allocate_mapped(bytes, alignment);
  const std::size_t align = std::max(alignment, alignof(std::max_align_t));
  const std::size_t request = std::max<std::size_t>(bytes, 1);
  host_block block;
  block.alignment = align;
  block.bytes = request;
  if (align == alignof(std::max_align_t)) {
    block.ptr = ::operator new(request, std::nothrow);
  } else if (align <= header_align_limit) {
    // Over-allocate and keep the raw pointer just below the aligned one: the aligned operator
    // new (glibc's memalign) is several times slower for small blocks.
    void* raw = ::operator new(request + align + sizeof(void*), std::nothrow);
    if (raw != nullptr) {
      const uintptr_t aligned =
          (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + align - 1) & ~(uintptr_t(align) - 1);
      reinterpret_cast<void**>(aligned)[-1] = raw;
      block.ptr = reinterpret_cast<void*>(aligned);
    }
  } else {
    block.ptr = ::operator new(request, std::align_val_t(align), std::nothrow);
  }
  if (block.ptr == nullptr) out_of_memory(bytes, alignment, "operator new failed");
  return block;
}

// ---- the pool of released blocks (block_cache.hpp) ------------------------------------------
// Blocks from this size on are cached when released; smaller ones are served as fast by glibc's
// own caches (and by the parked block above).
constexpr std::size_t pool_min_bytes = 4096;
constexpr uint32_t flag_mapped = 1;

void release_cached(const block_cache::block& b) noexcept {
  host_block h;
  h.ptr = b.ptr;
  h.bytes = b.bytes;
  h.alignment = b.alignment;
  h.mapped = (b.flags & flag_mapped) != 0;
  release_block(h);
}

// The default limit on cached pageable memory: an eighth of the machine's memory (3 GiB of
// 24 GiB), enough for the temporaries of a time step of a large field set.
int64_t default_host_limit() noexcept {
  const int64_t phys = physical_memory_bytes();
  return phys > 0 ? phys / 8 : int64_t(1) << 30;
}

// Pooled blocks: unshifted (power-of-two alignment) and not tiny.
bool poolable(const host_block& b) {
  return b.shift == 0 && b.bytes >= pool_min_bytes;
}

// What allocate_new would hand out for this request (the cache's waste bound is relative to it).
std::size_t fresh_bytes(std::size_t bytes) {
  std::size_t rounded = bytes;
  if (bytes >= huge_page_bytes && !round_up(bytes, huge_page_bytes, &rounded)) return bytes;
  return rounded;
}

}  // namespace

block_cache& host_pool() noexcept {
  // Never destroyed: storages released by other static destructors or thread exits at process
  // end still find it, and the blocks it keeps stay reachable (not leaks) until the process ends.
  // Constructed in static storage (no allocation that could fail here).
  alignas(block_cache) static unsigned char place[sizeof(block_cache)];
  static block_cache* const pool =
      new (place) block_cache(release_cached, pool_limit_from_environment(default_host_limit()));
  return *pool;
}

namespace {

// allocate_host() past the parked block: a pooled block, else a new one (out of line, so the
// parked path of small creates stays a few instructions inside the caller).
__attribute__((noinline)) host_block allocate_unparked(std::size_t bytes, std::size_t alignment,
                                                       bool pooled, bool power_of_two) {
  if (pooled && power_of_two && bytes >= pool_min_bytes) {
    block_cache::block b;
    const std::size_t align = std::max(alignment, alignof(std::max_align_t));
    if (host_pool().take(bytes, fresh_bytes(bytes), align, 0, b)) {
      host_block h;
      h.ptr = b.ptr;
      h.bytes = b.bytes;
      h.alignment = b.alignment;
      h.mapped = (b.flags & flag_mapped) != 0;
      h.pooled = true;
      return h;  // fresh_zero false: it holds its last user's data
    }
  }
  host_block block = allocate_new(bytes, alignment);
  if (pooled && poolable(block)) {
    block.pooled = true;
    host_pool().allocated(block.bytes);
  }
  return block;
}

}  // namespace

// This thread's parked block when it fits the request exactly, else a pooled block of the size
// class, else a new block.
host_block allocate_host(std::size_t bytes, std::size_t alignment, bool pooled) {
  const bool power_of_two = alignment != 0 && (alignment & (alignment - 1)) == 0;
  if (bytes < huge_page_bytes && power_of_two) {
    host_block reused;
    if (take_parked(std::max<std::size_t>(bytes, 1), std::max(alignment, alignof(std::max_align_t)),
                    reused)) {
      return reused;
    }
  }
  return allocate_unparked(bytes, alignment, pooled, power_of_two);
}

void free_host(const host_block& block) noexcept {
  if (block.ptr == nullptr) return;
  if (park(block)) return;
  give_back(block);
}

namespace {

__attribute__((noinline)) void give_back(const host_block& block) noexcept {
  if (block.pooled) {
    block_cache::block b;
    b.ptr = block.ptr;
    b.bytes = block.bytes;
    b.alignment = block.alignment;
    b.flags = block.mapped ? flag_mapped : 0;
    if (host_pool().put(b)) return;
    host_pool().released(block.bytes);
  }
  release_block(block);
}

void release_block(const host_block& block) noexcept {
  void* const ptr = static_cast<std::byte*>(block.ptr) - block.shift;  // the block as allocated
  if (block.mapped) {
    munmap(ptr, block.bytes + block.shift);
  } else if (block.alignment == alignof(std::max_align_t)) {
    ::operator delete(ptr);
  } else if (block.alignment <= header_align_limit) {
    ::operator delete(reinterpret_cast<void**>(ptr)[-1]);
  } else {
    ::operator delete(ptr, std::align_val_t(block.alignment));
  }
}

}  // namespace

}  // namespace gts
