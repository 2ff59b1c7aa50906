// DLPack export: a storage view becomes a DLManagedTensor(Versioned) whose manager context owns
// a copy of the view (sharing its buffers), so the memory stays alive until the consumer calls
// the deleter, whatever happens to the handle. DLPack strides count elements, not bytes.
#include <memory>

#include "common/errors.hpp"
#include "interop/array_interface.hpp"
#include "interop/dlpack.hpp"

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
  if (!s.has(sd)) interop::fail_no_buffer(s, sd);
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

}  // namespace

namespace interop {

DLManagedTensorVersioned* to_dlpack_versioned(const storage& s, side sd) {
  auto tensor = std::make_unique<DLManagedTensorVersioned>();
  auto ctx = make_context(s, sd, tensor->dl_tensor);
  tensor->version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  tensor->flags = s.readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  tensor->manager_ctx = ctx.release();
  tensor->deleter = delete_versioned;
  return tensor.release();
}

DLManagedTensor* to_dlpack(const storage& s, side sd) {
  auto tensor = std::make_unique<DLManagedTensor>();
  auto ctx = make_context(s, sd, tensor->dl_tensor);
  tensor->manager_ctx = ctx.release();
  tensor->deleter = delete_legacy;
  return tensor.release();
}

}  // namespace interop
}  // namespace gts
