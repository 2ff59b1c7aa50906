// The HIP runtime under the gpuXxx names gpu/gpu_backend.inl is written against, and the
// identity of the HIP build (namespace, backend name, DLPack codes). Included by
// hip_backend.hip before gpu_backend.inl.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#define GTS_GPU_HIP 1
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

#include "device/gpu/hardware_runtime.hpp"
