// The GPU backend (src/device/gpu, the source nvcc compiles) running on the simulated CUDA
// runtime: which path each request takes (memcpy, 2-D memcpy, staging, kernels), and the
// regression tests of the GPU review's findings, each of which failed before its fix:
// - launch errors come from the launch itself, not from an error an earlier call left behind;
// - device -1 is the calling thread's current device (cudaSetDevice), not a process-wide one;
// - events are recorded, and default streams synchronized, with their own device current;
// - work for one device ordered on another device's stream is joined, not launched there;
// - a cross-device copy waits for what the producer queued on the source device;
// - staging buffers come from a pool that keeps its memory across synchronizations;
// - a 2-D copy's real errors are errors, not a reason to stage silently;
// - error codes map to the right kinds (sticky, unavailable, out of memory), and a driver older
//   than the runtime is reported as such, with both versions.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "../support.hpp"
#include "device/allocation_registry.hpp"
#include "device/backend_tools.hpp"
#include "device/device_backend.hpp"
#include "device/stream_ordering.hpp"
#include "device/strided_plan.hpp"
#include "emulated/control.hpp"
#include "emulated/cuda_api.hpp"

using gts::error_kind;
using gts::strided_array;
using namespace gts::device;
namespace sim = gts::emulated;
namespace ctl = gts::emulated::control;

namespace {

backend& be() {
  return get_backend("emulated");
}

// The default simulated machine, no injections, the emulated backend re-probed.
void fresh() {
  ctl::set_machine(ctl::machine{});
  ctl::clear_failures();
  (void)ctl::take_memcheck_reports();
  set_emulated_device_count(2);  // re-probes the backend
  set_backend("emulated");
  (void)sim::cudaGetLastError();
  sim::cudaSetDevice(0);
  ctl::reset_counters();
}

struct dev_buffer {
  std::byte* ptr = nullptr;
  int64_t bytes = 0;
  dev_buffer(int64_t n, int dev = 0, memory_kind k = memory_kind::device) : bytes(n) {
    ptr = static_cast<std::byte*>(be().allocate(static_cast<std::size_t>(n), 256, k, dev));
  }
  ~dev_buffer() { be().free(ptr, memory_kind::device, -1); }
  dev_buffer(const dev_buffer&) = delete;
  dev_buffer& operator=(const dev_buffer&) = delete;
  void set_all(unsigned char v) {
    std::vector<std::byte> h(static_cast<std::size_t>(bytes), static_cast<std::byte>(v));
    be().copy(ptr, h.data(), h.size(), direction::host_to_device, 0);
    be().synchronize(0);
  }
  std::vector<std::byte> read() {
    std::vector<std::byte> h(static_cast<std::size_t>(bytes));
    be().copy(h.data(), ptr, h.size(), direction::device_to_host, 0);
    be().synchronize(0);
    return h;
  }
};

strided_array make(void* p, int itemsize, std::initializer_list<int64_t> shape,
                   std::initializer_list<int64_t> strides) {
  strided_array a;
  a.data = static_cast<std::byte*>(p);
  a.ndim = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t s : shape) a.shape[d++] = s;
  d = 0;
  for (int64_t s : strides) a.strides[d++] = s;
  a.type = gts::dtype{'f', itemsize};
  return a;
}

// Element i of @p a (8-byte items) gets the value i.
void write_index_values(const strided_array& a) {
  test::for_each_element(a, [](int64_t i, std::byte* p) {
    const double v = static_cast<double>(i);
    std::memcpy(p, &v, 8);
  });
}

int64_t count_wrong_index_values(const strided_array& a) {
  int64_t wrong = 0;
  test::for_each_element(a, [&](int64_t i, const std::byte* p) {
    double v = 0;
    std::memcpy(&v, p, 8);
    wrong += v != static_cast<double>(i);
  });
  return wrong;
}

// Elements of @p bytes (8-byte items) that are not @p want.
int64_t count_not(const std::vector<std::byte>& bytes, double want, int64_t n) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = 0;
    std::memcpy(&x, bytes.data() + 8 * i, 8);
    wrong += x != want;
  }
  return wrong;
}

int transposes_launched() {
  int n = 0;
  for (const auto& l : ctl::launches()) n += l.block.y == 8;  // the only 2-D block: 32 x 8
  return n;
}

