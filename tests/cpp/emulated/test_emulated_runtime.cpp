// The simulated CUDA runtime itself (src/emulated): that it is as adversarial as the issue
// asks, so the device suite built on it can fail. Asynchrony (a host read that does not wait
// sees stale bytes; stream order; the legacy and per-thread default streams; events), several
// devices with a thread-local current device, streams and events bound to their device, pointer
// attributes, managed and pinned memory, stream-ordered pools, bounds checking and poisoned freed
// memory, error injection (allocation, copy, launch, no driver, old driver, sticky errors), and
// kernels: every block and thread runs once, shared memory and barriers work, and a kernel that
// lacks a barrier computes wrong values.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"

// The library's own kernel steps, compiled for the simulator as the emulated backend compiles
// them, to show that the transpose needs both of its barriers.
#define GTS_GPU_NS simtest_impl
#include "device/gpu/gpu_kernels.hpp"

using namespace gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

// Restores the default machine and clears injections, sticky errors and reports.
void fresh() {
  ctl::set_machine(ctl::machine{});
  ctl::clear_failures();
  ctl::set_schedule(1, true);
  (void)ctl::take_memcheck_reports();
  (void)cudaGetLastError();
  cudaSetDevice(0);
}

#define CUDA_OK(call)                                                            \
  do {                                                                           \
    const cudaError_t e_ = (call);                                               \
    CHECK_MSG(e_ == cudaSuccess, "%s returned %s", #call, cudaGetErrorName(e_)); \
  } while (0)

#define CUDA_IS(want, call)                                                         \
  do {                                                                              \
    const cudaError_t e_ = (call);                                                  \
    CHECK_MSG(e_ == (want), "%s returned %s, want %s", #call, cudaGetErrorName(e_), \
              cudaGetErrorName(want));                                              \
  } while (0)

// @p n bytes of device memory on the current device.
void* device_bytes(std::size_t n) {
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, n));
  return d;
}

bool reports_contain(const std::vector<std::string>& r, const char* needle) {
  for (const auto& s : r) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------------------------
// Asynchrony

void async_copies_land_only_when_waited_for() {
  fresh();
  const std::size_t n = 4096;
  void* d = device_bytes(n);
  // Fresh device memory is poisoned.
  std::vector<unsigned char> h(n, 0), back(n, 0x11);
  CUDA_OK(cudaMemcpy(h.data(), d, n, cudaMemcpyDefault));
  CHECK(h[0] == 0xFF && h[n - 1] == 0xFF);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<unsigned char>(i * 7);
  cudaStream_t s = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_OK(cudaMemcpyAsync(d, h.data(), n, cudaMemcpyDefault, s));
  CUDA_OK(cudaMemcpyAsync(back.data(), d, n, cudaMemcpyDefault, s));
  // Nothing has run: the host still sees its old bytes.
  CHECK(ctl::pending_operations() >= 2);
  CHECK(back[0] == 0x11 && back[n - 1] == 0x11);
  CUDA_IS(cudaErrorNotReady, cudaStreamQuery(s));  // first query: not ready (then progress)
  CUDA_OK(cudaStreamQuery(s));
  CHECK(std::memcmp(back.data(), h.data(), n) == 0);
  // Stream order: the later memset wins.
  CUDA_OK(cudaMemsetAsync(d, 1, n, s));
  CUDA_OK(cudaMemsetAsync(d, 2, n, s));
  CUDA_OK(cudaMemcpyAsync(back.data(), d, n, cudaMemcpyDefault, s));
  CUDA_OK(cudaStreamSynchronize(s));
  CHECK(back[0] == 2 && back[n - 1] == 2);
  CHECK(ctl::pending_operations() == 0);
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaStreamSynchronize(s));
  CUDA_OK(cudaFree(d));
}

void default_streams_keep_cuda_semantics() {
  fresh();
  const std::size_t n = 256;
  void* d = device_bytes(n);
  unsigned char h[256];
  cudaStream_t blocking = nullptr, nonblocking = nullptr;
  CUDA_OK(cudaStreamCreate(&blocking));
  CUDA_OK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  // Legacy stream work waits for blocking streams...
  CUDA_OK(cudaMemsetAsync(d, 5, n, blocking));
  std::memset(h, 0, n);
  CUDA_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, cudaStreamLegacy));
  CUDA_OK(cudaStreamSynchronize(nullptr));  // 0 is the legacy stream too
  CHECK(h[0] == 5 && h[n - 1] == 5);
  // ...but not for non-blocking ones: the copy runs before the memset that was queued first.
  CUDA_OK(cudaMemsetAsync(d, 7, n, nonblocking));
  CUDA_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, cudaStreamLegacy));
  CUDA_OK(cudaStreamSynchronize(cudaStreamLegacy));
  CHECK(h[0] == 5);
  CUDA_OK(cudaStreamSynchronize(nonblocking));
  // Blocking streams wait for legacy work, too.
  CUDA_OK(cudaMemsetAsync(d, 9, n, cudaStreamLegacy));
  CUDA_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, blocking));
  CUDA_OK(cudaStreamSynchronize(blocking));
  CHECK(h[0] == 9);
  // The per-thread default stream: blocking with respect to the legacy stream, and one per
  // thread (another thread's per-thread stream does not wait for ours).
  CUDA_OK(cudaMemsetAsync(d, 11, n, cudaStreamPerThread));
  std::thread other([&] {
    CUDA_OK(cudaStreamSynchronize(cudaStreamPerThread));  // its own, empty
  });
  other.join();
  CHECK(ctl::pending_operations() >= 1);
  CUDA_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, cudaStreamLegacy));
  CUDA_OK(cudaStreamSynchronize(cudaStreamLegacy));
  CHECK(h[0] == 11);
  // A stream destroyed with work queued still runs it.
  cudaStream_t doomed = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&doomed, cudaStreamNonBlocking));
  CUDA_OK(cudaMemsetAsync(d, 13, n, doomed));
  CUDA_OK(cudaStreamDestroy(doomed));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, d, n, cudaMemcpyDefault));
  CHECK(h[0] == 13);
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaStreamDestroy(nullptr));
  CUDA_OK(cudaStreamDestroy(blocking));
  CUDA_OK(cudaStreamDestroy(nonblocking));
  CUDA_OK(cudaFree(d));
}

