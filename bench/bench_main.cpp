// gtstorage-bench: host figures of libgtstorage on one float64 field (default 512x512x128),
// printed as one JSON object on stdout; every figure is the median of repeated runs taken in the
// same process, so ratios compare like with like. Bandwidth counts bytes read plus bytes
// written. Library work goes through the public C API only (gtstorage_create, gtstorage_copy,
// gtstorage_fill, gtstorage_interface); the baselines (memcpy, store loop, naive copy loop) are
// written here.
//
//   gtstorage-bench [--json-only] [--reps N] [--size NIxNJxNK] [--device]
#include <cinttypes>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_common.hpp"

namespace bench {
/// Copy figures (bench/copy_bench.cpp): f4, 4-D and halo pack/unpack, with their targets.
void copy_bench(const config& cfg, json_object& j, json_object& targets);
/// Pool figures (bench/pool_bench.cpp): time-loop temporaries, fresh allocations, device pools.
void pool_bench(const config& cfg, json_object& j, json_object& targets);
}  // namespace bench

namespace {

using bench::check;
using bench::config;
using bench::json_object;
using bench::median_time;
using bench::ratio_target;
using bench::value_target;

void usage(FILE* f) {
  std::fprintf(f,
               "usage: gtstorage-bench [--json-only] [--reps N] [--size NIxNJxNK] [--device]\n"
               "  --json-only   print only the JSON object (no summary on stderr)\n"
               "  --reps N      timed repetitions per figure, median reported (default 7)\n"
               "  --size S      field extents, e.g. 512x512x128 (default)\n"
               "  --device      add device figures (transfers, copy, fill, pooled vs unpooled\n"
               "                allocation) when a device backend has a device; without a GPU,\n"
               "                GTSTORAGE_DEVICE_BACKEND=emulated runs them on the emulated one\n");
}

config parse_args(int argc, char** argv) {
  config cfg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json-only") {
      cfg.json_only = true;
    } else if (a == "--device") {
      cfg.device = true;
    } else if (a == "--reps" && i + 1 < argc) {
      if (!bench::parse_count(argv[++i], 1000, cfg.reps)) {
        std::fprintf(stderr, "gtstorage-bench: --reps must be an integer in 1..1000\n");
        std::exit(2);
      }
    } else if (a == "--size" && i + 1 < argc) {
      int64_t extents[3];
      if (!bench::parse_extents(argv[++i], int64_t{1} << 20, extents)) {
        std::fprintf(stderr,
                     "gtstorage-bench: --size must be NIxNJxNK with extents in 1..1048576\n");
        std::exit(2);
      }
      cfg.ni = extents[0];
      cfg.nj = extents[1];
      cfg.nk = extents[2];
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "gtstorage-bench: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      std::exit(2);
    }
  }
  return cfg;
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Runs f with the library (and the bench's loops) limited to @p n threads. The bench and the
// library share one OpenMP runtime, so the calling thread's setting reaches the library.
template <class F>
auto with_threads(int n, F&& f) {
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  omp_set_num_threads(n);
  auto r = f();
  omp_set_num_threads(saved);
  return r;
#else
  (void)n;
  return f();
#endif
}

// A 3-D float64 storage with the given preset; "IJK" dims so presets order by name.
struct field {
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  gtstorage_interface_info info{};
  double* data = nullptr;

  field(const config& cfg, const char* preset, int32_t init) {
    const int64_t shape[3] = {cfg.ni, cfg.nj, cfg.nk};
    const gtstorage_create_options o = bench::field_options(shape, preset, init);
    check(gtstorage_create(&o, &h), "gtstorage_create");
    info.struct_size = sizeof info;
    check(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info), "gtstorage_interface");
    data = static_cast<double*>(info.data);
  }
  field(const field&) = delete;
  field& operator=(const field&) = delete;
  ~field() { gtstorage_release(h); }
  [[nodiscard]] int64_t count() const { return info.shape[0] * info.shape[1] * info.shape[2]; }
};

// The "plain store loop" baseline and the write pass of the first-touch figures: what a user
// loop writing every element of a C-contiguous field compiles to, split like the library's fill
// (static schedule over the outermost index).
void store_loop(double* p, int64_t n, double v) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n > 4096)
#endif
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}

