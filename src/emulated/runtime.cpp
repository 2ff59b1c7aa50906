// The simulated CUDA runtime (sim_runtime.hpp, sim_control.hpp).
//
// Model
// - Memory: every allocation is its own mapping, [guard page][redzone | block][guard page], the
//   block ending 256-byte aligned just before the upper guard page. Fresh memory holds 0xFF
//   (NaN, -1). Copies and memsets are checked against the allocation they touch when they are
//   queued and again when they run; kernels are checked by the guard pages (a fault) and by the
//   redzones, verified after every kernel. Freed memory is filled with 0xFD, made inaccessible
//   and kept reserved for a while (quarantine), so late accesses fault instead of landing in a
//   new allocation.
// - Work: every asynchronous call queues an operation on a stream; nothing runs until a host
//   call waits for it (stream/event/device synchronize, a synchronous copy, cudaFree) or a query
//   (which reports "not ready" first, then makes progress, so polling loops end). An operation
//   depends on the previous one of its stream and, on the legacy default stream, on every
//   blocking stream of its device (and vice versa), and on the events it was told to wait for.
//   Waiting runs the operation and its dependencies on the waiting host thread, outside the
//   runtime's lock, so independent streams can run on different host threads at once.
// - Errors: a call's own failure is returned and kept as the thread's last error; work that
//   fails when it runs (a memcheck violation, an injected asynchronous error) sets the device's
//   sticky error, which every later call on that device returns, as after a faulting kernel.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "device/sim/block_scheduler.hpp"
#include "device/sim/sim_control.hpp"
#include "device/sim/sim_runtime.hpp"

