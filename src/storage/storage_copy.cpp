// Copies and fills of storages: between two storages, from and to caller memory, side to side
// (copy_sides, also asynchronous), and fills; with the moves they share (host, device, staging
// for dtype conversions, overlap) and the transfer counts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "kernels/kernels.hpp"
#include "layout/checked_math.hpp"
#include "storage/storage.hpp"
#include "storage/storage_internal.hpp"

namespace gts {

void span_of(const strided_array& a, std::byte*& lo, std::byte*& hi) {
  for (int d = 0; d < a.ndim; ++d) {
    if (a.shape[d] == 0) {
      lo = hi = a.data;
      return;
    }
  }
  int64_t low = 0, high = a.type.itemsize;
  for (int d = 0; d < a.ndim; ++d) {
    const int64_t reach = checked_mul(a.strides[d], a.shape[d] - 1, "strides");
    int64_t& end = reach < 0 ? low : high;
    end = checked_add(end, reach, "strides");
  }
  const auto base = static_cast<int64_t>(reinterpret_cast<uintptr_t>(a.data));
  int64_t first = 0, last = 0;
  if (__builtin_add_overflow(base, low, &first) || __builtin_add_overflow(base, high, &last) ||
      first < 0) {
    fail(error_kind::overflow, "strides: the array's span does not fit the address space");
  }
  lo = a.data + low;
  hi = a.data + high;
}

bool host_accessible(const storage& s, side sd) {
  return sd == side::host || s.buffers->device.kind == device::memory_kind::unified;
}

void check_same_shape(int ndim_a, const int64_t* a, int ndim_b, const int64_t* b,
                      const char* param) {
  bool same = ndim_a == ndim_b;
  for (int d = 0; same && d < ndim_a; ++d) same = a[d] == b[d];
  if (!same) {
    auto show = [](int n, const int64_t* s) {
      std::string t = "(";
      for (int d = 0; d < n; ++d) t += (d ? ", " : "") + std::to_string(s[d]);
      return t + ")";
    };
    fail(error_kind::shape_mismatch,
         std::string(param) + ": shape " + show(ndim_b, b) + " does not match " + show(ndim_a, a));
  }
}

namespace {

// Unified memory is read and written by the host directly, so what is queued on the storage's
// stream (an application's kernel, a prefetch) must be done first, as a mirror's stream-ordered
// copy would wait for it.
void wait_for_device_work(const storage& s) {
  const buffer_set& b = *s.buffers;
  if (b.device.present() && b.device.kind == device::memory_kind::unified && b.backend != nullptr) {
    b.backend->synchronize(s.stream);
  }
}

// Side a read of @p s uses: the host unless only the device holds current data.
side read_side(const storage& s) {
  s.buffers->wait_pending();
  wait_for_device_work(s);
  if (!s.has(side::host)) return side::device;
  if (s.buffers->mirrored() && s.buffers->state() == sync_state::device_dirty) return side::device;
  return side::host;
}

// Side a write to @p s uses (host if it has one); for mirrors that side is made current first,
// so a partial write leaves no stale remainder, and marked modified afterwards by the caller.
// @p param names the storage in messages as the caller's function does ("dst", "handle").
side prepare_write(const storage& s, const char* param) {
  if (s.readonly) fail(error_kind::readonly, std::string(param) + ": the storage is read-only");
  s.buffers->wait_pending();
  wait_for_device_work(s);
  const side sd = s.has(side::host) ? side::host : side::device;
  if (s.buffers->mirrored()) {
    s.buffers->acquire(sd, false, s.stream, true);
  }
  return sd;
}

void finish_write(const storage& s, side sd) {
  if (s.buffers->mirrored()) {
    s.buffers->modify(sd, false, s.stream, true);
  }
}

device::direction direction_of(bool dst_host, bool src_host) {
  if (dst_host && !src_host) return device::direction::device_to_host;
  if (!dst_host && src_host) return device::direction::host_to_device;
  return device::direction::device_to_device;
}

strided_array contiguous_like(const strided_array& a, dtype type,
                              std::vector<std::byte>& storage_) {
  strided_array c = a;
  c.type = type;
  int64_t stride = type.itemsize;
  for (int d = a.ndim - 1; d >= 0; --d) {
    c.strides[d] = stride;
    stride = checked_mul(stride, std::max<int64_t>(a.shape[d], 1), "shape");
  }
  storage_.resize(static_cast<size_t>(stride));
  c.data = storage_.data();
  return c;
}

// Copies between any two arrays where either may be device memory. Host<->host converts
// dtypes; transfers involving a device go through a host staging array when dtypes differ.
// With @p wait false a same-dtype copy involving the device is only enqueued on @p stream;
// returns whether it was (work left queued that the caller must account for).
bool copy_arrays(const strided_array& dst, bool dst_host, const strided_array& src, bool src_host,
                 uint64_t stream, device::backend* backend, transfer_counters* counters,
                 bool wait = true,
                 kernels::store_policy stores = kernels::store_policy::automatic) {
  if (src.size() == 0) return false;  // nothing to move (and no device call for an empty array)
  if (dst_host && src_host) {
    kernels::copy(dst, src, stores);
    return false;
  }
  device::backend& be = backend != nullptr ? *backend : device::active();
  // A copy that fails part-way leaves what it queued before the failure on the stream, writing
  // into memory the caller frees next (a staging vector below, the caller's array): drained.
  auto device_copy = [&](const strided_array& to, const strided_array& from,
                         device::direction dir) {
    device::enqueue_or_drain(be, stream, [&] { be.copy_strided(to, from, dir, stream); });
    be.synchronize(stream);
    record_transfer(counters, dir, from.size() * from.type.itemsize);
  };
  if (dst.type == src.type) {
    if (!wait) {
      const device::direction dir = direction_of(dst_host, src_host);
      device::enqueue_or_drain(be, stream, [&] { be.copy_strided(dst, src, dir, stream); });
      record_transfer(counters, dir, src.size() * src.type.itemsize);
      return true;
    }
    device_copy(dst, src, direction_of(dst_host, src_host));
    return false;
  }
  // Convert on the host: stage the device-side operand(s) as C-contiguous host arrays.
  std::vector<std::byte> tmp, tmp2;
  if (src_host) {  // host src -> device dst
    const strided_array staged = contiguous_like(dst, dst.type, tmp);
    kernels::copy(staged, src);
    device_copy(dst, staged, device::direction::host_to_device);
    return false;
  }
  const strided_array staged = contiguous_like(src, src.type, tmp);
  device_copy(staged, src, device::direction::device_to_host);
  if (dst_host) {
    kernels::copy(dst, staged);
    return false;
  }
  const strided_array converted = contiguous_like(dst, dst.type, tmp2);
  kernels::copy(converted, staged);
  device_copy(dst, converted, device::direction::host_to_device);
  return false;
}

}  // namespace

// copy_arrays, but correct when source and destination overlap in one address space (views of
// one buffer, two wraps of the same memory, a caller array aliasing the storage): the source is
// then read into a private copy first, as NumPy does. Returns whether work was left queued
// (see copy_arrays).
bool move_elements(const strided_array& dst, bool dst_host, const strided_array& src, bool src_host,
                   uint64_t stream, device::backend* backend, transfer_counters* counters,
                   bool wait, kernels::store_policy stores) {
  std::byte *dlo = nullptr, *dhi = nullptr, *slo = nullptr, *shi = nullptr;
  span_of(dst, dlo, dhi);
  span_of(src, slo, shi);
  if (dst_host == src_host && dlo < shi && slo < dhi) {
    std::vector<std::byte> tmp;
    const strided_array staged = contiguous_like(src, src.type, tmp);
    copy_arrays(staged, true, src, src_host, stream, backend, counters);
    copy_arrays(dst, dst_host, staged, true, stream, backend, counters, true, stores);
    return false;
  }
  return copy_arrays(dst, dst_host, src, src_host, stream, backend, counters, wait, stores);
}

void storage::copy_from(const storage& src) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape.data(), "src");
  const side ss = read_side(src);
  const side ds = prepare_write(*this, "dst");
  const bool dst_host = host_accessible(*this, ds), src_host = host_accessible(src, ss);
  // The source may be another producer's device buffer on its own stream (a wrapped CUDA Array
  // Interface v3 buffer adopts it): what is queued there must land before this copy reads it.
  if (!src_host && src.stream != stream) src.buffers->backend->synchronize(src.stream);
  // A transfer goes through (and is counted by) the device side's buffers.
  const storage& dev = !dst_host ? *this : src;
  move_elements(array(ds), dst_host, src.array(ss), src_host, stream, dev.buffers->backend,
                dst_host && src_host ? nullptr : &dev.buffers->transfers);
  finish_write(*this, ds);
}

