// Device part of gtstorage-bench (--device), the "device" object of the JSON output.
//
// Every library figure goes through the public C API, as a user's code would:
//   h2d / d2h      gtstorage_sync_to(FORCE) of a mirrored field with pinned host memory (the
//                  library moves the whole padded allocation as one copy), against
//                  cudaMemcpy of the same number of bytes between pinned and device memory;
//   layout_copy    gtstorage_copy between two device-only fields of different layouts
//                  (I-first "gt:gpu" -> K-first), against a device-to-device cudaMemcpy of
//                  the same element bytes;
//   fill           gtstorage_fill_double on a device-only "gt:gpu" field (padded rows, not a
//                  memset-able block), against cudaMemset of the same element bytes;
//   pool           create + release of a device-only field (1 MiB, and the benchmark's field)
//                  from the device pool against the same with the pool off (limit 0), with the
//                  pool's hits and misses of each, which show that the pooled rounds reuse one
//                  block and the unpooled ones never do (wall clock: allocation is host work).
// Baselines run in the same process on the same device right before the library figure; the
// ratio is baseline time / library time (1.0 = as fast as the runtime's own call). Each figure
// is the median of cfg.reps CUDA-event-timed runs on the legacy default stream, which is where
// the library enqueues work for storages without their own stream.
//
// Built with GTSTORAGE_BENCH_CUDA (bench/CMakeLists.txt when CUDA is found: the definition plus
// CUDA::cudart) the baselines and the GPU name are reported; without it, or on another backend
// (e.g. GTSTORAGE_DEVICE_BACKEND=emulated, which CI uses to run this code path), the library
// figures are reported with wall-clock timing and the baselines are null.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

#if defined(GTSTORAGE_BENCH_CUDA)
#include <cuda_runtime.h>
#endif

namespace bench {
namespace {

// Records a failed call in the JSON instead of aborting the host figures already measured.
bool ok(int status, const char* what, json_object& out) {
  if (status == GTSTORAGE_OK) return true;
  out.string("error", std::string(what) + ": " + gtstorage_status_name(status) + ": " +
                          gtstorage_last_error());
  return false;
}

// Times f: CUDA events on the legacy stream around f when the baselines are available (f must
// leave its work on that stream or finish it), else wall clock. Median of reps after a warm-up.
class timer {
 public:
  explicit timer(bool events) : events_(events) {}
  template <class F>
  double median_s(int reps, F&& f) {
#if defined(GTSTORAGE_BENCH_CUDA)
    if (events_) {
      cudaEvent_t a = nullptr, b = nullptr;
      if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) return -1.0;
      f();
      cudaDeviceSynchronize();
      std::vector<double> t;
      for (int r = 0; r < reps; ++r) {
        cudaEventRecord(a, nullptr);
        f();
        cudaEventRecord(b, nullptr);
        cudaEventSynchronize(b);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms * 1e-3);
      }
      cudaEventDestroy(a);
      cudaEventDestroy(b);
      return median(t);
    }
#endif
    return median_time(reps, f);
  }

 private:
  bool events_;
};

