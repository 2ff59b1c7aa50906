// DLPack in both directions, from and to storage-layer objects. The exported entry points
// (gtstorage_to_dlpack*, gtstorage_wrap_dlpack) live in src/capi: they check the C arguments,
// look up handles and call these.
#pragma once

#include <memory>

#include "dlpack/dlpack.h"
#include "storage/storage.hpp"

namespace gts::interop {

/// A DLPack 1.x tensor of side @p sd of @p s; its manager context holds a view (so the buffers
/// live until the consumer calls the deleter). Throws no_such_buffer when the side is absent.
DLManagedTensorVersioned* to_dlpack_versioned(const storage& s, side sd);
/// The same as a legacy (0.x) DLManagedTensor.
DLManagedTensor* to_dlpack(const storage& s, side sd);

/// What a caller adds to a DLPack tensor it hands over.
struct dlpack_wrap_options {
  const char* dims = nullptr;     ///< Dims labels (NULL: defaults).
  const int64_t* halo = nullptr;  ///< 2 * ndim widths (NULL: none).
  bool readonly = false;
};

/// Wraps @p managed_tensor (a DLManagedTensorVersioned when @p versioned, else a DLManagedTensor)
/// without copying. The tensor's deleter becomes the buffers' release callback (it runs when the
/// last view is gone); on failure the tensor is left to the caller. Errors name the DLPack field
/// they come from ("managed_tensor->dl_tensor.shape: …").
std::unique_ptr<storage> wrap_dlpack(void* managed_tensor, bool versioned,
                                     const dlpack_wrap_options& options);

}  // namespace gts::interop
