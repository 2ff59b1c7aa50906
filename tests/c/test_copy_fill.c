/*
 * Deep copy between every pair of presets (3-d, and 4-d with a data dim), caller arrays in and
 * out, dtype conversion (NumPy unsafe casting), fill, the INIT_* modes, and host-only sync
 * semantics. Results are read straight from memory through the interface, so a copy is never
 * checked by the same code path that made it.
 */
#include "support.h"

static int32_t preset_count(void) {
  int32_t n = 0;
  GTS_OK(gtstorage_preset_count(&n));
  return n;
}

static void preset_name(int32_t i, char* out) {
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  GTS_OK(gtstorage_preset_at(i, &p));
  memcpy(out, p.name, GTSTORAGE_PRESET_NAME_SIZE);
}

static void copy_all_pairs(int ndim, const int64_t* shape, const char* dims, const int64_t* halo) {
  int32_t n = preset_count();
  gtstorage_handle src[64], dst[64];
  char names[64][GTSTORAGE_PRESET_NAME_SIZE];
  long pairs = 0;
  assert_true(n >= 18 && n <= 64);
  for (int32_t i = 0; i < n; ++i) {
    gtstorage_create_options o;
    preset_name(i, names[i]);
    src[i] = gts_create_valued(names[i], dims, ndim, shape, halo);
    o = gts_options((uint32_t)ndim, shape, names[i]);
    o.dims = dims;
    o.halo = halo;
    o.device = GTSTORAGE_DEVICE_CPU;
    GTS_OK(gtstorage_create(&o, &dst[i]));
  }
  for (int32_t s = 0; s < n; ++s) {
    /* The source itself holds the reference values in its own layout. */
    gts_check_doubles(src[s], gts_expect_value, NULL);
    for (int32_t d = 0; d < n; ++d) {
      int st;
      GTS_OK(gtstorage_fill_double(dst[d], -1.0));
      st = gtstorage_copy(dst[d], src[s]);
      if (st != GTSTORAGE_OK)
        fail_msg("copy %s -> %s: %s \"%s\"", names[s], names[d], gtstorage_status_name(st),
                 gtstorage_last_error());
      gts_check_doubles(dst[d], gts_expect_value, NULL);
      ++pairs;
    }
  }
  GTS_EQ64(pairs, (long)n * n);
  for (int32_t i = 0; i < n; ++i) {
    GTS_OK(gtstorage_release(src[i]));
    GTS_OK(gtstorage_release(dst[i]));
  }
}

static void test_copy_preset_pairs_3d(void** state) {
  int64_t shape[3] = {5, 6, 7}, halo[6] = {1, 1, 2, 0, 0, 1};
  (void)state;
  copy_all_pairs(3, shape, "IJK", halo);
}

static void test_copy_preset_pairs_4d(void** state) {
  int64_t shape[4] = {4, 5, 6, 3}, halo[8] = {1, 1, 0, 2, 2, 0, 0, 0};
  (void)state;
  copy_all_pairs(4, shape, "IJK0", halo);
}

/* Same geometry, other label order: by-name presets give different layouts for KJI. */
static void test_copy_preset_pairs_kji(void** state) {
  int64_t shape[3] = {7, 3, 9};
  (void)state;
  copy_all_pairs(3, shape, "KJI", NULL);
}

/* Caller arrays: C order, Fortran order, negative strides, other dtypes, both directions. */
static void test_copy_arrays(void** state) {
  enum { NI = 4, NJ = 5, NK = 6, N = NI * NJ * NK };
  int64_t shape[3] = {NI, NJ, NK};
  gtstorage_create_options o;
  gtstorage_handle h = 0;
  double c_buf[N], f_buf[N], back[N];
  int32_t i_buf[N];
  float f4_out[N];
  int64_t f_strides[3] = {8, 8 * NI, 8 * NI * NJ};
  int64_t idx[3] = {0};
  (void)state;
  o = gts_options(3, shape, "gt:gpu");
  o.device = GTSTORAGE_DEVICE_CPU;
  GTS_OK(gtstorage_create(&o, &h));
  gtstorage_array a = gts_array(3, shape, NULL);

  /* C order in, read raw. */
  gts_fill_reference(c_buf, shape, 3);
  a.data = c_buf;
  GTS_OK(gtstorage_copy_from_array(h, &a));
  gts_check_doubles(h, gts_expect_value, NULL);

  /* Fortran order in. */
  do f_buf[idx[0] + NI * (idx[1] + NJ * idx[2])] = -gts_value(idx, 3);
  while (gts_next_index(idx, shape, 3));
  a.data = f_buf;
  a.strides = f_strides;
  GTS_OK(gtstorage_copy_from_array(h, &a));
  {
    gtstorage_interface_info info = gts_host_info(h);
    memset(idx, 0, sizeof idx);
    do {
      double v;
      memcpy(&v, gts_elem(info.data, info.strides, idx, 3), sizeof v);
      assert_true(v == -gts_value(idx, 3));
    } while (gts_next_index(idx, shape, 3));
  }

  /* Negative strides: element (0,0,0) at the end of a C buffer. */
  {
    int64_t neg[3] = {-8 * NJ * NK, -8 * NK, -8};
    a.data = &c_buf[N - 1];
    a.strides = neg;
    GTS_OK(gtstorage_copy_from_array(h, &a));
    memset(idx, 0, sizeof idx);
    {
      gtstorage_interface_info info = gts_host_info(h);
      do {
        int64_t r[3] = {NI - 1 - idx[0], NJ - 1 - idx[1], NK - 1 - idx[2]};
        double v;
        memcpy(&v, gts_elem(info.data, info.strides, idx, 3), sizeof v);
        assert_true(v == gts_value(r, 3));
      } while (gts_next_index(idx, shape, 3));
    }
  }

  /* int32 source converted to f8. */
  for (int i = 0; i < N; ++i) i_buf[i] = 3 * i - 100;
  a.data = i_buf;
  a.strides = NULL;
  a.dtype = "<i4";
  GTS_OK(gtstorage_copy_from_array(h, &a));

  /* Out, C order f8 and Fortran-order f4. */
  a.data = back;
  a.dtype = NULL; /* the storage's dtype */
  GTS_OK(gtstorage_copy_to_array(&a, h));
  for (int i = 0; i < N; ++i) assert_true(back[i] == (double)(3 * i - 100));
  {
    int64_t f4_strides[3] = {4, 4 * NI, 4 * NI * NJ};
    a.data = f4_out;
    a.strides = f4_strides;
    a.dtype = "<f4";
    GTS_OK(gtstorage_copy_to_array(&a, h));
    memset(idx, 0, sizeof idx);
    do {
      int64_t c = idx[2] + NK * (idx[1] + NJ * idx[0]);
      assert_true(f4_out[idx[0] + NI * (idx[1] + NJ * idx[2])] == (float)(3 * c - 100));
    } while (gts_next_index(idx, shape, 3));
  }
  GTS_OK(gtstorage_release(h));
}