// Element-by-element copy through the descriptors' strides: the naive layout-changing copy.
void naive_copy(const field& dst, const field& src) {
  const int64_t ni = dst.info.shape[0], nj = dst.info.shape[1], nk = dst.info.shape[2];
  const int64_t dsi = dst.info.strides[0] / 8, dsj = dst.info.strides[1] / 8,
                dsk = dst.info.strides[2] / 8;
  const int64_t ssi = src.info.strides[0] / 8, ssj = src.info.strides[1] / 8,
                ssk = src.info.strides[2] / 8;
  for (int64_t i = 0; i < ni; ++i) {
    for (int64_t j = 0; j < nj; ++j) {
      for (int64_t k = 0; k < nk; ++k) {
        dst.data[i * dsi + j * dsj + k * dsk] = src.data[i * ssi + j * ssj + k * ssk];
      }
    }
  }
}

bool same_values(const field& a, const field& b) {
  const int64_t ni = a.info.shape[0], nj = a.info.shape[1], nk = a.info.shape[2];
  for (int64_t i = 0; i < ni; i += 7) {
    for (int64_t j = 0; j < nj; j += 3) {
      for (int64_t k = 0; k < nk; ++k) {
        const double x =
            a.data[(i * a.info.strides[0] + j * a.info.strides[1] + k * a.info.strides[2]) / 8];
        const double y =
            b.data[(i * b.info.strides[0] + j * b.info.strides[1] + k * b.info.strides[2]) / 8];
        if (x != y) return false;
      }
    }
  }
  return true;
}

void fill_pattern(field& f) {
  // Distinct values, so a copy that misplaced elements would be caught by same_values.
  const int64_t n = f.count();
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (int64_t i = 0; i < n; ++i) f.data[i] = static_cast<double>(i) * 0.5 + 1.0;
}

// Median time of each job over @p reps rounds; each round runs every job once, in order, after
// one untimed warm-up round.
std::vector<double> interleaved(int reps, const std::vector<std::function<void()>>& jobs) {
  std::vector<std::vector<double>> t(jobs.size());
  for (int r = 0; r <= reps; ++r) {
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const double a = bench::now_s();
      jobs[k]();
      if (r > 0) t[k].push_back(bench::now_s() - a);
    }
  }
  std::vector<double> med;
  for (auto& v : t) med.push_back(bench::median(v));
  return med;
}

}  // namespace