// Pooled vs unpooled create + release of a device-only field of @p shape (see pool_figures).
json_object pool_figure(const config& cfg, const int64_t* shape, gtstorage_handle waiter,
                        int64_t limit, json_object& out) {
  gtstorage_create_options o = create_options(3, shape, "gt:gpu", GTSTORAGE_INIT_UNINITIALIZED);
  o.device = GTSTORAGE_DEVICE_GPU;
  json_object f;
  int status = GTSTORAGE_OK;
  auto round = [&] {
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    if (status == GTSTORAGE_OK) status = gtstorage_create(&o, &h);
    if (status == GTSTORAGE_OK) status = gtstorage_release(h);
    if (status == GTSTORAGE_OK) status = gtstorage_wait_stream(waiter, 0);
  };
  auto counters = [&] {
    gtstorage_pool_stats s = GTSTORAGE_POOL_STATS_INIT;
    if (status == GTSTORAGE_OK) status = gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &s);
    return s;
  };
  const int rounds = 20;
  int64_t bytes = 8;
  for (int d = 0; d < 3; ++d) bytes *= shape[d];
  f.integer("bytes", bytes);
  f.integer("rounds_per_sample", rounds);
  const gtstorage_pool_stats p0 = counters();
  const double t_pooled = median_time(cfg.reps, [&] {
    for (int i = 0; i < rounds; ++i) round();
  });
  const gtstorage_pool_stats p1 = counters();
  if (status == GTSTORAGE_OK) status = gtstorage_pool_set_limit(GTSTORAGE_MEMORY_DEVICE, 0);
  const double t_unpooled = median_time(cfg.reps, [&] {
    for (int i = 0; i < rounds; ++i) round();
  });
  const gtstorage_pool_stats p2 = counters();
  const int restored = gtstorage_pool_set_limit(GTSTORAGE_MEMORY_DEVICE, limit);
  if (status == GTSTORAGE_OK) status = restored;
  if (!ok(status, "device pool create + release", out)) return f;
  f.number("pooled_us", t_pooled / rounds * 1e6, 2);
  f.number("unpooled_us", t_unpooled / rounds * 1e6, 2);
  f.number("unpooled_over_pooled", t_unpooled / t_pooled, 2);
  f.integer("pooled_hits", p1.hits - p0.hits);
  f.integer("pooled_misses", p1.misses - p0.misses);
  f.integer("unpooled_hits", p2.hits - p1.hits);
  f.integer("unpooled_misses", p2.misses - p1.misses);
  return f;
}

// Device pool figures: each round creates and releases a device-only field and then waits for
// the legacy stream, where the release is queued (a time step's end; through a small storage kept
// for that), so a pooled round finds the released block on every backend, the emulated one
// included, whose runtime runs queued work only when something waits for it.
json_object pool_figures(const config& cfg, json_object& out) {
  json_object p;
  gtstorage_pool_stats s = GTSTORAGE_POOL_STATS_INIT;
  if (!ok(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_DEVICE, &s), "gtstorage_pool_get_stats", out))
    return p;
  p.integer("limit_bytes", s.limit_bytes);  // 0: pooling is off (GTSTORAGE_POOL=0)
  const int64_t one[1] = {1};
  gtstorage_create_options w = create_options(1, one, "gt:gpu", GTSTORAGE_INIT_UNINITIALIZED);
  w.device = GTSTORAGE_DEVICE_GPU;
  gtstorage_handle waiter = GTSTORAGE_NULL_HANDLE;
  if (!ok(gtstorage_create(&w, &waiter), "gtstorage_create (device, 1 element)", out)) return p;
  const int64_t mib[3] = {64, 64, 32};
  const int64_t field[3] = {cfg.ni, cfg.nj, cfg.nk};
  p.object("field_1mib", pool_figure(cfg, mib, waiter, s.limit_bytes, out));
  p.object("field", pool_figure(cfg, field, waiter, s.limit_bytes, out));
  gtstorage_release(waiter);
  gtstorage_pool_trim(GTSTORAGE_MEMORY_DEVICE, 0);
  return p;
}

json_object figure(double bytes, double t_lib, double t_base, double target) {
  json_object o;
  o.integer("bytes", static_cast<int64_t>(bytes));
  o.number("gtstorage_gbs", bytes / t_lib / 1e9, 2);
  if (t_base > 0.0) {
    o.number("baseline_gbs", bytes / t_base / 1e9, 2);
    o.number("ratio", t_base / t_lib, 3);
    o.number("min", target, 2);
    o.boolean("pass", t_base / t_lib >= target);
  } else {
    o.null("baseline_gbs");
    o.null("ratio");
  }
  return o;
}

int64_t h2d_d2h_transfers() {
  gtstorage_stats s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  if (gtstorage_get_stats(&s) != GTSTORAGE_OK) return -1;
  return s.h2d_count + s.d2h_count;
}

