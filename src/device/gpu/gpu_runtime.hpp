// Portability layer: the CUDA, HIP and emulated backends are one source (gpu_backend.inl)
// compiled three times. It spells every runtime call as gpuXxx; this header maps those names
// onto the CUDA runtime (default), the HIP runtime (GTS_GPU_HIP defined) or the simulated CUDA
// runtime of src/device/sim (GTS_GPU_SIM defined: the "emulated" device, host code only), and
// names the namespace, backend name and DLPack codes of each build so all can live in one
// library.
#pragma once

#include <cstdint>
#include <tuple>
#include <utility>

#if defined(GTS_GPU_HIP)

#include <hip/hip_runtime.h>

#define GTS_GPU_NS hip_impl
#define GTS_GPU_NAME "hip"
#define GTS_GPU_LABEL "HIP"
#define GTS_GPU_FN(name) "hip" #name
#define GTS_GPU_DL_DEVICE 10   // kDLROCM
#define GTS_GPU_DL_UNIFIED 10  // DLPack has no ROCm-managed code; managed memory is device memory
#define GTS_GPU_DL_PINNED 11   // kDLROCMHost
#define GTS_GPU_VISIBLE_ENV "HIP_VISIBLE_DEVICES"
// HIP's version numbers are not CUDA's: no driver-floor check (GTS_GPU_RUNTIME_VERSION unset).
#if HIP_VERSION_MAJOR >= 6
#define GTS_GPU_HAVE_STREAM_GET_DEVICE 1
#endif

using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp = hipDeviceProp_t;
using gpuPointerAttributes = hipPointerAttribute_t;
using gpuMemPool_t = hipMemPool_t;
using gpuMemPoolProps = hipMemPoolProps;

#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuErrorInsufficientDriver hipErrorInsufficientDriver
#define gpuErrorNotSupported hipErrorNotSupported
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuErrorInvalidPitchValue hipErrorInvalidPitchValue
#define gpuErrorInvalidResourceHandle hipErrorInvalidResourceHandle
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuGetDevice hipGetDevice
#define gpuSetDevice hipSetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrConcurrentManagedAccess hipDeviceAttributeConcurrentManagedAccess
#define gpuDevAttrMemoryPoolsSupported hipDeviceAttributeMemoryPoolsSupported
#define gpuDevAttrMaxPitch hipDeviceAttributeMaxPitch
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocManaged hipMallocManaged
#define gpuMemAttachGlobal hipMemAttachGlobal
#define gpuHostAlloc hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuHostAllocPortable hipHostMallocPortable
#define gpuFreeAsync hipFreeAsync
#define gpuMallocFromPoolAsync hipMallocFromPoolAsync
#define gpuMemPoolCreate hipMemPoolCreate
#define gpuMemPoolSetAttribute hipMemPoolSetAttribute
#define gpuMemPoolTrimTo hipMemPoolTrimTo
#define gpuMemPoolAttrReleaseThreshold hipMemPoolAttrReleaseThreshold
#define gpuMemPoolGetAttribute hipMemPoolGetAttribute
#define gpuMemPoolAttrReservedMemCurrent hipMemPoolAttrReservedMemCurrent
#define gpuMemPoolAttrReservedMemHigh hipMemPoolAttrReservedMemHigh
#define gpuMemPoolAttrUsedMemCurrent hipMemPoolAttrUsedMemCurrent
#define gpuMemPoolAttrUsedMemHigh hipMemPoolAttrUsedMemHigh
#define gpuMemAllocationTypePinned hipMemAllocationTypePinned
#define gpuMemLocationTypeDevice hipMemLocationTypeDevice
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuMemsetAsync hipMemsetAsync
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuStreamGetDevice hipStreamGetDevice
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDefault hipEventDefault
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuPointerGetAttributes hipPointerGetAttributes

namespace gts::device::GTS_GPU_NS {

/// Prefetch of unified memory to @p device (-1 = host).
inline gpuError_t gpu_prefetch(const void* ptr, size_t bytes, int device, gpuStream_t stream) {
  return hipMemPrefetchAsync(ptr, bytes, device < 0 ? hipCpuDeviceId : device, stream);
}

enum class gpu_space { host, device, unified, pinned };

inline gpu_space gpu_pointer_space(const gpuPointerAttributes& a) {
  if (a.isManaged) return gpu_space::unified;
#if HIP_VERSION_MAJOR >= 6
  const hipMemoryType t = a.type;
#else
  const hipMemoryType t = a.memoryType;
#endif
  if (t == hipMemoryTypeDevice) return gpu_space::device;
  if (t == hipMemoryTypeHost) return a.hostPointer != nullptr ? gpu_space::pinned : gpu_space::host;
  return gpu_space::host;
}

/// The allocation (base, bytes) that contains @p ptr, as the runtime knows it (device, managed
/// or pinned memory of any allocator); an error for any other address.
inline gpuError_t gpu_address_range(const void* ptr, void** base, std::size_t* bytes) {
  return hipMemGetAddressRange(base, bytes, const_cast<void*>(ptr));
}

/// Errors after which the device is unusable for the rest of the process.
inline bool gpu_sticky_error(gpuError_t e) {
  return e == hipErrorIllegalAddress || e == hipErrorLaunchFailure || e == hipErrorAssert ||
         e == hipErrorLaunchTimeOut || e == hipErrorContextIsDestroyed;
}

/// Errors that mean "no usable device here" even after initialization succeeded.
inline bool gpu_unavailable_error(gpuError_t e) {
  return e == hipErrorNoDevice || e == hipErrorInsufficientDriver;
}

/// kernel<<<grid, block, 0, stream>>>(args...), returning the launch's own error (never an
/// error an earlier call left behind, which hipGetLastError would report).
template <class... Params, class... Args>
gpuError_t gpu_launch(void (*kernel)(Params...), dim3 grid, dim3 block, gpuStream_t stream,
                      Args&&... args) {
  std::tuple<Params...> values(static_cast<Params>(std::forward<Args>(args))...);
  return std::apply(
      [&](auto&... v) {
        void* argv[] = {static_cast<void*>(&v)...};
        return hipLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, argv, 0, stream);
      },
      values);
}

}  // namespace gts::device::GTS_GPU_NS

