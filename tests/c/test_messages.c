/*
 * Messages name what the caller wrote (issue 9, point 6): the original value of a uint32_t
 * count (ndim = UINT32_MAX is 4294967295, not a clamped number), the parameter name of each
 * handle of a two-handle call (src/dst, not "handle"), the field of an options struct; and the
 * documented rule for caller memory not aligned to its item size (accepted, host side).
 */
#include "support.h"

static const int64_t shape3[3] = {4, 3, 2};

static void expect_value_named(const char* what, const char* param, const char* value) {
  const char* msg = gtstorage_last_error();
  if (strstr(msg, param) == NULL || strstr(msg, value) == NULL) {
    fail_msg("%s: message \"%s\" does not name %s = %s", what, msg, param, value);
  }
  if (strstr(msg, "1073741824") != NULL) fail_msg("%s: clamped value in \"%s\"", what, msg);
}

static void original_ndim_in_messages(void** state) {
  (void)state;
  gtstorage_handle h = 0;
  gtstorage_create_options o = gts_options(UINT32_MAX, shape3, NULL);
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim");
  expect_value_named("create", "ndim", "4294967295");
  gtstorage_plan_info plan = GTSTORAGE_PLAN_INFO_INIT;
  o.ndim = 1u << 30; /* the old clamp value itself is reported as written too */
  GTS_EXPECT(gtstorage_plan(&o, &plan), GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim");
  assert_non_null(strstr(gtstorage_last_error(), "1073741824"));
  o.ndim = 17;
  GTS_EXPECT(gtstorage_plan(&o, &plan), GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim");
  assert_non_null(strstr(gtstorage_last_error(), "17"));

  double mem[24];
  gtstorage_wrap_options w = gts_wrap_options(UINT32_MAX, shape3, mem);
  GTS_EXPECT(gtstorage_wrap(&w, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim");
  expect_value_named("wrap", "ndim", "4294967295");

  o.ndim = 3;
  GTS_OK(gtstorage_create(&o, &h));
  gtstorage_array a = gts_array(UINT32_MAX, shape3, mem);
  GTS_EXPECT(gtstorage_copy_from_array(h, &a), GTSTORAGE_ERROR_INVALID_ARGUMENT, "src.ndim");
  expect_value_named("copy_from_array", "src.ndim", "4294967295");
  GTS_EXPECT(gtstorage_copy_to_array(&a, h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "dst.ndim");
  expect_value_named("copy_to_array", "dst.ndim", "4294967295");
  gtstorage_array src = gts_array(0x80000000u, shape3, mem);
  o.init = GTSTORAGE_INIT_COPY;
  o.source = &src;
  gtstorage_handle h2 = 0;
  GTS_EXPECT(gtstorage_create(&o, &h2), GTSTORAGE_ERROR_INVALID_ARGUMENT, "source.ndim");
  expect_value_named("create from source", "source.ndim", "2147483648");

  const int32_t perm[3] = {2, 1, 0};
  gtstorage_handle t = 0;
  GTS_EXPECT(gtstorage_transpose(h, perm, UINT32_MAX, &t), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "nperm");
  expect_value_named("transpose", "nperm", "4294967295");
  GTS_OK(gtstorage_release(h));
}

static void two_handle_calls_name_src_and_dst(void** state) {
  (void)state;
  gtstorage_create_options o = gts_options(3, shape3, NULL);
  gtstorage_handle good = 0, gone = 0, v = 0;
  GTS_OK(gtstorage_create(&o, &good));
  GTS_OK(gtstorage_create(&o, &gone));
  GTS_OK(gtstorage_release(gone));

  GTS_EXPECT(gtstorage_copy(good, gone), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  assert_null(strstr(gtstorage_last_error(), "handle:"));
  GTS_EXPECT(gtstorage_copy(gone, good), GTSTORAGE_ERROR_INVALID_HANDLE, "dst:");
  GTS_EXPECT(gtstorage_copy(0, good), GTSTORAGE_ERROR_INVALID_HANDLE, "dst:");

  double mem[24] = {0};
  gtstorage_array a = gts_array(3, shape3, mem);
  GTS_EXPECT(gtstorage_copy_from_array(gone, &a), GTSTORAGE_ERROR_INVALID_HANDLE, "dst:");
  GTS_EXPECT(gtstorage_copy_to_array(&a, gone), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  GTS_EXPECT(gtstorage_domain_view(gone, &v), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  const int32_t perm[3] = {0, 1, 2};
  GTS_EXPECT(gtstorage_transpose(gone, perm, 3, &v), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  gtstorage_slice_spec spec[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  GTS_EXPECT(gtstorage_slice(gone, spec, 3, &v), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  /* One-handle calls keep "handle". */
  GTS_EXPECT(gtstorage_fill_double(gone, 1.0), GTSTORAGE_ERROR_INVALID_HANDLE, "handle:");
  GTS_OK(gtstorage_release(good));
}

static void enum_fields_named(void** state) {
  (void)state;
  gtstorage_create_options o = gts_options(3, shape3, NULL);
  o.host_memory = 9;
  gtstorage_handle h = 0;
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "host_memory");
  assert_non_null(strstr(gtstorage_last_error(), "9"));
}

/* Documented rule: host memory not aligned to its item size is accepted and handled. */
static void misaligned_host_data_accepted(void** state) {
  (void)state;
  static unsigned char raw[24 * 8 + 16];
  for (int offset = 1; offset < 8; offset += 3) {
    unsigned char* base = raw + offset;
    assert_true(((uintptr_t)base) % 8 != 0);
    gtstorage_handle h = gts_wrap_host(3, shape3, base);
    gtstorage_interface_info info = gts_host_info(h);
    assert_ptr_equal(info.data, base); /* reported as it is */

    GTS_OK(gtstorage_fill_double(h, 2.5));
    for (int i = 0; i < 24; ++i) {
      double x;
      memcpy(&x, base + 8 * i, 8);
      assert_true(x == 2.5);
    }
    /* copies in and out, and between a misaligned and an aligned storage (F order) */
    double in[24], out[24];
    for (int i = 0; i < 24; ++i) in[i] = i * 1.25;
    gtstorage_array a = gts_array(3, shape3, in);
    GTS_OK(gtstorage_copy_from_array(h, &a));
    gtstorage_create_options o = gts_options(3, shape3, "F");
    gtstorage_handle f = gts_create(&o);
    GTS_OK(gtstorage_copy(f, h));
    GTS_OK(gtstorage_fill_double(h, 0.0));
    GTS_OK(gtstorage_copy(h, f));
    a.data = out;
    GTS_OK(gtstorage_copy_to_array(&a, h));
    assert_memory_equal(in, out, sizeof in);
    GTS_OK(gtstorage_release(f));
    GTS_OK(gtstorage_release(h));
  }
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