// ------------------------------------------------------------------------------------------------
// Paths

void paths() {
  fresh();
  std::vector<std::byte> h(1 << 20), back(1 << 20);
  dev_buffer dv(1 << 20), dv2(1 << 20);
  auto run = [&](const strided_array& dst, const strided_array& src, direction dir) {
    ctl::reset_counters();
    be().copy_strided(dst, src, dir, 0);
    be().synchronize(0);
    return ctl::get_counters();
  };
  {  // Same dense layout both sides: one memcpy.
    const auto c = run(make(dv.ptr, 8, {10, 20, 30}, {4800, 240, 8}),
                       make(h.data(), 8, {10, 20, 30}, {4800, 240, 8}), direction::host_to_device);
    CHECK(c.memcpys == 1 && c.memcpy_2d == 0 && c.kernels == 0 && c.pool_allocations == 0);
  }
  {  // Padded, same layout, host -> device: the copy engine's 2-D memcpy, no kernel, no staging.
    strided_array hs = make(h.data(), 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8});
    write_index_values(hs);
    strided_array ds = make(dv.ptr, 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8});
    const auto c = run(ds, hs, direction::host_to_device);
    CHECK(c.memcpy_2d == 1 && c.kernels == 0 && c.pool_allocations == 0);
    // A 3-D view of a padded parent: one 2-D memcpy per outer plane.
    const auto c2 = run(make(back.data(), 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8}), ds,
                        direction::device_to_host);
    CHECK(c2.memcpy_2d == 1);
    CHECK(count_wrong_index_values(make(back.data(), 8, {10, 20, 30}, {20 * 32 * 8, 32 * 8, 8})) ==
          0);
    const auto c3 =
        run(make(back.data(), 8, {10, 20, 30}, {24 * 32 * 8, 32 * 8, 8}),
            make(dv.ptr, 8, {10, 20, 30}, {24 * 32 * 8, 32 * 8, 8}), direction::device_to_host);
    CHECK(c3.memcpy_2d == 10);
  }
  {  // Layout change host -> device: a dense upload to a staging buffer and a device transpose.
    strided_array hs = make(h.data(), 8, {64, 48}, {48 * 8, 8});
    write_index_values(hs);
    strided_array ds = make(dv.ptr, 8, {64, 48}, {8, 64 * 8});
    const auto c = run(ds, hs, direction::host_to_device);
    CHECK(c.pool_allocations == 1 && c.memcpys == 1 && c.kernels == 1);
    CHECK(transposes_launched() == 1);
    std::memset(back.data(), 0, back.size());
    run(make(back.data(), 8, {64, 48}, {48 * 8, 8}), ds, direction::device_to_host);
    CHECK(count_wrong_index_values(make(back.data(), 8, {64, 48}, {48 * 8, 8})) == 0);
  }
  {  // Device -> device layout changes: the tiled transpose; same inner dim: the rows kernel.
    const strided_array c_order = make(h.data(), 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8});
    write_index_values(c_order);
    run(make(dv2.ptr, 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8}), c_order, direction::host_to_device);
    run(make(dv.ptr, 8, {40, 50, 60}, {8, 40 * 8, 2000 * 8}),
        make(dv2.ptr, 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8}), direction::device_to_device);
    CHECK(transposes_launched() == 1);
    std::memset(back.data(), 0, back.size());
    run(make(back.data(), 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8}),
        make(dv.ptr, 8, {40, 50, 60}, {8, 40 * 8, 2000 * 8}), direction::device_to_host);
    CHECK(count_wrong_index_values(make(back.data(), 8, {40, 50, 60}, {3000 * 8, 60 * 8, 8})) == 0);
    // Same inner dim, outer dims swapped. dv2 holds the index values in C order of
    // {40, 50, 60}, which are the C-order index values of {8, 9, 128} too (their first 9216).
    const auto c =
        run(make(dv.ptr, 8, {8, 9, 128}, {128 * 8, 8 * 128 * 8, 8}),
            make(dv2.ptr, 8, {8, 9, 128}, {9 * 128 * 8, 128 * 8, 8}), direction::device_to_device);
    CHECK(c.kernels == 1 && transposes_launched() == 0);
    std::memset(back.data(), 0, back.size());
    run(make(back.data(), 8, {8, 9, 128}, {9 * 128 * 8, 128 * 8, 8}),
        make(dv.ptr, 8, {8, 9, 128}, {128 * 8, 8 * 128 * 8, 8}), direction::device_to_host);
    CHECK(count_wrong_index_values(make(back.data(), 8, {8, 9, 128}, {9 * 128 * 8, 128 * 8, 8})) ==
          0);
  }
  {  // Fills: a byte pattern is a memset; other values a kernel; misaligned elements too.
    ctl::reset_counters();
    const double zero = 0.0, one = 1.0, v = 3.25;
    be().fill(make(dv.ptr, 8, {100, 100}, {800, 8}), &zero, 0);
    be().synchronize(0);
    CHECK(ctl::get_counters().memsets == 1 && ctl::get_counters().kernels == 0);
    be().fill(make(dv.ptr, 8, {100, 100}, {800, 8}), &one, 0);
    be().fill(make(dv.ptr + 3, 8, {10}, {8}), &v, 0);
    be().synchronize(0);
    CHECK(ctl::get_counters().kernels == 2);
    const std::vector<std::byte> r = dv.read();
    double got = 0;
    std::memcpy(&got, r.data() + 8 * 5000, 8);
    CHECK(got == 1.0);
    std::memcpy(&got, r.data() + 3 + 8 * 9, 8);
    CHECK(got == 3.25);
  }
  {  // Negative strides on both sides in the same order: still one memcpy.
    const auto c = run(make(dv.ptr + 8 * 99, 8, {100}, {-8}),
                       make(h.data() + 8 * 99, 8, {100}, {-8}), direction::host_to_device);
    CHECK(c.memcpys == 1 && c.kernels == 0);
  }
  {  // A pitch beyond the copy engine's limit: no 2-D memcpy, a staged upload instead.
    ctl::machine m = ctl::current_machine();
    m.max_pitch = 64;
    ctl::set_machine(m);
    set_emulated_device_count(2);  // the backend reads the limit when it probes
    strided_array hs = make(h.data(), 8, {10, 5}, {96, 8});
    write_index_values(hs);
    const auto c = run(make(dv.ptr, 8, {10, 5}, {96, 8}), hs, direction::host_to_device);
    CHECK(c.memcpy_2d == 0 && c.pool_allocations == 1 && c.kernels >= 1);
    std::memset(back.data(), 0, back.size());
    run(make(back.data(), 8, {10, 5}, {40, 8}), make(dv.ptr, 8, {10, 5}, {96, 8}),
        direction::device_to_host);
    CHECK(count_wrong_index_values(make(back.data(), 8, {10, 5}, {40, 8})) == 0);
    fresh();
  }
  CHECK(ctl::take_memcheck_reports().empty());
}

