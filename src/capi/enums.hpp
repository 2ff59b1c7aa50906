// The public enum values of gtstorage.h, translated into the internal vocabularies of the layers
// below (and back). This file and the C entry points are the only places that know the ABI's
// numbers: storage, layout and interop work with their own enums, so appending a public value
// means editing one translation here (a range check, in the same message format as before).
#pragma once

#include <cstdint>
#include <string>

#include "common/errors.hpp"
#include "common/limits.hpp"
#include "gtstorage/gtstorage.h"
#include "layout/allocation_plan.hpp"
#include "layout/preset.hpp"
#include "storage/buffer_set.hpp"
#include "storage/storage.hpp"

namespace gts::capi {

static_assert(max_ndim == GTSTORAGE_MAX_NDIM, "the layers' max_ndim is the header's");

/// Out of line: formatting a message is the rare path of every translation.
[[noreturn]] __attribute__((cold, noinline)) inline void fail_enum(const char* param, int32_t value,
                                                                   const char* what) {
  fail_arg(param, std::to_string(value) + " is not " + what);
}

// ---- gtstorage_create_options ------------------------------------------------------------------

inline init_kind init_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_INIT_UNINITIALIZED:
      return init_kind::uninitialized;
    case GTSTORAGE_INIT_ZEROS:
      return init_kind::zeros;
    case GTSTORAGE_INIT_ONES:
      return init_kind::ones;
    case GTSTORAGE_INIT_VALUE:
      return init_kind::value;
    case GTSTORAGE_INIT_COPY:
      return init_kind::copy;
    default:
      fail_enum("init", v, "a gtstorage_init (0 … 4)");
  }
}

inline device_choice device_choice_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_DEVICE_DEFAULT:
      return device_choice::preset;
    case GTSTORAGE_DEVICE_CPU:
      return device_choice::cpu;
    case GTSTORAGE_DEVICE_GPU:
      return device_choice::gpu;
    default:
      fail_enum("device", v, "a gtstorage_device (0 default, 1 CPU, 2 GPU)");
  }
}

/// GTSTORAGE_MANAGED_DEFAULT and _NONE both mean "no host mirror" (default for device presets).
inline managed_kind managed_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_MANAGED_DEFAULT:
    case GTSTORAGE_MANAGED_NONE:
      return managed_kind::none;
    case GTSTORAGE_MANAGED_MIRROR:
      return managed_kind::mirror;
    case GTSTORAGE_MANAGED_UNIFIED:
      return managed_kind::unified;
    default:
      fail_enum("managed", v, "a gtstorage_managed (0 … 3)");
  }
}

inline pitch_padding pitch_padding_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_PITCH_PADDING_NONE:
      return pitch_padding::none;
    case GTSTORAGE_PITCH_PADDING_AVOID_ALIASING:
      return pitch_padding::avoid_aliasing;
    default:
      fail_enum("pitch_padding", v, "a gtstorage_pitch_padding (0 none, 1 avoid aliasing)");
  }
}

inline host_memory_kind host_memory_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_HOST_PAGEABLE:
      return host_memory_kind::pageable;
    case GTSTORAGE_HOST_PINNED:
      return host_memory_kind::pinned;
    default:
      fail_enum("host_memory", v, "a gtstorage_host_memory (0 pageable, 1 pinned)");
  }
}

// ---- sides and sync ----------------------------------------------------------------------------

/// The caller has checked @p v (check_side); anything else is the device side.
inline side side_of(int32_t v) {
  return v == GTSTORAGE_SIDE_HOST ? side::host : side::device;
}
inline int32_t to_c(side s) {
  return s == side::host ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE;
}

