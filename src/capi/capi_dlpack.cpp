// The DLPack entry points: argument checks, handle lookups and the handle table here; the
// translation between storages and DLPack tensors in src/interop (dlpack.hpp).
#include <memory>
#include <string>

#include "capi/boundary.hpp"
#include "capi/enums.hpp"
#include "capi/handle_table.hpp"
#include "interop/dlpack.hpp"

namespace {

void check_export_args(int32_t side, const void* out) {
  if (out == nullptr) gts::fail_arg("out", "must not be NULL");
  if (side != GTSTORAGE_SIDE_HOST && side != GTSTORAGE_SIDE_DEVICE) {
    gts::fail_arg("side", std::to_string(side) + " is not GTSTORAGE_SIDE_HOST (0) or _DEVICE (1)");
  }
}

}  // namespace

extern "C" {

int gtstorage_to_dlpack_versioned(gtstorage_handle handle, int32_t side,
                                  struct DLManagedTensorVersioned** out) {
  return gts::capi::guarded([&] {
    check_export_args(side, out);
    const gts::storage& s = gts::handle_table::instance().get(handle);
    s.buffers->wait_pending();  // the consumer uses the memory at once, on any stream
    *out = gts::interop::to_dlpack_versioned(s, gts::capi::side_of(side));
  });
}

int gtstorage_to_dlpack(gtstorage_handle handle, int32_t side, struct DLManagedTensor** out) {
  return gts::capi::guarded([&] {
    check_export_args(side, out);
    const gts::storage& s = gts::handle_table::instance().get(handle);
    s.buffers->wait_pending();  // the consumer uses the memory at once, on any stream
    *out = gts::interop::to_dlpack(s, gts::capi::side_of(side));
  });
}

int gtstorage_dlpack_options_init(gtstorage_dlpack_options* options) {
  // The layout the size-less form was introduced with (1.1), never more (boundary.hpp).
  return gtstorage_dlpack_options_init_sized(options,
                                             gts::capi::first_size<gtstorage_dlpack_options>());
}

int gtstorage_wrap_dlpack(void* managed_tensor, int32_t kind,
                          const gtstorage_dlpack_options* options, gtstorage_handle* out) {
  using gts::fail_arg;
  return gts::capi::guarded([&] {
    if (managed_tensor == nullptr) fail_arg("managed_tensor", "must not be NULL");
    if (kind != GTSTORAGE_DLPACK_LEGACY && kind != GTSTORAGE_DLPACK_VERSIONED) {
      fail_arg("kind", std::to_string(kind) +
                           " is not GTSTORAGE_DLPACK_LEGACY (0) or GTSTORAGE_DLPACK_VERSIONED (1)");
    }
    // Read only up to the caller's struct_size (boundary.hpp); NULL = all defaults.
    static const gtstorage_dlpack_options defaults = GTSTORAGE_DLPACK_OPTIONS_INIT;
    gtstorage_dlpack_options local;
    const gtstorage_dlpack_options* const opts =
        options != nullptr ? gts::capi::read_in(options, "options", local, defaults) : nullptr;
    if (out == nullptr) fail_arg("out", "must not be NULL");

    gts::interop::dlpack_wrap_options o;
    if (opts != nullptr) {
      o.dims = opts->dims;
      o.halo = opts->halo;
      o.readonly = opts->readonly != 0;
    }
    std::unique_ptr<gts::storage> st =
        gts::interop::wrap_dlpack(managed_tensor, kind == GTSTORAGE_DLPACK_VERSIONED, o);
    // As in gtstorage_wrap(): insert() fails only when the handle table is full, and the
    // deleter must not run for a failed call: detach the callback until the handle exists.
    auto buffers = st->buffers;
    const auto release = buffers->release;
    buffers->release = nullptr;
    *out = gts::handle_table::instance().insert(std::move(st));
    buffers->release = release;
  });
}

}  // extern "C"
