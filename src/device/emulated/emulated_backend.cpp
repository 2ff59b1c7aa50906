// The emulated device: the GPU backend (gpu/gpu_backend.inl, the same source nvcc and hipcc
// compile) built by the host compiler over the emulated CUDA runtime of src/emulated. What
// users select as GTSTORAGE_DEVICE_BACKEND=emulated, and what CI runs the device suite on.
// Built only with GTSTORAGE_ENABLE_EMULATED (default on).
#include "device/emulated/emulated_names.hpp"
// (the names first: the backend's source is written against them)
#include "device/gpu/gpu_backend.inl"
#include "emulated/control.hpp"

namespace gts::device {
namespace {

emulated_impl::gpu_backend& instance() {
  // Never destroyed, like the other backends.
  static emulated_impl::gpu_backend* const b = new emulated_impl::gpu_backend();
  return *b;
}

}  // namespace

backend& emulated_backend_instance() {
  return instance();
}

void emulated_reload_environment() {
  emulated::control::reload_environment();
  instance().reinitialize();
}

void emulated_set_device_count(int count) {
  if (count < 0 || count > 64) fail_arg("count", std::to_string(count) + " is not in 0..64");
  emulated::control::machine m = emulated::control::current_machine();
  m.device_count = count;
  emulated::control::set_machine(m);
  instance().reinitialize();
}

}  // namespace gts::device
