// Work the library leaves queued on a stream when a call returns (docs/architecture.md, "Work
// left queued"): every such entry point must be waited for by the release of the memory it
// touches, by the reuse of a pooled block, by host access through the library and by the next
// synchronous operation. Issue 23, F6: an asynchronous gtstorage_copy_sides into a host side
// recorded nothing, so the destination's release freed (or handed to the next storage) host
// memory the queued copy wrote later.
//
// The simulated runtime runs queued work only when something waits for it (deferred
// execution), so a release that does not wait lets the next storage take the block, write it,
// and the copy then lands in that storage (or reads its values). Each row is checked for the
// memories a host side can be (pageable, pinned, unified), both directions, the destination and
// the source released right after the call, with the block reused from the pool (the values
// show it) and with pooling off (AddressSanitizer and the simulator's memcheck show a use after
// free).
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#define GTSTORAGE_NO_DEPRECATION_WARNINGS  // before support.hpp, which includes the C API's header
#include "../support.hpp"
#include "device/device_backend.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"
#include "gtstorage/gtstorage_experimental.h"

namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

// 1 MiB of f8 in gt:gpu's layout on every kind of memory, so host and device blocks are the
// same size and a copy between them is one contiguous transfer or a strided one alike.
const int64_t shape[3] = {64, 64, 32};
constexpr int64_t n_elements = 64 * 64 * 32;

/// The memory of one side of the copy.
enum class memory { device, pageable, pinned, unified, mirror_pageable, mirror_pinned };

const char* name_of(memory m) {
  // Indexed by memory, in its order.
  static const char* const names[] = {"device",  "pageable host",          "pinned host",
                                      "unified", "mirror (pageable host)", "mirror (pinned host)"};
  static_assert(std::size(names) == static_cast<std::size_t>(memory::mirror_pinned) + 1);
  return names[static_cast<std::size_t>(m)];
}

// The side a copy uses of a storage of @p m: the device for device memory, else the host (a
// unified storage's host side is its one buffer).
int32_t side_of(memory m) {
  return m == memory::device ? GTSTORAGE_SIDE_DEVICE : GTSTORAGE_SIDE_HOST;
}

gtstorage_handle create(memory m, bool pooled, int32_t init = GTSTORAGE_INIT_ZEROS) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = shape;
  o.preset = "gt:gpu";
  o.init = init;
  o.pool = pooled ? GTSTORAGE_POOL_DEFAULT : GTSTORAGE_POOL_OFF;
  switch (m) {
    case memory::device:
      o.device = GTSTORAGE_DEVICE_GPU;
      break;
    case memory::pageable:
      o.device = GTSTORAGE_DEVICE_CPU;
      break;
    case memory::pinned:
      o.device = GTSTORAGE_DEVICE_CPU;
      o.host_memory = GTSTORAGE_HOST_PINNED;
      break;
    case memory::unified:
      o.device = GTSTORAGE_DEVICE_GPU;
      o.managed = GTSTORAGE_MANAGED_UNIFIED;
      break;
    case memory::mirror_pageable:
    case memory::mirror_pinned:
      o.device = GTSTORAGE_DEVICE_GPU;
      o.managed = GTSTORAGE_MANAGED_MIRROR;
      if (m == memory::mirror_pinned) o.host_memory = GTSTORAGE_HOST_PINNED;
      break;
  }
  const gtstorage_handle h = test::created(o);
  return h;
}

void* data_of(gtstorage_handle h, int32_t side) {
  void* p = nullptr;
  GTS_OK(gtstorage_data(h, side, &p));
  return p;
}

// Every element of side @p side of @p h, read without the library's help (a device side
// through the runtime, which waits for the legacy stream as cudaMemcpy does).
std::vector<double> raw_read(gtstorage_handle h, int32_t side) {
  std::vector<double> v(static_cast<std::size_t>(n_elements), -999.0);
  const void* p = data_of(h, side);
  CHECK(sim::cudaMemcpy(v.data(), p, v.size() * sizeof(double), sim::cudaMemcpyDefault) ==
        sim::cudaSuccess);
  return v;
}

int64_t count_not(const std::vector<double>& v, double want) {
  int64_t n = 0;
  for (double x : v) n += x != want;
  return n;
}

