/*
 * The DualView-style sync vocabulary (issue 9, point 3): gtstorage_sync_to, _sync_to_async,
 * gtstorage_modify, gtstorage_need_sync, gtstorage_mark_synchronized and gtstorage_wait_stream
 * on a mirrored host/device pair of the emulated device; each checked against the transfer
 * counters and the data, and against the deprecated spellings they replace.
 */
#include "support.h"

static const int64_t shape3[3] = {6, 5, 4};
enum { N = 6 * 5 * 4 };

static gtstorage_handle make(int32_t managed, int32_t device) {
  gtstorage_create_options o = gts_options(3, shape3, "gt:gpu");
  o.device = device;
  o.managed = managed;
  return gts_create(&o);
}

static int64_t h2d(gtstorage_handle h) {
  gtstorage_transfer_stats t = gts_transfer_stats(h);
  return t.h2d_count;
}
static int64_t d2h(gtstorage_handle h) {
  gtstorage_transfer_stats t = gts_transfer_stats(h);
  return t.d2h_count;
}
static int32_t state_of(gtstorage_handle h) {
  int32_t s = -1;
  GTS_OK(gtstorage_get_sync_state(h, &s));
  return s;
}
static int32_t need(gtstorage_handle h, int32_t side) {
  int32_t n = -1;
  GTS_OK(gtstorage_need_sync(h, side, &n));
  return n;
}

/* Writes @p v into the host buffer directly (as host compute would). */
static void write_host(gtstorage_handle h, double v) {
  gtstorage_interface_info info = gts_host_info(h);
  int64_t idx[3] = {0, 0, 0};
  do {
    *(double*)gts_elem(info.data, info.strides, idx, 3) = v;
  } while (gts_next_index(idx, info.shape, 3));
}

static double host_value(gtstorage_handle h) {
  double out[N];
  gtstorage_array a = gts_array(3, shape3, out);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  for (int i = 1; i < N; ++i) assert_true(out[i] == out[0]);
  return out[0];
}

static void dualview_cycle(void** state) {
  (void)state;
  gtstorage_handle h = make(GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_DEVICE_GPU);
  GTS_OK(gtstorage_mark_synchronized(h));
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_CLEAN);
  GTS_EQ64(need(h, GTSTORAGE_SIDE_HOST), 0);
  GTS_EQ64(need(h, GTSTORAGE_SIDE_DEVICE), 0);

  /* host compute: modify(host) -> the device needs a sync, the host does not */
  write_host(h, 3.0);
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0));
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_HOST_DIRTY);
  GTS_EQ64(need(h, GTSTORAGE_SIDE_DEVICE), 1);
  GTS_EQ64(need(h, GTSTORAGE_SIDE_HOST), 0);
  /* sync_to(host) copies nothing; sync_to(device) copies once, twice is a no-op */
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_HOST, 0));
  GTS_EQ64(h2d(h) + d2h(h), 0);
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_EQ64(h2d(h), 1);
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_EQ64(h2d(h), 1);
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_CLEAN);

  /* device compute: modify(device); the host needs a sync; modify(host) now conflicts */
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_EQ64(need(h, GTSTORAGE_SIDE_HOST), 1);
  GTS_EXPECT(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0), GTSTORAGE_ERROR_SYNC_CONFLICT,
             "modified");
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_DEVICE_DIRTY);
  /* device -> host brings the host's own 3.0 back (the device holds what host_to_device put) */
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_HOST, 0));
  GTS_EQ64(d2h(h), 1);
  assert_true(host_value(h) == 3.0);

  /* FORCE: modify discards the other side's changes; sync_to copies even when clean */
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, GTSTORAGE_SYNC_FLAG_FORCE));
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_HOST_DIRTY);
  GTS_OK(gtstorage_mark_synchronized(h));
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE));
  GTS_EQ64(h2d(h), 2);

  /* async: enqueued, later calls see the result */
  write_host(h, 7.0);
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0));
  GTS_OK(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_DEVICE, 0, 0));
  GTS_OK(gtstorage_wait_stream(h, 0));
  GTS_EQ64(h2d(h), 3);
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_DEVICE, 0));
  write_host(h, -1.0); /* the host copy is stale; sync_to(host) restores the device's 7.0 */
  GTS_OK(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_HOST, 0, 0));
  assert_true(host_value(h) == 7.0);
  GTS_OK(gtstorage_release(h));
}

