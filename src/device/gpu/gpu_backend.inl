// The device backend, written once against the gpuXxx names of a runtime's names header and
// compiled three times: by cuda/cuda_backend.cu (nvcc, the CUDA runtime: cuda/cuda_names.hpp),
// hip/hip_backend.hip (hipcc: hip/hip_names.hpp) and emulated/emulated_backend.cpp (the host
// compiler, the emulated CUDA runtime of src/emulated: emulated/emulated_names.hpp). Not a
// header: include it once per runtime, after that runtime's names header, which also supplies
// the few answers only one runtime has (gpu_stream_known_dead, gpu_no_device_reason).
//
// Design notes
// - No driver: the CUDA runtime is linked statically, so the library loads anyway. The first
//   query asks the runtime for devices once; its answer (and, with a driver older than the
//   runtime, both versions) is the text of every no_device / driver_too_old error, and nothing
//   else touches the runtime until a device exists.
// - Device -1 is the calling thread's current device (cudaGetDevice), as in every CUDA library:
//   an MPI rank that called cudaSetDevice(local_rank) gets its storages on that GPU.
// - The calling thread's current device is saved and restored around every call (device_guard),
//   so the library never changes a device the application (CuPy, a Fortran driver) relies on.
// - Streams: work for a device runs on the caller's stream when that stream belongs to the device
//   (or is a default-stream handle, which names the current device's default stream); a stream of
//   another device is joined through an internal stream of the device and two events, because
//   CUDA launches kernels only on streams of the current device.
// - Alignment: cudaMalloc returns 256-byte aligned blocks; larger alignments over-allocate and
//   return an offset pointer. The block's base is kept in a map keyed by the returned pointer,
//   which also answers query_pointer() and which device a pointer lives on.
// - Copies are normalized first (strided_plan.hpp): one memcpy, a 2-D memcpy (DMA engine) for
//   padded host<->device transfers, a row kernel when the innermost dim agrees, a shared-memory
//   tiled transpose when it does not, and an element-wise kernel for small or odd shapes.
//   Host<->device layout changes move dense blocks over the bus and change the layout on the
//   device, where it costs microseconds instead of a threaded host transpose.
// - Staging buffers come from a memory pool the library owns on each device, with a release
//   threshold, so repeated layout-changing syncs reuse one block instead of mapping and unmapping
//   device memory every time (the default pool releases everything at each synchronization).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "device/backends.hpp"
#include "device/gpu/gpu_kernels.hpp"  // (needs the names header: GTS_GPU_NS)
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
  if (e == gpuErrorMemoryAllocation) {
    kind = error_kind::out_of_memory;
  } else if (gpu_unavailable_error(e)) {
    kind = error_kind::no_device;
  } else if (e == gpuErrorNotSupported) {
    kind = error_kind::unsupported;
  }
  std::string text = std::string(GTS_GPU_NAME) + ": " + what + " failed: " + error_text(e);
  if (gpu_sticky_error(e)) {
    text += "; this error is sticky: the device cannot be used again by this process";
  }
  fail(kind, text);
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
#if defined(GTS_GPU_HIP)
  if (s == 1) return nullptr;  // CAI's legacy-stream handle: HIP's null stream (it has no 1)
#endif
  return reinterpret_cast<gpuStream_t>(s);
}

// A 1-D array of @p bytes bytes at @p p (for raw copies that take the strided paths).
strided_array bytes_array(void* p, std::size_t bytes) {
  strided_array a;
  a.data = static_cast<std::byte*>(p);
  a.ndim = 1;
  a.shape[0] = static_cast<int64_t>(bytes);
  a.strides[0] = 1;
  a.type = dtype{'u', 1};
  return a;
}

// 0 (the legacy default stream, as the library spells it), 1 (cudaStreamLegacy) and 2
// (cudaStreamPerThread) name the default stream of whichever device is current.
inline bool default_stream_handle(uint64_t s) {
  return s <= 2;
}

// A call that takes a caller's stream: an invalid handle is the caller's argument error.
inline void check_stream_call(gpuError_t e, const char* fn, uint64_t stream) {
  if (e == gpuSuccess) return;
  if (e == gpuErrorInvalidResourceHandle) {
    (void)gpuGetLastError();
    fail_arg("stream", hex(reinterpret_cast<void*>(stream)) + " is not a live stream of the " +
                           GTS_GPU_NAME + " backend (" + fn + " returned " + error_text(e) + ")");
  }
  raise_error(e, fn);
}

// Whether @p stream is known to name no live stream: only the emulated runtime knows its
// streams (a real one cannot check a handle, and may crash on a dead one).
inline bool runtime_knows_dead(uint64_t stream) noexcept {
  return !default_stream_handle(stream) && gpu_stream_known_dead(to_stream(stream));
}

#if defined(GTS_GPU_RUNTIME_VERSION)
// "12.4" for 12040.
std::string cuda_version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
#endif

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
// reads along the source-inner dim, coalesced writes along the destination-inner dim. The
// second barrier keeps the next tile's loads from overwriting what others still store.
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

unsigned element_grid(int64_t n, int sms) {
  return grid_for((n + element_threads - 1) / element_threads, sms);
}

