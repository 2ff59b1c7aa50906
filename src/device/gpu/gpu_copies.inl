// Part of the GPU backend (gpu_backend.inl): the work that moves data. Copies are normalized
// first (strided_plan.hpp) and carried out by transfer_engine.hpp through gpu_rt: one memcpy, a
// 2-D memcpy (DMA engine) for padded host<->device transfers, a row kernel when the innermost dim
// agrees, a shared-memory tiled transpose when it does not, and an element-wise kernel for small
// or odd shapes. Host<->device layout changes move dense blocks over the bus and change the
// layout on the device. Copies between two devices are ordered across their streams by events
// (copy_across_devices). Every copy is counted once, in the backend's usage counters.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "common/errors.hpp"
#include "device/backend_tools.hpp"
#include "device/gpu/transfer_engine.hpp"
#include "device/strided_plan.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

// A device temporary: from the library's pool in stream order where the device has pools
// (the free is enqueued behind the work that uses the buffer, so the caller need not wait),
// else cudaMalloc/cudaFree.
class temp_buffer {
 public:
  temp_buffer(gpuMemPool_t pool, std::size_t bytes, gpuStream_t s) : s_(s), pool_(pool) {
    const std::size_t n = bytes == 0 ? 1 : bytes;
    if (pool_ != nullptr) {
      check(gpuMallocFromPoolAsync(&ptr_, n, pool_, s), GTS_GPU_FN(MallocFromPoolAsync));
    } else {
      check(gpuMalloc(&ptr_, n), GTS_GPU_FN(Malloc));
    }
  }
  ~temp_buffer() {
    if (ptr_ == nullptr) return;
    const gpuError_t e = pool_ != nullptr ? gpuFreeAsync(ptr_, s_) : gpuFree(ptr_);
    if (e != gpuSuccess) (void)gpuGetLastError();
  }
  temp_buffer(temp_buffer&& o) noexcept : ptr_(o.ptr_), s_(o.s_), pool_(o.pool_) {
    o.ptr_ = nullptr;
  }
  temp_buffer(const temp_buffer&) = delete;
  temp_buffer& operator=(const temp_buffer&) = delete;
  temp_buffer& operator=(temp_buffer&&) = delete;
  [[nodiscard]] std::byte* get() const { return static_cast<std::byte*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  gpuStream_t s_;
  gpuMemPool_t pool_ = nullptr;
};

// The stream work for device @p dev (current, by the caller's guard) runs on, for the caller's
// stream handle: the handle itself, unless it is a stream of another device. Then the device's
// internal stream waits for what the caller queued on its stream, and join_back() makes the

// The runtime policy of transfer_engine.hpp: one device (current, by the caller's guard) and
// one stream.
class gpu_rt {
 public:
  gpu_rt(gpu_devices& devices, gpu_pools& pools, int dev, gpuStream_t s, uint64_t handle)
      : pools_(pools),
        dev_(dev),
        s_(s),
        handle_(handle),
        sms_(devices.info(dev).sms),
        max_pitch_(devices.info(dev).max_pitch),
        pool_(pools.staging_pool(dev)) {}
  void memcpy(void* dst, const void* src, std::size_t bytes) {
    check_stream_call(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, s_),
                      GTS_GPU_FN(MemcpyAsync), handle_);
  }
  // Pitches beyond the copy engine's limit are refused before the call (the caller stages);
  // every error of the call itself is a real error.
  bool memcpy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                 std::size_t width, std::size_t height) {
    if (dpitch > max_pitch_ || spitch > max_pitch_) return false;
    check_stream_call(
        gpuMemcpy2DAsync(dst, dpitch, src, spitch, width, height, gpuMemcpyDefault, s_),
        GTS_GPU_FN(Memcpy2DAsync), handle_);
    return true;
  }
  void memset(void* dst, unsigned char value, std::size_t bytes) {
    check_stream_call(gpuMemsetAsync(dst, value, bytes, s_), GTS_GPU_FN(MemsetAsync), handle_);
  }
  void wait() {
    check_stream_call(gpuStreamSynchronize(s_), GTS_GPU_FN(StreamSynchronize), handle_);
  }
  // Out of device memory: what the staging pool keeps goes back to the device, then once more.
  temp_buffer device_temp(std::size_t bytes) {
    try {
      return temp_buffer(pool_, bytes, s_);
    } catch (const error& e) {
      if (e.kind() != error_kind::out_of_memory || !pools_.release_staging(dev_)) throw;
    }
    return temp_buffer(pool_, bytes, s_);
  }
  void launch_copy(const copy_plan& p) { GTS_GPU_NS::launch_copy(p, s_, sms_); }
  void launch_fill(const fill_plan& p) { GTS_GPU_NS::launch_fill(p, s_, sms_); }
  [[nodiscard]] gpuStream_t stream() const { return s_; }

 private:
  gpu_pools& pools_;
  int dev_;
  gpuStream_t s_;
  uint64_t handle_;
  int sms_;
  std::size_t max_pitch_;
  gpuMemPool_t pool_;
};

