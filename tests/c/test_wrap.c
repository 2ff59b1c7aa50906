/*
 * gtstorage_wrap (GDP-3 as_storage): caller memory is used in place, described correctly, and
 * its release callback runs exactly once after the last reference (views included), never on
 * a failed wrap. Bad strides are rejected.
 */
#include "support.h"

typedef struct release_log {
  int calls;
  void* last_user_data;
} release_log;

static void on_release(void* user_data) {
  release_log* log = (release_log*)user_data;
  log->calls++;
  log->last_user_data = user_data;
}

static gtstorage_wrap_options wrap_opts(void* data, int ndim, const int64_t* shape,
                                        const int64_t* strides, const char* dtype) {
  gtstorage_wrap_options w = gts_wrap_options((uint32_t)ndim, shape, data);
  w.strides = strides;
  w.dtype = dtype;
  return w;
}

/* C order (strides NULL): no copy, C strides, values visible both ways. */
static void test_wrap_c_order(void** state) {
  double buf[3 * 4 * 5];
  int64_t shape[3] = {3, 4, 5};
  gtstorage_wrap_options w = wrap_opts(buf, 3, shape, NULL, NULL);
  gtstorage_handle h = 0;
  gtstorage_interface_info info;
  gts_live before = gts_live_now(), now;
  (void)state;
  gts_fill_reference(buf, shape, 3);
  GTS_OK(gtstorage_wrap(&w, &h));
  now = gts_live_now();
  GTS_EQ64(now.handles, before.handles + 1);
  GTS_EQ64(now.buffers, before.buffers + 1);
  info = gts_host_info(h);
  assert_ptr_equal(info.data, buf);
  GTS_EQ_ARRAY(info.strides, 160, 40, 8);
  GTS_EQ64(info.layout[0], 0);
  GTS_EQ64(info.layout[2], 2);
  assert_string_equal(info.typestr, "<f8");
  assert_string_equal(info.dims[0], "I");
  assert_string_equal(info.dims[2], "K");
  GTS_EQ64(info.nbytes, sizeof buf);
  assert_true(info.is_c_contiguous != 0);
  GTS_EQ64(info.readonly, 0);
  GTS_EQ64(info.device_type, GTSTORAGE_DL_CPU);
  gts_check_doubles(h, gts_expect_value, NULL);
  /* Writes through the library land in the caller's buffer. */
  GTS_OK(gtstorage_fill_double(h, 2.5));
  for (int i = 0; i < 60; ++i) assert_true(buf[i] == 2.5);
  GTS_OK(gtstorage_release(h));
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* Fortran order with a halo: layout (2,1,0), domain view moves by the lower halo. */
static void test_wrap_fortran_halo(void** state) {
  enum { NI = 6, NJ = 5, NK = 4 };
  double buf[NI * NJ * NK];
  int64_t shape[3] = {NI, NJ, NK};
  int64_t strides[3] = {8, 8 * NI, 8 * NI * NJ};
  int64_t halo[6] = {2, 1, 1, 1, 0, 2};
  gtstorage_wrap_options w = wrap_opts(buf, 3, shape, strides, "<f8");
  gtstorage_handle h = 0, dv = 0;
  gtstorage_interface_info info, di;
  (void)state;
  for (int k = 0; k < NK; ++k)
    for (int j = 0; j < NJ; ++j)
      for (int i = 0; i < NI; ++i) {
        int64_t idx[3] = {i, j, k};
        buf[i + NI * (j + NJ * k)] = gts_value(idx, 3);
      }
  w.halo = halo;
  w.dims = "IJK";
  GTS_OK(gtstorage_wrap(&w, &h));
  info = gts_host_info(h);
  assert_ptr_equal(info.data, buf);
  for (int d = 0; d < 3; ++d) {
    GTS_EQ64(info.strides[d], strides[d]);
    GTS_EQ64(info.layout[d], 2 - d);
    GTS_EQ_ARRAY(info.halo[d], halo[2 * d], halo[2 * d + 1]);
    GTS_EQ64(info.origin[d], halo[2 * d]);
  }
  assert_true(info.is_c_contiguous == 0);
  gts_check_doubles(h, gts_expect_value, NULL);
  GTS_OK(gtstorage_domain_view(h, &dv));
  di = gts_host_info(dv);
  assert_ptr_equal(di.data, (char*)buf + 2 * 8 + 1 * 8 * NI + 0);
  GTS_EQ_ARRAY(di.shape, NI - 3, NJ - 2, NK - 2);
  GTS_OK(gtstorage_release(dv));
  GTS_OK(gtstorage_release(h));
}

/* Rows padded by the caller (gaps between rows), int32 elements, dims KJI. */
static void test_wrap_padded_rows(void** state) {
  int32_t buf[3][4][8]; /* logical shape (3,4,5), rows of 8 */
  int64_t shape[3] = {3, 4, 5}, strides[3] = {4 * 8 * 4, 8 * 4, 4};
  gtstorage_wrap_options w = wrap_opts(buf, 3, shape, strides, "<i4");
  gtstorage_handle h = 0;
  gtstorage_interface_info info;
  int32_t out[3][4][5];
  (void)state;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 8; ++k) buf[i][j][k] = k < 5 ? 100 * i + 10 * j + k : -1;
  w.dims = "KJI";
  GTS_OK(gtstorage_wrap(&w, &h));
  info = gts_host_info(h);
  assert_ptr_equal(info.data, buf);
  assert_string_equal(info.typestr, "<i4");
  GTS_EQ64(info.itemsize, 4);
  assert_string_equal(info.dims[0], "K");
  assert_string_equal(info.dims[2], "I");
  gtstorage_array dst = gts_array(3, shape, out);
  GTS_OK(gtstorage_copy_to_array(&dst, h));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) GTS_EQ64(out[i][j][k], 100 * i + 10 * j + k);
  /* Fill writes only the logical elements: the gaps keep -1. */
  {
    int32_t seven = 7;
    GTS_OK(gtstorage_fill(h, &seven));
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 8; ++k) GTS_EQ64(buf[i][j][k], k < 5 ? 7 : -1);
  GTS_OK(gtstorage_release(h));
}

