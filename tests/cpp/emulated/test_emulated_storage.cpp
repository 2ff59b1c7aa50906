// Storages on the emulated device (the GPU backend over the simulated CUDA runtime), through the
// public C API, with the simulator's control API on the side to play the application (its own
// kernels on a stream, its own cudaSetDevice, CuPy's pool reusing a buffer) and to inject
// failures. Regression tests of the GPU review, each of which failed before its fix:
// - destroying a storage waits for an asynchronous sync before freeing the memory or handing a
//   wrapped buffer back to its owner (review #4);
// - unified-memory storages wait for the storage's stream before the host reads or writes them
//   (review #5);
// - device -1 is the calling thread's current device (review #1);
// - a wrapped device pointer takes its device and kind from the runtime, and the descriptors
//   report them (review #2);
// and the statuses of the device error paths, the descriptors of emulated memory (never CUDA's),
// and a driver older than the runtime (GTSTORAGE_ERROR_DRIVER_TOO_OLD, both versions named).
#include <dlpack/dlpack.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

/* The suites use the experimental tier (refcounts, counter resets, backend switching) and
 * also cover the deprecated sync spellings, which stay supported within the major version
 * (defined before support.hpp, which includes the C API's header). */
#define GTSTORAGE_NO_DEPRECATION_WARNINGS
#include "../support.hpp"
#include "device/device_backend.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"
#include "gtstorage/gtstorage_experimental.h"

namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

void fresh() {
  ctl::set_machine(ctl::machine{});
  ctl::clear_failures();
  (void)ctl::take_memcheck_reports();
  gts::device::set_emulated_device_count(2);
  GTS_OK(gtstorage_set_device_backend("emulated"));
  (void)sim::cudaGetLastError();
  sim::cudaSetDevice(0);
}

const int64_t shape[3] = {6, 5, 4};
constexpr int64_t n_elements = 6 * 5 * 4;

gtstorage_handle create(int32_t managed, int32_t device_id = -1,
                        int32_t init = GTSTORAGE_INIT_ZEROS) {
  gtstorage_create_options o = test::gpu_options(shape, managed, device_id);
  o.init = init;
  return test::created(o);
}

gtstorage_interface_info describe(gtstorage_handle h, int32_t side) {
  gtstorage_interface_info i;
  i.struct_size = sizeof i;
  GTS_OK(gtstorage_interface(h, side, &i));
  return i;
}

std::vector<double> read_all(gtstorage_handle h) {
  std::vector<double> v(n_elements, -999.0);
  gtstorage_array a = test::c_array(v.data(), shape);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  return v;
}

int64_t count_not(const std::vector<double>& v, double want) {
  int64_t n = 0;
  for (double x : v) n += x != want;
  return n;
}

struct live_counts {
  int64_t handles, buffers;
};
live_counts live() {
  gtstorage_stats s;
  s.struct_size = sizeof s;
  GTS_OK(gtstorage_get_stats(&s));
  return {s.live_handles, s.live_buffers};
}

// No memcheck report, and as many live handles and buffers as @p before: nothing leaked.
void check_nothing_left(const live_counts& before) {
  CHECK(ctl::take_memcheck_reports().empty());
  const live_counts after = live();
  CHECK(after.handles == before.handles && after.buffers == before.buffers);
}

// ------------------------------------------------------------------------------------------------
// Review #4: releasing a storage with an asynchronous sync in flight

struct reuse_on_release {
  double* host;
  int calls;
};

// What NumPy or CuPy do with memory handed back to them: reuse it at once.
void overwrite_on_release(void* user) {
  auto* r = static_cast<reuse_on_release*>(user);
  for (int64_t i = 0; i < n_elements; ++i) r->host[i] = -1.0;
  ++r->calls;
}

void release_waits_for_async_sync() {
  fresh();
  const live_counts before = live();
  // A device buffer to wrap: the device side of a device-only storage (emulated device memory).
  const gtstorage_handle target = create(GTSTORAGE_MANAGED_NONE);
  const gtstorage_interface_info dev = describe(target, GTSTORAGE_SIDE_DEVICE);
  std::vector<double> host(n_elements);
  for (int64_t i = 0; i < n_elements; ++i) host[i] = static_cast<double>(i);
  reuse_on_release r{host.data(), 0};
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = 3;
  w.shape = shape;
  w.data = host.data();
  w.device_data = dev.data;
  w.device_strides = dev.strides;
  w.sync_state = GTSTORAGE_SYNC_HOST_DIRTY;
  w.release = overwrite_on_release;
  w.user_data = &r;
  gtstorage_handle pair = 0;
  GTS_OK(gtstorage_wrap(&w, &pair));
  GTS_OK(gtstorage_sync_async(pair, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0, 0));
  CHECK(ctl::pending_operations() > 0);  // the upload has not run yet
  GTS_OK(gtstorage_release(pair));
  CHECK(r.calls == 1);
  // The device got the host's data as it was at the sync, not the reused buffer's.
  const std::vector<double> got = read_all(target);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n_elements; ++i) wrong += got[i] != static_cast<double>(i);
  CHECK_MSG(wrong == 0, "%lld elements came from the buffer after its owner reused it",
            static_cast<long long>(wrong));
  GTS_OK(gtstorage_release(target));
  // The same with memory the library owns: the host side must not be freed under the upload
  // (AddressSanitizer reports the read of freed memory if it is).
  const gtstorage_handle mirror = create(GTSTORAGE_MANAGED_MIRROR);
  GTS_OK(gtstorage_fill_double(mirror, 3.0));
  GTS_OK(gtstorage_sync_async(mirror, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0, 0));
  GTS_OK(gtstorage_release(mirror));
  check_nothing_left(before);
}