// ------------------------------------------------------------------------------------------------
// Regressions of the GPU review

// A producer hands a buffer over with stream 1 (CuPy's default, CAI v3) in a process where the
// library has not used that GPU yet: waiting on the default-stream handle must still cover the
// calling thread's current device. (Runs first, before anything touches device 1.)
void default_stream_waits_cover_the_current_device() {
  fresh();
  sim::cudaSetDevice(1);
  void* p = nullptr;
  CHECK(sim::cudaMalloc(&p, 4096) == sim::cudaSuccess);
  CHECK(sim::cudaMemsetAsync(p, 0x5A, 4096, sim::cudaStreamLegacy) == sim::cudaSuccess);
  be().synchronize(1);
  CHECK_MSG(ctl::pending_operations() == 0, "synchronize(1) left the producer's work queued");
  CHECK(sim::cudaFree(p) == sim::cudaSuccess);
  sim::cudaSetDevice(0);
}

// Review #7: launch_copy/launch_fill checked cudaGetLastError(), which reports (and clears) an
// error an earlier call left behind, e.g. the application's own failed call.
void launch_errors_are_the_launchs_own() {
  fresh();
  dev_buffer d(800);
  const double one = 1.0;
  CHECK(sim::cudaSetDevice(99) == sim::cudaErrorInvalidDevice);  // the application's mistake
  bool threw = false;
  try {
    be().fill(make(d.ptr, 8, {100}, {8}), &one, 0);
    be().synchronize(0);
  } catch (const gts::error& e) {
    threw = true;
    std::fprintf(stderr, "unexpected: %s\n", e.what());
  }
  CHECK(!threw);
  double got = 0;
  std::memcpy(&got, d.read().data() + 8 * 99, 8);
  CHECK(got == 1.0);
  // A launch that does fail says so, naming the launch and the runtime's error.
  ctl::fail_nth(ctl::call_class::launch, 1, sim::cudaErrorLaunchOutOfResources);
  EXPECT_ERROR(error_kind::device, "kernel launch (fill) failed: 'too many resources",
               be().fill(make(d.ptr, 8, {100}, {8}), &one, 0));
  fresh();
}

