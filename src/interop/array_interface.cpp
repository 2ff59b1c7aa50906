#include "interop/array_interface.hpp"

#include <string>

#include "common/errors.hpp"

namespace gts::interop {

void fail_no_buffer(const storage& s, side sd) {
  const bool host = sd == side::host;
  fail(error_kind::no_such_buffer, std::string("side: the storage has no ") +
                                       (host ? "host" : "device") + " buffer (it is " +
                                       (s.has(side::host) ? "host-only" : "device-only") + ")");
}

}  // namespace gts::interop
