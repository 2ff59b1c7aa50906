// DLPack import: a DLManagedTensor(Versioned) of any producer becomes a storage without a copy.
// The tensor is translated into a wrap_request (element strides to bytes, byte_offset into the
// address, the DLPack device into the host or the device side) and wrapped by storage::wrap(),
// the path of gtstorage_wrap(), with the tensor's deleter as the buffers' release callback: it
// runs once, when the last view (or DLPack export) of the buffers is gone.
#include <cstdint>
#include <memory>
#include <string>

#include "common/errors.hpp"
#include "common/named_values.hpp"
#include "device/device_backend.hpp"
#include "interop/dlpack.hpp"

namespace gts {
namespace {

constexpr const char* tensor_param = "managed_tensor->dl_tensor.";

void release_versioned(void* p) {
  auto* t = static_cast<DLManagedTensorVersioned*>(p);
  if (t->deleter != nullptr) t->deleter(t);
}

void release_legacy(void* p) {
  auto* t = static_cast<DLManagedTensor*>(p);
  if (t->deleter != nullptr) t->deleter(t);
}

// The DLPack dtype codes messages name.
constexpr named_value dl_codes[] = {GTS_NAMED_VALUE(kDLInt),    GTS_NAMED_VALUE(kDLUInt),
                                    GTS_NAMED_VALUE(kDLFloat),  GTS_NAMED_VALUE(kDLOpaqueHandle),
                                    GTS_NAMED_VALUE(kDLBfloat), GTS_NAMED_VALUE(kDLComplex),
                                    GTS_NAMED_VALUE(kDLBool)};

const char* dl_code_name(unsigned code) {
  return name_in(dl_codes, code, "a code this library does not know");
}

/// The DLPack dtypes of one lane that a storage can hold, as typestrs.
struct dl_typestr {
  unsigned code;
  int bits;
  const char* typestr;
};
constexpr dl_typestr dl_typestrs[] = {
    {kDLInt, 8, "|i1"},        {kDLInt, 16, "<i2"},   {kDLInt, 32, "<i4"},
    {kDLInt, 64, "<i8"},       {kDLUInt, 8, "|u1"},   {kDLUInt, 16, "<u2"},
    {kDLUInt, 32, "<u4"},      {kDLUInt, 64, "<u8"},  {kDLFloat, 16, "<f2"},
    {kDLFloat, 32, "<f4"},     {kDLFloat, 64, "<f8"}, {kDLComplex, 64, "<c8"},
    {kDLComplex, 128, "<c16"}, {kDLBool, 8, "|b1"}};

/// The typestr of a DLPack dtype, or a failure naming code, bits and lanes.
const char* typestr_of(const DLDataType& t) {
  const int bits = t.bits;
  const char* s = nullptr;
  if (t.lanes == 1) {
    for (const dl_typestr& e : dl_typestrs) {
      if (e.code == t.code && e.bits == bits) s = e.typestr;
    }
  }
  if (s == nullptr) {
    fail(error_kind::unsupported,
         std::string(tensor_param) + "dtype: code " + std::to_string(t.code) + " (" +
             dl_code_name(t.code) + ") bits " + std::to_string(bits) + " lanes " +
             std::to_string(t.lanes) +
             " is not supported (lanes 1 of kDLInt/kDLUInt 8, 16, 32, 64 bits, kDLFloat 16, 32, "
             "64, kDLComplex 64, 128, kDLBool 8)");
  }
  return s;
}

// The DLPack device types messages name.
constexpr named_value dl_devices[] = {
    GTS_NAMED_VALUE(kDLCPU),    GTS_NAMED_VALUE(kDLCUDA),        GTS_NAMED_VALUE(kDLCUDAHost),
    GTS_NAMED_VALUE(kDLOpenCL), GTS_NAMED_VALUE(kDLVulkan),      GTS_NAMED_VALUE(kDLMetal),
    GTS_NAMED_VALUE(kDLVPI),    GTS_NAMED_VALUE(kDLROCM),        GTS_NAMED_VALUE(kDLROCMHost),
    GTS_NAMED_VALUE(kDLExtDev), GTS_NAMED_VALUE(kDLCUDAManaged), GTS_NAMED_VALUE(kDLOneAPI),
    GTS_NAMED_VALUE(kDLWebGPU), GTS_NAMED_VALUE(kDLHexagon),     GTS_NAMED_VALUE(kDLMAIA)};

const char* dl_device_name(int type) {
  return name_in(dl_devices, type, "unknown");
}

/// Device memory types the active backend addresses: what it reports for its own device,
/// unified and pinned memory (kDLCPU, which the emulated device reports for the latter two, is
/// host memory and never a device type here).
bool backend_addresses(device::backend& be, int type) {
  using device::memory_kind;
  if (type == kDLCPU) return false;
  for (memory_kind k : {memory_kind::device, memory_kind::unified, memory_kind::pinned_host}) {
    if (be.dl_device_type(k) == type) return true;
  }
  return false;
}

/// Re-throws an error of storage::wrap() with its parameter renamed to the DLPack field it
/// came from ("strides: …" -> "managed_tensor->dl_tensor.strides (in bytes): …").
[[noreturn]] void rethrow_named(const error& e) {
  const std::string m = e.what();
  const std::size_t colon = m.find(": ");
  const std::string param = colon == std::string::npos ? std::string() : m.substr(0, colon);
  std::string name;
  if (param == "ndim" || param == "device_ndim") {
    name = std::string(tensor_param) + "ndim";
  } else if (param == "shape" || param == "device_shape") {
    name = std::string(tensor_param) + "shape";
  } else if (param == "strides" || param == "device_strides") {
    name = std::string(tensor_param) + "strides (in bytes)";
  } else if (param == "data" || param == "device_data") {
    name = std::string(tensor_param) + "data";
  } else if (param == "device_id") {
    name = std::string(tensor_param) + "device.device_id";
  } else if (param == "dims" || param == "halo") {
    name = "options->" + param;
  } else {
    throw e;
  }
  fail(e.kind(), name + m.substr(colon));
}

}  // namespace

namespace interop {

std::unique_ptr<storage> wrap_dlpack(void* managed_tensor, bool versioned,
                                     const dlpack_wrap_options& options) {
  const DLTensor* t = nullptr;
  bool readonly = options.readonly;
  release_callback release = nullptr;
  if (versioned) {
    auto* v = static_cast<DLManagedTensorVersioned*>(managed_tensor);
    // Another major version may lay the struct out differently: nothing after the version
    // (and the deleter, which DLPack keeps in place) may be read.
    if (v->version.major != DLPACK_MAJOR_VERSION) {
      fail(error_kind::unsupported,
           "managed_tensor->version.major: DLPack " + std::to_string(v->version.major) + "." +
               std::to_string(v->version.minor) + " is not supported (this library reads " +
               std::to_string(DLPACK_MAJOR_VERSION) + ".x)");
    }
    readonly = readonly || (v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    t = &v->dl_tensor;
    release = release_versioned;
  } else {
    t = &static_cast<DLManagedTensor*>(managed_tensor)->dl_tensor;
    release = release_legacy;
  }
  const std::string tp = tensor_param;

  if (t->ndim < 0 || t->ndim > max_ndim) {
    fail_arg(tp + "ndim",
             std::to_string(t->ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  const int n = t->ndim;
  if (n > 0 && t->shape == nullptr) fail_arg(tp + "shape", "must not be NULL");
  const char* typestr = typestr_of(t->dtype);
  const int64_t itemsize = t->dtype.bits / 8;

  bool empty = false;
  for (int d = 0; d < n; ++d) {
    if (t->shape[d] < 0) {
      fail_arg(tp + "shape", "extent " + std::to_string(t->shape[d]) + " of dimension " +
                                 std::to_string(d) + " must be ≥ 0");
    }
    empty = empty || t->shape[d] == 0;
  }
  int64_t strides[max_ndim] = {};
  if (t->strides != nullptr) {
    for (int d = 0; d < n; ++d) {
      const int64_t s = t->strides[d];
      if (t->shape[d] > 1 && s == 0 && !empty) {
        fail(error_kind::unsupported,
             tp + "strides: stride 0 of dimension " + std::to_string(d) + " (extent " +
                 std::to_string(t->shape[d]) +
                 ") broadcasts one element; storages never alias elements (copy the tensor)");
      }
      if (__builtin_mul_overflow(s, itemsize, &strides[d])) {
        // An extent-1 (or empty) dimension never steps: its stride is only a layout hint.
        if (t->shape[d] > 1 && !empty) {
          fail(error_kind::overflow, tp + "strides: stride " + std::to_string(s) +
                                         " of dimension " + std::to_string(d) +
                                         " does not fit 64 bits in bytes");
        }
        strides[d] = 0;
      }
    }
  }

  // Element (0, …, 0): data + byte_offset (OpenCL-style producers keep an opaque data pointer
  // and an offset; for memory this library can address both are plain bytes).
  uintptr_t address = reinterpret_cast<uintptr_t>(t->data);
  if (t->byte_offset != 0) {
    if (t->data == nullptr || __builtin_add_overflow(address, t->byte_offset, &address)) {
      fail_arg(tp + "byte_offset",
               std::to_string(t->byte_offset) +
                   (t->data == nullptr ? " is not 0 while data is NULL"
                                       : " added to data overflows the address space"));
    }
  }
  void* element0 = reinterpret_cast<void*>(address);

  wrap_request req;
  req.ndim = n;
  req.shape = t->shape;
  req.strides = t->strides != nullptr ? strides : nullptr;
  req.dtype = typestr;
  req.dims = options.dims;
  req.halo = options.halo;
  req.readonly = readonly;
  req.release = release;
  req.user_data = managed_tensor;

  const int type = t->device.device_type;
  if (type == kDLCPU) {
    req.data = element0;
  } else {
    device::backend& be = device::active();
    if (!backend_addresses(be, type)) {
      fail(error_kind::unsupported,
           tp + "device.device_type: " + std::to_string(type) + " (" + dl_device_name(type) +
               ") is not memory the active device backend '" + be.name() +
               "' can address (kDLCPU always; kDLCUDA, kDLCUDAHost, kDLCUDAManaged with 'cuda'; "
               "kDLROCM, kDLROCMHost with 'hip'; kDLExtDev with 'emulated')");
    }
    if (element0 == nullptr && !empty) fail_arg(tp + "data", "must not be NULL");
    req.device_data = element0;
    req.empty_device = element0 == nullptr;  // PyTorch's empty CUDA tensors have no address
    // Host kinds (pinned memory) carry no meaningful ordinal in DLPack: let the runtime say.
    const bool host_kind = type == kDLCUDAHost || type == kDLROCMHost;
    req.device_id = host_kind ? -1 : t->device.device_id;
    if (req.device_id < -1) {
      fail_arg(tp + "device.device_id", std::to_string(req.device_id) + " must be ≥ 0");
    }
  }

  std::unique_ptr<storage> st;
  try {
    st = storage::wrap(req);
  } catch (const error& e) {
    rethrow_named(e);
  }
  return st;
}

}  // namespace interop
}  // namespace gts