/* Copies between views: transposed source into a reversed slice. */
static void test_copy_views(void** state) {
  int64_t shape[3] = {4, 5, 6}, tshape[3] = {6, 5, 4};
  gtstorage_handle a = gts_create_valued("numpy", NULL, 3, shape, NULL);
  gtstorage_handle b = gts_create_valued("F", NULL, 3, tshape, NULL);
  gtstorage_handle at = 0, br = 0;
  int32_t perm[3] = {2, 1, 0};
  gtstorage_slice_spec rev[3] = {
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1, GTSTORAGE_SLICE_RANGE, 0},
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0},
      {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0}};
  gtstorage_interface_info bi;
  int64_t idx[3] = {0};
  (void)state;
  GTS_OK(gtstorage_transpose(a, perm, 3, &at)); /* at(k,j,i) = a(i,j,k) */
  GTS_OK(gtstorage_slice(b, rev, 3, &br));      /* br(x,y,z) = b(5-x,y,z) */
  GTS_OK(gtstorage_copy(br, at));               /* b(5-k, j, i) = a(i,j,k) */
  bi = gts_host_info(b);
  do {
    int64_t src[3] = {idx[2], idx[1], 5 - idx[0]};
    double v;
    memcpy(&v, gts_elem(bi.data, bi.strides, idx, 3), sizeof v);
    if (v != gts_value(src, 3)) fail_msg("b element %g, expected %g", v, gts_value(src, 3));
  } while (gts_next_index(idx, tshape, 3));
  GTS_RELEASE(at, br, a, b);
}

static gtstorage_handle make_1d(const char* dtype, int64_t n, const void* values,
                                const char* values_dtype) {
  gtstorage_create_options o;
  gtstorage_array src = GTSTORAGE_ARRAY_INIT;
  gtstorage_handle h = 0;
  int64_t shape[1];
  shape[0] = n;
  o = gts_options(1, shape, NULL);
  o.dtype = dtype;
  if (values) {
    src.ndim = 1;
    src.shape = shape;
    src.data = (void*)values;
    src.dtype = values_dtype;
    o.init = GTSTORAGE_INIT_COPY;
    o.source = &src;
  } else {
    o.init = GTSTORAGE_INIT_ZEROS;
  }
  GTS_OK(gtstorage_create(&o, &h));
  return h;
}

static const void* element(gtstorage_handle h, int64_t i) {
  gtstorage_interface_info info = gts_host_info(h);
  return (const char*)info.data + i * info.strides[0];
}

