// Pool figures of gtstorage-bench (issue 10, point 3): a time-loop temporary (create + zeros +
// release of the whole field) against a memset of the same bytes, a fresh first allocation with
// and without the pool, small create + release (device allocation pooled vs unpooled is part of
// --device, device_bench.cpp). Every ratio comes from interleaved repetitions of one run.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {
namespace {

void create_release(const gtstorage_create_options& o, const char* what) {
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  check(gtstorage_create(&o, &h), what);
  check(gtstorage_release(h), what);
}

int64_t host_limit() {
  gtstorage_pool_stats s = GTSTORAGE_POOL_STATS_INIT;
  check(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_HOST, &s), "gtstorage_pool_get_stats");
  return s.limit_bytes;
}

// Median ns per call of @p iters create + release calls, over @p reps samples.
double per_call_ns(int reps, int iters, const gtstorage_create_options& o) {
  return median_time(reps,
                     [&] {
                       for (int i = 0; i < iters; ++i) create_release(o, "create+release");
                     }) *
         1e9 / iters;
}

}  // namespace

void pool_bench(const config& cfg, json_object& j, json_object& targets) {
  const int reps = std::max(cfg.reps, 7);
  const int64_t shape[3] = {cfg.ni, cfg.nj, cfg.nk};
  const auto bytes = static_cast<std::size_t>(cfg.ni * cfg.nj * cfg.nk * 8);
  const int64_t limit = host_limit();
  json_object p;
  p.integer("host_limit_bytes", limit);

  // --- the time-loop temporary: create + zeros + release, pooled, vs memset of its bytes.
  const gtstorage_create_options zeros =
      create_options(3, shape, "gt:cpu_kfirst", GTSTORAGE_INIT_ZEROS);
  std::unique_ptr<unsigned char[]> buf(new unsigned char[bytes]);
  std::memset(buf.get(), 1, bytes);  // first touch outside the timing
  create_release(zeros, "create+zeros+release (warm-up)");
  std::vector<double> t_memset, t_loop;
  for (int r = 0; r < reps; ++r) {
    double a = now_s();
    std::memset(buf.get(), 0, bytes);
    t_memset.push_back(now_s() - a);
    a = now_s();
    create_release(zeros, "create+zeros+release");
    t_loop.push_back(now_s() - a);
  }
  const double memset_s = median(t_memset), loop_s = median(t_loop);
  p.number("memset_ms", memset_s * 1e3, 3);
  p.number("create_zeros_release_pooled_ms", loop_s * 1e3, 3);

  // --- a fresh first allocation: the pool missing (trimmed before each) vs no pool at all;
  // create + zeros + a first write of every byte (fresh memory is zero without a fill pass, so
  // its cost is the first touch) + release.
  auto fresh = [&](const char* what) {
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    check(gtstorage_create(&zeros, &h), what);
    gtstorage_interface_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info), what);
    std::memset(static_cast<unsigned char*>(info.data) - info.byte_offset, 1,
                static_cast<std::size_t>(info.allocation_bytes));
    check(gtstorage_release(h), what);
  };
  std::vector<double> t_miss, t_off;
  for (int r = 0; r < reps; ++r) {
    check(gtstorage_pool_trim(GTSTORAGE_MEMORY_HOST, 0), "gtstorage_pool_trim");
    double a = now_s();
    fresh("fresh create (pool on)");
    t_miss.push_back(now_s() - a);
    check(gtstorage_pool_trim(GTSTORAGE_MEMORY_HOST, 0), "gtstorage_pool_trim");
    check(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_HOST, 0), "gtstorage_pool_set_limit");
    a = now_s();
    fresh("fresh create (pool off)");
    t_off.push_back(now_s() - a);
    check(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_HOST, limit), "gtstorage_pool_set_limit");
  }
  p.number("fresh_create_zeros_write_release_pool_miss_ms", median(t_miss) * 1e3, 3);
  p.number("fresh_create_zeros_write_release_pool_off_ms", median(t_off) * 1e3, 3);

  // --- small create + release (4x4x4 f8 and 32x32x8 f8 = 64 KiB), pooled vs pool off.
  const int64_t tiny[3] = {4, 4, 4}, mid[3] = {32, 32, 8};
  const gtstorage_create_options tiny_o =
      create_options(3, tiny, "numpy", GTSTORAGE_INIT_UNINITIALIZED);
  const gtstorage_create_options mid_o =
      create_options(3, mid, "numpy", GTSTORAGE_INIT_UNINITIALIZED);
  const double tiny_ns = per_call_ns(reps, 20000, tiny_o);
  const double mid_ns = per_call_ns(reps, 20000, mid_o);
  check(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_HOST, 0), "gtstorage_pool_set_limit");
  const double mid_off_ns = per_call_ns(reps, 20000, mid_o);
  check(gtstorage_pool_set_limit(GTSTORAGE_MEMORY_HOST, limit), "gtstorage_pool_set_limit");
  p.number("create_release_small_pooled_ns", tiny_ns, 1);
  p.number("create_release_64k_pooled_ns", mid_ns, 1);
  p.number("create_release_64k_pool_off_ns", mid_off_ns, 1);

  // Device allocation pooled vs unpooled: the "pool" object of --device (device_bench.cpp).
  check(gtstorage_pool_trim(GTSTORAGE_MEMORY_ALL, 0), "gtstorage_pool_trim");
  j.object("pools", p);

  targets.object("create_zeros_release_pooled_vs_memset",
                 ratio_target(loop_s / memset_s, 1.1, false));
  targets.object("fresh_create_pool_miss_vs_pool_off",
                 ratio_target(median(t_miss) / median(t_off), 1.1, false));
  targets.object("create_release_small_pooled_ns", value_target(tiny_ns, 100.0));
}

}  // namespace bench