namespace gts::simcuda {
namespace {

constexpr int max_devices = 64;
constexpr unsigned char fresh_poison = 0xFF;
constexpr unsigned char freed_poison = 0xFD;
constexpr unsigned char redzone_byte = 0xCB;
constexpr std::size_t block_align = 256;
constexpr std::size_t checked_lead = 256;  // redzone bytes before a block verified after kernels
constexpr std::size_t quarantine_max_entries = 2048;
constexpr std::size_t quarantine_max_bytes = std::size_t(1) << 30;
constexpr std::size_t spare_max_bytes = std::size_t(256) << 20;
constexpr int n_call_classes = 9;

std::size_t page_size() {
  static const auto p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// ------------------------------------------------------------------------------------------------
// State

enum class mem_kind { device, managed, pinned, pool };

const char* kind_name(mem_kind k) {
  switch (k) {
    case mem_kind::device:
      return "device";
    case mem_kind::managed:
      return "managed";
    case mem_kind::pinned:
      return "pinned host";
    case mem_kind::pool:
      return "stream-ordered";
  }
  return "?";
}

struct pool;

struct allocation {
  std::byte* map = nullptr;  // the whole mapping, guard pages included
  std::size_t map_bytes = 0;
  std::byte* data_lo = nullptr;  // the accessible part, [data_lo, data_hi)
  std::byte* data_hi = nullptr;
  std::byte* user = nullptr;  // the block, [user, user + bytes); data_hi - user = usable
  std::size_t bytes = 0;
  std::size_t usable = 0;
  mem_kind kind = mem_kind::device;
  int device = 0;
  bool live = true;
  std::size_t live_index = 0;  // position in runtime_state::live while live
  bool free_queued = false;    // a cudaFreeAsync for it is queued
  bool free_refused = false;   // a free was refused: its device had a sticky error
  pool* owner = nullptr;       // pool blocks
  const char* freed_by = "";
};

struct pool {
  int device = 0;
  bool destroyed = false;
  uint64_t release_threshold = 0;
  std::size_t reserved = 0;  // bytes of the blocks the pool holds (handed out or cached)
  std::size_t used = 0;      // bytes of the blocks handed out
  std::size_t reserved_high = 0, used_high = 0;
  std::vector<allocation*> cached;
};

struct op;
using op_ptr = std::shared_ptr<op>;

enum class op_state { queued, running, done };

struct op {
  int device = 0;
  const char* what = "";
  std::vector<op_ptr> deps;
  std::function<cudaError_t()> work;  // runs outside the lock; an error becomes sticky
  bool bookkeeping = false;    // runs even on a failed device (a queued free must not be lost)
  uint64_t failures_seen = 0;  // the device's failure count when the op was queued
  op_state state = op_state::queued;
  std::chrono::steady_clock::time_point done_at{};
};

struct stream {
  int device = 0;
  unsigned flags = 0;
  bool legacy = false;
  bool destroyed = false;
  op_ptr last;
  [[nodiscard]] bool blocking() const { return !legacy && (flags & cudaStreamNonBlocking) == 0; }
  [[nodiscard]] bool idle() const { return !last || last->state == op_state::done; }
};

struct event {
  int device = 0;
  unsigned flags = 0;
  op_ptr marker;  // the op of the last record; null before the first
};

struct device_state {
  std::unique_ptr<stream> legacy;
  std::vector<stream*> blocking;  // blocking streams of the device, per-thread ones included
  cudaError_t sticky = cudaSuccess;
  uint64_t failures = 0;      // times the device got a sticky error (clear_failures keeps it)
  std::size_t allocated = 0;  // bytes of device, managed and pool blocks on it
  pool* default_pool = nullptr;
};

struct injection {
  int remaining = 0;  // 0 = none
  cudaError_t error = cudaSuccess;
  bool async = false;
};

struct runtime_state {
  std::mutex mu;
  std::condition_variable cv;
  control::machine m;
  std::string env_error;
  std::array<device_state, max_devices> devices;
  std::map<uintptr_t, std::unique_ptr<allocation>> allocs;  // by mapping start
  std::vector<allocation*> live;  // the live blocks (whose redzones kernels may touch)
  std::deque<allocation*> quarantine;
  std::size_t quarantine_bytes = 0;
  // Mappings that left the quarantine, kept for reuse by size (their pages stay populated, which
  // spares a program that allocates and frees small blocks in a loop the mmap/munmap and page
  // faults per block).
  std::multimap<std::size_t, std::byte*> spare_maps;
  std::size_t spare_bytes = 0;
  std::unordered_map<CUstream_st*, std::unique_ptr<stream>> streams;  // created, not destroyed
  std::vector<std::unique_ptr<stream>> retired;  // destroyed (or their thread exited), draining
  std::unordered_map<CUevent_st*, std::unique_ptr<event>> events;
  std::unordered_map<CUmemPoolHandle_st*, std::unique_ptr<pool>> pools;
  std::array<injection, n_call_classes> injections{};
  control::counters counts;
  std::deque<control::launch_record> launch_log;
  std::vector<std::string> reports;
  uint64_t launches = 0;
  uint64_t seed = 1;
  bool shuffle = true;
  bool eager = false;  // run queued work at once (see control::set_execution)
  bool fault_handler_installed = false;
  // Whether faults in guard pages and freed memory are explained before the process dies (the
  // SIGSEGV/SIGBUS handler): asked for by tests (control::set_fault_reports or
  // GTSTORAGE_SIM_FAULT_REPORTS=1), never installed behind a program's back.
  bool fault_reports = false;

  runtime_state() {
    for (int d = 0; d < max_devices; ++d) {
      devices[d].legacy = std::make_unique<stream>();
      devices[d].legacy->device = d;
      devices[d].legacy->legacy = true;
    }
  }
};

runtime_state* g_state = nullptr;  // for the fault handler

void load_environment(runtime_state& s);

runtime_state& state() {
  // Never destroyed: storages freed from static destructors may still call in.
  static runtime_state* const s = [] {
    auto* p = new runtime_state();
    load_environment(*p);
    g_state = p;
    return p;
  }();
  return *s;
}

thread_local int tls_device = 0;
thread_local cudaError_t tls_last_error = cudaSuccess;

cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess && e != cudaErrorNotReady) tls_last_error = e;
  return e;
}

// A stream or event handle that names nothing live (never created, or destroyed): refused here,
// and counted, since a real runtime may crash on one instead (control::counters::dead_handles).
cudaError_t dead_handle(runtime_state& s) {
  ++s.counts.dead_handles;
  return ret(cudaErrorInvalidResourceHandle);
}

// The per-thread default streams of the calling thread, one per device (created on first use;
// retired when the thread exits, their queued work still runs).
struct per_thread_streams {
  std::array<stream*, max_devices> s{};
  ~per_thread_streams() {
    runtime_state& st = state();
    std::lock_guard<std::mutex> lk(st.mu);
    for (stream* p : s) {
      if (p == nullptr) continue;
      p->destroyed = true;
    }
  }
};
thread_local per_thread_streams tls_streams;

cudaError_t init_error(const runtime_state& s) {
  if (s.m.driver_version <= 0 || s.m.driver_version < runtime_version) {
    return cudaErrorInsufficientDriver;
  }
  if (s.m.device_count <= 0) return cudaErrorNoDevice;
  return cudaSuccess;
}

bool valid_ordinal(const runtime_state& s, int d) {
  return d >= 0 && d < s.m.device_count;
}

cudaError_t device_error(const runtime_state& s, int d) {
  if (!valid_ordinal(s, d)) return cudaErrorInvalidDevice;
  return s.devices[d].sticky;
}

// Error injection: the configured call of this class fails (synchronously, or its work does).
struct injected {
  cudaError_t error = cudaSuccess;
  bool async = false;
};

injected inject(runtime_state& s, control::call_class c) {
  injection& in = s.injections[static_cast<int>(c)];
  if (in.remaining <= 0) return {};
  if (--in.remaining > 0) return {};
  return {in.error, in.async};
}

void report(runtime_state& s, const std::string& text) {
  ++s.counts.memcheck_errors;
  s.reports.push_back(text);
  std::fprintf(stderr, "simcuda memcheck: %s\n", text.c_str());
}

// ------------------------------------------------------------------------------------------------
// Memory

void fault_handler(int sig, siginfo_t* info, void* context);
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

// A new mapping holding a block of @p bytes (null if the system refuses).
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

// Ends a block's life: poisoned, inaccessible, quarantined (unmapped later).
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

// A pool block handed back: kept for reuse, inaccessible until then.
void retire_block(runtime_state& s, allocation* a, const char* how);

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

// Releases cached blocks above the pool's release threshold, as the real runtime does at a
// synchronization.
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

enum class range_kind { host, inside, out_of_bounds, freed };

struct range_check {
  range_kind kind = range_kind::host;
  allocation* a = nullptr;
};

// Where [p, p + n) lies: in ordinary host memory, inside a live block, or (an error) across a
// block's end, in its redzone, or in freed memory.
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

// True when [p, p + n) is fine for a copy: host memory or inside a live block. Otherwise
// reports it (memcheck) and returns false.
bool valid_range(runtime_state& s, const char* what, const char* role, const void* p,
                 std::size_t n) {
  const range_check r = check_range(s, p, n);
  if (r.kind == range_kind::host || r.kind == range_kind::inside) return true;
  report(s, std::string(what) + ": " + role + " " + describe(r, p, n));
  return false;
}

// Device-accessible memory for an explicit copy direction: a live block, or host memory only
// where the direction says host.
bool device_side(runtime_state& s, const void* p, std::size_t n) {
  return check_range(s, p, n).kind == range_kind::inside;
}

// Redzones of the blocks a kernel on @p device can reach; a changed byte means the kernel wrote
// outside a block. Restores them so each violation is reported once.
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

// ------------------------------------------------------------------------------------------------
// Streams and operations

stream* per_thread_stream(runtime_state& s, int device) {
  stream*& p = tls_streams.s[static_cast<std::size_t>(device)];
  if (p == nullptr || p->destroyed) {
    auto owned = std::make_unique<stream>();
    owned->device = device;
    owned->flags = cudaStreamDefault;  // blocking: ordered with the legacy stream
    p = owned.get();
    s.devices[device].blocking.push_back(p);
    // Owned by the retired list from the start: it is freed once its thread is gone and its
    // work has run.
    s.retired.push_back(std::move(owned));
  }
  return p;
}

// The stream a handle names (0 and 1: the current device's legacy stream; 2: the calling
// thread's per-thread stream on the current device); null with @p err set if it names none.
stream* resolve(runtime_state& s, cudaStream_t h, cudaError_t& err) {
  err = cudaSuccess;
  if (h == nullptr || h == cudaStreamLegacy || h == cudaStreamPerThread) {
    if (tls_device >= s.m.device_count) {
      err = cudaErrorInvalidDevice;
      return nullptr;
    }
    return h == cudaStreamPerThread ? per_thread_stream(s, tls_device)
                                    : s.devices[tls_device].legacy.get();
  }
  auto it = s.streams.find(h);
  if (it == s.streams.end()) {
    ++s.counts.dead_handles;
    err = cudaErrorInvalidResourceHandle;
    return nullptr;
  }
  return it->second.get();
}

op_ptr enqueue(runtime_state& s, stream& st, const char* what, std::function<cudaError_t()> work,
               const op_ptr& extra = nullptr) {
  auto o = std::make_shared<op>();
  o->device = st.device;
  o->failures_seen = s.devices[st.device].failures;
  o->what = what;
  o->work = std::move(work);
  auto depend = [&](const op_ptr& d) {
    if (d && d->state != op_state::done) o->deps.push_back(d);
  };
  depend(st.last);
  device_state& dev = s.devices[st.device];
  if (st.legacy) {
    for (stream* b : dev.blocking) depend(b->last);
  } else if (st.blocking()) {
    depend(dev.legacy->last);
  }
  depend(extra);
  st.last = o;
  return o;
}

// Runs @p target and everything it depends on (on this thread, outside the lock; waits where
// another thread is running one of them).
void complete(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& target) {
  if (!target) return;
  std::vector<op_ptr> todo{target};
  while (!todo.empty()) {
    op_ptr o = todo.back();
    if (o->state == op_state::done) {
      todo.pop_back();
      continue;
    }
    if (o->state == op_state::running) {
      s.cv.wait(lk);
      continue;
    }
    // Of the dependencies still pending, the last one first: an event or another stream's work
    // before the stream's own predecessor, so work that is ordered only by stream order and not
    // by the event it should have waited for runs in the wrong order and shows it.
    op_ptr dep;
    for (auto d = o->deps.rbegin(); d != o->deps.rend(); ++d) {
      if ((*d)->state != op_state::done) {
        dep = *d;
        break;
      }
    }
    if (dep) {
      todo.push_back(dep);
      continue;
    }
    o->state = op_state::running;
    std::function<cudaError_t()> work = std::move(o->work);
    // Work queued before the device failed never runs (bookkeeping does), also when a test
    // clears the failure (control::clear_failures) before anything waited for it: a GPU's
    // failed context does not come back with its queue.
    const device_state& od = s.devices[o->device];
    const bool dead =
        !o->bookkeeping && (od.sticky != cudaSuccess || od.failures != o->failures_seen);
    lk.unlock();
    cudaError_t e = cudaSuccess;
    if (!dead && work) {
      try {
        e = work();
      } catch (...) {  // out of memory in the simulator itself: the work failed
        e = cudaErrorLaunchFailure;
      }
    }
    lk.lock();
    if (e != cudaSuccess && s.devices[o->device].sticky == cudaSuccess) {
      s.devices[o->device].sticky = e;
      ++s.devices[o->device].failures;
    }
    o->state = op_state::done;
    o->done_at = std::chrono::steady_clock::now();
    o->deps.clear();
    ++s.counts.ops_executed;
    s.cv.notify_all();
    todo.pop_back();
  }
}

// In eager mode, queued work runs before the call that queued it returns (when what it depends
// on has run too): the opposite mistake from the deferred default, work that was queued before
// the host produced its input, then shows.
void run_if_eager(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& o) {
  if (s.eager) complete(lk, s, o);
}

// Frees retired streams whose work has run.
void prune_retired(runtime_state& s) {
  for (auto it = s.retired.begin(); it != s.retired.end();) {
    stream* p = it->get();
    if (!p->destroyed || !p->idle()) {
      ++it;
      continue;
    }
    auto& b = s.devices[p->device].blocking;
    b.erase(std::remove(b.begin(), b.end(), p), b.end());
    it = s.retired.erase(it);
  }
}

// The last operation of every stream of @p device (for device-wide waits). Ops, not streams:
// waiting releases the lock, and a stream may be destroyed meanwhile.
std::vector<op_ptr> last_ops_of(runtime_state& s, int device) {
  std::vector<op_ptr> v{s.devices[device].legacy->last};
  for (auto& [h, p] : s.streams) {
    if (p->device == device) v.push_back(p->last);
  }
  for (auto& p : s.retired) {
    if (p->device == device) v.push_back(p->last);
  }
  return v;
}

void complete_device(std::unique_lock<std::mutex>& lk, runtime_state& s, int device) {
  for (const op_ptr& last : last_ops_of(s, device)) complete(lk, s, last);
}

// The end of a synchronizing call: pools release memory above their thresholds, drained
// streams go, and the device's sticky error (an asynchronous failure) is reported.
cudaError_t after_sync(runtime_state& s, int device) {
  trim_device_pools(s, device);
  prune_retired(s);
  return s.devices[device].sticky;
}

// ------------------------------------------------------------------------------------------------
// Copies

struct copy_request {
  const char* what;
  void* dst;
  const void* src;
  std::size_t width;   // bytes per row
  std::size_t height;  // rows (1 for 1-D)
  std::size_t dpitch;  // bytes between rows
  std::size_t spitch;
};

cudaError_t copy_async(const copy_request& c, cudaMemcpyKind kind, cudaStream_t h, bool wait) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (c.width == 0 || c.height == 0) return cudaSuccess;
  if (c.dst == nullptr || c.src == nullptr) return ret(cudaErrorInvalidValue);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    return ret(cudaErrorInvalidValue);
  }
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) return ret(e);
  const injected inj = inject(s, control::call_class::memcpy);
  if (inj.error != cudaSuccess && !inj.async) return ret(inj.error);
  const std::size_t dspan = c.dpitch * (c.height - 1) + c.width;
  const std::size_t sspan = c.spitch * (c.height - 1) + c.width;
  if (!valid_range(s, c.what, "destination", c.dst, dspan) ||
      !valid_range(s, c.what, "source", c.src, sspan)) {
    return ret(cudaErrorInvalidValue);
  }
  const bool dst_dev = device_side(s, c.dst, dspan), src_dev = device_side(s, c.src, sspan);
  if ((kind == cudaMemcpyHostToDevice && !dst_dev) ||
      (kind == cudaMemcpyDeviceToHost && !src_dev) ||
      (kind == cudaMemcpyDeviceToDevice && (!dst_dev || !src_dev))) {
    return ret(cudaErrorInvalidMemcpyDirection);
  }
  const copy_request r = c;
  const cudaError_t async_error = inj.async ? inj.error : cudaSuccess;
  op_ptr o = enqueue(s, *st, c.what, [r, dspan, sspan, async_error]() -> cudaError_t {
    runtime_state& rs = state();
    {
      std::lock_guard<std::mutex> g(rs.mu);
      if (async_error != cudaSuccess) return async_error;
      // The memory may have been freed since the copy was queued.
      if (!valid_range(rs, r.what, "destination (when it ran)", r.dst, dspan) ||
          !valid_range(rs, r.what, "source (when it ran)", r.src, sspan)) {
        return cudaErrorIllegalAddress;
      }
      ++(r.height == 1 ? rs.counts.memcpys : rs.counts.memcpy_2d);
    }
    for (std::size_t row = 0; row < r.height; ++row) {
      std::memmove(static_cast<std::byte*>(r.dst) + row * r.dpitch,
                   static_cast<const std::byte*>(r.src) + row * r.spitch, r.width);
    }
    return cudaSuccess;
  });
  // Host-to-host copies are synchronous in CUDA; so are the blocking calls. (The stream may be
  // destroyed while the lock is released: its device is kept first.)
  if (wait || (!dst_dev && !src_dev)) {
    const int device = st->device;
    complete(lk, s, o);
    return ret(after_sync(s, device));
  }
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

