// Error-injection sweep on the emulated device: for every class of runtime call the simulated
// CUDA runtime can make fail (control.hpp: allocation, copy, memset, launch, synchronize,
// stream and event creation, event record, prefetch), and for n = 1, 2, ... until the workload
// no longer reaches an n-th call of that class, the n-th such call fails (synchronously, and for
// the queued kinds also when the work runs, which makes the error sticky) while a representative
// storage workload runs through the public C API: mirror, device-only, unified and pinned
// storages on two devices, fills, copies (across layouts and devices), sync_to and
// sync_to_async, views, a wrapped host+device pair and a wrapped device pointer, descriptors,
// DLPack export and re-import, release.
//
// Every call must return GTSTORAGE_OK or a documented error status (never crash, hang or report
// an internal error), a failed call must leave a message in gtstorage_last_error(), and once
// every handle is released the library's live handles, buffers and bytes and the runtime's live
// blocks are back where they started, with no memcheck report: an error half-way through a call
// leaks nothing and frees nothing twice. When every call of a run succeeded (an injected
// out-of-memory can be absorbed by the backend's trim-and-retry), the values read back are the
// ones written.
#include <dlpack/dlpack.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../support.hpp"
#include "device/device_backend.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"
#include "gtstorage/gtstorage_experimental.h"

namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

const int64_t shape[3] = {9, 7, 5};
constexpr int64_t n_elements = 9 * 7 * 5;
const int64_t halo[6] = {1, 1, 1, 1, 0, 0};

// One run of the workload: the calls made, those that failed, and the first failure.
struct run {
  const char* label = "";
  int calls = 0;
  int failed = 0;
  std::string first_failure;
};

// GTSTORAGE_SWEEP_TRACE=1 prints every call of the workload and its status.
const bool trace = std::getenv("GTSTORAGE_SWEEP_TRACE") != nullptr;

bool documented_error(int rc) {
  return (rc <= GTSTORAGE_ERROR_INVALID_ARGUMENT && rc >= GTSTORAGE_ERROR_DRIVER_TOO_OLD);
}

// Checks the status of one C API call: OK, or a documented error with a message.
int step(run& r, const char* what, int rc) {
  ++r.calls;
  if (trace) {
    std::printf("  %s: %s%s%s\n", what, gtstorage_status_name(rc), rc != 0 ? ": " : "",
                rc != 0 ? gtstorage_last_error() : "");
  }
  if (rc == GTSTORAGE_OK) return rc;
  ++r.failed;
  const char* msg = gtstorage_last_error();
  if (r.first_failure.empty()) {
    r.first_failure = std::string(what) + " -> " + gtstorage_status_name(rc) + ": " + msg;
  }
  CHECK_MSG(documented_error(rc), "%s: %s returned %d (%s): %s", r.label, what, rc,
            gtstorage_status_name(rc), msg);
  CHECK_MSG(msg != nullptr && msg[0] != '\0', "%s: %s failed with %s but left no message", r.label,
            what, gtstorage_status_name(rc));
  return rc;
}
#define STEP(call) step(r, #call, (call))

gtstorage_handle create(run& r, const char* what, int32_t managed, int32_t device_id,
                        int32_t host_memory = GTSTORAGE_HOST_PAGEABLE,
                        const int32_t* layout = nullptr) {
  gtstorage_create_options o = test::gpu_options(shape, managed, device_id);
  o.halo = halo;
  o.layout = layout;
  o.host_memory = host_memory;
  o.init = GTSTORAGE_INIT_ZEROS;
  gtstorage_handle h = 0;
  if (step(r, what, gtstorage_create(&o, &h)) != GTSTORAGE_OK) return 0;
  return h;
}

// Reads a storage into a C-ordered array; false if the read failed (values then not checked).
bool read(run& r, gtstorage_handle h, std::vector<double>& out) {
  out.assign(n_elements, -999.0);
  if (h == 0) return false;
  gtstorage_array a = test::c_array(out.data(), shape);
  return STEP(gtstorage_copy_to_array(&a, h)) == GTSTORAGE_OK;
}

