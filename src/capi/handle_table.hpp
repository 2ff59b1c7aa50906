// The library's handle table: storages behind gtstorage_handle (the generic, generation-checked
// table is common/handle_table.hpp).
#pragma once

#include "common/handle_table.hpp"
#include "storage/storage.hpp"

namespace gts {

using handle_table = basic_handle_table<storage, storage_deleter>;

// The library's one instantiation lives in handle_table.cpp.
extern template class basic_handle_table<storage, storage_deleter>;

}  // namespace gts