/* NumPy unsafe casting: truncation toward zero, modular integers, nonzero -> true. */
static void test_dtype_conversion(void** state) {
  static const double vals[8] = {-2.7, 3.9, 0.0, 0.5, 200.0, -0.0, 1000.0, 7.25};
  gtstorage_handle f8 = make_1d("<f8", 8, vals, "<f8"), dst;
  (void)state;
  /* -> int32 */
  {
    static const int32_t want[8] = {-2, 3, 0, 0, 200, 0, 1000, 7};
    dst = make_1d("<i4", 8, NULL, NULL);
    GTS_OK(gtstorage_copy(dst, f8));
    for (int i = 0; i < 8; ++i) {
      int32_t v;
      memcpy(&v, element(dst, i), 4);
      GTS_EQ64(v, want[i]);
    }
    GTS_OK(gtstorage_release(dst));
  }
  /* -> bool */
  {
    static const uint8_t want[8] = {1, 1, 0, 1, 1, 0, 1, 1};
    dst = make_1d("|b1", 8, NULL, NULL);
    GTS_OK(gtstorage_copy(dst, f8));
    for (int i = 0; i < 8; ++i) GTS_EQ64(*(const uint8_t*)element(dst, i), want[i]);
    GTS_OK(gtstorage_release(dst));
  }
  /* -> float32 and complex128 */
  {
    gtstorage_handle c16 = make_1d("<c16", 8, NULL, NULL);
    dst = make_1d("<f4", 8, NULL, NULL);
    GTS_OK(gtstorage_copy(dst, f8));
    GTS_OK(gtstorage_copy(c16, f8));
    for (int i = 0; i < 8; ++i) {
      float f;
      double c[2];
      memcpy(&f, element(dst, i), 4);
      memcpy(c, element(c16, i), 16);
      assert_true(f == (float)vals[i]);
      assert_true(c[0] == vals[i] && c[1] == 0.0);
    }
    /* complex -> real keeps the real part. */
    {
      static const double z[4] = {3.5, -1.0, -0.25, 8.0}; /* (3.5-1j), (-0.25+8j) */
      gtstorage_handle zc = make_1d("<c16", 2, z, "<c16"), zr = make_1d("<f8", 2, NULL, NULL);
      double r[2];
      GTS_OK(gtstorage_copy(zr, zc));
      memcpy(&r[0], element(zr, 0), 8);
      memcpy(&r[1], element(zr, 1), 8);
      assert_true(r[0] == 3.5 && r[1] == -0.25);
      GTS_OK(gtstorage_release(zc));
      GTS_OK(gtstorage_release(zr));
    }
    GTS_OK(gtstorage_release(c16));
    GTS_OK(gtstorage_release(dst));
  }
  /* -> uint8 for in-range values */
  {
    static const double u[4] = {0.0, 1.9, 200.0, 255.0};
    gtstorage_handle src = make_1d("<f8", 4, u, "<f8");
    static const uint8_t want[4] = {0, 1, 200, 255};
    dst = make_1d("|u1", 4, NULL, NULL);
    GTS_OK(gtstorage_copy(dst, src));
    for (int i = 0; i < 4; ++i) GTS_EQ64(*(const uint8_t*)element(dst, i), want[i]);
    GTS_OK(gtstorage_release(dst));
    GTS_OK(gtstorage_release(src));
  }
  /* Integer narrowing wraps; signed -> unsigned is modular. */
  {
    static const int64_t big[3] = {70000, -1, 65535};
    gtstorage_handle src = make_1d("<i8", 3, big, "<i8");
    gtstorage_handle i2 = make_1d("<i2", 3, NULL, NULL), u4 = make_1d("<u4", 3, NULL, NULL);
    int16_t s;
    uint32_t w;
    GTS_OK(gtstorage_copy(i2, src));
    GTS_OK(gtstorage_copy(u4, src));
    memcpy(&s, element(i2, 0), 2);
    GTS_EQ64(s, 4464);
    memcpy(&s, element(i2, 1), 2);
    GTS_EQ64(s, -1);
    memcpy(&s, element(i2, 2), 2);
    GTS_EQ64(s, -1);
    memcpy(&w, element(u4, 1), 4);
    GTS_EQ64(w, 4294967295u);
    GTS_RELEASE(src, i2, u4);
  }
  /* half precision both ways */
  {
    static const double h[4] = {1.5, -2.0, 0.5, 65504.0};
    static const uint16_t bits[4] = {0x3E00, 0xC000, 0x3800, 0x7BFF};
    gtstorage_handle src = make_1d("<f8", 4, h, "<f8"), f2 = make_1d("<f2", 4, NULL, NULL);
    gtstorage_handle back = make_1d("<f8", 4, NULL, NULL);
    GTS_OK(gtstorage_copy(f2, src));
    for (int i = 0; i < 4; ++i) {
      uint16_t b;
      memcpy(&b, element(f2, i), 2);
      GTS_EQ64(b, bits[i]);
    }
    GTS_OK(gtstorage_copy(back, f2));
    for (int i = 0; i < 4; ++i) {
      double v;
      memcpy(&v, element(back, i), 8);
      assert_true(v == h[i]);
    }
    GTS_RELEASE(src, f2, back);
  }
  GTS_OK(gtstorage_release(f8));
}

/* fill with a raw element and fill_double, over the whole storage including the halo. */
static void test_fill(void** state) {
  int64_t shape[3] = {4, 3, 5}, halo[6] = {1, 1, 1, 0, 0, 2};
  (void)state;
  {
    gtstorage_create_options o;
    gtstorage_handle h = 0;
    gtstorage_interface_info info;
    int32_t v = -123456;
    int64_t idx[3] = {0};
    o = gts_options(3, shape, NULL);
    o.halo = halo;
    o.dtype = "<i4";
    o.preset = "gtmc"; /* padded: 8 elements */
    GTS_OK(gtstorage_create(&o, &h));
    GTS_OK(gtstorage_fill(h, &v));
    info = gts_host_info(h);
    do {
      int32_t got;
      memcpy(&got, gts_elem(info.data, info.strides, idx, 3), 4);
      GTS_EQ64(got, v);
    } while (gts_next_index(idx, shape, 3));
    GTS_OK(gtstorage_release(h));
  }
  {
    float z[2] = {1.5f, -2.0f};
    gtstorage_handle h = make_1d("<c8", 9, NULL, NULL);
    GTS_OK(gtstorage_fill(h, z));
    for (int i = 0; i < 9; ++i) assert_memory_equal(element(h, i), z, 8);
    GTS_OK(gtstorage_release(h));
  }
  {
    uint8_t t = 1;
    gtstorage_handle h = make_1d("|b1", 33, NULL, NULL);
    GTS_OK(gtstorage_fill(h, &t));
    for (int i = 0; i < 33; ++i) GTS_EQ64(*(const uint8_t*)element(h, i), 1);
    GTS_OK(gtstorage_release(h));
  }
}

typedef struct fill_double_case {
  const char* dtype;
  double value;
  int64_t size;
  uint8_t bytes[16];
} fill_double_case;