void events_order_streams_and_time_them() {
  fresh();
  const std::size_t n = 512;
  void* d = device_bytes(n);
  unsigned char h[512];
  std::memset(h, 0, n);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t start = nullptr, e = nullptr, untimed = nullptr;
  CUDA_OK(cudaEventCreate(&start));
  CUDA_OK(cudaEventCreate(&e));
  CUDA_OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  CUDA_OK(cudaEventRecord(start, s1));
  CUDA_OK(cudaMemsetAsync(d, 3, n, s1));
  CUDA_OK(cudaEventRecord(e, s1));
  CUDA_OK(cudaStreamWaitEvent(s2, e, 0));
  CUDA_OK(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, s2));
  float ms = -1.0f;
  CUDA_IS(cudaErrorNotReady, cudaEventElapsedTime(&ms, start, e));
  CUDA_OK(cudaStreamSynchronize(s2));  // runs s1's memset first: s2 waits for the event
  CHECK(h[0] == 3 && h[n - 1] == 3);
  CUDA_OK(cudaEventQuery(e));
  CUDA_OK(cudaEventElapsedTime(&ms, start, e));
  CHECK(ms >= 0.0f);
  CUDA_OK(cudaEventRecord(untimed, s1));
  CUDA_OK(cudaEventSynchronize(untimed));
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, start, untimed));
  // Polling ends: not ready once, then done.
  CUDA_OK(cudaMemsetAsync(d, 4, n, s1));
  CUDA_OK(cudaEventRecord(e, s1));
  int polls = 0;
  while (cudaEventQuery(e) == cudaErrorNotReady) ++polls;
  CHECK(polls == 1);
  // An event never recorded is complete.
  cudaEvent_t never = nullptr;
  CUDA_OK(cudaEventCreate(&never));
  CUDA_OK(cudaEventQuery(never));
  CUDA_OK(cudaStreamWaitEvent(s2, never, 0));
  CUDA_OK(cudaEventDestroy(never));
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaEventQuery(never));
  for (cudaEvent_t x : {start, e, untimed}) CUDA_OK(cudaEventDestroy(x));
  CUDA_OK(cudaStreamDestroy(s1));
  CUDA_OK(cudaStreamDestroy(s2));
  CUDA_OK(cudaFree(d));
}

// ------------------------------------------------------------------------------------------------
// Devices

void current_device_is_per_thread_and_handles_belong_to_devices() {
  fresh();
  int n = 0;
  CUDA_OK(cudaGetDeviceCount(&n));
  CHECK(n == 2);
  CUDA_OK(cudaSetDevice(1));
  int dev = -1;
  CUDA_OK(cudaGetDevice(&dev));
  CHECK(dev == 1);
  std::thread t([] {
    int other = -1;
    CUDA_OK(cudaGetDevice(&other));
    CHECK(other == 0);  // a new thread starts on device 0
  });
  t.join();
  CUDA_IS(cudaErrorInvalidDevice, cudaSetDevice(2));
  CUDA_IS(cudaErrorInvalidDevice, cudaSetDevice(-1));
  // A stream and an event of device 1.
  cudaStream_t s1 = nullptr;
  cudaEvent_t e1 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_OK(cudaEventCreate(&e1));
  CUDA_OK(cudaStreamGetDevice(s1, &dev));
  CHECK(dev == 1);
  void* d1 = device_bytes(64);
  CUDA_OK(cudaSetDevice(0));
  cudaStream_t s0 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  // Device 0 is current: recording device 1's event on the default stream (device 0's) fails,
  // as on device 0's stream; on device 1's stream it works from any current device.
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaEventRecord(e1, nullptr));
  CUDA_IS(cudaErrorInvalidResourceHandle, cudaEventRecord(e1, s0));
  CUDA_OK(cudaEventRecord(e1, s1));
  CUDA_OK(cudaStreamWaitEvent(s0, e1, 0));  // cross-device waits are fine
  // Copies may use another device's stream; kernels may not (see kernels below).
  unsigned char h[64] = {};
  CUDA_OK(cudaMemcpyAsync(h, d1, 64, cudaMemcpyDefault, s1));
  CUDA_OK(cudaStreamSynchronize(s1));
  CHECK(h[0] == 0xFF);
  CUDA_OK(cudaStreamDestroy(s0));
  CUDA_OK(cudaStreamDestroy(s1));
  CUDA_OK(cudaEventDestroy(e1));
  CUDA_OK(cudaFree(d1));
  cudaDeviceProp p{};
  CUDA_OK(cudaGetDeviceProperties(&p, 1));
  CHECK(std::string(p.name).find("emulated device 1") != std::string::npos);
  CHECK(p.multiProcessorCount == 2 && p.totalGlobalMem > 0);
  CUDA_IS(cudaErrorInvalidDevice, cudaGetDeviceProperties(&p, 2));
  int v = 0;
  CUDA_OK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryPoolsSupported, 0));
  CHECK(v == 1);
}

