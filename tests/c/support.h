/*
 * Shared helpers of the cmocka suite. Everything here goes through the public header only, so
 * a test exercises exactly what a C caller of libgtstorage sees.
 */
#ifndef GTSTORAGE_TESTS_C_SUPPORT_H
#define GTSTORAGE_TESTS_C_SUPPORT_H

/* cmocka needs these before its own header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* clang-format off */
#include <cmocka.h>
/* clang-format on */

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmocka_main.h"

/* The suites use the experimental tier (refcounts, counter resets, backend switching) and
 * also cover the deprecated sync spellings, which stay supported within the major version. */
#define GTSTORAGE_NO_DEPRECATION_WARNINGS
#include "gtstorage/gtstorage_experimental.h"

/* ------------------------------------------------------------------------------------------ */
/* Status checks with readable diagnostics (cmocka's assert_int_equal prints negative codes as
 * huge unsigned numbers, which hides which error the library actually returned). */

/* Case-insensitive substring search: messages may say "Shape" or "shape". */
static inline int gts_contains_ci(const char* hay, const char* needle) {
  size_t n = strlen(needle);
  if (n == 0) return 1;
  for (; *hay; ++hay) {
    size_t i = 0;
    while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == n) return 1;
  }
  return 0;
}

/* True if @p msg contains at least one of the '|'-separated alternatives in @p words. */
static inline int gts_contains_any(const char* msg, const char* words) {
  char buf[256];
  const char* p = words;
  while (*p) {
    const char* bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (gts_contains_ci(msg, buf)) return 1;
    if (!bar) break;
    p = bar + 1;
  }
  return 0;
}

#define GTS_OK(call)                                                                          \
  do {                                                                                        \
    int gts_st_ = (call);                                                                     \
    if (gts_st_ != GTSTORAGE_OK)                                                              \
      fail_msg("%s returned %s (%d): \"%s\"", #call, gtstorage_status_name(gts_st_), gts_st_, \
               gtstorage_last_error());                                                       \
  } while (0)

/* Asserts the exact status and that the thread's message names one of @p words. */
#define GTS_EXPECT(call, expected, words)                                                \
  do {                                                                                   \
    int gts_st_ = (call);                                                                \
    const char* gts_msg_ = gtstorage_last_error();                                       \
    if (gts_st_ != (expected))                                                           \
      fail_msg("%s returned %s (%d), expected %s; message \"%s\"", #call,                \
               gtstorage_status_name(gts_st_), gts_st_, gtstorage_status_name(expected), \
               gts_msg_ ? gts_msg_ : "(null)");                                          \
    if (gts_msg_ == NULL || !gts_contains_any(gts_msg_, (words)))                        \
      fail_msg("%s: message \"%s\" does not name any of \"%s\"", #call,                  \
               gts_msg_ ? gts_msg_ : "(null)", (words));                                 \
  } while (0)

