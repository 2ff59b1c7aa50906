// The CUDA runtime under the gpuXxx names gpu/gpu_backend.inl is written against, and the
// identity of the CUDA build (namespace, backend name, DLPack codes). Included by
// cuda_backend.cu before gpu_backend.inl.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#define GTS_GPU_NS cuda_impl
#define GTS_GPU_NAME "cuda"
#define GTS_GPU_LABEL "CUDA"
#define GTS_GPU_DL_DEVICE 2    // kDLCUDA
#define GTS_GPU_DL_UNIFIED 13  // kDLCUDAManaged
#define GTS_GPU_DL_PINNED 3    // kDLCUDAHost
#define GTS_GPU_VISIBLE_ENV "CUDA_VISIBLE_DEVICES"
#define GTS_GPU_RUNTIME_VERSION CUDART_VERSION
#define GTS_GPU_CUDA_API CUDART_VERSION
#if CUDART_VERSION >= 12080
#define GTS_GPU_HAVE_STREAM_GET_DEVICE 1
#endif

#include "device/gpu/cuda_spelling.hpp"
#include "device/gpu/hardware_runtime.hpp"

namespace gts::device::GTS_GPU_NS {

/// The allocation (base, bytes) that contains @p ptr, as the runtime knows it (device, managed
/// or pinned memory of any allocator); an error for any other address. CUDA has it in the
/// driver API only (cuMemGetAddressRange), reached through the runtime's entry-point query so
/// that the library still links the static runtime alone.
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

}  // namespace gts::device::GTS_GPU_NS
