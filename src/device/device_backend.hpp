// The core device interface every storage uses: devices, allocate and free, copies, fill,
// prefetch, synchronize and DLPack codes. A backend hands out three more interfaces (as Kokkos
// keeps memory spaces apart from execution instances): ordering (stream_ordering.hpp: events and
// device waits, for the library's asynchronous copies and releases), allocations
// (allocation_registry.hpp: pointer queries and pool control) and tools (backend_tools.hpp:
// properties, streams, timing and counters, for the tests and the bench only).
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
// temporary host buffer is involved. Stream handles are uint64_t: a
// cudaStream_t/hipStream_t; 0 (the legacy default stream), 1 (cudaStreamLegacy) and 2
// (cudaStreamPerThread) name the default stream of the device the work is for.
//
// Backends are process-lifetime singletons (never destroyed), so a storage may keep a backend*
// and free through it even after another backend was made active.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "device/device_types.hpp"
#include "device/interface.hpp"
#include "kernels/strided_array.hpp"

namespace gts::device {

class stream_ordering;
class allocation_registry;
class backend_tools;

/// Why a backend has no device (backend::no_device).
struct no_device_status {
  error_kind kind = error_kind::no_device;
  std::string reason;
};

/// The core interface: what every storage asks of a device. The other interfaces are reached
/// through ordering(), allocations() and tools().
class backend : public interface {
 public:
  // ---- devices ----
  [[nodiscard]] const char* name() const noexcept { return name_; }
  /// Usable devices; 0 when there is no driver or no GPU (never throws).
  virtual int device_count() noexcept = 0;
  /// Why device_count() is 0: the kind and text of every no_device error (the text is "" when
  /// it is not 0). The kind is no_device, or driver_too_old when a driver older than the runtime
  /// the library was built with is what stands in the way.
  [[nodiscard]] virtual no_device_status no_device() = 0;
  [[nodiscard]] std::string no_device_reason() { return no_device().reason; }
  [[nodiscard]] error_kind no_device_kind() { return no_device().kind; }
  /// The calling thread's current device (cudaGetDevice / hipGetDevice): what device -1 means.
  virtual int current_device() = 0;
  /// Makes @p device_id the calling thread's current device (cudaSetDevice / hipSetDevice).
  virtual void set_current_device(int device_id) = 0;

  // ---- memory ----
  /// Allocates @p bytes of @p kind on @p device_id (-1 = current_device()) at an address that is a
  /// multiple of @p alignment (any positive value, not only powers of two; 0 = 256) in the
  /// address space the memory is used in. Zero bytes give a valid, unique pointer. Throws
  /// no_device, invalid_argument (bad ordinal, naming it), out_of_memory, unsupported or device.
  virtual void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                         int device_id) = 0;
  /// allocate() from this backend's pool of @p kind memory (pinned host: a block cache; device:
  /// the runtime's stream-ordered pool, allocated and later freed in the order of @p stream,
  /// 0 = the legacy stream). Unified memory and backends without pools allocate as allocate().
  /// free() returns the block to its pool.
  virtual void* allocate_pooled(std::size_t bytes, std::size_t alignment, memory_kind kind,
                                int device_id, uint64_t stream) {
    (void)stream;
    return allocate(bytes, alignment, kind, device_id);
  }
  /// Frees what allocate() returned (kind and device_id are taken from the backend's own record;
  /// the arguments are kept for callers' symmetry). Unknown pointers and nullptr are ignored.
  virtual void free(void* ptr, memory_kind kind, int device_id) noexcept = 0;

  // ---- work on a stream ----
  /// Contiguous copy of @p bytes.
  virtual void copy(void* dst, const void* src, std::size_t bytes, direction dir,
                    uint64_t stream) = 0;
  /// Element-wise copy between equal-shaped strided arrays (same dtype), any layouts.
  /// Throws invalid_argument for different shapes or item sizes.
  virtual void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                            uint64_t stream) = 0;
  /// Sets every element of @p dst (device memory) to @p value (one element of dst.type).
  virtual void fill(const strided_array& dst, const void* value, uint64_t stream) = 0;
  /// Moves unified memory towards @p device_id (-1 = host). A hint: devices without concurrent
  /// managed access skip it (synchronize() still makes the data visible).
  virtual void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) = 0;
  /// Waits for all work on @p stream.
  virtual void synchronize(uint64_t stream) = 0;

  // ---- interop ----
  /// DLPack device type code for memory of @p kind (2 CUDA, 3 CUDA host, 10 ROCm …).
  [[nodiscard]] virtual int dl_device_type(memory_kind kind) const noexcept = 0;

  // ---- the other interfaces (the same object; see attach()) ----
  /// Events and device waits: how the library orders its work after a stream's.
  stream_ordering& ordering() noexcept { return *ordering_; }
  [[nodiscard]] const stream_ordering& ordering() const noexcept { return *ordering_; }
  /// Pointer queries and pool control.
  allocation_registry& allocations() noexcept { return *allocations_; }
  [[nodiscard]] const allocation_registry& allocations() const noexcept { return *allocations_; }
  /// Properties, streams, timing and counters: for the tests and the bench only.
  backend_tools& tools() noexcept { return *tools_; }
  [[nodiscard]] const backend_tools& tools() const noexcept { return *tools_; }

  /// Resolves @p device_id (-1 = current_device()) and checks it against device_count():
  /// no_device when there are none, invalid_argument("device_id: …") when out of range.
  int checked_device(int device_id);

 protected:
  explicit backend(const char* name) noexcept : name_(name) {}
  /// Called by the implementation's constructor (once its bases exist): the objects that
  /// implement the other interfaces, usually the implementation itself.
  void attach(stream_ordering& ordering, allocation_registry& allocations,
              backend_tools& tools) noexcept {
    ordering_ = &ordering;
    allocations_ = &allocations;
    tools_ = &tools;
  }

 private:
  const char* name_;
  stream_ordering* ordering_ = nullptr;
  allocation_registry* allocations_ = nullptr;
  backend_tools* tools_ = nullptr;
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