void pointer_attributes_tell_the_kind() {
  fresh();
  void *dev = nullptr, *man = nullptr, *pin = nullptr;
  CUDA_OK(cudaSetDevice(1));
  CUDA_OK(cudaMalloc(&dev, 100));
  CUDA_OK(cudaMallocManaged(&man, 100, cudaMemAttachGlobal));
  CUDA_OK(cudaHostAlloc(&pin, 100, cudaHostAllocPortable));
  CUDA_OK(cudaSetDevice(0));
  cudaPointerAttributes a{};
  CUDA_OK(cudaPointerGetAttributes(&a, static_cast<char*>(dev) + 99));
  CHECK(a.type == cudaMemoryTypeDevice && a.device == 1 && a.hostPointer == nullptr);
  CUDA_OK(cudaPointerGetAttributes(&a, man));
  CHECK(a.type == cudaMemoryTypeManaged && a.device == 1 && a.hostPointer == man);
  CUDA_OK(cudaPointerGetAttributes(&a, pin));
  CHECK(a.type == cudaMemoryTypeHost && a.hostPointer == pin && a.devicePointer == pin);
  int on_stack = 0;
  CUDA_OK(cudaPointerGetAttributes(&a, &on_stack));
  CHECK(a.type == cudaMemoryTypeUnregistered && a.device == cudaInvalidDeviceId);
  CUDA_OK(cudaFree(dev));
  CUDA_OK(cudaPointerGetAttributes(&a, dev));  // freed: no longer registered
  CHECK(a.type == cudaMemoryTypeUnregistered);
  CUDA_IS(cudaErrorInvalidValue, cudaFree(pin));  // pinned memory needs cudaFreeHost
  CUDA_OK(cudaFreeHost(pin));
  CUDA_OK(cudaFree(man));
}

void managed_memory_and_prefetch() {
  fresh();
  double* m = nullptr;
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&m), 8 * sizeof(double)));
  for (int i = 0; i < 8; ++i) m[i] = i;  // host access
  cudaMemLocation to_dev{cudaMemLocationTypeDevice, 0}, to_host{cudaMemLocationTypeHost, 0};
  CUDA_OK(cudaMemPrefetchAsync(m, 64, to_dev, 0, nullptr));
  CUDA_OK(cudaMemPrefetchAsync(m, 64, to_host, 0, nullptr));
  cudaMemLocation bad{cudaMemLocationTypeDevice, 7};
  CUDA_IS(cudaErrorInvalidDevice, cudaMemPrefetchAsync(m, 64, bad, 0, nullptr));
  void* d = device_bytes(64);
  CUDA_IS(cudaErrorInvalidValue, cudaMemPrefetchAsync(d, 64, to_dev, 0, nullptr));
  CUDA_IS(cudaErrorInvalidValue, cudaMemPrefetchAsync(m, 65, to_dev, 0, nullptr));  // past its end
  ctl::machine mc = ctl::current_machine();
  mc.concurrent_managed_access = false;
  ctl::set_machine(mc);
  CUDA_IS(cudaErrorInvalidDevice, cudaMemPrefetchAsync(m, 64, to_dev, 0, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(m[7] == 7.0);
  CUDA_OK(cudaFree(d));
  CUDA_OK(cudaFree(m));
  (void)ctl::take_memcheck_reports();
  fresh();
}

void pools_keep_or_release_by_threshold() {
  fresh();
  cudaStream_t s = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ctl::reset_counters();
  // The default pool keeps nothing across a synchronization (threshold 0).
  for (int i = 0; i < 3; ++i) {
    void* p = nullptr;
    CUDA_OK(cudaMallocAsync(&p, 10000, s));
    CUDA_OK(cudaMemsetAsync(p, i, 10000, s));
    CUDA_OK(cudaFreeAsync(p, s));
    CUDA_OK(cudaStreamSynchronize(s));
  }
  ctl::counters c = ctl::get_counters();
  CHECK(c.pool_maps == 3 && c.pool_unmaps == 3);
  // A pool with a release threshold keeps its block and reuses it.
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location = {cudaMemLocationTypeDevice, 0};
  cudaMemPool_t pool = nullptr;
  CUDA_OK(cudaMemPoolCreate(&pool, &props));
  uint64_t keep = UINT64_MAX;
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  ctl::reset_counters();
  void* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    void* p = nullptr;
    CUDA_OK(cudaMallocFromPoolAsync(&p, 10000, pool, s));
    if (i == 0) first = p;
    CHECK(p == first);
    CUDA_OK(cudaFreeAsync(p, s));
    CUDA_OK(cudaStreamSynchronize(s));
  }
  c = ctl::get_counters();
  CHECK(c.pool_maps == 1 && c.pool_unmaps == 0);
  uint64_t reserved = 0, used = 1;
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  CHECK(reserved >= 10000 && used == 0);
  CUDA_OK(cudaMemPoolTrimTo(pool, 0));
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  CHECK(reserved == 0 && ctl::get_counters().pool_unmaps == 1);
  // A pool block freed on one stream and used by unordered work on another: the late use is an
  // illegal address when it runs.
  void* p = nullptr;
  CUDA_OK(cudaMallocFromPoolAsync(&p, 4096, pool, s));
  cudaStream_t other = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  CUDA_OK(cudaMemsetAsync(p, 1, 4096, other));
  CUDA_OK(cudaFreeAsync(p, s));
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_IS(cudaErrorIllegalAddress, cudaStreamSynchronize(other));
  CHECK(reports_contain(ctl::take_memcheck_reports(), "freed by cudaFreeAsync"));
  CUDA_IS(cudaErrorIllegalAddress, cudaMalloc(&p, 16));  // sticky: the device is gone
  fresh();
  CUDA_OK(cudaMemPoolDestroy(pool));
  CUDA_OK(cudaStreamDestroy(s));
  CUDA_OK(cudaStreamDestroy(other));
}

