// Wraps: storages over memory the caller owns (host, device, or a host + device pair), after
// checking that the geometry addresses the memory it describes; and caller_array, the checked
// view of a caller's array that the copies take.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/errors.hpp"
#include "device/allocation_registry.hpp"
#include "layout/checked_math.hpp"
#include "storage/storage.hpp"
#include "storage/storage_internal.hpp"

namespace gts {
namespace {

// The address of a wrap without elements that came without one (never dereferenced: nothing
// is read or written through a storage without elements). Aligned as any preset asks.
alignas(256) std::byte empty_span[1];

// Rejects strides that are not multiples of the item size or that let two elements overlap.
// Sufficient test: sorted by |stride|, each stride must clear the whole extent of the smaller ones.
void check_strides(const int64_t* shape, const int64_t* strides, int ndim, int64_t itemsize,
                   const char* param) {
  std::array<int, max_ndim> order{};
  int n = 0;
  for (int d = 0; d < ndim; ++d) {
    if (strides[d] == INT64_MIN) {
      fail_arg(param, "stride of dimension " + std::to_string(d) + " is out of range");
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (strides[d] % itemsize != 0) {
      fail_arg(param, "stride " + std::to_string(strides[d]) + " of dimension " +
                          std::to_string(d) + " is not a multiple of the item size " +
                          std::to_string(itemsize));
    }
    if (shape[d] == 0) return;  // empty: nothing can overlap
    if (shape[d] > 1) order[n++] = d;
  }
  std::sort(order.begin(), order.begin() + n,
            [&](int a, int b) { return std::llabs(strides[a]) < std::llabs(strides[b]); });
  int64_t reach = itemsize;  // bytes spanned by the dims sorted so far
  for (int i = 0; i < n; ++i) {
    const int d = order[i];
    const int64_t s = std::llabs(strides[d]);
    if (s < reach) {
      fail_arg(param, "stride " + std::to_string(strides[d]) + " of dimension " +
                          std::to_string(d) + " makes elements overlap (needs |stride| ≥ " +
                          std::to_string(reach) + ")");
    }
    reach = checked_add(reach, checked_mul(s, shape[d] - 1, param), param);
  }
}

}  // namespace

strided_array caller_array(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                           const char* dtype_str, dtype fallback, const char* param) {
  const std::string p(param);
  if (ndim < 0 || ndim > max_ndim) {
    fail_arg(p + "ndim", std::to_string(ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  if (shape == nullptr && ndim > 0) fail_arg(p + "shape", "must not be NULL");
  strided_array a;
  a.ndim = ndim;
  a.type = dtype_str ? parse_dtype(dtype_str, (p + "dtype").c_str()) : fallback;
  int64_t stride = a.type.itemsize;
  bool empty = false;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] < 0) {
      fail_arg(p + "shape", "extent " + std::to_string(shape[d]) + " of dimension " +
                                std::to_string(d) + " must be ≥ 0");
    }
    a.shape[d] = shape[d];
    a.strides[d] = strides ? strides[d] : stride;
    stride = checked_mul(stride, std::max<int64_t>(shape[d], 1), (p + "shape").c_str());
    empty = empty || shape[d] == 0;
  }
  if (strides != nullptr)
    check_strides(a.shape, a.strides, ndim, a.type.itemsize, (p + "strides").c_str());
  if (data == nullptr && !empty) fail_arg(p + "data", "must not be NULL");
  a.data = static_cast<std::byte*>(data);
  return a;
}

namespace {

// Fails unless the span of wrapped side @p b lies inside the allocation the backend knows for
// its element (0, …, 0), the address the caller gave (nothing to check where it knows none, or
// for an array without elements).
void check_inside_allocation(device::backend& be, const side_buffer& b, const char* param) {
  if (b.bytes == 0) return;
  const void* base = nullptr;
  std::size_t bytes = 0;
  if (!be.allocations().allocation_range(b.full.data, &base, &bytes)) return;
  const auto lo = reinterpret_cast<uintptr_t>(b.base);
  const auto start = reinterpret_cast<uintptr_t>(base);
  const uintptr_t end = start + bytes;
  if (lo < start || static_cast<uint64_t>(b.bytes) > end - lo) {
    char text[96];
    std::snprintf(text, sizeof text, "[%p, +%lld) lies outside the allocation [%p, +%zu)",
                  static_cast<const void*>(b.base), static_cast<long long>(b.bytes), base, bytes);
    fail_arg(std::string(param) + "data",
             std::string("the elements' bytes ") + text +
                 " that the device backend reports for that address (shape or strides too large)");
  }
}

// Host data that the device runtime knows as device memory would be read and written by host
// code (a fill, a copy, NumPy): refused. Unified and pinned memory are host-addressable, and
// where the runtime knows their allocation the elements must lie inside it. Asked only of a
// backend already in use, so that a host-only program never starts a GPU runtime (memory of a
// runtime the library has not used cannot be told from host memory).
void check_host_memory(const side_buffer& b, const void* data) {
  device::backend* be = device::selected();
  if (be == nullptr || data == nullptr || be->device_count() <= 0) return;
  const device::pointer_info pi = be->allocations().query_pointer(data);
  if (pi.space == device::pointer_space::host) return;
  if (pi.space == device::pointer_space::device) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", data);
    fail_arg("data", std::string(addr) + " is device memory (device " +
                         std::to_string(pi.device_id) + " of the '" + be->name() +
                         "' device backend), which host code cannot address (wrap it as device "
                         "memory)");
  }
  check_inside_allocation(*be, b, "");
}

// The request's own consistency, before anything is allocated: ndim, shape, a pointer unless
// the storage is empty, the device ordinal and a sync state that needs two sides.
void check_wrap_request(const wrap_request& req) {
  if (req.ndim < 0 || req.ndim > max_ndim) {
    fail_arg("ndim", std::to_string(req.ndim) + " is out of range 0 … " + std::to_string(max_ndim));
  }
  if (req.shape == nullptr && req.ndim > 0) fail_arg("shape", "must not be NULL");
  if (req.data == nullptr && req.device_data == nullptr) {
    bool empty = false;
    for (int d = 0; d < req.ndim; ++d) empty = empty || req.shape[d] == 0;
    if (!empty) fail_arg("data", "data and device_data must not both be NULL");
  }
  if (req.device_id < -1) fail_arg("device_id", std::to_string(req.device_id) + " must be ≥ -1");
  // An ordinal says where device_data lives; host memory has none, and accepting one anyway
  // would let a caller believe the storage is on that device.
  if (req.device_data == nullptr && req.device_id != -1 && !req.empty_device) {
    fail_arg("device_id", std::to_string(req.device_id) +
                              " was given, but there is no device_data (host memory has no "
                              "device ordinal: pass -1)");
  }
  // A dirty side needs two sides; one buffer is always in sync with itself.
  if ((req.data == nullptr || req.device_data == nullptr) && req.sync_state != sync_state::clean) {
    fail_arg("sync_state",
             std::string(req.sync_state == sync_state::host_dirty ? "GTSTORAGE_SYNC_HOST_DIRTY"
                                                                  : "GTSTORAGE_SYNC_DEVICE_DIRTY") +
                 " describes a host + device pair; a wrap of one buffer is "
                 "GTSTORAGE_SYNC_CLEAN");
  }
}

// Which memory device_data is, and on which device (0 unless the runtime says).
struct device_memory {
  device::memory_kind kind;
  int device_id;
};

device_memory device_memory_of(device::backend& be, const wrap_request& req, bool empty_device) {
  // The runtime knows what the memory is and where it lives (a CuPy array on GPU 1, managed
  // memory, pinned host memory): that, not the caller's current device, goes into the
  // descriptors.
  device::pointer_info pi = be.allocations().query_pointer(req.device_data);
  if (empty_device) {  // no address to ask about: device memory where the caller says
    pi.space = device::pointer_space::device;
    pi.device_id = req.device_id >= 0 ? req.device_id : be.current_device();
  }
  if (pi.space == device::pointer_space::host) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", req.device_data);
    fail_arg("device_data", std::string(addr) +
                                " is not device, managed or pinned memory of the '" + be.name() +
                                "' device backend (the runtime reports ordinary " +
                                "host memory; pass host memory as data)");
  }
  const auto kind = pi.space == device::pointer_space::unified ? device::memory_kind::unified
                    : pi.space == device::pointer_space::pinned_host
                        ? device::memory_kind::pinned_host
                        : device::memory_kind::device;
  const int id = pi.device_id >= 0 ? pi.device_id : 0;
  if (req.device_id >= 0 && kind != device::memory_kind::pinned_host && req.device_id != id) {
    fail_arg("device_id", std::to_string(req.device_id) +
                              " was given, but device_data lives on device " + std::to_string(id));
  }
  return {kind, id};
}

}  // namespace