static void test_fill_double(void** state) {
  /* Expected little-endian bytes of one element. */
  static const fill_double_case cases[] = {
      {"<i8", 7.0, 8, {7}},
      {"<i1", -5.0, 1, {0xFB}},
      {"<u2", 65535.0, 2, {0xFF, 0xFF}},
      {"<i4", -2.9, 4, {0xFE, 0xFF, 0xFF, 0xFF}},
      {"|b1", 0.0, 1, {0}},
      {"|b1", 2.0, 1, {1}},
      {"|b1", -0.5, 1, {1}},
      {"<f2", 1.5, 2, {0x00, 0x3E}},
      {"<f2", -2.0, 2, {0x00, 0xC0}},
      {"<f4", 0.5, 4, {0x00, 0x00, 0x00, 0x3F}},
      {"<f8", -1.0, 8, {0, 0, 0, 0, 0, 0, 0xF0, 0xBF}},
      {"<c16", 2.5, 16, {0, 0, 0, 0, 0, 0, 0x04, 0x40, 0, 0, 0, 0, 0, 0, 0, 0}},
      {"<c8", 1.0, 8, {0, 0, 0x80, 0x3F, 0, 0, 0, 0}},
      {"<u8", 4096.0, 8, {0, 0x10}},
  };
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    gtstorage_handle h = make_1d(cases[c].dtype, 17, NULL, NULL);
    GTS_OK(gtstorage_fill_double(h, cases[c].value));
    for (int i = 0; i < 17; ++i)
      if (memcmp(element(h, i), cases[c].bytes, (size_t)cases[c].size) != 0)
        fail_msg("fill_double(%s, %g): element %d has wrong bytes", cases[c].dtype, cases[c].value,
                 i);
    GTS_OK(gtstorage_release(h));
  }
  /* f4 0.1 is the float nearest 0.1. */
  {
    gtstorage_handle h = make_1d("<f4", 3, NULL, NULL);
    float f;
    GTS_OK(gtstorage_fill_double(h, 0.1));
    memcpy(&f, element(h, 2), 4);
    assert_true(f == 0.1f);
    GTS_OK(gtstorage_release(h));
  }
}

/* INIT_ZEROS: every byte of the padded block is zero, even when recycled memory was dirty. */
static void test_init_zeros(void** state) {
  static const int64_t sizes[3][3] = {{3, 4, 5}, {33, 7, 9}, {130, 64, 40}}; /* last >= 2 MiB */
  (void)state;
  for (int s = 0; s < 3; ++s) {
    gtstorage_create_options o;
    int64_t halo[6] = {2, 1, 1, 1, 0, 0};
    gtstorage_plan_info p;
    gtstorage_handle h = 0;
    gtstorage_interface_info info;
    o = gts_options(3, sizes[s], NULL);
    o.halo = halo;
    o.preset = "gt:gpu"; /* I padded to 32 elements */
    o.device = GTSTORAGE_DEVICE_CPU;
    p = gts_plan_of(&o);
    /* Dirty a block of the same size, so a recycling allocator hands back garbage. */
    GTS_OK(gtstorage_create(&o, &h));
    info = gts_host_info(h);
    memset(info.allocation, 0xAB, (size_t)info.allocation_bytes);
    GTS_OK(gtstorage_release(h));
    o.init = GTSTORAGE_INIT_ZEROS;
    GTS_OK(gtstorage_create(&o, &h));
    info = gts_host_info(h);
    for (int64_t b = 0; b < p.padded_bytes; ++b)
      if (((const unsigned char*)info.data)[b] != 0)
        fail_msg("shape %" PRId64 "x%" PRId64 "x%" PRId64 ": byte %" PRId64 " of %" PRId64
                 " is not zero",
                 sizes[s][0], sizes[s][1], sizes[s][2], b, p.padded_bytes);
    GTS_OK(gtstorage_release(h));
  }
}

typedef struct dtype_one {
  const char* dtype;
  int64_t size;
  uint8_t one[16];
} dtype_one;

static const dtype_one kOnes[] = {
    {"<f8", 8, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F}},
    {"<f4", 4, {0, 0, 0x80, 0x3F}},
    {"<f2", 2, {0x00, 0x3C}},
    {"<i1", 1, {1}},
    {"<i2", 2, {1}},
    {"<i4", 4, {1}},
    {"<i8", 8, {1}},
    {"|u1", 1, {1}},
    {"<u2", 2, {1}},
    {"<u4", 4, {1}},
    {"<u8", 8, {1}},
    {"|b1", 1, {1}},
    {"<c8", 8, {0, 0, 0x80, 0x3F, 0, 0, 0, 0}},
    {"<c16", 16, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F}},
};

static void check_all_elements(gtstorage_handle h, const void* bytes, int64_t size,
                               const char* what) {
  gtstorage_interface_info info = gts_host_info(h);
  int64_t idx[GTSTORAGE_MAX_NDIM] = {0};
  int n = (int)info.ndim;
  do {
    if (memcmp(gts_elem(info.data, info.strides, idx, n), bytes, (size_t)size) != 0)
      fail_msg("%s (%s): element (%" PRId64 ",%" PRId64 ",...) differs", what, info.typestr, idx[0],
               idx[1]);
  } while (gts_next_index(idx, info.shape, n));
}

static void test_init_ones(void** state) {
  int64_t shape[3] = {3, 5, 4}, halo[6] = {1, 1, 0, 2, 1, 0};
  (void)state;
  for (size_t t = 0; t < sizeof kOnes / sizeof kOnes[0]; ++t) {
    gtstorage_create_options o = gts_options(3, shape, "gridtools:cpu_ifirst");
    o.halo = halo;
    o.dtype = kOnes[t].dtype;
    o.init = GTSTORAGE_INIT_ONES;
    gtstorage_handle h = gts_create(&o);
    check_all_elements(h, kOnes[t].one, kOnes[t].size, "INIT_ONES");
    GTS_OK(gtstorage_release(h));
  }
}