#else  // CUDA, real or simulated

#if defined(GTS_GPU_SIM)

#include "device/sim/sim_control.hpp"
#include "device/sim/sim_runtime.hpp"

#define GTS_GPU_NS sim_impl
#define GTS_GPU_NAME "emulated"
#define GTS_GPU_LABEL "emulated"
// The simulated device is host memory: its descriptors must never pass for CUDA memory, so
// CuPy or PyTorch cannot take a host address for a device pointer. Its device memory says
// kDLExtDev ("not a device you know", consumers refuse it); its unified and pinned memory are
// what they really are, host memory that the simulated device can also reach (kDLCPU).
#define GTS_GPU_DL_DEVICE 12  // kDLExtDev
#define GTS_GPU_DL_UNIFIED 1  // kDLCPU
#define GTS_GPU_DL_PINNED 1   // kDLCPU
#define GTS_GPU_VISIBLE_ENV "GTSTORAGE_EMULATED_DEVICES"
#define GTS_GPU_RUNTIME_VERSION (::gts::simcuda::runtime_version)
#define GTS_GPU_HAVE_STREAM_GET_DEVICE 1

namespace gts::device::sim_impl {
using namespace ::gts::simcuda;  // CUDA's names, as the CUDA build sees them globally
}  // namespace gts::device::sim_impl

using gpuError_t = ::gts::simcuda::cudaError_t;
using gpuStream_t = ::gts::simcuda::cudaStream_t;
using gpuEvent_t = ::gts::simcuda::cudaEvent_t;
using gpuDeviceProp = ::gts::simcuda::cudaDeviceProp;
using gpuPointerAttributes = ::gts::simcuda::cudaPointerAttributes;
using gpuMemPool_t = ::gts::simcuda::cudaMemPool_t;
using gpuMemPoolProps = ::gts::simcuda::cudaMemPoolProps;
using gpuMemLocation = ::gts::simcuda::cudaMemLocation;

#else

#include <cuda_runtime.h>

#define GTS_GPU_NS cuda_impl
#define GTS_GPU_NAME "cuda"
#define GTS_GPU_LABEL "CUDA"
#define GTS_GPU_DL_DEVICE 2    // kDLCUDA
#define GTS_GPU_DL_UNIFIED 13  // kDLCUDAManaged
#define GTS_GPU_DL_PINNED 3    // kDLCUDAHost
#define GTS_GPU_VISIBLE_ENV "CUDA_VISIBLE_DEVICES"
#define GTS_GPU_RUNTIME_VERSION CUDART_VERSION
#if CUDART_VERSION >= 12080
#define GTS_GPU_HAVE_STREAM_GET_DEVICE 1
#endif

using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
using gpuPointerAttributes = cudaPointerAttributes;
using gpuMemPool_t = cudaMemPool_t;
using gpuMemPoolProps = cudaMemPoolProps;
using gpuMemLocation = cudaMemLocation;

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

/// Prefetch of unified memory to @p device (-1 = host). CUDA 13 replaced the device ordinal
/// argument by a cudaMemLocation plus flags (the simulated runtime implements CUDA 13).
inline gpuError_t gpu_prefetch(const void* ptr, size_t bytes, int device, gpuStream_t stream) {
#if defined(GTS_GPU_SIM) || CUDART_VERSION >= 13000
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

/// The allocation (base, bytes) that contains @p ptr, as the runtime knows it (device, managed
/// or pinned memory of any allocator); an error for any other address. CUDA has it in the
/// driver API only (cuMemGetAddressRange), reached through the runtime's entry-point query so
/// that the library still links the static runtime alone; the simulated runtime has the same
/// call with the runtime's types.
#if defined(GTS_GPU_SIM)
inline gpuError_t gpu_address_range(const void* ptr, void** base, std::size_t* bytes) {
  return cuMemGetAddressRange(base, bytes, ptr);
}
#else
inline gpuError_t gpu_address_range(const void* ptr, void** base, std::size_t* bytes) {
  // CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr ptr), with
  // CUdeviceptr a 64-bit unsigned integer and CUDA_SUCCESS 0.
  using range_fn = int (*)(unsigned long long*, std::size_t*, unsigned long long);
  static const range_fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return range_fn(nullptr);
    }
    return reinterpret_cast<range_fn>(f);
  }();
  if (fn == nullptr) return cudaErrorNotSupported;
  unsigned long long b = 0;
  if (fn(&b, bytes, reinterpret_cast<uintptr_t>(ptr)) != 0) return cudaErrorInvalidValue;
  *base = reinterpret_cast<void*>(static_cast<uintptr_t>(b));
  return cudaSuccess;
}
#endif

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

#endif