class gpu_copies {
 public:
  gpu_copies(backend& owner, gpu_devices& devices, gpu_pools& pools, gpu_memory& memory,
             gpu_streams& streams, usage_counters& usage)
      : owner_(owner),
        devices_(devices),
        pools_(pools),
        memory_(memory),
        streams_(streams),
        usage_(usage) {}

  void copy(void* dst, const void* src, std::size_t bytes, direction dir, uint64_t stream) {
    devices_.require();
    if (bytes == 0) return;
    if (dst == nullptr || src == nullptr) fail_arg(dst ? "src" : "dst", "is NULL");
    const int dev = memory_.device_of(dir == direction::device_to_host ? src : dst);
    if (dir == direction::device_to_device && memory_.device_of(src) != dev) {
      // Ordered after what the producer queued on the source device (see copy_across_devices).
      copy_across_devices(bytes_array(dst, bytes), bytes_array(const_cast<void*>(src), bytes), dev,
                          stream);
    } else {
      device_guard g(dev);
      bound_stream s(streams_, dev, stream);
      check_stream_call(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, s.get()),
                        GTS_GPU_FN(MemcpyAsync), stream);
      s.join_back();
    }
    usage_.note_transfer(dir, bytes);
  }

  void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                    uint64_t stream) {
    devices_.require();
    detail::check_same_shape(dst, src, "copy_strided");
    if (dst.size() == 0) return;
    if (dst.data == nullptr || src.data == nullptr) fail_arg(dst.data ? "src" : "dst", "is NULL");
    const int dev = memory_.device_of(dir == direction::device_to_host ? src.data : dst.data);
    if (dir == direction::device_to_device && memory_.device_of(src.data) != dev) {
      copy_across_devices(dst, src, dev, stream);
    } else {
      device_guard g(dev);
      bound_stream s(streams_, dev, stream);
      gpu_rt rt(devices_, pools_, dev, s.get(), stream);
      detail::engine_copy(rt, dst, src, dir);
      s.join_back();
    }
    usage_.note_transfer(dir, static_cast<std::size_t>(dst.size() * dst.type.itemsize));
  }

  void fill(const strided_array& dst, const void* value, uint64_t stream) {
    devices_.require();
    if (dst.size() == 0) return;
    if (dst.data == nullptr) fail_arg("dst", "is NULL");
    if (value == nullptr) fail_arg("value", "is NULL");
    const int dev = memory_.device_of(dst.data);
    device_guard g(dev);
    bound_stream s(streams_, dev, stream);
    gpu_rt rt(devices_, pools_, dev, s.get(), stream);
    detail::engine_fill(rt, dst, value);
    s.join_back();
  }

  void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) {
    devices_.require();
    const int target = device_id < 0 ? -1 : owner_.checked_device(device_id);
    if (bytes == 0) return;
    const pointer_info pi = memory_.query_pointer(ptr);
    if (pi.owned && pi.space != pointer_space::unified) {
      fail(error_kind::invalid_argument,
           "prefetch: " + hex(ptr) + " is not unified memory (allocated as " +
               (pi.space == pointer_space::device ? "device" : "pinned host") + " memory)");
    }
    const int dev = target >= 0 ? target : (pi.device_id >= 0 ? pi.device_id : devices_.current());
    // Without concurrent managed access (e.g. Windows, some older GPUs) the runtime migrates
    // on kernel launch and synchronize; prefetching there is an error, not a hint.
    if (dev >= devices_.known_count() || !devices_.info(dev).concurrent_managed) return;
    device_guard g(dev);
    check_stream_call(gpu_prefetch(ptr, bytes, target, to_stream(stream)),
                      GTS_GPU_FN(MemPrefetchAsync), stream);
  }

  // (Two kinds may share a code: the emulated device reports unified and pinned memory as host

 private:
  // Device -> other device: pack the source on its own device (if it has gaps), bring its dense
  // span to the destination device, change the layout there (one peer memcpy straight into the
  // destination when the layouts agree). Ordered without blocking the host: the source side runs
  // on the caller's stream as seen from the source device (a default-stream handle: that
  // device's default stream, where its producer queued), the destination side waits for it
  // through an event, and the source side waits for the peer copy to have read the source
  // before anything later may overwrite it.
  void copy_across_devices(const strided_array& dst, const strided_array& src, int ddev,
                           uint64_t handle) {
    const int sdev = memory_.device_of(src.data);
    device_guard on_source(sdev);
    bound_stream src_stream(streams_, sdev, handle);
    gpu_rt src_rt(devices_, pools_, sdev, src_stream.get(), handle);
    strided_array moved = src;
    std::unique_ptr<temp_buffer> packed;
    if (!detail::is_dense(src)) {
      // Ordinary device memory, not the staging pool's: the destination device reads it, and
      // pool memory is accessible from other devices only after cudaMemPoolSetAccess.
      packed = std::make_unique<temp_buffer>(
          nullptr, static_cast<std::size_t>(src.size() * src.type.itemsize), src_stream.get());
      moved = detail::compact_like(src, packed->get());
      src_rt.launch_copy(detail::plan_copy(moved, src));
    }
    gpuEvent_t source_ready = record_join(src_stream.get());
    {
      device_guard on_destination(ddev);
      std::unique_ptr<bound_stream> bound;
      try {
        bound = std::make_unique<bound_stream>(streams_, ddev, handle);
      } catch (...) {
        (void)gpuEventDestroy(source_ready);
        throw;
      }
      bound_stream& dst_stream = *bound;
      const gpuError_t w = gpuStreamWaitEvent(dst_stream.get(), source_ready, 0);
      (void)gpuEventDestroy(source_ready);
      check(w, GTS_GPU_FN(StreamWaitEvent));
      // A failure below may leave work queued on the destination stream that reads the source
      // side (the packed copy, or the source storage itself) without the source stream waiting
      // for it: that work must be done before the packed copy is freed and before the error
      // lets the caller free or overwrite the source.
      const drain_on_error drain(dst_stream.get());
      gpu_rt rt(devices_, pools_, ddev, dst_stream.get(), handle);
      const detail::copy_plan direct = detail::plan_copy(dst, moved);
      if (direct.is_memcpy()) {
        rt.memcpy(direct.dst, direct.src, static_cast<std::size_t>(direct.count) * direct.unit);
      } else {
        const detail::byte_span sp = detail::span_of(moved);
        auto tmp = rt.device_temp(static_cast<std::size_t>(sp.bytes()));
        rt.memcpy(tmp.get(), moved.data + sp.lo, static_cast<std::size_t>(sp.bytes()));
        strided_array on_dev = moved;
        on_dev.data = tmp.get() - sp.lo;
        rt.launch_copy(detail::plan_copy(dst, on_dev));
      }
      gpuEvent_t source_read = record_join(dst_stream.get());
      dst_stream.join_back();
      device_guard back(sdev);
      const gpuError_t r = gpuStreamWaitEvent(src_stream.get(), source_read, 0);
      (void)gpuEventDestroy(source_read);
      check(r, GTS_GPU_FN(StreamWaitEvent));
    }
    packed.reset();  // cudaFree: after the peer copy read it (it waits for the device)
    src_stream.join_back();
  }

  backend& owner_;
  gpu_devices& devices_;
  gpu_pools& pools_;
  gpu_memory& memory_;
  gpu_streams& streams_;
  usage_counters& usage_;
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