inline sync_state sync_state_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_SYNC_CLEAN:
      return sync_state::clean;
    case GTSTORAGE_SYNC_HOST_DIRTY:
      return sync_state::host_dirty;
    case GTSTORAGE_SYNC_DEVICE_DIRTY:
      return sync_state::device_dirty;
    default:
      fail_enum("sync_state", v, "a gtstorage_sync_state (0 … 2)");
  }
}
inline int32_t to_c(sync_state s) {
  switch (s) {
    case sync_state::host_dirty:
      return GTSTORAGE_SYNC_HOST_DIRTY;
    case sync_state::device_dirty:
      return GTSTORAGE_SYNC_DEVICE_DIRTY;
    case sync_state::clean:
      break;
  }
  return GTSTORAGE_SYNC_CLEAN;
}

/// TOUCH_* are the SET_*_MODIFIED operations under their GDP-3 names.
inline sync_op sync_op_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_SYNC_HOST_TO_DEVICE:
      return sync_op::host_to_device;
    case GTSTORAGE_SYNC_DEVICE_TO_HOST:
      return sync_op::device_to_host;
    case GTSTORAGE_SYNC_SYNCHRONIZE:
      return sync_op::synchronize;
    case GTSTORAGE_SYNC_SET_HOST_MODIFIED:
    case GTSTORAGE_SYNC_TOUCH_HOST:
      return sync_op::set_host_modified;
    case GTSTORAGE_SYNC_SET_DEVICE_MODIFIED:
    case GTSTORAGE_SYNC_TOUCH_DEVICE:
      return sync_op::set_device_modified;
    case GTSTORAGE_SYNC_SET_SYNCHRONIZED:
      return sync_op::set_synchronized;
    case GTSTORAGE_SYNC_ACQUIRE_HOST:
      return sync_op::acquire_host;
    case GTSTORAGE_SYNC_ACQUIRE_DEVICE:
      return sync_op::acquire_device;
    case GTSTORAGE_SYNC_WAIT_STREAM:
      return sync_op::wait_stream;
    default:
      fail_enum("op", v, "a gtstorage_sync_op (1 … 11)");
  }
}

// ---- presets (gtstorage_preset_info) -----------------------------------------------------------

inline alignment_unit alignment_unit_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_ALIGN_ELEMENTS:
      return alignment_unit::elements;
    case GTSTORAGE_ALIGN_BYTES:
      return alignment_unit::bytes;
    default:
      fail_arg("alignment_unit",
               "must be GTSTORAGE_ALIGN_ELEMENTS (0) or GTSTORAGE_ALIGN_BYTES (1)");
  }
}
inline int32_t to_c(alignment_unit u) {
  return u == alignment_unit::bytes ? GTSTORAGE_ALIGN_BYTES : GTSTORAGE_ALIGN_ELEMENTS;
}

inline device_kind device_kind_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_DEVICE_CPU:
      return device_kind::cpu;
    case GTSTORAGE_DEVICE_GPU:
      return device_kind::gpu;
    default:
      fail_arg("device", "must be GTSTORAGE_DEVICE_CPU (1) or GTSTORAGE_DEVICE_GPU (2)");
  }
}
inline int32_t to_c(device_kind d) {
  return d == device_kind::gpu ? GTSTORAGE_DEVICE_GPU : GTSTORAGE_DEVICE_CPU;
}

inline layout_rule layout_rule_of(int32_t v) {
  switch (v) {
    case GTSTORAGE_RULE_BY_DIMS:
      return layout_rule::by_dims;
    case GTSTORAGE_RULE_C_ORDER:
      return layout_rule::c_order;
    case GTSTORAGE_RULE_FORTRAN_ORDER:
      return layout_rule::fortran_order;
    default:
      fail_arg("rule", "must be GTSTORAGE_RULE_BY_DIMS (0), _C_ORDER (1) or _FORTRAN_ORDER (2)");
  }
}
inline int32_t to_c(layout_rule r) {
  switch (r) {
    case layout_rule::c_order:
      return GTSTORAGE_RULE_C_ORDER;
    case layout_rule::fortran_order:
      return GTSTORAGE_RULE_FORTRAN_ORDER;
    case layout_rule::by_dims:
      break;
  }
  return GTSTORAGE_RULE_BY_DIMS;
}

}  // namespace gts::capi