cudaError_t memset_async(void* dst, int value, std::size_t bytes, cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr) return ret(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) return ret(e);
  const injected inj = inject(s, control::call_class::memset);
  if (inj.error != cudaSuccess && !inj.async) return ret(inj.error);
  if (!valid_range(s, "cudaMemsetAsync", "destination", dst, bytes)) {
    return ret(cudaErrorInvalidValue);
  }
  if (!device_side(s, dst, bytes)) return ret(cudaErrorInvalidValue);  // host memory
  const cudaError_t async_error = inj.async ? inj.error : cudaSuccess;
  op_ptr o = enqueue(s, *st, "cudaMemsetAsync", [dst, value, bytes, async_error]() -> cudaError_t {
    runtime_state& rs = state();
    {
      std::lock_guard<std::mutex> g(rs.mu);
      if (async_error != cudaSuccess) return async_error;
      if (!valid_range(rs, "cudaMemsetAsync", "destination (when it ran)", dst, bytes)) {
        return cudaErrorIllegalAddress;
      }
      ++rs.counts.memsets;
    }
    std::memset(dst, value, bytes);
    return cudaSuccess;
  });
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Environment

const char* const class_names[n_call_classes] = {"alloc",        "memcpy",       "memset",
                                                 "launch",       "synchronize",  "stream_create",
                                                 "event_create", "event_record", "prefetch"};
