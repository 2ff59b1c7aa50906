// The emulated CUDA runtime (namespace gts::emulated): a simulated CUDA runtime. It declares, with
// CUDA's names, types and error numbers, the subset of the CUDA runtime API that the GPU backend
// (src/device/gpu) uses, and implements it on the host (runtime.cpp), so the backend's one source
// compiles a third time with the host compiler and runs for real on machines without a GPU: that
// build is the "emulated" device.
//
// It is adversarial, not obliging (see docs/architecture.md, "The simulated CUDA runtime"):
// - work queued on a stream runs later (when something waits for it), in stream order, with
//   the legacy default stream's implicit synchronization; a host read that does not wait sees
//   stale bytes, fresh device memory is poisoned (0xFF), freed memory is unmapped;
// - several devices, a thread-local current device, streams and events that belong to one
//   device and fail as CUDA does when used from another;
// - allocations are bounds-checked (copies are checked against the allocation they touch,
//   kernels by guard pages and redzones), errors can be injected (the n-th allocation, copy or
//   launch fails; no driver; a driver older than the runtime; sticky errors);
// - kernels run on the host: every thread of a block is a fiber, __syncthreads() is a real
//   barrier and threads run in a shuffled order, so a missing barrier gives wrong results.
//
// Everything lives in namespace gts::emulated, so the library can link the real (static) CUDA
// runtime next to it. Only the simulated backend's translation unit (emulated_backend.cpp) and
// tests include this header: it also defines CUDA's keywords (__global__, __shared__, ...) as
// macros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

namespace gts::emulated {

/// The CUDA version this runtime implements (what CUDART_VERSION is for the real one).
inline constexpr int runtime_version = 13000;

// ------------------------------------------------------------------------------------------------
// Types (CUDA's names and numbering)

// Every error this runtime returns: CUDA's name, number and text (what cudaGetErrorName and
// cudaGetErrorString say). One list serves the enum below and those two functions (faults.cpp).
#define GTS_EMULATED_CUDA_ERRORS(X)                                                              \
  X(cudaSuccess, 0, "no error")                                                                  \
  X(cudaErrorInvalidValue, 1, "invalid argument")                                                \
  X(cudaErrorMemoryAllocation, 2, "out of memory")                                               \
  X(cudaErrorInitializationError, 3, "initialization error")                                     \
  X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                          \
  X(cudaErrorInvalidPitchValue, 12, "invalid pitch argument")                                    \
  X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                 \
  X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                    \
  X(cudaErrorStubLibrary, 34, "CUDA driver is a stub library")                                   \
  X(cudaErrorInsufficientDriver, 35,                                                             \
    "CUDA driver version is insufficient for CUDA runtime version")                              \
  X(cudaErrorDevicesUnavailable, 46, "CUDA-capable device(s) is/are busy or unavailable")        \
  X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                \
  X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                       \
  X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                              \
  X(cudaErrorNotReady, 600, "device not ready")                                                  \
  X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                    \
  X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")               \
  X(cudaErrorAssert, 710, "device-side assert triggered")                                        \
  X(cudaErrorHardwareStackError, 714, "hardware stack error")                                    \
  X(cudaErrorIllegalInstruction, 715, "an illegal instruction was encountered")                  \
  X(cudaErrorMisalignedAddress, 716, "misaligned address")                                       \
  X(cudaErrorInvalidAddressSpace, 717, "operation not supported on global/shared address space") \
  X(cudaErrorInvalidPc, 718, "invalid program counter")                                          \
  X(cudaErrorLaunchFailure, 719, "unspecified launch failure")                                   \
  X(cudaErrorNotSupported, 801, "operation not supported")                                       \
  X(cudaErrorSystemDriverMismatch, 803,                                                          \
    "system has unsupported display driver / cuda driver combination")                           \
  X(cudaErrorCompatNotSupportedOnDevice, 804,                                                    \
    "forward compatibility was attempted on non supported HW")                                   \
  X(cudaErrorUnknown, 999, "unknown error")

enum cudaError_t : int {
#define GTS_EMULATED_CUDA_ENUMERATOR(name, number, text) name = (number),
  GTS_EMULATED_CUDA_ERRORS(GTS_EMULATED_CUDA_ENUMERATOR)
#undef GTS_EMULATED_CUDA_ENUMERATOR
};

struct CUstream_st;  // opaque, as in CUDA
struct CUevent_st;
struct CUmemPoolHandle_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;
using cudaMemPool_t = CUmemPoolHandle_st*;

/// The legacy default stream and the per-thread default stream, as handles (CUDA's values).
inline cudaStream_t const cudaStreamLegacy = reinterpret_cast<cudaStream_t>(0x1);
inline cudaStream_t const cudaStreamPerThread = reinterpret_cast<cudaStream_t>(0x2);

inline constexpr unsigned cudaStreamDefault = 0x0;
inline constexpr unsigned cudaStreamNonBlocking = 0x1;
inline constexpr unsigned cudaEventDefault = 0x0;
inline constexpr unsigned cudaEventBlockingSync = 0x1;
inline constexpr unsigned cudaEventDisableTiming = 0x2;
inline constexpr unsigned cudaMemAttachGlobal = 0x1;
inline constexpr unsigned cudaHostAllocDefault = 0x0;
inline constexpr unsigned cudaHostAllocPortable = 0x1;
inline constexpr unsigned cudaHostAllocMapped = 0x2;
inline constexpr int cudaCpuDeviceId = -1;
inline constexpr int cudaInvalidDeviceId = -2;

enum cudaMemcpyKind : int {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemoryType : int {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

enum cudaDeviceAttr : int {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrMemoryPoolsSupported = 115,
};

/// The fields of cudaDeviceProp the backend reads (the real struct has many more).
struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  int major;
  int minor;
  int multiProcessorCount;
  int maxThreadsPerBlock;
  int concurrentManagedAccess;
  std::size_t memPitch;
};

enum cudaMemLocationType : int {
  cudaMemLocationTypeInvalid = 0,
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
};

struct cudaMemLocation {
  cudaMemLocationType type;
  int id;
};

enum cudaMemAllocationType : int {
  cudaMemAllocationTypeInvalid = 0,
  cudaMemAllocationTypePinned = 1
};
enum cudaMemAllocationHandleType : int { cudaMemHandleTypeNone = 0 };

struct cudaMemPoolProps {
  cudaMemAllocationType allocType;
  cudaMemAllocationHandleType handleTypes;
  cudaMemLocation location;
  void* win32SecurityAttributes;
  std::size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};

enum cudaMemPoolAttr : int {
  cudaMemPoolAttrReleaseThreshold = 0x4,
  cudaMemPoolAttrReservedMemCurrent = 0x5,
  cudaMemPoolAttrReservedMemHigh = 0x6,
  cudaMemPoolAttrUsedMemCurrent = 0x7,
  cudaMemPoolAttrUsedMemHigh = 0x8,
};

struct uint3 {
  unsigned x, y, z;
};

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

struct cudaLaunchAttribute;
struct cudaLaunchConfig_t {
  dim3 gridDim;
  dim3 blockDim;
  std::size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned numAttrs;
};

// ------------------------------------------------------------------------------------------------
// Runtime API (host)

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned flags = cudaMemAttachGlobal);
cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned flags);
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr);
/// The driver API's cuMemGetAddressRange with the runtime's types: the start and size of the
/// live allocation (device, pool, managed or pinned) that contains @p ptr;
/// cudaErrorInvalidValue for any other address.
cudaError_t cuMemGetAddressRange(void** base, std::size_t* bytes, const void* ptr);

cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream);
cudaError_t cudaMallocFromPoolAsync(void** ptr, std::size_t bytes, cudaMemPool_t pool,
                                    cudaStream_t stream);
cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props);
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, std::size_t min_bytes_to_keep);

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream);
cudaError_t cudaMemset(void* dst, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream);
/// CUDA 13's form: a location (device or host) and flags.
cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, cudaMemLocation location,
                                 unsigned flags, cudaStream_t stream);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device);

cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);

// ------------------------------------------------------------------------------------------------
// Kernels

namespace detail {
/// Validates a launch and queues @p body to run for every thread of the grid (runtime.cpp).
cudaError_t launch(const cudaLaunchConfig_t* config, const void* kernel,
                   std::function<void()> body);
}  // namespace detail

/// CUDA's typed launch (cuda_runtime.h): the arguments are converted to the kernel's parameter
/// types and copied when the kernel is launched, and the return value is the launch's own
/// error, never an earlier call's.
template <class... Params, class... Args>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, void (*kernel)(Params...),
                               Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "wrong number of kernel arguments");
  if (kernel == nullptr) return detail::launch(config, nullptr, {});
  std::tuple<std::decay_t<Params>...> bound(static_cast<Params>(std::forward<Args>(args))...);
  return detail::launch(config, reinterpret_cast<const void*>(kernel),
                        [kernel, bound]() { std::apply(kernel, bound); });
}

/// The built-in variables of the thread running now (set by the block scheduler before each
/// fiber runs).
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

/// __syncthreads(): waits until every thread of the block that has not exited arrives. @p file
/// and @p line name the call: threads of a block that wait at different calls (a barrier in
/// divergent code, which CUDA leaves undefined) fail the launch, as compute-sanitizer's
/// synccheck reports them.
void sync_threads(const char* file = nullptr, int line = 0);

}  // namespace gts::emulated

// CUDA's keywords for the host compiler. __shared__ variables become thread_local: a block runs
// entirely on one host thread, one block at a time, so its fibers share them as a block does.
// (They are reserved identifiers, as in CUDA, where the compiler defines them.)
// NOLINTBEGIN(bugprone-reserved-identifier)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __syncthreads() ::gts::emulated::sync_threads(__FILE__, __LINE__)
// NOLINTEND(bugprone-reserved-identifier)
