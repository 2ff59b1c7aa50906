// The emulated device: the GPU backend (gpu/gpu_backend.inl, the same source nvcc and hipcc
// compile) built by the host compiler over the simulated CUDA runtime of this directory. What
// users select as GTSTORAGE_DEVICE_BACKEND=emulated, and what CI runs the device suite on.
#define GTS_GPU_SIM 1
#include "device/gpu/gpu_backend.inl"
#include "device/sim/sim_control.hpp"

namespace gts::device {
namespace {

sim_impl::gpu_backend& instance() {
  // Never destroyed, like the other backends.
  static sim_impl::gpu_backend* const b = new sim_impl::gpu_backend();
  return *b;
}

}  // namespace

backend& emulated_backend_instance() {
  return instance();
}

void emulated_reload_environment() {
  simcuda::control::reload_environment();
  instance().reinitialize();
}

void emulated_set_device_count(int count) {
  if (count < 0 || count > 64) fail_arg("count", std::to_string(count) + " is not in 0..64");
  simcuda::control::machine m = simcuda::control::current_machine();
  m.device_count = count;
  simcuda::control::set_machine(m);
  instance().reinitialize();
}

}  // namespace gts::device
