// The one small device interface every storage uses: allocate, free, copies, fill, streams.
// Implementations: cuda (static runtime), hip (optional) and emulated, which are one source
// (gpu/gpu_backend.inl) over three runtimes: CUDA, HIP and the simulated CUDA runtime of
// src/emulated (host memory, asynchronous and strict, so every device path is testable without
// a GPU); and none (no devices). Methods throw gts::error (no_device, driver_too_old, device,
// out_of_memory, unsupported, invalid_argument); they never abort.
//
// Ordering: copy(), copy_strided(), fill() and prefetch() are enqueued on @p stream and may return
// before they complete (the emulated device completes them only when something waits); call
// synchronize(stream) before reading the destination on the host. Layout-changing copies between
// host and device are staged through temporary buffers and wait for @p stream themselves where a
// temporary host buffer is involved. Stream and event handles are uint64_t: a
// cudaStream_t/hipStream_t; 0 (the legacy default stream), 1 (cudaStreamLegacy) and 2
// (cudaStreamPerThread) name the default stream of the device the work is for.
//
// Backends are process-lifetime singletons (never destroyed), so a storage may keep a backend*
// and free through it even after another backend was made active.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/strided_array.hpp"
#include "memory/block_cache.hpp"

namespace gts::device {

enum class memory_kind {
  device,       ///< Device memory (cudaMalloc).
  unified,      ///< Unified memory (cudaMallocManaged).
  pinned_host,  ///< Page-locked host memory (cudaHostAlloc).
};

enum class direction { host_to_device, device_to_host, device_to_device };

/// DLPack device type codes (DLDeviceType).
namespace dl {
inline constexpr int cpu = 1;
inline constexpr int cuda = 2;
inline constexpr int cuda_host = 3;
inline constexpr int rocm = 10;
inline constexpr int rocm_host = 11;
inline constexpr int ext_dev = 12;  ///< kDLExtDev: the emulated device (host memory, not a GPU).
inline constexpr int cuda_managed = 13;
/// DLPack device id of memory of device @p device reported as @p type: host kinds (CPU, which
/// the emulated device's unified and pinned memory are, CUDA host, ROCm host) carry 0, as
/// dlpack.h and gtstorage_interface_info.device_id say; device kinds carry the ordinal.
inline constexpr int device_id_for(int type, int device) {
  return type == cpu || type == cuda_host || type == rocm_host ? 0 : device;
}
}  // namespace dl

/// What an address is, as far as the backend can tell (see backend::query_pointer).
enum class pointer_space {
  host,         ///< Ordinary (pageable) host memory, or an address the backend does not know.
  device,       ///< Device memory.
  unified,      ///< Unified / managed memory.
  pinned_host,  ///< Page-locked host memory.
};

struct pointer_info {
  pointer_space space = pointer_space::host;
  int device_id =
      -1;  ///< Device ordinal (for pinned memory: the device it was made on), -1 if none.
  bool owned = false;     ///< Allocated by this backend (base/bytes are then set).
  void* base = nullptr;   ///< Pointer allocate() returned for the containing allocation.
  std::size_t bytes = 0;  ///< Bytes requested for that allocation.
};

/// Static facts about one device.
struct device_properties {
  std::string name;              ///< e.g. "NVIDIA H100 80GB HBM3" or "emulated device 0".
  std::size_t total_memory = 0;  ///< Bytes.
  int major = 0;                 ///< Compute capability (CUDA) / gfx major (HIP); 0 emulated.
  int minor = 0;
  int multiprocessors = 0;
  bool concurrent_managed_access = false;  ///< Prefetching unified memory is meaningful.
};

/// Transfers issued through one backend since start or reset_counters() (index: direction).
struct transfer_counters {
  int64_t count[3] = {0, 0, 0};
  int64_t bytes[3] = {0, 0, 0};
};

class backend {
 public:
  backend();
  virtual ~backend();
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;