// An asynchronous sync on the storage's own stream, then host access: a write must wait until
// the upload has read the host buffer, a read until the download has written it.
void host_access_waits_for_async_sync() {
  fresh();
  sim::cudaStream_t s = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&s, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  const gtstorage_handle m = create(GTSTORAGE_MANAGED_MIRROR);
  GTS_OK(gtstorage_set_stream(m, reinterpret_cast<uint64_t>(s)));
  GTS_OK(gtstorage_fill_double(m, 5.0));  // host side, host dirty
  GTS_OK(gtstorage_sync_async(m, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0, 0));
  CHECK(ctl::pending_operations() > 0);
  GTS_OK(gtstorage_fill_double(m, 6.0));  // host write while the upload may still read
  // The device got 5 (what the host held at the sync), the host holds 6.
  gtstorage_handle alias = 0;
  {
    const gtstorage_interface_info dev = describe(m, GTSTORAGE_SIDE_DEVICE);
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = shape;
    w.device_data = dev.data;
    w.device_strides = dev.strides;
    GTS_OK(gtstorage_wrap(&w, &alias));
  }
  CHECK_MSG(count_not(read_all(alias), 5.0) == 0, "the host write overtook the upload");
  CHECK(count_not(read_all(m), 6.0) == 0);
  // The other way: device modified, an asynchronous download, then a host read.
  GTS_OK(gtstorage_fill_double(alias, 7.0));
  GTS_OK(gtstorage_sync(m, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, GTSTORAGE_SYNC_FLAG_FORCE));
  GTS_OK(gtstorage_sync_async(m, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0, 0));
  CHECK(ctl::pending_operations() > 0);     // the download has not run
  CHECK(count_not(read_all(m), 7.0) == 0);  // a read through the API waits for it
  // So does a descriptor, which hands the memory out to be read at once.
  GTS_OK(gtstorage_fill_double(alias, 8.0));
  GTS_OK(gtstorage_sync(m, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, GTSTORAGE_SYNC_FLAG_FORCE));
  GTS_OK(gtstorage_sync_async(m, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0, 0));
  const gtstorage_interface_info host = describe(m, GTSTORAGE_SIDE_HOST);
  CHECK(*static_cast<const double*>(host.data) == 8.0);
  GTS_OK(gtstorage_release(alias));
  GTS_OK(gtstorage_release(m));
  CHECK(sim::cudaStreamDestroy(s) == sim::cudaSuccess);
}

// ------------------------------------------------------------------------------------------------
// Review #5: unified memory and the storage's stream

void unified_storages_wait_for_their_stream() {
  fresh();
  const gtstorage_handle u = create(GTSTORAGE_MANAGED_UNIFIED);
  sim::cudaStream_t s = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&s, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  GTS_OK(gtstorage_set_stream(u, reinterpret_cast<uint64_t>(s)));
  const gtstorage_interface_info info = describe(u, GTSTORAGE_SIDE_DEVICE);
  const auto bytes = static_cast<std::size_t>(info.allocation_bytes);
  // The application's kernel, queued on the storage's stream, writes the whole field.
  CHECK(sim::cudaMemsetAsync(info.allocation, 0x3F, bytes, s) == sim::cudaSuccess);
  // A host read must see it: 0x3F3F3F3F3F3F3F3F as a double.
  double expect = 0;
  std::memset(&expect, 0x3F, sizeof expect);
  CHECK_MSG(count_not(read_all(u), expect) == 0, "the host read did not wait for the stream");
  // A host write must land after it (not be overwritten by it later).
  CHECK(sim::cudaMemsetAsync(info.allocation, 0x3F, bytes, s) == sim::cudaSuccess);
  std::vector<double> ones(n_elements, 1.0);
  gtstorage_array a = test::c_array(ones.data(), shape);
  GTS_OK(gtstorage_copy_from_array(u, &a));
  CHECK(sim::cudaStreamSynchronize(s) == sim::cudaSuccess);
  CHECK_MSG(count_not(read_all(u), 1.0) == 0, "the host write was overwritten by queued work");
  GTS_OK(gtstorage_release(u));
  CHECK(sim::cudaStreamDestroy(s) == sim::cudaSuccess);
}

// ------------------------------------------------------------------------------------------------
// Review #1: device -1

void device_minus_one_is_the_threads_device() {
  fresh();
  // The MPI pattern: the application selects a GPU per rank (here: per thread) itself.
  int got[2] = {-1, -1};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([r, &got] {
      sim::cudaSetDevice(1 - r);
      const gtstorage_handle h = create(GTSTORAGE_MANAGED_NONE);
      got[r] = describe(h, GTSTORAGE_SIDE_DEVICE).device_id;
      gtstorage_release(h);
    });
  }
  for (auto& t : ranks) t.join();
  CHECK_MSG(got[0] == 1 && got[1] == 0, "storages landed on devices %d and %d", got[0], got[1]);
  // gtstorage_set_device is the same thing for the calling thread only.
  GTS_OK(gtstorage_set_device(1));
  const gtstorage_handle h = create(GTSTORAGE_MANAGED_MIRROR);
  CHECK(describe(h, GTSTORAGE_SIDE_DEVICE).device_id == 1);
  sim::cudaPointerAttributes attr{};
  CHECK(sim::cudaPointerGetAttributes(&attr, describe(h, GTSTORAGE_SIDE_DEVICE).data) ==
        sim::cudaSuccess);
  CHECK(attr.device == 1);
  std::thread other([] {
    const gtstorage_handle g = create(GTSTORAGE_MANAGED_NONE);
    CHECK(describe(g, GTSTORAGE_SIDE_DEVICE).device_id == 0);
    gtstorage_release(g);
  });
  other.join();
  GTS_OK(gtstorage_release(h));
  GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "device_id", gtstorage_set_device(2));
  GTS_OK(gtstorage_set_device(0));
}

