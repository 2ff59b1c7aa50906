#include "capi/handle_table.hpp"

#include <string>

#include "common/errors.hpp"

namespace gts {

void handle_table::bad_handle(uint64_t h) const {
  const uint32_t index = static_cast<uint32_t>(h & 0xffffffffu);
  const uint32_t gen = static_cast<uint32_t>(h >> 32);
  const char* why = "was already released (stale handle)";
  if (h == 0 || index == 0) {
    why = "is not a handle (null)";
  } else if (index - 1 >= used_.load(std::memory_order_acquire) || (gen & 1u) == 0) {
    why = "was never issued by this library";
  }
  fail(error_kind::invalid_handle, "handle: " + std::to_string(h) + " " + why);
}

uint64_t handle_table::insert(std::unique_ptr<storage> obj) {
  uint32_t i = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      i = used_.load(std::memory_order_relaxed);
      if (i >= max_chunks * chunk_size) {
        fail(error_kind::out_of_memory,
             "handle table full (" + std::to_string(i) + " live handles)");
      }
      free_.reserve(i + 1);  // release() must not allocate; first, so a throw changes nothing
      if ((i & (chunk_size - 1)) == 0) {
        chunks_[i >> chunk_bits].store(new slot[chunk_size], std::memory_order_release);
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

void handle_table::retain(uint64_t h) {
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

int64_t handle_table::live() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return live_;
}

int64_t handle_table::refcount(uint64_t h) const {
  const uint64_t v = find(h)->state.load(std::memory_order_acquire);
  if (generation_of(v) != static_cast<uint32_t>(h >> 32)) bad_handle(h);
  return refs_of(v);
}

void handle_table::release(uint64_t h) {
  slot* s = find(h);
  const uint32_t gen = static_cast<uint32_t>(h >> 32);
  uint64_t v = s->state.load(std::memory_order_relaxed);
  uint64_t next = 0;
  do {
    if (generation_of(v) != gen) bad_handle(h);  // released by another thread meanwhile
    // The last reference retires the generation in the same step (odd -> even): from here on
    // every lookup of this handle fails, and no other release can also reach zero.
    next = refs_of(v) == 1 ? static_cast<uint64_t>(gen + 1) << 32 : v - 1;
  } while (!s->state.compare_exchange_weak(v, next, std::memory_order_acq_rel));
  if (next != static_cast<uint64_t>(gen + 1) << 32) return;
  storage* obj = s->object.exchange(nullptr, std::memory_order_acq_rel);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    --live_;
    free_.push_back(static_cast<uint32_t>((h & 0xffffffffu) - 1));
  }
  delete obj;
}

}  // namespace gts
