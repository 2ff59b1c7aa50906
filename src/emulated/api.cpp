// The emulated CUDA runtime: the runtime API (devices, memory, streams, events, copies, pools,
// pointers).
#include "emulated/runtime_internal.hpp"

namespace gts::emulated {

using namespace impl;  // NOLINT(google-build-using-namespace): the runtime's own internals

namespace {

// The first check of an entry that names a device: the runtime's own error, then the ordinal.
cudaError_t ordinal_error(const runtime_state& s, int device) {
  if (const cudaError_t e = init_error(s)) return e;
  return valid_ordinal(s, device) ? cudaSuccess : cudaErrorInvalidDevice;
}

// The stream @p h names, after the runtime's own checks (init_error): nullptr where there is
// none, with the error to return (already recorded as the last error) in @p err.
stream* entry_stream(runtime_state& s, cudaStream_t h, cudaError_t& err) {
  err = init_error(s);
  stream* st = err == cudaSuccess ? resolve(s, h, err) : nullptr;
  if (st == nullptr) ret(err);
  return st;
}

// The event @p e names, likewise: nullptr with @p err set where initialization failed or the
// handle is dead.
event* entry_event(runtime_state& s, cudaEvent_t e, cudaError_t& err) {
  err = init_error(s);
  if (err != cudaSuccess) {
    ret(err);
    return nullptr;
  }
  auto it = s.events.find(e);
  if (it == s.events.end()) {
    err = dead_handle(s);
    return nullptr;
  }
  return it->second.get();
}

// Runs the queued work until @p last completed, then reports device @p d: what a synchronizing
// call returns.
cudaError_t wait_until(std::unique_lock<std::mutex>& lk, runtime_state& s, int d,
                       const op_ptr& last) {
  complete(lk, s, last);
  return ret(after_sync(s, d));
}

}  // namespace

cudaError_t cudaGetDeviceCount(int* count) {
  runtime_state& s = state();
  if (count == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *count = 0;
  if (const cudaError_t e = init_error(s)) return ret(e);
  *count = s.m.device_count;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  runtime_state& s = state();
  if (device == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  *device = tls_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = ordinal_error(s, device)) return ret(e);
  tls_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  runtime_state& s = state();
  if (prop == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = ordinal_error(s, device)) return ret(e);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "emulated device %d (simulated CUDA runtime)",
                device);
  prop->totalGlobalMem = s.m.device_memory;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = s.m.multiprocessors;
  prop->maxThreadsPerBlock = 1024;
  prop->concurrentManagedAccess = s.m.concurrent_managed_access ? 1 : 0;
  prop->memPitch = static_cast<std::size_t>(s.m.max_pitch);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = ordinal_error(s, device)) return ret(e);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = 1024;
      return cudaSuccess;
    case cudaDevAttrMaxPitch:
      *value = static_cast<int>(std::min<int64_t>(s.m.max_pitch, INT32_MAX));
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = s.m.multiprocessors;
      return cudaSuccess;
    case cudaDevAttrConcurrentManagedAccess:
      *value = s.m.concurrent_managed_access ? 1 : 0;
      return cudaSuccess;
    case cudaDevAttrMemoryPoolsSupported:
      *value = s.m.memory_pools ? 1 : 0;
      return cudaSuccess;
  }
  return ret(cudaErrorInvalidValue);
}

cudaError_t cudaDriverGetVersion(int* version) {
  runtime_state& s = state();
  if (version == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *version = std::max(0, s.m.driver_version);
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return ret(cudaErrorInvalidValue);
  *version = runtime_version;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  ++s.counts.device_synchronizes;
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = admit(s, d, control::call_class::synchronize)) return ret(e);
  complete_device(lk, s, d);
  return ret(after_sync(s, d));
}

cudaError_t cudaGetLastError() {
  cudaError_t e = tls_last_error;
  tls_last_error = cudaSuccess;
  if (e == cudaSuccess) {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    if (tls_device < s.m.device_count) e = s.devices[tls_device].sticky;
  }
  return e;
}

cudaError_t cudaPeekAtLastError() {
  cudaError_t e = tls_last_error;
  if (e == cudaSuccess) {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    if (tls_device < s.m.device_count) e = s.devices[tls_device].sticky;
  }
  return e;
}

const char* cudaGetErrorString(cudaError_t error) {
  return error_string(error);
}