// Side @p side of a new storage of @p m holding 1.0 everywhere (and nothing queued).
gtstorage_handle source(memory m, int32_t side, bool pooled) {
  const gtstorage_handle h = create(m, pooled, GTSTORAGE_INIT_UNINITIALIZED);
  if (side == GTSTORAGE_SIDE_DEVICE) {
    gtstorage_handle alias = 0;  // the device side alone, filled on the device
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = shape;
    w.device_data = data_of(h, GTSTORAGE_SIDE_DEVICE);
    GTS_OK(gtstorage_wrap(&w, &alias));
    GTS_OK(gtstorage_fill_double(alias, 1.0));
    GTS_OK(gtstorage_release(alias));
  } else {
    auto* p = static_cast<double*>(data_of(h, GTSTORAGE_SIDE_HOST));
    for (int64_t i = 0; i < n_elements; ++i) p[i] = 1.0;
  }
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  return h;
}

// A device block goes back to the pool in stream order, on the legacy stream where storages
// allocate: the device reaches the release, as a GPU would at once (the simulator runs queued
// work only when something waits). Work queued on the application's non-blocking stream stays
// queued unless the release was ordered after it.
void reach_the_release() {
  CHECK(sim::cudaStreamSynchronize(nullptr) == sim::cudaSuccess);
}

// What a row starts from: empty pools, no memcheck report, and a non-blocking stream of the
// application for the row's queued work (end() destroys it before its checks).
struct clean_slate {
  int64_t dead_handles;
  sim::cudaStream_t stream;
};

clean_slate begin() {
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  GTS_OK(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0));
  (void)ctl::take_memcheck_reports();
  const int64_t dead_handles = ctl::get_counters().dead_handles;
  sim::cudaStream_t s = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&s, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  return {dead_handles, s};
}

void end(const clean_slate& s, const std::string& row) {
  CHECK(sim::cudaStreamDestroy(s.stream) == sim::cudaSuccess);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  const std::vector<std::string> reports = ctl::take_memcheck_reports();
  CHECK_MSG(reports.empty(), "%s: memcheck: %s", row.c_str(),
            reports.empty() ? "" : reports.front().c_str());
  CHECK_MSG(ctl::get_counters().dead_handles == s.dead_handles, "%s: a dead stream or event used",
            row.c_str());
  gtstorage_stats st;
  st.struct_size = sizeof st;
  GTS_OK(gtstorage_get_stats(&st));
  CHECK_MSG(st.live_handles == 0, "%s: %lld handles left", row.c_str(),
            static_cast<long long>(st.live_handles));
}

// ------------------------------------------------------------------------------------------------
// gtstorage_copy_sides with GTSTORAGE_COPY_FLAG_ASYNC between two storages

// The copy from @p from (1.0) to @p to (0.0) is queued on a stream of the application; then
// the destination (or the source) is released and a new storage of the same memory takes the
// block the release gave back. Whatever order the device then runs things in, the surviving
// storage and the new one hold what they should: the release waited for the copy.
void async_copy_then_release(memory from, memory to, bool release_destination, bool pooled) {
  const std::string row = std::string("copy_sides async ") + name_of(from) + " -> " + name_of(to) +
                          ", " + (release_destination ? "destination" : "source") + " released, " +
                          (pooled ? "pooled reuse" : "pool off");
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const gtstorage_handle src = source(from, side_of(from), pooled);
  const gtstorage_handle dst = create(to, pooled);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  const memory released = release_destination ? to : from;
  const gtstorage_handle gone = release_destination ? dst : src;
  const gtstorage_handle kept = release_destination ? src : dst;
  const void* gone_block = data_of(gone, side_of(released));
  GTS_OK(gtstorage_copy_sides(dst, side_of(to), src, side_of(from), reinterpret_cast<uint64_t>(s),
                              GTSTORAGE_COPY_FLAG_ASYNC));
  GTS_OK(gtstorage_release(gone));
  reach_the_release();
  // The next storage of that memory, zeroed: from the pool, it takes the released block.
  const gtstorage_handle next = create(released, pooled);
  const bool reused = data_of(next, side_of(released)) == gone_block;
  if (pooled && released != memory::unified) {
    CHECK_MSG(reused, "%s: the released block was not reused (the row proves nothing)",
              row.c_str());
  }
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);  // anything still queued runs
  CHECK_MSG(count_not(raw_read(next, side_of(released)), 0.0) == 0,
            "%s: the next storage of the released block lost its zeros to the queued copy",
            row.c_str());
  // The source keeps its 1.0; the destination got them from the copy.
  const int64_t wrong = count_not(raw_read(kept, side_of(release_destination ? from : to)), 1.0);
  CHECK_MSG(wrong == 0, "%s: %lld values of the surviving storage are wrong", row.c_str(),
            static_cast<long long>(wrong));
  GTS_OK(gtstorage_release(next));
  GTS_OK(gtstorage_release(kept));
  end(slate, row);
}