int64_t count_not(const std::vector<double>& v, double want) {
  int64_t n = 0;
  for (double x : v) n += x != want;
  return n;
}

struct wrapped_host {
  std::vector<double> data = std::vector<double>(n_elements, 0.0);
  int released = 0;
};
void on_release(void* user) {
  ++static_cast<wrapped_host*>(user)->released;
}

struct baseline {
  int64_t handles, buffers, host_bytes, device_bytes, blocks, block_bytes, refused;
};
baseline measure() {
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  CHECK(gtstorage_get_stats(&s) == GTSTORAGE_OK);
  const ctl::live_memory m = ctl::live_allocations();
  return {s.live_handles, s.live_buffers, s.host_bytes,  s.device_bytes,
          m.blocks,       m.bytes,        m.free_refused};
}

// Brings the device back after a run (a sticky error stays until cleared), lets queued frees
// run and gives the pools' kept memory back, so that what is left is what leaked.
void settle() {
  ctl::clear_failures();
  for (int d = 0; d < 2; ++d) {
    sim::cudaSetDevice(d);
    (void)sim::cudaDeviceSynchronize();
  }
  sim::cudaSetDevice(0);
  (void)sim::cudaGetLastError();
  CHECK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0) == GTSTORAGE_OK);
  CHECK(gtstorage_device_set_backend("emulated") == GTSTORAGE_OK);
}