// Review #1: device -1 was the library's process-wide ordinal: every MPI rank that called
// cudaSetDevice(local_rank) got its storages on GPU 0.
void device_minus_one_follows_the_thread() {
  fresh();
  int on_thread = -1, on_main = -1;
  std::thread rank1([&] {
    sim::cudaSetDevice(1);  // what an application does, not through gtstorage
    void* p = be().allocate(64, 0, memory_kind::device, -1);
    on_thread = be().allocations().query_pointer(p).device_id;
    CHECK(current_device() == 1);
    be().free(p, memory_kind::device, -1);
  });
  rank1.join();
  void* p = be().allocate(64, 0, memory_kind::device, -1);
  on_main = be().allocations().query_pointer(p).device_id;
  be().free(p, memory_kind::device, -1);
  CHECK_MSG(on_thread == 1, "device -1 after cudaSetDevice(1) gave device %d", on_thread);
  CHECK(on_main == 0);
  // set_current_device is the same as cudaSetDevice for the calling thread.
  set_current_device(1);
  int dev = -1;
  sim::cudaGetDevice(&dev);
  CHECK(dev == 1);
  std::thread other([] { CHECK(current_device() == 0); });
  other.join();
  set_current_device(0);
}

// Review #8: record_event/synchronize on default-stream handles used whichever device happened
// to be current.
void events_and_default_streams_use_their_device() {
  fresh();
  const uint64_t e1 = be().ordering().create_event(1);
  be().ordering().record_event(e1,
                               0);  // device 0 is current: recorded on device 1's default stream
  be().ordering().synchronize_event(e1);
  CHECK(be().tools().event_done(e1));
  const uint64_t s0 = be().tools().create_stream(0);
  EXPECT_ERROR(error_kind::invalid_argument, "belongs to device 0, the event to device 1",
               be().ordering().record_event(e1, s0));
  // Work queued on device 1's default stream (handle 1, cudaStreamLegacy) is waited for by
  // synchronize(1), whatever device is current.
  dev_buffer d1(4096, 1);
  std::vector<std::byte> h(4096, std::byte{0x42}), back(4096, std::byte{0});
  be().copy(d1.ptr, h.data(), h.size(), direction::host_to_device, 1);
  be().copy(back.data(), d1.ptr, back.size(), direction::device_to_host, 1);
  be().synchronize(1);
  CHECK(back[0] == std::byte{0x42} && back[4095] == std::byte{0x42});
  // wait_event orders a stream after an event of another device: an upload on device 1's
  // default stream, recorded; device 0's stream s0b waits for it, then reads the buffer.
  std::fill(h.begin(), h.end(), std::byte{0x24});
  std::fill(back.begin(), back.end(), std::byte{0});
  be().copy(d1.ptr, h.data(), h.size(), direction::host_to_device, 0);
  be().ordering().record_event(e1, 0);
  const uint64_t s0b = be().tools().create_stream(0);
  be().ordering().wait_event(s0b, e1);
  CHECK(sim::cudaMemcpyAsync(back.data(), d1.ptr, back.size(), sim::cudaMemcpyDefault,
                             reinterpret_cast<sim::cudaStream_t>(s0b)) == sim::cudaSuccess);
  be().synchronize(s0b);
  CHECK_MSG(back[0] == std::byte{0x24}, "the read did not wait for the other device's event");
  be().ordering().wait_event(0, e1);  // a default-stream handle: the event's device
  be().tools().destroy_stream(s0b);
  be().ordering().destroy_event(e1);
  be().tools().destroy_stream(s0);
  CHECK(sim::cudaGetLastError() == sim::cudaSuccess);
}