std::unique_ptr<storage> storage::wrap(const wrap_request& req) {
  check_wrap_request(req);
  auto st = std::unique_ptr<storage>(new storage);
  const int n = req.ndim;
  st->ndim = n;
  st->type = parse_dtype(req.dtype);
  st->dims = parse_dims(req.dims, n);
  for (int d = 0; d < n; ++d) {
    if (req.shape[d] < 0) {
      fail_arg("shape", "extent " + std::to_string(req.shape[d]) + " of dimension " +
                            std::to_string(d) + " must be ≥ 0");
    }
    st->shape[d] = req.shape[d];
    const int64_t lo = req.halo ? req.halo[2 * d] : 0;
    const int64_t hi = req.halo ? req.halo[2 * d + 1] : 0;
    if (lo < 0 || hi < 0 || lo > st->shape[d] || hi > st->shape[d] - lo) {
      fail_arg("halo", "widths (" + std::to_string(lo) + ", " + std::to_string(hi) +
                           ") of dimension " + std::to_string(d) +
                           " must be ≥ 0 and fit in its extent " + std::to_string(st->shape[d]));
    }
    st->halo[d] = {lo, hi};
    st->aligned_index[d] = lo < st->shape[d] ? lo : -1;
  }
  auto buffers = std::make_shared<buffer_set>();
  for (int k = 0; k < 2; ++k) {
    for (int d = 0; d < n; ++d) st->strides[k][d] = 0;  // absent sides keep zero strides
  }
  auto setup = [&](side s, void* ptr, const int64_t* strides_in, const char* param) {
    strided_array a = caller_array(ptr, n, req.shape, strides_in ? strides_in : req.strides,
                                   nullptr, st->type, param);
    side_buffer& b = buffers->get(s);
    b.owner = side_owner::wrapped;
    b.readonly = req.readonly;
    b.full = a;
    std::byte *lo = nullptr, *hi = nullptr;
    span_of(a, lo, hi);
    b.base = lo;
    b.bytes = hi - lo;
    b.dense_allocation = b.bytes == a.size() * a.type.itemsize;
    st->data[idx(s)] = a.data;
    for (int d = 0; d < n; ++d) st->strides[idx(s)][d] = a.strides[d];
  };
  // An empty array may come without any pointer (NumPy, Fortran and CUDA do that): a host side
  // at an address of the library's own, since descriptors promise a non-null data address.
  bool empty = false;
  for (int d = 0; d < n; ++d) empty = empty || req.shape[d] == 0;
  const bool empty_device =
      empty && req.empty_device && req.data == nullptr && req.device_data == nullptr;
  if (req.data != nullptr || (req.device_data == nullptr && empty && !empty_device)) {
    setup(side::host, req.data != nullptr ? req.data : empty_span, req.strides, "");
    check_host_memory(buffers->host, req.data);
  }
  if (req.device_data != nullptr || empty_device) {
    device::backend& be = device::active();
    if (be.device_count() <= 0) {
      fail(be.no_device_kind(), std::string("device_data: no usable GPU (device backend '") +
                                    be.name() + "' reports 0 devices: " + be.no_device_reason() +
                                    ")");
    }
    if (req.device_id >= be.device_count()) {
      fail_arg("device_id", std::to_string(req.device_id) + " is out of range 0 … " +
                                std::to_string(be.device_count() - 1));
    }
    const device_memory mem = device_memory_of(be, req, empty_device);
    setup(side::device, empty_device ? empty_span : req.device_data, req.device_strides, "device_");
    // Where the backend knows the allocation, the elements must lie inside it: a shape larger
    // than the memory would let a fill or copy write past its end (the device does not check).
    check_inside_allocation(be, buffers->device, "device_");
    buffers->backend = &be;
    buffers->device.kind = mem.kind;
    buffers->device.device_id = mem.device_id;
    buffers->device.dl_device_type = be.dl_device_type(mem.kind);
    buffers->device.dl_device_id =
        device::dl::device_id_for(buffers->device.dl_device_type, mem.device_id);
    buffers->managed = req.data != nullptr ? managed_kind::mirror : managed_kind::none;
    if (req.data != nullptr) {
      if (req.sync_state == sync_state::clean) {
        buffers->mark_synchronized(0, true);
      } else {
        buffers->modify(req.sync_state == sync_state::host_dirty ? side::host : side::device, true,
                        0, true);
      }
    }
  }
  st->buffers = buffers;
  st->readonly = req.readonly;
  // Only now can nothing fail any more: from here on the callback belongs to the buffers.
  buffers->release = req.release;
  buffers->release_user_data = req.user_data;
  st->finalize();
  return st;
}

}  // namespace gts
