// Private to src/device: the backend singletons the registry chooses from.
#pragma once

#include <string>

#include "device/device_backend.hpp"

namespace gts::device {

/// "none": 0 devices; every request throws no_device with the reason set last.
backend& none_backend_instance();
void set_none_reason(const std::string& reason);

/// "emulated": the device is separate host memory.
backend& emulated_backend_instance();
/// Re-reads GTSTORAGE_EMULATED_DEVICES.
void emulated_reload_environment();
void emulated_set_device_count(int count);

#if defined(GTSTORAGE_WITH_CUDA)
backend& cuda_backend_instance();
#endif
#if defined(GTSTORAGE_WITH_HIP)
backend& hip_backend_instance();
#endif

}  // namespace gts::device
