#include "capi/handle_table.hpp"

namespace gts {

// The one instantiation the library uses (the header declares it extern).
template class basic_handle_table<storage, storage_deleter>;

}  // namespace gts