int main(int argc, char** argv) {
  const config cfg = parse_args(argc, argv);
  const int reps = cfg.reps;
  const int threads = max_threads();
  volatile double seed = 3.25;  // runtime value: no constant-folded stores
  const double value = seed;

  field numpy_src(cfg, "numpy", GTSTORAGE_INIT_UNINITIALIZED);
  field numpy_dst(cfg, "numpy", GTSTORAGE_INIT_UNINITIALIZED);
  field f_src(cfg, "F", GTSTORAGE_INIT_UNINITIALIZED);
  field k_dst(cfg, "gt:cpu_kfirst", GTSTORAGE_INIT_UNINITIALIZED);
  for (field* f : {&numpy_src, &numpy_dst, &f_src, &k_dst}) fill_pattern(*f);
  const int64_t n = numpy_src.count();
  const double bytes = static_cast<double>(n) * 8.0;  // one array
  auto gbs = [](double moved, double seconds) { return moved / seconds / 1e9; };

  // The figures that are compared with each other are timed interleaved, one round of each per
  // repetition, so load from other processes on a shared machine hits them alike.
  auto lib_copy = [](field& d, field& s) {
    return [&d, &s] { check(gtstorage_copy(d.h, s.h), "gtstorage_copy"); };
  };
  auto lib_fill = [&] { check(gtstorage_fill(k_dst.h, &value), "gtstorage_fill"); };
  auto plain = [&] { store_loop(k_dst.data, n, value); };
  auto do_memcpy = [&] {
    std::memcpy(numpy_dst.data, numpy_src.data, static_cast<std::size_t>(bytes));
  };
  // memcpy split like the library splits a copy: each thread copies its static share.
  auto split_memcpy = [&] {
    const auto total = static_cast<int64_t>(bytes);
#ifdef _OPENMP
#pragma omp parallel
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t b = total * t / nt, e = total * (t + 1) / nt;
      std::memcpy(reinterpret_cast<char*>(numpy_dst.data) + b,
                  reinterpret_cast<const char*>(numpy_src.data) + b, static_cast<size_t>(e - b));
    }
#else
    std::memcpy(numpy_dst.data, numpy_src.data, static_cast<std::size_t>(total));
#endif
  };
  // One thread: memcpy is the reference of the layout-changing copy target.
  const std::vector<double> one = with_threads(1, [&] {
    return interleaved(
        reps, {do_memcpy, lib_copy(numpy_dst, numpy_src), lib_copy(k_dst, f_src), lib_fill, plain});
  });
  const std::vector<double> all = interleaved(
      reps,
      {lib_copy(numpy_dst, numpy_src), lib_copy(k_dst, f_src), lib_fill, plain, split_memcpy});
  const double t_memcpy = one[0], t_same_1t = one[1], t_fk_1t = one[2], t_fill_1t = one[3],
               t_store_1t = one[4];
  const double t_same = all[0], t_fk = all[1], t_fill = all[2], t_store = all[3],
               t_memcpy_all = all[4];
  // The fill jobs overwrote k_dst: copy once more and check the values (a wrong copy would make
  // every figure above meaningless).
  check(gtstorage_copy(k_dst.h, f_src.h), "gtstorage_copy");
  if (!same_values(k_dst, f_src)) {
    std::fprintf(stderr, "gtstorage-bench: gtstorage_copy F -> K-first gave wrong values\n");
    return 1;
  }
  const double t_naive = median_time(std::max(1, std::min(reps, 3)), [&] {
    naive_copy(k_dst, f_src);
    return 0;
  });

  // --- fresh zeros + first write vs the same write on a touched buffer
  std::vector<double> first, reused;
  for (int r = 0; r < reps + 1; ++r) {
    const double a = bench::now_s();
    field z(cfg, "numpy", GTSTORAGE_INIT_ZEROS);
    store_loop(z.data, n, value);
    const double b = bench::now_s();
    store_loop(z.data, n, value + 1.0);
    const double c = bench::now_s();
    if (r > 0) {  // first round warms the allocator and the kernel's page pools
      first.push_back(b - a);
      reused.push_back(c - b);
    }
  }
  const double t_first = bench::median(first), t_reused = bench::median(reused);

  // --- small create + release
  const int64_t small_shape[3] = {4, 4, 4};
  const gtstorage_create_options so =
      bench::create_options(3, small_shape, nullptr, GTSTORAGE_INIT_UNINITIALIZED);
  const int small_iters = 20000;
  const double t_small =
      median_time(reps,
                  [&] {
                    for (int i = 0; i < small_iters; ++i) {
                      gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
                      check(gtstorage_create(&so, &h), "gtstorage_create (small)");
                      check(gtstorage_release(h), "gtstorage_release (small)");
                    }
                    return 0;
                  }) /
      small_iters;

  // --- descriptor query on a 3-D storage
  const int query_iters = 200000;
  gtstorage_interface_info qi{};
  qi.struct_size = sizeof qi;
  const double t_query =
      median_time(reps,
                  [&] {
                    for (int i = 0; i < query_iters; ++i) {
                      check(gtstorage_interface(k_dst.h, GTSTORAGE_SIDE_HOST, &qi),
                            "gtstorage_interface");
                    }
                    return 0;
                  }) /
      query_iters;

  const double memcpy_t = t_memcpy;
  json_object j;
  j.string("dtype", "<f8");
  j.raw("size", "[" + std::to_string(cfg.ni) + ", " + std::to_string(cfg.nj) + ", " +
                    std::to_string(cfg.nk) + "]");
  j.integer("array_bytes", static_cast<int64_t>(bytes));
  j.integer("reps", reps);
  j.integer("threads", threads);
  j.number("memcpy_gbs", gbs(2 * bytes, memcpy_t), 2);
  j.number("memcpy_1t_gbs", gbs(2 * bytes, memcpy_t), 2);
  j.number("memcpy_all_gbs", gbs(2 * bytes, t_memcpy_all), 2);
  j.number("copy_same_layout_gbs", gbs(2 * bytes, t_same), 2);
  j.number("copy_same_layout_1t_gbs", gbs(2 * bytes, t_same_1t), 2);
  j.number("copy_f_to_kfirst_gbs", gbs(2 * bytes, t_fk), 2);
  j.number("copy_f_to_kfirst_1t_gbs", gbs(2 * bytes, t_fk_1t), 2);
  j.number("copy_f_to_kfirst_naive_gbs", gbs(2 * bytes, t_naive), 2);
  j.number("fill_value_gbs", gbs(bytes, t_fill), 2);
  j.number("fill_value_1t_gbs", gbs(bytes, t_fill_1t), 2);
  j.number("store_loop_gbs", gbs(bytes, t_store), 2);
  j.number("store_loop_1t_gbs", gbs(bytes, t_store_1t), 2);
  j.number("zeros_first_touch_ms", t_first * 1e3, 2);
  j.number("reused_write_ms", t_reused * 1e3, 2);
  j.number("create_release_small_ns", t_small * 1e9, 1);
  j.number("interface_query_ns", t_query * 1e9, 1);

  json_object targets;
  targets.object("copy_f_to_kfirst_1t_vs_memcpy", ratio_target(memcpy_t / t_fk_1t, 0.9, true));
  targets.object("copy_f_to_kfirst_1t_vs_same_layout",
                 ratio_target(t_same_1t / t_fk_1t, 0.9, true));
  targets.object("fill_vs_store_loop", ratio_target(t_store / t_fill, 0.95, true));
  targets.object("zeros_first_touch_vs_reused_write", ratio_target(t_first / t_reused, 1.6, false));
  targets.object("create_release_small_ns", value_target(t_small * 1e9, 200.0));
  targets.object("interface_query_ns", value_target(t_query * 1e9, 20.0));
  bench::copy_bench(cfg, j, targets);
  bench::pool_bench(cfg, j, targets);
  j.object("targets", targets);

  json_object dev;
  if (cfg.device && bench::device_bench(cfg, dev)) {
    j.object("device", dev);
  } else {
    j.null("device");
  }

  std::printf("%s\n", j.str().c_str());
  if (!cfg.json_only) {
    std::fprintf(stderr,
                 "gtstorage-bench  %" PRId64 "x%" PRId64 "x%" PRId64
                 " <f8, %d threads, median of %d\n"
                 "  memcpy                       %7.2f GB/s   1 thread %7.2f GB/s\n"
                 "  copy same layout             %7.2f GB/s   1 thread %7.2f GB/s\n"
                 "  copy F -> K-first            %7.2f GB/s   1 thread %7.2f GB/s (%.2fx memcpy)\n"
                 "  copy F -> K-first, naive     %7.2f GB/s\n"
                 "  fill                         %7.2f GB/s   1 thread %7.2f GB/s\n"
                 "  plain store loop             %7.2f GB/s   1 thread %7.2f GB/s\n"
                 "  zeros + first write          %7.2f ms     reused write %.2f ms (%.2fx)\n"
                 "  small create + release       %7.1f ns\n"
                 "  interface query              %7.1f ns\n",
                 cfg.ni, cfg.nj, cfg.nk, threads, reps, gbs(2 * bytes, t_memcpy_all),
                 gbs(2 * bytes, memcpy_t), gbs(2 * bytes, t_same), gbs(2 * bytes, t_same_1t),
                 gbs(2 * bytes, t_fk), gbs(2 * bytes, t_fk_1t), memcpy_t / t_fk_1t,
                 gbs(2 * bytes, t_naive), gbs(bytes, t_fill), gbs(bytes, t_fill_1t),
                 gbs(bytes, t_store), gbs(bytes, t_store_1t), t_first * 1e3, t_reused * 1e3,
                 t_first / t_reused, t_small * 1e9, t_query * 1e9);
  }
  return 0;
}
