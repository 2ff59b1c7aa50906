// The emulated CUDA runtime: copies and memsets.
#include "emulated/runtime_internal.hpp"

namespace gts::emulated::impl {

cudaError_t copy_async(const copy_request& c, cudaMemcpyKind kind, cudaStream_t h, bool wait) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (c.width == 0 || c.height == 0) return cudaSuccess;
  if (c.dst == nullptr || c.src == nullptr) return ret(cudaErrorInvalidValue);
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    return ret(cudaErrorInvalidValue);
  }
  stream* st = nullptr;
  cudaError_t async_error = cudaSuccess;
  if (const cudaError_t e = admit_stream(s, h, control::call_class::memcpy, st, &async_error)) {
    return ret(e);
  }
  const std::size_t dspan = c.dpitch * (c.height - 1) + c.width;
  const std::size_t sspan = c.spitch * (c.height - 1) + c.width;
  if (!valid_range(s, c.what, "destination", c.dst, dspan) ||
      !valid_range(s, c.what, "source", c.src, sspan)) {
    return ret(cudaErrorInvalidValue);
  }
  const bool dst_dev = device_side(s, c.dst, dspan), src_dev = device_side(s, c.src, sspan);
  if ((kind == cudaMemcpyHostToDevice && !dst_dev) ||
      (kind == cudaMemcpyDeviceToHost && !src_dev) ||
      (kind == cudaMemcpyDeviceToDevice && (!dst_dev || !src_dev))) {
    return ret(cudaErrorInvalidMemcpyDirection);
  }
  const copy_request r = c;
  op_ptr o = enqueue(s, *st, c.what, [r, dspan, sspan, async_error]() -> cudaError_t {
    runtime_state& rs = state();
    {
      std::lock_guard<std::mutex> g(rs.mu);
      if (async_error != cudaSuccess) return async_error;
      // The memory may have been freed since the copy was queued.
      if (!valid_range(rs, r.what, "destination (when it ran)", r.dst, dspan) ||
          !valid_range(rs, r.what, "source (when it ran)", r.src, sspan)) {
        return cudaErrorIllegalAddress;
      }
      ++(r.height == 1 ? rs.counts.memcpys : rs.counts.memcpy_2d);
    }
    for (std::size_t row = 0; row < r.height; ++row) {
      std::memmove(static_cast<std::byte*>(r.dst) + row * r.dpitch,
                   static_cast<const std::byte*>(r.src) + row * r.spitch, r.width);
    }
    return cudaSuccess;
  });
  // Host-to-host copies are synchronous in CUDA; so are the blocking calls. (The stream may be
  // destroyed while the lock is released: its device is kept first.)
  if (wait || (!dst_dev && !src_dev)) {
    const int device = st->device;
    complete(lk, s, o);
    return ret(after_sync(s, device));
  }
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

cudaError_t memset_async(void* dst, int value, std::size_t bytes, cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (bytes == 0) return cudaSuccess;
  if (dst == nullptr) return ret(cudaErrorInvalidValue);
  stream* st = nullptr;
  cudaError_t async_error = cudaSuccess;
  if (const cudaError_t e = admit_stream(s, h, control::call_class::memset, st, &async_error)) {
    return ret(e);
  }
  if (!valid_range(s, "cudaMemsetAsync", "destination", dst, bytes)) {
    return ret(cudaErrorInvalidValue);
  }
  if (!device_side(s, dst, bytes)) return ret(cudaErrorInvalidValue);  // host memory
  op_ptr o = enqueue(s, *st, "cudaMemsetAsync", [dst, value, bytes, async_error]() -> cudaError_t {
    runtime_state& rs = state();
    {
      std::lock_guard<std::mutex> g(rs.mu);
      if (async_error != cudaSuccess) return async_error;
      if (!valid_range(rs, "cudaMemsetAsync", "destination (when it ran)", dst, bytes)) {
        return cudaErrorIllegalAddress;
      }
      ++rs.counts.memsets;
    }
    std::memset(dst, value, bytes);
    return cudaSuccess;
  });
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

}  // namespace gts::emulated::impl
