// Limits every layer shares.
#pragma once

namespace gts {

/// Most dimensions a storage, plan or array may have (== GTSTORAGE_MAX_NDIM of the public header,
/// which src/capi checks with a static_assert).
inline constexpr int max_ndim = 16;

}  // namespace gts