/* Asserts two int64 values are equal and says which. */
#define GTS_EQ64(a, b)                                                                \
  do {                                                                                \
    int64_t gts_a_ = (int64_t)(a), gts_b_ = (int64_t)(b);                             \
    if (gts_a_ != gts_b_)                                                             \
      fail_msg("%s == %" PRId64 ", expected %s == %" PRId64, #a, gts_a_, #b, gts_b_); \
  } while (0)

/* Asserts that the first elements of the array @p got (of any integer type) are the listed
 * values, and says which differs. */
#define GTS_EQ_ARRAY(got, ...)                                                         \
  do {                                                                                 \
    const int64_t gts_want_[] = {__VA_ARGS__};                                         \
    for (size_t gts_k_ = 0; gts_k_ < sizeof gts_want_ / sizeof gts_want_[0]; ++gts_k_) \
      if ((int64_t)(got)[gts_k_] != gts_want_[gts_k_])                                 \
        fail_msg("%s[%zu] == %" PRId64 ", expected %" PRId64, #got, gts_k_,            \
                 (int64_t)(got)[gts_k_], gts_want_[gts_k_]);                           \
  } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Live statistics (leak checks). */

typedef struct gts_live {
  int64_t handles;
  int64_t buffers;
  int64_t host_bytes;
} gts_live;

/* The library's statistics; the call must succeed. */
static inline gtstorage_stats gts_stats(void) {
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  GTS_OK(gtstorage_get_stats(&s));
  return s;
}

static inline gts_live gts_live_now(void) {
  const gtstorage_stats s = gts_stats();
  gts_live l;
  l.handles = s.live_handles;
  l.buffers = s.live_buffers;
  l.host_bytes = s.host_bytes;
  return l;
}

/* "handles a -> b, buffers c -> d, host_bytes e -> f" from @p base to @p now into @p out; 0 when
 * nothing changed. */
static inline int gts_live_change(gts_live base, gts_live now, char* out, size_t size) {
  snprintf(out, size,
           "handles %" PRId64 " -> %" PRId64 ", buffers %" PRId64 " -> %" PRId64
           ", host_bytes %" PRId64 " -> %" PRId64,
           base.handles, now.handles, base.buffers, now.buffers, base.host_bytes, now.host_bytes);
  return now.handles != base.handles || now.buffers != base.buffers ||
         now.host_bytes != base.host_bytes;
}

#define GTS_ASSERT_LIVE(now, base)                                       \
  do {                                                                   \
    char gts_change_[192];                                               \
    if (gts_live_change((base), (now), gts_change_, sizeof gts_change_)) \
      fail_msg("live stats changed: %s", gts_change_);                   \
  } while (0)

/* A teardown's check that the live statistics are back at @p base; @p what says whose. */
static inline int gts_teardown_check(gts_live base, const char* what) {
  char change[192];
  if (!gts_live_change(base, gts_live_now(), change, sizeof change)) return 0;
  print_error("%s: %s\n", what, change);
  return -1;
}

/* A leak check of one scope: gts_<scope>_setup records the live statistics, and
 * gts_<scope>_teardown fails, saying @p what, unless they are back there. */
#define GTS_LEAK_CHECK(scope, what)                          \
  static gts_live gts_##scope##_baseline;                    \
  static inline int gts_##scope##_setup(void** state) {      \
    (void)state;                                             \
    gts_##scope##_baseline = gts_live_now();                 \
    return 0;                                                \
  }                                                          \
  static inline int gts_##scope##_teardown(void** state) {   \
    (void)state;                                             \
    return gts_teardown_check(gts_##scope##_baseline, what); \
  }

/* Group setup/teardown: every test file checks that it ends with what it started with. */
GTS_LEAK_CHECK(group, "leak at end of group")
/* Per-test leak check: each test must give back everything it created. */
GTS_LEAK_CHECK(test, "test leaked")

#define GTS_TEST(f) cmocka_unit_test_setup_teardown(f, gts_test_setup, gts_test_teardown)

/* The main() of most files: every test the file defines, each with the per-test leak check, as
 * one group ("tests") between @p group_setup and @p group_teardown (cmocka_main.h). */
#define GTS_TEST_MAIN(group_setup, group_teardown) \
  GTS_TEST_MAIN_WITH("tests", GTS_TEST, group_setup, group_teardown)

/* The main() of a file of host tests (GTS_TESTS) and emulated-device tests (GTS_TESTS_device:
 * after the marker gts-test-group: device), each with the per-test leak check: the group
 * @p host_name between gts_group_setup and gts_group_teardown, then the group @p device_name
 * between @p device_setup (which selects the emulated backend) and gts_group_teardown. */
#define GTS_TEST_MAIN_HOST_DEVICE(host_name, device_name, device_setup)                         \
  int main(void) {                                                                              \
    int failed = 0;                                                                             \
    GTS_RUN_TESTS(failed, host_name, GTS_TESTS, GTS_TEST, gts_group_setup, gts_group_teardown); \
    GTS_RUN_TESTS(failed, device_name, GTS_TESTS_device, GTS_TEST, device_setup,                \
                  gts_group_teardown);                                                          \
    return failed;                                                                              \
  }

/* ------------------------------------------------------------------------------------------ */
/* N-d index helpers. */