// ------------------------------------------------------------------------------------------------
// Review #2: wrapped device pointers

gtstorage_handle wrap_device(void* p, int32_t device_id, int* status) {
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = 3;
  w.shape = shape;
  w.device_data = p;
  w.device_id = device_id;
  gtstorage_handle h = 0;
  *status = gtstorage_wrap(&w, &h);
  return h;
}

void wrapped_pointers_report_their_device_and_kind() {
  fresh();
  const std::size_t bytes = n_elements * 8;
  void *on1 = nullptr, *managed = nullptr, *pinned = nullptr;
  sim::cudaSetDevice(1);  // a CuPy array made on GPU 1
  CHECK(sim::cudaMalloc(&on1, bytes) == sim::cudaSuccess);
  CHECK(sim::cudaMallocManaged(&managed, bytes) == sim::cudaSuccess);
  sim::cudaSetDevice(0);
  CHECK(sim::cudaHostAlloc(&pinned, bytes, sim::cudaHostAllocPortable) == sim::cudaSuccess);
  int st = 0;
  gtstorage_handle h = wrap_device(on1, -1, &st);
  CHECK(st == GTSTORAGE_OK);
  gtstorage_interface_info i = describe(h, GTSTORAGE_SIDE_DEVICE);
  CHECK_MSG(i.device_id == 1, "wrapped pointer of device 1 reported as device %d", i.device_id);
  CHECK(i.device_type == GTSTORAGE_DL_EXT_DEV);  // emulated memory never poses as CUDA
  DLManagedTensorVersioned* t = nullptr;
  GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_DEVICE, &t));
  CHECK(t->dl_tensor.device.device_type == kDLExtDev && t->dl_tensor.device.device_id == 1);
  t->deleter(t);
  // Values go through: the library fills it on device 1.
  GTS_OK(gtstorage_fill_double(h, 4.5));
  CHECK(count_not(read_all(h), 4.5) == 0);
  GTS_OK(gtstorage_release(h));
  // A device id that contradicts the runtime is refused, naming both.
  wrap_device(on1, 0, &st);
  CHECK(st == GTSTORAGE_ERROR_INVALID_ARGUMENT);
  CHECK(std::strstr(gtstorage_last_error(),
                    "device_id: 0 was given, but device_data lives on "
                    "device 1") != nullptr);
  // Managed memory: device 1, readable on the host without a device copy.
  h = wrap_device(managed, -1, &st);
  CHECK(st == GTSTORAGE_OK);
  i = describe(h, GTSTORAGE_SIDE_DEVICE);
  // Host memory, as it is: kDLCPU, whose DLPack device id is 0 (the memory stays on device 1).
  CHECK(i.device_id == 0 && i.device_type == GTSTORAGE_DL_CPU);
  gtstorage_transfer_stats ts;
  ts.struct_size = sizeof ts;
  GTS_OK(gtstorage_fill_double(h, 2.0));
  CHECK(count_not(read_all(h), 2.0) == 0);
  GTS_OK(gtstorage_get_transfer_stats(h, &ts));
  CHECK(ts.d2h_count == 0);  // unified: read in place
  GTS_OK(gtstorage_release(h));
  // Pinned host memory as device data: host memory, device id 0.
  h = wrap_device(pinned, -1, &st);
  CHECK(st == GTSTORAGE_OK);
  i = describe(h, GTSTORAGE_SIDE_DEVICE);
  CHECK(i.device_type == GTSTORAGE_DL_CPU && i.device_id == 0);
  GTS_OK(gtstorage_release(h));
  // Ordinary host memory is not device memory.
  std::vector<double> plain(n_elements);
  wrap_device(plain.data(), -1, &st);
  CHECK(st == GTSTORAGE_ERROR_INVALID_ARGUMENT);
  CHECK(std::strstr(gtstorage_last_error(), "device_data:") != nullptr);
  CHECK(sim::cudaFree(on1) == sim::cudaSuccess);
  CHECK(sim::cudaFree(managed) == sim::cudaSuccess);
  CHECK(sim::cudaFreeHost(pinned) == sim::cudaSuccess);
}

// ------------------------------------------------------------------------------------------------
// Descriptors of emulated memory, and device error paths

void emulated_descriptors_say_what_they_are() {
  fresh();
  const gtstorage_handle m = create(GTSTORAGE_MANAGED_MIRROR);
  CHECK(describe(m, GTSTORAGE_SIDE_DEVICE).device_type == GTSTORAGE_DL_EXT_DEV);
  CHECK(describe(m, GTSTORAGE_SIDE_HOST).device_type == GTSTORAGE_DL_CPU);
  DLManagedTensor* t = nullptr;
  GTS_OK(gtstorage_to_dlpack(m, GTSTORAGE_SIDE_DEVICE, &t));
  CHECK(t->dl_tensor.device.device_type == kDLExtDev);
  t->deleter(t);
  GTS_OK(gtstorage_release(m));
  const gtstorage_handle u = create(GTSTORAGE_MANAGED_UNIFIED);
  CHECK(describe(u, GTSTORAGE_SIDE_DEVICE).device_type == GTSTORAGE_DL_CPU);
  GTS_OK(gtstorage_release(u));
}

