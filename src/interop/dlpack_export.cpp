// DLPack export: a storage view becomes a DLManagedTensor(Versioned) whose manager context owns
// a copy of the view (sharing its buffers), so the memory stays alive until the consumer calls
// the deleter, whatever happens to the handle. DLPack strides count elements, not bytes.
#include <memory>

#include "capi/boundary.hpp"
#include "capi/handle_table.hpp"
#include "capi/interface.hpp"
#include "dlpack/dlpack.h"

namespace gts {
namespace {

struct export_context {
  storage view;
  int64_t shape[max_ndim];
  int64_t strides[max_ndim];
};

DLDataType dl_dtype(dtype t) {
  DLDataType d{};
  switch (t.kind) {
    case 'i':
      d.code = kDLInt;
      break;
    case 'u':
      d.code = kDLUInt;
      break;
    case 'f':
      d.code = kDLFloat;
      break;
    case 'c':
      d.code = kDLComplex;
      break;
    case 'b':
      d.code = kDLBool;
      break;
    default:
      fail(error_kind::internal, "dtype: no DLPack code");
  }
  d.bits = static_cast<uint8_t>(t.itemsize * 8);
  d.lanes = 1;
  return d;
}

std::unique_ptr<export_context> make_context(const storage& s, side sd, DLTensor& t) {
  if (!s.has(sd)) capi::fail_no_buffer(s, sd);
  auto ctx = std::make_unique<export_context>(export_context{s, {}, {}});
  const int k = static_cast<int>(sd);
  const side_buffer& b = s.buffers->get(sd);
  for (int d = 0; d < s.ndim; ++d) {
    ctx->shape[d] = s.shape[d];
    ctx->strides[d] = s.strides[k][d] / s.type.itemsize;
  }
  t.data = s.data[k];
  t.device = DLDevice{static_cast<DLDeviceType>(b.dl_device_type), b.dl_device_id};
  t.ndim = s.ndim;
  t.dtype = dl_dtype(s.type);
  t.shape = ctx->shape;
  t.strides = ctx->strides;
  t.byte_offset = 0;
  return ctx;
}

void delete_versioned(DLManagedTensorVersioned* self) {
  if (self == nullptr) return;
  delete static_cast<export_context*>(self->manager_ctx);
  delete self;
}

void delete_legacy(DLManagedTensor* self) {
  if (self == nullptr) return;
  delete static_cast<export_context*>(self->manager_ctx);
  delete self;
}

void check_args(int32_t side_value, const void* out) {
  if (out == nullptr) fail_arg("out", "must not be NULL");
  if (side_value != 0 && side_value != 1) {
    fail_arg("side", std::to_string(side_value) + " is not GTSTORAGE_SIDE_HOST (0) or _DEVICE (1)");
  }
}

}  // namespace
}  // namespace gts

extern "C" {

int gtstorage_to_dlpack_versioned(gtstorage_handle handle, int32_t side,
                                  struct DLManagedTensorVersioned** out) {
  return gts::capi::guarded([&] {
    gts::check_args(side, out);
    const gts::storage& s = gts::handle_table::instance().get(handle);
    auto tensor = std::make_unique<DLManagedTensorVersioned>();
    auto ctx = gts::make_context(s, static_cast<gts::side>(side), tensor->dl_tensor);
    tensor->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    tensor->flags = s.readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    tensor->manager_ctx = ctx.release();
    tensor->deleter = gts::delete_versioned;
    *out = tensor.release();
  });
}

int gtstorage_to_dlpack(gtstorage_handle handle, int32_t side, struct DLManagedTensor** out) {
  return gts::capi::guarded([&] {
    gts::check_args(side, out);
    const gts::storage& s = gts::handle_table::instance().get(handle);
    auto tensor = std::make_unique<DLManagedTensor>();
    auto ctx = gts::make_context(s, static_cast<gts::side>(side), tensor->dl_tensor);
    tensor->manager_ctx = ctx.release();
    tensor->deleter = gts::delete_legacy;
    *out = tensor.release();
  });
}

}  // extern "C"