/* The callback runs once, with the user data, when the last handle goes. */
static void test_release_once(void** state) {
  double buf[10];
  int64_t shape[1] = {10};
  release_log log = {0, NULL};
  gtstorage_wrap_options w = wrap_opts(buf, 1, shape, NULL, NULL);
  gtstorage_handle h = 0;
  (void)state;
  w.release = on_release;
  w.user_data = &log;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_retain(h));
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 0);
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 1);
  assert_ptr_equal(log.last_user_data, &log);
  /* A second release of the dead handle is an error and does not call back again. */
  GTS_EXPECT(gtstorage_release(h), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_EQ64(log.calls, 1);
}

/* Views keep wrapped memory alive: the callback waits for the last view. */
static void test_release_after_views(void** state) {
  double buf[4 * 6];
  int64_t shape[2] = {4, 6}, halo[4] = {1, 1, 1, 1};
  release_log log = {0, NULL};
  gtstorage_wrap_options w = wrap_opts(buf, 2, shape, NULL, NULL);
  gtstorage_handle h = 0, s = 0, t = 0, dv = 0;
  gtstorage_slice_spec sp[2] = {
      {1, 3, 1, GTSTORAGE_SLICE_RANGE, 0},
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1, GTSTORAGE_SLICE_RANGE, 0}};
  int32_t perm[2] = {1, 0};
  gts_live before = gts_live_now();
  (void)state;
  gts_fill_reference(buf, shape, 2);
  w.halo = halo;
  w.release = on_release;
  w.user_data = &log;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_slice(h, sp, 2, &s));
  GTS_OK(gtstorage_transpose(s, perm, 2, &t));
  GTS_OK(gtstorage_domain_view(h, &dv));
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(s));
  GTS_EQ64(log.calls, 0);
  GTS_EQ64(gts_live_now().buffers, before.buffers + 1);
  /* The remaining views still read the caller's memory. */
  {
    gtstorage_interface_info ti = gts_host_info(t);
    double v;
    memcpy(&v, ti.data, sizeof v); /* t(0,0) = s(0,0) = h(1, 5) */
    assert_true(v == buf[1 * 6 + 5]);
  }
  GTS_OK(gtstorage_release(t));
  GTS_EQ64(log.calls, 0);
  GTS_OK(gtstorage_release(dv));
  GTS_EQ64(log.calls, 1);
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* Failed wraps never call back and leave nothing behind. */
static void test_release_not_called_on_failure(void** state) {
  double buf[16];
  int64_t shape[2] = {4, 4}, overlap[2] = {8, 8}, odd[2] = {32, 4};
  int64_t bad_halo[4] = {3, 2, 0, 0};
  /* One bad argument each, and what the refusal names. */
  const struct {
    void* data;
    const int64_t* strides;
    const char* dtype;
    const int64_t* halo;
    const char* words;
  } cases[] = {{buf, overlap, NULL, NULL, "strides"},
               {buf, odd, NULL, NULL, "strides"},
               {buf, NULL, "<f3", NULL, "dtype"},
               {buf, NULL, NULL, bad_halo, "halo"},
               {NULL, NULL, NULL, NULL, "data"}};
  release_log log = {0, NULL};
  gtstorage_handle h = 0;
  gts_live before = gts_live_now();
  (void)state;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    gtstorage_wrap_options w = wrap_opts(cases[k].data, 2, shape, cases[k].strides, cases[k].dtype);
    w.halo = cases[k].halo;
    w.release = on_release;
    w.user_data = &log;
    GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, cases[k].words);
  }
  GTS_EQ64(log.calls, 0);
  assert_true(h == GTSTORAGE_NULL_HANDLE);
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

