// The CUDA/HIP device backend, written once against gpu_runtime.hpp's gpuXxx names and compiled
// by cuda/cuda_backend.cu (nvcc) and hip/hip_backend.hip (hipcc). Not a header: include it once
// per runtime, after defining (or not) GTS_GPU_HIP.
//
// Design notes
// - No driver: the runtime is linked statically (CUDA), so the library loads anyway;
//   cudaGetDeviceCount's error is kept as the text of every no_device error, and nothing else
//   touches the runtime until a device exists.
// - Alignment: cudaMalloc returns 256-byte aligned blocks; larger alignments over-allocate and
//   return an offset pointer. The block's base is kept in a map keyed by the returned pointer,
//   which also answers query_pointer() and which device a pointer lives on.
// - The calling thread's current device is saved and restored around every call (device_guard),
//   so the library never changes a device the application (CuPy, a Fortran driver) relies on.
// - Copies are normalized first (strided_plan.hpp): one memcpy, a 2-D memcpy (DMA engine) for
//   padded host<->device transfers, a row kernel when the innermost dim agrees, a shared-memory
//   tiled transpose when it does not, and an element-wise kernel for small or odd shapes.
//   Host<->device layout changes move dense blocks over the bus and change the layout on the
//   device, where it costs microseconds instead of a threaded host transpose.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "device/backends.hpp"
#include "device/gpu/gpu_kernels.hpp"
#include "device/gpu/gpu_runtime.hpp"
#include "device/gpu/transfer_engine.hpp"
#include "device/strided_plan.hpp"
#include "kernels/kernels.hpp"

namespace gts::device::GTS_GPU_NS {
namespace {

// ------------------------------------------------------------------------------------------------
// Errors

std::string error_text(gpuError_t e) {
  return std::string("'") + gpuGetErrorString(e) + "' (" + gpuGetErrorName(e) + ")";
}

[[noreturn]] void raise_error(gpuError_t e, const std::string& what) {
  (void)gpuGetLastError();  // Clear a non-sticky error so later calls do not report it again.
  error_kind kind = error_kind::device;
  if (e == gpuErrorMemoryAllocation)
    kind = error_kind::out_of_memory;
  else if (e == gpuErrorNoDevice || e == gpuErrorInsufficientDriver)
    kind = error_kind::no_device;
  else if (e == gpuErrorNotSupported)
    kind = error_kind::unsupported;
  fail(kind, std::string(GTS_GPU_NAME) + ": " + what + " failed: " + error_text(e));
}

inline void check(gpuError_t e, const char* fn) {
  if (e != gpuSuccess) raise_error(e, fn);
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

inline gpuStream_t to_stream(uint64_t s) {
  return reinterpret_cast<gpuStream_t>(s);
}

// Makes @p dev current for the lifetime of the guard and restores the caller's device.
class device_guard {
 public:
  explicit device_guard(int dev) {
    if (gpuGetDevice(&prev_) != gpuSuccess) {
      (void)gpuGetLastError();
      prev_ = -1;
    }
    if (prev_ != dev) {
      check(gpuSetDevice(dev), GTS_GPU_FN(SetDevice));
      changed_ = true;
    }
  }
  ~device_guard() {
    if (changed_ && prev_ >= 0 && gpuSetDevice(prev_) != gpuSuccess) (void)gpuGetLastError();
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int prev_ = -1;
  bool changed_ = false;
};

// ------------------------------------------------------------------------------------------------
// Kernels: grid-stride loops over the step functions of gpu_kernels.hpp.

template <class T>
__global__ void __launch_bounds__(row_threads)
    copy_rows_kernel(kdims d, std::byte* dst, const std::byte* src, rows_shape r, int64_t total) {
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    copy_rows_step<T>(d, dst, src, r, b, threadIdx.x);
  }
}

template <class T>
__global__ void __launch_bounds__(row_threads)
    fill_rows_kernel(kdims d, std::byte* dst, T value, rows_shape r, int64_t total) {
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    fill_rows_step<T>(d, dst, value, r, b, threadIdx.x);
  }
}

template <class T>
__global__ void __launch_bounds__(element_threads)
    copy_elements_kernel(kdims d, std::byte* dst, const std::byte* src, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    copy_element<T>(d, dst, src, i);
  }
}

template <class T>
__global__ void __launch_bounds__(element_threads)
    fill_elements_kernel(kdims d, std::byte* dst, T value, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    fill_element<T>(d, dst, value, i);
  }
}