static void test_init_value(void** state) {
  int64_t shape[4] = {3, 4, 2, 2}, halo[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  int16_t i2 = -5;
  double f8 = 3.25;
  float c8[2] = {1.0f, 2.0f};
  struct {
    const char* dtype;
    const void* value;
    int64_t size;
  } cases[3];
  (void)state;
  cases[0].dtype = "<i2", cases[0].value = &i2, cases[0].size = 2;
  cases[1].dtype = "<f8", cases[1].value = &f8, cases[1].size = 8;
  cases[2].dtype = "<c8", cases[2].value = c8, cases[2].size = 8;
  for (int c = 0; c < 3; ++c) {
    gtstorage_create_options o = gts_options(4, shape, "gt:cpu_ifirst");
    o.halo = halo;
    o.dtype = cases[c].dtype;
    o.init = GTSTORAGE_INIT_VALUE;
    o.fill_value = cases[c].value;
    gtstorage_handle h = gts_create(&o);
    check_all_elements(h, cases[c].value, cases[c].size, "INIT_VALUE");
    GTS_OK(gtstorage_release(h));
  }
}

static void test_init_copy(void** state) {
  enum { NI = 3, NJ = 4, NK = 5 };
  int32_t f_src[NI * NJ * NK];
  int64_t shape[3] = {NI, NJ, NK}, f_strides[3] = {4, 4 * NI, 4 * NI * NJ};
  gtstorage_create_options o;
  gtstorage_handle h = 0;
  int64_t idx[3] = {0};
  (void)state;
  do f_src[idx[0] + NI * (idx[1] + NJ * idx[2])] = (int32_t)gts_value(idx, 3);
  while (gts_next_index(idx, shape, 3));
  gtstorage_array src = gts_array(3, shape, f_src);
  src.strides = f_strides;
  src.dtype = "<i4";
  o = gts_options(3, shape, "gt:cpu_kfirst");
  o.init = GTSTORAGE_INIT_COPY;
  o.source = &src;
  GTS_OK(gtstorage_create(&o, &h)); /* i4 Fortran -> f8 K-first */
  gts_check_doubles(h, gts_expect_value, NULL);
  GTS_OK(gtstorage_release(h));
  /* Source dtype NULL = the storage's dtype. */
  src.dtype = NULL;
  o.dtype = "<i4";
  GTS_OK(gtstorage_create(&o, &h));
  {
    gtstorage_interface_info info = gts_host_info(h);
    memset(idx, 0, sizeof idx);
    do {
      int32_t v;
      memcpy(&v, gts_elem(info.data, info.strides, idx, 3), 4);
      GTS_EQ64(v, (int32_t)gts_value(idx, 3));
    } while (gts_next_index(idx, shape, 3));
  }
  GTS_OK(gtstorage_release(h));
}

/* On host-only storages every sync op (and flag) is a valid no-op. */
static void test_sync_noops_on_host(void** state) {
  int64_t shape[3] = {3, 4, 5};
  gtstorage_handle h = gts_create_valued("numpy", NULL, 3, shape, NULL), v = 0;
  gtstorage_stats before, after;
  gtstorage_transfer_stats ts;
  int32_t sync = -1, has = -1;
  (void)state;
  memset(&before, 0, sizeof before);
  before.struct_size = sizeof before;
  after = before;
  GTS_OK(gtstorage_get_stats(&before));
  GTS_OK(gtstorage_domain_view(h, &v));
  for (int32_t op = GTSTORAGE_SYNC_HOST_TO_DEVICE; op <= GTSTORAGE_SYNC_WAIT_STREAM; ++op) {
    GTS_OK(gtstorage_sync(h, op, GTSTORAGE_SYNC_FLAG_NONE));
    GTS_OK(gtstorage_sync(h, op, GTSTORAGE_SYNC_FLAG_FORCE));
    GTS_OK(gtstorage_sync(v, op, GTSTORAGE_SYNC_FLAG_FORCE));
    GTS_OK(gtstorage_sync_async(h, op, GTSTORAGE_SYNC_FLAG_NONE, 0));
    GTS_OK(gtstorage_get_sync_state(h, &sync));
    GTS_EQ64(sync, GTSTORAGE_SYNC_CLEAN);
  }
  GTS_OK(gtstorage_acquire(h, GTSTORAGE_SIDE_HOST));
  GTS_OK(gtstorage_touch(h, GTSTORAGE_SIDE_HOST));
  GTS_OK(gtstorage_get_sync_state(v, &sync));
  GTS_EQ64(sync, GTSTORAGE_SYNC_CLEAN);
  GTS_OK(gtstorage_has_side(h, GTSTORAGE_SIDE_HOST, &has));
  assert_true(has != 0);
  GTS_OK(gtstorage_has_side(h, GTSTORAGE_SIDE_DEVICE, &has));
  GTS_EQ64(has, 0);
  {
    gtstorage_interface_info di;
    void* p = NULL;
    memset(&di, 0, sizeof di);
    di.struct_size = sizeof di;
    GTS_EXPECT(gtstorage_interface(h, GTSTORAGE_SIDE_DEVICE, &di), GTSTORAGE_ERROR_NO_SUCH_BUFFER,
               "device|side");
    GTS_EXPECT(gtstorage_data(h, GTSTORAGE_SIDE_DEVICE, &p), GTSTORAGE_ERROR_NO_SUCH_BUFFER,
               "device|side");
  }
  memset(&ts, 0xFF, sizeof ts);
  ts.struct_size = sizeof ts;
  GTS_OK(gtstorage_get_transfer_stats(h, &ts));
  GTS_EQ64(ts.h2d_count, 0);
  GTS_EQ64(ts.d2h_count, 0);
  GTS_EQ64(ts.h2d_bytes, 0);
  GTS_EQ64(ts.d2h_bytes, 0);
  GTS_OK(gtstorage_get_stats(&after));
  GTS_EQ64(after.h2d_count, before.h2d_count);
  GTS_EQ64(after.d2h_count, before.d2h_count);
  gts_check_doubles(h, gts_expect_value, NULL); /* contents untouched */
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(h));
}