// The workload. @p app_stream is a non-blocking stream of device 0 (the application's).
void workload(run& r, sim::cudaStream_t app_stream) {
  std::vector<gtstorage_handle> handles;
  auto keep = [&](gtstorage_handle h) {
    if (h != 0) handles.push_back(h);
    return h;
  };
  const int32_t k_first[3] = {0, 1, 2};  // another layout than gt:gpu's (K contiguous)
  const gtstorage_handle mirror = keep(create(r, "create mirror", GTSTORAGE_MANAGED_MIRROR, -1));
  const gtstorage_handle dev = keep(create(r, "create device-only", GTSTORAGE_MANAGED_NONE, 0));
  const gtstorage_handle uni = keep(create(r, "create unified", GTSTORAGE_MANAGED_UNIFIED, 0));
  const gtstorage_handle pinned =
      keep(create(r, "create pinned mirror", GTSTORAGE_MANAGED_MIRROR, 0, GTSTORAGE_HOST_PINNED));
  const gtstorage_handle dev1 =
      keep(create(r, "create device-only on device 1", GTSTORAGE_MANAGED_NONE, 1,
                  GTSTORAGE_HOST_PAGEABLE, k_first));

  // Mirror: host fill, synchronous upload; a view's fill (host), then an asynchronous upload.
  STEP(gtstorage_fill_double(mirror, 1.0));
  STEP(gtstorage_sync_to(mirror, GTSTORAGE_SIDE_DEVICE, 0));
  gtstorage_handle inner = 0;
  if (STEP(gtstorage_domain_view(mirror, &inner)) == GTSTORAGE_OK) keep(inner);
  STEP(gtstorage_fill_double(inner, 5.0));
  STEP(gtstorage_sync_to_async(inner, GTSTORAGE_SIDE_DEVICE, 0, 0));

  // Device-only storages: a fill kernel, a copy across devices and layouts.
  STEP(gtstorage_fill_double(dev, 2.0));
  STEP(gtstorage_copy(dev1, dev));
  // The device-1 storage used with the application's stream of device 0 (joined by events).
  STEP(gtstorage_set_stream(dev1, reinterpret_cast<uint64_t>(app_stream)));
  gtstorage_handle t = 0;
  const int32_t perm[3] = {2, 0, 1};
  if (STEP(gtstorage_transpose(dev1, perm, 3, &t)) == GTSTORAGE_OK) keep(t);
  STEP(gtstorage_wait_stream(dev1, 0));

  // Unified memory on the application's stream: a host write, prefetches both ways.
  STEP(gtstorage_set_stream(uni, reinterpret_cast<uint64_t>(app_stream)));
  {
    std::vector<double> fours(n_elements, 4.0);
    gtstorage_array a = test::c_array(fours.data(), shape);
    STEP(gtstorage_copy_from_array(uni, &a));
  }
  STEP(gtstorage_sync_to(uni, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE));
  STEP(gtstorage_sync_to(uni, GTSTORAGE_SIDE_HOST, GTSTORAGE_SYNC_FLAG_FORCE));

  // Pinned mirror on the application's stream: device fill (copied from dev), download.
  STEP(gtstorage_set_stream(pinned, reinterpret_cast<uint64_t>(app_stream)));
  STEP(gtstorage_fill_double(pinned, 3.0));
  STEP(gtstorage_sync_to_async(pinned, GTSTORAGE_SIDE_DEVICE, 0, 0));
  STEP(gtstorage_modify(pinned, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE));
  STEP(gtstorage_sync_to_async(pinned, GTSTORAGE_SIDE_HOST, 0, 0));

  // Wraps: the device side of dev (a device pointer), and a host+device pair whose device side
  // is the mirror's, released with an upload in flight.
  gtstorage_handle wrapped_dev = 0;
  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  if (dev != 0 && STEP(gtstorage_interface(dev, GTSTORAGE_SIDE_DEVICE, &info)) == GTSTORAGE_OK) {
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = shape;
    w.device_data = info.data;
    w.device_strides = info.strides;
    if (STEP(gtstorage_wrap(&w, &wrapped_dev)) == GTSTORAGE_OK) keep(wrapped_dev);
  }
  wrapped_host host;
  gtstorage_handle pair = 0;
  if (mirror != 0 &&
      STEP(gtstorage_interface(mirror, GTSTORAGE_SIDE_DEVICE, &info)) == GTSTORAGE_OK) {
    for (int64_t i = 0; i < n_elements; ++i) host.data[i] = 6.0;
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = shape;
    w.data = host.data.data();
    w.device_data = info.data;
    w.device_strides = info.strides;
    w.sync_state = GTSTORAGE_SYNC_HOST_DIRTY;
    w.release = on_release;
    w.user_data = &host;
    if (STEP(gtstorage_wrap(&w, &pair)) == GTSTORAGE_OK) {
      STEP(gtstorage_sync_to_async(pair, GTSTORAGE_SIDE_DEVICE, 0, 0));
      STEP(gtstorage_release(pair));
      CHECK_MSG(host.released == 1, "%s: wrapped pair released %d times", r.label, host.released);
    }
  }

  // Descriptors and DLPack: export, and import of the export (the deleter runs at release).
  for (gtstorage_handle h : {mirror, dev, uni, pinned, dev1, t}) {
    if (h == 0) continue;
    gtstorage_interface_info i = GTSTORAGE_INTERFACE_INFO_INIT;
    STEP(gtstorage_interface(h, GTSTORAGE_SIDE_DEVICE, &i));
  }
  DLManagedTensorVersioned* v = nullptr;
  if (dev1 != 0 &&
      STEP(gtstorage_to_dlpack_versioned(dev1, GTSTORAGE_SIDE_DEVICE, &v)) == GTSTORAGE_OK) {
    gtstorage_handle imported = 0;
    if (STEP(gtstorage_wrap_dlpack(v, GTSTORAGE_DLPACK_VERSIONED, nullptr, &imported)) ==
        GTSTORAGE_OK) {
      keep(imported);
    } else {
      v->deleter(v);  // refused: still the caller's
    }
  }
  DLManagedTensor* legacy = nullptr;
  if (mirror != 0 &&
      STEP(gtstorage_to_dlpack(mirror, GTSTORAGE_SIDE_HOST, &legacy)) == GTSTORAGE_OK) {
    legacy->deleter(legacy);
  }

  // Values, checked only when nothing failed (a failed call may legitimately leave old data).
  std::vector<double> got;
  const bool read_m = read(r, mirror, got);
  if (r.failed == 0 && read_m) {
    // The halo of I and J holds 1, the interior 5 (shape 9 x 7 x 5, halo 1 in I and J).
    int64_t wrong = 0;
    for (int64_t i = 0; i < 9; ++i)
      for (int64_t j = 0; j < 7; ++j)
        for (int64_t k = 0; k < 5; ++k) {
          const bool interior = i >= 1 && i < 8 && j >= 1 && j < 6;
          wrong += got[(i * 7 + j) * 5 + k] != (interior ? 5.0 : 1.0);
        }
    CHECK_MSG(wrong == 0, "%s: mirror: %lld wrong values", r.label, static_cast<long long>(wrong));
  }
  struct expected {
    const char* name;
    gtstorage_handle h;
    double value;
  };
  const expected expect[] = {{"device-only", dev, 2.0},
                             {"device 1", dev1, 2.0},
                             {"unified", uni, 4.0},
                             {"pinned mirror", pinned, 3.0},
                             {"wrapped device pointer", wrapped_dev, 2.0}};
  for (const expected& e : expect) {
    const bool ok = read(r, e.h, got);
    if (r.failed == 0 && ok) {
      CHECK_MSG(count_not(got, e.value) == 0, "%s: %s: %lld values differ from %g (first: %g)",
                r.label, e.name, static_cast<long long>(count_not(got, e.value)), e.value, got[0]);
    }
  }
  // The device side of the mirror got the interior's 5 through the view's upload; the wrapped
  // pair's upload (6 everywhere) came last.
  if (mirror != 0) {
    STEP(gtstorage_modify(mirror, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE));
    const bool ok = read(r, mirror, got);
    if (r.failed == 0 && ok) {
      CHECK_MSG(count_not(got, 6.0) == 0, "%s: the wrapped pair's upload did not land", r.label);
    }
  }
  for (auto it = handles.rbegin(); it != handles.rend(); ++it) STEP(gtstorage_release(*it));
}