const char* cudaGetErrorName(cudaError_t error) {
  return error_name(error);
}

namespace {

cudaError_t allocate(void** ptr, std::size_t bytes, mem_kind kind) {
  runtime_state& s = state();
  if (ptr == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *ptr = nullptr;
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = admit(s, d, control::call_class::alloc)) return ret(e);
  if (bytes == 0) return cudaSuccess;
  const std::size_t usable = round_up(bytes, block_align);
  if (kind != mem_kind::pinned &&
      (usable < bytes || s.devices[d].allocated + usable > s.m.device_memory)) {
    return ret(cudaErrorMemoryAllocation);
  }
  allocation* a = map_block(s, bytes, kind, d);
  if (a == nullptr) return ret(cudaErrorMemoryAllocation);
  if (kind != mem_kind::pinned) s.devices[d].allocated += a->usable;
  *ptr = a->user;
  return cudaSuccess;
}

// cudaFree / cudaFreeHost: @p ptr must start a live block of one of @p kinds. Waits for the
// work on the devices that may use it first, as the real calls synchronize.
cudaError_t free_block(void* ptr, bool host) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (ptr == nullptr) return cudaSuccess;
  if (const cudaError_t e = init_error(s)) return ret(e);
  allocation* a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || (a->kind == mem_kind::pinned) != host) {
    if (a != nullptr && !a->live) {
      report(s, std::string(host ? "cudaFreeHost" : "cudaFree") + ": " + hex(ptr) +
                    " was already freed by " + a->freed_by);
    }
    return ret(cudaErrorInvalidValue);
  }
  if (a->free_queued) return ret(cudaErrorInvalidValue);
  if (host) {
    for (int d = 0; d < s.m.device_count; ++d) complete_device(lk, s, d);
  } else {
    if (const cudaError_t e = device_error(s, a->device)) {
      a->free_refused = true;  // the device failed: its memory is gone with its context
      return ret(e);
    }
    complete_device(lk, s, a->device);
    if (tls_device != a->device && tls_device < s.m.device_count)
      complete_device(lk, s, tls_device);
  }
  // Waiting released the lock: someone may have freed it meanwhile (and the record may even have
  // left the quarantine), so look it up again.
  a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || a->free_queued) {
    return ret(cudaErrorInvalidValue);
  }
  if (a->kind == mem_kind::pool && a->owner != nullptr) {
    cache_block(s, a);
  } else {
    retire_block(s, a, host ? "cudaFreeHost" : "cudaFree");
  }
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  return allocate(ptr, bytes, mem_kind::device);
}

cudaError_t cudaFree(void* ptr) {
  return free_block(ptr, false);
}

cudaError_t cudaMallocManaged(void** ptr, std::size_t bytes, unsigned flags) {
  if (flags != cudaMemAttachGlobal && flags != 0x2 /* cudaMemAttachHost */) {
    return ret(cudaErrorInvalidValue);
  }
  return allocate(ptr, bytes, mem_kind::managed);
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned flags) {
  if ((flags & ~0x7u) != 0) return ret(cudaErrorInvalidValue);
  return allocate(ptr, bytes, mem_kind::pinned);
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
  return allocate(ptr, bytes, mem_kind::pinned);
}