void device_errors_have_statuses() {
  fresh();
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = shape;
  o.preset = "gt:gpu";
  gtstorage_handle h = 0;
  // Device memory exhausted (also after giving back the staging pool's memory). Blocks kept by
  // the storage pool from earlier tests would serve the request: give them back first.
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  ctl::machine mc = ctl::current_machine();
  mc.device_memory = 1024;
  ctl::set_machine(mc);
  GTS_IS(GTSTORAGE_ERROR_OUT_OF_MEMORY, "cudaMalloc", gtstorage_create(&o, &h));
  ctl::set_machine(ctl::machine{});
  // A failed transfer inside a sync: the state stays what it was, the status says why.
  const gtstorage_handle m = create(GTSTORAGE_MANAGED_MIRROR);
  GTS_OK(gtstorage_sync(m, GTSTORAGE_SYNC_SET_HOST_MODIFIED, 0));
  ctl::fail_nth(ctl::call_class::memcpy, 1, sim::cudaErrorInvalidValue);
  GTS_IS(GTSTORAGE_ERROR_DEVICE, "cudaMemcpyAsync",
         gtstorage_sync(m, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));
  int32_t state = -1;
  GTS_OK(gtstorage_get_sync_state(m, &state));
  CHECK(state == GTSTORAGE_SYNC_HOST_DIRTY);
  GTS_OK(gtstorage_sync(m, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));  // the next attempt works
  // A kernel that fails when it runs (a fill on the device): the device is lost for good.
  const gtstorage_handle d0 = create(GTSTORAGE_MANAGED_NONE);
  ctl::fail_nth(ctl::call_class::launch, 1, sim::cudaErrorIllegalAddress, true);
  GTS_IS(GTSTORAGE_ERROR_DEVICE, "sticky", gtstorage_fill_double(d0, 1.0));
  h = 0;
  GTS_IS(GTSTORAGE_ERROR_DEVICE, "illegal memory access", gtstorage_create(&o, &h));
  CHECK(h == 0);
  GTS_OK(gtstorage_release(d0));  // releasing still works
  GTS_OK(gtstorage_release(m));
  fresh();
  // An invalid stream is the caller's argument: refused where it is given (issue 23, F8), and
  // where a stream dies after it was given, by the first call that uses it.
  const gtstorage_handle d = create(GTSTORAGE_MANAGED_NONE);
  GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream", gtstorage_set_stream(d, 0x1234));
  sim::cudaStream_t s = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&s, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  CHECK(sim::cudaStreamDestroy(s) == sim::cudaSuccess);  // a stream that was live, destroyed
  GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream",
         gtstorage_set_stream(d, reinterpret_cast<uint64_t>(s)));
  CHECK(sim::cudaStreamCreateWithFlags(&s, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  GTS_OK(gtstorage_set_stream(d, reinterpret_cast<uint64_t>(s)));
  CHECK(sim::cudaStreamDestroy(s) == sim::cudaSuccess);
  GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "stream", gtstorage_fill_double(d, 1.0));
  GTS_OK(gtstorage_set_stream(d, 0));
  GTS_OK(gtstorage_release(d));
}

void old_driver_is_its_own_status() {
  fresh();
  setenv("GTSTORAGE_SIM_DRIVER_VERSION", "12040", 1);
  gts::device::reload_environment();
  GTS_OK(gtstorage_set_device_backend("emulated"));
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = shape;
  o.preset = "gt:gpu";
  gtstorage_handle h = 0;
  GTS_IS(GTSTORAGE_ERROR_DRIVER_TOO_OLD, "the driver supports CUDA 12.4", gtstorage_create(&o, &h));
  CHECK(std::strstr(gtstorage_last_error(), "built with CUDA 13.0") != nullptr);
  int32_t count = -1;
  GTS_IS(GTSTORAGE_ERROR_DRIVER_TOO_OLD, "CUDA 12.4", gtstorage_device_count(&count));
  CHECK(count == 0);
  CHECK(std::string(gtstorage_status_name(GTSTORAGE_ERROR_DRIVER_TOO_OLD)) ==
        "GTSTORAGE_ERROR_DRIVER_TOO_OLD");
  // Host storages are not affected.
  o.preset = "gt:cpu_ifirst";
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_release(h));
  // No driver at all: NO_DEVICE, saying so.
  setenv("GTSTORAGE_SIM_DRIVER_VERSION", "0", 1);
  gts::device::reload_environment();
  GTS_OK(gtstorage_set_device_backend("emulated"));
  o.preset = "gt:gpu";
  GTS_IS(GTSTORAGE_ERROR_NO_DEVICE, "no driver is installed", gtstorage_create(&o, &h));
  GTS_OK(gtstorage_device_count(&count));
  CHECK(count == 0);
  unsetenv("GTSTORAGE_SIM_DRIVER_VERSION");
  gts::device::reload_environment();
  fresh();
}

// ------------------------------------------------------------------------------------------------
// Issue 8 on the simulated runtime: a 0-d storage keeps its value through both syncs; an empty
// storage moves nothing (no copy, memset or kernel runs at all); a 24-byte alignment (not a power
// of two, over 256-byte aligned runtime blocks) puts the aligned element on a multiple of 24 and
// every kernel and copy stays inside the allocation (the runtime's guard pages and redzones).