  [[nodiscard]] virtual const char* name() const = 0;
  /// Usable devices; 0 when there is no driver or no GPU (never throws).
  virtual int device_count() noexcept = 0;
  /// Why device_count() is 0 ("" when it is not): the text of every no_device error.
  [[nodiscard]] virtual std::string no_device_reason() = 0;
  /// The kind of those errors: no_device, or driver_too_old when a driver older than the runtime
  /// the library was built with is what stands in the way.
  [[nodiscard]] virtual error_kind no_device_kind() { return error_kind::no_device; }
  /// The calling thread's current device (cudaGetDevice / hipGetDevice): what device -1 means.
  virtual int current_device() = 0;
  /// Makes @p device_id the calling thread's current device (cudaSetDevice / hipSetDevice).
  virtual void set_current_device(int device_id) = 0;
  /// Allocates @p bytes of @p kind on @p device_id (-1 = current_device()) at an address that is a
  /// multiple of @p alignment (any positive value, not only powers of two; 0 = 256) in the
  /// address space the memory is used in. Zero bytes give a valid, unique pointer. Throws
  /// no_device, invalid_argument (bad ordinal, naming it), out_of_memory, unsupported or device.
  virtual void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                         int device_id) = 0;
  /// Frees what allocate() returned (kind and device_id are taken from the backend's own record;
  /// the arguments are kept for callers' symmetry). Unknown pointers and nullptr are ignored.
  virtual void free(void* ptr, memory_kind kind, int device_id) noexcept = 0;
  /// allocate() from this backend's pool of @p kind memory (pinned host: a block cache; device:
  /// the runtime's stream-ordered pool, allocated and later freed in the order of @p stream,
  /// 0 = the legacy stream). Unified memory and backends without pools allocate as allocate().
  /// free() returns the block to its pool.
  virtual void* allocate_pooled(std::size_t bytes, std::size_t alignment, memory_kind kind,
                                int device_id, uint64_t stream) {
    (void)stream;
    return allocate(bytes, alignment, kind, device_id);
  }
  /// Counters of the pool of @p memory (pinned_host or device); limit 0 where there is none.
  [[nodiscard]] virtual pool_counters pool_stats(pool_memory memory) noexcept {
    (void)memory;
    return {};
  }
  /// Frees kept blocks of @p memory until at most @p keep_bytes are kept; returns bytes freed.
  virtual int64_t pool_trim(pool_memory memory, int64_t keep_bytes) noexcept {
    (void)memory, (void)keep_bytes;
    return 0;
  }
  /// Sets the limit on kept bytes of @p memory (0: not pooled).
  virtual void pool_set_limit(pool_memory memory, int64_t limit_bytes) noexcept {
    (void)memory, (void)limit_bytes;
  }
  /// Resets hits, misses, evictions and high-water marks of this backend's pools.
  virtual void pool_reset_counters() noexcept {}
  /// Contiguous copy of @p bytes.
  virtual void copy(void* dst, const void* src, std::size_t bytes, direction dir,
                    uint64_t stream) = 0;
  /// Element-wise copy between equal-shaped strided arrays (same dtype), any layouts.
  /// Throws invalid_argument for different shapes or item sizes.
  virtual void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                            uint64_t stream) = 0;
  /// Sets every element of @p dst (device memory) to @p value (one element of dst.type).
  virtual void fill(const strided_array& dst, const void* value, uint64_t stream) = 0;
  /// True when @p stream is known to name no live stream of this backend (destroyed, or never
  /// created). Only a backend that can check a handle says so (the emulated device); a real
  /// runtime cannot, and may crash on a dead one, so this is false there. Never blocks.
  [[nodiscard]] virtual bool stream_known_dead(uint64_t stream) const noexcept {
    (void)stream;
    return false;
  }
  /// Waits for all work on @p stream.
  virtual void synchronize(uint64_t stream) = 0;
  /// Waits for all work on device @p device_id (-1 = current).
  virtual void synchronize_device(int device_id) = 0;
  /// Moves unified memory towards @p device_id (-1 = host). A hint: devices without concurrent
  /// managed access skip it (synchronize() still makes the data visible).
  virtual void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) = 0;
  /// DLPack device type code for memory of @p kind (2 CUDA, 3 CUDA host, 10 ROCm …).
  [[nodiscard]] virtual int dl_device_type(memory_kind kind) const noexcept = 0;

  /// Properties of @p device_id (-1 = current). Throws no_device / invalid_argument.
  [[nodiscard]] virtual device_properties properties(int device_id) = 0;
  /// What @p ptr points into (never throws; unknown addresses are pointer_space::host).
  [[nodiscard]] virtual pointer_info query_pointer(const void* ptr) noexcept = 0;
  /// The bounds [*base, *base + *bytes) of the allocation that contains @p ptr, where the backend
  /// knows them: its own allocations (the bytes requested), and device, managed or pinned memory
  /// of any allocator where the runtime reports the range (CUDA's cuMemGetAddressRange, HIP's
  /// hipMemGetAddressRange, the simulated runtime). False when unknown (ordinary host memory).
  virtual bool allocation_range(const void* ptr, const void** base, std::size_t* bytes) noexcept {
    (void)ptr, (void)base, (void)bytes;
    return false;
  }

  /// A new non-blocking stream on @p device_id (-1 = current).
  virtual uint64_t create_stream(int device_id) = 0;
  /// Destroys a stream from create_stream(); 0 and unknown values are ignored.
  virtual void destroy_stream(uint64_t stream) noexcept = 0;
  /// A new event on @p device_id (-1 = current), able to time.
  virtual uint64_t create_event(int device_id) = 0;
  virtual void destroy_event(uint64_t event) noexcept = 0;
  /// Records @p event on @p stream.
  virtual void record_event(uint64_t event, uint64_t stream) = 0;
  /// Makes later work on @p stream wait for @p event.
  virtual void wait_event(uint64_t stream, uint64_t event) = 0;
  /// Blocks until @p event completed.
  virtual void synchronize_event(uint64_t event) = 0;
  /// True when @p event completed.
  virtual bool event_done(uint64_t event) = 0;
  /// Milliseconds between two completed events.
  virtual float elapsed_ms(uint64_t start, uint64_t end) = 0;

  /// Resolves @p device_id (-1 = current_device()) and checks it against device_count():
  /// no_device when there are none, invalid_argument("device_id: …") when out of range.
  int checked_device(int device_id);

  /// Transfer counters of this backend (every copy and copy_strided, by direction).
  [[nodiscard]] transfer_counters counters() const noexcept;
  void reset_counters() noexcept;
  /// Bytes currently allocated through this backend, by kind.
  [[nodiscard]] int64_t allocated_bytes(memory_kind kind) const noexcept;

 protected:
  void note_transfer(direction dir, std::size_t bytes) noexcept;
  void note_allocation(memory_kind kind, int64_t delta_bytes) noexcept;

 private:
  struct counters_impl;
  std::unique_ptr<counters_impl> counters_;
};