const cudaError_t class_default_error[n_call_classes] = {
    cudaErrorMemoryAllocation,     cudaErrorInvalidValue,          cudaErrorInvalidValue,
    cudaErrorLaunchOutOfResources, cudaErrorLaunchFailure,         cudaErrorMemoryAllocation,
    cudaErrorMemoryAllocation,     cudaErrorInvalidResourceHandle, cudaErrorInvalidValue};

bool parse_int(const char* text, long long lo, long long hi, long long& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

// One "class:n[:error[:async]]" item of GTSTORAGE_SIM_FAIL.
bool parse_failure(runtime_state& s, const std::string& item) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = item.find(':', start);
    parts.push_back(item.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 4) return false;
  int c = -1;
  for (int k = 0; k < n_call_classes; ++k) {
    if (parts[0] == class_names[k]) c = k;
  }
  long long nth = 0, code = class_default_error[c < 0 ? 0 : c];
  if (c < 0 || !parse_int(parts[1].c_str(), 1, 1 << 30, nth)) return false;
  if (parts.size() >= 3 && !parts[2].empty() && !parse_int(parts[2].c_str(), 1, 1000, code)) {
    return false;
  }
  if (parts.size() == 4 && parts[3] != "async") return false;
  s.injections[c] =
      injection{static_cast<int>(nth), static_cast<cudaError_t>(code), parts.size() == 4};
  return true;
}

