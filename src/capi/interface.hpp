// Fills the public buffer descriptor from a storage view: the one translation from internal
// geometry to gtstorage_interface_info, shared by gtstorage_interface and the DLPack export.
#pragma once

#include "gtstorage/gtstorage.h"
#include "storage/storage.hpp"

namespace gts::capi {

void fill_interface(const storage& s, side sd, gtstorage_interface_info* out);
[[noreturn]] void fail_no_buffer(const storage& s, side sd);

}  // namespace gts::capi