template <class T>
void launch_copy_t(const copy_plan& p, gpuStream_t s, int sms) {
  const launch_choice c = choose_copy(p);
  gpuError_t e = gpuSuccess;
  switch (c.kind) {
    case kernel_kind::rows:
      e = gpu_launch(copy_rows_kernel<T>, dim3(grid_for(c.total, sms)), dim3(row_threads), s, c.k,
                     p.dst, p.src, c.rows, c.total);
      break;
    case kernel_kind::transpose:
      e = gpu_launch(transpose_kernel<T>, dim3(grid_for(c.total, sms)), dim3(tile_dim, tile_rows),
                     s, c.k, p.dst, p.src, c.sd, c.tiles_d, c.tiles_s, c.total);
      break;
    default:
      e = gpu_launch(copy_elements_kernel<T>, dim3(element_grid(c.total, sms)),
                     dim3(element_threads), s, c.k, p.dst, p.src, c.total);
      break;
  }
  check_stream_call(e, "kernel launch (copy)", reinterpret_cast<uint64_t>(s));
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
gpuError_t launch_fill_t(const fill_plan& p, const launch_choice& c, gpuStream_t s, int sms) {
  T value;
  std::memcpy(&value, p.pattern, sizeof(T));
  if (c.kind == kernel_kind::rows) {
    return gpu_launch(fill_rows_kernel<T>, dim3(grid_for(c.total, sms)), dim3(row_threads), s, c.k,
                      p.dst, value, c.rows, c.total);
  }
  return gpu_launch(fill_elements_kernel<T>, dim3(element_grid(c.total, sms)),
                    dim3(element_threads), s, c.k, p.dst, value, c.total);
}

void launch_fill(const fill_plan& p, gpuStream_t s, int sms) {
  if (p.count == 0) return;
  const launch_choice c = choose_fill(p);
  gpuError_t e = gpuSuccess;
  if (c.kind == kernel_kind::bytes) {
    kbytes v{};
    std::memcpy(v.b, p.pattern, sizeof v.b);
    e = gpu_launch(fill_bytes_kernel, dim3(element_grid(c.total, sms)), dim3(element_threads), s,
                   c.k, p.dst, v, p.itemsize, c.total);
  } else {
    switch (p.unit) {
      case 1:
        e = launch_fill_t<word<1>::type>(p, c, s, sms);
        break;
      case 2:
        e = launch_fill_t<word<2>::type>(p, c, s, sms);
        break;
      case 4:
        e = launch_fill_t<word<4>::type>(p, c, s, sms);
        break;
      case 8:
        e = launch_fill_t<word<8>::type>(p, c, s, sms);
        break;
      default:
        e = launch_fill_t<word<16>::type>(p, c, s, sms);
        break;
    }
  }
  check_stream_call(e, "kernel launch (fill)", reinterpret_cast<uint64_t>(s));
}

// ------------------------------------------------------------------------------------------------
// The backend

constexpr int max_tracked_devices = 64;

class gpu_backend final : public backend {
 public:
  const char* name() const override { return GTS_GPU_NAME; }

  int device_count() noexcept override {
    init();
    return count_.load(std::memory_order_acquire);
  }

  std::string no_device_reason() override {
    init();
    std::lock_guard<std::mutex> lock(init_mu_);
    return reason_;
  }

  error_kind no_device_kind() override {
    init();
    std::lock_guard<std::mutex> lock(init_mu_);
    return reason_kind_;
  }

  /// Probes the runtime again at the next query (the simulated machine was reconfigured).
  void reinitialize() {
    std::lock_guard<std::mutex> lock(init_mu_);
    inited_.store(false, std::memory_order_release);
  }

  int current_device() override {
    require_devices();
    int dev = 0;
    check(gpuGetDevice(&dev), GTS_GPU_FN(GetDevice));
    return dev;
  }

  void set_current_device(int device_id) override {
    const int dev = checked_device(device_id);
    check(gpuSetDevice(dev), GTS_GPU_FN(SetDevice));
  }

  void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                 int device_id) override {
    if (alignment == 0) alignment = 256;
    const bool power_of_two = (alignment & (alignment - 1)) == 0;
    const int dev = checked_device(device_id);
    const std::size_t want = bytes == 0 ? 1 : bytes;
    // The runtimes align device and managed blocks to 256 bytes and pinned blocks to pages;
    // beyond that, over-allocate and hand out an aligned pointer into the block. An alignment
    // that is not a power of two (GT4Py allows 24 bytes for <f8) takes alignment - 1 extra
    // bytes, as GT4Py does, and the offset comes from the address the runtime returned.
    std::size_t extra = !power_of_two ? alignment - 1 : alignment > 256 ? alignment : 0;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (want > SIZE_MAX - extra) {
        fail(error_kind::overflow, "bytes: " + std::to_string(bytes) + " plus alignment " +
                                       std::to_string(alignment) + " overflows");
      }
      const std::size_t total = want + extra;
      void* base = raw_allocate(total, kind, dev);
      const uintptr_t b = reinterpret_cast<uintptr_t>(base);
      const uintptr_t a = power_of_two ? (b + alignment - 1) & ~(uintptr_t(alignment) - 1)
                                       : b + (alignment - b % alignment) % alignment;
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
    if (r.pooled && r.kind == memory_kind::pinned_host) {
      block_cache::block b;
      b.ptr = r.base;
      b.bytes = r.usable;
      b.alignment = pinned_alignment;
      b.device = r.device;
      if (pinned_pool_.put(b)) return;
      pinned_pool_.released(r.usable);
    } else if (r.pooled) {
      // Back to the device's pool behind the work queued on the stream before the release; the
      // block is reused only after that work (stream-ordered reuse).
      int prev = -1;
      if (gpuGetDevice(&prev) != gpuSuccess) prev = -1;
      const bool switch_dev = prev != r.device && gpuSetDevice(r.device) == gpuSuccess;
      if (gpuFreeAsync(r.base, to_stream(r.stream)) != gpuSuccess) {
        (void)gpuGetLastError();
        if (gpuFreeAsync(r.base, nullptr) != gpuSuccess) {  // its stream is gone
          (void)gpuGetLastError();
          (void)gpuDeviceSynchronize();
          (void)gpuFree(r.base);
        }
      }
      (void)gpuGetLastError();
      if (switch_dev && prev >= 0) (void)gpuSetDevice(prev);
      return;
    }
    raw_free(r.base, r.kind, r.device);
  }

  void* allocate_pooled(std::size_t bytes, std::size_t alignment, memory_kind kind, int device_id,
                        uint64_t stream) override {
    if (alignment == 0) alignment = 256;
    const bool power_of_two = (alignment & (alignment - 1)) == 0;
    if (kind == memory_kind::pinned_host && power_of_two && alignment <= pinned_alignment) {
      return allocate_pinned_pooled(bytes, device_id);
    }
    if (kind == memory_kind::device) {
      const int dev = checked_device(device_id);
      // A block larger than the limit is never kept (docs/memory-pools.md), so it does not come
      // from the pool either: released there, the runtime would keep it until the device's next
      // synchronization, above the limit (issue 23, F13).
      const int64_t limit = device_pool_limit();
      if (limit < 0 || bytes <= static_cast<uint64_t>(limit)) {
        if (gpuMemPool_t pool = storage_pool_for(dev)) {
          return allocate_device_pooled(bytes, alignment, power_of_two, dev, pool, stream);
        }
      }
    }
    return allocate(bytes, alignment, kind, device_id);
  }

  pool_counters pool_stats(pool_memory memory) noexcept override {
    try {
      if (memory == pool_memory::pinned_host) return pinned_pool_.counters();
      pool_counters c;
      if (count_.load(std::memory_order_acquire) == 0) return c;
      c.limit_bytes = device_pool_limit();  // per device
      if (c.limit_bytes < 0) {
        gpuDeviceProp prop{};
        c.limit_bytes = gpuGetDeviceProperties(&prop, 0) == gpuSuccess
                            ? static_cast<int64_t>(prop.totalGlobalMem / 4)
                            : 0;
        (void)gpuGetLastError();
      }
      c.held_blocks = -1;  // the runtime does not say
      for (int dev = 0; dev < count_.load(std::memory_order_acquire); ++dev) {
        dev_info& d = info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        uint64_t reserved = 0, used_now = 0, high = 0;
        device_guard g(dev);
        if (gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &reserved) !=
                gpuSuccess ||
            gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrUsedMemCurrent, &used_now) !=
                gpuSuccess ||
            gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemHigh, &high) !=
                gpuSuccess) {
          (void)gpuGetLastError();
          continue;
        }
        c.held_bytes += static_cast<int64_t>(reserved - std::min(reserved, used_now));
        c.in_use_bytes += static_cast<int64_t>(used_now);
        c.high_water_bytes += static_cast<int64_t>(high);
        c.hits += d.pool_hits;
        c.misses += d.pool_misses;
        c.evictions += d.pool_evictions;
      }
      return c;
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
    return {};
  }

  int64_t pool_trim(pool_memory memory, int64_t keep_bytes) noexcept override {
    try {
      if (memory == pool_memory::pinned_host) return pinned_pool_.trim(keep_bytes);
      int64_t freed = 0;
      for (int dev = 0; dev < count_.load(std::memory_order_acquire); ++dev) {
        dev_info& d = info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        // The runtime releases only blocks whose stream-ordered free it has seen complete on
        // the host: a storage released just before (its cudaFreeAsync still queued, or run but
        // not yet observed) would stay reserved. A trim is rare and explicit: wait first.
        (void)gpuDeviceSynchronize();
        uint64_t before = 0, after = 0;
        (void)gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &before);
        (void)gpuMemPoolTrimTo(d.storage_pool, static_cast<std::size_t>(keep_bytes));
        (void)gpuMemPoolGetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemCurrent, &after);
        (void)gpuGetLastError();
        if (before > after) {
          freed += static_cast<int64_t>(before - after);
          d.pool_evictions += 1;
        }
      }
      return freed;
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
    return 0;
  }

  void pool_set_limit(pool_memory memory, int64_t limit_bytes) noexcept override {
    try {
      if (memory == pool_memory::pinned_host) {
        pinned_pool_.set_limit(limit_bytes);
        return;
      }
      device_limit_.store(limit_bytes, std::memory_order_relaxed);
      for (int dev = 0; dev < count_.load(std::memory_order_acquire); ++dev) {
        dev_info& d = info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        uint64_t keep = static_cast<uint64_t>(limit_bytes);
        (void)gpuMemPoolSetAttribute(d.storage_pool, gpuMemPoolAttrReleaseThreshold, &keep);
        (void)gpuDeviceSynchronize();  // as in pool_trim: queued frees become releasable
        (void)gpuMemPoolTrimTo(d.storage_pool, static_cast<std::size_t>(limit_bytes));
        (void)gpuGetLastError();
      }
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
  }

  void pool_reset_counters() noexcept override {
    try {
      pinned_pool_.reset_counters();
      for (int dev = 0; dev < count_.load(std::memory_order_acquire); ++dev) {
        dev_info& d = info(dev);
        std::lock_guard<std::mutex> lock(d.mu);
        d.pool_hits = d.pool_misses = d.pool_evictions = 0;
        if (d.storage_pool == nullptr) continue;
        device_guard g(dev);
        uint64_t zero = 0;
        (void)gpuMemPoolSetAttribute(d.storage_pool, gpuMemPoolAttrReservedMemHigh, &zero);
        (void)gpuGetLastError();
      }
    } catch (...) {
      // A runtime call failed in a way check() reports: the counters stay as they were.
    }
  }

  void copy(void* dst, const void* src, std::size_t bytes, direction dir,
            uint64_t stream) override {
    require_devices();
    if (bytes == 0) return;
    if (dst == nullptr || src == nullptr) fail_arg(dst ? "src" : "dst", "is NULL");
    const int dev = device_of(dir == direction::device_to_host ? src : dst);
    if (dir == direction::device_to_device && device_of(src) != dev) {
      // Ordered after what the producer queued on the source device (see copy_across_devices).
      copy_across_devices(bytes_array(dst, bytes), bytes_array(const_cast<void*>(src), bytes), dev,
                          stream);
    } else {
      device_guard g(dev);
      bound_stream s(*this, dev, stream);
      check_stream_call(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, s.get()),
                        GTS_GPU_FN(MemcpyAsync), stream);
      s.join_back();
    }
    note_transfer(dir, bytes);
  }

  void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                    uint64_t stream) override {
    require_devices();
    detail::check_same_shape(dst, src, "copy_strided");
    if (dst.size() == 0) return;
    if (dst.data == nullptr || src.data == nullptr) fail_arg(dst.data ? "src" : "dst", "is NULL");
    const int dev = device_of(dir == direction::device_to_host ? src.data : dst.data);
    if (dir == direction::device_to_device && device_of(src.data) != dev) {
      copy_across_devices(dst, src, dev, stream);
    } else {
      device_guard g(dev);
      bound_stream s(*this, dev, stream);
      gpu_rt rt(*this, dev, s.get(), stream);
      detail::engine_copy(rt, dst, src, dir);
      s.join_back();
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
    bound_stream s(*this, dev, stream);
    gpu_rt rt(*this, dev, s.get(), stream);
    detail::engine_fill(rt, dst, value);
    s.join_back();
  }

  bool stream_known_dead(uint64_t stream) const noexcept override {
    return runtime_knows_dead(stream);
  }

  void synchronize(uint64_t stream) override {
    require_devices();
    if (!default_stream_handle(stream)) {
      check_stream_call(gpuStreamSynchronize(to_stream(stream)), GTS_GPU_FN(StreamSynchronize),
                        stream);
      check_joined_devices(stream);
      return;
    }
    // A default stream is per device: wait on the calling thread's current device (where a
    // producer handing over a buffer with stream 1 or 2 queued its work) and on each device this
    // backend has used.
    mark_used(current_device());
    const int n = count_.load(std::memory_order_acquire);
    std::exception_ptr first;
    for (int d = 0; d < n; ++d) {
      if (!used(d)) continue;
      try {
        device_guard g(d);
        check(gpuStreamSynchronize(to_stream(stream)), GTS_GPU_FN(StreamSynchronize));
      } catch (...) {
        // The other devices are still waited for: a caller frees its buffers once this
        // returns or throws, and their queued work may write them (a failed device runs
        // nothing more). The first failure is reported afterwards.
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
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
    if (dev >= count_.load(std::memory_order_acquire) || !info(dev).concurrent_managed) return;
    device_guard g(dev);
    check_stream_call(gpu_prefetch(ptr, bytes, target, to_stream(stream)),
                      GTS_GPU_FN(MemPrefetchAsync), stream);
  }

  // (Two kinds may share a code: the emulated device reports unified and pinned memory as host
  // memory.)
  int dl_device_type(memory_kind kind) const noexcept override {
    if (kind == memory_kind::unified) return GTS_GPU_DL_UNIFIED;
    if (kind == memory_kind::pinned_host) return GTS_GPU_DL_PINNED;
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
          pi.device_id = r.device;
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
        mark_used(attr.device);  // waits on default streams include it from now on
        break;
      case gpu_space::unified:
        pi.space = pointer_space::unified;
        pi.device_id = attr.device;
        mark_used(attr.device);
        break;
      case gpu_space::pinned:
        pi.space = pointer_space::pinned_host;
        pi.device_id = attr.device;  // the device current when it was allocated
        break;
      case gpu_space::host:
        break;
    }
    return pi;
  }

  bool allocation_range(const void* ptr, const void** base, std::size_t* bytes) noexcept override {
    if (ptr == nullptr) return false;
    const pointer_info pi = query_pointer(ptr);
    if (pi.owned) {
      *base = pi.base;
      *bytes = pi.bytes;
      return true;
    }
    if (pi.space == pointer_space::host) return false;  // no runtime range for host memory
    void* b = nullptr;
    std::size_t n = 0;
    if (gpu_address_range(ptr, &b, &n) != gpuSuccess) {
      (void)gpuGetLastError();
      return false;
    }
    *base = b;
    *bytes = n;
    return true;
  }

  uint64_t create_stream(int device_id) override {
    const int dev = checked_device(device_id);
    device_guard g(dev);
    gpuStream_t s = nullptr;
    check(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking), GTS_GPU_FN(StreamCreateWithFlags));
    mark_used(dev);
    std::lock_guard<std::mutex> lock(mu_);
    streams_[reinterpret_cast<uint64_t>(s)] = dev;
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
    events_[reinterpret_cast<uint64_t>(e)] = dev;
    return reinterpret_cast<uint64_t>(e);
  }

  void destroy_event(uint64_t event) noexcept override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (events_.erase(event) == 0) return;
    }
    if (gpuEventDestroy(to_event(event)) != gpuSuccess) (void)gpuGetLastError();
  }

  // An event is recorded with its own device current (a default-stream handle then names that
  // device's default stream); a stream of another device cannot record it, in CUDA's rules.
  void record_event(uint64_t event, uint64_t stream) override {
    const int edev = event_device(event);
    const int sdev = stream_device(stream);
    if (sdev >= 0 && sdev != edev) {
      fail_arg("stream", hex(reinterpret_cast<void*>(stream)) + " belongs to device " +
                             std::to_string(sdev) + ", the event to device " +
                             std::to_string(edev) +
                             "; an event can only be recorded on a stream of its own device");
    }
    device_guard g(edev);
    check_stream_call(gpuEventRecord(to_event(event), to_stream(stream)), GTS_GPU_FN(EventRecord),
                      stream);
  }

  // The stream's device is made current (for a default-stream handle: the event's device).
  void wait_event(uint64_t stream, uint64_t event) override {
    const int edev = event_device(event);
    const int sdev = stream_device(stream);
    device_guard g(sdev >= 0 ? sdev : edev);
    check_stream_call(gpuStreamWaitEvent(to_stream(stream), to_event(event), 0),
                      GTS_GPU_FN(StreamWaitEvent), stream);
  }

  void synchronize_event(uint64_t event) override {
    event_device(event);
    check(gpuEventSynchronize(to_event(event)), GTS_GPU_FN(EventSynchronize));
  }

  bool event_done(uint64_t event) override {
    event_device(event);
    const gpuError_t e = gpuEventQuery(to_event(event));
    if (e == gpuSuccess) return true;
    if (e == gpuErrorNotReady) {
      (void)gpuGetLastError();
      return false;
    }
    raise_error(e, GTS_GPU_FN(EventQuery));
  }

  float elapsed_ms(uint64_t start, uint64_t end) override {
    event_device(start);
    event_device(end);
    float ms = 0.0f;
    check(gpuEventElapsedTime(&ms, to_event(start), to_event(end)), GTS_GPU_FN(EventElapsedTime));
    return ms;
  }

 private:
  struct record {
    void* base = nullptr;
    std::size_t bytes = 0;
    memory_kind kind = memory_kind::device;
    int device = 0;
    bool pooled = false;     // pinned: back to pinned_pool_; device: cudaFreeAsync into its pool
    std::size_t usable = 0;  // pinned pooled: bytes of the block at base
    uint64_t stream = 0;     // device pooled: the stream the block is freed on
  };
  struct dev_info {
    int sms = 1;
    bool pools = false;
    bool concurrent_managed = false;
    std::size_t max_pitch = 0;
    // Created on first use (a pool or stream initializes the device's context, which a rank
    // that uses one GPU of a node must not pay on the others).
    std::mutex mu;
    bool pool_tried = false;
    gpuMemPool_t pool = nullptr;
    // The pool of storages' device memory (allocate_pooled), created on first use.
    bool storage_pool_tried = false;
    gpuMemPool_t storage_pool = nullptr;
    int64_t pool_hits = 0, pool_misses = 0, pool_evictions = 0;
    int64_t pool_high_base = 0;  // reserved bytes at the last counter reset
    gpuStream_t helper = nullptr;
  };

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
  // caller's stream wait for the work queued here.
  class bound_stream {
   public:
    bound_stream(gpu_backend& be, int dev, uint64_t handle) : handle_(handle) {
      const int sdev = be.stream_device(handle);
      if (sdev < 0 || sdev == dev) {
        s_ = to_stream(handle);
        return;
      }
      other_ = sdev;
      s_ = be.helper_stream(dev);
      be.joined_mask_.fetch_or(uint64_t(1) << dev, std::memory_order_relaxed);
      gpuEvent_t queued = nullptr;
      {
        device_guard g(sdev);
        check(gpuEventCreateWithFlags(&queued, gpuEventDisableTiming),
              GTS_GPU_FN(EventCreateWithFlags));
        const gpuError_t e = gpuEventRecord(queued, to_stream(handle));
        if (e != gpuSuccess) (void)gpuEventDestroy(queued);
        check_stream_call(e, GTS_GPU_FN(EventRecord), handle);
      }
      const gpuError_t e = gpuStreamWaitEvent(s_, queued, 0);
      (void)gpuEventDestroy(queued);  // released once the wait no longer needs it
      check(e, GTS_GPU_FN(StreamWaitEvent));
    }
    [[nodiscard]] gpuStream_t get() const { return s_; }
    void join_back() {
      if (other_ < 0) return;
      gpuEvent_t done = nullptr;
      check(gpuEventCreateWithFlags(&done, gpuEventDisableTiming),
            GTS_GPU_FN(EventCreateWithFlags));
      gpuError_t e = gpuEventRecord(done, s_);
      if (e == gpuSuccess) {
        device_guard g(other_);
        e = gpuStreamWaitEvent(to_stream(handle_), done, 0);
      }
      (void)gpuEventDestroy(done);
      check(e, GTS_GPU_FN(StreamWaitEvent));
    }
    bound_stream(const bound_stream&) = delete;
    bound_stream& operator=(const bound_stream&) = delete;

   private:
    uint64_t handle_;
    int other_ = -1;
    gpuStream_t s_ = nullptr;
  };

  // The runtime policy of transfer_engine.hpp: one device (current, by the caller's guard) and
  // one stream.
  class gpu_rt {
   public:
    gpu_rt(gpu_backend& be, int dev, gpuStream_t s, uint64_t handle)
        : be_(be),
          dev_(dev),
          s_(s),
          handle_(handle),
          sms_(be.info(dev).sms),
          max_pitch_(be.info(dev).max_pitch),
          pool_(be.pool_for(dev)) {}
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
        if (e.kind() != error_kind::out_of_memory || !be_.release_staging(dev_)) throw;
      }
      return temp_buffer(pool_, bytes, s_);
    }
    void launch_copy(const copy_plan& p) { GTS_GPU_NS::launch_copy(p, s_, sms_); }
    void launch_fill(const fill_plan& p) { GTS_GPU_NS::launch_fill(p, s_, sms_); }
    [[nodiscard]] gpuStream_t stream() const { return s_; }

   private:
    gpu_backend& be_;
    int dev_;
    gpuStream_t s_;
    uint64_t handle_;
    int sms_;
    std::size_t max_pitch_;
    gpuMemPool_t pool_;
  };

  static gpuEvent_t to_event(uint64_t e) { return reinterpret_cast<gpuEvent_t>(e); }

  // Device of a live event of this backend; invalid_argument for anything else.
  int event_device(uint64_t event) {
    require_devices();
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event);
    if (it == events_.end()) {
      fail_arg("event", hex(reinterpret_cast<void*>(event)) + " is not a live event of the " +
                            GTS_GPU_NAME + " backend");
    }
    return it->second;
  }

  // Device a stream handle belongs to; -1 for default-stream handles (the current device's) and
  // for streams the runtime cannot place.
  int stream_device(uint64_t handle) {
    if (default_stream_handle(handle)) return -1;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = streams_.find(handle);
      if (it != streams_.end()) return it->second;
    }