#if defined(GTSTORAGE_BENCH_CUDA)
// Device and pinned buffers for the baselines; released on scope exit.
struct cuda_buffers {
  void* dev_a = nullptr;
  void* dev_b = nullptr;
  void* pinned = nullptr;
  bool ok = false;
  explicit cuda_buffers(std::size_t bytes) {
    ok = cudaMalloc(&dev_a, bytes) == cudaSuccess && cudaMalloc(&dev_b, bytes) == cudaSuccess &&
         cudaMallocHost(&pinned, bytes) == cudaSuccess;
    if (ok) {
      cudaMemset(dev_a, 1, bytes);
      cudaMemset(dev_b, 2, bytes);
      std::memset(pinned, 3, bytes);
      ok = cudaDeviceSynchronize() == cudaSuccess;
    }
  }
  ~cuda_buffers() {
    if (dev_a) cudaFree(dev_a);
    if (dev_b) cudaFree(dev_b);
    if (pinned) cudaFreeHost(pinned);
  }
};
#endif

}  // namespace

bool device_bench(const config& cfg, json_object& out) {
  int32_t count = 0;
  if (gtstorage_device_count(&count) != GTSTORAGE_OK || count <= 0) {
    if (!cfg.json_only) {
      std::fprintf(stderr, "gtstorage-bench: --device: no usable device%s%s\n",
                   gtstorage_last_error()[0] ? ": " : "", gtstorage_last_error());
    }
    return false;
  }
  char backend[64] = {0};
  if (gtstorage_device_get_backend(backend, sizeof backend) == GTSTORAGE_OK) {
    out.string("backend", backend);
  }
  out.integer("devices", count);
  bool events = false;
#if defined(GTSTORAGE_BENCH_CUDA)
  events = std::strcmp(backend, "cuda") == 0;
  if (events) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) out.string("gpu", prop.name);
  }
#endif
  out.string("timing", events ? "cuda events, median" : "wall clock, median");
  timer tm(events);

  const int64_t shape[3] = {cfg.ni, cfg.nj, cfg.nk};
  const double elem_bytes = static_cast<double>(cfg.ni * cfg.nj * cfg.nk) * 8.0;

  // --- Host <-> device: mirrored field, pinned host side.
  gtstorage_create_options o = field_options(shape, "gt:gpu", GTSTORAGE_INIT_ZEROS);
  o.device = GTSTORAGE_DEVICE_GPU;
  o.managed = GTSTORAGE_MANAGED_MIRROR;
  o.host_memory = GTSTORAGE_HOST_PINNED;
  gtstorage_handle mirror = GTSTORAGE_NULL_HANDLE;
  if (!ok(gtstorage_create(&o, &mirror), "gtstorage_create (mirrored, pinned)", out)) return true;
  // The bytes one forced sync moves, as the library counts them.
  gtstorage_transfer_stats ts0, ts1;
  std::memset(&ts0, 0, sizeof ts0);
  ts0.struct_size = sizeof ts0;
  ts1 = ts0;
  int status = gtstorage_get_transfer_stats(mirror, &ts0);
  if (status == GTSTORAGE_OK) {
    status = gtstorage_sync_to(mirror, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE);
  }
  if (status == GTSTORAGE_OK) status = gtstorage_get_transfer_stats(mirror, &ts1);
  if (!ok(status, "gtstorage_sync_to (device)", out)) {
    gtstorage_release(mirror);
    return true;
  }
  const double moved = static_cast<double>(ts1.h2d_bytes - ts0.h2d_bytes);
  out.integer("transfer_bytes_per_sync", static_cast<int64_t>(moved));

  double t_h2d_base = -1.0, t_d2h_base = -1.0, t_d2d_base = -1.0, t_memset_base = -1.0;