void scalars_empties_and_odd_alignments() {
  fresh();
  const live_counts before = live();
  ctl::reset_counters();
  {
    const int64_t empty_shape[3] = {4, 0, 5};
    for (int32_t managed :
         {GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_MANAGED_NONE, GTSTORAGE_MANAGED_UNIFIED}) {
      gtstorage_create_options o = test::gpu_options(empty_shape, managed);
      o.init = GTSTORAGE_INIT_ZEROS;
      const gtstorage_handle h = test::created(o);
      for (int32_t op = GTSTORAGE_SYNC_HOST_TO_DEVICE; op <= GTSTORAGE_SYNC_WAIT_STREAM; ++op) {
        GTS_OK(gtstorage_sync(h, op, GTSTORAGE_SYNC_FLAG_FORCE));
      }
      GTS_OK(gtstorage_fill_double(h, 1.0));
      gtstorage_array a = test::c_array(nullptr, empty_shape);
      GTS_OK(gtstorage_copy_to_array(&a, h));
      GTS_OK(gtstorage_copy_from_array(h, &a));
      GTS_OK(gtstorage_release(h));
    }
    const ctl::counters c = ctl::get_counters();
    CHECK_MSG(c.memcpys == 0 && c.memcpy_2d == 0 && c.memsets == 0 && c.kernels == 0,
              "an empty storage moved data: %lld copies, %lld 2-D, %lld memsets, %lld kernels",
              static_cast<long long>(c.memcpys), static_cast<long long>(c.memcpy_2d),
              static_cast<long long>(c.memsets), static_cast<long long>(c.kernels));
  }
  {
    const double v = 2.5, other = -7.0;
    gtstorage_create_options o = test::gpu_options(nullptr, GTSTORAGE_MANAGED_MIRROR, -1, 0);
    o.init = GTSTORAGE_INIT_VALUE;
    o.fill_value = &v;
    const gtstorage_handle h = test::created(o);
    GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));
    const gtstorage_interface_info host = describe(h, GTSTORAGE_SIDE_HOST);
    std::memcpy(host.data, &other, sizeof other);  // behind the library's back
    GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, 0));
    GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0));
    double got = 0.0;
    std::memcpy(&got, host.data, sizeof got);
    CHECK_MSG(got == 2.5, "0-d value after a round trip: %g", got);
    GTS_OK(gtstorage_release(h));
  }
  {
    std::vector<gtstorage_handle> live_handles;
    for (int i = 0; i < 40; ++i) {
      const int64_t s3[3] = {3 + i % 5, 2 + i % 3, 1 + i % 4};
      gtstorage_create_options o =
          test::gpu_options(s3, i % 2 ? GTSTORAGE_MANAGED_NONE : GTSTORAGE_MANAGED_MIRROR);
      o.alignment_bytes = 24;
      o.init = GTSTORAGE_INIT_ONES;
      const gtstorage_handle h = test::created(o);
      const gtstorage_interface_info d = describe(h, GTSTORAGE_SIDE_DEVICE);
      const auto* p = static_cast<const char*>(d.data);
      for (uint32_t k = 0; k < d.ndim; ++k) p += d.aligned_index[k] * d.strides[k];
      CHECK_MSG(reinterpret_cast<uintptr_t>(p) % 24 == 0, "storage %d: aligned element at %p", i,
                static_cast<const void*>(p));
      GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_ACQUIRE_DEVICE, 0));
      GTS_OK(gtstorage_fill_double(h, 4.0));  // a device kernel where there is no host side
      live_handles.push_back(h);
    }
    for (gtstorage_handle h : live_handles) {
      gtstorage_interface_info i = describe(h, GTSTORAGE_SIDE_DEVICE);
      std::vector<double> v(static_cast<size_t>(i.nbytes / 8), 0.0);
      gtstorage_array a = test::c_array(v.data(), i.shape, i.ndim);
      GTS_OK(gtstorage_copy_to_array(&a, h));
      CHECK(count_not(v, 4.0) == 0);
      GTS_OK(gtstorage_release(h));
    }
  }
  check_nothing_left(before);
}

// Issue 23, F3: device memory the library did not allocate (a CuPy array, here the simulated
// runtime's own cudaMalloc and cudaMallocManaged) is wrapped only where the elements fit in the
// allocation the runtime reports for the address (cuMemGetAddressRange on CUDA); a larger
// shape was accepted, and a fill wrote past the end.
void foreign_device_memory_must_fit_its_allocation() {
  fresh();
  for (const bool managed : {false, true}) {
    void* p = nullptr;
    const std::size_t bytes = 1000 * sizeof(double);
    CHECK((managed ? sim::cudaMallocManaged(&p, bytes) : sim::cudaMalloc(&p, bytes)) ==
          sim::cudaSuccess);
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    int64_t n = 1001;
    w.ndim = 1;
    w.shape = &n;
    w.device_data = p;
    gtstorage_handle h = 0;
    GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "outside the allocation", gtstorage_wrap(&w, &h));
    CHECK(h == 0);
    n = 500;  // the second half, exactly
    w.device_data = static_cast<double*>(p) + 500;
    GTS_OK(gtstorage_wrap(&w, &h));
    GTS_OK(gtstorage_fill_double(h, 1.0));
    GTS_OK(gtstorage_release(h));
    w.device_data = static_cast<double*>(p) + 501;  // one past the end
    GTS_IS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "device_data", gtstorage_wrap(&w, &h));
    CHECK(ctl::take_memcheck_reports().empty());
    CHECK(sim::cudaFree(p) == sim::cudaSuccess);
  }
}

// ------------------------------------------------------------------------------------------------
// Issue 10: the device pool's reuse follows stream order, seen through storages

// The @p n doubles at device address @p p (waits for the legacy stream, as cudaMemcpy does).
std::vector<double> download(const void* p, int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n), -999.0);
  CHECK(sim::cudaMemcpy(v.data(), p, v.size() * sizeof(double), sim::cudaMemcpyDeviceToHost) ==
        sim::cudaSuccess);
  return v;
}

// The pool tests' field: 1 MiB of f8 (gt:gpu pads nothing, 64 = 2 x 32), uninitialized.
const int64_t pool_shape[3] = {64, 64, 32};
constexpr int64_t pool_n = 64 * 64 * 32;
constexpr auto pool_bytes = static_cast<std::size_t>(pool_n * 8);

gtstorage_create_options pool_options(int32_t managed) {
  gtstorage_create_options o = test::gpu_options(pool_shape, managed);
  o.init = GTSTORAGE_INIT_UNINITIALIZED;
  return o;
}

