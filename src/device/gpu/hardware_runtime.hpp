// What a hardware runtime (CUDA, HIP) answers where the emulated one knows more: it cannot tell a
// dead stream handle from a live one, and has no account of its own of why there is no device.
// Included by cuda/cuda_names.hpp and hip/hip_names.hpp once the gpuXxx types exist.
#pragma once

#include <string>

#if !defined(GTS_GPU_NS)
#error "include cuda/cuda_names.hpp or hip/hip_names.hpp, not this header"
#endif

namespace gts::device::GTS_GPU_NS {

/// Whether @p stream is known to name no live stream: a real runtime cannot check a handle.
inline bool gpu_stream_known_dead(gpuStream_t) noexcept {
  return false;
}

/// The runtime's own account of why there is no device after error @p e; empty: none.
inline std::string gpu_no_device_reason(gpuError_t) {
  return {};
}

}  // namespace gts::device::GTS_GPU_NS