/* Odometer increment, last dimension fastest; returns 0 after the last index. */
static inline int gts_next_index(int64_t* idx, const int64_t* shape, int ndim) {
  for (int d = ndim - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

static inline int64_t gts_product(const int64_t* shape, int ndim) {
  int64_t p = 1;
  for (int d = 0; d < ndim; ++d) p *= shape[d];
  return p;
}

static inline char* gts_elem(void* data, const int64_t* strides, const int64_t* idx, int ndim) {
  char* p = (char*)data;
  for (int d = 0; d < ndim; ++d) p += idx[d] * strides[d];
  return p;
}

/* A value per index that is exact in double, float and int32 for extents < 10. */
static inline double gts_value(const int64_t* idx, int ndim) {
  static const double w[] = {10000.0, 1000.0, 100.0, 10.0, 1.0, 0.5};
  double v = 1.0;
  for (int d = 0; d < ndim && d < 6; ++d) v += w[d] * (double)idx[d];
  return v;
}

/* Fills a C-contiguous double array with gts_value. */
static inline void gts_fill_reference(double* out, const int64_t* shape, int ndim) {
  int64_t idx[GTSTORAGE_MAX_NDIM] = {0};
  int64_t n = gts_product(shape, ndim);
  for (int64_t i = 0; i < n; ++i) {
    out[i] = gts_value(idx, ndim);
    gts_next_index(idx, shape, ndim);
  }
}

/* The descriptor of side @p side of @p h; the call must succeed. */
static inline gtstorage_interface_info gts_info(gtstorage_handle h, int32_t side) {
  gtstorage_interface_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  GTS_OK(gtstorage_interface(h, side, &info));
  return info;
}

static inline gtstorage_interface_info gts_host_info(gtstorage_handle h) {
  return gts_info(h, GTSTORAGE_SIDE_HOST);
}

/* The address of side @p side of @p h; the call must succeed. */
static inline void* gts_data(gtstorage_handle h, int32_t side) {
  void* p = NULL;
  GTS_OK(gtstorage_data(h, side, &p));
  return p;
}

/* The transfer counters of @p h; the call must succeed. */
static inline gtstorage_transfer_stats gts_transfer_stats(gtstorage_handle h) {
  gtstorage_transfer_stats t;
  memset(&t, 0, sizeof t);
  t.struct_size = sizeof t;
  GTS_OK(gtstorage_get_transfer_stats(h, &t));
  return t;
}

/* A caller's array of @p ndim extents @p shape at @p data, every other field at its default
 * (C order, the storage's dtype), for the caller to set. */
static inline gtstorage_array gts_array(uint32_t ndim, const int64_t* shape, void* data) {
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = ndim;
  a.shape = shape;
  a.data = data;
  return a;
}

/* The wrap options of @p ndim extents @p shape over host memory @p data, every other field at
 * its default (<f8, C order, writable), for the caller to set. */
static inline gtstorage_wrap_options gts_wrap_options(uint32_t ndim, const int64_t* shape,
                                                      void* data) {
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = ndim;
  w.shape = shape;
  w.data = data;
  return w;
}

/* A storage over the caller's host memory @p data: @p ndim extents @p shape with the wrap
 * defaults; the call must succeed. */
static inline gtstorage_handle gts_wrap_host(uint32_t ndim, const int64_t* shape, void* data) {
  const gtstorage_wrap_options w = gts_wrap_options(ndim, shape, data);
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  GTS_OK(gtstorage_wrap(&w, &h));
  return h;
}

/* The options of a storage of @p ndim extents @p shape from @p preset (NULL: the default one),
 * every other field at its default, for the caller to set. */
static inline gtstorage_create_options gts_options(uint32_t ndim, const int64_t* shape,
                                                   const char* preset) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = ndim;
  o.shape = shape;
  o.preset = preset;
  return o;
}

/* Releases the @p n handles of @p handles in order; each release must succeed. */
static inline void gts_release_each(const gtstorage_handle* handles, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int st = gtstorage_release(handles[i]);
    if (st != GTSTORAGE_OK)
      fail_msg("gtstorage_release of handle %zu of %zu returned %s: \"%s\"", i + 1, n,
               gtstorage_status_name(st), gtstorage_last_error());
  }
}

/* GTS_RELEASE(a, b, c): releases a, then b, then c; each release must succeed. */
#define GTS_RELEASE(...)                                    \
  gts_release_each((const gtstorage_handle[]){__VA_ARGS__}, \
                   sizeof((const gtstorage_handle[]){__VA_ARGS__}) / sizeof(gtstorage_handle))