cudaError_t cudaFreeHost(void* ptr) {
  return free_block(ptr, true);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  runtime_state& s = state();
  if (attributes == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  *attributes =
      cudaPointerAttributes{cudaMemoryTypeUnregistered, cudaInvalidDeviceId, nullptr, nullptr};
  allocation* a = ptr == nullptr ? nullptr : find(s, ptr);
  const auto* p = static_cast<const std::byte*>(ptr);
  if (a == nullptr || !a->live || p < a->user ||
      p >= a->user + std::max<std::size_t>(a->bytes, 1)) {
    return cudaSuccess;  // unregistered host memory (CUDA 11+ reports it without an error)
  }
  void* q = const_cast<void*>(ptr);
  attributes->device = a->device;
  switch (a->kind) {
    case mem_kind::device:
    case mem_kind::pool:
      attributes->type = cudaMemoryTypeDevice;
      attributes->devicePointer = q;
      break;
    case mem_kind::managed:
      attributes->type = cudaMemoryTypeManaged;
      attributes->devicePointer = q;
      attributes->hostPointer = q;
      break;
    case mem_kind::pinned:
      attributes->type = cudaMemoryTypeHost;
      attributes->devicePointer = q;
      attributes->hostPointer = q;
      break;
  }
  return cudaSuccess;
}

cudaError_t cuMemGetAddressRange(void** base, std::size_t* bytes, const void* ptr) {
  runtime_state& s = state();
  if (base == nullptr || bytes == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  allocation* a = ptr == nullptr ? nullptr : find(s, ptr);
  const auto* p = static_cast<const std::byte*>(ptr);
  if (a == nullptr || !a->live || p < a->user ||
      p >= a->user + std::max<std::size_t>(a->bytes, 1)) {
    return ret(cudaErrorInvalidValue);
  }
  *base = a->user;
  *bytes = a->bytes;
  return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, std::size_t bytes, cudaMemPool_t pool_handle,
                                    cudaStream_t h) {
  runtime_state& s = state();
  if (ptr == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  *ptr = nullptr;
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  pool* p = nullptr;
  if (pool_handle == nullptr) {
    p = default_pool(s, st->device);
  } else {
    auto it = s.pools.find(pool_handle);
    if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
    p = it->second.get();
  }
  if (const cudaError_t e = admit(s, p->device, control::call_class::alloc)) return ret(e);
  if (bytes == 0) return cudaSuccess;
  const cudaError_t e = pool_alloc(s, *p, bytes, ptr);
  if (e == cudaSuccess) ++s.counts.pool_allocations;
  return ret(e);
}

cudaError_t cudaMallocAsync(void** ptr, std::size_t bytes, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, bytes, nullptr, stream);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (ptr == nullptr) return cudaSuccess;
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  if (const cudaError_t e = device_error(s, st->device)) {
    if (allocation* a = find(s, ptr); a != nullptr && a->live && a->user == ptr) {
      a->free_refused = true;
    }
    return ret(e);
  }
  allocation* a = find(s, ptr);
  if (a == nullptr || !a->live || a->user != ptr || a->free_queued || a->kind == mem_kind::pinned) {
    if (a != nullptr && !a->live) {
      report(s, "cudaFreeAsync: " + hex(ptr) + " was already freed by " + a->freed_by);
    }
    return ret(cudaErrorInvalidValue);
  }
  a->free_queued = true;
  op_ptr o = enqueue(s, *st, "cudaFreeAsync", [a]() -> cudaError_t {
    runtime_state& rs = state();
    std::lock_guard<std::mutex> g(rs.mu);
    if (a->kind == mem_kind::pool && a->owner != nullptr) {
      cache_block(rs, a);
    } else {
      a->free_queued = false;
      retire_block(rs, a, "cudaFreeAsync");
    }
    return cudaSuccess;
  });
  o->bookkeeping = true;
  run_if_eager(lk, s, o);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool_handle, int device) {
  runtime_state& s = state();
  if (pool_handle == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = ordinal_error(s, device)) return ret(e);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  *pool_handle = reinterpret_cast<cudaMemPool_t>(default_pool(s, device));
  return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool_handle, const cudaMemPoolProps* props) {
  runtime_state& s = state();
  if (pool_handle == nullptr || props == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (!s.m.memory_pools) return ret(cudaErrorNotSupported);
  if (props->allocType != cudaMemAllocationTypePinned ||
      props->location.type != cudaMemLocationTypeDevice || props->location.id < 0 ||
      props->location.id >= s.m.device_count) {
    return ret(cudaErrorInvalidValue);
  }
  *pool_handle = reinterpret_cast<cudaMemPool_t>(new_pool(s, props->location.id));
  return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool_handle) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed ||
      it->second.get() == s.devices[it->second->device].default_pool) {
    return ret(cudaErrorInvalidValue);
  }
  pool& p = *it->second;
  trim_pool(s, p, 0);
  p.destroyed = true;
  // Blocks still handed out stay valid until they are freed (then they are retired).
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool_handle, cudaMemPoolAttr attr, void* value) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  pool& p = *it->second;
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      p.release_threshold = *static_cast<uint64_t*>(value);
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      p.reserved_high = p.reserved;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      p.used_high = p.used;
      return cudaSuccess;
    default:
      return ret(cudaErrorInvalidValue);
  }
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool_handle, cudaMemPoolAttr attr, void* value) {
  runtime_state& s = state();
  if (value == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  const pool& p = *it->second;
  auto* out = static_cast<uint64_t*>(value);
  switch (attr) {
    case cudaMemPoolAttrReleaseThreshold:
      *out = p.release_threshold;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemCurrent:
      *out = p.reserved;
      return cudaSuccess;
    case cudaMemPoolAttrReservedMemHigh:
      *out = p.reserved_high;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemCurrent:
      *out = p.used;
      return cudaSuccess;
    case cudaMemPoolAttrUsedMemHigh:
      *out = p.used_high;
      return cudaSuccess;
  }
  return ret(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool_handle, std::size_t min_bytes_to_keep) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  auto it = s.pools.find(pool_handle);
  if (it == s.pools.end() || it->second->destroyed) return ret(cudaErrorInvalidValue);
  trim_pool(s, *it->second, min_bytes_to_keep);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return copy_async({"cudaMemcpy", dst, src, bytes, 1, bytes, bytes}, kind, nullptr, true);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return copy_async({"cudaMemcpyAsync", dst, src, bytes, 1, bytes, bytes}, kind, stream, false);
}

cudaError_t cudaMemcpy2DAsync(void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                              std::size_t width, std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  if (width == 0 || height == 0) return cudaSuccess;
  {
    runtime_state& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    const auto max_pitch = static_cast<std::size_t>(s.m.max_pitch);
    if (dpitch > max_pitch || spitch > max_pitch) return ret(cudaErrorInvalidPitchValue);
  }
  if (width > dpitch || width > spitch) return ret(cudaErrorInvalidValue);
  return copy_async({"cudaMemcpy2DAsync", dst, src, width, height, dpitch, spitch}, kind, stream,
                    false);
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
  // Asynchronous with respect to the host for device memory, as in CUDA.
  return memset_async(dst, value, bytes, nullptr);
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream) {
  return memset_async(dst, value, bytes, stream);
}

cudaError_t cudaMemPrefetchAsync(const void* ptr, std::size_t bytes, cudaMemLocation location,
                                 unsigned flags, cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  if (flags != 0 || ptr == nullptr) return ret(cudaErrorInvalidValue);
  if (location.type == cudaMemLocationTypeDevice) {
    if (location.id < 0 || location.id >= s.m.device_count) return ret(cudaErrorInvalidDevice);
    if (!s.m.concurrent_managed_access) return ret(cudaErrorInvalidDevice);
  } else if (location.type != cudaMemLocationTypeHost) {
    return ret(cudaErrorInvalidValue);
  }
  stream* st = nullptr;
  if (const cudaError_t e = admit_stream(s, h, control::call_class::prefetch, st)) return ret(e);
  const range_check r = check_range(s, ptr, bytes);
  if (r.kind != range_kind::inside || r.a->kind != mem_kind::managed) {
    if (r.kind == range_kind::out_of_bounds || r.kind == range_kind::freed) {
      report(s, "cudaMemPrefetchAsync: " + describe(r, ptr, bytes));
    }
    return ret(cudaErrorInvalidValue);
  }
  // Pages move; nothing a program can observe beyond the ordering.
  enqueue(s, *st, "cudaMemPrefetchAsync", nullptr);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* out, unsigned flags) {
  runtime_state& s = state();
  if (out == nullptr || flags > cudaStreamNonBlocking) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = admit(s, d, control::call_class::stream_create)) return ret(e);
  auto st = std::make_unique<stream>();
  st->device = d;
  st->flags = flags;
  auto* h = reinterpret_cast<CUstream_st*>(st.get());
  if (st->blocking()) s.devices[d].blocking.push_back(st.get());
  s.streams[h] = std::move(st);
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  auto it = s.streams.find(h);
  if (it == s.streams.end()) return dead_handle(s);
  // Queued work still runs (CUDA returns at once and completes it later).
  it->second->destroyed = true;
  s.retired.push_back(std::move(it->second));
  s.streams.erase(it);
  prune_retired(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  stream* st = nullptr;
  if (const cudaError_t e = admit_stream(s, h, control::call_class::synchronize, st)) return ret(e);
  const op_ptr last = st->last;
  return wait_until(lk, s, st->device, last);
}

cudaError_t cudaStreamQuery(cudaStream_t h) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  cudaError_t err = cudaSuccess;
  stream* st = entry_stream(s, h, err);
  if (st == nullptr) return err;
  if (const cudaError_t e = device_error(s, st->device)) return ret(e);
  if (st->idle()) return cudaSuccess;
  // Not done: say so, then make progress, so the next query (of a polling loop) succeeds.
  ++s.counts.deferred_reads;
  const op_ptr last = st->last;
  complete(lk, s, last);
  return cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t h, cudaEvent_t e, unsigned flags) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  if (flags != 0) return ret(cudaErrorInvalidValue);
  cudaError_t err = cudaSuccess;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  auto it = s.events.find(e);
  if (it == s.events.end()) return dead_handle(s);
  if (const cudaError_t de = device_error(s, st->device)) return ret(de);
  // An event never recorded is complete: nothing to wait for. Other devices' events are fine.
  if (it->second->marker) enqueue(s, *st, "cudaStreamWaitEvent", nullptr, it->second->marker);
  return cudaSuccess;
}