struct sweep_class {
  ctl::call_class c;
  std::string name;
  sim::cudaError_t error;
  bool async;
};

// The sweeps, one a class of runtime calls, each failing at once with its own error; a class
// that queues work is swept again as <name>_async, failing later, when the queued work runs (a
// sticky illegal address). The stream class comes first, while the backend still has to make
// its helper streams (it keeps them).
std::vector<sweep_class> sweep_classes() {
  struct call_kind {
    ctl::call_class c;
    const char* name;
    sim::cudaError_t error;
    bool queues_work;
  };
  const call_kind kinds[] = {
      {ctl::call_class::stream_create, "stream_create", sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::event_create, "event_create", sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::event_record, "event_record", sim::cudaErrorInvalidResourceHandle, false},
      {ctl::call_class::alloc, "alloc", sim::cudaErrorMemoryAllocation, false},
      {ctl::call_class::memcpy, "memcpy", sim::cudaErrorInvalidValue, true},
      {ctl::call_class::memset, "memset", sim::cudaErrorInvalidValue, true},
      {ctl::call_class::launch, "launch", sim::cudaErrorLaunchOutOfResources, true},
      {ctl::call_class::synchronize, "synchronize", sim::cudaErrorLaunchFailure, false},
      {ctl::call_class::prefetch, "prefetch", sim::cudaErrorInvalidValue, true},
  };
  std::vector<sweep_class> classes;
  for (const call_kind& k : kinds) {
    classes.push_back({k.c, k.name, k.error, false});
    if (k.queues_work) {
      classes.push_back({k.c, std::string(k.name) + "_async", sim::cudaErrorIllegalAddress, true});
    }
  }
  return classes;
}

}  // namespace

