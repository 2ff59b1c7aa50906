// The emulated CUDA runtime: memory (mappings with guard pages and redzones, quarantine, pools,
// range checks).
#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

struct sigaction previous_segv {};

struct sigaction previous_bus {};

void install_fault_handler(runtime_state& s) {
  if (!s.fault_reports || s.fault_handler_installed) return;
  s.fault_handler_installed = true;
  struct sigaction sa {};
  sa.sa_sigaction = fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &previous_segv);
  sigaction(SIGBUS, &sa, &previous_bus);
}

allocation* find(runtime_state& s, const void* p) {
  const auto key = reinterpret_cast<uintptr_t>(p);
  auto it = s.allocs.upper_bound(key);
  if (it == s.allocs.begin()) return nullptr;
  --it;
  allocation* a = it->second.get();
  return key < it->first + a->map_bytes ? a : nullptr;
}

void add_live(runtime_state& s, allocation* a) {
  a->live = true;
  a->live_index = s.live.size();
  s.live.push_back(a);
}

void remove_live(runtime_state& s, allocation* a) {
  a->live = false;
  allocation* last = s.live.back();
  s.live[a->live_index] = last;
  last->live_index = a->live_index;
  s.live.pop_back();
}

allocation* map_block(runtime_state& s, std::size_t bytes, mem_kind kind, int device) {
  const std::size_t page = page_size();
  const std::size_t usable = round_up(bytes == 0 ? 1 : bytes, block_align);
  const std::size_t data = round_up(usable, page);
  if (usable < bytes || data < usable || data > (SIZE_MAX >> 1)) return nullptr;
  const std::size_t total = data + 2 * page;
  // Reserved inaccessible, then the data pages opened: the guard pages on both sides stay shut.
  void* m = nullptr;
  if (auto spare = s.spare_maps.find(total); spare != s.spare_maps.end()) {
    m = spare->second;
    s.spare_maps.erase(spare);
    s.spare_bytes -= total;
  } else {
    m = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
  }
  if (mprotect(static_cast<std::byte*>(m) + page, data, PROT_READ | PROT_WRITE) != 0) {
    munmap(m, total);
    return nullptr;
  }
  auto a = std::make_unique<allocation>();
  a->map = static_cast<std::byte*>(m);
  a->map_bytes = total;
  a->data_lo = a->map + page;
  a->data_hi = a->data_lo + data;
  a->user = a->data_hi - usable;
  a->bytes = bytes;
  a->usable = usable;
  a->kind = kind;
  a->device = device;
  std::memset(a->data_lo, redzone_byte, static_cast<std::size_t>(a->user - a->data_lo));
  std::memset(a->user, fresh_poison, bytes);
  std::memset(a->user + bytes, redzone_byte, usable - bytes);
  install_fault_handler(s);
  allocation* raw = a.get();
  add_live(s, raw);
  s.allocs[reinterpret_cast<uintptr_t>(m)] = std::move(a);
  return raw;
}

void retire_block(runtime_state& s, allocation* a, const char* how) {
  if (a->live) {  // a cached pool block is already poisoned and inaccessible
    std::memset(a->data_lo, freed_poison, static_cast<std::size_t>(a->data_hi - a->data_lo));
    mprotect(a->data_lo, static_cast<std::size_t>(a->data_hi - a->data_lo), PROT_NONE);
    remove_live(s, a);
  }
  a->freed_by = how;
  if (a->kind != mem_kind::pinned) s.devices[a->device].allocated -= a->usable;
  s.quarantine.push_back(a);
  s.quarantine_bytes += a->map_bytes;
  while (s.quarantine.size() > quarantine_max_entries ||
         s.quarantine_bytes > quarantine_max_bytes) {
    allocation* old = s.quarantine.front();
    s.quarantine.pop_front();
    s.quarantine_bytes -= old->map_bytes;
    const auto key = reinterpret_cast<uintptr_t>(old->map);
    if (s.spare_bytes + old->map_bytes <= spare_max_bytes) {
      s.spare_maps.emplace(old->map_bytes, old->map);
      s.spare_bytes += old->map_bytes;
    } else {
      munmap(old->map, old->map_bytes);
    }
    s.allocs.erase(key);
  }
}

void cache_block(runtime_state& s, allocation* a) {
  if (a->owner->destroyed) {  // its pool is gone: nothing will reuse it
    a->owner->used -= a->usable;
    a->owner->reserved -= a->usable;
    a->owner = nullptr;
    a->free_queued = false;
    retire_block(s, a, "cudaFreeAsync (its pool was destroyed)");
    return;
  }
  remove_live(s, a);
  a->free_queued = false;
  a->freed_by = "cudaFreeAsync";
  std::memset(a->data_lo, freed_poison, static_cast<std::size_t>(a->data_hi - a->data_lo));
  mprotect(a->data_lo, static_cast<std::size_t>(a->data_hi - a->data_lo), PROT_NONE);
  a->owner->used -= a->usable;
  a->owner->cached.push_back(a);
}

void trim_pool(runtime_state& s, pool& p, uint64_t keep) {
  std::sort(p.cached.begin(), p.cached.end(),
            [](const allocation* x, const allocation* y) { return x->usable < y->usable; });
  while (!p.cached.empty() && p.reserved > keep) {
    allocation* a = p.cached.back();
    p.cached.pop_back();
    p.reserved -= a->usable;
    a->owner = nullptr;
    retire_block(s, a, "cudaFreeAsync (released by its pool)");
    ++s.counts.pool_unmaps;
  }
}

void trim_device_pools(runtime_state& s, int device) {
  for (auto& [h, p] : s.pools) {
    if (p->device == device) trim_pool(s, *p, p->release_threshold);
  }
}