cudaError_t cudaStreamGetDevice(cudaStream_t h, int* device) {
  runtime_state& s = state();
  if (device == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  cudaError_t err = cudaSuccess;
  stream* st = entry_stream(s, h, err);
  if (st == nullptr) return err;
  *device = st->device;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event_out) {
  return cudaEventCreateWithFlags(event_out, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* out, unsigned flags) {
  runtime_state& s = state();
  if (out == nullptr || flags > (cudaEventBlockingSync | cudaEventDisableTiming)) {
    return ret(cudaErrorInvalidValue);
  }
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t e = init_error(s)) return ret(e);
  const int d = tls_device;
  if (const cudaError_t e = admit(s, d, control::call_class::event_create)) return ret(e);
  auto ev = std::make_unique<event>();
  ev->device = d;
  ev->flags = flags;
  auto* h = reinterpret_cast<CUevent_st*>(ev.get());
  s.events[h] = std::move(ev);
  *out = h;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  if (s.events.erase(e) == 0) return dead_handle(s);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t h) {
  runtime_state& s = state();
  std::lock_guard<std::mutex> lk(s.mu);
  cudaError_t err = cudaSuccess;
  event* ev = entry_event(s, e, err);
  if (ev == nullptr) return err;
  stream* st = resolve(s, h, err);
  if (st == nullptr) return ret(err);
  // CUDA: "cudaEventRecord() will fail if the input event and input stream are associated to
  // different devices."
  if (st->device != ev->device) return ret(cudaErrorInvalidResourceHandle);
  if (const cudaError_t de = admit(s, st->device, control::call_class::event_record))
    return ret(de);
  ev->marker = enqueue(s, *st, "cudaEventRecord", nullptr);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  cudaError_t err = cudaSuccess;
  const event* ev = entry_event(s, e, err);
  if (ev == nullptr) return err;
  const int d = ev->device;
  if (const cudaError_t e = admit(s, d, control::call_class::synchronize)) return ret(e);
  const op_ptr marker = ev->marker;
  return wait_until(lk, s, d, marker);
}

cudaError_t cudaEventQuery(cudaEvent_t e) {
  runtime_state& s = state();
  std::unique_lock<std::mutex> lk(s.mu);
  cudaError_t err = cudaSuccess;
  const event* ev = entry_event(s, e, err);
  if (ev == nullptr) return err;
  const op_ptr marker = ev->marker;
  if (!marker || marker->state == op_state::done) return ret(s.devices[ev->device].sticky);
  ++s.counts.deferred_reads;
  complete(lk, s, marker);
  return cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  runtime_state& s = state();
  if (ms == nullptr) return ret(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lk(s.mu);
  if (const cudaError_t err = init_error(s)) return ret(err);
  auto a = s.events.find(start), b = s.events.find(end);
  if (a == s.events.end() || b == s.events.end()) return dead_handle(s);
  const event &ea = *a->second, &eb = *b->second;
  if (ea.device != eb.device || ((ea.flags | eb.flags) & cudaEventDisableTiming) != 0 ||
      !ea.marker || !eb.marker) {
    return ret(cudaErrorInvalidResourceHandle);
  }
  if (ea.marker->state != op_state::done || eb.marker->state != op_state::done) {
    return cudaErrorNotReady;
  }
  *ms = std::chrono::duration<float, std::milli>(eb.marker->done_at - ea.marker->done_at).count();
  return cudaSuccess;
}

}  // namespace gts::emulated