/// Runs @p enqueue, which queues work on @p stream of @p be. Where it fails part-way, what it
/// queued before the failure may still read or write buffers the caller frees as the error
/// unwinds (a staging vector, the caller's array, a storage released next): the stream is
/// waited for first (a failed device runs nothing more), then the error goes on.
template <class Enqueue>
void enqueue_or_drain(backend& be, uint64_t stream, Enqueue&& enqueue) {
  try {
    enqueue();
  } catch (...) {
    try {
      be.synchronize(stream);
    } catch (...) {
      // The first error is the one reported.
    }
    throw;
  }
}

/// The active backend (chosen from GTSTORAGE_DEVICE_BACKEND or set_backend(); "auto" prefers
/// cuda, then hip, then none). Never null: a "none" backend reports 0 devices and throws no_device.
/// An invalid GTSTORAGE_DEVICE_BACKEND value makes this throw (invalid_argument / unsupported,
/// naming the variable) until set_backend() picks a valid one: a typo is never silently ignored.
backend& active();

/// The active backend if one was already chosen (by a device call or set_backend()), else null;
/// never selects one, so host-only code can ask without starting a GPU runtime.
backend* selected() noexcept;

/// Every backend that has been the active one in this process (the pools of one that is no
/// longer active may still keep blocks: a storage of its host memory released after a switch).
std::vector<backend*> used_backends();

/// Selects the backend by name: "cuda", "hip", "emulated", "none" or "auto". Unknown names throw
/// invalid_argument (listing the known ones), backends not compiled in throw unsupported.
void set_backend(const std::string& name);

/// The backend called @p name ("auto" resolved as in set_backend), without making it active.
backend& get_backend(const std::string& name);

/// Name of the active backend (after "auto" resolution), e.g. "cuda" or "none".
std::string active_name();

/// Backends compiled into this build, e.g. {"cuda", "emulated", "none"}.
std::vector<std::string> compiled_backends();

/// Re-reads GTSTORAGE_DEVICE_BACKEND (and GTSTORAGE_EMULATED_DEVICES) as at first use; for tests
/// and for programs that change their environment before touching devices.
void reload_environment();

/// Sets the emulated backend's device count (tests of ordinal selection and of "no device";
/// 0 … 64, else invalid_argument). Overrides GTSTORAGE_EMULATED_DEVICES.
void set_emulated_device_count(int count);

/// The calling thread's current device on the active backend: what device -1 means.
int current_device();
/// Makes @p device_id the calling thread's current device of the active backend, after checking
/// it (see backend::checked_device).
void set_current_device(int device_id);

}  // namespace gts::device