// ------------------------------------------------------------------------------------------------
// Bounds checking and error injection

void copies_are_bounds_checked() {
  fresh();
  void* d = device_bytes(1000);
  std::vector<unsigned char> h(2000);
  auto* b = static_cast<unsigned char*>(d);
  CUDA_IS(cudaErrorInvalidValue, cudaMemcpyAsync(b + 900, h.data(), 101, cudaMemcpyDefault, 0));
  CUDA_IS(cudaErrorInvalidValue, cudaMemcpyAsync(h.data(), b - 8, 16, cudaMemcpyDefault, 0));
  CUDA_IS(cudaErrorInvalidValue, cudaMemsetAsync(b + 1, 0, 1000, 0));
  CUDA_IS(cudaErrorInvalidValue,
          cudaMemcpy2DAsync(b, 100, h.data(), 100, 100, 11, cudaMemcpyDefault, 0));
  CUDA_IS(cudaErrorInvalidPitchValue,
          cudaMemcpy2DAsync(b, 4096, h.data(), 3000000000ull, 10, 2, cudaMemcpyDefault, 0));
  auto r = ctl::take_memcheck_reports();
  CHECK(r.size() == 4);
  CHECK(reports_contain(r, "1 bytes past the end of a 1000-byte device allocation"));
  CHECK(reports_contain(r, "starts 8 bytes before a 1000-byte device allocation"));
  CUDA_OK(cudaMemcpyAsync(b + 900, h.data(), 100, cudaMemcpyDefault, 0));  // exactly fits
  CUDA_IS(cudaErrorInvalidMemcpyDirection,
          cudaMemcpyAsync(h.data(), h.data() + 1000, 8, cudaMemcpyHostToDevice, 0));
  // A copy queued now, whose memory is freed before it runs: an illegal address, found when the
  // copy runs, sticky for the device.
  void* e = device_bytes(64);
  cudaStream_t s = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUDA_OK(cudaMemcpyAsync(h.data(), e, 64, cudaMemcpyDefault, s));
  CUDA_OK(cudaFreeAsync(e, cudaStreamLegacy));  // not ordered with s
  CUDA_OK(cudaStreamSynchronize(nullptr));      // the free runs first
  CUDA_IS(cudaErrorIllegalAddress, cudaStreamSynchronize(s));
  CHECK(reports_contain(ctl::take_memcheck_reports(), "freed by cudaFreeAsync"));
  CUDA_IS(cudaErrorIllegalAddress, cudaGetLastError());  // sticky: reported again and again
  CUDA_IS(cudaErrorIllegalAddress, cudaGetLastError());
  CUDA_IS(cudaErrorIllegalAddress, cudaMemsetAsync(d, 0, 8, 0));
  fresh();
  // Freed memory: copies into it are refused and reported; a double free too.
  CUDA_OK(cudaFree(d));
  CUDA_IS(cudaErrorInvalidValue, cudaMemcpy(d, h.data(), 8, cudaMemcpyDefault));
  CUDA_IS(cudaErrorInvalidValue, cudaFree(d));
  r = ctl::take_memcheck_reports();
  CHECK(reports_contain(r, "freed by cudaFree"));
  CHECK(reports_contain(r, "already freed"));
  CUDA_OK(cudaStreamDestroy(s));
}

