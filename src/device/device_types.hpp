// The vocabulary of the device layer: memory kinds, transfer directions, DLPack device codes,
// what a pointer is, a device's properties and transfer counts. Shared by the core interface
// (device_backend.hpp) and the tools interface (backend_tools.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gts::device {

enum class memory_kind {
  device,       ///< Device memory (cudaMalloc).
  unified,      ///< Unified memory (cudaMallocManaged).
  pinned_host,  ///< Page-locked host memory (cudaHostAlloc).
};

enum class direction { host_to_device, device_to_host, device_to_device };

/// DLPack device type codes (DLDeviceType).
namespace dl {
inline constexpr int cpu = 1;
inline constexpr int cuda = 2;
inline constexpr int cuda_host = 3;
inline constexpr int rocm = 10;
inline constexpr int rocm_host = 11;
inline constexpr int ext_dev = 12;  ///< kDLExtDev: the emulated device (host memory, not a GPU).
inline constexpr int cuda_managed = 13;
/// DLPack device id of memory of device @p device reported as @p type: host kinds (CPU, which
/// the emulated device's unified and pinned memory are, CUDA host, ROCm host) carry 0, as
/// dlpack.h and gtstorage_interface_info.device_id say; device kinds carry the ordinal.
inline constexpr int device_id_for(int type, int device) {
  return type == cpu || type == cuda_host || type == rocm_host ? 0 : device;
}
}  // namespace dl

/// What an address is, as far as the backend can tell (see backend::query_pointer).
enum class pointer_space {
  host,         ///< Ordinary (pageable) host memory, or an address the backend does not know.
  device,       ///< Device memory.
  unified,      ///< Unified / managed memory.
  pinned_host,  ///< Page-locked host memory.
};

struct pointer_info {
  pointer_space space = pointer_space::host;
  int device_id =
      -1;  ///< Device ordinal (for pinned memory: the device it was made on), -1 if none.
  bool owned = false;     ///< Allocated by this backend (base/bytes are then set).
  void* base = nullptr;   ///< Pointer allocate() returned for the containing allocation.
  std::size_t bytes = 0;  ///< Bytes requested for that allocation.
};

/// Static facts about one device.
struct device_properties {
  std::string name;              ///< e.g. "NVIDIA H100 80GB HBM3" or "emulated device 0".
  std::size_t total_memory = 0;  ///< Bytes.
  int major = 0;                 ///< Compute capability (CUDA) / gfx major (HIP); 0 emulated.
  int minor = 0;
  int multiprocessors = 0;
  bool concurrent_managed_access = false;  ///< Prefetching unified memory is meaningful.
};

/// Transfers issued through one backend since start or reset_counters() (index: direction).
struct transfer_counters {
  int64_t count[3] = {0, 0, 0};
  int64_t bytes[3] = {0, 0, 0};
};

}  // namespace gts::device
