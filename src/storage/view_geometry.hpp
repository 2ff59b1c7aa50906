// The geometry of a view: everything a storage holds except its buffers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "common/dtype.hpp"
#include "layout/allocation_plan.hpp"

namespace gts {

// Trivially copyable, so that a create of a shape planned before copies the geometry derived
// from its plan the first time (plan_cache.hpp) instead of deriving it again. Per-dimension
// arrays hold meaningful values for [0, ndim) only and are deliberately left uninitialized
// beyond: a view is made on every create and slice, and nothing reads past ndim.
struct view_geometry {
  int ndim = 0;
  dtype type{};
  extents shape;
  std::array<extents, 2> strides;    ///< Per side (host, device), bytes.
  std::array<std::byte*, 2> data{};  ///< Element (0, …, 0) per side (null if absent).
  dim_labels dims;
  std::array<std::array<int64_t, 2>, max_ndim> halo;
  extents aligned_index;  ///< -1 where the aligned element is outside.
  bool readonly = false;
  uint64_t stream = 0;

  // Derived once per view by storage::finalize(), so descriptor queries only copy.
  /// Per side: rank of each dim by |stride| (ranks are < 16, so a byte holds one).
  std::array<std::array<uint8_t, max_ndim>, 2> layouts;
  std::array<bool, 2> c_contiguous{};  ///< Per side.
  int64_t nbytes = 0;                  ///< product(shape) * itemsize.
  std::array<char, 8> typestr{};       ///< NUL-terminated.
};

}  // namespace gts
