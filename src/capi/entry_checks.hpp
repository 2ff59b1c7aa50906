// The checks every entry point of the C API makes (capi.cpp, capi_sync.cpp): the handle table,
// output pointers, side and stream arguments. The tests are inline, the failures (which format a
// message) out of line and cold.
#pragma once

#include <cstdint>

#include "capi/handle_table.hpp"
#include "gtstorage/gtstorage.h"

namespace gts::capi {

inline handle_table& table() {
  return handle_table::instance();
}

[[noreturn]] __attribute__((cold, noinline)) void fail_null(const char* name);
[[noreturn]] __attribute__((cold, noinline)) void fail_side(int32_t side);

/// Fails (invalid_argument, naming @p name) if the output pointer @p p is NULL.
template <class T>
inline void check_out(const T* p, const char* name) {
  if (__builtin_expect(p == nullptr, 0)) fail_null(name);
}

/// Fails unless @p side is GTSTORAGE_SIDE_HOST or GTSTORAGE_SIDE_DEVICE.
inline void check_side(int32_t side) {
  if (__builtin_expect(side != GTSTORAGE_SIDE_HOST && side != GTSTORAGE_SIDE_DEVICE, 0)) {
    fail_side(side);
  }
}

/// Fails (invalid_argument) if @p stream is one the backend of @p s knows to be dead (destroyed,
/// or never created), before anything is queued on it; 0 (the storage's own stream) passes.
void check_stream(const storage& s, uint64_t stream);

}  // namespace gts::capi