/* A host preset of the by-dims rule named @p name: alignment @p alignment in @p unit (a
 * ::gtstorage_alignment_unit), I, J and K at ranks @p rank_i, @p rank_j, @p rank_k (0 = slowest);
 * for the caller to change or register. */
static inline gtstorage_preset_info gts_preset(const char* name, int64_t alignment, int32_t unit,
                                               int32_t rank_i, int32_t rank_j, int32_t rank_k) {
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  snprintf(p.name, sizeof p.name, "%s", name);
  p.alignment = alignment;
  p.alignment_unit = unit;
  p.device = GTSTORAGE_DEVICE_CPU;
  p.rule = GTSTORAGE_RULE_BY_DIMS;
  p.base_layout[0] = rank_i;
  p.base_layout[1] = rank_j;
  p.base_layout[2] = rank_k;
  return p;
}

/* A storage made with @p o; the call must succeed. */
static inline gtstorage_handle gts_create(const gtstorage_create_options* o) {
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  GTS_OK(gtstorage_create(o, &h));
  assert_true(h != GTSTORAGE_NULL_HANDLE);
  return h;
}

static inline gtstorage_plan_info gts_plan_of(const gtstorage_create_options* o) {
  gtstorage_plan_info p;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  GTS_OK(gtstorage_plan(o, &p));
  return p;
}

/* Creates a host storage of doubles filled with gts_value (through INIT_COPY). */
static inline gtstorage_handle gts_create_valued(const char* preset, const char* dims, int ndim,
                                                 const int64_t* shape, const int64_t* halo) {
  int64_t n = gts_product(shape, ndim);
  double* ref = (double*)malloc((size_t)n * sizeof(double));
  gtstorage_array src = gts_array((uint32_t)ndim, shape, ref);
  gtstorage_create_options o = gts_options((uint32_t)ndim, shape, preset);
  gtstorage_handle h = 0;
  assert_non_null(ref);
  gts_fill_reference(ref, shape, ndim);
  src.dtype = "<f8";
  o.dtype = "<f8";
  o.dims = dims;
  o.halo = halo;
  o.device = GTSTORAGE_DEVICE_CPU;
  o.init = GTSTORAGE_INIT_COPY;
  o.source = &src;
  {
    int st = gtstorage_create(&o, &h);
    free(ref);
    if (st != GTSTORAGE_OK)
      fail_msg("create(%s) failed: %s \"%s\"", preset ? preset : "NULL", gtstorage_status_name(st),
               gtstorage_last_error());
  }
  return h;
}

/* Reads the storage's host memory directly (not through copy_to_array) and checks every element
 * of a double storage against @p expect(idx) for the view's shape. */
typedef double (*gts_expect_fn)(const int64_t* idx, int ndim, const void* ctx);

static inline void gts_check_doubles(gtstorage_handle h, gts_expect_fn expect, const void* ctx) {
  gtstorage_interface_info info = gts_host_info(h);
  int ndim = (int)info.ndim;
  int64_t idx[GTSTORAGE_MAX_NDIM] = {0};
  int64_t n = gts_product(info.shape, ndim);
  assert_string_equal(info.typestr, "<f8");
  for (int64_t i = 0; i < n; ++i) {
    double got, want = expect(idx, ndim, ctx);
    memcpy(&got, gts_elem(info.data, info.strides, idx, ndim), sizeof got);
    if (got != want) {
      char where[256];
      int off = 0;
      for (int d = 0; d < ndim; ++d)
        off +=
            snprintf(where + off, sizeof where - (size_t)off, "%s%" PRId64, d ? "," : "", idx[d]);
      fail_msg("element (%s) is %g, expected %g", where, got, want);
    }
    gts_next_index(idx, info.shape, ndim);
  }
}

static inline double gts_expect_value(const int64_t* idx, int ndim, const void* ctx) {
  (void)ctx;
  return gts_value(idx, ndim);
}

/* Deterministic PRNG (xorshift64*), so a failing case can be reproduced from its number. */
typedef struct gts_rng {
  uint64_t s;
} gts_rng;
static inline uint64_t gts_rand(gts_rng* r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ULL;
}
/* Uniform integer in [lo, hi]. */
static inline int64_t gts_rand_range(gts_rng* r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(gts_rand(r) % (uint64_t)(hi - lo + 1));
}

#endif /* GTSTORAGE_TESTS_C_SUPPORT_H */