/* ---- Layout-changing copies (issue 10): every stride order pair, item sizes 1..16, extents
 * that are not multiples of the kernels' blocks and tiles, 1-wide dimensions, a 4-d field with a
 * data dim, sub-boxes and halo faces packed into buffers and back. Values are hashes of the
 * index, compared bytewise, so any misplaced or missing element shows. */

static const char* const k_types[5] = {"|i1", "<i2", "<f4", "<f8", "<c16"};
static const int k_sizes[5] = {1, 2, 4, 8, 16};

/* Bytes of the reference element at idx (nd indices), size bytes. */
static void ref_bytes(const int64_t* idx, int nd, int size, unsigned char* out) {
  uint64_t h = 1469598103934665603ull;
  for (int d = 0; d < nd; ++d) h = (h ^ (uint64_t)(idx[d] + 7)) * 1099511628211ull;
  for (int b = 0; b < size; ++b) out[b] = (unsigned char)((h >> (8 * (b % 8))) + (uint64_t)b);
}

static int64_t count_of(const int64_t* shape, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; ++d) n *= shape[d];
  return n;
}

/* Storage of the given stride order (layout[d] = rank) holding the reference values at the
 * indices idx + off, written from a C-order caller buffer. */
static gtstorage_handle make_ref(int nd, const int64_t* shape, const int32_t* layout, int t,
                                 const int64_t* off) {
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  gtstorage_handle h = 0;
  int64_t idx[4] = {0}, n = count_of(shape, nd), k = 0;
  unsigned char* buf = (unsigned char*)malloc((size_t)(n * k_sizes[t]));
  assert_non_null(buf);
  do {
    int64_t g[4];
    for (int d = 0; d < nd; ++d) g[d] = idx[d] + (off ? off[d] : 0);
    ref_bytes(g, nd, k_sizes[t], buf + k++ * k_sizes[t]);
  } while (gts_next_index(idx, shape, nd));
  o.ndim = (uint32_t)nd;
  o.shape = shape;
  o.dtype = k_types[t];
  o.layout = layout;
  o.init = GTSTORAGE_INIT_ZEROS;
  GTS_OK(gtstorage_create(&o, &h));
  a.ndim = (uint32_t)nd;
  a.shape = shape;
  a.data = buf;
  a.dtype = k_types[t];
  GTS_OK(gtstorage_copy_from_array(h, &a));
  free(buf);
  return h;
}

/* Checks every element of the (nd <= 4) memory at data/strides against the reference at
 * idx + off; returns the number of mismatches. */
static long count_mismatches(void* data, const int64_t* strides, const int64_t* shape, int nd,
                             int size, const int64_t* off) {
  int64_t idx[4] = {0};
  long bad = 0;
  unsigned char want[16];
  do {
    int64_t g[4];
    for (int d = 0; d < nd; ++d) g[d] = idx[d] + (off ? off[d] : 0);
    ref_bytes(g, nd, size, want);
    if (memcmp(gts_elem(data, strides, idx, nd), want, (size_t)size) != 0) ++bad;
  } while (gts_next_index(idx, shape, nd));
  return bad;
}

static long handle_mismatches(gtstorage_handle h, int size, const int64_t* off) {
  gtstorage_interface_info info = gts_host_info(h);
  return count_mismatches(info.data, info.strides, info.shape, (int)info.ndim, size, off);
}

/* All permutations of 0..nd-1 (nd <= 4) as layouts; returns their number. */
static int layouts(int nd, int32_t out[24][4]) {
  int n = 0;
  int32_t p[4] = {0, 1, 2, 3};
  for (int a = 0; a < nd; ++a)
    for (int b = 0; b < nd; ++b)
      for (int c = 0; c < nd; ++c)
        for (int e = 0; e < nd; ++e) {
          int32_t v[4] = {(int32_t)a, (int32_t)b, (int32_t)c, (int32_t)e};
          int ok = 1;
          for (int i = 0; i < nd && ok; ++i)
            for (int j = i + 1; j < nd; ++j) ok = ok && v[i] != v[j];
          if (!ok || (nd < 4 && e > 0) || (nd < 3 && c > 0)) continue;
          memcpy(out[n++], v, sizeof v);
        }
  (void)p;
  return n;
}

/* Copies between every pair of stride orders (or, with few_pairs, the pairs that involve the
 * first order) and checks the destination. */