// A device storage whose stream is A is released while the application's copy on A still reads
// it (the simulator runs queued work only when something waits for it); the device then reaches
// the release (the legacy stream, where created storages allocate, is waited for, as a real GPU
// would run it at once) and a new storage of the same size is created and written on stream B.
// B is waited for first, then A: A's copy must still read the released storage's own values. A
// release that went back to the pool without waiting for A (a free queued where A's work is not
// ordered before it, or a block kept at once) hands the same block to the new storage, B's fill
// overwrites it before A's copy runs, and the copy reads 2.0 instead of 1.0.
void device_pool_reuse_follows_stream_order() {
  fresh();
  constexpr int64_t n = pool_n;
  constexpr std::size_t bytes = pool_bytes;
  const gtstorage_create_options o = pool_options(GTSTORAGE_MANAGED_NONE);
  auto read = [&](gtstorage_handle h) {
    std::vector<double> v(static_cast<std::size_t>(n), -999.0);
    gtstorage_array a = test::c_array(v.data(), pool_shape);
    GTS_OK(gtstorage_copy_to_array(&a, h));
    return v;
  };
  auto wait_legacy = [] { CHECK(sim::cudaStreamSynchronize(nullptr) == sim::cudaSuccess); };
  // Empty pools, nothing queued.
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  for (const unsigned flags : {sim::cudaStreamNonBlocking, sim::cudaStreamDefault}) {
    sim::cudaStream_t sa = nullptr, sb = nullptr;
    CHECK(sim::cudaStreamCreateWithFlags(&sa, flags) == sim::cudaSuccess);
    CHECK(sim::cudaStreamCreateWithFlags(&sb, flags) == sim::cudaSuccess);
    gtstorage_pool_stats first = GTSTORAGE_POOL_STATS_INIT;
    GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &first));
    void* scratch = nullptr;
    CHECK(sim::cudaMalloc(&scratch, bytes) == sim::cudaSuccess);
    CHECK(sim::cudaMemsetAsync(scratch, 0, bytes, sa) == sim::cudaSuccess);

    const gtstorage_handle a = test::created(o);
    GTS_OK(gtstorage_set_stream(a, reinterpret_cast<uint64_t>(sa)));
    GTS_OK(gtstorage_fill_double(a, 1.0));
    CHECK(sim::cudaStreamSynchronize(sa) == sim::cudaSuccess);
    const gtstorage_interface_info ia = describe(a, GTSTORAGE_SIDE_DEVICE);
    CHECK(ia.byte_offset == 0 && ia.nbytes == static_cast<int64_t>(bytes));
    // The application's copy on A, still queued when the storage is released.
    CHECK(sim::cudaMemcpyAsync(scratch, ia.data, bytes, sim::cudaMemcpyDeviceToDevice, sa) ==
          sim::cudaSuccess);
    CHECK(ctl::pending_operations() > 0);
    GTS_OK(gtstorage_release(a));
    wait_legacy();  // the device reaches the release (work on A is still queued)

    const gtstorage_handle b = test::created(o);
    GTS_OK(gtstorage_set_stream(b, reinterpret_cast<uint64_t>(sb)));
    GTS_OK(gtstorage_fill_double(b, 2.0));
    CHECK(sim::cudaStreamSynchronize(sb) == sim::cudaSuccess);  // B's write lands first,
    CHECK(sim::cudaStreamSynchronize(sa) == sim::cudaSuccess);  // then A's copy runs
    const std::vector<double> got = download(scratch, n);
    CHECK_MSG(count_not(got, 1.0) == 0,
              "%s streams: the copy queued on A before the release read %lld values that are not "
              "the released storage's (first %g): its block was reused out of stream order",
              flags ? "non-blocking" : "blocking", static_cast<long long>(count_not(got, 1.0)),
              got[0]);
    CHECK_MSG(count_not(read(b), 2.0) == 0, "%s streams: the new storage lost its own values",
              flags ? "non-blocking" : "blocking");
    CHECK(ctl::take_memcheck_reports().empty());

    // Once A's copy has run, the released block is handed out again (stream order delays
    // reuse, it does not prevent it): waiting for the legacy stream ran A's copy and then the
    // release, so B's storage got the block, else the next storage does.
    CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
    const gtstorage_handle c = test::created(o);
    const void* pb = describe(b, GTSTORAGE_SIDE_DEVICE).data;
    const void* pc = describe(c, GTSTORAGE_SIDE_DEVICE).data;
    CHECK_MSG(pb == ia.data || pc == ia.data,
              "%s streams: the released block was not reused once its stream had run",
              flags ? "non-blocking" : "blocking");
    gtstorage_pool_stats after = GTSTORAGE_POOL_STATS_INIT;
    GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &after));
    CHECK(after.hits == first.hits + 1);
    GTS_OK(gtstorage_release(c));
    GTS_OK(gtstorage_release(b));
    CHECK(sim::cudaFree(scratch) == sim::cudaSuccess);
    CHECK(sim::cudaStreamDestroy(sa) == sim::cudaSuccess);
    CHECK(sim::cudaStreamDestroy(sb) == sim::cudaSuccess);
    CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
    GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  }
  // A storage whose stream was destroyed before its release (no event can be recorded there):
  // the release waits for the device instead, and succeeds.
  sim::cudaStream_t gone = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&gone, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  const gtstorage_handle d = test::created(o);
  GTS_OK(gtstorage_set_stream(d, reinterpret_cast<uint64_t>(gone)));
  GTS_OK(gtstorage_fill_double(d, 3.0));
  CHECK(sim::cudaStreamDestroy(gone) == sim::cudaSuccess);
  GTS_OK(gtstorage_release(d));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  CHECK(ctl::take_memcheck_reports().empty());
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
}

