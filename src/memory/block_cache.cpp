// Block cache (see block_cache.hpp for the rules and the why).
#include "memory/block_cache.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define GTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GTS_ASAN 1
#endif
#endif
#ifdef GTS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace gts {
namespace {

// Cached host memory is poisoned for AddressSanitizer (device memory is not addressable here;
// the simulated runtime poisons its own pool blocks).
void poison(const block_cache::block& b, bool on) noexcept {
#ifdef GTS_ASAN
  if (b.flags & 0x80000000u) return;  // not host-addressable (see host_allocator.cpp)
  if (on) {
    ASAN_POISON_MEMORY_REGION(b.ptr, b.bytes);
  } else {
    ASAN_UNPOISON_MEMORY_REGION(b.ptr, b.bytes);
  }
#else
  (void)b, (void)on;
#endif
}

}  // namespace

block_cache::block_cache(release_fn release, int64_t limit) noexcept : release_(release) {
  c_.limit_bytes = std::max<int64_t>(limit, 0);
}

block_cache::~block_cache() {
  // Static destruction at process exit: the memory goes back with the process; freeing device
  // memory here could call into an already unloaded runtime.
}

bool block_cache::take(std::size_t bytes, std::size_t fresh_bytes, std::size_t alignment,
                       int device, block& out) noexcept {
  const std::size_t want = std::max(bytes, fresh_bytes);
  const std::size_t most = want + want / 8;  // the waste bound
  const std::lock_guard<std::mutex> lock(mu_);
  for (auto it = blocks_.lower_bound(want); it != blocks_.end() && it->first <= most; ++it) {
    const block& b = it->second.b;
    if (b.device == device && b.alignment >= alignment && b.alignment % alignment == 0) {
      out = b;
      c_.held_bytes -= static_cast<int64_t>(b.bytes);
      c_.held_blocks -= 1;
      c_.in_use_bytes += static_cast<int64_t>(b.bytes);
      c_.hits += 1;
      blocks_.erase(it);
      poison(out, false);
      return true;
    }
  }
  c_.misses += 1;
  return false;
}

bool block_cache::put(const block& b) noexcept {
  std::vector<block> victims;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    const auto size = static_cast<int64_t>(b.bytes);
    if (size > c_.limit_bytes) return false;
    try {
      blocks_.emplace(b.bytes, entry{b, seq_++});
    } catch (...) {
      return false;  // no memory for the map node: the caller frees the block instead
    }
    poison(b, true);
    c_.held_bytes += size;
    c_.held_blocks += 1;
    c_.in_use_bytes -= size;
    if (c_.held_bytes > c_.limit_bytes) evict_locked(c_.limit_bytes, victims);
  }
  free_all(victims);
  return true;
}

void block_cache::allocated(std::size_t bytes) noexcept {
  const std::lock_guard<std::mutex> lock(mu_);
  c_.in_use_bytes += static_cast<int64_t>(bytes);
  c_.high_water_bytes = std::max(c_.high_water_bytes, c_.in_use_bytes + c_.held_bytes);
}

void block_cache::released(std::size_t bytes) noexcept {
  const std::lock_guard<std::mutex> lock(mu_);
  c_.in_use_bytes -= static_cast<int64_t>(bytes);
}

void block_cache::evict_locked(int64_t keep, std::vector<block>& victims) {
  while (c_.held_bytes > keep && !blocks_.empty()) {
    auto oldest = blocks_.begin();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (it->second.seq < oldest->second.seq) oldest = it;
    }
    try {
      victims.push_back(oldest->second.b);
    } catch (...) {
      return;  // cannot record it: keep it cached (freed by a later trim)
    }
    c_.held_bytes -= static_cast<int64_t>(oldest->second.b.bytes);
    c_.held_blocks -= 1;
    c_.evictions += 1;
    blocks_.erase(oldest);
  }
}

void block_cache::free_all(const std::vector<block>& victims) noexcept {
  for (const block& b : victims) {
    poison(b, false);
    release_(b);
  }
}

int64_t block_cache::trim(int64_t keep_bytes) noexcept {
  std::vector<block> victims;
  int64_t freed = 0;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    const int64_t before = c_.held_bytes;
    evict_locked(std::max<int64_t>(keep_bytes, 0), victims);
    freed = before - c_.held_bytes;
  }
  free_all(victims);
  return freed;
}

void block_cache::set_limit(int64_t limit) noexcept {
  std::vector<block> victims;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    c_.limit_bytes = std::max<int64_t>(limit, 0);
    evict_locked(c_.limit_bytes, victims);
  }
  free_all(victims);
}

pool_counters block_cache::counters() const noexcept {
  const std::lock_guard<std::mutex> lock(mu_);
  return c_;
}

void block_cache::reset_counters() noexcept {
  const std::lock_guard<std::mutex> lock(mu_);
  c_.hits = 0;
  c_.misses = 0;
  c_.evictions = 0;
  c_.high_water_bytes = c_.in_use_bytes + c_.held_bytes;
}

int64_t physical_memory_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * page;
}

int64_t pool_limit_from_environment(int64_t default_bytes) noexcept {
  if (const char* on = std::getenv("GTSTORAGE_POOL"); on != nullptr) {
    if (std::strcmp(on, "0") == 0 || strcasecmp(on, "off") == 0 || strcasecmp(on, "no") == 0 ||
        strcasecmp(on, "false") == 0) {
      return 0;
    }
  }
  const char* text = std::getenv("GTSTORAGE_POOL_LIMIT");
  if (text == nullptr || *text == '\0') return default_bytes;
  // strtoull accepts a sign after leading blanks (" -5" would wrap to a huge limit): a value
  // with a '-' anywhere is not a size.
  if (std::strchr(text, '-') != nullptr) return default_bytes;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text) return default_bytes;
  int shift = 0;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case '\0':
      break;
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      return default_bytes;
  }
  if (shift != 0) {
    const char* unit = end + 1;  // "", "B" or "iB" may follow the letter
    if (*unit != '\0' && strcasecmp(unit, "B") != 0 && strcasecmp(unit, "iB") != 0) {
      return default_bytes;
    }
  }
  if (value > (static_cast<unsigned long long>(INT64_MAX) >> shift)) return INT64_MAX;
  return static_cast<int64_t>(value << shift);
}

}  // namespace gts
