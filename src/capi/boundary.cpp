#include "capi/boundary.hpp"

#include <cstring>
#include <string>

namespace gts::capi {
namespace {
// A fixed buffer rather than std::string: recording an error must not itself allocate or throw.
thread_local char last_message[1024] = "";
// Whether last_message is non-empty, so successful calls only read one byte. (Not in the
// initial-exec TLS model: with the static CUDA runtime's TLS that makes the library fail to
// dlopen with "cannot allocate memory in static TLS block". Nor with TLS descriptors
// (-mtls-dialect=gnu2): before glibc 2.40 their dynamic path clobbers SSE registers that GCC
// assumes preserved, which corrupted floating-point values in dlopen'ed use.)
thread_local bool has_message = false;
}  // namespace

int set_error(int status, const char* message) noexcept {
  std::strncpy(last_message, message, sizeof last_message - 1);
  last_message[sizeof last_message - 1] = '\0';
  has_message = true;
  return status;
}

void clear_error() noexcept {
  if (has_message) {
    last_message[0] = '\0';
    has_message = false;
  }
}

int status_of(error_kind kind) noexcept {
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
    case error_kind::internal:
      return GTSTORAGE_ERROR_INTERNAL;
  }
  return GTSTORAGE_ERROR_INTERNAL;
}

void fail_struct_size(const char* name, uint64_t got, const struct_history& h) {
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

}  // namespace gts::capi

extern "C" {

const char* gtstorage_last_error(void) {
  return gts::capi::last_message;
}

const char* gtstorage_status_name(int status) {
  switch (status) {
    case GTSTORAGE_OK:
      return "GTSTORAGE_OK";
    case GTSTORAGE_ERROR_INVALID_ARGUMENT:
      return "GTSTORAGE_ERROR_INVALID_ARGUMENT";
    case GTSTORAGE_ERROR_INVALID_HANDLE:
      return "GTSTORAGE_ERROR_INVALID_HANDLE";
    case GTSTORAGE_ERROR_OUT_OF_MEMORY:
      return "GTSTORAGE_ERROR_OUT_OF_MEMORY";
    case GTSTORAGE_ERROR_OVERFLOW:
      return "GTSTORAGE_ERROR_OVERFLOW";
    case GTSTORAGE_ERROR_NO_SUCH_BUFFER:
      return "GTSTORAGE_ERROR_NO_SUCH_BUFFER";
    case GTSTORAGE_ERROR_NO_DEVICE:
      return "GTSTORAGE_ERROR_NO_DEVICE";
    case GTSTORAGE_ERROR_DEVICE:
      return "GTSTORAGE_ERROR_DEVICE";
    case GTSTORAGE_ERROR_UNKNOWN_PRESET:
      return "GTSTORAGE_ERROR_UNKNOWN_PRESET";
    case GTSTORAGE_ERROR_SHAPE_MISMATCH:
      return "GTSTORAGE_ERROR_SHAPE_MISMATCH";
    case GTSTORAGE_ERROR_SYNC_CONFLICT:
      return "GTSTORAGE_ERROR_SYNC_CONFLICT";
    case GTSTORAGE_ERROR_READONLY:
      return "GTSTORAGE_ERROR_READONLY";
    case GTSTORAGE_ERROR_UNSUPPORTED:
      return "GTSTORAGE_ERROR_UNSUPPORTED";
    case GTSTORAGE_ERROR_BUFFER_TOO_SMALL:
      return "GTSTORAGE_ERROR_BUFFER_TOO_SMALL";
    case GTSTORAGE_ERROR_DRIVER_TOO_OLD:
      return "GTSTORAGE_ERROR_DRIVER_TOO_OLD";
    case GTSTORAGE_ERROR_INTERNAL:
      return "GTSTORAGE_ERROR_INTERNAL";
    default:
      return "GTSTORAGE_UNKNOWN_STATUS";
  }
}

}  // extern "C"
