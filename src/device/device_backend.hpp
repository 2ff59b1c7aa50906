// The one small device interface every storage uses: allocate, free, copies, fill, streams.
// Implementations: cuda (static runtime), hip (optional), emulated (separate host memory, so
// every sync path is testable without a GPU). Methods throw gts::error (no_device, device,
// out_of_memory, unsupported); they never abort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/strided_array.hpp"

namespace gts::device {

enum class memory_kind {
  device,       ///< Device memory (cudaMalloc).
  unified,      ///< Unified memory (cudaMallocManaged).
  pinned_host,  ///< Page-locked host memory (cudaHostAlloc).
};

enum class direction { host_to_device, device_to_host, device_to_device };

class backend {
 public:
  virtual ~backend() = default;
  [[nodiscard]] virtual const char* name() const = 0;
  /// Usable devices; 0 when there is no driver or no GPU (never throws).
  virtual int device_count() noexcept = 0;
  /// Allocates @p bytes of @p kind on @p device_id, aligned to at least @p alignment.
  virtual void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                         int device_id) = 0;
  virtual void free(void* ptr, memory_kind kind, int device_id) noexcept = 0;
  /// Contiguous copy of @p bytes.
  virtual void copy(void* dst, const void* src, std::size_t bytes, direction dir,
                    uint64_t stream) = 0;
  /// Element-wise copy between equal-shaped strided arrays (same dtype), any layouts.
  virtual void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                            uint64_t stream) = 0;
  /// Sets every element of @p dst (device memory) to @p value (one element of dst.type).
  virtual void fill(const strided_array& dst, const void* value, uint64_t stream) = 0;
  /// Waits for all work on @p stream.
  virtual void synchronize(uint64_t stream) = 0;
  /// Moves unified memory towards @p device_id (-1 = host).
  virtual void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) = 0;
  /// DLPack device type code for memory of @p kind (2 CUDA, 3 CUDA host, 10 ROCm …).
  [[nodiscard]] virtual int dl_device_type(memory_kind kind) const noexcept = 0;
};

/// The active backend (chosen from GTSTORAGE_DEVICE_BACKEND or set_backend(); "auto" prefers
/// cuda, then hip, then none). Never null: a "none" backend reports 0 devices and throws no_device.
backend& active();

/// Selects the backend by name: "cuda", "hip", "emulated", "none" or "auto".
void set_backend(const std::string& name);

/// Current device ordinal used when a storage asks for device -1.
int current_device();
void set_current_device(int device_id);

}  // namespace gts::device