// One mirror storage, a transfer between its sides queued asynchronously by @p queue (given
// the storage, the side it moves from, and the stream), then the storage released at once: the
// next mirror of that memory takes both blocks from the pools and must keep its zeros.
template <class Queue>
void mirror_row(const std::string& row, memory m, int32_t to_side, bool pooled, const char* what,
                Queue&& queue) {
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const int32_t from_side =
      to_side == GTSTORAGE_SIDE_HOST ? GTSTORAGE_SIDE_DEVICE : GTSTORAGE_SIDE_HOST;
  const gtstorage_handle h = source(m, from_side, pooled);
  const void* host_block = data_of(h, GTSTORAGE_SIDE_HOST);
  const void* device_block = data_of(h, GTSTORAGE_SIDE_DEVICE);
  queue(h, from_side, reinterpret_cast<uint64_t>(s));
  GTS_OK(gtstorage_release(h));
  reach_the_release();
  const gtstorage_handle next = create(m, pooled);
  if (pooled) {
    CHECK_MSG(data_of(next, GTSTORAGE_SIDE_HOST) == host_block &&
                  data_of(next, GTSTORAGE_SIDE_DEVICE) == device_block,
              "%s: the released blocks were not reused", row.c_str());
  }
  // A new mirror is written on its host side (INIT_ZEROS, host dirty): bring the device along.
  GTS_OK(gtstorage_sync_to(next, GTSTORAGE_SIDE_DEVICE, 0));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  for (const int32_t side : {GTSTORAGE_SIDE_HOST, GTSTORAGE_SIDE_DEVICE}) {
    CHECK_MSG(count_not(raw_read(next, side), 0.0) == 0,
              "%s: the next storage's %s side lost its zeros to the queued %s", row.c_str(),
              side == GTSTORAGE_SIDE_HOST ? "host" : "device", what);
  }
  GTS_OK(gtstorage_release(next));
  end(slate, row);
}

std::string mirror_row_name(const char* call, memory m, int32_t to_side, bool pooled) {
  return std::string(call) + name_of(m) + " to " +
         (to_side == GTSTORAGE_SIDE_HOST ? "host" : "device") + ", " +
         (pooled ? "pooled reuse" : "pool off");
}

// The minimal sequence: one mirror storage, its device side copied into its host side
// asynchronously (and the other way), then the storage released at once.
void async_copy_within_a_mirror_then_release(memory m, int32_t to_side, bool pooled) {
  mirror_row(
      mirror_row_name("copy_sides async within a ", m, to_side, pooled), m, to_side, pooled, "copy",
      [&](gtstorage_handle h, int32_t from_side, uint64_t stream) {
        GTS_OK(gtstorage_copy_sides(h, to_side, h, from_side, stream, GTSTORAGE_COPY_FLAG_ASYNC));
      });
}

// ------------------------------------------------------------------------------------------------
// gtstorage_sync_to_async (and the deprecated gtstorage_sync_async) on a mirror

void async_sync_then_release(memory m, int32_t to_side, bool pooled) {
  mirror_row(mirror_row_name("sync_to_async ", m, to_side, pooled), m, to_side, pooled, "transfer",
             [&](gtstorage_handle h, int32_t from_side, uint64_t stream) {
               GTS_OK(gtstorage_modify(h, from_side, GTSTORAGE_SYNC_FLAG_FORCE));
               GTS_OK(gtstorage_sync_to_async(h, to_side, 0, stream));
             });
}

// Unified memory: sync_to_async prefetches the pages on the stream; the release (cudaFree, or a
// wrapped buffer's owner) must not come before the prefetch.
void async_prefetch_then_release(int32_t to_side) {
  const std::string row = std::string("sync_to_async unified to ") +
                          (to_side == GTSTORAGE_SIDE_HOST ? "host" : "device");
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const gtstorage_handle h = create(memory::unified, true);
  GTS_OK(gtstorage_sync_to_async(h, to_side, GTSTORAGE_SYNC_FLAG_FORCE,
                                 reinterpret_cast<uint64_t>(s)));
  CHECK(ctl::pending_operations() > 0);
  GTS_OK(gtstorage_release(h));
  CHECK_MSG(ctl::pending_operations() == 0, "%s: the release left the prefetch queued",
            row.c_str());
  end(slate, row);
}