void errors_can_be_injected() {
  fresh();
  void *a = nullptr, *b = nullptr;
  ctl::fail_nth(ctl::call_class::alloc, 2, cudaErrorMemoryAllocation);
  CUDA_OK(cudaMalloc(&a, 8));
  CUDA_IS(cudaErrorMemoryAllocation, cudaMalloc(&b, 8));
  CHECK(b == nullptr);
  CUDA_IS(cudaErrorMemoryAllocation, cudaGetLastError());
  CUDA_OK(cudaGetLastError());  // not sticky: reset by the read
  CUDA_OK(cudaMalloc(&b, 8));
  // A copy that fails when it runs (an asynchronous error): the call succeeds, the
  // synchronization reports it, and the device stays unusable.
  ctl::fail_nth(ctl::call_class::memcpy, 1, cudaErrorLaunchFailure, true);
  unsigned char h[8] = {};
  CUDA_OK(cudaMemcpyAsync(a, h, 8, cudaMemcpyDefault, nullptr));
  CUDA_IS(cudaErrorLaunchFailure, cudaStreamSynchronize(nullptr));
  CUDA_IS(cudaErrorLaunchFailure, cudaMalloc(&b, 8));
  CUDA_OK(cudaSetDevice(1));  // other devices still work
  void* c = device_bytes(8);
  CUDA_OK(cudaFree(c));
  fresh();
  ctl::set_sticky_error(0, cudaErrorIllegalAddress);
  CUDA_IS(cudaErrorIllegalAddress, cudaDeviceSynchronize());
  fresh();
  // Capacity: a device of 1 MiB.
  ctl::machine m = ctl::current_machine();
  m.device_memory = 1 << 20;
  ctl::set_machine(m);
  void* big = nullptr;
  CUDA_IS(cudaErrorMemoryAllocation, cudaMalloc(&big, 2 << 20));
  CUDA_OK(cudaMalloc(&big, 512 << 10));
  CUDA_OK(cudaFree(big));
  // No driver, an old driver, no devices.
  m = ctl::machine{};
  m.driver_version = 0;
  ctl::set_machine(m);
  int n = 7, v = -1;
  CUDA_IS(cudaErrorInsufficientDriver, cudaGetDeviceCount(&n));
  CHECK(n == 0);
  CUDA_OK(cudaDriverGetVersion(&v));
  CHECK(v == 0);
  CUDA_IS(cudaErrorInsufficientDriver, cudaMalloc(&big, 8));
  m.driver_version = 12040;
  ctl::set_machine(m);
  CUDA_IS(cudaErrorInsufficientDriver, cudaGetDeviceCount(&n));
  CUDA_OK(cudaDriverGetVersion(&v));
  CHECK(v == 12040);
  CUDA_OK(cudaRuntimeGetVersion(&v));
  CHECK(v == runtime_version);
  m = ctl::machine{};
  m.device_count = 0;
  ctl::set_machine(m);
  CUDA_IS(cudaErrorNoDevice, cudaGetDeviceCount(&n));
  fresh();
  // The same through the environment, as C, Fortran and Python tests use it.
  setenv("GTSTORAGE_SIM_FAIL", "alloc:1:2,launch:3", 1);
  setenv("GTSTORAGE_SIM_DRIVER_VERSION", "13010", 1);
  ctl::reload_environment();
  CHECK(ctl::environment_error().empty());
  CUDA_IS(cudaErrorMemoryAllocation, cudaMalloc(&big, 8));
  CUDA_OK(cudaMalloc(&big, 8));
  CUDA_OK(cudaFree(big));
  setenv("GTSTORAGE_SIM_FAIL", "alloc:x", 1);
  ctl::reload_environment();
  CHECK(ctl::environment_error().find("GTSTORAGE_SIM_FAIL='alloc:x'") != std::string::npos);
  CUDA_IS(cudaErrorNoDevice, cudaGetDeviceCount(&n));
  unsetenv("GTSTORAGE_SIM_FAIL");
  unsetenv("GTSTORAGE_SIM_DRIVER_VERSION");
  ctl::reload_environment();
  CHECK(ctl::environment_error().empty());
  CUDA_OK(cudaFree(a));
  CUDA_OK(cudaFree(b));
  fresh();
}

// ------------------------------------------------------------------------------------------------
// Kernels

__global__ void record_indices(unsigned* hits, unsigned* dims) {
  const unsigned bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  __atomic_fetch_add(&hits[bx * threads + tx], 1u, __ATOMIC_RELAXED);
  dims[0] = gridDim.x * gridDim.y * gridDim.z;
  dims[1] = threads;
}

// Block-wide tree reduction in shared memory.
__global__ void block_sum(const int* in, int* out) {
  __shared__ int part[256];
  const unsigned t = threadIdx.x;
  part[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}

// Reverses each block's part through shared memory; with_barrier = false leaves the barrier out.
template <bool with_barrier>
__global__ void reverse_block(const int* in, int* out) {
  __shared__ int s[128];
  const unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  if (with_barrier) __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[blockDim.x - 1 - t];
}

namespace k = gts::device::simtest_impl;

// The library's transpose: load a tile, barrier, store it, and (second barrier) only then load
// the next tile into the same shared buffer. Leave the second barrier out to see it fail.
template <class T, bool second_barrier>
__global__ void transpose(k::kdims d, std::byte* dst, const std::byte* src, int sd, int64_t tiles_d,
                          int64_t tiles_s, int64_t total) {
  __shared__ T buf[k::tile_dim][k::tile_dim + 1];
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const k::tile_pos p = k::transpose_tile(d, sd, tiles_d, tiles_s, t);
    k::transpose_load<T>(d, src, sd, p, threadIdx.x, threadIdx.y, buf);
    __syncthreads();
    k::transpose_store<T>(d, dst, sd, p, threadIdx.x, threadIdx.y, buf);
    if (second_barrier) __syncthreads();
  }
}

template <class... P, class... A>
cudaError_t launch(void (*kernel)(P...), dim3 g, dim3 b, cudaStream_t s, A&&... args) {
  cudaLaunchConfig_t c{};
  c.gridDim = g;
  c.blockDim = b;
  c.stream = s;
  return cudaLaunchKernelEx(&c, kernel, std::forward<A>(args)...);
}