void load_environment(runtime_state& s) {
  s.m = control::machine{};
  s.env_error.clear();
  s.injections = {};
  s.seed = 1;
  s.shuffle = true;
  s.eager = false;
  auto bad = [&](const char* var, const char* value, const char* want) {
    if (s.env_error.empty()) {
      s.env_error = std::string(var) + "='" + value + "' is not " + want;
    }
  };
  long long v = 0;
  // An integer variable in [lo, hi], or a message saying what it should be.
  auto integer = [&](const char* var, long long lo, long long hi, const char* want, auto set) {
    const char* e = std::getenv(var);
    if (e == nullptr || *e == '\0') return;
    if (parse_int(e, lo, hi, v)) {
      set(v);
    } else {
      bad(var, e, want);
    }
  };
  integer("GTSTORAGE_EMULATED_DEVICES", 0, max_devices, "a device count (0..64)",
          [&](long long x) { s.m.device_count = static_cast<int>(x); });
  integer("GTSTORAGE_SIM_DRIVER_VERSION", 0, 1000000,
          "a CUDA version number such as 12040 (0 = no driver)",
          [&](long long x) { s.m.driver_version = static_cast<int>(x); });
  integer("GTSTORAGE_SIM_DEVICE_MEMORY", 1, 1ll << 50, "a size in bytes",
          [&](long long x) { s.m.device_memory = static_cast<std::size_t>(x); });
  integer("GTSTORAGE_SIM_MULTIPROCESSORS", 1, 1024, "a count (1..1024)",
          [&](long long x) { s.m.multiprocessors = static_cast<int>(x); });
  if (const char* e = std::getenv("GTSTORAGE_SIM_SEED"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "ordered") == 0) {
      s.shuffle = false;
    } else if (parse_int(e, 0, INT64_MAX, v)) {
      s.seed = static_cast<uint64_t>(v);
    } else {
      bad("GTSTORAGE_SIM_SEED", e, "a seed (a non-negative integer) or 'ordered'");
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_EXECUTION"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "eager") == 0 || std::strcmp(e, "deferred") == 0) {
      s.eager = std::strcmp(e, "eager") == 0;
    } else {
      bad("GTSTORAGE_SIM_EXECUTION", e, "'deferred' or 'eager'");
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_FAIL"); e != nullptr && *e != '\0') {
    std::string list = e;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string item = list.substr(start, comma - start);
      if (!parse_failure(s, item)) {
        bad("GTSTORAGE_SIM_FAIL", e,
            "a list of class:n[:error[:async]] (classes: alloc, memcpy, memset, launch, "
            "synchronize, stream_create, event_create, event_record, prefetch)");
        break;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (const char* e = std::getenv("GTSTORAGE_SIM_FAULT_REPORTS"); e != nullptr && *e != '\0') {
    if (std::strcmp(e, "0") == 0 || std::strcmp(e, "1") == 0) {
      s.fault_reports = e[0] == '1';
    } else {
      bad("GTSTORAGE_SIM_FAULT_REPORTS", e, "0 or 1");
    }
  }
  if (!s.env_error.empty()) s.m.device_count = 0;
}

// ------------------------------------------------------------------------------------------------
// Faults in guard pages and freed memory: say what was hit, then let the previous handler (or
// the default action) take the signal.

void write_str(const char* t) {
  ssize_t r = write(2, t, std::strlen(t));
  (void)r;
}

void fault_handler(int sig, siginfo_t* info, void* context) {
  runtime_state* s = g_state;
  if (s != nullptr && s->mu.try_lock()) {
    if (allocation* a = find(*s, info->si_addr)) {
      char msg[512];
      const auto* p = static_cast<const std::byte*>(info->si_addr);
      const char* where = p < a->data_lo    ? "in the guard page before"
                          : p >= a->data_hi ? "in the guard page after"
                                            : "inside";
      std::snprintf(msg, sizeof msg,
                    "simcuda memcheck: invalid access at %p %s a %s%zu-byte %s allocation at %p "
                    "on device %d%s%s%s\n",
                    info->si_addr, where, a->live ? "" : "freed ", a->bytes, kind_name(a->kind),
                    static_cast<void*>(a->user), a->device, a->live ? "" : " (freed by ",
                    a->live ? "" : a->freed_by, a->live ? "" : ")");
      write_str(msg);
      if (detail::in_kernel()) {
        std::snprintf(msg, sizeof msg,
                      "simcuda memcheck: by a kernel thread, blockIdx (%u,%u,%u) threadIdx "
                      "(%u,%u,%u)\n",
                      blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
        write_str(msg);
      }
    }
    s->mu.unlock();
  }
  // Chained: a handler the program had gets the signal as if this one were not there; without
  // one, the previous disposition is restored and the faulting access, executed again, takes
  // the default action (the process dies, as on a GPU).
  const struct sigaction& previous = sig == SIGBUS ? previous_bus : previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
      previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
    return;
  }
  sigaction(sig, &previous, nullptr);
}

void uninstall_fault_handler(runtime_state& s) {
  if (!s.fault_handler_installed) return;
  sigaction(SIGSEGV, &previous_segv, nullptr);
  sigaction(SIGBUS, &previous_bus, nullptr);
  s.fault_handler_installed = false;
}

const char* error_name(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError:
      return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration:
      return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidPitchValue:
      return "cudaErrorInvalidPitchValue";
    case cudaErrorInvalidDevicePointer:
      return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection:
      return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorStubLibrary:
      return "cudaErrorStubLibrary";
    case cudaErrorInsufficientDriver:
      return "cudaErrorInsufficientDriver";
    case cudaErrorDevicesUnavailable:
      return "cudaErrorDevicesUnavailable";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle:
      return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    case cudaErrorIllegalAddress:
      return "cudaErrorIllegalAddress";
    case cudaErrorLaunchOutOfResources:
      return "cudaErrorLaunchOutOfResources";
    case cudaErrorAssert:
      return "cudaErrorAssert";
    case cudaErrorHardwareStackError:
      return "cudaErrorHardwareStackError";
    case cudaErrorIllegalInstruction:
      return "cudaErrorIllegalInstruction";
    case cudaErrorMisalignedAddress:
      return "cudaErrorMisalignedAddress";
    case cudaErrorInvalidAddressSpace:
      return "cudaErrorInvalidAddressSpace";
    case cudaErrorInvalidPc:
      return "cudaErrorInvalidPc";
    case cudaErrorLaunchFailure:
      return "cudaErrorLaunchFailure";
    case cudaErrorNotSupported:
      return "cudaErrorNotSupported";
    case cudaErrorSystemDriverMismatch:
      return "cudaErrorSystemDriverMismatch";
    case cudaErrorCompatNotSupportedOnDevice:
      return "cudaErrorCompatNotSupportedOnDevice";
    case cudaErrorUnknown:
      return "cudaErrorUnknown";
  }
  return "cudaErrorUnknown";
}

const char* error_string(cudaError_t e) {
  switch (e) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidPitchValue:
      return "invalid pitch argument";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorStubLibrary:
      return "CUDA driver is a stub library";
    case cudaErrorInsufficientDriver:
      return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorDevicesUnavailable:
      return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorAssert:
      return "device-side assert triggered";
    case cudaErrorHardwareStackError:
      return "hardware stack error";
    case cudaErrorIllegalInstruction:
      return "an illegal instruction was encountered";
    case cudaErrorMisalignedAddress:
      return "misaligned address";
    case cudaErrorInvalidAddressSpace:
      return "operation not supported on global/shared address space";
    case cudaErrorInvalidPc:
      return "invalid program counter";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
    case cudaErrorNotSupported:
      return "operation not supported";
    case cudaErrorSystemDriverMismatch:
      return "system has unsupported display driver / cuda driver combination";
    case cudaErrorCompatNotSupportedOnDevice:
      return "forward compatibility was attempted on non supported HW";
    case cudaErrorUnknown:
      return "unknown error";
  }
  return "unknown error";
}

}  // namespace

// ================================================================================================
// Runtime API

cudaError_t cudaGetDeviceCount(int* count) {
  runtime_state& s = state();
  if (count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *count = 0;
  if (const cudaError_t e = init_error(s)) return ret(e);
  *count = s.m.device_count;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  runtime_state& s = state();
  if (device == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  *device = tls_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!valid_ordinal(s, device)) return ret(cudaErrorInvalidDevice);
  tls_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  runtime_state& s = state();
  if (prop == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!valid_ordinal(s, device)) return ret(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "emulated device %d (simulated CUDA runtime)",
                device);
  prop->totalGlobalMem = s.m.device_memory;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = s.m.multiprocessors;
  prop->maxThreadsPerBlock = 1024;
  prop->concurrentManagedAccess = s.m.concurrent_managed_access ? 1 : 0;
  prop->memPitch = static_cast<std::size_t>(s.m.max_pitch);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!valid_ordinal(s, device)) return ret(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      return cudaSuccess;
    case cudaDevAttrMaxPitch:
      *value = static_cast<int>(std::min<int64_t>(s.m.max_pitch, INT32_MAX));
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = s.m.multiprocessors;
      return cudaSuccess;
    case cudaDevAttrConcurrentManagedAccess:
      *value = s.m.concurrent_managed_access ? 1 : 0;
      return cudaSuccess;
    case cudaDevAttrMemoryPoolsSupported:
      *value = s.m.memory_pools ? 1 : 0;
      return cudaSuccess;
  }
  return ret(cudaErrorInvalidValue);
}

cudaError_t cudaDriverGetVersion(int* version) {
  runtime_state& s = state();
  if (version == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *version = std::max(0, s.m.driver_version);
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return ret(cudaErrorInvalidValue);
  *version = runtime_version;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  ++s.counts.device_synchronizes;
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::synchronize); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  complete_device(lk, s, d);
  return ret(after_sync(s, d));
}

cudaError_t cudaGetLastError() {
  cudaError_t e = tls_last_error;
  tls_last_error = cudaSuccess;
  if (e == cudaSuccess) {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    if (tls_device < s.m.device_count) e = s.devices[tls_device].sticky;
  }
  return e;
}