int main(int argc, char** argv) {
  // test_emulated_error_sweep [CLASS [N]]: only the sweep of CLASS (its name below), only run N.
  const std::string only = argc > 1 ? argv[1] : "";
  const int only_n = argc > 2 ? std::atoi(argv[2]) : 0;
  if (trace) std::setvbuf(stdout, nullptr, _IONBF, 0);  // the trace survives a crash
  ctl::set_machine(ctl::machine{});
  ctl::clear_failures();
  gts::device::set_emulated_device_count(2);
  CHECK(gtstorage_device_set_backend("emulated") == GTSTORAGE_OK);
  sim::cudaSetDevice(0);
  sim::cudaStream_t app = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&app, sim::cudaStreamNonBlocking) == sim::cudaSuccess);

  // The workload runs once without injection after the stream class, and must pass its checks.
  const std::vector<sweep_class> classes = sweep_classes();
  constexpr int max_n = 400;
  int total_runs = 0;
  bool clean_run_done = false;
  for (const sweep_class& k : classes) {
    if (k.c != ctl::call_class::stream_create && !clean_run_done) {
      clean_run_done = true;
      run r;
      r.label = "no injection";
      workload(r, app);
      CHECK_MSG(r.failed == 0, "the workload fails without injection: %s", r.first_failure.c_str());
      std::printf("workload: %d calls through the C API\n", r.calls);
      settle();
    }
    if (!only.empty() && only != k.name) continue;
    int n = only_n > 0 ? only_n : 1, hit = 0, failed_runs = 0;
    for (; n <= max_n; ++n) {
      char label[96];
      std::snprintf(label, sizeof label, "%s #%d", k.name.c_str(), n);
      (void)ctl::take_memcheck_reports();
      const baseline start = measure();
      run r;
      r.label = label;
      ctl::fail_nth(k.c, n, k.error, k.async);
      workload(r, app);
      const bool reached = !ctl::injection_pending(k.c);
      settle();
      ++total_runs;
      const baseline end = measure();
      CHECK_MSG(end.handles == start.handles && end.buffers == start.buffers,
                "%s: %lld handles and %lld buffers live after the run (%lld, %lld before); "
                "first failure: %s",
                label, static_cast<long long>(end.handles), static_cast<long long>(end.buffers),
                static_cast<long long>(start.handles), static_cast<long long>(start.buffers),
                r.first_failure.c_str());
      CHECK_MSG(end.host_bytes == start.host_bytes && end.device_bytes == start.device_bytes,
                "%s: host/device bytes %lld/%lld after the run, %lld/%lld before; first "
                "failure: %s",
                label, static_cast<long long>(end.host_bytes),
                static_cast<long long>(end.device_bytes), static_cast<long long>(start.host_bytes),
                static_cast<long long>(start.device_bytes), r.first_failure.c_str());
      // A device that failed for good (a sticky error) refuses every free, as a GPU whose
      // context is lost does: those blocks stay, and only those.
      CHECK_MSG(end.blocks - end.refused == start.blocks - start.refused,
                "%s: %lld runtime blocks (%lld bytes) live after the run (%lld of them refused "
                "by a failed device), %lld (%lld) before; first failure: %s",
                label, static_cast<long long>(end.blocks), static_cast<long long>(end.block_bytes),
                static_cast<long long>(end.refused - start.refused),
                static_cast<long long>(start.blocks), static_cast<long long>(start.block_bytes),
                r.first_failure.c_str());
      CHECK_MSG(k.async || end.refused == start.refused, "%s: frees refused without a sticky error",
                label);
      const std::vector<std::string> reports = ctl::take_memcheck_reports();
      CHECK_MSG(reports.empty(), "%s: memcheck: %s", label,
                reports.empty() ? "" : reports.front().c_str());
      if (!reached) break;  // fewer than n calls of this class: the sweep is complete
      ++hit;
      failed_runs += r.failed > 0;
      if (only_n > 0) break;
    }
    CHECK_MSG(n <= max_n, "%s: still injecting after %d runs", k.name.c_str(), max_n);
    CHECK_MSG(hit > 0, "%s: the workload never made such a call", k.name.c_str());
    std::printf("%-14s: %3d injection points, %3d runs with a failed call\n", k.name.c_str(), hit,
                failed_runs);
  }
  std::printf("%d runs\n", total_runs);
  CHECK(sim::cudaStreamDestroy(app) == sim::cudaSuccess);
  return test::report("test_emulated_error_sweep");
}