void kernels_run_every_thread_once() {
  fresh();
  const dim3 grids[] = {dim3(5), dim3(3, 2), dim3(2, 3, 2)};
  const dim3 blocks[] = {dim3(64), dim3(8, 4), dim3(4, 3, 2)};
  for (int i = 0; i < 3; ++i) {
    const unsigned nb = grids[i].x * grids[i].y * grids[i].z;
    const unsigned nt = blocks[i].x * blocks[i].y * blocks[i].z;
    unsigned* hits = nullptr;
    unsigned* dims = nullptr;
    CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&hits), nb * nt * sizeof(unsigned)));
    CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&dims), 2 * sizeof(unsigned)));
    CUDA_OK(cudaMemset(hits, 0, nb * nt * sizeof(unsigned)));
    CUDA_OK(launch(record_indices, grids[i], blocks[i], nullptr, hits, dims));
    CUDA_OK(cudaDeviceSynchronize());
    bool once = true;
    for (unsigned k2 = 0; k2 < nb * nt; ++k2) once = once && hits[k2] == 1;
    CHECK_MSG(once, "grid %u blocks x %u threads: not every thread ran exactly once", nb, nt);
    CHECK(dims[0] == nb && dims[1] == nt);
    CUDA_OK(cudaFree(hits));
    CUDA_OK(cudaFree(dims));
  }
  // Bad configurations and streams.
  unsigned* x = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&x), 64));
  CUDA_IS(cudaErrorInvalidConfiguration,
          launch(record_indices, dim3(1), dim3(1025), nullptr, x, x));
  CUDA_IS(cudaErrorInvalidConfiguration, launch(record_indices, dim3(0), dim3(32), nullptr, x, x));
  CUDA_OK(cudaSetDevice(1));
  cudaStream_t s1 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_OK(cudaSetDevice(0));
  // CUDA: a kernel launch fails on a stream of another device than the current one.
  CUDA_IS(cudaErrorInvalidResourceHandle, launch(record_indices, dim3(1), dim3(1), s1, x, x));
  CUDA_OK(cudaStreamDestroy(s1));
  // A launch error is the launch's own, whatever an earlier call left behind.
  CUDA_IS(cudaErrorInvalidDevice, cudaSetDevice(9));
  ctl::fail_nth(ctl::call_class::launch, 1, cudaErrorLaunchOutOfResources);
  CUDA_IS(cudaErrorLaunchOutOfResources, launch(record_indices, dim3(1), dim3(1), nullptr, x, x));
  CUDA_OK(cudaFree(x));
  fresh();
}

void barriers_and_shared_memory() {
  fresh();
  const int blocks = 6, threads = 256;
  int *in = nullptr, *out = nullptr;
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&in), blocks * threads * sizeof(int)));
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&out), blocks * threads * sizeof(int)));
  for (int i = 0; i < blocks * threads; ++i) in[i] = (i * 37) % 101;
  CUDA_OK(
      launch(block_sum, dim3(blocks), dim3(threads), nullptr, static_cast<const int*>(in), out));
  CUDA_OK(cudaDeviceSynchronize());
  bool sums = true;
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int t = 0; t < threads; ++t) want += in[b * threads + t];
    sums = sums && out[b] == want;
  }
  CHECK(sums);
  // With the barrier: right, in every schedule. Without: wrong, in the shuffled schedule and in
  // plain index order alike (thread 0 reads what thread 127 has not written yet).
  for (int schedule = 0; schedule < 2; ++schedule) {
    ctl::set_schedule(7 + schedule, schedule == 0);
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < blocks * 128; ++i) in[i] = i * 3 + round * 1000 + schedule * 100000;
      const bool barrier = round == 0;
      CUDA_OK(launch(barrier ? reverse_block<true> : reverse_block<false>, dim3(blocks), dim3(128),
                     nullptr, static_cast<const int*>(in), out));
      CUDA_OK(cudaDeviceSynchronize());
      int64_t wrong = 0;
      for (int b = 0; b < blocks; ++b) {
        for (int t = 0; t < 128; ++t) wrong += out[b * 128 + t] != in[b * 128 + 127 - t];
      }
      if (barrier) {
        CHECK_MSG(wrong == 0, "reverse with barrier: %lld wrong", static_cast<long long>(wrong));
      } else {
        CHECK_MSG(wrong > 0, "reverse without barrier: the simulator did not catch the race");
      }
    }
  }
  CUDA_OK(cudaFree(in));
  CUDA_OK(cudaFree(out));
  fresh();
}

// The library's transpose steps with and without the second barrier, on a grid smaller than
// the tile count, so each block transposes several tiles through one shared buffer.
void transpose_needs_its_second_barrier() {
  fresh();
  const int64_t rows = 96, cols = 160;  // 3 x 5 tiles
  using T = unsigned;
  T *src = nullptr, *dst = nullptr;
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&src), rows * cols * sizeof(T)));
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&dst), rows * cols * sizeof(T)));
  for (int64_t i = 0; i < rows * cols; ++i) src[i] = static_cast<T>(i * 2654435761u);
  // dst[r][c] = src[r][c] with dst row-major and src column-major: a layout change.
  k::kdims d{};
  d.ndim = 2;
  d.shape[0] = rows;
  d.shape[1] = cols;
  d.dst[0] = cols * sizeof(T);
  d.dst[1] = sizeof(T);
  d.src[0] = sizeof(T);
  d.src[1] = rows * sizeof(T);
  const int64_t tiles_d = cols / k::tile_dim, tiles_s = rows / k::tile_dim;
  for (int variant = 0; variant < 2; ++variant) {
    std::memset(dst, 0, rows * cols * sizeof(T));
    auto kern = variant == 0 ? transpose<T, true> : transpose<T, false>;
    CUDA_OK(launch(kern, dim3(2), dim3(k::tile_dim, k::tile_rows), nullptr, d,
                   reinterpret_cast<std::byte*>(dst), reinterpret_cast<const std::byte*>(src), 0,
                   tiles_d, tiles_s, tiles_d * tiles_s));
    CUDA_OK(cudaDeviceSynchronize());
    int64_t wrong = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) wrong += dst[r * cols + c] != src[c * rows + r];
    }
    if (variant == 0) {
      CHECK_MSG(wrong == 0, "transpose: %lld wrong elements", static_cast<long long>(wrong));
    } else {
      CHECK_MSG(wrong > 0, "transpose without its second barrier passed: the race went unseen");
    }
  }
  CUDA_OK(cudaFree(src));
  CUDA_OK(cudaFree(dst));
}

