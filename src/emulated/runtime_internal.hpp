// Internals of the emulated CUDA runtime shared by its parts (state.cpp, memory.cpp, streams.cpp,
// copies.cpp, environment.cpp, faults.cpp, api.cpp, kernels.cpp, control.cpp): the model of
// runtime.md's "Model" below, its state and the functions one part calls in another. Not for
// the library or tests: they use cuda_api.hpp and control.hpp.
//
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
#pragma once

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

#include "emulated/block_scheduler.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"

namespace gts::emulated::impl {

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

enum class mem_kind { device, managed, pinned, pool };

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

runtime_state& state();

// The per-thread default streams of each device, marked destroyed when their thread ends.
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

struct injected {
  cudaError_t error = cudaSuccess;
  bool async = false;
};

enum class range_kind { host, inside, out_of_bounds, freed };

struct range_check {
  range_kind kind = range_kind::host;
  allocation* a = nullptr;
};

struct copy_request {
  const char* what;
  void* dst;
  const void* src;
  std::size_t width;   // bytes per row
  std::size_t height;  // rows (1 for 1-D)
  std::size_t dpitch;  // bytes between rows
  std::size_t spitch;
};

// Global state (state.cpp).
extern runtime_state* g_state;
extern thread_local int tls_device;
extern thread_local cudaError_t tls_last_error;
extern thread_local per_thread_streams tls_streams;
extern struct sigaction previous_segv;
extern struct sigaction previous_bus;

// Functions of the parts.
std::size_t page_size();
std::size_t round_up(std::size_t n, std::size_t a);
std::string hex(const void* p);
const char* kind_name(mem_kind k);
runtime_state& state();
cudaError_t ret(cudaError_t e);
cudaError_t dead_handle(runtime_state& s);
cudaError_t init_error(const runtime_state& s);
bool valid_ordinal(const runtime_state& s, int d);
cudaError_t device_error(const runtime_state& s, int d);
injected inject(runtime_state& s, control::call_class c);
// The checks every entry that works on device @p d makes after the runtime's own (init_error),
// in the order CUDA reports them: an invalid or failed device, then an injected failure of class
// @p c. An asynchronous injection goes to @p deferred where the caller reports it when the work
// runs (copies, memsets, launches), else it is returned like a synchronous one. cudaSuccess: go
// on.
cudaError_t admit(runtime_state& s, int d, control::call_class c, cudaError_t* deferred = nullptr);
// admit() for work on the stream handle @p h, resolved into @p st first (a dead handle's error).
cudaError_t admit_stream(runtime_state& s, cudaStream_t h, control::call_class c, stream*& st,
                         cudaError_t* deferred = nullptr);
void report(runtime_state& s, const std::string& text);
void install_fault_handler(runtime_state& s);
allocation* find(runtime_state& s, const void* p);
void add_live(runtime_state& s, allocation* a);
void remove_live(runtime_state& s, allocation* a);
allocation* map_block(runtime_state& s, std::size_t bytes, mem_kind kind, int device);
void retire_block(runtime_state& s, allocation* a, const char* how);
void cache_block(runtime_state& s, allocation* a);
void trim_pool(runtime_state& s, pool& p, uint64_t keep);
void trim_device_pools(runtime_state& s, int device);
pool* new_pool(runtime_state& s, int device);
pool* default_pool(runtime_state& s, int device);
cudaError_t pool_alloc(runtime_state& s, pool& p, std::size_t bytes, void** out);
range_check check_range(runtime_state& s, const void* p, std::size_t n);
std::string describe(const range_check& r, const void* p, std::size_t n);
bool valid_range(runtime_state& s, const char* what, const char* role, const void* p,
                 std::size_t n);
bool device_side(runtime_state& s, const void* p, std::size_t n);
bool check_redzones(runtime_state& s, int device, uint64_t launch);
stream* per_thread_stream(runtime_state& s, int device);
stream* resolve(runtime_state& s, cudaStream_t h, cudaError_t& err);
op_ptr enqueue(runtime_state& s, stream& st, const char* what, std::function<cudaError_t()> work,
               const op_ptr& extra = nullptr);
void complete(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& target);
void run_if_eager(std::unique_lock<std::mutex>& lk, runtime_state& s, const op_ptr& o);
void prune_retired(runtime_state& s);
std::vector<op_ptr> last_ops_of(runtime_state& s, int device);
void complete_device(std::unique_lock<std::mutex>& lk, runtime_state& s, int device);
cudaError_t after_sync(runtime_state& s, int device);
cudaError_t copy_async(const copy_request& c, cudaMemcpyKind kind, cudaStream_t h, bool wait);
cudaError_t memset_async(void* dst, int value, std::size_t bytes, cudaStream_t h);
bool parse_int(const char* text, long long lo, long long hi, long long& out);
bool parse_failure(runtime_state& s, const std::string& item);
void load_environment(runtime_state& s);
void write_str(const char* t);
void fault_handler(int sig, siginfo_t* info, void* context);
void uninstall_fault_handler(runtime_state& s);
const char* error_name(cudaError_t e);
const char* error_string(cudaError_t e);

}  // namespace gts::emulated::impl
