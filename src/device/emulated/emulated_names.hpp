// The emulated CUDA runtime (src/emulated) under the gpuXxx names gpu/gpu_backend.inl is written
// against, and the identity of the emulated build (namespace, backend name, DLPack codes). The
// runtime has CUDA's API in namespace gts::emulated; the build sees it as the CUDA build sees
// CUDA's. Included by emulated_backend.cpp before gpu_backend.inl.
#pragma once

#include <cstddef>
#include <string>

#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"

#define GTS_GPU_EMULATED 1

#define GTS_GPU_NS emulated_impl
#define GTS_GPU_NAME "emulated"
#define GTS_GPU_LABEL "emulated"
// The emulated device is host memory: its descriptors must never pass for CUDA memory, so
// CuPy or PyTorch cannot take a host address for a device pointer. Its device memory says
// kDLExtDev ("not a device you know", consumers refuse it); its unified and pinned memory are
// what they really are, host memory that the emulated device can also reach (kDLCPU).
#define GTS_GPU_DL_DEVICE 12  // kDLExtDev
#define GTS_GPU_DL_UNIFIED 1  // kDLCPU
#define GTS_GPU_DL_PINNED 1   // kDLCPU
#define GTS_GPU_VISIBLE_ENV "GTSTORAGE_EMULATED_DEVICES"
#define GTS_GPU_RUNTIME_VERSION (::gts::emulated::runtime_version)
#define GTS_GPU_CUDA_API 13000  // the API of CUDA 13, as runtime_version says
#define GTS_GPU_HAVE_STREAM_GET_DEVICE 1

namespace gts::device::emulated_impl {
using namespace ::gts::emulated;  // CUDA's names, as the CUDA build sees them globally
}  // namespace gts::device::emulated_impl

#include "device/gpu/cuda_spelling.hpp"

namespace gts::device::GTS_GPU_NS {

/// The allocation (base, bytes) that contains @p ptr, as the runtime knows it: the emulated
/// runtime has the driver's cuMemGetAddressRange with the runtime's types.
inline gpuError_t gpu_address_range(const void* ptr, void** base, std::size_t* bytes) {
  return cuMemGetAddressRange(base, bytes, ptr);
}

/// Whether @p stream is known to name no live stream: the emulated runtime knows its streams.
inline bool gpu_stream_known_dead(gpuStream_t stream) noexcept {
  return !::gts::emulated::control::stream_is_live(stream);
}

/// Why the emulated machine has no device after error @p e: its configuration (a bad
/// environment, or 0 devices); empty for other errors.
inline std::string gpu_no_device_reason(gpuError_t e) {
  std::string env = ::gts::emulated::control::environment_error();
  if (!env.empty()) return env;
  if (e == cudaErrorNoDevice) {
    return "the simulated machine has 0 devices (GTSTORAGE_EMULATED_DEVICES=0 or "
           "set_emulated_device_count(0))";
  }
  return {};
}

}  // namespace gts::device::GTS_GPU_NS