// Review #8: work for device 1 ordered on a stream of device 0 launched its kernel on that
// stream (CUDA refuses: a kernel needs a stream of the current device).
void work_on_another_devices_stream_is_joined() {
  fresh();
  dev_buffer d1(800, 1);
  const uint64_t s0 = be().tools().create_stream(0);
  std::vector<std::byte> h(800, std::byte{0x11}), back(800, std::byte{0});
  const double two = 2.0;
  // The application's own work on its stream s0 (of device 0), writing device 1's buffer...
  CHECK(sim::cudaMemsetAsync(d1.ptr, 0x11, 800, reinterpret_cast<sim::cudaStream_t>(s0)) ==
        sim::cudaSuccess);
  be().fill(make(d1.ptr, 8, {50}, {8}), &two, s0);  // ...then this, after it, on device 1
  be().copy(back.data(), d1.ptr, back.size(), direction::device_to_host, s0);
  be().synchronize(s0);
  double got = 0;
  std::memcpy(&got, back.data() + 8 * 49, 8);
  CHECK(got == 2.0);                       // the fill ran after the upload...
  CHECK(back[8 * 50] == std::byte{0x11});  // ...and only where it should
  be().tools().destroy_stream(s0);
}

// Review #9: a cross-device copy waited only for the destination device's stream; what the
// producer had queued on the source device could still be running.
void cross_device_copies_wait_for_the_producer() {
  fresh();
  const int64_t n0 = 40, n1 = 48;
  dev_buffer src(n0 * n1 * 8, 1), dst(n0 * n1 * 8, 0);
  const strided_array s = make(src.ptr, 8, {n0, n1}, {n1 * 8, 8});  // dense
  const strided_array t = make(dst.ptr, 8, {n0, n1}, {8, n0 * 8});  // transposed
  const double v = 7.5;
  be().fill(s, &v, 0);  // queued on device 1's default stream: the producer
  be().copy_strided(t, s, direction::device_to_device, 0);
  be().synchronize(0);
  std::vector<std::byte> r = dst.read();
  int64_t wrong = count_not(r, v, n0 * n1);
  CHECK_MSG(wrong == 0, "%lld elements copied before the producer's fill ran",
            static_cast<long long>(wrong));
  // Layouts that agree: one peer memcpy, which also waits for the producer.
  const double u = 3.5;
  dev_buffer dst2(n0 * n1 * 8, 0);
  be().fill(s, &u, 0);
  be().copy_strided(make(dst2.ptr, 8, {n0, n1}, {n1 * 8, 8}), s, direction::device_to_device, 0);
  be().synchronize(0);
  r = dst2.read();
  wrong = count_not(r, u, n0 * n1);
  CHECK_MSG(wrong == 0, "peer memcpy: %lld elements copied before the producer ran",
            static_cast<long long>(wrong));
  // And the raw 1-D copy.
  const double z = -9.0;
  be().fill(s, &z, 0);
  be().copy(dst2.ptr, src.ptr, static_cast<std::size_t>(n0 * n1 * 8), direction::device_to_device,
            0);
  be().synchronize(0);
  r = dst2.read();
  double last = 0;
  std::memcpy(&last, r.data() + 8 * (n0 * n1 - 1), 8);
  CHECK(last == z);
  // The producer on a non-blocking stream of the source device, the copy ordered on it.
  const uint64_t p1 = be().tools().create_stream(1);
  const double w = -1.25;
  const strided_array padded = make(src.ptr, 8, {n0, n1 - 2}, {n1 * 8, 8});  // with gaps: packed
  const strided_array t2 = make(dst.ptr, 8, {n0, n1 - 2}, {8, n0 * 8});
  be().fill(padded, &w, p1);
  be().copy_strided(t2, padded, direction::device_to_device, p1);
  be().synchronize(p1);
  CHECK(count_not(dst.read(), w, n0 * (n1 - 2)) == 0);
  be().tools().destroy_stream(p1);
  CHECK(ctl::take_memcheck_reports().empty());
}

