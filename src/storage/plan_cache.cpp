#include "storage/plan_cache.hpp"

#include <cstddef>
#include <cstdint>
#include <new>

#include "common/tls.hpp"

namespace gts {
namespace {

// Room for the strings of a request in a key. A valid typestr has at most 4 characters ("<c16")
// and a preset name at most 31; dims of 16 labels fit in 63 ("I,J,K,0,1,…,12"). A request whose
// strings do not fit is planned without the memo.
constexpr std::size_t dtype_room = 8;
constexpr std::size_t preset_room = 32;
constexpr std::size_t dims_room = 64;
constexpr int entry_count = 8;

// Which pointers of the request are non-null: NULL and "" (or NULL and an array) plan
// differently, so presence is part of the key.
enum : uint32_t {
  has_dtype = 1,
  has_dims = 2,
  has_preset = 4,
  has_layout = 8,
  has_halo = 16,
  has_aligned_index = 32,
};

uint32_t presence_of(const plan_request& r) {
  return (r.dtype ? has_dtype : 0u) | (r.dims ? has_dims : 0u) | (r.preset ? has_preset : 0u) |
         (r.layout ? has_layout : 0u) | (r.halo ? has_halo : 0u) |
         (r.aligned_index ? has_aligned_index : 0u);
}

// @p key is NUL-terminated within its room, so the loop stops there at the latest, and reads
// @p s no further than its own terminator.
inline __attribute__((always_inline)) bool same_string(const char* s, const char* key) {
  for (std::size_t i = 0;; ++i) {
    if (s[i] != key[i]) return false;
    if (key[i] == '\0') return true;
  }
}

// Whether @p s (NULL: nothing to store) and its terminator fit in @p room bytes.
bool fits(const char* s, std::size_t room) {
  if (s == nullptr) return true;
  for (std::size_t i = 0; i < room; ++i) {
    if (s[i] == '\0') return true;
  }
  return false;
}

// Copies @p s with its terminator into @p key (fits() said it has room).
void copy_string(char* key, const char* s) {
  for (std::size_t i = 0;; ++i) {
    key[i] = s[i];
    if (s[i] == '\0') return;
  }
}

// One memoized request (its content) and its plan. Per-dimension arrays are meaningful for
// [0, ndim) only.
struct entry {
  bool valid = false;
  int ndim = 0;
  uint32_t presence = 0;
  uint64_t generation = 0;
  int64_t alignment_bytes = 0;
  pitch_padding padding = pitch_padding::none;
  // Initialized so that the memo has constant initialization: no guard on every thread_local
  // access (it is zero-filled thread-local storage anyway).
  int64_t shape[max_ndim] = {};
  int64_t halo[2 * max_ndim] = {};
  int64_t aligned_index[max_ndim] = {};
  int32_t layout[max_ndim] = {};
  char dtype[dtype_room] = {};
  char preset[preset_room] = {};
  char dims[dims_room] = {};
  // In a union for the same reason (allocation_plan leaves its arrays uninitialized); constructed
  // by placement new when the entry is filled. Trivially destructible.
  union plan_slot {
    constexpr plan_slot() : none(0) {}
    char none;
    allocation_plan plan;
  } slot;
  host_geometry_slot host_geometry;

  [[nodiscard]] __attribute__((always_inline)) bool matches(const plan_request& r,
                                                            uint32_t presence_r,
                                                            uint64_t gen) const {
    if (!valid || generation != gen || ndim != r.ndim || presence != presence_r ||
        alignment_bytes != r.alignment_bytes || padding != r.padding) {
      return false;
    }
    const int n = ndim;
    for (int d = 0; d < n; ++d) {
      if (shape[d] != r.shape[d]) return false;
    }
    if (r.layout != nullptr) {
      for (int d = 0; d < n; ++d) {
        if (layout[d] != r.layout[d]) return false;
      }
    }
    if (r.halo != nullptr) {
      for (int d = 0; d < 2 * n; ++d) {
        if (halo[d] != r.halo[d]) return false;
      }
    }
    if (r.aligned_index != nullptr) {
      for (int d = 0; d < n; ++d) {
        if (aligned_index[d] != r.aligned_index[d]) return false;
      }
    }
    return (r.dtype == nullptr || same_string(r.dtype, dtype)) &&
           (r.preset == nullptr || same_string(r.preset, preset)) &&
           (r.dims == nullptr || same_string(r.dims, dims));
  }