__global__ void write_at(unsigned char* p, int64_t offset) {
  if (threadIdx.x == 0) p[offset] = 1;
}

__global__ void read_at(const unsigned char* p, unsigned char* out) {
  if (threadIdx.x == 0) out[0] = p[0];
}

void kernel_out_of_bounds_in_redzone_is_sticky() {
  fresh();
  unsigned char* p = nullptr;
  CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&p), 1000));
  CUDA_OK(launch(write_at, dim3(1), dim3(32), nullptr, p, int64_t(999)));  // the last byte: fine
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(ctl::take_memcheck_reports().empty());
  CUDA_OK(launch(write_at, dim3(1), dim3(32), nullptr, p, int64_t(1003)));  // 4 bytes too far
  CUDA_IS(cudaErrorIllegalAddress, cudaDeviceSynchronize());
  CHECK(reports_contain(ctl::take_memcheck_reports(),
                        "wrote into the redzone 4 byte(s) after the end of a 1000-byte device"));
  fresh();
  CUDA_OK(launch(write_at, dim3(1), dim3(32), nullptr, p, int64_t(-3)));
  CUDA_IS(cudaErrorIllegalAddress, cudaDeviceSynchronize());
  CHECK(reports_contain(ctl::take_memcheck_reports(), "3 byte(s) before the start of"));
  fresh();
  CUDA_OK(cudaFree(p));
}

// Runs @p f in a child process; true when the child died (a fault) and printed @p needle.
template <class F>
bool child_faults_with(F f, const char* needle) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    f();
    _exit(0);  // no fault: the parent sees a clean exit
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const bool died = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  if (!died || text.find(needle) == std::string::npos) {
    std::fprintf(stderr, "child status %d, output:\n%s\n", status, text.c_str());
    return false;
  }
  return true;
}

#if defined(__SANITIZE_THREAD__)
#define GTS_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GTS_TEST_TSAN 1
#endif
#endif

void kernel_faults_are_reported() {
#if defined(GTS_TEST_TSAN)
  // ThreadSanitizer does not follow fibers across fork(); the faults are checked in the other
  // builds.
  std::printf("kernel_faults_are_reported: skipped under ThreadSanitizer\n");
  return;
#endif
  fresh();
  // Reports are asked for (a program that uses the emulated device gets no handler otherwise).
  ctl::set_fault_reports(true);
  CHECK(ctl::fault_reports_installed());
  // Past the end into the guard page, and into freed memory: the kernel thread faults, and
  // the simulator says what it hit before the process dies (as compute-sanitizer would).
  CHECK(child_faults_with(
      [] {
        unsigned char* p = nullptr;
        cudaMalloc(reinterpret_cast<void**>(&p), 1024);
        launch(write_at, dim3(1), dim3(32), nullptr, p, int64_t(1100));
        cudaDeviceSynchronize();
      },
      "in the guard page after a 1024-byte device allocation"));
  CHECK(child_faults_with(
      [] {
        unsigned char *p = nullptr, *out = nullptr;
        cudaMalloc(reinterpret_cast<void**>(&p), 64);
        cudaMalloc(reinterpret_cast<void**>(&out), 64);
        cudaFree(p);
        launch(read_at, dim3(1), dim3(32), nullptr, static_cast<const unsigned char*>(p), out);
        cudaDeviceSynchronize();
      },
      "inside a freed 64-byte device allocation"));
  // A program's own SIGSEGV handler still gets the fault after the report (chained).
  CHECK(child_faults_with(
      [] {
        ctl::set_fault_reports(false);
        struct sigaction own {};
        own.sa_handler = [](int) {
          const char text[] = "the program's own handler ran\n";
          ssize_t r = write(2, text, sizeof text - 1);
          (void)r;
          _exit(3);
        };
        sigemptyset(&own.sa_mask);
        sigaction(SIGSEGV, &own, nullptr);
        ctl::set_fault_reports(true);
        unsigned char* p = nullptr;
        cudaMalloc(reinterpret_cast<void**>(&p), 1024);
        launch(write_at, dim3(1), dim3(32), nullptr, p, int64_t(1100));
        cudaDeviceSynchronize();
      },
      "the program's own handler ran"));
  ctl::set_fault_reports(false);
  CHECK(!ctl::fault_reports_installed());
}

