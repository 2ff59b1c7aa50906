// The C boundary: runs C++ inside a noexcept wrapper that turns every exception into a status
// code plus a thread-local message. The only place in the library that knows status numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "capi/struct_history.hpp"
#include "common/errors.hpp"
#include "gtstorage/gtstorage.h"
#include "gtstorage/gtstorage_experimental.h"  // the test hooks are exported by the same code

namespace gts::capi {

/// Records @p message as this thread's last error and returns @p status.
int set_error(int status, const char* message) noexcept;
/// Clears this thread's last error (after a successful call).
void clear_error() noexcept;

/// The public status of an internal error kind (also used by libgtstorage_mpi's boundary).
inline int status_of(error_kind kind) noexcept {
  switch (kind) {
    case error_kind::invalid_argument:
      return GTSTORAGE_ERROR_INVALID_ARGUMENT;
    case error_kind::invalid_handle:
      return GTSTORAGE_ERROR_INVALID_HANDLE;
    case error_kind::out_of_memory:
      return GTSTORAGE_ERROR_OUT_OF_MEMORY;
    case error_kind::overflow:
      return GTSTORAGE_ERROR_OVERFLOW;
    case error_kind::no_such_buffer:
      return GTSTORAGE_ERROR_NO_SUCH_BUFFER;
    case error_kind::no_device:
      return GTSTORAGE_ERROR_NO_DEVICE;
    case error_kind::device:
      return GTSTORAGE_ERROR_DEVICE;
    case error_kind::unknown_preset:
      return GTSTORAGE_ERROR_UNKNOWN_PRESET;
    case error_kind::shape_mismatch:
      return GTSTORAGE_ERROR_SHAPE_MISMATCH;
    case error_kind::sync_conflict:
      return GTSTORAGE_ERROR_SYNC_CONFLICT;
    case error_kind::readonly:
      return GTSTORAGE_ERROR_READONLY;
    case error_kind::unsupported:
      return GTSTORAGE_ERROR_UNSUPPORTED;
    case error_kind::buffer_too_small:
      return GTSTORAGE_ERROR_BUFFER_TOO_SMALL;
    case error_kind::driver_too_old:
      return GTSTORAGE_ERROR_DRIVER_TOO_OLD;
    case error_kind::communication:
      return GTSTORAGE_ERROR_COMMUNICATION;
    case error_kind::python:
      return GTSTORAGE_ERROR_PYTHON;
    case error_kind::internal:
      return GTSTORAGE_ERROR_INTERNAL;
  }
  return GTSTORAGE_ERROR_INTERNAL;
}

/// The status of the exception being handled, its message recorded by @p record(status,
/// message) (set_error here, gtstorage_set_error in the libraries built on the C ABI). Called
/// from a catch block only: it rethrows that exception to tell its kind.
template <class Record>
int record_current_exception(Record&& record) noexcept {
  try {
    throw;
  } catch (const gts::error& e) {
    return record(status_of(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return record(GTSTORAGE_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return record(GTSTORAGE_ERROR_INTERNAL, (std::string("internal error: ") + e.what()).c_str());
  } catch (...) {
    return record(GTSTORAGE_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

template <class F>
int guarded(F&& body) noexcept {
  try {
    body();
    clear_error();
    return GTSTORAGE_OK;
  } catch (...) {
    return record_current_exception(set_error);
  }
}

// ---------------------------------------------------------------------------------------------
// The struct-size contract of gtstorage.h: a struct is accepted with any size it had in a
// released version (fields appended later are absent from an older caller's struct). Input
// structs are read only up to the caller's struct_size, the fields it lacks taking their
// defaults; output structs are written only up to it.

// The history itself (history_of<T>, version_names) is generated from the table
// STRUCT_HISTORY of tools/gen_bindings.py into capi/struct_history.hpp.

/// The size the version that introduced T gave it: what the size-less *_init functions write.
template <class T>
constexpr uint32_t first_size() {
  for (uint32_t s : history_of<T>::value.size) {
    if (s != 0) return s;
  }
  return sizeof(T);
}

template <class T>
constexpr bool accepted_size(uint64_t size) {
  for (uint32_t s : history_of<T>::value.size) {
    if (s != 0 && size == s) return true;
  }
  return false;
}

/// "<name>.struct_size: <got> is not a size gtstorage_x had (72 in 1.0, 104 in 1.1 …)".
[[noreturn]] inline void fail_struct_size(const char* name, uint64_t got, const struct_history& h) {
  std::string sizes;
  for (std::size_t v = 0; v < sizeof h.size / sizeof h.size[0]; ++v) {
    if (h.size[v] == 0) continue;
    if (!sizes.empty()) sizes += ", ";
    sizes += std::to_string(h.size[v]) + " in " + version_names[v];
  }
  gts::fail_arg(std::string(name) + ".struct_size",
                std::to_string(got) + " is not a size " + h.name + " had in a released version (" +
                    sizes + ", this library's; initialize the struct with its _INIT macro)");
}

template <class T>
inline void check_struct_size(const char* name, uint64_t size) {
  if (__builtin_expect(size != sizeof(T), 0) && !accepted_size<T>(size)) {
    fail_struct_size(name, size, history_of<T>::value);
  }
}

/// Checks @p p (not NULL, an accepted struct_size).
template <class T>
inline void check_struct(const T* p, const char* name) {
  if (__builtin_expect(p == nullptr, 0)) gts::fail_arg(name, "must not be NULL");
  check_struct_size<T>(name, p->struct_size);
}

/// An input struct: @p p itself when it has this library's size, else @p local = @p defaults
/// overwritten with the caller's struct_size bytes (the fields it lacks keep their defaults).
template <class T>
inline const T* read_in(const T* p, const char* name, T& local, const T& defaults) {
  check_struct(p, name);
  if (__builtin_expect(p->struct_size == sizeof(T), 1)) return p;
  local = defaults;
  std::memcpy(&local, p, p->struct_size);
  local.struct_size = sizeof(T);
  return &local;
}

/// An output struct: @p fill writes a whole T, into @p out when it has this library's size,
/// else into a temporary of which only the caller's struct_size bytes are copied to @p out
/// (struct_size itself keeps the caller's value).
template <class T, class F>
inline void write_out(T* out, const char* name, F&& fill) {
  check_struct(out, name);
  const uint32_t size = out->struct_size;
  if (__builtin_expect(size == sizeof(T), 1)) {
    fill(out);
    out->struct_size = size;
    return;
  }
  T full{};
  full.struct_size = sizeof(T);
  fill(&full);
  std::memcpy(out, &full, size);
  out->struct_size = size;
}

/// gtstorage_X_init_sized: the first @p size bytes of @p defaults into @p p, struct_size = size.
template <class T>
inline void init_sized(T* p, uint64_t size, const T& defaults, const char* name) {
  if (p == nullptr) gts::fail_arg(name, "must not be NULL");
  check_struct_size<T>("struct_size", size);
  std::memcpy(p, &defaults, size);
  p->struct_size = static_cast<uint32_t>(size);
}

}  // namespace gts::capi
