// The HIP backend: the same source as the CUDA backend (gpu_backend.inl), compiled by hipcc.
#include "device/hip/hip_names.hpp"
// (the names first: the backend's source is written against them)
#include "device/gpu/gpu_backend.inl"

namespace gts::device {

backend& hip_backend_instance() {
  // Never destroyed, for the same reasons as the CUDA backend.
  static backend* const b = new hip_impl::gpu_backend();
  return *b;
}

}  // namespace gts::device
