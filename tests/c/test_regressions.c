/*
 * Regression tests for bugs found in review: each case failed (wrong data, a crash, undefined
 * behaviour under UBSan, or a missing status) before its fix.
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS under -std=c99 */
#include <sys/mman.h>

#include "support.h"

static const int64_t shape3[3] = {6, 5, 4};

static int use_emulated(void** state) {
  (void)state;
  return gtstorage_set_device_backend("emulated") == GTSTORAGE_OK ? 0 : -1;
}

/* Device memory to wrap: the device side of a device-only storage of n doubles (wrapping
 * host memory as device data is refused). */
static void* device_memory(int64_t n, gtstorage_handle* owner) {
  gtstorage_create_options o = gts_options(1, &n, "gt:gpu");
  GTS_OK(gtstorage_create(&o, owner));
  void* p = NULL;
  GTS_OK(gtstorage_data(*owner, GTSTORAGE_SIDE_DEVICE, &p));
  return p;
}

/* A device-dirty pair whose host side is caller memory wrapped read-only: syncing to the host
 * must fail with READONLY and leave the (really read-only) memory untouched, not crash. */
static void readonly_wrapped_host_is_never_synced_into(void** state) {
  (void)state;
  const size_t bytes = 6 * 5 * 4 * sizeof(double);
  double* host = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(host != MAP_FAILED);
  for (int n = 0; n < 120; ++n) host[n] = n;
  assert_int_equal(mprotect(host, 4096, PROT_READ), 0);
  gtstorage_handle owner = 0;
  double* device = device_memory(120, &owner);
  gtstorage_wrap_options w = gts_wrap_options(3, shape3, host);
  w.device_data = device;
  w.readonly = 1;
  w.sync_state = GTSTORAGE_SYNC_DEVICE_DIRTY;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_EXPECT(gtstorage_acquire(h, GTSTORAGE_SIDE_HOST), GTSTORAGE_ERROR_READONLY, "op|host");
  GTS_EXPECT(gtstorage_sync(h, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0), GTSTORAGE_ERROR_READONLY, "op");
  GTS_EXPECT(gtstorage_sync(h, GTSTORAGE_SYNC_SYNCHRONIZE, 0), GTSTORAGE_ERROR_READONLY, "op");
  int32_t s = -1;
  GTS_OK(gtstorage_get_sync_state(h, &s));
  assert_int_equal(s, GTSTORAGE_SYNC_DEVICE_DIRTY); /* nothing changed */
  for (int n = 0; n < 120; ++n) assert_true(host[n] == n);
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(owner));
  munmap(host, 4096);
  (void)bytes;
}

/* Copying a storage's own memory, transposed, into it: the source must be read first. */
static void overlapping_copies_read_the_source_first(void** state) {
  (void)state;
  enum { N = 64 };
  static double mem[N * N];
  for (int i = 0; i < N * N; ++i) mem[i] = i;
  const int64_t shape[2] = {N, N};
  gtstorage_wrap_options w = gts_wrap_options(2, shape, mem);
  gtstorage_handle h = 0, h2 = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  const int64_t transposed[2] = {8, N * 8};
  gtstorage_array src = gts_array(2, shape, mem);
  src.strides = transposed;
  GTS_OK(gtstorage_copy_from_array(h, &src));
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) assert_true(mem[i * N + j] == (double)(j * N + i));
  /* Two wraps of the same memory, copied one into the other's transpose. */
  GTS_OK(gtstorage_wrap(&w, &h2));
  const int32_t perm[2] = {1, 0};
  gtstorage_handle t = 0;
  GTS_OK(gtstorage_transpose(h2, perm, 2, &t));
  GTS_OK(gtstorage_copy(h, t));
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) assert_true(mem[i * N + j] == (double)(i * N + j));
  GTS_RELEASE(t, h2, h);
}

/* The host descriptor of the view of @p h by @p nspec entries of @p spec (released again: only
 * its geometry is read). */
static gtstorage_interface_info slice_info(gtstorage_handle h, const gtstorage_slice_spec* spec,
                                           uint32_t nspec) {
  gtstorage_handle v = 0;
  GTS_OK(gtstorage_slice(h, spec, nspec, &v));
  const gtstorage_interface_info info = gts_host_info(v);
  GTS_OK(gtstorage_release(v));
  return info;
}

/* Extreme slice steps: no signed overflow (UBSan aborts the sanitizer build otherwise). */
static void extreme_slice_steps(void** state) {
  (void)state;
  gtstorage_create_options o = gts_options(3, shape3, NULL);
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_create(&o, &h));
  gtstorage_slice_spec spec[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  spec[0].step = INT64_MAX;
  GTS_EQ64(slice_info(h, spec, 3).shape[0], 1);
  spec[0].step = -INT64_MAX;
  GTS_EQ64(slice_info(h, spec, 3).shape[0], 1);
  GTS_OK(gtstorage_release(h));
}

