/*
 * gtstorage_copy_sides (one side of a storage into one side of another, the sync state neither
 * read nor changed) and gtstorage_set_error (a layered library's message through
 * gtstorage_last_error), on host storages and on mirrored, device-only and unified storages of
 * the emulated device (the simulated CUDA runtime: asynchronous, so a copy that was only enqueued
 * and not waited for shows up as stale data).
 */
#include <stdlib.h>

#include "support.h"

static const int64_t shape3[3] = {6, 5, 4};
enum { N = 6 * 5 * 4 };

static gtstorage_handle make(const char* preset, int32_t device, int32_t managed,
                             const char* dtype) {
  gtstorage_create_options o = gts_options(3, shape3, preset);
  o.device = device;
  o.managed = managed;
  o.dtype = dtype;
  o.init = GTSTORAGE_INIT_ZEROS;
  return gts_create(&o);
}

/* Writes value(idx) + offset into side @p side of @p h directly (as compute on that side would;
 * the emulated device's memory is host memory). */
static void write_side(gtstorage_handle h, int32_t side, double offset) {
  const gtstorage_interface_info info = gts_info(h, side);
  GTS_OK(gtstorage_wait_stream(h, 0));
  int64_t idx[3] = {0, 0, 0};
  do {
    *(double*)gts_elem(info.data, info.strides, idx, 3) = gts_value(idx, 3) + offset;
  } while (gts_next_index(idx, info.shape, 3));
}

/* Number of elements of side @p side of @p h that differ from value(idx) + offset. */
static int mismatches(gtstorage_handle h, int32_t side, double offset) {
  const gtstorage_interface_info info = gts_info(h, side);
  int64_t idx[3] = {0, 0, 0};
  int bad = 0;
  do {
    const char* p = gts_elem(info.data, info.strides, idx, 3);
    double v = 0;
    if (strcmp(info.typestr, "<f4") == 0) {
      float f;
      memcpy(&f, p, 4);
      v = f;
    } else {
      memcpy(&v, p, 8);
    }
    bad += v != gts_value(idx, 3) + offset;
  } while (gts_next_index(idx, info.shape, 3));
  return bad;
}

static int32_t state_of(gtstorage_handle h) {
  int32_t s = -1;
  GTS_OK(gtstorage_get_sync_state(h, &s));
  return s;
}

static int64_t transfers(gtstorage_handle h) {
  gtstorage_transfer_stats t = gts_transfer_stats(h);
  return t.h2d_count + t.d2h_count;
}

