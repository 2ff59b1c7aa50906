/*
 * gtstorage_create_options.pitch_padding: GTSTORAGE_PITCH_PADDING_AVOID_ALIASING raises every
 * stride of 4 KiB or more (other than the contiguous dimension's) to an odd multiple of
 * u = lcm(64, alignment, itemsize). Checked here: the strides of the bench field, the rule
 * recomputed independently over random requests (with alignment and non-overlap checked on the
 * numbers), storages created with it hold and copy their values, the default is GT4Py's
 * strides, the plan memo keys on the option, and bad values are refused with a message.
 */
#include "support.h"

static gtstorage_create_options options_3d(const int64_t* shape, const char* preset,
                                           const char* dtype, int32_t padding) {
  gtstorage_create_options o = gts_options(3, shape, preset);
  o.dtype = dtype;
  o.pitch_padding = padding;
  return o;
}

/* The 512x512x128 float64 field of gtstorage-bench in both CPU stride orders. */
static void test_bench_field_strides(void** state) {
  (void)state;
  const int64_t shape[3] = {512, 512, 128};
  gtstorage_create_options o =
      options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  gtstorage_plan_info p = gts_plan_of(&o);
  /* J rows: 4096 -> 4160 (65 lines); planes: 4160 * 512 = 2129920 (a 4 KiB multiple) -> +64. */
  GTS_EQ_ARRAY(p.strides, 8, 4160, 2129984);
  GTS_EQ64(p.padded_bytes, 2129984 * 128);
  GTS_EQ64(p.padded_shape[0], 512); /* only strides grow; extents keep GT4Py's padding */

  o = options_3d(shape, "gt:cpu_kfirst", "<f8", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  p = gts_plan_of(&o);
  GTS_EQ64(p.strides[2], 8);
  GTS_EQ64(p.strides[1], 1024);   /* below 4 KiB: kept */
  GTS_EQ64(p.strides[0], 524352); /* 512 KiB + 64 */

  o = options_3d(shape, "gt:cpu_kfirst", "<f4", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  p = gts_plan_of(&o);
  GTS_EQ64(p.strides[0], 262208); /* 256 KiB + 64 */
  GTS_EQ64(p.strides[1], 512);

  /* The default, and NONE given explicitly, are GT4Py's strides. */
  o = options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_NONE);
  p = gts_plan_of(&o);
  GTS_EQ64(p.strides[1], 4096);
  GTS_EQ64(p.strides[2], 2097152);
  gtstorage_create_options d = GTSTORAGE_CREATE_OPTIONS_INIT;
  assert_int_equal(d.pitch_padding, GTSTORAGE_PITCH_PADDING_NONE);
}

/* The plan memo must not hand out the strides of the other padding. */
static void test_memo_keys_on_padding(void** state) {
  (void)state;
  const int64_t shape[3] = {64, 64, 8};
  for (int round = 0; round < 3; ++round) {
    gtstorage_create_options o = options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_NONE);
    GTS_EQ64(gts_plan_of(&o).strides[1], 512);
    GTS_EQ64(gts_plan_of(&o).strides[2], 32768);
    o.pitch_padding = GTSTORAGE_PITCH_PADDING_AVOID_ALIASING;
    GTS_EQ64(gts_plan_of(&o).strides[1], 512);
    GTS_EQ64(gts_plan_of(&o).strides[2], 32832);
  }
}

/* A caller built against 1.0 passes the 1.0 struct_size: whatever lies past it (here the field
 * set to AVOID_ALIASING) is not read, and its storages keep GT4Py's strides. */
static void test_v10_struct_size_reads_no_padding(void** state) {
  (void)state;
  const int64_t shape[3] = {512, 16, 2};
  gtstorage_create_options o =
      options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  o.struct_size = (uint32_t)offsetof(gtstorage_create_options, pool);
  GTS_EQ64(gts_plan_of(&o).strides[1], 4096);
  o.struct_size = sizeof o;
  GTS_EQ64(gts_plan_of(&o).strides[1], 4160);
}

/* An alignment of 4 KiB or more leaves no odd multiple off 4 KiB: nothing is padded. A
 * 256-byte alignment pads to odd multiples of 256. */
