// The CUDA backend: gpu_backend.inl compiled with nvcc against the (static) CUDA runtime.
#include "device/cuda/cuda_names.hpp"
// (the names first: the backend's source is written against them)
#include "device/gpu/gpu_backend.inl"

namespace gts::device {

backend& cuda_backend_instance() {
  // Never destroyed: at process exit the static runtime may be gone before our destructors,
  // and storages released from other static destructors still free through this object.
  static backend* const b = new cuda_impl::gpu_backend();
  return *b;
}

}  // namespace gts::device