/* An empty storage may carry any strides; slicing it where start * stride does not fit in
 * int64 must neither overflow (UBSan) nor fail: the view is empty too. */
static void slicing_empty_storage_with_huge_strides(void** state) {
  (void)state;
  double mem[1];
  const int64_t shape[2] = {6, 0};
  const int64_t strides[2] = {INT64_MAX - 7, 8};
  gtstorage_wrap_options w = gts_wrap_options(2, shape, mem);
  w.strides = strides;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  gtstorage_slice_spec spec[2] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  spec[0].start = 5; /* 5 * (INT64_MAX - 7) overflows */
  gtstorage_interface_info info = slice_info(h, spec, 2);
  GTS_EQ64(info.ndim, 2);
  GTS_EQ_ARRAY(info.shape, 1, 0);
  spec[0].kind = GTSTORAGE_SLICE_INDEX; /* the same through an integer index */
  info = slice_info(h, spec, 2);
  GTS_EQ64(info.ndim, 1);
  GTS_EQ64(info.shape[0], 0);
  GTS_OK(gtstorage_release(h));
}

static void int64_min_strides_are_rejected(void** state) {
  (void)state;
  double mem[16];
  const int64_t shape[2] = {4, 4}, shape1[2] = {1, 4};
  const int64_t strides[2] = {INT64_MIN, 8};
  gtstorage_wrap_options w = gts_wrap_options(2, shape, mem);
  w.strides = strides;
  gtstorage_handle h = 0;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "strides");
  /* Messages name the field once ("strides: …", not "strides.strides: …"). */
  assert_null(strstr(gtstorage_last_error(), "strides.strides"));
  w.shape = shape1;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "strides");
}

/* Transfers made by the copy API are counted like those made by syncs. */
static void copy_api_transfers_are_counted(void** state) {
  (void)state;
  gtstorage_create_options o = gts_options(3, shape3, "gt:gpu");
  gtstorage_handle h = gts_create(&o);
  double buf[120];
  for (int n = 0; n < 120; ++n) buf[n] = n;
  gtstorage_array a = gts_array(3, shape3, buf);
  GTS_OK(gtstorage_copy_from_array(h, &a));
  memset(buf, 0, sizeof buf);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  for (int n = 0; n < 120; ++n) assert_true(buf[n] == n);
  gtstorage_transfer_stats t = gts_transfer_stats(h);
  GTS_EQ64(t.h2d_count, 1);
  GTS_EQ64(t.h2d_bytes, 120 * 8);
  GTS_EQ64(t.d2h_count, 1);
  GTS_EQ64(t.d2h_bytes, 120 * 8);
  GTS_OK(gtstorage_release(h));
}

/* Empty arrays come without a pointer (NumPy, Fortran, CUDA): wrapping them works. */
static void empty_arrays_wrap_without_pointer(void** state) {
  (void)state;
  const int64_t shape[2] = {0, 4};
  gtstorage_wrap_options w = gts_wrap_options(2, shape, NULL);
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  gtstorage_interface_info info = gts_host_info(h);
  GTS_EQ64(info.nbytes, 0);
  GTS_OK(gtstorage_fill_double(h, 1.0));
  GTS_OK(gtstorage_release(h));
  const int64_t full[2] = {2, 4};
  w.shape = full;
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "data");
}

/* Fuzzer findings: an empty device-dirty pair copies nothing (it used to size a staging buffer
 * by max(extent, 1) and run out of memory); a wrapped span beyond the address space is an
 * overflow error (it used to overflow pointer arithmetic). */
static void empty_copies_and_huge_spans(void** state) {
  (void)state;
  const int64_t shape[2] = {0, (int64_t)1 << 33};
  double host[1];
  gtstorage_handle owner = 0;
  double* device = device_memory(1, &owner);
  gtstorage_wrap_options w = gts_wrap_options(2, shape, host);
  w.device_data = device;
  w.sync_state = GTSTORAGE_SYNC_DEVICE_DIRTY;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  float out[1];
  gtstorage_array a = gts_array(2, shape, out);
  a.dtype = "<f4";
  GTS_OK(gtstorage_copy_to_array(&a, h));
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(owner));

  const int64_t two[1] = {2}, far[1] = {-((int64_t)1 << 62)};
  gtstorage_wrap_options f = gts_wrap_options(1, two, host);
  f.strides = far;
  GTS_EXPECT(gtstorage_wrap(&f, &h), GTSTORAGE_ERROR_OVERFLOW, "strides");
}

static int no_leaks(void** state) {
  (void)state;
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  if (gtstorage_get_stats(&s) != GTSTORAGE_OK) return -1;
  return (s.live_handles == 0 && s.live_buffers == 0) ? 0 : -1;
}

/* Each test ends with the leak check of no_leaks. */
#define LEAK_CHECKED(f) cmocka_unit_test_teardown(f, no_leaks)
GTS_TEST_MAIN_WITH("regressions", LEAK_CHECKED, use_emulated, NULL)
