// Generation-checked handle table. A handle is (generation << 32 | slot + 1); a slot's
// generation is odd while live and bumped on release, so a released, reused or invented handle
// never matches. Slots live in fixed chunks that are never moved or freed, so lookups are
// lock-free (two atomic loads); only issuing and retiring handles takes the mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "storage/storage.hpp"

namespace gts {

class handle_table {
 public:
  /// The process-wide table. Inline: every entry point calls it, and out of line it costs a call
  /// plus the guard check of the local static.
  static handle_table& instance() {
    // Leaked on purpose: handles may still be released from static destructors of other objects.
    static handle_table* const table = new handle_table();
    return *table;
  }

  /// Issues a handle owning @p s (reference count 1).
  uint64_t insert(std::unique_ptr<storage> s);
  /// The storage behind @p h; throws invalid_handle.
  storage& get(uint64_t h) const { return *find(h)->object.load(std::memory_order_acquire); }
  void retain(uint64_t h);
  /// Drops one reference; at zero the storage is destroyed.
  void release(uint64_t h);
  int64_t refcount(uint64_t h) const;
  /// Handles issued and not yet released.
  int64_t live() const;

 private:
  static constexpr uint32_t chunk_bits = 12;
  static constexpr uint32_t chunk_size = 1u << chunk_bits;
  static constexpr uint32_t max_chunks = 4096;

  // A slot's generation and reference count share one atomic word (generation << 32 | refs),
  // so a retain or release checks the generation and changes the count in one compare-and-swap:
  // two threads releasing the last reference at once cannot both succeed, and a release that
  // raced with a reuse of the slot cannot touch the new handle's count.
  struct slot {
    std::atomic<uint64_t> state{0};
    std::atomic<storage*> object{nullptr};
  };
  static constexpr uint32_t generation_of(uint64_t state) {
    return static_cast<uint32_t>(state >> 32);
  }
  static constexpr uint32_t refs_of(uint64_t state) {
    return static_cast<uint32_t>(state & 0xffffffffu);
  }

  // The query entry points spend most of their few nanoseconds here, so the lookup is inline
  // and the failures (which format a message) are out of line.
  slot* find(uint64_t h) const {
    const uint32_t index = static_cast<uint32_t>(h & 0xffffffffu);
    const uint32_t gen = static_cast<uint32_t>(h >> 32);
    const uint32_t i = index - 1;  // index 0 (and so h == 0) wraps to UINT32_MAX: never issued
    if (__builtin_expect(i >= used_.load(std::memory_order_acquire) || (gen & 1u) == 0, 0)) {
      bad_handle(h);
    }
    slot* s = &chunks_[i >> chunk_bits].load(std::memory_order_acquire)[i & (chunk_size - 1)];
    if (__builtin_expect(generation_of(s->state.load(std::memory_order_acquire)) != gen, 0)) {
      bad_handle(h);
    }
    return s;
  }
  /// Throws invalid_handle with the reason @p h is not live (null, never issued, or stale).
  [[noreturn]] __attribute__((cold, noinline)) void bad_handle(uint64_t h) const;

  std::atomic<slot*> chunks_[max_chunks] = {};
  std::atomic<uint32_t> used_{0};
  mutable std::mutex mutex_;
  std::vector<uint32_t> free_;
  int64_t live_ = 0;  // guarded by mutex_ (taken anyway to issue and retire slots)
};

}  // namespace gts
