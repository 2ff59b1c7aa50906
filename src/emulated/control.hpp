// Control of the simulated CUDA runtime (cuda_api.hpp) for tests and for the emulated device's
// environment variables: the simulated machine (devices, driver, memory), error injection, the
// execution order of kernel threads, and what the runtime observed (counters, memcheck reports).
// Not part of the CUDA API; nothing here is reachable through the public C ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "emulated/cuda_api.hpp"

namespace gts::emulated::control {

/// The simulated machine.
struct machine {
  int device_count = 2;
  /// CUDA version the simulated driver supports (cudaDriverGetVersion); 0 = no driver. Below
  /// runtime_version, cudaGetDeviceCount fails with cudaErrorInsufficientDriver, as the real
  /// runtime does with a driver older than itself.
  int driver_version = runtime_version;
  int multiprocessors = 2;  ///< Per device; small, so grid-stride loops run more than once.
  std::size_t device_memory = std::size_t(64) << 30;  ///< Bytes per device.
  bool concurrent_managed_access = true;
  bool memory_pools = true;
  int64_t max_pitch = 2147483647;  ///< cudaDevAttrMaxPitch, bytes.
};

/// The machine as configured now.
machine current_machine();
/// Reconfigures the machine. Allocations, streams and events that exist stay valid.
void set_machine(const machine& m);

/// Classes of calls that error injection counts.
enum class call_class {
  alloc,          ///< cudaMalloc, cudaMallocManaged, cudaHostAlloc/MallocHost, *Async.
  memcpy,         ///< cudaMemcpy, cudaMemcpyAsync, cudaMemcpy2DAsync.
  memset,         ///< cudaMemset, cudaMemsetAsync.
  launch,         ///< cudaLaunchKernelEx.
  synchronize,    ///< cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize.
  stream_create,  ///< cudaStreamCreate*.
  event_create,   ///< cudaEventCreate*.
  event_record,   ///< cudaEventRecord.
  prefetch,       ///< cudaMemPrefetchAsync.
};

/// Makes the @p nth call (1 = the next) of class @p c, counted from now, fail with @p error.
/// With @p async the call itself succeeds and the queued work fails when it runs: @p error
/// then becomes the device's sticky error, as a faulting kernel's does on a GPU.
void fail_nth(call_class c, int nth, cudaError_t error, bool async = false);
/// Sets a sticky error on @p device: every later call that uses it returns @p error.
void set_sticky_error(int device, cudaError_t error);
/// Removes pending injections and sticky errors. Work that was queued on a device before it
/// failed still never runs (bookkeeping such as queued frees does), as on a GPU.
void clear_failures();
/// True while the injection fail_nth() set for @p c has not fired yet (fewer than nth calls of
/// that class were made since): an error-injection sweep stops at the first nth its workload
/// never reaches.
bool injection_pending(call_class c);

/// When queued work runs: deferred (the default: only when something waits for it, so a host
/// read that does not wait sees stale data) or eager (at once, so work queued before its input
/// was ready sees the old input). GTSTORAGE_SIM_EXECUTION=deferred|eager.
void set_execution(bool eager);

/// Execution order of the threads of a block between barriers (and of the blocks of a grid):
/// shuffled with @p seed, or in index order when @p shuffle is false.
void set_schedule(uint64_t seed, bool shuffle);

/// What the runtime has done since start or reset_counters().
struct counters {
  int64_t ops_executed = 0;  ///< Queued operations that ran.
  int64_t kernels = 0;       ///< Kernel launches that ran.
  int64_t memcpys = 0;       ///< 1-D copies that ran.
  int64_t memcpy_2d = 0;     ///< 2-D copies that ran.
  int64_t memsets = 0;       ///< Memsets that ran.
  int64_t pool_maps = 0;     ///< Pool blocks mapped (a cudaMallocAsync the pool could not serve).
  int64_t pool_unmaps = 0;   ///< Pool blocks returned at a synchronization (release threshold).
  int64_t memcheck_errors = 0;   ///< Bounds, use-after-free and redzone violations found.
  int64_t deferred_reads = 0;    ///< Queries that found work still pending (host did not wait).
  int64_t pool_allocations = 0;  ///< Successful cudaMallocAsync / cudaMallocFromPoolAsync calls.
  /// Calls that named a stream or event that is not live (never created, or destroyed): the
  /// simulated runtime refuses them, a real one may crash. Code that keeps CUDA's rules makes
  /// none (the library only where a test hands it a dead handle on purpose).
  int64_t dead_handles = 0;
  /// cudaDeviceSynchronize calls (a device-wide wait: what stream-ordered code never needs).
  int64_t device_synchronizes = 0;
};
counters get_counters();
/// The grid and block of the kernels launched (queued) since reset_counters(), oldest first
/// (at most the last 4096): which kernel a request chose shows in its block shape.
struct launch_record {
  dim3 grid;
  dim3 block;
  int device = 0;
};
std::vector<launch_record> launches();
void reset_counters();

/// The memcheck reports (one line each) since start or the last call; clears them.
std::vector<std::string> take_memcheck_reports();

/// True when @p stream is 0, cudaStreamLegacy, cudaStreamPerThread or a stream that was created
/// and not destroyed. Unlike the runtime's calls, asking about a dead handle is not counted in
/// counters::dead_handles: this is how a caller checks a handle before using it.
bool stream_is_live(cudaStream_t stream);

/// Number of queued operations that have not run yet, on every device.
int64_t pending_operations();

/// Memory handed out and not given back: device, managed and pinned blocks not freed, and pool
/// blocks in use (not freed with cudaFreeAsync, or whose queued free has not run yet). Blocks a
/// pool keeps cached for reuse are not counted. A program that frees what it allocated (and
/// waits for its queued frees) gets back to the count it started from.
struct live_memory {
  int64_t blocks = 0;
  int64_t bytes = 0;  ///< Requested bytes of those blocks.
  /// Of those, blocks whose cudaFree / cudaFreeAsync was refused because their device had a
  /// sticky error (as on a GPU, whose failed context keeps its memory until the process ends).
  int64_t free_refused = 0;
};
live_memory live_allocations();

/// Re-reads the environment: GTSTORAGE_EMULATED_DEVICES, GTSTORAGE_SIM_DRIVER_VERSION,
/// GTSTORAGE_SIM_DEVICE_MEMORY, GTSTORAGE_SIM_MULTIPROCESSORS, GTSTORAGE_SIM_SEED,
/// GTSTORAGE_SIM_EXECUTION and
/// GTSTORAGE_SIM_FAIL ("class:n[:error[:async]]", comma separated, e.g. "alloc:2:2" makes the
/// second allocation fail with cudaErrorMemoryAllocation). A malformed value is not an
/// error here (this is called from places that cannot fail): the machine then has no driver,
/// and environment_error() says why.
void reload_environment();
/// Why the environment could not be used ("" if it could).
std::string environment_error();

/// Faults in guard pages and freed memory explained on stderr before the process dies (a
/// SIGSEGV and SIGBUS handler, chained to the program's own handlers; off restores them).
/// Off unless asked for, here or by GTSTORAGE_SIM_FAULT_REPORTS=1 (read at start and by
/// reload_environment): a program that uses the emulated device gets no signal handler it did
/// not ask for. The guard pages themselves are always there.
void set_fault_reports(bool on);
/// Whether the fault handler is installed now.
bool fault_reports_installed();

}  // namespace gts::emulated::control