void storage::copy_from_host(const strided_array& src) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape, "src");
  const side ds = prepare_write(*this, "dst");
  move_elements(array(ds), host_accessible(*this, ds), src, true, stream, buffers->backend,
                &buffers->transfers);
  finish_write(*this, ds);
}

void storage::copy_sides(side ds, const storage& src, side ss, uint64_t stream, bool wait,
                         bool streaming) {
  check_same_shape(ndim, shape.data(), src.ndim, src.shape.data(), "src");
  auto side_name = [](side sd) { return sd == side::host ? "host" : "device"; };
  if (!has(ds)) {
    fail(error_kind::no_such_buffer,
         std::string("dst: the storage has no ") + side_name(ds) + " buffer");
  }
  if (!src.has(ss)) {
    fail(error_kind::no_such_buffer,
         std::string("src: the storage has no ") + side_name(ss) + " buffer");
  }
  if (readonly || buffers->get(ds).readonly) {
    fail(error_kind::readonly, "dst: the storage is read-only");
  }
  wait_for_device_work(src);
  wait_for_device_work(*this);
  const bool dst_host = host_accessible(*this, ds), src_host = host_accessible(src, ss);
  const auto stores =
      streaming ? kernels::store_policy::streaming : kernels::store_policy::automatic;
  if (dst_host && src_host) {
    src.buffers->wait_pending();
    buffers->wait_pending();
    move_elements(array(ds), true, src.array(ss), true, 0, nullptr, nullptr, true, stores);
    return;
  }
  // The work runs on one stream; what is queued on the other storage's device side must land
  // first (it may still be writing the source, or reading the destination), and so must the
  // work the library left queued on either buffer set: an async copy of one dtype touches the
  // memory only on the stream, which waits for it on the device; every other copy may touch
  // host memory from the host (staging for a dtype conversion), so the host waits.
  const uint64_t on = stream != 0 ? stream : (!src_host ? src.stream : this->stream);
  const storage& dev = !dst_host ? *this : src;
  device::backend& be = *dev.buffers->backend;
  if (!wait && type == src.type) {
    src.buffers->order_after_pending(be, on);
    buffers->order_after_pending(be, on);
  } else {
    src.buffers->wait_pending();
    buffers->wait_pending();
  }
  if (!src_host && src.stream != on) src.buffers->backend->synchronize(src.stream);
  if (!dst_host && this->stream != on) buffers->backend->synchronize(this->stream);
  const bool queued = move_elements(array(ds), dst_host, src.array(ss), src_host, on, &be,
                                    &dev.buffers->transfers, wait, stores);
  // Left queued: both memories are in use until the copy lands, whoever is released or
  // touched next (F6 of issue 23: the release of an async copy's destination freed host
  // memory the copy still wrote).
  if (queued) {
    const int device_id = dev.buffers->device.device_id;
    src.buffers->queued_on(be, device_id, on);
    if (buffers != src.buffers) buffers->queued_on(be, device_id, on);
  }
}

void storage::copy_to_host(const strided_array& dst) const {
  check_same_shape(ndim, shape.data(), dst.ndim, dst.shape, "dst");
  const side ss = read_side(*this);
  move_elements(dst, true, array(ss), host_accessible(*this, ss), stream, buffers->backend,
                &buffers->transfers);
}

void storage::fill(const void* value) {
  if (value == nullptr) fail_arg("value", "must not be NULL");
  const side ds = prepare_write(*this, "handle");
  const strided_array a = array(ds);
  // Unified memory is filled on the device, where it lives; any other memory the host reaches
  // (a host side, also the wrapped host side of a pair whose device side is unified) on the host.
  if (host_accessible(*this, ds) && buffers->get(ds).kind != device::memory_kind::unified) {
    kernels::fill(a, value);
  } else {
    device::backend& be = *buffers->backend;
    device::enqueue_or_drain(be, stream, [&] { be.fill(a, value, stream); });
    be.synchronize(stream);
  }
  finish_write(*this, ds);
}

}  // namespace gts