  /// Stores the content of @p r as the key; false (entry left invalid) if it does not fit.
  bool store_key(const plan_request& r, uint32_t presence_r, uint64_t gen) {
    if (r.ndim < 0 || r.ndim > max_ndim || (r.ndim > 0 && r.shape == nullptr) ||
        !fits(r.dtype, dtype_room) || !fits(r.preset, preset_room) || !fits(r.dims, dims_room)) {
      return false;
    }
    valid = false;
    host_geometry.valid = false;
    if (r.dtype != nullptr) copy_string(dtype, r.dtype);
    if (r.preset != nullptr) copy_string(preset, r.preset);
    if (r.dims != nullptr) copy_string(dims, r.dims);
    const int n = r.ndim;
    ndim = n;
    presence = presence_r;
    generation = gen;
    alignment_bytes = r.alignment_bytes;
    padding = r.padding;
    for (int d = 0; d < n; ++d) shape[d] = r.shape[d];
    if (r.layout != nullptr) {
      for (int d = 0; d < n; ++d) layout[d] = r.layout[d];
    }
    if (r.halo != nullptr) {
      for (int d = 0; d < 2 * n; ++d) halo[d] = r.halo[d];
    }
    if (r.aligned_index != nullptr) {
      for (int d = 0; d < n; ++d) aligned_index[d] = r.aligned_index[d];
    }
    return true;
  }
};

struct plan_memo {
  entry entries[entry_count];
  entry scratch;        // plans of requests that cannot be memoized (never matched)
  int last_hit = 0;     // searched first: a loop allocating one shape hits at once
  int next_victim = 0;  // round robin
};

// Per thread: no locking, and no sharing of plans between threads.
thread_local plan_memo memo;

}  // namespace

const allocation_plan& cached_plan(const plan_request& r, host_geometry_slot*& host_geometry) {
  plan_memo& m = tls_ref(memo);
  // Read before planning: a plan computed while a registration is under way is tagged with the
  // older generation, so it is stale as soon as the registration completes.
  const uint64_t gen = preset_generation();
  const uint32_t presence_r = presence_of(r);
  if (r.ndim >= 0 && r.ndim <= max_ndim && (r.ndim == 0 || r.shape != nullptr)) {
    entry& last = m.entries[m.last_hit];
    if (last.matches(r, presence_r, gen)) {
      host_geometry = &last.host_geometry;
      return last.slot.plan;
    }
    for (int i = 0; i < entry_count; ++i) {
      if (i != m.last_hit && m.entries[i].matches(r, presence_r, gen)) {
        m.last_hit = i;
        host_geometry = &m.entries[i].host_geometry;
        return m.entries[i].slot.plan;
      }
    }
  }
  const int victim = m.next_victim;
  entry& e = m.entries[victim];
  host_geometry = nullptr;
  if (!e.store_key(r, presence_r, gen)) {
    // make_plan throws for the invalid ones among these; the rest are planned each time.
    ::new (&m.scratch.slot.plan) allocation_plan(make_plan(r));
    return m.scratch.slot.plan;
  }
  ::new (&e.slot.plan) allocation_plan(make_plan(r));  // throws: the entry stays invalid
  e.valid = true;
  m.last_hit = victim;
  m.next_victim = (victim + 1) % entry_count;
  host_geometry = &e.host_geometry;
  return e.slot.plan;
}

const allocation_plan& cached_plan(const plan_request& r) {
  host_geometry_slot* unused = nullptr;
  return cached_plan(r, unused);
}

}  // namespace gts