// Review #10: staging buffers came from the device's default pool, whose release threshold of 0
// unmaps them at every synchronization.
void staging_memory_is_kept_across_syncs() {
  fresh();
  std::vector<std::byte> h(64 * 48 * 8);
  dev_buffer d(64 * 48 * 8);
  const strided_array hs = make(h.data(), 8, {64, 48}, {48 * 8, 8});
  const strided_array ds = make(d.ptr, 8, {64, 48}, {8, 64 * 8});
  write_index_values(hs);
  ctl::reset_counters();
  for (int i = 0; i < 5; ++i) {
    be().copy_strided(ds, hs, direction::host_to_device, 0);
    be().synchronize(0);
  }
  const ctl::counters c = ctl::get_counters();
  CHECK(c.pool_allocations == 5);
  // One block mapped at most (none if an earlier test left one of the right size in the pool).
  CHECK_MSG(c.pool_maps <= 1 && c.pool_unmaps == 0, "pool maps %lld, unmaps %lld",
            static_cast<long long>(c.pool_maps), static_cast<long long>(c.pool_unmaps));
  // When device memory runs out, what the pool keeps is given back and the allocation retried.
  ctl::machine m = ctl::current_machine();
  m.device_memory = (64 * 48 * 8) * 3;  // the field, the kept staging block, and one more
  ctl::set_machine(m);
  void* big = be().allocate(64 * 48 * 8 * 3 / 2, 0, memory_kind::device, 0);
  CHECK(big != nullptr);
  CHECK(ctl::get_counters().pool_unmaps >= 1);  // what the pool kept went back
  be().free(big, memory_kind::device, 0);
  fresh();
}

// Review #11: cudaErrorInvalidValue from the 2-D copy was taken for "pitch unsupported" and the
// copy silently staged; a real error must be reported.
void two_d_copy_errors_are_errors() {
  fresh();
  std::vector<std::byte> h(10 * 32 * 8);
  dev_buffer d(10 * 32 * 8);
  ctl::fail_nth(ctl::call_class::memcpy, 1, sim::cudaErrorInvalidValue);
  EXPECT_ERROR(
      error_kind::device, "cudaMemcpy2DAsync",
      be().copy_strided(make(d.ptr, 8, {10, 20}, {256, 8}), make(h.data(), 8, {10, 20}, {256, 8}),
                        direction::host_to_device, 0));
  fresh();
}

// Review #12 and error kinds in general.
void errors_map_to_kinds() {
  fresh();
  // Out of memory also after giving back what the staging pool keeps.
  ctl::machine m = ctl::current_machine();
  m.device_memory = 1 << 20;
  ctl::set_machine(m);
  EXPECT_ERROR(error_kind::out_of_memory, "cudaMalloc of 2097152 bytes on device 0",
               (void)be().allocate(2 << 20, 0, memory_kind::device, 0));
  ctl::set_machine(ctl::machine{});
  ctl::fail_nth(ctl::call_class::alloc, 1, sim::cudaErrorDevicesUnavailable);
  EXPECT_ERROR(error_kind::no_device, "busy or unavailable",
               (void)be().allocate(64, 0, memory_kind::device, 0));
  // An asynchronous failure surfaces at the next synchronization, marked sticky.
  dev_buffer d(64);
  std::vector<std::byte> h(64);
  ctl::fail_nth(ctl::call_class::memcpy, 1, sim::cudaErrorIllegalAddress, true);
  be().copy(d.ptr, h.data(), 64, direction::host_to_device, 0);
  EXPECT_ERROR(error_kind::device, "sticky", be().synchronize(0));
  EXPECT_ERROR(error_kind::device, "illegal memory access",
               (void)be().allocate(64, 0, memory_kind::device, 0));
  fresh();
}