cudaError_t cudaPeekAtLastError() {
  cudaError_t e = tls_last_error;
  if (e == cudaSuccess) {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    if (tls_device < s.m.device_count) e = s.devices[tls_device].sticky;
  }
  return e;
}

const char* cudaGetErrorString(cudaError_t error) {
  return error_string(error);
}

const char* cudaGetErrorName(cudaError_t error) {
  return error_name(error);
}

namespace {

cudaError_t allocate(void** ptr, std::size_t bytes, mem_kind kind) {
  runtime_state& s = state();
  if (ptr == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *ptr = nullptr;
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::alloc); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  if (bytes == 0) return cudaSuccess;
  const std::size_t usable = round_up(bytes, block_align);
  if (kind != mem_kind::pinned &&
      (usable < bytes || s.devices[d].allocated + usable > s.m.device_memory)) {
    return ret(cudaErrorMemoryAllocation);
  }
  allocation* a = map_block(s, bytes, kind, d);
  if (a == nullptr) return ret(cudaErrorMemoryAllocation);
  if (kind != mem_kind::pinned) s.devices[d].allocated += a->usable;
  *ptr = a->user;
  return cudaSuccess;
}

// cudaFree / cudaFreeHost: @p ptr must start a live block of one of @p kinds. Waits for the
// work on the devices that may use it first, as the real calls synchronize.
cudaError_t free_block(void* ptr, bool host) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (ptr == nullptr) return cudaSuccess;
  if (const cudaError_t e = init_error(s)) return ret(e);
  allocation* a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || (a->kind == mem_kind::pinned) != host) {
    if (a != nullptr && !a->live) {
      report(s, std::string(host ? "cudaFreeHost" : "cudaFree") + ": " + hex(ptr) +
                    " was already freed by " + a->freed_by);
    }
    return ret(cudaErrorInvalidValue);
  }
  if (a->free_queued) return ret(cudaErrorInvalidValue);
  if (host) {
    for (int d = 0; d < s.m.device_count; ++d) complete_device(lk, s, d);
  } else {
    if (const cudaError_t e = device_error(s, a->device)) {
      a->free_refused = true;  // the device failed: its memory is gone with its context
      return ret(e);
    }
    complete_device(lk, s, a->device);
    if (tls_device != a->device && tls_device < s.m.device_count)
      complete_device(lk, s, tls_device);
  }
  // Waiting released the lock: someone may have freed it meanwhile (and the record may even have
  // left the quarantine), so look it up again.
  a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || a->free_queued) {
    return ret(cudaErrorInvalidValue);
  }
  if (a->kind == mem_kind::pool && a->owner != nullptr) {
    cache_block(s, a);
  } else {
    retire_block(s, a, host ? "cudaFreeHost" : "cudaFree");
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  return allocate(ptr, bytes, mem_kind::device);
}

cudaError_t cudaFree(void* ptr) {
  return free_block(ptr, false);
}

cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned flags) {
  if (flags != cudaMemAttachGlobal && flags != 0x2 /* cudaMemAttachHost */) {
    return ret(cudaErrorInvalidValue);
  }
  return allocate(ptr, bytes, mem_kind::managed);
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned flags) {
  if ((flags & ~0x7u) != 0) return ret(cudaErrorInvalidValue);
  return allocate(ptr, bytes, mem_kind::pinned);
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
  return allocate(ptr, bytes, mem_kind::pinned);
}

cudaError_t cudaFreeHost(void* ptr) {
  return free_block(ptr, true);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  runtime_state& s = state();
  if (attributes == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  *attributes =
      cudaPointerAttributes{cudaMemoryTypeUnregistered, cudaInvalidDeviceId, nullptr, nullptr};
  allocation* a = ptr == nullptr ? nullptr : find(s, ptr);
  const auto* p = static_cast<const std::byte*>(ptr);
  if (a == nullptr || !a->live || p < a->user ||
      p >= a->user + std::max<std::size_t>(a->bytes, 1)) {
    return cudaSuccess;  // unregistered host memory (CUDA 11+ reports it without an error)
  }
  void* q = const_cast<void*>(ptr);
  attributes->device = a->device;
  switch (a->kind) {
    case mem_kind::device:
    case mem_kind::pool:
      attributes->type = cudaMemoryTypeDevice;
      attributes->devicePointer = q;
      break;
    case mem_kind::managed:
      attributes->type = cudaMemoryTypeManaged;
      attributes->devicePointer = q;
      attributes->hostPointer = q;
      break;
    case mem_kind::pinned:
      attributes->type = cudaMemoryTypeHost;
      attributes->devicePointer = q;
      attributes->hostPointer = q;
      break;
  }
  return cudaSuccess;
}

cudaError_t cuMemGetAddressRange(void** base, std::size_t* bytes, const void* ptr) {
  runtime_state& s = state();
  if (base == nullptr || bytes == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  allocation* a = ptr == nullptr ? nullptr : find(s, ptr);
  const auto* p = static_cast<const std::byte*>(ptr);
  if (a == nullptr || !a->live || p < a->user ||
      p >= a->user + std::max<std::size_t>(a->bytes, 1)) {
    return ret(cudaErrorInvalidValue);
  }
  *base = a->user;
  *bytes = a->bytes;
  return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, std::size_t bytes, cudaMemPool_t pool_handle,
                                    cudaStream_t h) {
  runtime_state& s = state();
  if (ptr == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *ptr = nullptr;
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  pool* p = nullptr;
  if (pool_handle == nullptr) {
    p = default_pool(s, st->device);
  } else {
    auto it = s.pools.find(pool_handle);
    if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
    p = it->second.get();
  }
  if (const cudaError_t e = device_error(s, p->device)) return ret(e);
  if (const injected inj = inject(s, control::call_class::alloc); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  if (bytes == 0) return cudaSuccess;
  const cudaError_t e = pool_alloc(s, *p, bytes, ptr);
  if (e == cudaSuccess) ++s.counts.pool_allocations;
  return ret(e);
}

cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, bytes, nullptr, stream);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (ptr == nullptr) return cudaSuccess;
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) {
    if (allocation* a = find(s, ptr); a != nullptr && a->live && a->user == ptr) {
      a->free_refused = true;
    }
    return ret(e);
  }
  allocation* a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || a->free_queued || a->kind == mem_kind::pinned) {
    if (a != nullptr && !a->live) {
      report(s, "cudaFreeAsync: " + hex(ptr) + " was already freed by " + a->freed_by);
    }
    return ret(cudaErrorInvalidValue);
  }
  a->free_queued = true;
  op_ptr o = enqueue(s, *st, "cudaFreeAsync", [a]() -> cudaError_t {
    runtime_state& rs = state();
    std::lock_guard<std::mutex> g(rs.mu);
    if (a->kind == mem_kind::pool && a->owner != nullptr) {
      cache_block(rs, a);
    } else {
      a->free_queued = false;
      retire_block(rs, a, "cudaFreeAsync");
    }
    return cudaSuccess;
  });
  o->bookkeeping = true;
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool_handle, int device) {
  runtime_state& s = state();
  if (pool_handle == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!valid_ordinal(s, device)) return ret(cudaErrorInvalidDevice);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  *pool_handle = reinterpret_cast<cudaMemPool_t>(default_pool(s, device));
  return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool_handle, const cudaMemPoolProps* props) {
  runtime_state& s = state();
  if (pool_handle == nullptr || props == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  if (props->allocType != cudaMemAllocationTypePinned ||
      props->location.type != cudaMemLocationTypeDevice || props->location.id < 0 ||
      props->location.id >= s.m.device_count) {
    return ret(cudaErrorInvalidValue);
  }
  *pool_handle = reinterpret_cast<cudaMemPool_t>(new_pool(s, props->location.id));
  return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool_handle) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed ||
      it->second.get() == s.devices[it->second->device].default_pool) {
    return ret(cudaErrorInvalidValue);
  }
  pool& p = *it->second;
  trim_pool(s, p, 0);
  p.destroyed = true;
  // Blocks still handed out stay valid until they are freed (then they are retired).
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool_handle, cudaMemPoolAttr attr, void* value) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  pool& p = *it->second;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      p.release_threshold = *static_cast<uint64_t*>(value);
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      p.reserved_high = p.reserved;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      p.used_high = p.used;
      return cudaSuccess;
    default:
      return ret(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool_handle, cudaMemPoolAttr attr, void* value) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  const pool& p = *it->second;
  auto* out = static_cast<uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      *out = p.release_threshold;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent:
      *out = p.reserved;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      *out = p.reserved_high;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent:
      *out = p.used;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      *out = p.used_high;
      return cudaSuccess;
  }
  return ret(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool_handle, std::size_t min_bytes_to_keep) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  trim_pool(s, *it->second, min_bytes_to_keep);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return copy_async({"cudaMemcpy", dst, src, bytes, 1, bytes, bytes}, kind, nullptr, true);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return copy_async({"cudaMemcpyAsync", dst, src, bytes, 1, bytes, bytes}, kind, stream, false);
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  if (width == 0 || height == 0) return cudaSuccess;
  {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    const auto max_pitch = static_cast<std::size_t>(s.m.max_pitch);
    if (dpitch > max_pitch || spitch > max_pitch) return ret(cudaErrorInvalidPitchValue);
  }
  if (width > dpitch || width > spitch) return ret(cudaErrorInvalidValue);
  return copy_async({"cudaMemcpy2DAsync", dst, src, width, height, dpitch, spitch}, kind, stream,
                    false);
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
  // Asynchronous with respect to the host for device memory, as in CUDA.
  return memset_async(dst, value, bytes, nullptr);
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream) {
  return memset_async(dst, value, bytes, stream);
}

cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, cudaMemLocation location,
                                 unsigned flags, cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (flags != 0 || ptr == nullptr) return ret(cudaErrorInvalidValue);
  if (location.type == cudaMemLocationTypeDevice) {
    if (location.id < 0 || location.id >= s.m.device_count) return ret(cudaErrorInvalidDevice);
    if (!s.m.concurrent_managed_access) return ret(cudaErrorInvalidDevice);
  } else if (location.type != cudaMemLocationTypeHost) {
    return ret(cudaErrorInvalidValue);
  }
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) return ret(e);
  if (const injected inj = inject(s, control::call_class::prefetch); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  const range_check r = check_range(s, ptr, bytes);
  if (r.kind != range_kind::inside || r.a->kind != mem_kind::managed) {
    if (r.kind == range_kind::out_of_bounds || r.kind == range_kind::freed) {
      report(s, "cudaMemPrefetchAsync: " + describe(r, ptr, bytes));
    }
    return ret(cudaErrorInvalidValue);
  }
  // Pages move; nothing a program can observe beyond the ordering.
  enqueue(s, *st, "cudaMemPrefetchAsync", nullptr);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* out, unsigned flags) {
  runtime_state& s = state();
  if (out == nullptr || flags > cudaStreamNonBlocking) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::stream_create);
      inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  auto st = std::make_unique<stream>();
  st->device = d;
  st->flags = flags;
  auto* h = reinterpret_cast<CUstream_st*>(st.get());
  if (st->blocking()) s.devices[d].blocking.push_back(st.get());
  s.streams[h] = std::move(st);
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  auto it = s.streams.find(h);
  if (it == s.streams.end()) return dead_handle(s);
  // Queued work still runs (CUDA returns at once and completes it later).
  it->second->destroyed = true;
  s.retired.push_back(std::move(it->second));
  s.streams.erase(it);
  prune_retired(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  const int d = st->device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::synchronize); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  const op_ptr last = st->last;
  complete(lk, s, last);
  return ret(after_sync(s, d));
}