__global__ void __launch_bounds__(element_threads)
    fill_bytes_kernel(kdims d, std::byte* dst, kbytes value, int itemsize, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    fill_bytes_element(d, dst, value, itemsize, i);
  }
}

// Layout change through a shared-memory tile (+1 column against bank conflicts): coalesced
// reads along the source-inner dim, coalesced writes along the destination-inner dim.
template <class T>
__global__ void __launch_bounds__(tile_dim* tile_rows)
    transpose_kernel(kdims d, std::byte* dst, const std::byte* src, int sd, int64_t tiles_d,
                     int64_t tiles_s, int64_t total) {
  __shared__ T buf[tile_dim][tile_dim + 1];
  for (int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    const tile_pos p = transpose_tile(d, sd, tiles_d, tiles_s, t);
    transpose_load<T>(d, src, sd, p, threadIdx.x, threadIdx.y, buf);
    __syncthreads();
    transpose_store<T>(d, dst, sd, p, threadIdx.x, threadIdx.y, buf);
    __syncthreads();
  }
}

// Enough resident blocks to fill every SM several times over; the loops above take the rest.
unsigned grid_for(int64_t work_items, int sms) {
  const int64_t cap = int64_t(sms) * 16;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work_items, cap)));
}

template <class T>
void launch_copy_t(const copy_plan& p, gpuStream_t s, int sms) {
  const launch_choice c = choose_copy(p);
  switch (c.kind) {
    case kernel_kind::rows:
      copy_rows_kernel<T>
          <<<grid_for(c.total, sms), row_threads, 0, s>>>(c.k, p.dst, p.src, c.rows, c.total);
      break;
    case kernel_kind::transpose:
      transpose_kernel<T><<<grid_for(c.total, sms), dim3(tile_dim, tile_rows), 0, s>>>(
          c.k, p.dst, p.src, c.sd, c.tiles_d, c.tiles_s, c.total);
      break;
    default:
      copy_elements_kernel<T><<<grid_for((c.total + element_threads - 1) / element_threads, sms),
                                element_threads, 0, s>>>(c.k, p.dst, p.src, c.total);
      break;
  }
  check(gpuGetLastError(), "kernel launch (copy)");
}

void launch_copy(const copy_plan& p, gpuStream_t s, int sms) {
  if (p.count == 0) return;
  switch (p.unit) {
    case 1:
      launch_copy_t<word<1>::type>(p, s, sms);
      break;
    case 2:
      launch_copy_t<word<2>::type>(p, s, sms);
      break;
    case 4:
      launch_copy_t<word<4>::type>(p, s, sms);
      break;
    case 8:
      launch_copy_t<word<8>::type>(p, s, sms);
      break;
    default:
      launch_copy_t<word<16>::type>(p, s, sms);
      break;
  }
}

template <class T>
void launch_fill_t(const fill_plan& p, const launch_choice& c, gpuStream_t s, int sms) {
  T value;
  std::memcpy(&value, p.pattern, sizeof(T));
  if (c.kind == kernel_kind::rows) {
    fill_rows_kernel<T>
        <<<grid_for(c.total, sms), row_threads, 0, s>>>(c.k, p.dst, value, c.rows, c.total);
  } else {
    fill_elements_kernel<T><<<grid_for((c.total + element_threads - 1) / element_threads, sms),
                              element_threads, 0, s>>>(c.k, p.dst, value, c.total);
  }
}

void launch_fill(const fill_plan& p, gpuStream_t s, int sms) {
  if (p.count == 0) return;
  const launch_choice c = choose_fill(p);
  if (c.kind == kernel_kind::bytes) {
    kbytes v{};
    std::memcpy(v.b, p.pattern, sizeof v.b);
    fill_bytes_kernel<<<grid_for((c.total + element_threads - 1) / element_threads, sms),
                        element_threads, 0, s>>>(c.k, p.dst, v, p.itemsize, c.total);
  } else {
    switch (p.unit) {
      case 1:
        launch_fill_t<word<1>::type>(p, c, s, sms);
        break;
      case 2:
        launch_fill_t<word<2>::type>(p, c, s, sms);
        break;
      case 4:
        launch_fill_t<word<4>::type>(p, c, s, sms);
        break;
      case 8:
        launch_fill_t<word<8>::type>(p, c, s, sms);
        break;
      default:
        launch_fill_t<word<16>::type>(p, c, s, sms);
        break;
    }
  }
  check(gpuGetLastError(), "kernel launch (fill)");
}

