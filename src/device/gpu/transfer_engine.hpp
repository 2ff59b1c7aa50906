// How the CUDA/HIP backends carry out a strided copy or a fill, independent of the runtime:
// which memcpy, 2-D memcpy, staging buffers and kernels are used, in which order. The runtime
// is a template parameter: the backends pass their runtime (gpu_backend.inl's gpu_rt), and
// tests/cpp/device/test_transfer_engine.cpp a recording host runtime that checks each
// choice and the order of the waits.
//
// Rt must provide (all work enqueued on one stream, in order):
//   void memcpy(void* dst, const void* src, std::size_t bytes);
//   bool memcpy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
//                  std::size_t width, std::size_t height);  // false: pitch unsupported,
//                                                            // nothing enqueued
//   void memset(void* dst, unsigned char value, std::size_t bytes);
//   void wait();                               // until the stream's work is complete
//   temp device_temp(std::size_t bytes);       // RAII device buffer, temp.get() -> std::byte*,
//                                              // freed in stream order
//   void launch_copy(const detail::copy_plan&);
//   void launch_fill(const detail::fill_plan&);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "device/device_backend.hpp"
#include "device/strided_plan.hpp"
#include "kernels/kernels.hpp"

namespace gts::device::detail {

/// At most this many 2-D memcpy calls for one transfer; beyond, staging is cheaper.
inline constexpr int64_t max_2d_calls = 64;

/// Padded host<->device transfers: a 2-D memcpy over the two innermost dims (the copy engine
/// strides both sides), one call per outer index. False when the plan does not have that shape.
template <class Rt>
bool copy_as_2d(Rt& rt, const copy_plan& p) {
  const int n = p.ndim;
  if (n < 2 || p.dst_strides[n - 1] != p.unit || p.src_strides[n - 1] != p.unit) return false;
  const int64_t width = p.shape[n - 1] * p.unit;
  const int64_t dp = p.dst_strides[n - 2];
  const int64_t sp = p.src_strides[n - 2];
  if (dp < width || sp < width) return false;
  int64_t outer = 1;
  for (int d = 0; d < n - 2; ++d) outer *= p.shape[d];
  if (outer > max_2d_calls) return false;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t r = o, doff = 0, soff = 0;
    for (int d = n - 3; d >= 0; --d) {
      const int64_t c = r % p.shape[d];
      r /= p.shape[d];
      doff += c * p.dst_strides[d];
      soff += c * p.src_strides[d];
    }
    const bool ok = rt.memcpy_2d(p.dst + doff, static_cast<std::size_t>(dp), p.src + soff,
                                 static_cast<std::size_t>(sp), static_cast<std::size_t>(width),
                                 static_cast<std::size_t>(p.shape[n - 2]));
    // All calls share the pitches, so only the first can be refused (nothing enqueued yet).
    if (!ok) return false;
  }
  return true;
}

/// Host -> device with a layout change: move the source as a dense block (packed on the host
/// in its own order first if it has gaps) and change the layout on the device, where it costs
/// microseconds instead of a host transpose.
template <class Rt>
void upload_staged(Rt& rt, const strided_array& dst, const strided_array& src) {
  strided_array up = src;
  std::unique_ptr<std::byte[]> host_tmp;
  if (!is_dense(src)) {
    rt.wait();  // Host code reads src: queued work may still be writing it.
    host_tmp.reset(new std::byte[static_cast<std::size_t>(src.size() * src.type.itemsize)]);
    up = compact_like(src, host_tmp.get());
    kernels::copy(as_bitwise(up), as_bitwise(src));
  }
  const byte_span sp = span_of(up);
  auto tmp = rt.device_temp(static_cast<std::size_t>(sp.bytes()));
  rt.memcpy(tmp.get(), up.data + sp.lo, static_cast<std::size_t>(sp.bytes()));
  strided_array on_dev = up;
  on_dev.data = tmp.get() - sp.lo;
  rt.launch_copy(plan_copy(dst, on_dev));
  if (host_tmp) rt.wait();  // The host temporary must outlive the transfer reading it.
}

/// Device -> host with a layout change: change the layout on the device into a dense block in
/// the destination's order, move it, and scatter on the host only if dst has gaps.
template <class Rt>
void download_staged(Rt& rt, const strided_array& dst, const strided_array& src) {
  if (is_dense(dst)) {
    const byte_span sp = span_of(dst);
    auto tmp = rt.device_temp(static_cast<std::size_t>(sp.bytes()));
    strided_array on_dev = dst;
    on_dev.data = tmp.get() - sp.lo;
    rt.launch_copy(plan_copy(on_dev, src));
    rt.memcpy(dst.data + sp.lo, tmp.get(), static_cast<std::size_t>(sp.bytes()));
    return;
  }
  const auto bytes = static_cast<std::size_t>(dst.size() * dst.type.itemsize);
  auto tmp = rt.device_temp(bytes);
  const strided_array on_dev = compact_like(dst, tmp.get());
  rt.launch_copy(plan_copy(on_dev, src));
  std::unique_ptr<std::byte[]> host_tmp(new std::byte[bytes]);
  rt.memcpy(host_tmp.get(), tmp.get(), bytes);
  rt.wait();
  strided_array on_host = on_dev;
  on_host.data = host_tmp.get();
  kernels::copy(as_bitwise(dst), as_bitwise(on_host));
}

/// Copies @p src into @p dst (equal shapes and item sizes, checked by the caller; both on the
/// same device for device_to_device).
template <class Rt>
void engine_copy(Rt& rt, const strided_array& dst, const strided_array& src, direction dir) {
  const copy_plan p = plan_copy(dst, src);
  if (p.count == 0) return;
  if (p.is_memcpy()) {
    rt.memcpy(p.dst, p.src, static_cast<std::size_t>(p.count) * p.unit);
  } else if (dir != direction::device_to_device && copy_as_2d(rt, p)) {
    // Done by the copy engine.
  } else if (dir == direction::host_to_device) {
    upload_staged(rt, dst, src);
  } else if (dir == direction::device_to_host) {
    download_staged(rt, dst, src);
  } else {
    rt.launch_copy(p);
  }
}

/// Sets every element of @p dst (device memory) to @p value.
template <class Rt>
void engine_fill(Rt& rt, const strided_array& dst, const void* value) {
  const fill_plan p = plan_fill(dst, value);
  if (p.count == 0) return;
  if (p.is_dense() && p.is_byte_pattern()) {
    rt.memset(p.dst, p.pattern[0], static_cast<std::size_t>(p.count) * p.unit);
  } else {
    rt.launch_fill(p);
  }
}

}  // namespace gts::device::detail
