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
//
// One concept per file, included here in dependency order: gpu_calls.inl (runtime errors, stream
// handles, device_guard), gpu_launch.inl (kernels), gpu_devices.inl (which devices there are),
// gpu_pools.inl (blocks from the runtime and their pools), gpu_memory.inl (the allocation map),
// gpu_streams.inl (streams, events, waits), gpu_copies.inl (copies, fill, prefetch). The class
// below only composes them into the four interfaces (device_backend.hpp: the core;
// stream_ordering.hpp, allocation_registry.hpp and backend_tools.hpp: the ones it hands out).
#include <algorithm>
#include <string>

#include "common/errors.hpp"
#include "device/allocation_registry.hpp"
#include "device/backend_tools.hpp"
#include "device/backends.hpp"
#include "device/gpu/gpu_kernels.hpp"  // (needs the names header: GTS_GPU_NS)
#include "device/gpu/transfer_engine.hpp"
#include "device/stream_ordering.hpp"
#include "device/strided_plan.hpp"
#include "kernels/kernels.hpp"
// clang-format off
#include "device/gpu/gpu_calls.inl"
#include "device/gpu/gpu_launch.inl"
#include "device/gpu/gpu_devices.inl"
#include "device/gpu/gpu_pools.inl"
#include "device/gpu/gpu_memory.inl"
#include "device/gpu/gpu_streams.inl"
#include "device/gpu/gpu_copies.inl"
// clang-format on

namespace gts::device::GTS_GPU_NS {
namespace {

class gpu_backend final : public backend,
                          public stream_ordering,
                          public allocation_registry,
                          public backend_tools {
 public:
  gpu_backend() : backend(GTS_GPU_NAME) { attach(*this, *this, *this); }

  // ---- core: devices ----
  int device_count() noexcept override { return devices_.count(); }
  no_device_status no_device() override { return devices_.no_device(); }
  /// Probes the runtime again at the next query (the simulated machine was reconfigured).
  void reinitialize() { devices_.reinitialize(); }
  int current_device() override { return devices_.current(); }
  void set_current_device(int device_id) override {
    const int dev = checked_device(device_id);
    check(gpuSetDevice(dev), GTS_GPU_FN(SetDevice));
  }

  // ---- core: memory ----
  void* allocate(std::size_t bytes, std::size_t alignment, memory_kind kind,
                 int device_id) override {
    return memory_.allocate(bytes, alignment, kind, device_id);
  }
  void* allocate_pooled(std::size_t bytes, std::size_t alignment, memory_kind kind, int device_id,
                        uint64_t stream) override {
    return memory_.allocate_pooled(bytes, alignment, kind, device_id, stream);
  }
  void free(void* ptr, memory_kind, int) noexcept override { memory_.free(ptr); }

  // ---- core: work on a stream ----
  void copy(void* dst, const void* src, std::size_t bytes, direction dir,
            uint64_t stream) override {
    copies_.copy(dst, src, bytes, dir, stream);
  }
  void copy_strided(const strided_array& dst, const strided_array& src, direction dir,
                    uint64_t stream) override {
    copies_.copy_strided(dst, src, dir, stream);
  }
  void fill(const strided_array& dst, const void* value, uint64_t stream) override {
    copies_.fill(dst, value, stream);
  }
  void prefetch(const void* ptr, std::size_t bytes, int device_id, uint64_t stream) override {
    copies_.prefetch(ptr, bytes, device_id, stream);
  }
  void synchronize(uint64_t stream) override { streams_.synchronize(stream); }

  // ---- core: interop ----
  // (Two kinds may share a code: the emulated device reports unified and pinned memory as host
  // memory.)
  int dl_device_type(memory_kind kind) const noexcept override {
    if (kind == memory_kind::unified) return GTS_GPU_DL_UNIFIED;
    if (kind == memory_kind::pinned_host) return GTS_GPU_DL_PINNED;
    return GTS_GPU_DL_DEVICE;
  }

  // ---- ordering ----
  uint64_t create_event(int device_id) override { return streams_.create_event(device_id); }
  void destroy_event(uint64_t event) noexcept override { streams_.destroy_event(event); }
  void record_event(uint64_t event, uint64_t stream) override {
    streams_.record_event(event, stream);
  }
  void wait_event(uint64_t stream, uint64_t event) override { streams_.wait_event(stream, event); }
  void synchronize_event(uint64_t event) override { streams_.synchronize_event(event); }
  void synchronize_device(int device_id) override { streams_.synchronize_device(device_id); }
  bool stream_known_dead(uint64_t stream) const noexcept override {
    return streams_.stream_known_dead(stream);
  }

  // ---- allocations: pointers and pools ----
  pointer_info query_pointer(const void* ptr) noexcept override {
    return memory_.query_pointer(ptr);
  }
  bool allocation_range(const void* ptr, const void** base, std::size_t* bytes) noexcept override {
    return memory_.allocation_range(ptr, base, bytes);
  }
  pool_counters pool_stats(pool_memory memory) noexcept override { return pools_.stats(memory); }
  int64_t pool_trim(pool_memory memory, int64_t keep_bytes) noexcept override {
    return pools_.trim(memory, keep_bytes);
  }
  void pool_set_limit(pool_memory memory, int64_t limit_bytes) noexcept override {
    pools_.set_limit(memory, limit_bytes);
  }
  void pool_reset_counters() noexcept override { pools_.reset_counters(); }

  // ---- tools ----
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
    p.concurrent_managed_access = devices_.info(dev).concurrent_managed;
    return p;
  }
  uint64_t create_stream(int device_id) override { return streams_.create_stream(device_id); }
  void destroy_stream(uint64_t stream) noexcept override { streams_.destroy_stream(stream); }
  bool event_done(uint64_t event) override { return streams_.event_done(event); }
  float elapsed_ms(uint64_t start, uint64_t end) override {
    return streams_.elapsed_ms(start, end);
  }

 private:
  gpu_devices devices_;
  gpu_pools pools_{devices_};
  gpu_memory memory_{*this, devices_, pools_, usage()};
  gpu_streams streams_{*this, devices_};
  gpu_copies copies_{*this, devices_, pools_, memory_, streams_, usage()};
};

}  // namespace
}  // namespace gts::device::GTS_GPU_NS