// ------------------------------------------------------------------------------------------------
// The backend

class gpu_backend final : public backend {
 public:
  const char* name() const override { return GTS_GPU_NAME; }

  int device_count() noexcept override {
    init_count();
    return count_;
  }

  std::string no_device_reason() override {
    init_count();
    return reason_;
  }

  void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                 int device_id) override {
    if (alignment == 0) alignment = 256;
    if ((alignment & (alignment - 1)) != 0) {
      fail_arg("alignment", std::to_string(alignment) + " is not a power of two");
    }
    const int dev = checked_device(device_id);
    const std::size_t want = bytes == 0 ? 1 : bytes;
    // The runtimes align device and managed blocks to 256 bytes and pinned blocks to pages;
    // beyond that, over-allocate and hand out an aligned pointer into the block.
    std::size_t extra = alignment > 256 ? alignment : 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (want > SIZE_MAX - extra) {
        fail(error_kind::overflow, "bytes: " + std::to_string(bytes) + " plus alignment " +
                                       std::to_string(alignment) + " overflows");
      }
      const std::size_t total = want + extra;
      void* base = raw_allocate(total, kind, dev);
      const uintptr_t b = reinterpret_cast<uintptr_t>(base);
      const uintptr_t a = (b + alignment - 1) & ~(uintptr_t(alignment) - 1);
      if (a + want <= b + total) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          allocs_[a] = record{base, bytes, kind, dev};
        }
        note_allocation(kind, static_cast<int64_t>(bytes));
        return reinterpret_cast<void*>(a);
      }
      raw_free(base, kind, dev);  // The runtime gave less alignment than documented.
      extra = alignment;
    }
    fail(error_kind::internal, "allocate: could not align a block to " + std::to_string(alignment));
  }

  void free(void* ptr, memory_kind, int) noexcept override {
    if (ptr == nullptr) return;
    record r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == allocs_.end()) return;
      r = it->second;
      allocs_.erase(it);
    }
    note_allocation(r.kind, -static_cast<int64_t>(r.bytes));
    raw_free(r.base, r.kind, r.device);
  }

  void copy(void* dst, const void* src, std::size_t bytes, direction dir,
            uint64_t stream) override {
    require_devices();
    if (bytes == 0) return;
    if (dst == nullptr || src == nullptr) fail_arg(dst ? "src" : "dst", "is NULL");
    device_guard g(device_of(dir == direction::device_to_host ? src : dst));
    check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, to_stream(stream)),
          GTS_GPU_FN(MemcpyAsync));
    note_transfer(dir, bytes);
  }

  void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                    uint64_t stream) override {
    require_devices();
    detail::check_same_shape(dst, src, "copy_strided");
    if (dst.size() == 0) return;
    if (dst.data == nullptr || src.data == nullptr) fail_arg(dst.data ? "src" : "dst", "is NULL");
    const int dev = device_of(dir == direction::device_to_host ? src.data : dst.data);
    device_guard g(dev);
    gpu_rt rt(*this, dev, to_stream(stream));
    if (dir == direction::device_to_device && device_of(src.data) != dev &&
        !detail::plan_copy(dst, src).is_memcpy()) {
      copy_across_devices(rt, dst, src);
    } else {
      detail::engine_copy(rt, dst, src, dir);
    }
    note_transfer(dir, static_cast<std::size_t>(dst.size() * dst.type.itemsize));
  }

  void fill(const strided_array& dst, const void* value, uint64_t stream) override {
    require_devices();
    if (dst.size() == 0) return;
    if (dst.data == nullptr) fail_arg("dst", "is NULL");
    if (value == nullptr) fail_arg("value", "is NULL");
    const int dev = device_of(dst.data);
    device_guard g(dev);
    gpu_rt rt(*this, dev, to_stream(stream));
    detail::engine_fill(rt, dst, value);
  }

  void synchronize(uint64_t stream) override {
    require_devices();
    if (stream != 0) {
      check(gpuStreamSynchronize(to_stream(stream)), GTS_GPU_FN(StreamSynchronize));
      return;
    }
    // The legacy default stream is per device: wait on each device this backend has used.
    for (int d = 0; d < count_; ++d) {
      if (!used(d)) continue;
      device_guard g(d);
      check(gpuStreamSynchronize(nullptr), GTS_GPU_FN(StreamSynchronize));
    }
  }

  void synchronize_device(int device_id) override {
    const int dev = checked_device(device_id);
    device_guard g(dev);
    check(gpuDeviceSynchronize(), GTS_GPU_FN(DeviceSynchronize));
  }

  void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) override {
    require_devices();
    const int target = device_id < 0 ? -1 : checked_device(device_id);
    if (bytes == 0) return;
    const pointer_info pi = query_pointer(ptr);
    if (pi.owned && pi.space != pointer_space::unified) {
      fail(error_kind::invalid_argument,
           "prefetch: " + hex(ptr) + " is not unified memory (allocated as " +
               (pi.space == pointer_space::device ? "device" : "pinned host") + " memory)");
    }
    const int dev = target >= 0 ? target : (pi.device_id >= 0 ? pi.device_id : current_device());
    // Without concurrent managed access (e.g. Windows, some older GPUs) the runtime migrates
    // on kernel launch and synchronize; prefetching there is an error, not a hint.
    if (dev >= count_ || !info(dev).concurrent_managed) return;
    device_guard g(dev);
    check(gpu_prefetch(ptr, bytes, target, to_stream(stream)), GTS_GPU_FN(MemPrefetchAsync));
  }

  int dl_device_type(memory_kind kind) const noexcept override {
    switch (kind) {
      case memory_kind::device:
        return GTS_GPU_DL_DEVICE;
      case memory_kind::unified:
        return GTS_GPU_DL_UNIFIED;
      case memory_kind::pinned_host:
        return GTS_GPU_DL_PINNED;
    }
    return GTS_GPU_DL_DEVICE;
  }

  device_properties properties(int device_id) override {
    const int dev = checked_device(device_id);
    gpuDeviceProp prop{};
    check(gpuGetDeviceProperties(&prop, dev), GTS_GPU_FN(GetDeviceProperties));
    device_properties p;
    p.name = prop.name;
    p.total_memory = prop.totalGlobalMem;
    p.major = prop.major;
    p.minor = prop.minor;
    p.multiprocessors = prop.multiProcessorCount;
    p.concurrent_managed_access = info(dev).concurrent_managed;
    return p;
  }

  pointer_info query_pointer(const void* ptr) noexcept override {
    pointer_info pi;
    if (ptr == nullptr) return pi;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto key = reinterpret_cast<uintptr_t>(ptr);
      auto it = allocs_.upper_bound(key);
      if (it != allocs_.begin()) {
        --it;
        const record& r = it->second;
        if (key < it->first + (r.bytes == 0 ? 1 : r.bytes)) {
          pi.owned = true;
          pi.base = reinterpret_cast<void*>(it->first);
          pi.bytes = r.bytes;
          pi.device_id = r.kind == memory_kind::pinned_host ? -1 : r.device;
          pi.space = r.kind == memory_kind::device    ? pointer_space::device
                     : r.kind == memory_kind::unified ? pointer_space::unified
                                                      : pointer_space::pinned_host;
          return pi;
        }
      }
    }
    if (device_count() == 0) return pi;
    gpuPointerAttributes attr{};
    if (gpuPointerGetAttributes(&attr, ptr) != gpuSuccess) {
      (void)gpuGetLastError();  // Unregistered host memory on older runtimes.
      return pi;
    }
    switch (gpu_pointer_space(attr)) {
      case gpu_space::device:
        pi.space = pointer_space::device;
        pi.device_id = attr.device;
        break;
      case gpu_space::unified:
        pi.space = pointer_space::unified;
        pi.device_id = attr.device;
        break;
      case gpu_space::pinned:
        pi.space = pointer_space::pinned_host;
        break;
      case gpu_space::host:
        break;
    }
    return pi;
  }

  uint64_t create_stream(int device_id) override {
    const int dev = checked_device(device_id);
    device_guard g(dev);
    gpuStream_t s = nullptr;
    check(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), GTS_GPU_FN(StreamCreateWithFlags));
    mark_used(dev);
    std::lock_guard<std::mutex> lock(mu_);
    streams_.insert(reinterpret_cast<uint64_t>(s));
    return reinterpret_cast<uint64_t>(s);
  }

  void destroy_stream(uint64_t stream) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (streams_.erase(stream) == 0) return;  // 0, foreign or already destroyed.
    }
    if (gpuStreamDestroy(to_stream(stream)) != gpuSuccess) (void)gpuGetLastError();
  }

  uint64_t create_event(int device_id) override {
    const int dev = checked_device(device_id);
    device_guard g(dev);
    gpuEvent_t e = nullptr;
    check(gpuEventCreateWithFlags(&e, gpuEventDefault), GTS_GPU_FN(EventCreateWithFlags));
    std::lock_guard<std::mutex> lock(mu_);
    events_.insert(reinterpret_cast<uint64_t>(e));
    return reinterpret_cast<uint64_t>(e);
  }

  void destroy_event(uint64_t event) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (events_.erase(event) == 0) return;
    }
    if (gpuEventDestroy(to_event(event)) != gpuSuccess) (void)gpuGetLastError();
  }

  void record_event(uint64_t event, uint64_t stream) override {
    check(gpuEventRecord(live_event(event), to_stream(stream)), GTS_GPU_FN(EventRecord));
  }

  void wait_event(uint64_t stream, uint64_t event) override {
    check(gpuStreamWaitEvent(to_stream(stream), live_event(event), 0), GTS_GPU_FN(StreamWaitEvent));
  }

  void synchronize_event(uint64_t event) override {
    check(gpuEventSynchronize(live_event(event)), GTS_GPU_FN(EventSynchronize));
  }

  bool event_done(uint64_t event) override {
    const gpuError_t e = gpuEventQuery(live_event(event));
    if (e == gpuSuccess) return true;
    if (e == gpuErrorNotReady) {
      (void)gpuGetLastError();
      return false;
    }
    raise_error(e, GTS_GPU_FN(EventQuery));
  }

  float elapsed_ms(uint64_t start, uint64_t end) override {
    float ms = 0.0f;
    check(gpuEventElapsedTime(&ms, live_event(start), live_event(end)),
          GTS_GPU_FN(EventElapsedTime));
    return ms;
  }

 private:
  struct record {
    void* base = nullptr;
    std::size_t bytes = 0;
    memory_kind kind = memory_kind::device;
    int device = 0;
  };
  struct dev_info {
    std::once_flag once;
    int sms = 1;
    bool pools = false;
    bool concurrent_managed = false;
  };

  // A device temporary, stream-ordered where the device has memory pools (the free is then
  // enqueued behind the work that uses the buffer, so the caller need not wait).
  class temp_buffer {
   public:
    temp_buffer(bool pooled, std::size_t bytes, gpuStream_t s) : s_(s), pooled_(pooled) {
      const std::size_t n = bytes == 0 ? 1 : bytes;
      if (pooled_) {
        check(gpuMallocAsync(&ptr_, n, s), GTS_GPU_FN(MallocAsync));
      } else {
        check(gpuMalloc(&ptr_, n), GTS_GPU_FN(Malloc));
      }
    }
    ~temp_buffer() {
      if (ptr_ == nullptr) return;
      const gpuError_t e = pooled_ ? gpuFreeAsync(ptr_, s_) : gpuFree(ptr_);
      if (e != gpuSuccess) (void)gpuGetLastError();
    }
    temp_buffer(temp_buffer&& o) noexcept : ptr_(o.ptr_), s_(o.s_), pooled_(o.pooled_) {
      o.ptr_ = nullptr;
    }
    temp_buffer(const temp_buffer&) = delete;
    temp_buffer& operator=(const temp_buffer&) = delete;
    temp_buffer& operator=(temp_buffer&&) = delete;
    [[nodiscard]] std::byte* get() const { return static_cast<std::byte*>(ptr_); }

   private:
    void* ptr_ = nullptr;
    gpuStream_t s_;
    bool pooled_ = false;
  };

  // The runtime policy of transfer_engine.hpp: one device (current, by the caller's guard) and
  // one stream.
  class gpu_rt {
   public:
    gpu_rt(gpu_backend& be, int dev, gpuStream_t s)
        : s_(s), sms_(be.info(dev).sms), pooled_(be.info(dev).pools) {}
    void memcpy(void* dst, const void* src, std::size_t bytes) {
      check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, s_), GTS_GPU_FN(MemcpyAsync));
    }
    bool memcpy_2d(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                   std::size_t width, std::size_t height) {
      const gpuError_t e =
          gpuMemcpy2DAsync(dst, dpitch, src, spitch, width, height, gpuMemcpyDefault, s_);
      if (e == gpuSuccess) return true;
      // Pitches beyond the copy engine's limits: refuse, the caller stages instead.
      if (e == gpuErrorInvalidPitchValue || e == gpuErrorInvalidValue) {
        (void)gpuGetLastError();
        return false;
      }
      raise_error(e, GTS_GPU_FN(Memcpy2DAsync));
    }
    void memset(void* dst, unsigned char value, std::size_t bytes) {
      check(gpuMemsetAsync(dst, value, bytes, s_), GTS_GPU_FN(MemsetAsync));
    }
    void wait() { check(gpuStreamSynchronize(s_), GTS_GPU_FN(StreamSynchronize)); }
    temp_buffer device_temp(std::size_t bytes) { return temp_buffer(pooled_, bytes, s_); }
    void launch_copy(const copy_plan& p) { GTS_GPU_NS::launch_copy(p, s_, sms_); }
    void launch_fill(const fill_plan& p) { GTS_GPU_NS::launch_fill(p, s_, sms_); }
    [[nodiscard]] gpuStream_t stream() const { return s_; }

   private:
    gpuStream_t s_;
    int sms_;
    bool pooled_;
  };

  static gpuEvent_t to_event(uint64_t e) { return reinterpret_cast<gpuEvent_t>(e); }

  gpuEvent_t live_event(uint64_t event) {
    require_devices();
    std::lock_guard<std::mutex> lock(mu_);
    if (events_.count(event) == 0) {
      fail_arg("event", hex(reinterpret_cast<void*>(event)) + " is not a live event of the " +
                            GTS_GPU_NAME + " backend");
    }
    return to_event(event);
  }

  void init_count() noexcept {
    try {
      std::call_once(count_once_, [this] {
        int n = 0;
        const gpuError_t e = gpuGetDeviceCount(&n);
        if (e != gpuSuccess) {
          (void)gpuGetLastError();
          count_ = 0;
          reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + GTS_GPU_FN(GetDeviceCount) +
                    " returned " + error_text(e);
          return;
        }
        if (n <= 0) {
          count_ = 0;
          reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + GTS_GPU_FN(GetDeviceCount) +
                    " found 0 devices";
          if (const char* v = std::getenv(GTS_GPU_VISIBLE_ENV)) {
            reason_ += std::string(" (" GTS_GPU_VISIBLE_ENV "='") + v + "')";
          }
          return;
        }
        devices_.reset(new dev_info[static_cast<std::size_t>(n)]);
        count_ = n;
      });
    } catch (...) {
      // call_once or a string allocation failed: report no device rather than terminate.
    }
  }

  void require_devices() {
    if (device_count() == 0) fail(error_kind::no_device, no_device_reason());
  }

  dev_info& info(int dev) {
    dev_info& d = devices_[static_cast<std::size_t>(dev)];
    std::call_once(d.once, [&] {
      int v = 0;
      if (gpuDeviceGetAttribute(&v, gpuDevAttrMultiProcessorCount, dev) == gpuSuccess && v > 0) {
        d.sms = v;
      }
      v = 0;
      d.pools =
          gpuDeviceGetAttribute(&v, gpuDevAttrMemoryPoolsSupported, dev) == gpuSuccess && v != 0;
      v = 0;
      d.concurrent_managed =
          gpuDeviceGetAttribute(&v, gpuDevAttrConcurrentManagedAccess, dev) == gpuSuccess && v != 0;
      (void)gpuGetLastError();
    });
    return d;
  }

  bool used(int dev) const {
    return dev < 64 && ((used_mask_.load(std::memory_order_relaxed) >> dev) & 1u) != 0;
  }
  void mark_used(int dev) {
    if (dev < 64) used_mask_.fetch_or(uint64_t(1) << dev, std::memory_order_relaxed);
  }

  // Device that @p p lives on: the allocation record, else the runtime, else the current one.
  int device_of(const void* p) {
    const pointer_info pi = query_pointer(p);
    int dev = pi.device_id;
    if (dev < 0 || dev >= count_) {
      dev = current_device();
      if (dev < 0 || dev >= count_) dev = 0;
    }
    mark_used(dev);
    return dev;
  }

  void* raw_allocate(std::size_t total, memory_kind kind, int dev) {
    device_guard g(dev);
    mark_used(dev);
    void* p = nullptr;
    gpuError_t e = gpuSuccess;
    const char* fn = GTS_GPU_FN(Malloc);
    switch (kind) {
      case memory_kind::device:
        e = gpuMalloc(&p, total);
        break;
      case memory_kind::unified:
        fn = GTS_GPU_FN(MallocManaged);
        e = gpuMallocManaged(&p, total, gpuMemAttachGlobal);
        break;
      case memory_kind::pinned_host:
        fn = GTS_GPU_FN(HostAlloc);
        e = gpuHostAlloc(&p, total, gpuHostAllocPortable);
        break;
    }
    if (e != gpuSuccess) {
      raise_error(e, std::string(fn) + " of " + std::to_string(total) + " bytes on device " +
                         std::to_string(dev));
    }
    return p;
  }

  static void raw_free(void* base, memory_kind kind, int dev) noexcept {
    int prev = -1;
    if (gpuGetDevice(&prev) != gpuSuccess) prev = -1;
    const bool switch_dev = prev != dev && gpuSetDevice(dev) == gpuSuccess;
    const gpuError_t e = kind == memory_kind::pinned_host ? gpuFreeHost(base) : gpuFree(base);
    // Errors here (e.g. the runtime already unloaded at process exit) cannot be reported.
    if (e != gpuSuccess) (void)gpuGetLastError();
    if (switch_dev && prev >= 0 && gpuSetDevice(prev) != gpuSuccess) (void)gpuGetLastError();
  }

  // Device -> other device with a layout change: bring the source's dense span (packed on its
  // own device first if it has gaps) to the destination device (the current one, on rt's
  // stream), then change the layout there.
  void copy_across_devices(gpu_rt& rt, const strided_array& dst, const strided_array& src) {
    const int sdev = device_of(src.data);
    rt.wait();
    strided_array moved = src;
    std::unique_ptr<temp_buffer> packed;
    if (!detail::is_dense(src)) {
      device_guard g(sdev);
      gpu_rt on_src(*this, sdev, nullptr);
      packed = std::make_unique<temp_buffer>(
          on_src.device_temp(static_cast<std::size_t>(src.size() * src.type.itemsize)));
      moved = detail::compact_like(src, packed->get());
      on_src.launch_copy(detail::plan_copy(moved, src));
      on_src.wait();
    }
    const detail::byte_span sp = detail::span_of(moved);
    auto tmp = rt.device_temp(static_cast<std::size_t>(sp.bytes()));
    rt.memcpy(tmp.get(), moved.data + sp.lo, static_cast<std::size_t>(sp.bytes()));
    strided_array on_dev = moved;
    on_dev.data = tmp.get() - sp.lo;
    rt.launch_copy(detail::plan_copy(dst, on_dev));
    if (packed) {
      rt.wait();  // The peer copy reads the packed buffer; free it (on its device) afterwards.
      device_guard g(sdev);
      packed.reset();
    }
  }

  std::once_flag count_once_;
  int count_ = 0;
  std::string reason_;
  std::unique_ptr<dev_info[]> devices_;
  std::atomic<uint64_t> used_mask_{0};
  std::mutex mu_;
  std::map<uintptr_t, record> allocs_;
  std::set<uint64_t> streams_;
  std::set<uint64_t> events_;
};

}  // namespace

}  // namespace gts::device::GTS_GPU_NS