static void test_alignment_sets_the_unit(void** state) {
  (void)state;
  const int64_t shape[3] = {512, 64, 8};
  gtstorage_create_options o =
      options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  o.alignment_bytes = 4096;
  gtstorage_plan_info p = gts_plan_of(&o);
  GTS_EQ64(p.strides[1], 4096);
  GTS_EQ64(p.strides[2], 4096 * 64);
  o.alignment_bytes = 256;
  p = gts_plan_of(&o);
  GTS_EQ64(p.strides[1], 4352); /* 17 * 256 */
  GTS_EQ64(p.strides[2], 4352 * 64 + 256);
  /* 24 bytes (3 items): I padded to 513 items, J stride 4104; u = lcm(64, 24) = 192, so 4104 ->
   * 22 * 192 (even) -> 23 * 192 = 4416; K stride 4416 * 64 = 1472 * 192 (even) -> + 192. */
  o.alignment_bytes = 24;
  p = gts_plan_of(&o);
  GTS_EQ64(p.padded_shape[0], 513);
  GTS_EQ64(p.strides[1], 4416);
  GTS_EQ64(p.strides[2], 4416 * 64 + 192);
}

static int64_t lcm64(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y != 0) {
    int64_t r = x % y;
    x = y;
    y = r;
  }
  return a / x * b;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % (uint64_t)n);
}

/* Random requests: the padded strides follow from the unpadded plan by the rule, recomputed
 * here; the aligned element stays aligned; no two elements share a byte. */
static void test_rule_over_random_requests(void** state) {
  (void)state;
  static const char* dtypes[] = {"<f8", "<f4", "<i2", "|u1", "<c16"};
  static const int64_t sizes[] = {8, 4, 2, 1, 16};
  static const char* presets[] = {"numpy", "F", "gt:cpu_kfirst", "gt:cpu_ifirst", "gt:gpu"};
  static const int64_t alignments[] = {0, 0, 8, 64, 128, 24, 48, 4096, 8192};
  for (long c = 0; c < 3000; ++c) {
    const int t = (int)rnd(5);
    const int ndim = 1 + (int)rnd(4);
    int64_t shape[4], halo[8];
    for (int d = 0; d < ndim; ++d) {
      /* Powers of two (the aliasing case) and odd extents alike. */
      shape[d] = rnd(2) ? (int64_t)1 << rnd(11) : 1 + rnd(700);
      halo[2 * d] = rnd(2) ? 0 : rnd(shape[d] / 2 + 1);
      halo[2 * d + 1] = 0;
    }
    int64_t alignment = alignments[rnd(9)];
    if (alignment != 0 && alignment % sizes[t] != 0 && sizes[t] % alignment != 0) alignment = 0;
    gtstorage_create_options o = gts_options((uint32_t)ndim, shape, presets[rnd(5)]);
    o.halo = halo;
    o.dtype = dtypes[t];
    o.alignment_bytes = alignment;
    const gtstorage_plan_info plain = gts_plan_of(&o);
    o.pitch_padding = GTSTORAGE_PITCH_PADDING_AVOID_ALIASING;
    const gtstorage_plan_info p = gts_plan_of(&o);

    const int64_t itemsize = plain.itemsize;
    const int64_t u = lcm64(lcm64(64, plain.alignment_bytes), itemsize);
    int by_rank[4];
    for (int d = 0; d < ndim; ++d) by_rank[plain.layout[d]] = d;
    int64_t stride = itemsize;
    int64_t aligned_offset = p.byte_offset;
    for (int r = ndim - 1; r >= 0; --r) {
      const int d = by_rank[r];
      if (r != ndim - 1 && stride >= 4096 && u % 4096 != 0) {
        stride = (stride + u - 1) / u * u;
        if ((stride / u) % 2 == 0) stride += u;
      }
      if (p.strides[d] != stride) {
        fail_msg("case %ld (%s %s ndim %d, alignment %" PRId64 "): stride %d is %" PRId64
                 ", expected %" PRId64,
                 c, o.preset, o.dtype, ndim, plain.alignment_bytes, d, p.strides[d], stride);
      }
      if (stride >= 4096 && r != ndim - 1 && u % 4096 != 0 && stride % 4096 == 0) {
        fail_msg("case %ld: stride %d is a multiple of 4 KiB", c, d);
      }
      if (r != ndim - 1 && (stride % itemsize != 0 || (plain.alignment_bytes > itemsize &&
                                                       stride % plain.alignment_bytes != 0))) {
        fail_msg("case %ld: stride %d is not a multiple of the alignment", c, d);
      }
      /* Each stride covers the faster dimensions' span: no overlap. */
      if (stride < plain.strides[d]) fail_msg("case %ld: stride %d shrank", c, d);
      aligned_offset += p.aligned_index[d] * stride;
      stride *= shape[d] > 0 ? (d == p.contiguous_dim ? p.padded_shape[d] : shape[d]) : 1;
    }
    GTS_EQ64(p.padded_bytes, stride);
    GTS_EQ64(p.allocation_bytes, p.byte_offset + p.padded_bytes);
    GTS_EQ64(aligned_offset % p.alignment_bytes, 0);
    for (int d = 0; d < ndim; ++d) GTS_EQ64(p.padded_shape[d], plain.padded_shape[d]);
  }
}