#if defined(GTSTORAGE_BENCH_CUDA)
  std::unique_ptr<cuda_buffers> cbp;
  if (events)
    cbp = std::make_unique<cuda_buffers>(static_cast<std::size_t>(std::max(moved, elem_bytes)));
  if (cbp && cbp->ok) {
    cuda_buffers& cb = *cbp;
    const auto n = static_cast<std::size_t>(moved);
    const auto e = static_cast<std::size_t>(elem_bytes);
    t_h2d_base = tm.median_s(cfg.reps, [&] {
      cudaMemcpyAsync(cb.dev_a, cb.pinned, n, cudaMemcpyHostToDevice, nullptr);
    });
    t_d2h_base = tm.median_s(cfg.reps, [&] {
      cudaMemcpyAsync(cb.pinned, cb.dev_a, n, cudaMemcpyDeviceToHost, nullptr);
    });
    t_d2d_base = tm.median_s(cfg.reps, [&] {
      cudaMemcpyAsync(cb.dev_b, cb.dev_a, e, cudaMemcpyDeviceToDevice, nullptr);
    });
    t_memset_base = tm.median_s(cfg.reps, [&] { cudaMemsetAsync(cb.dev_a, 0, e, nullptr); });
  } else if (events) {
    out.string("baseline_error", "could not allocate the cudaMemcpy baseline buffers");
  }
#endif

  status = GTSTORAGE_OK;
  const double t_h2d = tm.median_s(cfg.reps, [&] {
    if (status == GTSTORAGE_OK) {
      status = gtstorage_sync_to(mirror, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE);
    }
  });
  if (ok(status, "gtstorage_sync_to (device)", out)) {
    out.object("h2d", figure(moved, t_h2d, t_h2d_base, 0.95));
  }
  const double t_d2h = tm.median_s(cfg.reps, [&] {
    if (status == GTSTORAGE_OK) {
      status = gtstorage_sync_to(mirror, GTSTORAGE_SIDE_HOST, GTSTORAGE_SYNC_FLAG_FORCE);
    }
  });
  if (ok(status, "gtstorage_sync_to (host)", out)) {
    out.object("d2h", figure(moved, t_d2h, t_d2h_base, 0.95));
  }
  gtstorage_release(mirror);

  // --- Device layout copy and fill: device-only fields.
  gtstorage_create_options d = o;
  d.managed = GTSTORAGE_MANAGED_NONE;
  d.host_memory = GTSTORAGE_HOST_PAGEABLE;
  gtstorage_handle src = GTSTORAGE_NULL_HANDLE, dst = GTSTORAGE_NULL_HANDLE;
  const int32_t kfirst[3] = {0, 1, 2};  // K contiguous, unlike gt:gpu's I-first.
  gtstorage_create_options dk = d;
  dk.layout = kfirst;
  if (!ok(gtstorage_create(&d, &src), "gtstorage_create (device, I-first)", out)) return true;
  if (!ok(gtstorage_create(&dk, &dst), "gtstorage_create (device, K-first)", out)) {
    gtstorage_release(src);
    return true;
  }
  const int64_t before = h2d_d2h_transfers();
  status = GTSTORAGE_OK;
  const double t_copy = tm.median_s(cfg.reps, [&] {
    if (status == GTSTORAGE_OK) status = gtstorage_copy(dst, src);
  });
  if (ok(status, "gtstorage_copy (device layout change)", out)) {
    json_object f = figure(elem_bytes, t_copy, t_d2d_base, 0.8);
    // A device-to-device copy must not touch the host: prove it with the transfer counters.
    f.boolean("stayed_on_device", h2d_d2h_transfers() == before);
    out.object("layout_copy", f);
  }
  status = GTSTORAGE_OK;
  const double t_fill = tm.median_s(cfg.reps, [&] {
    if (status == GTSTORAGE_OK) status = gtstorage_fill_double(src, 1.5);
  });
  if (ok(status, "gtstorage_fill_double (device)", out)) {
    json_object f = figure(elem_bytes, t_fill, t_memset_base, 0.9);
    f.boolean("stayed_on_device", h2d_d2h_transfers() == before);
    out.object("fill", f);
  }
  gtstorage_release(dst);
  gtstorage_release(src);

  out.object("pool", pool_figures(cfg, out));
  return true;
}

}  // namespace bench