// Pinned host memory: a released block goes back to the backend's host-side cache, and the next
// storage that takes it is written by the host at once (no stream orders that). A mirror storage
// with a pinned host side and stream A is released while the application's upload from that
// host side, queued on A, has not run; a new storage takes the same block and its host side is
// overwritten with 2.0. A release that kept the block without waiting for A's work lets the
// upload read 2.0 instead of the released storage's 1.0. Checked for blocking and non-blocking
// streams, and for a storage whose stream was destroyed before its release.
void pinned_pool_reuse_waits_for_streams() {
  fresh();
  constexpr int64_t n = pool_n;
  constexpr std::size_t bytes = pool_bytes;
  gtstorage_create_options o = pool_options(GTSTORAGE_MANAGED_MIRROR);
  o.host_memory = GTSTORAGE_HOST_PINNED;
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  void* scratch = nullptr;
  CHECK(sim::cudaMalloc(&scratch, bytes) == sim::cudaSuccess);
  for (const unsigned flags : {sim::cudaStreamNonBlocking, sim::cudaStreamDefault}) {
    for (const bool destroy_first : {false, true}) {
      const char* what = flags ? "non-blocking" : "blocking";
      sim::cudaStream_t sa = nullptr;
      CHECK(sim::cudaStreamCreateWithFlags(&sa, flags) == sim::cudaSuccess);
      const gtstorage_handle a = test::created(o);
      GTS_OK(gtstorage_set_stream(a, reinterpret_cast<uint64_t>(sa)));
      const gtstorage_interface_info ia = describe(a, GTSTORAGE_SIDE_HOST);
      CHECK(ia.nbytes == static_cast<int64_t>(bytes));
      auto* host_a = static_cast<double*>(ia.data);
      std::fill(host_a, host_a + n, 1.0);
      // The application's upload from the pinned host side, still queued at the release.
      CHECK(sim::cudaMemcpyAsync(scratch, ia.data, bytes, sim::cudaMemcpyHostToDevice, sa) ==
            sim::cudaSuccess);
      CHECK(ctl::pending_operations() > 0);
      if (destroy_first) CHECK(sim::cudaStreamDestroy(sa) == sim::cudaSuccess);
      GTS_OK(gtstorage_release(a));

      const gtstorage_handle b = test::created(o);
      const gtstorage_interface_info ib = describe(b, GTSTORAGE_SIDE_HOST);
      CHECK_MSG(ib.data == ia.data, "%s streams: the pinned block was not reused", what);
      auto* host_b = static_cast<double*>(ib.data);
      std::fill(host_b, host_b + n, 2.0);  // the new owner writes its host side
      CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);  // the upload runs (if not yet)
      const std::vector<double> got = download(scratch, n);
      CHECK_MSG(count_not(got, 1.0) == 0,
                "%s streams%s: the upload queued before the release read %lld values that are "
                "not the released storage's (first %g): its pinned block was reused before it ran",
                what, destroy_first ? " (destroyed)" : "",
                static_cast<long long>(count_not(got, 1.0)), got[0]);
      CHECK(ctl::take_memcheck_reports().empty());
      GTS_OK(gtstorage_release(b));
      if (!destroy_first) CHECK(sim::cudaStreamDestroy(sa) == sim::cudaSuccess);
    }
  }
  CHECK(sim::cudaFree(scratch) == sim::cudaSuccess);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
}