static void copy_layout_pairs(int nd, const int64_t* shape, int t, int few_pairs) {
  int32_t lay[24][4];
  const int nl = layouts(nd, lay);
  for (int s = 0; s < nl; ++s) {
    gtstorage_handle src = make_ref(nd, shape, lay[s], t, NULL);
    for (int d = 0; d < nl; ++d) {
      gtstorage_create_options o;
      gtstorage_handle dst = 0;
      long bad;
      if (few_pairs && s != 0 && d != 0 && s != nl - 1 && d != nl - 1) continue;
      o = gts_options((uint32_t)nd, shape, NULL);
      o.dtype = k_types[t];
      o.layout = lay[d];
      GTS_OK(gtstorage_create(&o, &dst));
      GTS_OK(gtstorage_copy(dst, src));
      bad = handle_mismatches(dst, k_sizes[t], NULL);
      if (bad != 0)
        fail_msg("%s %lldx%lldx%lld: layout %d%d%d%d -> %d%d%d%d: %ld wrong elements", k_types[t],
                 (long long)shape[0], (long long)(nd > 1 ? shape[1] : 1),
                 (long long)(nd > 2 ? shape[2] : 1), lay[s][0], lay[s][1], lay[s][2], lay[s][3],
                 lay[d][0], lay[d][1], lay[d][2], lay[d][3], bad);
      GTS_OK(gtstorage_release(dst));
    }
    GTS_OK(gtstorage_release(src));
  }
}

/* Small and odd extents (block and tile edges, 1-wide dims) for every item size. */
static void test_copy_layouts_odd_shapes(void** state) {
  static const int64_t shapes[][3] = {{7, 13, 5}, {1, 9, 17}, {33, 1, 40},  {19, 37, 1},
                                      {9, 8, 17}, {8, 16, 8}, {70, 23, 45}, {3, 200, 9}};
  (void)state;
  for (int t = 0; t < 5; ++t)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
      copy_layout_pairs(3, shapes[i], t, 0);
  {
    static const int64_t two[][2] = {{7, 13}, {64, 9}, {130, 67}, {1, 40}};
    for (int t = 0; t < 5; ++t)
      for (size_t i = 0; i < sizeof two / sizeof two[0]; ++i) copy_layout_pairs(2, two[i], t, 0);
  }
}

/* 4-d with a trailing data dim of 3 (and of 1), every stride order pair. */
static void test_copy_layouts_4d(void** state) {
  static const int64_t shapes[][4] = {{9, 10, 11, 3}, {17, 5, 24, 3}, {8, 8, 9, 1}};
  (void)state;
  for (int t = 2; t < 4; ++t)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
      copy_layout_pairs(4, shapes[i], t, 0);
  copy_layout_pairs(4, shapes[0], 0, 0);
  copy_layout_pairs(4, shapes[1], 4, 1);
}

/* Arrays above the threading threshold (1 MiB written) and above the streaming threshold (half
 * the last-level cache; 40 MiB here): thread shares and non-temporal stores. */
static void test_copy_layouts_large(void** state) {
  static const int64_t mid[3] = {96, 81, 41}, big3[3] = {173, 130, 131};
  static const int64_t big4[4] = {130, 67, 65, 3};
  (void)state;
  copy_layout_pairs(3, mid, 3, 0);
  copy_layout_pairs(3, mid, 2, 1);
  copy_layout_pairs(3, mid, 1, 1);
  copy_layout_pairs(3, big3, 3, 1);
  copy_layout_pairs(3, big3, 2, 1);
  copy_layout_pairs(4, big4, 3, 1);
}

/* Sub-box copies: a box at one offset of a source storage into a box at another offset of a
 * destination of another stride order; everything outside the destination box keeps its
 * sentinel. */
static void test_copy_subboxes(void** state) {
  static const int64_t shape[3] = {19, 17, 11};
  static const int64_t boxes[][9] = {/* extent, source offset, destination offset */
                                     {5, 17, 3, 3, 0, 2, 10, 0, 7},
                                     {3, 3, 11, 0, 14, 0, 16, 1, 0},
                                     {19, 3, 3, 0, 0, 8, 0, 14, 0},
                                     {13, 9, 7, 2, 4, 1, 5, 3, 4}};
  int32_t lay[24][4];
  const int nl = layouts(3, lay);
  (void)state;
  for (int t = 0; t < 5; ++t) {
    const int size = k_sizes[t];
    for (int s = 0; s < nl; s += 1) {
      gtstorage_handle src = make_ref(3, shape, lay[s], t, NULL);
      for (int d = 0; d < nl; d += 2) {
        for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; ++b) {
          gtstorage_create_options o;
          gtstorage_handle dst = 0, vs = 0, vd = 0;
          gtstorage_slice_spec ss[3], sd[3];
          gtstorage_interface_info info;
          unsigned char sentinel[16], want[16];
          int64_t idx[3] = {0, 0, 0};
          const int64_t* e = boxes[b];
          memset(sentinel, 0xA5, sizeof sentinel);
          o = gts_options(3, shape, NULL);
          o.dtype = k_types[t];
          o.layout = lay[d];
          GTS_OK(gtstorage_create(&o, &dst));
          GTS_OK(gtstorage_fill(dst, sentinel));
          for (int k = 0; k < 3; ++k) {
            gtstorage_slice_spec a = {e[3 + k], e[3 + k] + e[k], 1, GTSTORAGE_SLICE_RANGE, 0};
            gtstorage_slice_spec c = {e[6 + k], e[6 + k] + e[k], 1, GTSTORAGE_SLICE_RANGE, 0};
            ss[k] = a;
            sd[k] = c;
          }
          GTS_OK(gtstorage_slice(src, ss, 3, &vs));
          GTS_OK(gtstorage_slice(dst, sd, 3, &vd));
          GTS_OK(gtstorage_copy(vd, vs));
          info = gts_host_info(dst);
          do {
            int inside = 1;
            int64_t g[3];
            for (int k = 0; k < 3; ++k) {
              inside = inside && idx[k] >= e[6 + k] && idx[k] < e[6 + k] + e[k];
              g[k] = idx[k] - e[6 + k] + e[3 + k];
            }
            if (inside) {
              ref_bytes(g, 3, size, want);
            } else {
              memcpy(want, sentinel, sizeof want);
            }
            if (memcmp(gts_elem(info.data, info.strides, idx, 3), want, (size_t)size) != 0)
              fail_msg("%s box %d layouts %d -> %d: element (%lld, %lld, %lld) wrong", k_types[t],
                       (int)b, s, d, (long long)idx[0], (long long)idx[1], (long long)idx[2]);
          } while (gts_next_index(idx, shape, 3));
          GTS_RELEASE(vs, vd, dst);
        }
      }
      GTS_OK(gtstorage_release(src));
    }
  }
}