// Deployment: a driver older than the runtime is named, with both versions; no driver at all
// is said as such.
void old_and_missing_drivers_are_named() {
  fresh();
  setenv("GTSTORAGE_SIM_DRIVER_VERSION", "12040", 1);
  reload_environment();
  set_backend("emulated");
  CHECK(be().device_count() == 0);
  CHECK(be().no_device_kind() == error_kind::driver_too_old);
  const std::string why = be().no_device_reason();
  CHECK(why.find("the driver supports CUDA 12.4") != std::string::npos);
  CHECK(why.find("built with CUDA 13.0") != std::string::npos);
  CHECK(why.find("580") != std::string::npos);
  EXPECT_ERROR(error_kind::driver_too_old, "CUDA 12.4",
               (void)be().allocate(64, 0, memory_kind::device, 0));
  EXPECT_ERROR(error_kind::driver_too_old, "CUDA 12.4", (void)be().tools().create_stream(-1));
  setenv("GTSTORAGE_SIM_DRIVER_VERSION", "0", 1);
  reload_environment();
  CHECK(be().no_device_kind() == error_kind::no_device);
  CHECK(be().no_device_reason().find("no driver is installed") != std::string::npos);
  unsetenv("GTSTORAGE_SIM_DRIVER_VERSION");
  reload_environment();
  CHECK(be().device_count() == 2);
  fresh();
}

// ------------------------------------------------------------------------------------------------
// Plans (strided_plan.hpp): known inputs.

void plan_checks() {
  using namespace gts::device::detail;
  alignas(64) static std::byte mem[1 << 16];
  {
    const strided_array a = make(mem, 8, {4, 5}, {40, 8});
    CHECK(is_dense(a));
    CHECK(span_of(a).lo == 0 && span_of(a).hi == 160);
    const strided_array b = make(mem + 8 * 19, 8, {4, 5}, {-40, -8});
    CHECK(is_dense(b));
    CHECK(span_of(b).lo == -152 && span_of(b).hi == 8);
    CHECK(!is_dense(make(mem, 8, {4, 5}, {48, 8})));  // padded
    CHECK(is_dense(make(mem, 8, {4, 5}, {8, 32})));   // Fortran order
  }
  {
    const strided_array d = make(mem, 4, {6, 7, 8}, {7 * 8 * 4, 8 * 4, 4});
    const copy_plan p = plan_copy(d, d);
    CHECK(p.is_memcpy());
    CHECK(p.unit == 16 && p.count == 6 * 7 * 8 / 4);
  }
  {  // Odd element count: widening stops where the row length no longer divides.
    const strided_array d = make(mem, 4, {3}, {4});
    const copy_plan p = plan_copy(d, d);
    CHECK(p.is_memcpy() && p.unit == 4 && p.count == 3);
  }
  {  // Misaligned address: the unit shrinks, element bytes become a dim.
    const copy_plan p =
        plan_copy(make(mem + 2, 8, {5, 3}, {24, 8}), make(mem + 1024, 8, {5, 3}, {8, 40}));
    CHECK(p.unit == 2);
    CHECK(p.ndim == 3 && p.shape[2] == 4);
  }
  {  // Compact copy of a padded, reversed array keeps its dim order.
    const strided_array c = compact_like(make(mem + 8 * 100, 8, {3, 4}, {-8, 48}), mem);
    CHECK(c.strides[0] == 8 && c.strides[1] == 24);
    CHECK(is_dense(c));
  }
  {
    const double v = 1.5;
    const fill_plan p = plan_fill(make(mem, 8, {7, 9}, {72, 8}), &v);
    CHECK(p.is_dense() && p.unit == 8 && !p.is_byte_pattern());
    const fill_plan q = plan_fill(make(mem, 8, {8, 8}, {64, 8}), &v);
    CHECK(q.unit == 16 && q.count == 32);
    double a0 = 0, a1 = 0;
    std::memcpy(&a0, q.pattern, 8);
    std::memcpy(&a1, q.pattern + 8, 8);
    CHECK(a0 == 1.5 && a1 == 1.5);
    const unsigned char bad_value[3] = {1, 2, 3};
    EXPECT_ERROR(error_kind::unsupported, "item size",
                 (void)plan_fill(make(mem, 3, {4}, {3}), bad_value));
  }
}

}  // namespace

int main() {
  try {
    default_stream_waits_cover_the_current_device();
    plan_checks();
    paths();
    launch_errors_are_the_launchs_own();
    device_minus_one_follows_the_thread();
    events_and_default_streams_use_their_device();
    work_on_another_devices_stream_is_joined();
    cross_device_copies_wait_for_the_producer();
    staging_memory_is_kept_across_syncs();
    two_d_copy_errors_are_errors();
    errors_map_to_kinds();
    old_and_missing_drivers_are_named();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "uncaught exception: %s\n", e.what());
    return 2;
  }
  return test::report("test_emulated_backend");
}
