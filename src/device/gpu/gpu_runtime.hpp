// Portability layer: the CUDA and HIP backends are one source (gpu_backend.inl) compiled twice.
// It spells every runtime call as gpuXxx; this header maps those names onto the CUDA runtime
// (GTS_GPU_HIP undefined) or the HIP runtime (GTS_GPU_HIP defined), and names the namespace,
// backend name and DLPack codes of each build so both can live in one library.
#pragma once

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

using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp = hipDeviceProp_t;
using gpuPointerAttributes = hipPointerAttribute_t;

#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuErrorMemoryAllocation hipErrorOutOfMemory
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuErrorInsufficientDriver hipErrorInsufficientDriver
#define gpuErrorNotSupported hipErrorNotSupported
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuErrorInvalidPitchValue hipErrorInvalidPitchValue
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDevice hipGetDevice
#define gpuSetDevice hipSetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuDevAttrConcurrentManagedAccess hipDeviceAttributeConcurrentManagedAccess
#define gpuDevAttrMemoryPoolsSupported hipDeviceAttributeMemoryPoolsSupported
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocManaged hipMallocManaged
#define gpuMemAttachGlobal hipMemAttachGlobal
#define gpuHostAlloc hipHostMalloc
#define gpuFreeHost hipHostFree
#define gpuHostAllocPortable hipHostMallocPortable
#define gpuMallocAsync hipMallocAsync
#define gpuFreeAsync hipFreeAsync
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy hipMemcpy
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuMemsetAsync hipMemsetAsync
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDefault hipEventDefault
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

}  // namespace gts::device::GTS_GPU_NS

#else  // CUDA

#include <cuda_runtime.h>

#define GTS_GPU_NS cuda_impl
#define GTS_GPU_NAME "cuda"
#define GTS_GPU_LABEL "CUDA"
#define GTS_GPU_FN(name) "cuda" #name
#define GTS_GPU_DL_DEVICE 2    // kDLCUDA
#define GTS_GPU_DL_UNIFIED 13  // kDLCUDAManaged
#define GTS_GPU_DL_PINNED 3    // kDLCUDAHost
#define GTS_GPU_VISIBLE_ENV "CUDA_VISIBLE_DEVICES"

using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp = cudaDeviceProp;
using gpuPointerAttributes = cudaPointerAttributes;

#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuErrorInsufficientDriver cudaErrorInsufficientDriver
#define gpuErrorNotSupported cudaErrorNotSupported
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuErrorInvalidPitchValue cudaErrorInvalidPitchValue
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDevice cudaGetDevice
#define gpuSetDevice cudaSetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuDevAttrConcurrentManagedAccess cudaDevAttrConcurrentManagedAccess
#define gpuDevAttrMemoryPoolsSupported cudaDevAttrMemoryPoolsSupported
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocManaged cudaMallocManaged
#define gpuMemAttachGlobal cudaMemAttachGlobal
#define gpuHostAlloc cudaHostAlloc
#define gpuFreeHost cudaFreeHost
#define gpuHostAllocPortable cudaHostAllocPortable
#define gpuMallocAsync cudaMallocAsync
#define gpuFreeAsync cudaFreeAsync
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy cudaMemcpy
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuMemsetAsync cudaMemsetAsync
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDefault cudaEventDefault
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuPointerGetAttributes cudaPointerGetAttributes

namespace gts::device::GTS_GPU_NS {

/// Prefetch of unified memory to @p device (-1 = host). CUDA 13 replaced the device ordinal
/// argument by a cudaMemLocation plus flags.
inline gpuError_t gpu_prefetch(const void* ptr, size_t bytes, int device, gpuStream_t stream) {
#if CUDART_VERSION >= 13000
  cudaMemLocation loc{};
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

}  // namespace gts::device::GTS_GPU_NS

#endif
