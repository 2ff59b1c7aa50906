// gpuXxx as CUDA spells it, for the two runtimes with CUDA's API: the real one
// (cuda/cuda_names.hpp) and the emulated one (emulated/emulated_names.hpp): the gpuXxx types
// (in the build's namespace) and functions. The including names header has defined the build's
// identity (GTS_GPU_NS, ...) and GTS_GPU_CUDA_API (the CUDA version whose API the runtime has),
// with CUDA's names in scope in that namespace.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#if !defined(GTS_GPU_NS) || !defined(GTS_GPU_CUDA_API)
#error "include cuda/cuda_names.hpp or emulated/emulated_names.hpp, not this header"
#endif

#define GTS_GPU_FN(name) "cuda" #name

#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuErrorNotSupported cudaErrorNotSupported
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuErrorInvalidPitchValue cudaErrorInvalidPitchValue
#define gpuErrorInvalidResourceHandle cudaErrorInvalidResourceHandle
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuGetDevice cudaGetDevice
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrConcurrentManagedAccess cudaDevAttrConcurrentManagedAccess
#define gpuDevAttrMemoryPoolsSupported cudaDevAttrMemoryPoolsSupported
#define gpuDevAttrMaxPitch cudaDevAttrMaxPitch
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocManaged cudaMallocManaged
#define gpuMemAttachGlobal cudaMemAttachGlobal
#define gpuHostAlloc cudaHostAlloc
#define gpuFreeHost cudaFreeHost
#define gpuHostAllocPortable cudaHostAllocPortable
#define gpuFreeAsync cudaFreeAsync
#define gpuMallocFromPoolAsync cudaMallocFromPoolAsync
#define gpuMemPoolCreate cudaMemPoolCreate
#define gpuMemPoolSetAttribute cudaMemPoolSetAttribute
#define gpuMemPoolTrimTo cudaMemPoolTrimTo
#define gpuMemPoolAttrReleaseThreshold cudaMemPoolAttrReleaseThreshold
#define gpuMemPoolGetAttribute cudaMemPoolGetAttribute
#define gpuMemPoolAttrReservedMemCurrent cudaMemPoolAttrReservedMemCurrent
#define gpuMemPoolAttrReservedMemHigh cudaMemPoolAttrReservedMemHigh
#define gpuMemPoolAttrUsedMemCurrent cudaMemPoolAttrUsedMemCurrent
#define gpuMemPoolAttrUsedMemHigh cudaMemPoolAttrUsedMemHigh
#define gpuMemAllocationTypePinned cudaMemAllocationTypePinned
#define gpuMemLocationTypeDevice cudaMemLocationTypeDevice
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuMemsetAsync cudaMemsetAsync
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuStreamGetDevice cudaStreamGetDevice
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDefault cudaEventDefault
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuPointerGetAttributes cudaPointerGetAttributes

namespace gts::device::GTS_GPU_NS {

using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
using gpuPointerAttributes = cudaPointerAttributes;
using gpuMemPool_t = cudaMemPool_t;
using gpuMemPoolProps = cudaMemPoolProps;
using gpuMemLocation = cudaMemLocation;

/// Prefetch of unified memory to @p device (-1 = host). CUDA 13 replaced the device ordinal
/// argument by a cudaMemLocation plus flags (the emulated runtime implements CUDA 13).
inline gpuError_t gpu_prefetch(const void* ptr, size_t bytes, int device, gpuStream_t stream) {
#if GTS_GPU_CUDA_API >= 13000
  gpuMemLocation loc{};
  loc.type = device < 0 ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  loc.id = device < 0 ? 0 : device;
  return cudaMemPrefetchAsync(ptr, bytes, loc, 0, stream);
#else
  return cudaMemPrefetchAsync(ptr, bytes, device < 0 ? cudaCpuDeviceId : device, stream);
#endif
}

enum class gpu_space { host, device, unified, pinned };

inline gpu_space gpu_pointer_space(const gpuPointerAttributes& a) {
  switch (a.type) {
    case cudaMemoryTypeDevice:
      return gpu_space::device;
    case cudaMemoryTypeManaged:
      return gpu_space::unified;
    case cudaMemoryTypeHost:
      return gpu_space::pinned;
    default:
      return gpu_space::host;
  }
}

/// Errors after which the device (its context) is unusable for the rest of the process.
inline bool gpu_sticky_error(gpuError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
      return true;
    default:
      return false;
  }
}

/// Errors that mean "no usable device here", also when they appear after initialization (an
/// exclusive-process GPU taken by another process, a driver/library mismatch, a stub libcuda).
inline bool gpu_unavailable_error(gpuError_t e) {
  switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return true;
    default:
      return false;
  }
}

/// kernel<<<grid, block, 0, stream>>>(args...), returning the launch's own error:
/// cudaLaunchKernelEx reports the launch, where cudaGetLastError after <<<>>> would also report
/// (and clear) an error some earlier call left behind.
template <class... Params, class... Args>
gpuError_t gpu_launch(void (*kernel)(Params...), dim3 grid, dim3 block, gpuStream_t stream,
                      Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = nullptr;
  config.numAttrs = 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace gts::device::GTS_GPU_NS