// ------------------------------------------------------------------------------------------------
// Host access, the next synchronous operation and descriptors after an async copy

// An async device -> host copy into a host-only storage on a stream that is not the storage's:
// every way of reaching the memory afterwards sees the copied values (or, for a write, is not
// overwritten by the copy later).
void access_after_async_copy(memory host) {
  const std::string row = std::string("access after copy_sides async into ") + name_of(host);
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const auto stream = reinterpret_cast<uint64_t>(s);
  const gtstorage_handle dev = source(memory::device, GTSTORAGE_SIDE_DEVICE, true);
  const gtstorage_handle h = create(host, true);
  const auto* p = static_cast<const double*>(data_of(h, GTSTORAGE_SIDE_HOST));
  auto copy = [&] {
    GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, dev, GTSTORAGE_SIDE_DEVICE, stream,
                                GTSTORAGE_COPY_FLAG_ASYNC));
    CHECK(ctl::pending_operations() > 0);
  };
  auto zero = [&] {
    GTS_OK(gtstorage_fill_double(h, 0.0));
    CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  };
  // gtstorage_wait_stream(h, 0): the storage's own stream is the legacy one, the copy's is not.
  copy();
  GTS_OK(gtstorage_wait_stream(h, 0));
  CHECK_MSG(p[0] == 1.0 && p[n_elements - 1] == 1.0, "%s: wait_stream did not wait for it",
            row.c_str());
  // A read through the library.
  zero();
  copy();
  std::vector<double> v(static_cast<std::size_t>(n_elements), -1.0);
  gtstorage_array a = test::c_array(v.data(), shape);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  CHECK_MSG(count_not(v, 1.0) == 0, "%s: copy_to_array read before the copy landed", row.c_str());
  // A descriptor (the consumer reads at once).
  zero();
  copy();
  gtstorage_interface_info info;
  info.struct_size = sizeof info;
  GTS_OK(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info));
  CHECK_MSG(static_cast<const double*>(info.data)[0] == 1.0,
            "%s: gtstorage_interface handed out memory the copy had not written", row.c_str());
  // A DLPack export.
  zero();
  copy();
  DLManagedTensorVersioned* t = nullptr;
  GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_HOST, &t));
  if (t != nullptr) {
    CHECK_MSG(static_cast<const double*>(t->dl_tensor.data)[0] == 1.0,
              "%s: the DLPack export came before the copy landed", row.c_str());
    t->deleter(t);
  }
  // The next synchronous operation: a fill must not be overwritten by the copy afterwards.
  zero();
  copy();
  GTS_OK(gtstorage_fill_double(h, 2.0));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  CHECK_MSG(count_not(raw_read(h, GTSTORAGE_SIDE_HOST), 2.0) == 0,
            "%s: the queued copy overwrote a later fill", row.c_str());
  // A second async copy into it on another stream is ordered after the first: the last wins,
  // whichever stream the device runs first.
  zero();
  const gtstorage_handle dev2 = create(memory::device, true);
  GTS_OK(gtstorage_fill_double(dev2, 3.0));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  sim::cudaStream_t s2 = nullptr;
  CHECK(sim::cudaStreamCreateWithFlags(&s2, sim::cudaStreamNonBlocking) == sim::cudaSuccess);
  copy();
  GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, dev2, GTSTORAGE_SIDE_DEVICE,
                              reinterpret_cast<uint64_t>(s2), GTSTORAGE_COPY_FLAG_ASYNC));
  CHECK(sim::cudaStreamSynchronize(s2) == sim::cudaSuccess);
  CHECK(sim::cudaStreamSynchronize(s) == sim::cudaSuccess);
  CHECK_MSG(count_not(raw_read(h, GTSTORAGE_SIDE_HOST), 3.0) == 0,
            "%s: the second async copy was not ordered after the first", row.c_str());
  GTS_OK(gtstorage_release(dev2));
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(dev));
  CHECK(sim::cudaStreamDestroy(s2) == sim::cudaSuccess);
  end(slate, row);
}

// A wrapped host buffer whose owner reuses it the moment the library hands it back (NumPy,
// CuPy's pinned pool): the release callback runs only after the queued copy wrote it.
struct owner {
  std::vector<double> memory = std::vector<double>(static_cast<std::size_t>(n_elements), 0.0);
  bool released = false;
};

void reuse_on_release(void* user) {
  auto* o = static_cast<owner*>(user);
  for (double& x : o->memory) x = -1.0;
  o->released = true;
}

