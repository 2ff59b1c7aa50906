#include "capi/interface.hpp"

#include "capi/enums.hpp"
#include "interop/array_interface.hpp"

namespace gts::capi {

void fail_no_buffer(const storage& s, side sd) {
  interop::fail_no_buffer(s, sd);
}

__attribute__((optimize("no-tree-vectorize"))) void fill_interface(
    const storage& __restrict s, side sd, gtstorage_interface_info* __restrict out) {
  interop::describe(s, sd, out);
  out->side = to_c(sd);
  out->sync_state = to_c(interop::reported_sync_state(s));
}

}  // namespace gts::capi