pool* new_pool(runtime_state& s, int device) {
  auto p = std::make_unique<pool>();
  p->device = device;
  pool* raw = p.get();
  s.pools[reinterpret_cast<CUmemPoolHandle_st*>(raw)] = std::move(p);
  return raw;
}

pool* default_pool(runtime_state& s, int device) {
  device_state& d = s.devices[device];
  if (d.default_pool == nullptr) d.default_pool = new_pool(s, device);
  return d.default_pool;
}

cudaError_t pool_alloc(runtime_state& s, pool& p, std::size_t bytes, void** out) {
  const std::size_t want = round_up(bytes == 0 ? 1 : bytes, block_align);
  allocation* best = nullptr;
  for (allocation* a : p.cached) {
    if (a->usable >= want && a->usable <= 2 * want + (std::size_t(64) << 10) &&
        (best == nullptr || a->usable < best->usable)) {
      best = a;
    }
  }
  if (best != nullptr) {
    p.cached.erase(std::find(p.cached.begin(), p.cached.end(), best));
    mprotect(best->data_lo, static_cast<std::size_t>(best->data_hi - best->data_lo),
             PROT_READ | PROT_WRITE);
    std::memset(best->data_lo, redzone_byte, static_cast<std::size_t>(best->user - best->data_lo));
    best->bytes = bytes;
    std::memset(best->user, fresh_poison, bytes);
    std::memset(best->user + bytes, redzone_byte, best->usable - bytes);
    add_live(s, best);
    best->freed_by = "";
  } else {
    device_state& d = s.devices[p.device];
    if (d.allocated + want > s.m.device_memory) return cudaErrorMemoryAllocation;
    best = map_block(s, bytes, mem_kind::pool, p.device);
    if (best == nullptr) return cudaErrorMemoryAllocation;
    best->owner = &p;
    d.allocated += best->usable;
    p.reserved += best->usable;
    p.reserved_high = std::max(p.reserved_high, p.reserved);
    ++s.counts.pool_maps;
  }
  p.used += best->usable;
  p.used_high = std::max(p.used_high, p.used);
  *out = best->user;
  return cudaSuccess;
}

range_check check_range(runtime_state& s, const void* p, std::size_t n) {
  range_check r;
  if (n == 0) return r;
  const auto* b = static_cast<const std::byte*>(p);
  if (allocation* a = find(s, p)) {
    r.a = a;
    if (!a->live) {
      r.kind = range_kind::freed;
    } else if (b >= a->user && n <= a->bytes &&
               b - a->user <= static_cast<ptrdiff_t>(a->bytes - n)) {
      r.kind = range_kind::inside;
    } else {
      r.kind = range_kind::out_of_bounds;
    }
    return r;
  }
  const auto key = reinterpret_cast<uintptr_t>(p);
  auto it = s.allocs.upper_bound(key);
  if (it != s.allocs.end() && it->first - key < n) {
    r.kind = it->second->live ? range_kind::out_of_bounds : range_kind::freed;
    r.a = it->second.get();
  }
  return r;
}

std::string describe(const range_check& r, const void* p, std::size_t n) {
  const allocation& a = *r.a;
  std::string where = "[" + hex(p) + ", +" + std::to_string(n) + ") ";
  const std::string block = std::to_string(a.bytes) + "-byte " + kind_name(a.kind) +
                            " allocation at " + hex(a.user) + " on device " +
                            std::to_string(a.device);
  if (r.kind == range_kind::freed) return where + "touches a " + block + " freed by " + a.freed_by;
  const auto* b = static_cast<const std::byte*>(p);
  if (b < a.user) {
    return where + "starts " + std::to_string(a.user - b) + " bytes before a " + block;
  }
  return where + "ends " + std::to_string((b + n) - (a.user + a.bytes)) +
         " bytes past the end of a " + block;
}

bool valid_range(runtime_state& s, const char* what, const char* role, const void* p,
                 std::size_t n) {
  const range_check r = check_range(s, p, n);
  if (r.kind == range_kind::host || r.kind == range_kind::inside) return true;
  report(s, std::string(what) + ": " + role + " " + describe(r, p, n));
  return false;
}

bool device_side(runtime_state& s, const void* p, std::size_t n) {
  return check_range(s, p, n).kind == range_kind::inside;
}

bool check_redzones(runtime_state& s, int device, uint64_t launch) {
  bool bad = false;
  for (allocation* ap : s.live) {
    allocation& a = *ap;
    if (a.kind != mem_kind::pinned && a.kind != mem_kind::managed && a.device != device) continue;
    const std::size_t lead = std::min<std::size_t>(checked_lead, a.user - a.data_lo);
    std::byte* lo = a.user - lead;
    std::byte* tail = a.user + a.bytes;
    const std::size_t tail_n = a.usable - a.bytes;
    auto scan = [&](std::byte* from, std::size_t n, bool before) {
      if (n == 0 || (static_cast<unsigned char>(from[0]) == redzone_byte &&
                     std::memcmp(from, from + 1, n - 1) == 0)) {
        return;  // all bytes equal the first, which is intact
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (static_cast<unsigned char>(from[i]) != redzone_byte) {
          const std::size_t distance = before ? lead - i : i + 1;
          report(s, "kernel launch #" + std::to_string(launch) + " on device " +
                        std::to_string(device) + " wrote into the redzone " +
                        std::to_string(distance) + " byte(s) " +
                        (before ? "before the start of" : "after the end of") + " a " +
                        std::to_string(a.bytes) + "-byte " + kind_name(a.kind) + " allocation at " +
                        hex(a.user));
          std::memset(from, redzone_byte, n);
          bad = true;
          return;
        }
      }
    };
    scan(lo, lead, true);
    scan(tail, tail_n, false);
  }
  return bad;
}

}  // namespace gts::emulated::impl
