// Creating storages: the plan (memoized per thread, plan_cache.hpp), the buffers on the sides the
// storage needs (host blocks from memory/, device memory from the backend), the geometry (copied
// from the memo for a host storage planned before) and the initial contents; the geometry every
// view derives (finalize); and the release. Copies, wraps and views are in storage_*.cpp.
#include "storage/storage.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/kernels.hpp"
#include "layout/checked_math.hpp"
#include "storage/plan_cache.hpp"
#include "storage/storage_internal.hpp"

namespace gts {
namespace {

// Zeros of a small host block are one memset: the fill kernel would end in the same memset
// (far below its threading and streaming-store thresholds) after checking and normalizing its
// array, which cost as much again in a small create.
constexpr int64_t small_fill_bytes = int64_t(64) << 10;

void set_root_array(strided_array& a, std::byte* element0, const allocation_plan& plan) {
  a.data = element0;
  a.ndim = plan.ndim;
  a.type = plan.type;
  for (int d = 0; d < plan.ndim; ++d) {
    a.shape[d] = plan.shape[d];
    a.strides[d] = plan.strides[d];
  }
}

strided_array bytes_array(std::byte* base, int64_t bytes) {
  strided_array a;
  a.data = base;
  a.ndim = 1;
  a.shape[0] = bytes;
  a.strides[0] = 1;
  a.type = dtype{'u', 1};
  return a;
}

}  // namespace

strided_array storage::array(side s) const {
  strided_array a;
  a.data = data[idx(s)];
  a.ndim = ndim;
  a.type = type;
  for (int d = 0; d < ndim; ++d) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[idx(s)][d];
  }
  return a;
}

void storage::finalize(const layout_map* planned) {
  const int64_t count = size();
  for (int k = 0; k < 2; ++k) {
    layout_map derived;  // only filled without a planned layout
    if (planned == nullptr) derived = layout_from_strides(strides[k].data(), ndim);
    const layout_map& l = planned != nullptr ? *planned : derived;
    for (int d = 0; d < ndim; ++d) layouts[k][d] = static_cast<uint8_t>(l[d]);
    int64_t expected = type.itemsize;
    bool contiguous = true;
    for (int d = ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && strides[k][d] != expected) contiguous = false;
      expected *= shape[d];
    }
    c_contiguous[k] = contiguous || count == 0;
  }
  nbytes = count * type.itemsize;
  // Typestr by hand (this runs on every create and view): "<f8", "|b1", "<c16".
  char* t = typestr.data();
  *t++ = type.itemsize == 1 ? '|' : '<';
  *t++ = type.kind;
  if (type.itemsize >= 10) *t++ = static_cast<char>('0' + type.itemsize / 10);
  *t++ = static_cast<char>('0' + type.itemsize % 10);
  *t = '\0';
}

