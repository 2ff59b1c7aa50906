// The module _gtstorage_embedding: what the embedding tells the gtstorage package (which
// libgtstorage file the process runs, so that both share one handle table) and the fast path of
// gtstorage.bridge (a storage described in one C call).
#pragma once

#include <string>

namespace gts::python {

/// Creates sys.modules["_gtstorage_embedding"] (the GIL held): `library_path` (@p library_path,
/// "" when the program itself holds libgtstorage), `build_python`, and `describe(handle, side)`.
void install_embedding_module(const std::string& library_path);

}  // namespace gts::python
