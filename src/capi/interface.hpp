// gtstorage_interface_info from a storage view: interop describes the view, the C boundary adds
// the enum-valued fields in the public numbering. Shared by gtstorage_interface and the bindings'
// descriptor paths.
#pragma once

#include "gtstorage/gtstorage.h"
#include "storage/storage.hpp"

namespace gts::capi {

void fill_interface(const storage& s, side sd, gtstorage_interface_info* out);
[[noreturn]] void fail_no_buffer(const storage& s, side sd);

}  // namespace gts::capi