int64_t storage::size() const {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

namespace {

// The geometry of a new storage of @p plan whose buffers are set up (present sides and their
// data addresses).
void derive_geometry(storage& st, const allocation_plan& plan) {
  const buffer_set& bs = *st.buffers;
  st.ndim = plan.ndim;
  st.type = plan.type;
  st.readonly = false;
  st.stream = 0;
  for (int d = 0; d < plan.ndim; ++d) {
    st.shape[d] = plan.shape[d];
    st.dims[d] = plan.dims[d];
    st.halo[d] = plan.halo[d];
    // A dimension of extent 0 holds no aligned element (as a view of it reports, see slice).
    st.aligned_index[d] = plan.shape[d] > 0 ? plan.aligned_index[d] : -1;
  }
  for (side s : {side::host, side::device}) {
    const bool present = bs.get(s).present();
    // An absent side gets zero strides (views compute strides for both sides).
    for (int d = 0; d < plan.ndim; ++d) st.strides[idx(s)][d] = present ? plan.strides[d] : 0;
    st.data[idx(s)] = present ? bs.get(s).full.data : nullptr;
  }
  // The planned layout, not one re-derived from strides: they tie for extent-1 dims.
  st.finalize(&plan.layout);
}

// A new storage for storage::create (its checks done): buffers allocated and the geometry set,
// contents not initialized.
std::unique_ptr<storage> new_storage(const create_request& req, const allocation_plan& plan,
                                     bool gpu, managed_kind managed,
                                     host_geometry_slot* memo_geometry) {
  const bool need_host = !gpu || managed == managed_kind::mirror;
  const bool need_device = gpu;
  auto buffers = std::make_shared<buffer_set>();
  buffers->managed = managed;
  if (gpu || req.host_memory == host_memory_kind::pinned) buffers->backend = &device::active();
  const auto bytes = static_cast<size_t>(plan.allocation_bytes);
  // The plan's byte_offset is relative to a block aligned to alignment_bytes. Powers of two get
  // at least a cache line; other alignments (24 bytes for <f8) are served as they are, by
  // over-allocating (GT4Py's way), on the host and the device alike.
  const size_t align = static_cast<size_t>(is_power_of_two(plan.alignment_bytes)
                                               ? std::max<int64_t>(plan.alignment_bytes, 64)
                                               : plan.alignment_bytes);
  int device_id = 0;
  if (gpu || req.host_memory == host_memory_kind::pinned) {
    device::backend& be = device::active();
    if (be.device_count() <= 0) {
      const bool emulated = std::string(be.name()) == "emulated";
      // The parameter that asked for a device: the preset or device for a GPU storage, else
      // host_memory (page-locked memory is the device runtime's).
      fail(be.no_device_kind(),
           std::string(gpu ? "device: no usable GPU"
                           : "host_memory: GTSTORAGE_HOST_PINNED needs "
                             "a usable GPU") +
               " (device backend '" + be.name() + "' reports 0 devices: " + be.no_device_reason() +
               "); use " + (gpu ? "a CPU preset" : "GTSTORAGE_HOST_PAGEABLE") +
               (emulated ? "" : " or set GTSTORAGE_DEVICE_BACKEND=emulated for testing"));
    }
    device_id = req.device_id >= 0 ? req.device_id : be.current_device();
    if (device_id >= be.device_count()) {
      fail_arg("device_id", std::to_string(device_id) + " is out of range 0 … " +
                                std::to_string(be.device_count() - 1));
    }
  }

  if (need_host) {
    side_buffer& h = buffers->host;
    if (req.host_memory == host_memory_kind::pinned) {
      h.base = static_cast<std::byte*>(
          req.pooled
              ? buffers->backend->allocate_pooled(bytes, align, device::memory_kind::pinned_host,
                                                  device_id, buffers->default_stream)
              : buffers->backend->allocate(bytes, align, device::memory_kind::pinned_host,
                                           device_id));
      h.owner = side_owner::backend;
      h.kind = device::memory_kind::pinned_host;
      h.device_id = device_id;
      h.dl_device_type = buffers->backend->dl_device_type(device::memory_kind::pinned_host);
      stats().host_bytes.fetch_add(plan.allocation_bytes, std::memory_order_relaxed);
    } else {
      h.block = allocate_host(bytes, align, req.pooled);
      h.base = static_cast<std::byte*>(h.block.ptr);
      h.owner = side_owner::host_block;
      stats().host_bytes.fetch_add(static_cast<int64_t>(h.block.bytes), std::memory_order_relaxed);
    }
    h.bytes = plan.allocation_bytes;
    set_root_array(h.full, h.base + plan.byte_offset, plan);
    h.dense_allocation = true;
  }
  if (need_device) {
    side_buffer& dv = buffers->device;
    const auto kind = managed == managed_kind::unified ? device::memory_kind::unified
                                                       : device::memory_kind::device;
    dv.base = static_cast<std::byte*>(
        req.pooled ? buffers->backend->allocate_pooled(bytes, align, kind, device_id,
                                                       buffers->default_stream)
                   : buffers->backend->allocate(bytes, align, kind, device_id));
    dv.owner = side_owner::backend;
    dv.kind = kind;
    dv.device_id = device_id;
    dv.dl_device_type = buffers->backend->dl_device_type(kind);
    dv.dl_device_id = device::dl::device_id_for(dv.dl_device_type, device_id);
    dv.bytes = plan.allocation_bytes;
    set_root_array(dv.full, dv.base + plan.byte_offset, plan);
    dv.dense_allocation = true;
    stats().device_bytes.fetch_add(plan.allocation_bytes, std::memory_order_relaxed);
    if (managed == managed_kind::unified) {
      side_buffer& h = buffers->host;
      h = dv;
      h.owner = side_owner::alias;
    }
  }

  auto st = std::unique_ptr<storage>(new storage);  // default-init: arrays filled below
  st->buffers = std::move(buffers);
  // A storage with only a host side has the geometry of every other one of its plan, but for
  // its data: copied from the memo after the first (it is derived below and kept there).
  const bool host_only = !need_device;
  if (host_only && memo_geometry != nullptr && memo_geometry->valid) {
    std::memcpy(static_cast<view_geometry*>(st.get()), &memo_geometry->slot.geometry,
                sizeof(view_geometry));
    st->data[idx(side::host)] = st->buffers->host.full.data;
  } else {
    derive_geometry(*st, plan);
    if (host_only && memo_geometry != nullptr) {
      view_geometry& g = *::new (&memo_geometry->slot.geometry) view_geometry(*st);
      g.data = {};
      memo_geometry->valid = true;
    }
  }
  return st;
}

}  // namespace

std::unique_ptr<storage> storage::create(const create_request& req) {
  // This thread's memo of recent plans (a small create spent most of its time planning). Valid
  // until this thread plans again, which nothing below does.
  host_geometry_slot* memo_geometry = nullptr;
  const allocation_plan& plan = cached_plan(req.plan, memo_geometry);
  if (req.init == init_kind::value && req.fill_value == nullptr)
    fail_arg("fill_value", "must not be NULL with GTSTORAGE_INIT_VALUE");
  if (req.init == init_kind::copy) {
    if (req.source == nullptr) fail_arg("source", "must not be NULL with GTSTORAGE_INIT_COPY");
    check_same_shape(plan.ndim, plan.shape.data(), req.source->ndim, req.source->shape, "source");
  }
  const bool gpu = req.device == device_choice::preset
                       ? plan.source_preset.device == device_kind::gpu
                       : req.device == device_choice::gpu;
  const managed_kind managed = gpu ? req.managed : managed_kind::none;
  if (!gpu && req.managed != managed_kind::none) {
    fail_arg(
        "managed",
        "a CPU storage cannot be managed (GTSTORAGE_MANAGED_MIRROR/UNIFIED need device = GPU)");
  }
  if (req.device_id < -1) fail_arg("device_id", std::to_string(req.device_id) + " must be ≥ -1");

  const bool need_host = !gpu || managed == managed_kind::mirror;
  std::unique_ptr<storage> st = new_storage(req, plan, gpu, managed, memo_geometry);
  buffer_set* const bs = st->buffers.get();

  // Initial contents: written on the host when there is one (mirrors then start host-dirty, so
  // the first device use transfers once), else on the device.
  const side init_side = need_host || managed == managed_kind::unified ? side::host : side::device;
  const bool host_side = host_accessible(*st, init_side);
  const side_buffer& ib = bs->get(init_side);
  device::backend* be = bs->backend;
  auto fill_with = [&](const strided_array& target, const void* value) {
    if (host_side && managed != managed_kind::unified) {
      kernels::fill(target, value);
    } else {
      device::enqueue_or_drain(*be, 0, [&] { be->fill(target, value, 0); });
      be->synchronize(0);
    }
  };
  switch (req.init) {
    case init_kind::zeros: {  // zeros: padding and halo included; fresh mappings are already zero
      if (ib.owner == side_owner::host_block && ib.block.fresh_zero) break;
      if (host_side && managed != managed_kind::unified && ib.bytes <= small_fill_bytes) {
        std::memset(ib.base, 0, static_cast<size_t>(ib.bytes));  // what the kernel does there
      } else {
        const std::byte zero{0};
        fill_with(bytes_array(ib.base, ib.bytes), &zero);
      }
      break;
    }
    case init_kind::ones:
    case init_kind::value: {
      alignas(16) std::byte value[16] = {};
      if (req.init == init_kind::ones) {
        const double one = 1.0;
        kernels::convert_element(value, plan.type, &one, dtype{'f', 8});
      } else {
        std::memcpy(value, req.fill_value, static_cast<size_t>(plan.type.itemsize));
      }
      fill_with(ib.full, value);
      break;
    }
    case init_kind::copy:
      move_elements(ib.full, host_side, *req.source, true, 0, bs->backend, &bs->transfers);
      break;
    case init_kind::uninitialized:
      break;
  }
  if (req.init != init_kind::uninitialized && bs->mirrored()) {
    bs->modify(side::host, false, 0, true);
  }
  st->readonly = req.readonly;
  return st;
}

void storage::retire(storage* s) noexcept {
  // The handle stops using its stream (the application may destroy the stream after this).
  if (s != nullptr && s->stream != 0 && s->buffers != nullptr) s->buffers->leave_stream(s->stream);
  delete s;
}

}  // namespace gts