void async_copy_into_wrapped_then_release() {
  const std::string row = "copy_sides async into wrapped host memory, released";
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const gtstorage_handle dev = source(memory::device, GTSTORAGE_SIDE_DEVICE, true);
  owner o;
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = 3;
  w.shape = shape;
  w.data = o.memory.data();
  w.release = reuse_on_release;
  w.user_data = &o;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, dev, GTSTORAGE_SIDE_DEVICE,
                              reinterpret_cast<uint64_t>(s), GTSTORAGE_COPY_FLAG_ASYNC));
  GTS_OK(gtstorage_release(h));
  CHECK(o.released);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  CHECK_MSG(count_not(o.memory, -1.0) == 0,
            "%s: the copy wrote the buffer after its owner took it back", row.c_str());
  GTS_OK(gtstorage_release(dev));
  end(slate, row);
}

// A small host storage (under 64 KiB, unpooled) is kept on its thread at its release and handed
// to the next create of the same plan: one with a copy still queued into it must not be, or the
// next storage's zeros are overwritten by the copy.
void small_storage_with_queued_work_is_not_kept() {
  const std::string row = "copy_sides async into a small host storage, released, same plan again";
  const clean_slate slate = begin();
  const sim::cudaStream_t s = slate.stream;
  const int64_t small[3] = {16, 16, 16};  // 32 KiB
  gtstorage_create_options o = test::gpu_options(small, GTSTORAGE_MANAGED_DEFAULT);
  o.pool = GTSTORAGE_POOL_OFF;  // pooled blocks are never kept (they go back to the pool)
  o.init = GTSTORAGE_INIT_UNINITIALIZED;
  gtstorage_handle dev = 0, h = 0, next = 0;
  GTS_OK(gtstorage_create(&o, &dev));
  GTS_OK(gtstorage_fill_double(dev, 1.0));
  o.device = GTSTORAGE_DEVICE_CPU;
  o.init = GTSTORAGE_INIT_ZEROS;
  for (int round = 0; round < 2; ++round) {  // the first round makes the plan a memoized one
    GTS_OK(gtstorage_create(&o, &h));
    GTS_OK(gtstorage_release(h));
  }
  GTS_OK(gtstorage_create(&o, &h));
  const void* block = data_of(h, GTSTORAGE_SIDE_HOST);
  GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, dev, GTSTORAGE_SIDE_DEVICE,
                              reinterpret_cast<uint64_t>(s), GTSTORAGE_COPY_FLAG_ASYNC));
  CHECK(ctl::pending_operations() > 0);  // the copy is still queued
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_create(&o, &next));
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  const auto* p = static_cast<const double*>(data_of(next, GTSTORAGE_SIDE_HOST));
  int64_t wrong = 0;
  for (int64_t i = 0; i < 16 * 16 * 16; ++i) wrong += p[i] != 0.0;
  CHECK_MSG(wrong == 0, "%s: %lld of the next storage's zeros were overwritten (same block: %s)",
            row.c_str(), static_cast<long long>(wrong), p == block ? "yes" : "no");
  GTS_OK(gtstorage_release(next));
  GTS_OK(gtstorage_release(dev));
  end(slate, row);
}

// ------------------------------------------------------------------------------------------------
// Work left queued by a call that fails (found by the fuzz target, tests/cpp/fuzz/regressions): a
// strided copy is several runtime copies; one that fails part-way must not return with the
// earlier ones still queued into memory freed as the error unwinds (the caller's array, the
// library's staging buffer).