/* Host to host, across layouts and dtypes. */
static void host_sides(void** state) {
  (void)state;
  gtstorage_handle a = make("gt:cpu_kfirst", GTSTORAGE_DEVICE_CPU, 0, "<f8");
  gtstorage_handle b = make("gt:cpu_ifirst", GTSTORAGE_DEVICE_CPU, 0, "<f4");
  write_side(a, GTSTORAGE_SIDE_HOST, 0.0);
  GTS_OK(gtstorage_copy_sides(b, GTSTORAGE_SIDE_HOST, a, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(mismatches(b, GTSTORAGE_SIDE_HOST, 0.0), 0);
  GTS_OK(gtstorage_copy_sides(b, GTSTORAGE_SIDE_HOST, a, GTSTORAGE_SIDE_HOST, 0,
                              GTSTORAGE_COPY_FLAG_ASYNC)); /* host copies complete anyway */
  GTS_EQ64(mismatches(b, GTSTORAGE_SIDE_HOST, 0.0), 0);
  GTS_OK(gtstorage_release(a));
  GTS_OK(gtstorage_release(b));
}

/* GTSTORAGE_COPY_FLAG_STREAMING is a hint: the halo faces of a field (both CPU stride orders;
 * rows of whole and of partial cache lines) packed into wrapped buffers that start off a line
 * boundary, and unpacked into a second field, give the same values as without it, and the
 * guard bytes around each buffer are never written (a streamed line must not reach past the
 * region). With ASYNC on host sides it still completes before the call returns. */
static void streaming_flag_copies_the_same_values(void** state) {
  (void)state;
  enum { H = 3, NI = 21, NJ = 13, NK = 37, GUARD = 64 };
  const int64_t full[3] = {NI + 2 * H, NJ + 2 * H, NK + 2 * H};
  const int64_t halo[6] = {H, H, H, H, H, H};
  const int64_t inner[3] = {NI, NJ, NK};
  const char* presets[2] = {"gt:cpu_kfirst", "gt:cpu_ifirst"};
  const uint32_t flags[2] = {GTSTORAGE_COPY_FLAG_STREAMING,
                             GTSTORAGE_COPY_FLAG_STREAMING | GTSTORAGE_COPY_FLAG_ASYNC};
  for (int p = 0; p < 2; ++p) {
    gtstorage_handle field[2];
    for (int f = 0; f < 2; ++f) {
      gtstorage_create_options o = gts_options(3, full, presets[p]);
      o.halo = halo;
      o.init = GTSTORAGE_INIT_ZEROS;
      GTS_OK(gtstorage_create(&o, &field[f]));
    }
    write_side(field[0], GTSTORAGE_SIDE_HOST, 0.5);
    for (int face = 0; face < 6; ++face) {
      gtstorage_slice_spec spec[3];
      int64_t shape[3];
      int64_t count = 1;
      for (int d = 0; d < 3; ++d) {
        const int own = d == face / 2;
        const int64_t lo = own ? (face % 2 == 0 ? 0 : H + inner[d]) : H;
        shape[d] = own ? H : inner[d];
        count *= shape[d];
        spec[d] = (gtstorage_slice_spec){lo, lo + shape[d], 1, GTSTORAGE_SLICE_RANGE, 0};
      }
      gtstorage_handle view[2];
      GTS_OK(gtstorage_slice(field[0], spec, 3, &view[0]));
      GTS_OK(gtstorage_slice(field[1], spec, 3, &view[1]));
      /* The buffer starts 8 bytes past a line boundary (an MPI buffer is not always aligned). */
      const size_t bytes = (size_t)count * 8;
      unsigned char* raw = malloc(GUARD + bytes + GUARD + 64);
      assert_non_null(raw);
      unsigned char* mem = raw + (64 - (uintptr_t)raw % 64) % 64;
      memset(mem, 0xA5, GUARD + bytes + GUARD);
      gtstorage_handle buf = gts_wrap_host(3, shape, mem + GUARD + 8);
      const uint32_t fl = flags[face % 2];
      GTS_OK(gtstorage_copy_sides(buf, GTSTORAGE_SIDE_HOST, view[0], GTSTORAGE_SIDE_HOST, 0, fl));
      GTS_OK(gtstorage_copy_sides(view[1], GTSTORAGE_SIDE_HOST, buf, GTSTORAGE_SIDE_HOST, 0, fl));
      for (size_t i = 0; i < GUARD + 8; ++i) assert_int_equal(mem[i], 0xA5);
      for (size_t i = GUARD + 8 + bytes; i < GUARD + bytes + GUARD; ++i) {
        assert_int_equal(mem[i], 0xA5);
      }
      /* Unpacked values are the source's (value(idx) + 0.5 in field coordinates). */
      const gtstorage_interface_info a = gts_host_info(view[0]), b = gts_host_info(view[1]);
      int64_t idx[3] = {0, 0, 0};
      int bad = 0;
      do {
        bad += memcmp(gts_elem(a.data, a.strides, idx, 3), gts_elem(b.data, b.strides, idx, 3),
                      8) != 0;
      } while (gts_next_index(idx, shape, 3));
      GTS_EQ64(bad, 0);
      GTS_OK(gtstorage_release(buf));
      free(raw);
      GTS_OK(gtstorage_release(view[0]));
      GTS_OK(gtstorage_release(view[1]));
    }
    /* Nothing but the faces was written into the second field: its interior is still zero. */
    gtstorage_slice_spec spec[3];
    for (int d = 0; d < 3; ++d) {
      spec[d] = (gtstorage_slice_spec){H, H + inner[d], 1, GTSTORAGE_SLICE_RANGE, 0};
    }
    gtstorage_handle interior = 0;
    GTS_OK(gtstorage_slice(field[1], spec, 3, &interior));
    gtstorage_interface_info info = gts_host_info(interior);
    int64_t idx[3] = {0, 0, 0};
    int64_t nonzero = 0;
    do {
      double v;
      memcpy(&v, gts_elem(info.data, info.strides, idx, 3), 8);
      nonzero += v != 0.0;
    } while (gts_next_index(idx, inner, 3));
    GTS_EQ64(nonzero, 0);
    GTS_RELEASE(interior, field[0], field[1]);
  }
}

/* Mirror: each side on its own, whatever the sync state says, and the state untouched. */
static void mirror_sides_ignore_the_state(void** state) {
  (void)state;
  gtstorage_handle m = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_MIRROR, "<f8");
  gtstorage_handle h = make("gt:cpu_kfirst", GTSTORAGE_DEVICE_CPU, 0, "<f8");
  write_side(h, GTSTORAGE_SIDE_HOST, 1.0);
  GTS_OK(gtstorage_sync_to(m, GTSTORAGE_SIDE_DEVICE, 0));
  GTS_OK(gtstorage_modify(m, GTSTORAGE_SIDE_DEVICE, 0)); /* DEVICE_DIRTY */
  const int64_t before = transfers(m);
  /* Into the device side of a storage whose device is modified: no sync to the host first. */
  GTS_OK(gtstorage_copy_sides(m, GTSTORAGE_SIDE_DEVICE, h, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(state_of(m), GTSTORAGE_SYNC_DEVICE_DIRTY);
  GTS_EQ64(mismatches(m, GTSTORAGE_SIDE_DEVICE, 1.0), 0);
  GTS_EQ64(mismatches(m, GTSTORAGE_SIDE_HOST, 1.0), N); /* the host copy was not touched */
  /* The host side, read although it is the stale one. */
  write_side(m, GTSTORAGE_SIDE_HOST, 2.0);
  GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, m, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(mismatches(h, GTSTORAGE_SIDE_HOST, 2.0), 0);
  GTS_EQ64(state_of(m), GTSTORAGE_SYNC_DEVICE_DIRTY);
  /* Device to host of the same storage, as a staging copy would do. */
  GTS_OK(gtstorage_copy_sides(m, GTSTORAGE_SIDE_HOST, m, GTSTORAGE_SIDE_DEVICE, 0, 0));
  GTS_EQ64(mismatches(m, GTSTORAGE_SIDE_HOST, 1.0), 0);
  GTS_EQ64(state_of(m), GTSTORAGE_SYNC_DEVICE_DIRTY);
  /* The copies that crossed are counted on the device storage, as copies of the copy API are. */
  GTS_EQ64(transfers(m), before + 2);
  GTS_OK(gtstorage_release(m));
  GTS_OK(gtstorage_release(h));
}

/* Device to device with ASYNC: enqueued on the stream, done after gtstorage_wait_stream; the
 * simulated runtime runs queued work only when something waits, so the destination is still the
 * old data before the wait (an async copy that waited anyway would fail this). */
static void async_device_copies(void** state) {
  (void)state;
  gtstorage_handle a = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_NONE, "<f8");
  gtstorage_handle b = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_MIRROR, "<f8");
  gtstorage_handle h = make("gt:cpu_ifirst", GTSTORAGE_DEVICE_CPU, 0, "<f8");
  write_side(h, GTSTORAGE_SIDE_HOST, 3.0);
  GTS_OK(gtstorage_copy_sides(a, GTSTORAGE_SIDE_DEVICE, h, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(mismatches(a, GTSTORAGE_SIDE_DEVICE, 3.0), 0);
  /* The address is taken before the copy: a descriptor asked for afterwards waits for it. */
  gtstorage_interface_info info = gts_info(b, GTSTORAGE_SIDE_DEVICE);
  GTS_OK(gtstorage_copy_sides(b, GTSTORAGE_SIDE_DEVICE, a, GTSTORAGE_SIDE_DEVICE, 0,
                              GTSTORAGE_COPY_FLAG_ASYNC));
  const char* execution = getenv("GTSTORAGE_SIM_EXECUTION");
  if (execution == NULL || strcmp(execution, "eager") != 0) {
    double first = 0;
    memcpy(&first, info.data, sizeof first); /* not waited for: not the copied value yet */
    const int64_t origin[3] = {0, 0, 0};
    assert_true(first != gts_value(origin, 3) + 3.0);
  }
  GTS_OK(gtstorage_wait_stream(b, 0));
  GTS_EQ64(mismatches(b, GTSTORAGE_SIDE_DEVICE, 3.0), 0);
  /* Without ASYNC the call returns with the data in place. */
  write_side(h, GTSTORAGE_SIDE_HOST, 4.0);
  GTS_OK(gtstorage_copy_sides(b, GTSTORAGE_SIDE_DEVICE, h, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(mismatches(b, GTSTORAGE_SIDE_DEVICE, 4.0), 0);
  /* A dtype conversion involving the device completes even with ASYNC. */
  gtstorage_handle f = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_NONE, "<f4");
  GTS_OK(gtstorage_copy_sides(f, GTSTORAGE_SIDE_DEVICE, b, GTSTORAGE_SIDE_DEVICE, 0,
                              GTSTORAGE_COPY_FLAG_ASYNC));
  GTS_EQ64(mismatches(f, GTSTORAGE_SIDE_DEVICE, 4.0), 0);
  GTS_RELEASE(a, b, f, h);
}

/* Views: a sub-box of one storage into a sub-box of another (what halo packing does). */
static void views_of_device_storages(void** state) {
  (void)state;
  gtstorage_handle a = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_MIRROR, "<f8");
  write_side(a, GTSTORAGE_SIDE_DEVICE, 5.0);
  gtstorage_slice_spec spec[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  spec[0].start = 4; /* the last two I rows */
  gtstorage_handle face = 0;
  GTS_OK(gtstorage_slice(a, spec, 3, &face));
  double packed[2 * 5 * 4];
  const int64_t pshape[3] = {2, 5, 4};
  gtstorage_handle buf = gts_wrap_host(3, pshape, packed);
  GTS_OK(gtstorage_copy_sides(buf, GTSTORAGE_SIDE_HOST, face, GTSTORAGE_SIDE_DEVICE, 0, 0));
  int64_t idx[3] = {0, 0, 0};
  int bad = 0;
  do {
    const int64_t g[3] = {idx[0] + 4, idx[1], idx[2]};
    bad += packed[(idx[0] * 5 + idx[1]) * 4 + idx[2]] != gts_value(g, 3) + 5.0;
  } while (gts_next_index(idx, pshape, 3));
  GTS_EQ64(bad, 0);
  GTS_RELEASE(face, buf, a);
}

/* Unified memory: the work queued on its stream lands before the host side is read. */
static void unified_waits_for_its_stream(void** state) {
  (void)state;
  gtstorage_handle u = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_UNIFIED, "<f8");
  gtstorage_handle h = make("gt:cpu_kfirst", GTSTORAGE_DEVICE_CPU, 0, "<f8");
  gtstorage_handle d = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_NONE, "<f8");
  write_side(d, GTSTORAGE_SIDE_DEVICE, 6.0);
  GTS_OK(gtstorage_copy_sides(u, GTSTORAGE_SIDE_DEVICE, d, GTSTORAGE_SIDE_DEVICE, 0,
                              GTSTORAGE_COPY_FLAG_ASYNC));
  GTS_OK(gtstorage_copy_sides(h, GTSTORAGE_SIDE_HOST, u, GTSTORAGE_SIDE_HOST, 0, 0));
  GTS_EQ64(mismatches(h, GTSTORAGE_SIDE_HOST, 6.0), 0);
  GTS_RELEASE(u, h, d);
}

static void bad_input(void** state) {
  (void)state;
  gtstorage_handle h = make("gt:cpu_kfirst", GTSTORAGE_DEVICE_CPU, 0, "<f8");
  gtstorage_handle d = make("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_NONE, "<f8");
  GTS_EXPECT(gtstorage_copy_sides(h, 2, h, 0, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "dst_side: 2");
  GTS_EXPECT(gtstorage_copy_sides(h, 0, h, -1, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "src_side: -1");
  GTS_EXPECT(gtstorage_copy_sides(h, 0, d, 1, 0, 4), GTSTORAGE_ERROR_INVALID_ARGUMENT, "flags: 4");
  GTS_EXPECT(gtstorage_copy_sides(h, 0, h, 0, 0, 8 | GTSTORAGE_COPY_FLAG_STREAMING),
             GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "flags: 10 has bits other than GTSTORAGE_COPY_FLAG_ASYNC (1) and "
             "GTSTORAGE_COPY_FLAG_STREAMING (2)");
  GTS_EXPECT(gtstorage_copy_sides(h, 1, d, 1, 0, 0), GTSTORAGE_ERROR_NO_SUCH_BUFFER,
             "dst: the storage has no device buffer");
  GTS_EXPECT(gtstorage_copy_sides(h, 0, d, 0, 0, 0), GTSTORAGE_ERROR_NO_SUCH_BUFFER,
             "src: the storage has no host buffer");
  GTS_EXPECT(gtstorage_copy_sides(0, 0, h, 0, 0, 0), GTSTORAGE_ERROR_INVALID_HANDLE, "dst:");
  GTS_EXPECT(gtstorage_copy_sides(h, 0, 77, 0, 0, 0), GTSTORAGE_ERROR_INVALID_HANDLE, "src:");
  gtstorage_slice_spec spec[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  spec[1].stop = 2;
  gtstorage_handle v = 0;
  GTS_OK(gtstorage_slice(h, spec, 3, &v));
  GTS_EXPECT(gtstorage_copy_sides(h, 0, v, 0, 0, 0), GTSTORAGE_ERROR_SHAPE_MISMATCH, "src: shape");
  double mem[N];
  gtstorage_wrap_options w = gts_wrap_options(3, shape3, mem);
  w.readonly = 1;
  gtstorage_handle ro = 0;
  GTS_OK(gtstorage_wrap(&w, &ro));
  GTS_EXPECT(gtstorage_copy_sides(ro, 0, h, 0, 0, 0), GTSTORAGE_ERROR_READONLY, "read-only");
  GTS_RELEASE(ro, v, h, d);
}

static void set_error_is_the_last_error(void** state) {
  (void)state;
  assert_int_equal(gtstorage_set_error(GTSTORAGE_ERROR_COMMUNICATION, "MPI_Isend: broken pipe"),
                   GTSTORAGE_ERROR_COMMUNICATION);
  assert_string_equal(gtstorage_last_error(), "MPI_Isend: broken pipe");
  assert_string_equal(gtstorage_status_name(GTSTORAGE_ERROR_COMMUNICATION),
                      "GTSTORAGE_ERROR_COMMUNICATION");
  assert_int_equal(gtstorage_set_error(GTSTORAGE_ERROR_DEVICE, NULL), GTSTORAGE_ERROR_DEVICE);
  assert_string_equal(gtstorage_last_error(), "GTSTORAGE_ERROR_DEVICE");
  assert_int_equal(gtstorage_set_error(GTSTORAGE_OK, "ignored"), GTSTORAGE_OK);
  assert_string_equal(gtstorage_last_error(), "");
  /* Long messages are cut, never overflow. */
  char longer[3000];
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  gtstorage_set_error(GTSTORAGE_ERROR_INTERNAL, longer);
  assert_int_equal((int)strlen(gtstorage_last_error()), 1023);
  /* The next successful call clears it. */
  int32_t count = 0;
  GTS_OK(gtstorage_preset_count(&count));
  assert_string_equal(gtstorage_last_error(), "");
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