/* A created storage with padded strides holds distinct values at distinct addresses, copies to
 * and from a C-order array, fills and slices like any other. */
static void test_storage_roundtrip(void** state) {
  (void)state;
  const int64_t shape[3] = {9, 512, 3};
  gtstorage_create_options o =
      options_3d(shape, "F", "<f8", GTSTORAGE_PITCH_PADDING_AVOID_ALIASING);
  o.init = GTSTORAGE_INIT_ZEROS;
  gtstorage_handle h = gts_create(&o);
  gtstorage_interface_info info = gts_host_info(h);
  /* F: 9 items (72 bytes) per I row, J stride 72 (< 4 KiB, kept), K stride 72 * 512 = 36864 =
   * 9 * 4096 = 576 * 64 (even): raised to 577 * 64. */
  GTS_EQ64(info.strides[1], 72);
  GTS_EQ64(info.strides[2], 36928);

  const int64_t n = gts_product(shape, 3);
  double* src = malloc((size_t)n * sizeof *src);
  double* back = malloc((size_t)n * sizeof *back);
  assert_non_null(src);
  assert_non_null(back);
  int64_t idx[3] = {0, 0, 0};
  int64_t i = 0;
  do {
    const double* e = (const double*)gts_elem(info.data, info.strides, idx, 3);
    if (*e != 0.0)
      fail_msg("zeros left %g at (%" PRId64 ", %" PRId64 ", %" PRId64 ")", *e, idx[0], idx[1],
               idx[2]);
    src[i++] = gts_value(idx, 3) + 0.25 * (double)idx[1];
  } while (gts_next_index(idx, shape, 3));

  gtstorage_array a = gts_array(3, shape, src);
  GTS_OK(gtstorage_copy_from_array(h, &a));
  i = 0;
  do {
    const double* e = (const double*)gts_elem(info.data, info.strides, idx, 3);
    if (*e != src[i]) fail_msg("element %" PRId64 " is %g, expected %g", i, *e, src[i]);
    ++i;
  } while (gts_next_index(idx, shape, 3));
  a.data = back;
  GTS_OK(gtstorage_copy_to_array(&a, h));
  assert_memory_equal(back, src, (size_t)n * sizeof *src);

  /* A view of the last plane keeps the padded strides and addresses. */
  gtstorage_slice_spec spec[3] = {
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0},
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0},
      {2, 0, 1, GTSTORAGE_SLICE_INDEX, 0}};
  gtstorage_handle v = GTSTORAGE_NULL_HANDLE;
  GTS_OK(gtstorage_slice(h, spec, 3, &v));
  gtstorage_interface_info vi = gts_host_info(v);
  assert_int_equal(vi.ndim, 2);
  assert_ptr_equal(vi.data, (char*)info.data + 2 * 36928);
  GTS_OK(gtstorage_release(v));
  free(src);
  free(back);
  GTS_OK(gtstorage_release(h));
}

static void test_bad_values_refused(void** state) {
  (void)state;
  const int64_t shape[3] = {4, 4, 4};
  const int32_t bad[] = {2, -1, 1000};
  for (int k = 0; k < 3; ++k) {
    gtstorage_create_options o = options_3d(shape, "F", "<f8", bad[k]);
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "pitch_padding");
    assert_true(h == GTSTORAGE_NULL_HANDLE);
    gtstorage_plan_info p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "pitch_padding");
  }
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
