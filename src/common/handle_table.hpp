// Generation-checked handle table. A handle is (generation << 32 | slot + 1); a slot's
// generation is odd while live and bumped on release, so a released, reused or invented handle
// never matches. Slots live in fixed chunks that are never moved or freed, so lookups are
// lock-free (two atomic loads); only issuing and retiring handles takes the (spin) lock.
//
// A template over the owned type: the library's storages (capi/handle_table.hpp), the
// decompositions and exchanges of libgtstorage_mpi, and plain objects in the internal tests
// (tests/cpp/test_handle_table.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.hpp"

namespace gts {

/// The lock of the handle table's free list: its critical sections are a few instructions (pop
/// or push a slot index), where std::mutex's lock and unlock (two atomic read-modify-writes and
/// two calls) were a measurable part of a small create + release. Uncontended: one exchange to
/// lock, one release store to unlock. Contended: spins briefly, then yields the CPU.
class spin_mutex {
 public:
  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
  }

  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    lock_slow();
  }
  void unlock() noexcept {
    locked_.store(false, std::memory_order_release);
  }

 private:
  __attribute__((noinline)) void lock_slow() noexcept {
    for (int spins = 0;; ++spins) {
      // Test before test-and-set, so waiters only read the line the holder will write.
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 64) {
          cpu_relax();
          ++spins;
        } else {
          std::this_thread::yield();
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }
  std::atomic<bool> locked_{false};
};

/// @p Deleter destroys an object when its last reference is released (the library's storages
/// are recycled by theirs, storage.hpp).
template <class T, class Deleter = std::default_delete<T>>
class basic_handle_table {
 public:
  /// @p first_generation (odd) is the generation of each slot's first handle; tests start near
  /// the end of the 32-bit range to exercise its wrap.
  explicit basic_handle_table(uint32_t first_generation = 1)
      : fresh_state_(static_cast<uint64_t>(first_generation - 1) << 32) {
    if ((first_generation & 1u) == 0) fail_arg("first_generation", "must be odd");
  }
  basic_handle_table(const basic_handle_table&) = delete;
  basic_handle_table& operator=(const basic_handle_table&) = delete;
  ~basic_handle_table() {
    for (auto& c : chunks_) {
      slot* s = c.load(std::memory_order_relaxed);
      if (s == nullptr) break;
      for (uint32_t k = 0; k < chunk_size; ++k) {
        T* obj = s[k].object.load(std::memory_order_relaxed);
        if (obj != nullptr) Deleter{}(obj);
      }
      delete[] s;
    }
  }

  /// The process-wide table. Inline: every entry point calls it, and out of line it costs a call
  /// plus the guard check of the local static.
  static basic_handle_table& instance() {
    // Leaked on purpose: handles may still be released from static destructors of other objects.
    static basic_handle_table* const table = new basic_handle_table();
    return *table;
  }

  /// Issues a handle owning @p obj (reference count 1).
  uint64_t insert(std::unique_ptr<T> obj) {
    uint32_t i = 0;
    {
      const std::lock_guard<spin_mutex> lock(mutex_);
      if (!free_.empty()) {
        i = free_.back();
        free_.pop_back();
      } else {
        i = used_.load(std::memory_order_relaxed);
        if (i >= max_chunks * chunk_size) {
          fail(error_kind::out_of_memory,
               "handle table full (" + std::to_string(i) + " slots in use or retired)");
        }
        free_.reserve(i + 1);  // release() must not allocate; first, so a throw changes nothing
        if ((i & (chunk_size - 1)) == 0) {
          slot* chunk = new slot[chunk_size];
          for (uint32_t k = 0; k < chunk_size; ++k) {
            chunk[k].state.store(fresh_state_, std::memory_order_relaxed);
          }
          chunks_[i >> chunk_bits].store(chunk, std::memory_order_release);
        }
        used_.store(i + 1, std::memory_order_release);
      }
      ++live_;
    }
    slot& s = chunks_[i >> chunk_bits].load(std::memory_order_acquire)[i & (chunk_size - 1)];
    s.object.store(obj.release(), std::memory_order_relaxed);
    // even -> odd: live, with one reference
    const uint32_t gen = generation_of(s.state.load(std::memory_order_relaxed)) + 1;
    s.state.store((static_cast<uint64_t>(gen) << 32) | 1u, std::memory_order_release);
    return (static_cast<uint64_t>(gen) << 32) | (i + 1);
  }