typedef struct stride_case {
  int ndim;
  int64_t shape[3];
  int64_t strides[3];
  const char* dtype;
  int ok;
} stride_case;

/* Overlapping strides and strides that are not multiples of the item size. */
static void test_stride_validation(void** state) {
  static const stride_case cases[] = {
      {2, {3, 4}, {8, 8}, "<f8", 0},         /* both dims on the same bytes */
      {2, {3, 4}, {8, 16}, "<f8", 0},        /* (2,0) and (0,1) coincide */
      {2, {2, 3}, {16, 8}, "<f8", 0},        /* rows overlap by one element */
      {2, {4, 3}, {8, 24}, "<f8", 0},        /* columns overlap */
      {2, {3, 4}, {0, 8}, "<f8", 0},         /* broadcast (0 stride over extent 3) */
      {2, {3, 4}, {32, 4}, "<f8", 0},        /* 4 is not a multiple of 8 */
      {2, {3, 4}, {36, 12}, "<f8", 0},       /* 12 is not a multiple of 8 */
      {1, {5}, {6}, "<i4", 0},               /* 6 is not a multiple of 4 */
      {3, {2, 2, 2}, {8, 2, 2}, "<i2", 0},   /* (0,1,0) and (0,0,1) coincide */
      {2, {3, 4}, {200, 8}, "<f8", 1},       /* padded rows: fine */
      {2, {3, 4}, {8, 24}, "<f8", 1},        /* Fortran order: fine */
      {2, {1, 4}, {0, 8}, "<f8", 1},         /* zero stride over extent 1: no overlap */
      {3, {2, 3, 4}, {8, 16, 48}, "<u8", 1}, /* Fortran order 3-d */
      {1, {7}, {3}, "|u1", 1},               /* any stride for 1-byte items */
  };
  static char mem[4096];
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    gtstorage_wrap_options w =
        wrap_opts(mem, cases[c].ndim, cases[c].shape, cases[c].strides, cases[c].dtype);
    gtstorage_handle h = 0;
    gts_live before = gts_live_now();
    int st = gtstorage_wrap(&w, &h);
    if (cases[c].ok) {
      if (st != GTSTORAGE_OK)
        fail_msg("case %zu: valid strides rejected: %s \"%s\"", c, gtstorage_status_name(st),
                 gtstorage_last_error());
      GTS_OK(gtstorage_release(h));
    } else {
      if (st != GTSTORAGE_ERROR_INVALID_ARGUMENT)
        fail_msg("case %zu: bad strides gave %s, expected INVALID_ARGUMENT", c,
                 gtstorage_status_name(st));
      if (!gts_contains_any(gtstorage_last_error(), "strides"))
        fail_msg("case %zu: message \"%s\" does not name strides", c, gtstorage_last_error());
    }
    GTS_ASSERT_LIVE(gts_live_now(), before);
  }
}

