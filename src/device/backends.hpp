// Private to src/device: the backend singletons the registry chooses from.
#pragma once

#include <string>

#include "device/device_backend.hpp"

namespace gts::device {

/// "none": 0 devices; every request throws the error (kind and reason) set last.
backend& none_backend_instance();
void set_none_reason(const std::string& reason, error_kind kind = error_kind::no_device);

/// "emulated": the GPU backend over the simulated CUDA runtime (src/emulated).
backend& emulated_backend_instance();
/// Re-reads the simulated machine's environment (GTSTORAGE_EMULATED_DEVICES, GTSTORAGE_SIM_*).
void emulated_reload_environment();
void emulated_set_device_count(int count);

#if defined(GTSTORAGE_WITH_CUDA)
backend& cuda_backend_instance();
#endif
#if defined(GTSTORAGE_WITH_HIP)
backend& hip_backend_instance();
#endif

}  // namespace gts::device