cudaError_t cudaStreamQuery(cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) return ret(e);
  if (st->idle()) return cudaSuccess;
  // Not done: say so, then make progress, so the next query (of a polling loop) succeeds.
  ++s.counts.deferred_reads;
  const op_ptr last = st->last;
  complete(lk, s, last);
  return cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t h, cudaEvent_t e, unsigned flags) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  if (flags != 0) return ret(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  auto it = s.events.find(e);
  if (it == s.events.end()) return dead_handle(s);
  if (const cudaError_t de = device_error(s, st->device)) return ret(de);
  // An event never recorded is complete: nothing to wait for. Other devices' events are fine.
  if (it->second->marker) enqueue(s, *st, "cudaStreamWaitEvent", nullptr, it->second->marker);
  return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t h, int* device) {
  runtime_state& s = state();
  if (device == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  *device = st->device;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event_out) {
  return cudaEventCreateWithFlags(event_out, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* out, unsigned flags) {
  runtime_state& s = state();
  if (out == nullptr || flags > (cudaEventBlockingSync | cudaEventDisableTiming)) {
    return ret(cudaErrorInvalidValue);
  }
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::event_create); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  auto ev = std::make_unique<event>();
  ev->device = d;
  ev->flags = flags;
  auto* h = reinterpret_cast<CUevent_st*>(ev.get());
  s.events[h] = std::move(ev);
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.events.erase(e) == 0) return dead_handle(s);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  auto it = s.events.find(e);
  if (it == s.events.end()) return dead_handle(s);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  // CUDA: "cudaEventRecord() will fail if the input event and input stream are associated to
  // different devices."
  if (st->device != it->second->device) return ret(cudaErrorInvalidResourceHandle);
  if (const cudaError_t de = device_error(s, st->device)) return ret(de);
  if (const injected inj = inject(s, control::call_class::event_record); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  it->second->marker = enqueue(s, *st, "cudaEventRecord", nullptr);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  auto it = s.events.find(e);
  if (it == s.events.end()) return dead_handle(s);
  const int d = it->second->device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  if (const injected inj = inject(s, control::call_class::synchronize); inj.error != cudaSuccess) {
    return ret(inj.error);
  }
  const op_ptr marker = it->second->marker;
  complete(lk, s, marker);
  return ret(after_sync(s, d));
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  auto it = s.events.find(e);
  if (it == s.events.end()) return dead_handle(s);
  const op_ptr marker = it->second->marker;
  if (!marker || marker->state == op_state::done) return ret(s.devices[it->second->device].sticky);
  ++s.counts.deferred_reads;
  complete(lk, s, marker);
  return cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  runtime_state& s = state();
  if (ms == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  auto a = s.events.find(start), b = s.events.find(end);
  if (a == s.events.end() || b == s.events.end()) return dead_handle(s);
  const event &ea = *a->second, &eb = *b->second;
  if (ea.device != eb.device || ((ea.flags | eb.flags) & cudaEventDisableTiming) != 0 ||
      !ea.marker || !eb.marker) {
    return ret(cudaErrorInvalidResourceHandle);
  }
  if (ea.marker->state != op_state::done || eb.marker->state != op_state::done) {
    return cudaErrorNotReady;
  }
  *ms = std::chrono::duration<float, std::milli>(eb.marker->done_at - ea.marker->done_at).count();
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Kernels

cudaError_t detail::launch(const cudaLaunchConfig_t* config, const void* kernel,
                           std::function<void()> body) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (config == nullptr || kernel == nullptr || !body) return ret(cudaErrorInvalidValue);
  const dim3 g = config->gridDim, b = config->blockDim;
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535 ||
      b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024) {
    return ret(cudaErrorInvalidConfiguration);
  }
  // Kernels here declare their shared memory statically; dynamic shared memory is not simulated.
  if (config->dynamicSmemBytes != 0) return ret(cudaErrorNotSupported);
  const int d = tls_device;
  if (const cudaError_t e = device_error(s, d)) return ret(e);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, config->stream, err);
  if (st == nullptr) return ret(err);
  // CUDA: "A kernel launch will fail if it is issued to a stream that is not associated to the
  // current device."
  if (st->device != d) return ret(cudaErrorInvalidResourceHandle);
  const injected inj = inject(s, control::call_class::launch);
  if (inj.error != cudaSuccess && !inj.async) return ret(inj.error);
  const uint64_t n = ++s.launches;
  s.launch_log.push_back(control::launch_record{g, b, d});
  if (s.launch_log.size() > 4096) s.launch_log.pop_front();
  detail::schedule order{s.seed ^ (n * 0x9E3779B97F4A7C15ull), s.shuffle};
  const cudaError_t async_error = inj.async ? inj.error : cudaSuccess;
  op_ptr o = enqueue(s, *st, "kernel", [g, b, body = std::move(body), order, d, n, async_error]() {
    if (async_error != cudaSuccess) return async_error;
    const std::string thrown = detail::run_grid(g, b, body, order);
    runtime_state& rs = state();
    std::lock_guard<std::mutex> guard(rs.mu);
    ++rs.counts.kernels;
    if (!thrown.empty()) {
      report(rs, "kernel launch #" + std::to_string(n) + " failed: " + thrown);
      return cudaErrorLaunchFailure;
    }
    return check_redzones(rs, d, n) ? cudaErrorIllegalAddress : cudaSuccess;
  });
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

// ================================================================================================
// Control

namespace control {

machine current_machine() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.m;
}

void set_machine(const machine& m) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.m = m;
  s.m.device_count = std::clamp(m.device_count, 0, max_devices);
  s.m.multiprocessors = std::max(1, m.multiprocessors);
  s.env_error.clear();
}

void fail_nth(call_class c, int nth, cudaError_t error, bool async) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.injections[static_cast<int>(c)] = injection{std::max(nth, 1), error, async};
}

void set_sticky_error(int device, cudaError_t error) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (device >= 0 && device < max_devices) {
    s.devices[device].sticky = error;
    ++s.devices[device].failures;
  }
}

void clear_failures() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.injections = {};
  for (device_state& d : s.devices) d.sticky = cudaSuccess;
}

bool injection_pending(call_class c) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.injections[static_cast<int>(c)].remaining > 0;
}

void set_execution(bool eager) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.eager = eager;
}

void set_schedule(uint64_t seed, bool shuffle) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.seed = seed;
  s.shuffle = shuffle;
}

counters get_counters() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.counts;
}

std::vector<launch_record> launches() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return {s.launch_log.begin(), s.launch_log.end()};
}

void reset_counters() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.counts = counters{};
  s.launch_log.clear();
}

std::vector<std::string> take_memcheck_reports() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  std::vector<std::string> r;
  r.swap(s.reports);
  return r;
}

int64_t pending_operations() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  // Count the queued ops reachable from every stream's last op and every event.
  std::unordered_set<const op*> seen;
  std::vector<const op*> todo;
  auto add = [&](const op_ptr& o) {
    if (o && o->state != op_state::done) todo.push_back(o.get());
  };
  for (const device_state& d : s.devices) add(d.legacy->last);
  for (auto& [h, p] : s.streams) add(p->last);
  for (auto& p : s.retired) add(p->last);
  for (auto& [h, e] : s.events) add(e->marker);
  while (!todo.empty()) {
    const op* o = todo.back();
    todo.pop_back();
    if (!seen.insert(o).second) continue;
    for (const op_ptr& d : o->deps) add(d);
  }
  return static_cast<int64_t>(seen.size());
}

bool stream_is_live(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.streams.find(stream) != s.streams.end();
}

live_memory live_allocations() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  live_memory m;
  for (const allocation* a : s.live) {
    ++m.blocks;
    m.bytes += static_cast<int64_t>(a->bytes);
    m.free_refused += a->free_refused ? 1 : 0;
  }
  return m;
}

void reload_environment() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  load_environment(s);
}

void set_fault_reports(bool on) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  s.fault_reports = on;
  if (on) {
    install_fault_handler(s);
  } else {
    uninstall_fault_handler(s);
  }
}

bool fault_reports_installed() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.fault_handler_installed;
}

std::string environment_error() {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  return s.env_error;
}

}  // namespace control
}  // namespace gts::simcuda