// Without fault reports asked for, allocations install no signal handler: the process's
// SIGSEGV and SIGBUS dispositions stay what the program set.
void no_signal_handler_unless_asked() {
  fresh();
  ctl::set_fault_reports(false);
  struct sigaction before_segv {
  }, before_bus{}, after{};
  sigaction(SIGSEGV, nullptr, &before_segv);
  sigaction(SIGBUS, nullptr, &before_bus);
  void* p = device_bytes(4096);
  CUDA_OK(cudaFree(p));
  CHECK(!ctl::fault_reports_installed());
  sigaction(SIGSEGV, nullptr, &after);
  CHECK(after.sa_handler == before_segv.sa_handler && after.sa_flags == before_segv.sa_flags);
  sigaction(SIGBUS, nullptr, &after);
  CHECK(after.sa_handler == before_bus.sa_handler && after.sa_flags == before_bus.sa_flags);
  // Asked for: installed; off again: the program's dispositions are back.
  ctl::set_fault_reports(true);
  CHECK(ctl::fault_reports_installed());
  sigaction(SIGSEGV, nullptr, &after);
  CHECK(after.sa_handler != before_segv.sa_handler);
  ctl::set_fault_reports(false);
  sigaction(SIGSEGV, nullptr, &after);
  CHECK(after.sa_handler == before_segv.sa_handler);
}

// A barrier in divergent code: the two halves of a warp wait at different __syncthreads()
// calls, which CUDA leaves undefined (a hang, or a barrier that opens for the wrong threads).
__global__ void divergent_barrier(int* out) {
  if (threadIdx.x % 2 == 0) {
    out[threadIdx.x] = 1;
    __syncthreads();
  } else {
    __syncthreads();
    out[threadIdx.x] = 2;
  }
}

// Threads that returned before a barrier count as arrived (Volta and later): not an error.
__global__ void barrier_after_early_exit(int* out) {
  if (threadIdx.x >= 16) return;
  out[blockIdx.x * 16 + threadIdx.x] = 1;
  __syncthreads();
  out[blockIdx.x * 16 + threadIdx.x] += 1;
}

void divergent_barriers_fail_the_launch() {
  fresh();
  int* out = nullptr;
  CUDA_OK(cudaMallocManaged(reinterpret_cast<void**>(&out), 64 * sizeof(int)));
  CUDA_OK(launch(barrier_after_early_exit, dim3(2), dim3(32), nullptr, out));
  CUDA_OK(cudaDeviceSynchronize());
  bool twos = true;
  for (int i = 0; i < 32; ++i) twos = twos && out[i] == 2;
  CHECK(twos);
  CHECK(ctl::take_memcheck_reports().empty());
  CUDA_OK(launch(divergent_barrier, dim3(2), dim3(32), nullptr, out));
  CUDA_IS(cudaErrorLaunchFailure, cudaDeviceSynchronize());
  const std::vector<std::string> r = ctl::take_memcheck_reports();
  CHECK_MSG(reports_contain(r, "divergent __syncthreads() in block"), "reports: %s",
            r.empty() ? "none" : r.front().c_str());
  CHECK(reports_contain(r, "test_emulated_runtime.cpp:"));
  fresh();
  CUDA_OK(cudaFree(out));
}

__global__ void throwing_kernel() {
  throw std::runtime_error("kernel threw");
}

void kernel_exception_is_a_launch_failure() {
  fresh();
  CUDA_OK(launch(throwing_kernel, dim3(2), dim3(4), nullptr));
  CUDA_IS(cudaErrorLaunchFailure, cudaDeviceSynchronize());
  CHECK(reports_contain(ctl::take_memcheck_reports(), "kernel threw"));
  fresh();
}

// ------------------------------------------------------------------------------------------------
// Threads: streams used from several host threads at once (also run under ThreadSanitizer).

void threads_share_the_runtime() {
  fresh();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &bad] {
      cudaSetDevice(t % 2);
      cudaStream_t s = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        ++bad;
        return;
      }
      std::vector<unsigned char> h(2048), r(2048);
      for (int i = 0; i < 40; ++i) {
        void* d = nullptr;
        for (std::size_t k2 = 0; k2 < h.size(); ++k2)
          h[k2] = static_cast<unsigned char>(t + i + k2);
        if (cudaMallocAsync(&d, h.size(), s) != cudaSuccess) ++bad;
        cudaMemcpyAsync(d, h.data(), h.size(), cudaMemcpyDefault, s);
        cudaMemcpyAsync(r.data(), d, r.size(), cudaMemcpyDefault, s);
        cudaFreeAsync(d, s);
        if (cudaStreamSynchronize(s) != cudaSuccess || h != r) ++bad;
      }
      cudaStreamDestroy(s);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad.load() == 0);
  CHECK(ctl::take_memcheck_reports().empty());
}

}  // namespace

int main() {
  async_copies_land_only_when_waited_for();
  default_streams_keep_cuda_semantics();
  events_order_streams_and_time_them();
  current_device_is_per_thread_and_handles_belong_to_devices();
  pointer_attributes_tell_the_kind();
  managed_memory_and_prefetch();
  pools_keep_or_release_by_threshold();
  copies_are_bounds_checked();
  errors_can_be_injected();
  kernels_run_every_thread_once();
  barriers_and_shared_memory();
  transpose_needs_its_second_barrier();
  kernel_out_of_bounds_in_redzone_is_sticky();
  kernel_exception_is_a_launch_failure();
  divergent_barriers_fail_the_launch();
  threads_share_the_runtime();
  no_signal_handler_unless_asked();
  // Last: forks children that die on purpose.
  kernel_faults_are_reported();
  return test::report("test_emulated_runtime");
}