// CUDA's rule for streams: a stream may be destroyed once nothing uses it any more, and a real
// runtime may crash on a stream that was destroyed (the simulated one refuses such a handle and
// counts it, ctl::counters::dead_handles). A handle that leaves its stream (gtstorage_set_stream
// to another one) while the application's work on that stream still uses the storage, after
// which the application destroys the stream and then releases the storage: the release must be
// ordered after that work (device block: the copy reads the released values, not the next
// owner's; pinned block: the upload from it does), and the library must never touch the
// destroyed stream (no dead handle). Also with a view that keeps the stream a little longer.
void release_after_leaving_a_destroyed_stream() {
  fresh();
  constexpr int64_t n = pool_n;
  constexpr std::size_t bytes = pool_bytes;
  void* scratch = nullptr;
  CHECK(sim::cudaMalloc(&scratch, bytes) == sim::cudaSuccess);
  for (const bool pinned : {false, true}) {
    for (const bool view_left_later : {false, true}) {
      const char* what = pinned ? "pinned host block" : "device block";
      CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
      GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
      gtstorage_create_options o =
          pool_options(pinned ? GTSTORAGE_MANAGED_MIRROR : GTSTORAGE_MANAGED_NONE);
      if (pinned) o.host_memory = GTSTORAGE_HOST_PINNED;
      const int32_t side = pinned ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE;
      sim::cudaStream_t sa = nullptr;
      CHECK(sim::cudaStreamCreateWithFlags(&sa, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
      const gtstorage_handle a = test::created(o);
      GTS_OK(gtstorage_set_stream(a, reinterpret_cast<uint64_t>(sa)));
      const gtstorage_interface_info ia = describe(a, side);
      if (pinned) {
        std::fill(static_cast<double*>(ia.data), static_cast<double*>(ia.data) + n, 1.0);
      } else {
        GTS_OK(gtstorage_fill_double(a, 1.0));
        CHECK(sim::cudaStreamSynchronize(sa) == sim::cudaSuccess);
      }
      gtstorage_handle view = 0;
      if (view_left_later) GTS_OK(gtstorage_domain_view(a, &view));  // inherits stream A
      // The application's copy from the storage on A, queued, and still queued at the release.
      CHECK(
          sim::cudaMemcpyAsync(scratch, ia.data, bytes,
                               pinned ? sim::cudaMemcpyHostToDevice : sim::cudaMemcpyDeviceToDevice,
                               sa) == sim::cudaSuccess);
      const int64_t dead_before = ctl::get_counters().dead_handles;
      GTS_OK(gtstorage_set_stream(a, 0));  // a leaves A
      if (view_left_later) {
        GTS_OK(gtstorage_release(a));
        GTS_OK(gtstorage_release(view));  // the view leaves A last, at its release
      }
      CHECK(sim::cudaStreamDestroy(sa) == sim::cudaSuccess);  // nothing uses A any more
      CHECK(ctl::pending_operations() > 0);
      if (!view_left_later) GTS_OK(gtstorage_release(a));
      CHECK(sim::cudaStreamSynchronize(nullptr) == sim::cudaSuccess);

      const gtstorage_handle b = test::created(o);
      const gtstorage_interface_info ib = describe(b, side);
      if (pinned) {
        CHECK_MSG(ib.data == ia.data, "%s: not reused", what);
        std::fill(static_cast<double*>(ib.data), static_cast<double*>(ib.data) + n, 2.0);
      } else {
        GTS_OK(gtstorage_fill_double(b, 2.0));
      }
      CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);  // A's copy runs (if not yet)
      const std::vector<double> got = download(scratch, n);
      CHECK_MSG(count_not(got, 1.0) == 0,
                "%s%s: the copy queued on the stream the storage left read %lld values that are "
                "not the released storage's (first %g)",
                what, view_left_later ? " (view)" : "", static_cast<long long>(count_not(got, 1.0)),
                got[0]);
      CHECK_MSG(ctl::get_counters().dead_handles == dead_before,
                "%s%s: the library used the destroyed stream %lld time(s)", what,
                view_left_later ? " (view)" : "",
                static_cast<long long>(ctl::get_counters().dead_handles - dead_before));
      CHECK(ctl::take_memcheck_reports().empty());
      GTS_OK(gtstorage_release(b));
    }
  }
  CHECK(sim::cudaFree(scratch) == sim::cudaSuccess);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
}

// A handle moved over more streams than the buffer keeps marks for (eight): the oldest mark is
// waited for on the host, every stream is destroyed as soon as the handle left it, and the
// release still uses no dead handle and frees everything.
void many_streams_left_and_destroyed() {
  fresh();
  const gtstorage_create_options o = pool_options(GTSTORAGE_MANAGED_NONE);
  const gtstorage_handle h = test::created(o);
  const int64_t dead_before = ctl::get_counters().dead_handles;
  for (int i = 0; i < 11; ++i) {
    sim::cudaStream_t st = nullptr;
    CHECK(sim::cudaStreamCreateWithFlags(&st, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
    GTS_OK(gtstorage_set_stream(h, reinterpret_cast<uint64_t>(st)));
    GTS_OK(gtstorage_fill_double(h, static_cast<double>(i)));  // queued on that stream
    GTS_OK(gtstorage_set_stream(h, 0));
    CHECK(sim::cudaStreamDestroy(st) == sim::cudaSuccess);
  }
  std::vector<double> v(static_cast<std::size_t>(pool_n), -1.0);
  gtstorage_array a = test::c_array(v.data(), pool_shape);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  CHECK(count_not(v, 10.0) == 0);
  GTS_OK(gtstorage_release(h));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  CHECK_MSG(ctl::get_counters().dead_handles == dead_before,
            "the library used a destroyed stream %lld time(s)",
            static_cast<long long>(ctl::get_counters().dead_handles - dead_before));
  CHECK(ctl::take_memcheck_reports().empty());
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
}

// gtstorage_pool_trim(ALL, 0) right after the last release gives everything back: the runtime
// releases only blocks whose stream-ordered free it has seen complete (a real GPU left a 32 MiB
// block reserved this way), so the trim waits for the queued frees first.
void trim_right_after_a_release_frees_everything() {
  fresh();
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  gtstorage_pool_stats before = GTSTORAGE_POOL_STATS_INIT;  // earlier tests' storages in use
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &before));
  const int64_t blocks_before = ctl::live_allocations().blocks;
  const gtstorage_create_options o = pool_options(GTSTORAGE_MANAGED_NONE);
  const gtstorage_handle h = test::created(o);
  GTS_OK(gtstorage_fill_double(h, 1.0));
  GTS_OK(gtstorage_release(h));  // its free is queued on the device, nothing waited for it
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  gtstorage_pool_stats st = GTSTORAGE_POOL_STATS_INIT;
  GTS_OK(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &st));
  CHECK_MSG(st.in_use_bytes == before.in_use_bytes && st.held_bytes == 0,
            "after a trim to 0: %lld bytes in use (%lld before the storage), %lld held",
            static_cast<long long>(st.in_use_bytes), static_cast<long long>(before.in_use_bytes),
            static_cast<long long>(st.held_bytes));
  CHECK(ctl::live_allocations().blocks == blocks_before);
}

}  // namespace

int main() {
  release_waits_for_async_sync();
  host_access_waits_for_async_sync();
  unified_storages_wait_for_their_stream();
  device_minus_one_is_the_threads_device();
  wrapped_pointers_report_their_device_and_kind();
  emulated_descriptors_say_what_they_are();
  device_errors_have_statuses();
  old_driver_is_its_own_status();
  scalars_empties_and_odd_alignments();
  foreign_device_memory_must_fit_its_allocation();
  device_pool_reuse_follows_stream_order();
  pinned_pool_reuse_waits_for_streams();
  release_after_leaving_a_destroyed_stream();
  many_streams_left_and_destroyed();
  trim_right_after_a_release_frees_everything();
  return test::report("test_emulated_storage");
}