  /// The object behind @p h; throws invalid_handle.
  T& get(uint64_t h) const { return *find(h)->object.load(std::memory_order_acquire); }

  void retain(uint64_t h) {
    slot* s = find(h);
    const uint32_t gen = static_cast<uint32_t>(h >> 32);
    uint64_t v = s->state.load(std::memory_order_relaxed);
    do {
      if (generation_of(v) != gen) bad_handle(h);  // released by another thread meanwhile
      if (refs_of(v) == 0xffffffffu) {
        fail(error_kind::overflow, "handle: " + std::to_string(h) + " has " +
                                       std::to_string(refs_of(v)) +
                                       " references, the most there can be");
      }
    } while (!s->state.compare_exchange_weak(v, v + 1, std::memory_order_relaxed));
  }

  /// Drops one reference; at zero the object is destroyed.
  void release(uint64_t h) {
    slot* s = find(h);
    const uint32_t gen = static_cast<uint32_t>(h >> 32);
    const uint64_t retired = static_cast<uint64_t>(static_cast<uint32_t>(gen + 1)) << 32;
    uint64_t v = s->state.load(std::memory_order_relaxed);
    uint64_t next = 0;
    do {
      if (generation_of(v) != gen) bad_handle(h);  // released by another thread meanwhile
      // The last reference retires the generation in the same step (odd -> even): from here on
      // every lookup of this handle fails, and no other release can also reach zero.
      next = refs_of(v) == 1 ? retired : v - 1;
    } while (!s->state.compare_exchange_weak(v, next, std::memory_order_acq_rel));
    if (next != retired) return;
    // Only the thread whose compare-and-swap retired the slot gets here, and the slot is not free
    // for reuse before the push below: a plain load and store (no locked exchange).
    T* obj = s->object.load(std::memory_order_acquire);
    s->object.store(nullptr, std::memory_order_relaxed);
    {
      const std::lock_guard<spin_mutex> lock(mutex_);
      --live_;
      // A slot whose generation would wrap around is never reused: its next handle would repeat
      // generations of 2^31 handles ago, and a stale one among them would be live again. (One
      // slot of 16 bytes per 2^31 handles.)
      if (gen != 0xffffffffu) free_.push_back(static_cast<uint32_t>((h & 0xffffffffu) - 1));
    }
    Deleter{}(obj);
  }

  int64_t refcount(uint64_t h) const {
    const uint64_t v = find(h)->state.load(std::memory_order_acquire);
    if (generation_of(v) != static_cast<uint32_t>(h >> 32)) bad_handle(h);
    return refs_of(v);
  }

  /// Handles issued and not yet released.
  int64_t live() const {
    const std::lock_guard<spin_mutex> lock(mutex_);
    return live_;
  }

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
    std::atomic<T*> object{nullptr};
  };
  static constexpr uint32_t generation_of(uint64_t state) {
    return static_cast<uint32_t>(state >> 32);
  }
  static constexpr uint32_t refs_of(uint64_t state) {
    return static_cast<uint32_t>(state & 0xffffffffu);
  }

  // Every query entry point starts here, so the lookup is inline and the failures (which
  // format a message) are out of line.
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
  [[noreturn]] __attribute__((cold, noinline)) void bad_handle(uint64_t h) const {
    const uint32_t index = static_cast<uint32_t>(h & 0xffffffffu);
    const uint32_t gen = static_cast<uint32_t>(h >> 32);
    const char* why = "was already released (stale handle)";
    if (h == 0) {
      why = "is not a handle (null)";
    } else if (index == 0 || index - 1 >= used_.load(std::memory_order_acquire) ||
               (gen & 1u) == 0) {
      why = "was never issued by this library";
    }
    fail(error_kind::invalid_handle, "handle: " + std::to_string(h) + " " + why);
  }

  const uint64_t fresh_state_;  // state of a never-used slot: generation first - 1, no refs
  std::atomic<slot*> chunks_[max_chunks] = {};
  std::atomic<uint32_t> used_{0};
  mutable spin_mutex mutex_;
  std::vector<uint32_t> free_;
  int64_t live_ = 0;  // guarded by mutex_ (taken anyway to issue and retire slots)
};

}  // namespace gts