/* Read-only wrap: reads work, every write is refused and the memory is untouched. */
static void test_wrap_readonly(void** state) {
  double buf[12];
  int64_t shape[2] = {3, 4};
  gtstorage_wrap_options w = wrap_opts(buf, 2, shape, NULL, NULL);
  gtstorage_handle h = 0, v = 0, other = 0;
  double out[12];
  (void)state;
  gts_fill_reference(buf, shape, 2);
  w.readonly = 1;
  GTS_OK(gtstorage_wrap(&w, &h));
  assert_true(gts_host_info(h).readonly != 0);
  gtstorage_array a = gts_array(2, shape, out);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  assert_memory_equal(out, buf, sizeof buf);
  GTS_EXPECT(gtstorage_fill_double(h, 0.0), GTSTORAGE_ERROR_READONLY, "read");
  GTS_EXPECT(gtstorage_copy_from_array(h, &a), GTSTORAGE_ERROR_READONLY, "read");
  {
    gtstorage_create_options o = gts_options(2, shape, NULL);
    o.init = GTSTORAGE_INIT_ZEROS;
    GTS_OK(gtstorage_create(&o, &other));
    GTS_EXPECT(gtstorage_copy(h, other), GTSTORAGE_ERROR_READONLY, "read");
    GTS_OK(gtstorage_copy(other, h)); /* reading from it is fine */
  }
  GTS_OK(gtstorage_domain_view(h, &v));
  GTS_EXPECT(gtstorage_fill_double(v, 0.0), GTSTORAGE_ERROR_READONLY, "read");
  for (int i = 0; i < 12; ++i) {
    int64_t idx[2] = {i / 4, i % 4};
    assert_true(buf[i] == gts_value(idx, 2));
  }
  GTS_RELEASE(v, other, h);
}

/* Wrapping the memory of a storage created by the library (e.g. from a binding). */
static void test_wrap_library_memory(void** state) {
  int64_t shape[3] = {3, 4, 5};
  gtstorage_handle owner = gts_create_valued("gt:gpu", "IJK", 3, shape, NULL), h = 0;
  gtstorage_interface_info oi = gts_host_info(owner), wi;
  gtstorage_wrap_options w = wrap_opts(oi.data, 3, shape, oi.strides, "<f8");
  (void)state;
  GTS_OK(gtstorage_wrap(&w, &h));
  wi = gts_host_info(h);
  assert_ptr_equal(wi.data, oi.data);
  for (int d = 0; d < 3; ++d) GTS_EQ64(wi.layout[d], oi.layout[d]);
  gts_check_doubles(h, gts_expect_value, NULL);
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(owner));
}

/* A device ordinal says where device_data lives: with host data only it must be -1, and no
 * wrap takes an ordinal below -1; a dirty sync state needs a host + device pair. Refused with
 * the parameter named, the output untouched and nothing created. */
static void test_device_id_and_sync_state_of_one_buffer(void** state) {
  static double mem[12];
  int64_t shape[2] = {3, 4};
  static const int32_t bad[] = {0, 1, 3, -2, INT32_MIN, INT32_MAX};
  (void)state;
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; ++c) {
    gtstorage_wrap_options w = wrap_opts(mem, 2, shape, NULL, "<f8");
    w.device_id = bad[c];
    gtstorage_handle h = 12345;
    gts_live before = gts_live_now();
    const int st = gtstorage_wrap(&w, &h);
    if (st != GTSTORAGE_ERROR_INVALID_ARGUMENT)
      fail_msg("device_id %d without device_data gave %s, expected INVALID_ARGUMENT", bad[c],
               gtstorage_status_name(st));
    if (!gts_contains_any(gtstorage_last_error(), "device_id"))
      fail_msg("device_id %d: message \"%s\" does not name device_id", bad[c],
               gtstorage_last_error());
    assert_int_equal(h, 12345);
    GTS_ASSERT_LIVE(gts_live_now(), before);
  }
  /* A dirty side needs two sides: one buffer is always in sync. */
  for (int32_t state = GTSTORAGE_SYNC_HOST_DIRTY; state <= GTSTORAGE_SYNC_DEVICE_DIRTY; ++state) {
    gtstorage_wrap_options w = wrap_opts(mem, 2, shape, NULL, "<f8");
    w.sync_state = state;
    gtstorage_handle h = 12345;
    gts_live before = gts_live_now();
    const int st = gtstorage_wrap(&w, &h);
    if (st != GTSTORAGE_ERROR_INVALID_ARGUMENT ||
        !gts_contains_any(gtstorage_last_error(), "sync_state"))
      fail_msg("sync_state %d of a host-only wrap gave %s \"%s\"", state, gtstorage_status_name(st),
               gtstorage_last_error());
    assert_int_equal(h, 12345);
    GTS_ASSERT_LIVE(gts_live_now(), before);
  }
  gtstorage_wrap_options w = wrap_opts(mem, 2, shape, NULL, "<f8");
  w.device_id = -1;
  w.sync_state = GTSTORAGE_SYNC_CLEAN;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_release(h));
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