// Views of a small device storage read into the caller's array (a strided copy may be several
// runtime copies); the second runtime copy fails at once. Every view whose copy took at least
// two runtime copies is checked (and there must be some, or the test proves nothing).
void failed_copy_leaves_nothing_queued_into_the_callers_array() {
  const std::string row = "copy_to_array failing at its second runtime copy";
  const clean_slate slate = begin();
  const int64_t small[3] = {3, 4, 5};
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = small;
  o.preset = "gt:gpu";
  o.init = GTSTORAGE_INIT_ONES;
  const gtstorage_handle dev = test::created(o);
  int checked = 0;
  const int32_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& perm : perms) {
    gtstorage_handle view = 0;
    GTS_OK(gtstorage_transpose(dev, perm, 3, &view));
    const int64_t vshape[3] = {small[perm[0]], small[perm[1]], small[perm[2]]};
    for (const char* dtype : {"<f8", "<f4"}) {  // direct, and through a staging buffer
      std::vector<double> out(3 * 4 * 5, -5.0);
      gtstorage_array a = test::c_array(out.data(), vshape);
      a.dtype = dtype;
      ctl::fail_nth(ctl::call_class::memcpy, 2, sim::cudaErrorInvalidValue);
      const int rc = gtstorage_copy_to_array(&a, view);
      const bool fired = !ctl::injection_pending(ctl::call_class::memcpy);
      ctl::clear_failures();
      if (!fired) continue;  // one runtime copy: nothing failed part-way
      ++checked;
      CHECK_MSG(rc == GTSTORAGE_ERROR_DEVICE, "%s (%s): status %d", row.c_str(), dtype, rc);
      CHECK_MSG(ctl::pending_operations() == 0, "%s (%s): returned with work still queued",
                row.c_str(), dtype);
      const std::vector<double> at_return = out;
      CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
      CHECK_MSG(out == at_return, "%s (%s): the caller's array was written after the call returned",
                row.c_str(), dtype);
    }
    GTS_OK(gtstorage_release(view));
  }
  CHECK_MSG(checked > 0, "%s: no view took two runtime copies (the test proves nothing)",
            row.c_str());
  GTS_OK(gtstorage_release(dev));
  end(slate, row);
}

// Device 0 has failed for good; a copy of device-1 memory into a host array of another dtype
// (staged): the wait for the default stream fails on device 0 and must still wait on device 1.
void failed_device_does_not_cut_short_the_wait_for_another() {
  const std::string row = "copy_to_array of device-1 memory with device 0 failed";
  const clean_slate slate = begin();
  GTS_OK(gtstorage_set_device(1));
  const gtstorage_handle dev = source(memory::device, GTSTORAGE_SIDE_DEVICE, true);
  GTS_OK(gtstorage_set_device(0));
  ctl::set_sticky_error(0, sim::cudaErrorLaunchFailure);
  std::vector<float> out(static_cast<std::size_t>(n_elements), -5.0f);
  gtstorage_array a = test::c_array(out.data(), shape);
  a.dtype = "<f4";
  const int rc = gtstorage_copy_to_array(&a, dev);
  const int64_t queued = ctl::pending_operations();
  ctl::clear_failures();
  const std::vector<float> at_return = out;
  CHECK(sim::cudaSetDevice(1) == sim::cudaSuccess);
  CHECK(sim::cudaDeviceSynchronize() == sim::cudaSuccess);
  CHECK(sim::cudaSetDevice(0) == sim::cudaSuccess);
  CHECK_MSG(queued == 0 && out == at_return,
            "%s (status %d): %lld operations still queued at the return", row.c_str(), rc,
            static_cast<long long>(queued));
  GTS_OK(gtstorage_release(dev));
  (void)slate;  // device 0 stays failed until the machine is reset: no end() checks here
  ctl::set_machine(ctl::machine{});
  gts::device::set_emulated_device_count(2);
}

}  // namespace

int main() {
  ctl::set_machine(ctl::machine{});
  gts::device::set_emulated_device_count(2);
  GTS_OK(gtstorage_set_device_backend("emulated"));
  const memory hosts[] = {memory::pageable, memory::pinned, memory::unified};
  for (const bool pooled : {true, false}) {
    for (const bool release_destination : {true, false}) {
      for (const memory host : hosts) {
        async_copy_then_release(memory::device, host, release_destination, pooled);  // D2H
        async_copy_then_release(host, memory::device, release_destination, pooled);  // H2D
      }
      async_copy_then_release(memory::device, memory::device, release_destination, pooled);
    }
    for (const memory m : {memory::mirror_pageable, memory::mirror_pinned}) {
      for (const int32_t to : {GTSTORAGE_SIDE_HOST, GTSTORAGE_SIDE_DEVICE}) {
        async_copy_within_a_mirror_then_release(m, to, pooled);
        async_sync_then_release(m, to, pooled);
      }
    }
  }
  async_prefetch_then_release(GTSTORAGE_SIDE_DEVICE);
  async_prefetch_then_release(GTSTORAGE_SIDE_HOST);
  for (const memory host : hosts) access_after_async_copy(host);
  async_copy_into_wrapped_then_release();
  small_storage_with_queued_work_is_not_kept();
  failed_copy_leaves_nothing_queued_into_the_callers_array();
  failed_device_does_not_cut_short_the_wait_for_another();
  return test::report("test_emulated_queued_work");
}