/* The new calls equal the deprecated ones they replace, op for op. */
static void same_as_deprecated_spellings(void** state) {
  (void)state;
  for (int variant = 0; variant < 2; ++variant) {
    gtstorage_handle h = make(GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_DEVICE_GPU);
    if (variant == 0) {
      GTS_OK(gtstorage_touch(h, GTSTORAGE_SIDE_HOST));
      GTS_OK(gtstorage_acquire(h, GTSTORAGE_SIDE_DEVICE));
      GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, 0));
      GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SYNCHRONIZE, 0));
      GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_HOST_MODIFIED, 0));
      GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_SYNCHRONIZED, 0));
      GTS_OK(gtstorage_sync_async(h, GTSTORAGE_SYNC_WAIT_STREAM, 0, 1));
    } else {
      GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0));
      GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, 0));
      GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_DEVICE, 0));
      GTS_OK(gtstorage_sync_to(
          h, need(h, GTSTORAGE_SIDE_HOST) ? GTSTORAGE_SIDE_HOST : GTSTORAGE_SIDE_DEVICE, 0));
      GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0));
      GTS_OK(gtstorage_mark_synchronized(h));
      GTS_OK(gtstorage_wait_stream(h, 1));
    }
    GTS_EQ64(h2d(h), 1);
    GTS_EQ64(d2h(h), 1);
    GTS_EQ64(state_of(h), GTSTORAGE_SYNC_CLEAN);
    GTS_OK(gtstorage_release(h));
  }
}

/* Host-only storages: every call is a valid no-op; need_sync answers 0. */
static void host_only_noops(void** state) {
  (void)state;
  gtstorage_handle h = make(GTSTORAGE_MANAGED_DEFAULT, GTSTORAGE_DEVICE_CPU);
  GTS_OK(gtstorage_sync_to(h, GTSTORAGE_SIDE_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE));
  GTS_OK(gtstorage_sync_to_async(h, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 0));
  GTS_OK(gtstorage_modify(h, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_EQ64(need(h, GTSTORAGE_SIDE_HOST), 0);
  GTS_EQ64(need(h, GTSTORAGE_SIDE_DEVICE), 0);
  GTS_OK(gtstorage_mark_synchronized(h));
  GTS_OK(gtstorage_wait_stream(h, 0));
  GTS_EQ64(state_of(h), GTSTORAGE_SYNC_CLEAN);
  GTS_OK(gtstorage_release(h));
}

static void bad_arguments(void** state) {
  (void)state;
  gtstorage_handle h = make(GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_DEVICE_GPU);
  int32_t n = 0;
  GTS_EXPECT(gtstorage_sync_to(h, 2, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT, "side");
  GTS_EXPECT(gtstorage_sync_to(h, GTSTORAGE_SIDE_HOST, 4), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "flags");
  GTS_EXPECT(gtstorage_sync_to_async(h, -1, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT, "side");
  GTS_EXPECT(gtstorage_modify(h, 7, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT, "side");
  GTS_EXPECT(gtstorage_modify(h, GTSTORAGE_SIDE_HOST, 2), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "flags");
  GTS_EXPECT(gtstorage_need_sync(h, GTSTORAGE_SIDE_HOST, NULL), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "out_need");
  GTS_EXPECT(gtstorage_need_sync(h, 3, &n), GTSTORAGE_ERROR_INVALID_ARGUMENT, "side");
  GTS_OK(gtstorage_release(h));
  GTS_EXPECT(gtstorage_sync_to(h, GTSTORAGE_SIDE_HOST, 0), GTSTORAGE_ERROR_INVALID_HANDLE,
             "handle");
  GTS_EXPECT(gtstorage_mark_synchronized(h), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_EXPECT(gtstorage_wait_stream(h, 0), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_EXPECT(gtstorage_need_sync(h, GTSTORAGE_SIDE_HOST, &n), GTSTORAGE_ERROR_INVALID_HANDLE,
             "handle");
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
