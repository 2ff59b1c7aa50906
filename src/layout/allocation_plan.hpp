// The allocation plan: a pure function from what the caller asked for (shape, dtype, dims,
// preset, layout, halo, aligned index, alignment) to how the storage is laid out in memory.
// Everything else in the library asks this module; it allocates nothing and has no side effects.
#pragma once

#include <array>
#include <cstdint>

#include "common/dtype.hpp"
#include "layout/dims.hpp"
#include "layout/layout_map.hpp"
#include "layout/preset.hpp"

namespace gts {

using extents = std::array<int64_t, max_ndim>;

/// How strides other than the contiguous dimension's are chosen.
enum class pitch_padding : int32_t {
  none,            ///< GT4Py's: the product of the faster dimensions' (padded) extents.
  avoid_aliasing,  ///< Those of 4 KiB or more raised to an odd multiple of lcm(64, alignment).
};

struct plan_request {
  int ndim = 0;
  const int64_t* shape = nullptr;          ///< ndim extents, halo included.
  const char* dtype = nullptr;             ///< Typestr, NULL = "<f8".
  const char* dims = nullptr;              ///< Labels, NULL = GT4Py default.
  const char* preset = nullptr;            ///< NULL = "numpy".
  const int32_t* layout = nullptr;         ///< Explicit layout map or NULL.
  const int64_t* halo = nullptr;           ///< 2*ndim (lower, upper) or NULL.
  const int64_t* aligned_index = nullptr;  ///< ndim or NULL (= lower halo).
  int64_t alignment_bytes = 0;             ///< 0 = preset's.
  pitch_padding padding = pitch_padding::none;
};

// Per-dimension arrays are only meaningful for [0, ndim) and are deliberately not zero-filled:
// the plan is computed on every create, and clearing ~1 KiB showed up in its profile.
struct allocation_plan {
  int ndim = 0;
  dtype type{};
  preset source_preset{};
  dim_labels dims;
  layout_map layout;
  extents shape;
  extents padded_shape;
  extents strides;  ///< Bytes.
  std::array<std::array<int64_t, 2>, max_ndim> halo;
  extents aligned_index;
  int64_t alignment_bytes = 1;
  int64_t byte_offset = 0;       ///< Element (0, …, 0) relative to the aligned block start.
  int64_t padded_bytes = 0;      ///< Bytes the strides span: the slowest stride × its extent.
  int64_t allocation_bytes = 0;  ///< byte_offset + padded_bytes.
  int contiguous_dim = -1;
};

/// Validates @p request and computes its plan. Throws gts::error (invalid_argument naming the
/// parameter, overflow, unknown_preset).
allocation_plan make_plan(const plan_request& request);

}  // namespace gts
