// A non-owning strided N-d array: the argument type of every kernel (fill, copy), host or device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/dtype.hpp"
#include "common/limits.hpp"

namespace gts {

// shape/strides are meaningful for [0, ndim) only and deliberately not cleared beyond: every
// storage carries two of these, and clearing them showed up in the small-create profile.
struct strided_array {
  std::byte* data = nullptr;  ///< Address of element (0, …, 0).
  int ndim = 0;
  int64_t shape[max_ndim];    ///< Extents in elements.
  int64_t strides[max_ndim];  ///< Strides in bytes, may be negative.
  dtype type{};

  [[nodiscard]] int64_t size() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
};

}  // namespace gts