/* Halo exchange: the 6 faces (width 3) of a field with halo 3 packed into contiguous buffers
 * (C order, and the field's own order) and unpacked into a zeroed field of another order: the
 * faces arrive, nothing else is written. */
static void halo_faces(const int64_t* interior, int t, int32_t* src_layout, int32_t* dst_layout) {
  const int64_t h = 3;
  const int size = k_sizes[t];
  int64_t full[3];
  gtstorage_handle src, dst;
  gtstorage_create_options o;
  gtstorage_interface_info info;
  int64_t idx[3] = {0, 0, 0};
  unsigned char zero[16] = {0}, want[16];
  for (int k = 0; k < 3; ++k) full[k] = interior[k] + 2 * h;
  src = make_ref(3, full, src_layout, t, NULL);
  o = gts_options(3, full, NULL);
  o.dtype = k_types[t];
  o.layout = dst_layout;
  o.init = GTSTORAGE_INIT_ZEROS;
  GTS_OK(gtstorage_create(&o, &dst));
  for (int f = 0; f < 6; ++f) {
    for (int order = 0; order < 2; ++order) {
      gtstorage_slice_spec spec[3];
      gtstorage_handle vs = 0, vd = 0;
      gtstorage_array a = GTSTORAGE_ARRAY_INIT;
      int64_t shape[3], strides[3], lo[3], n;
      unsigned char* buf;
      for (int k = 0; k < 3; ++k) {
        const int own = k == f / 2;
        gtstorage_slice_spec r = {0, 0, 1, GTSTORAGE_SLICE_RANGE, 0};
        lo[k] = own ? (f % 2 == 0 ? 0 : h + interior[k]) : h;
        shape[k] = own ? h : interior[k];
        r.start = lo[k];
        r.stop = lo[k] + shape[k];
        spec[k] = r;
      }
      n = count_of(shape, 3);
      buf = (unsigned char*)malloc((size_t)(n * size));
      assert_non_null(buf);
      if (order == 0) { /* C order */
        strides[2] = size;
        strides[1] = size * shape[2];
        strides[0] = size * shape[2] * shape[1];
      } else { /* the field's own order: rank r gets the product of faster extents */
        for (int k = 0; k < 3; ++k) {
          strides[k] = size;
          for (int m = 0; m < 3; ++m)
            if (src_layout[m] > src_layout[k]) strides[k] *= shape[m];
        }
      }
      a.ndim = 3;
      a.shape = shape;
      a.strides = strides;
      a.data = buf;
      a.dtype = k_types[t];
      GTS_OK(gtstorage_slice(src, spec, 3, &vs));
      GTS_OK(gtstorage_slice(dst, spec, 3, &vd));
      GTS_OK(gtstorage_copy_to_array(&a, vs));
      if (count_mismatches(buf, strides, shape, 3, size, lo) != 0)
        fail_msg("%s face %d order %d: packed buffer wrong", k_types[t], f, order);
      GTS_OK(gtstorage_copy_from_array(vd, &a));
      GTS_OK(gtstorage_release(vs));
      GTS_OK(gtstorage_release(vd));
      free(buf);
    }
  }
  info = gts_host_info(dst);
  do {
    int faces = 0, interior_dims = 0;
    for (int k = 0; k < 3; ++k) {
      const int in_halo = idx[k] < h || idx[k] >= h + interior[k];
      faces += in_halo;
      interior_dims += !in_halo;
    }
    if (faces == 1 && interior_dims == 2) {
      ref_bytes(idx, 3, size, want);
    } else {
      memcpy(want, zero, sizeof want);
    }
    if (memcmp(gts_elem(info.data, info.strides, idx, 3), want, (size_t)size) != 0)
      fail_msg("%s unpacked field element (%lld, %lld, %lld) wrong", k_types[t], (long long)idx[0],
               (long long)idx[1], (long long)idx[2]);
  } while (gts_next_index(idx, full, 3));
  GTS_OK(gtstorage_release(src));
  GTS_OK(gtstorage_release(dst));
}

static void test_copy_halo_faces(void** state) {
  static const int64_t small[3] = {13, 11, 9}, wide[3] = {70, 41, 37};
  int32_t kfirst[3] = {0, 1, 2}, ifirst[3] = {2, 1, 0}, mixed[3] = {1, 2, 0};
  (void)state;
  for (int t = 0; t < 5; ++t) {
    halo_faces(small, t, kfirst, kfirst);
    halo_faces(small, t, ifirst, ifirst);
    halo_faces(small, t, kfirst, mixed);
  }
  halo_faces(wide, 3, kfirst, kfirst);
  halo_faces(wide, 3, ifirst, kfirst);
  halo_faces(wide, 2, mixed, ifirst);
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