#if defined(GTS_GPU_HAVE_STREAM_GET_DEVICE)
    int dev = -1;
    if (gpuStreamGetDevice(to_stream(handle), &dev) == gpuSuccess) return dev;
    (void)gpuGetLastError();
#endif
    return -1;
  }

  // Work for a device that was ordered on another device's stream ran on the helper stream of
  // its own device (bound_stream), joined back by an event. Waiting for the caller's stream
  // waited for that work too, but a failure of it is the helper's device's (sticky) error,
  // which the wait on another device need not report: ask those devices, so that a read
  // through such a stream never returns success with data that did not arrive.
  void check_joined_devices(uint64_t stream) {
    const uint64_t joined = joined_mask_.load(std::memory_order_relaxed);
    if (joined == 0) return;
    const int sdev = stream_device(stream);
    for (int d = 0; d < 64; ++d) {
      if (((joined >> d) & 1u) == 0 || d == sdev) continue;
      gpuStream_t helper = nullptr;
      {
        dev_info& di = info(d);
        std::lock_guard<std::mutex> lock(di.mu);
        helper = di.helper;
      }
      if (helper == nullptr) continue;
      device_guard g(d);
      const gpuError_t e = gpuStreamQuery(helper);
      if (e == gpuErrorNotReady) {
        (void)gpuGetLastError();
        continue;
      }
      check(e, GTS_GPU_FN(StreamQuery));
    }
  }

  // The library's own non-blocking stream on @p dev, for work joined to another device's stream.
  gpuStream_t helper_stream(int dev) {
    dev_info& d = info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.helper == nullptr) {
      device_guard g(dev);
      check(gpuStreamCreateWithFlags(&d.helper, gpuStreamNonBlocking),
            GTS_GPU_FN(StreamCreateWithFlags));
    }
    return d.helper;
  }

  // ---- pools of storage memory (allocate_pooled) ----------------------------------------------
  // Pinned blocks come page-aligned from the runtime; pooled requests need at most that.
  static constexpr std::size_t pinned_alignment = 4096;

  static void release_pinned(const block_cache::block& b) noexcept {
    raw_free(b.ptr, memory_kind::pinned_host, b.device);
  }

  void* allocate_pinned_pooled(std::size_t bytes, int device_id) {
    const int dev = checked_device(device_id);
    const std::size_t want = bytes == 0 ? 1 : bytes;
    block_cache::block b;
    void* base = nullptr;
    std::size_t usable = want;
    if (pinned_pool_.counters().limit_bytes > 0 &&
        pinned_pool_.take(want, want, pinned_alignment, dev, b)) {
      base = b.ptr;
      usable = b.bytes;
    } else {
      base = raw_allocate(want, memory_kind::pinned_host, dev);
      pinned_pool_.allocated(want);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      allocs_[reinterpret_cast<uintptr_t>(base)] =
          record{base, bytes, memory_kind::pinned_host, dev, true, usable, 0};
    }
    note_allocation(memory_kind::pinned_host, static_cast<int64_t>(bytes));
    return base;
  }

  void* allocate_device_pooled(std::size_t bytes, std::size_t alignment, bool power_of_two, int dev,
                               gpuMemPool_t pool, uint64_t stream) {
    const std::size_t want = bytes == 0 ? 1 : bytes;
    // Pool blocks are 256-byte aligned like cudaMalloc's; larger or odd alignments over-allocate.
    const std::size_t extra = !power_of_two ? alignment - 1 : alignment > 256 ? alignment : 0;
    if (want > SIZE_MAX - extra) {
      fail(error_kind::overflow, "bytes: " + std::to_string(bytes) + " plus alignment " +
                                     std::to_string(alignment) + " overflows");
    }
    const std::size_t total = want + extra;
    device_guard g(dev);
    mark_used(dev);
    dev_info& d = info(dev);
    void* base = nullptr;
    {
      std::lock_guard<std::mutex> lock(d.mu);
      uint64_t before = 0, after = 0;
      (void)gpuMemPoolGetAttribute(pool, gpuMemPoolAttrReservedMemCurrent, &before);
      gpuError_t e = gpuMallocFromPoolAsync(&base, total, pool, to_stream(stream));
      if (e == gpuErrorMemoryAllocation) {
        // Out of device memory: give back what the pools keep, then try once more.
        (void)gpuGetLastError();
        (void)gpuDeviceSynchronize();
        (void)gpuMemPoolTrimTo(pool, 0);
        (void)gpuGetLastError();
        e = gpuMallocFromPoolAsync(&base, total, pool, to_stream(stream));
      }
      if (e != gpuSuccess) {
        raise_error(e, std::string(GTS_GPU_FN(MallocFromPoolAsync)) + " of " +
                           std::to_string(total) + " bytes on device " + std::to_string(dev));
      }
      (void)gpuMemPoolGetAttribute(pool, gpuMemPoolAttrReservedMemCurrent, &after);
      (void)gpuGetLastError();
      (after > before ? d.pool_misses : d.pool_hits) += 1;
    }
    const uintptr_t b = reinterpret_cast<uintptr_t>(base);
    const uintptr_t a = power_of_two ? (b + alignment - 1) & ~(uintptr_t(alignment) - 1)
                                     : b + (alignment - b % alignment) % alignment;
    {
      std::lock_guard<std::mutex> lock(mu_);
      allocs_[a] = record{base, bytes, memory_kind::device, dev, true, total, stream};
    }
    note_allocation(memory_kind::device, static_cast<int64_t>(bytes));
    return reinterpret_cast<void*>(a);
  }

  // The limit on device memory a storage pool keeps: set by gtstorage_pool_set_limit, else
  // GTSTORAGE_POOL / GTSTORAGE_POOL_LIMIT, else (-1) a quarter of each device's memory.
  int64_t device_pool_limit() noexcept {
    int64_t v = device_limit_.load(std::memory_order_relaxed);
    if (v == -2) {
      v = pool_limit_from_environment(-1);
      int64_t expected = -2;
      device_limit_.compare_exchange_strong(expected, v, std::memory_order_relaxed);
      v = device_limit_.load(std::memory_order_relaxed);
    }
    return v;
  }

  // The pool storages' device memory comes from on @p dev (null: not pooled, because the limit
  // is 0 or the device has no stream-ordered pools).
  gpuMemPool_t storage_pool_for(int dev) {
    const int64_t limit = device_pool_limit();
    if (limit == 0) return nullptr;
    dev_info& d = info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.storage_pool_tried) {
      d.storage_pool_tried = true;
      if (d.pools) {
        device_guard g(dev);
        gpuMemPoolProps props{};
        props.allocType = gpuMemAllocationTypePinned;
        props.location.type = gpuMemLocationTypeDevice;
        props.location.id = dev;
        gpuMemPool_t pool = nullptr;
        if (gpuMemPoolCreate(&pool, &props) == gpuSuccess) {
          gpuDeviceProp prop{};
          const uint64_t total =
              gpuGetDeviceProperties(&prop, dev) == gpuSuccess ? prop.totalGlobalMem : 0;
          uint64_t keep = limit > 0 ? static_cast<uint64_t>(limit) : total / 4;
          if (gpuMemPoolSetAttribute(pool, gpuMemPoolAttrReleaseThreshold, &keep) == gpuSuccess) {
            d.storage_pool = pool;
          }
        }
        (void)gpuGetLastError();
      }
    }
    return d.storage_pool;
  }

  // The library's staging pool on @p dev (null: the device has no pools, use cudaMalloc). Its
  // release threshold keeps freed blocks mapped across synchronizations; raw_allocate trims it
  // when device memory runs out.
  gpuMemPool_t pool_for(int dev) {
    dev_info& d = info(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.pool_tried) {
      d.pool_tried = true;
      if (d.pools) {
        device_guard g(dev);
        gpuMemPoolProps props{};
        props.allocType = gpuMemAllocationTypePinned;
        props.location.type = gpuMemLocationTypeDevice;
        props.location.id = dev;
        gpuMemPool_t pool = nullptr;
        if (gpuMemPoolCreate(&pool, &props) == gpuSuccess) {
          uint64_t keep = staging_keep_bytes(dev);
          if (gpuMemPoolSetAttribute(pool, gpuMemPoolAttrReleaseThreshold, &keep) == gpuSuccess) {
            d.pool = pool;
          }
        }
        (void)gpuGetLastError();
      }
    }
    return d.pool;
  }

  // How much unused staging memory the pool keeps mapped across synchronizations:
  // GTSTORAGE_DEVICE_STAGING_KEEP bytes, by default a sixteenth of the device's memory, at most
  // 1 GiB (the largest layout-changing transfer of a typical field, without holding memory that
  // other libraries of the application may need).
  uint64_t staging_keep_bytes(int dev) {
    if (const char* env = std::getenv("GTSTORAGE_DEVICE_STAGING_KEEP")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0') return v;
    }
    gpuDeviceProp prop{};
    const uint64_t total =
        gpuGetDeviceProperties(&prop, dev) == gpuSuccess ? prop.totalGlobalMem : 0;
    (void)gpuGetLastError();
    return std::min<uint64_t>(total / 16, uint64_t(1) << 30);
  }

  // Asks the runtime (once, or again after reinitialize()) what devices there are.
  void init() noexcept {
    if (inited_.load(std::memory_order_acquire)) return;
    try {
      std::lock_guard<std::mutex> lock(init_mu_);
      if (inited_.load(std::memory_order_relaxed)) return;
      probe();
      inited_.store(true, std::memory_order_release);
    } catch (...) {
      // A string allocation failed: report no device rather than terminate.
    }
  }

  void probe() {
    reason_.clear();
    reason_kind_ = error_kind::no_device;
    int n = 0;
    const gpuError_t e = gpuGetDeviceCount(&n);
    if (e != gpuSuccess || n <= 0) {
      (void)gpuGetLastError();
      count_.store(0, std::memory_order_release);
      reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + GTS_GPU_FN(GetDeviceCount) +
                (e != gpuSuccess ? " returned " + error_text(e) : std::string(" found 0 devices"));
#if defined(GTS_GPU_RUNTIME_VERSION)
      int driver = 0;
      if (gpuDriverGetVersion(&driver) != gpuSuccess) driver = 0;
      (void)gpuGetLastError();
      const int built = GTS_GPU_RUNTIME_VERSION;
      if (e == gpuErrorInsufficientDriver && driver > 0 && driver < built) {
        // A GPU is probably there, and the fix is known: say so, with both versions.
        reason_kind_ = error_kind::driver_too_old;
        reason_ = std::string("no usable ") + GTS_GPU_LABEL + " device: the driver supports CUDA " +
                  cuda_version_text(driver) + ", but this gtstorage was built with CUDA " +
                  cuda_version_text(built) + ", which needs a driver for CUDA " +
                  cuda_version_text(built) + " or newer" +
                  (built >= 13000   ? " (Linux driver branch 580 or later)"
                   : built >= 12000 ? " (Linux driver branch 525 or later)"
                                    : "") +
                  "; update the driver, or build gtstorage with a CUDA Toolkit no newer than " +
                  cuda_version_text(driver) + " (docs/gpu-validation.md, \"Driver floor\")";
      } else if (e == gpuErrorInsufficientDriver && driver == 0) {
        reason_ += " (no driver is installed)";
      }
#endif
      if (const char* v = std::getenv(GTS_GPU_VISIBLE_ENV)) {
        if (e == gpuErrorNoDevice || e == gpuSuccess) {
          reason_ += std::string(" (" GTS_GPU_VISIBLE_ENV "='") + v + "')";
        }
      }
      // The runtime's own account of a machine without devices (the emulated machine's
      // configuration), if it has one.
      const std::string why = gpu_no_device_reason(e);
      if (!why.empty()) reason_ = std::string("no ") + GTS_GPU_LABEL + " device: " + why;
      return;
    }
    n = std::min(n, max_tracked_devices);
    for (int dev = 0; dev < n; ++dev) {
      dev_info& d = devices_[static_cast<std::size_t>(dev)];
      int v = 0;
      d.sms = gpuDeviceGetAttribute(&v, gpuDevAttrMultiProcessorCount, dev) == gpuSuccess && v > 0
                  ? v
                  : 1;
      v = 0;
      d.pools =
          gpuDeviceGetAttribute(&v, gpuDevAttrMemoryPoolsSupported, dev) == gpuSuccess && v != 0;
      v = 0;
      d.concurrent_managed =
          gpuDeviceGetAttribute(&v, gpuDevAttrConcurrentManagedAccess, dev) == gpuSuccess && v != 0;
      v = 0;
      d.max_pitch = gpuDeviceGetAttribute(&v, gpuDevAttrMaxPitch, dev) == gpuSuccess && v > 0
                        ? static_cast<std::size_t>(v)
                        : std::size_t(INT32_MAX);
      (void)gpuGetLastError();
    }
    count_.store(n, std::memory_order_release);
  }

  void require_devices() {
    if (device_count() == 0) fail(no_device_kind(), no_device_reason());
  }

  dev_info& info(int dev) {
    return devices_[static_cast<std::size_t>(dev)];
  }

  bool used(int dev) const {
    return dev < 64 && ((used_mask_.load(std::memory_order_relaxed) >> dev) & 1u) != 0;
  }
  void mark_used(int dev) {
    if (dev >= 0 && dev < 64) used_mask_.fetch_or(uint64_t(1) << dev, std::memory_order_relaxed);
  }

  // Device that @p p lives on: the allocation record, else the runtime, else the current one.
  int device_of(const void* p) {
    const pointer_info pi = query_pointer(p);
    int dev = pi.device_id;
    const int n = count_.load(std::memory_order_acquire);
    if (dev < 0 || dev >= n || pi.space == pointer_space::pinned_host) {
      dev = current_device();
      if (dev < 0 || dev >= n) dev = 0;
    }
    mark_used(dev);
    return dev;
  }

  void* raw_allocate(std::size_t total, memory_kind kind, int dev) {
    device_guard g(dev);
    mark_used(dev);
    const char* fn = GTS_GPU_FN(Malloc);
    for (int attempt = 0;; ++attempt) {
      void* p = nullptr;
      gpuError_t e = gpuSuccess;
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
      if (e == gpuSuccess) return p;
      // Out of device memory: give back what the staging pool keeps, then try once more.
      if (e == gpuErrorMemoryAllocation && attempt == 0 && kind != memory_kind::pinned_host &&
          release_staging(dev)) {
        (void)gpuGetLastError();
        continue;
      }
      raise_error(e, std::string(fn) + " of " + std::to_string(total) + " bytes on device " +
                         std::to_string(dev));
    }
  }

  // Returns the staging pool's unused memory on @p dev (current) to the device; false if there
  // is no pool.
  bool release_staging(int dev) {
    gpuMemPool_t pool = nullptr;
    {
      dev_info& d = info(dev);
      std::lock_guard<std::mutex> lock(d.mu);
      pool = d.pool;
    }
    if (pool == nullptr) return false;
    // Frees still queued behind work return their blocks to the pool when that work is done.
    if (gpuDeviceSynchronize() != gpuSuccess) return false;
    return gpuMemPoolTrimTo(pool, 0) == gpuSuccess;
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

  // Device -> other device: pack the source on its own device (if it has gaps), bring its dense
  // span to the destination device, change the layout there (one peer memcpy straight into the
  // destination when the layouts agree). Ordered without blocking the host: the source side runs
  // on the caller's stream as seen from the source device (a default-stream handle: that
  // device's default stream, where its producer queued), the destination side waits for it
  // through an event, and the source side waits for the peer copy to have read the source
  // before anything later may overwrite it.
  void copy_across_devices(const strided_array& dst, const strided_array& src, int ddev,
                           uint64_t handle) {
    const int sdev = device_of(src.data);
    device_guard on_source(sdev);
    bound_stream src_stream(*this, sdev, handle);
    gpu_rt src_rt(*this, sdev, src_stream.get(), handle);
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
        bound = std::make_unique<bound_stream>(*this, ddev, handle);
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
      gpu_rt rt(*this, ddev, dst_stream.get(), handle);
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

  // Waits for @p s (on the current device) when it is destroyed by an exception: queued work
  // that still reads memory the unwinding is about to free runs first. Errors of the wait
  // itself are dropped (the exception in flight says what failed).
  class drain_on_error {
   public:
    explicit drain_on_error(gpuStream_t s) : s_(s), uncaught_(std::uncaught_exceptions()) {}
    ~drain_on_error() {
      if (std::uncaught_exceptions() > uncaught_ && gpuStreamSynchronize(s_) != gpuSuccess) {
        (void)gpuGetLastError();
      }
    }
    drain_on_error(const drain_on_error&) = delete;
    drain_on_error& operator=(const drain_on_error&) = delete;

   private:
    gpuStream_t s_;
    int uncaught_;
  };

  // An event recorded on @p s (current device), for another stream to wait on.
  static gpuEvent_t record_join(gpuStream_t s) {
    gpuEvent_t e = nullptr;
    check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), GTS_GPU_FN(EventCreateWithFlags));
    const gpuError_t r = gpuEventRecord(e, s);
    if (r != gpuSuccess) {
      (void)gpuEventDestroy(e);
      raise_error(r, GTS_GPU_FN(EventRecord));
    }
    return e;
  }

  std::atomic<bool> inited_{false};
  std::mutex init_mu_;
  std::atomic<int> count_{0};
  std::string reason_;
  error_kind reason_kind_ = error_kind::no_device;
  std::array<dev_info, max_tracked_devices> devices_;
  std::atomic<uint64_t> used_mask_{0};
  std::atomic<uint64_t> joined_mask_{0};  // devices whose helper stream took joined work
  std::mutex mu_;
  std::map<uintptr_t, record> allocs_;
  block_cache pinned_pool_{release_pinned,
                           pool_limit_from_environment(physical_memory_bytes() / 8)};
  std::atomic<int64_t> device_limit_{-2};  // -2: not read yet; -1: a quarter of each device
  std::map<uint64_t, int> streams_;        // created here -> device
  std::map<uint64_t, int> events_;         // created here -> device
};

}  // namespace

}  // namespace gts::device::GTS_GPU_NS
