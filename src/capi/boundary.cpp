#include "capi/boundary.hpp"

#include <atomic>
#include <cstring>
#include <string>

#include "common/named_values.hpp"
#include "common/tls.hpp"

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
// Threads whose has_message is set. While it is zero (a program whose calls succeed), a
// successful call does not look at its thread's message at all: in the global-dynamic TLS model
// that look is a __tls_get_addr call, two per small create + release. A thread that has a
// message counts itself here before, in its own order, so it always sees a non-zero count. (A
// thread that exits with a message set leaves the count raised: later calls take the look.)
std::atomic<int64_t> threads_with_message{0};

// The statuses gtstorage_status_name() knows.
constexpr named_value status_names[] = {GTS_NAMED_VALUE(GTSTORAGE_OK),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_INVALID_ARGUMENT),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_INVALID_HANDLE),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_OUT_OF_MEMORY),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_OVERFLOW),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_NO_SUCH_BUFFER),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_NO_DEVICE),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_DEVICE),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_UNKNOWN_PRESET),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_SHAPE_MISMATCH),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_SYNC_CONFLICT),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_READONLY),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_UNSUPPORTED),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_BUFFER_TOO_SMALL),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_DRIVER_TOO_OLD),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_COMMUNICATION),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_PYTHON),
                                        GTS_NAMED_VALUE(GTSTORAGE_ERROR_INTERNAL)};
}  // namespace

int set_error(int status, const char* message) noexcept {
  std::strncpy(last_message, message, sizeof last_message - 1);
  last_message[sizeof last_message - 1] = '\0';
  bool& has = tls_ref(has_message);
  if (!has) {
    has = true;
    threads_with_message.fetch_add(1, std::memory_order_relaxed);
  }
  return status;
}

void clear_error() noexcept {
  if (threads_with_message.load(std::memory_order_relaxed) == 0) return;
  bool& has = tls_ref(has_message);
  if (has) {
    last_message[0] = '\0';
    has = false;
    threads_with_message.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace gts::capi

extern "C" {

const char* gtstorage_last_error(void) {
  return gts::capi::last_message;
}

int gtstorage_set_error(int status, const char* message) {
  if (status == GTSTORAGE_OK) {
    gts::capi::clear_error();
    return status;
  }
  return gts::capi::set_error(status, message != nullptr ? message : gtstorage_status_name(status));
}

const char* gtstorage_status_name(int status) {
  return gts::name_in(gts::capi::status_names, status, "GTSTORAGE_UNKNOWN_STATUS");
}

}  // extern "C"
