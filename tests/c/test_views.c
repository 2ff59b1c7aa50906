/*
 * Views: slice (Python semantics), transpose, domain_view; shared memory; lifetime and
 * reference counts. Expected element values come from the base's value function through an
 * index mapping computed here, and are read straight from memory via the interface.
 */
#include "support.h"

/* The base: numpy f8, shape (6,7,8), asymmetric halo, element value gts_value(i,j,k). */
static const int64_t kShape[3] = {6, 7, 8};
static const int64_t kHalo[6] = {1, 2, 2, 1, 0, 3};

static gtstorage_handle make_base(int readonly) {
  gtstorage_handle h = gts_create_valued("numpy", "IJK", 3, kShape, kHalo);
  if (readonly) {
    /* Re-create read-only with the same contents. */
    gtstorage_interface_info info = gts_host_info(h);
    gtstorage_create_options o;
    gtstorage_handle r = 0;
    gtstorage_array src = gts_array(3, info.shape, info.data);
    src.strides = info.strides;
    src.dtype = "<f8";
    o = gts_options(3, kShape, NULL);
    o.halo = kHalo;
    o.readonly = 1;
    o.init = GTSTORAGE_INIT_COPY;
    o.source = &src;
    GTS_OK(gtstorage_create(&o, &r));
    GTS_OK(gtstorage_release(h));
    h = r;
  }
  return h;
}

/* Base index of a view index: base dim d is either fixed or view dim vd[d] as first + i*step. */
typedef struct mapping {
  int base_ndim;
  int vd[GTSTORAGE_MAX_NDIM];
  int64_t first[GTSTORAGE_MAX_NDIM];
  int64_t step[GTSTORAGE_MAX_NDIM];
} mapping;

static double expect_mapped(const int64_t* vidx, int ndim, const void* ctx) {
  const mapping* m = (const mapping*)ctx;
  int64_t b[GTSTORAGE_MAX_NDIM] = {0};
  (void)ndim;
  for (int d = 0; d < m->base_ndim; ++d)
    b[d] = m->first[d] + (m->vd[d] >= 0 ? vidx[m->vd[d]] * m->step[d] : 0);
  return gts_value(b, m->base_ndim);
}

/* Also read the view through copy_to_array into a C-contiguous buffer and compare. */
static void check_view(gtstorage_handle v, const mapping* m) {
  gtstorage_interface_info info = gts_host_info(v);
  int n = (int)info.ndim;
  int64_t count = gts_product(info.shape, n), idx[GTSTORAGE_MAX_NDIM] = {0};
  double* buf = (double*)calloc((size_t)(count ? count : 1), sizeof(double));
  gts_check_doubles(v, expect_mapped, m);
  gtstorage_array dst = gts_array((uint32_t)n, info.shape, buf);
  dst.dtype = "<f8";
  GTS_OK(gtstorage_copy_to_array(&dst, v));
  for (int64_t i = 0; i < count; ++i) {
    if (buf[i] != expect_mapped(idx, n, m)) {
      double got = buf[i];
      free(buf);
      fail_msg("copy_to_array element %" PRId64 ": %g, expected %g", i, got,
               expect_mapped(idx, n, m));
    }
    gts_next_index(idx, info.shape, n);
  }
  free(buf);
}

/* Python's slice.indices(n) and len(range(...)), written out independently. */
static int64_t py_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t* first) {
  const int64_t none = GTSTORAGE_SLICE_NONE;
  if (step > 0) {
    start = start == none ? 0 : (start < 0 ? start + n : start);
    stop = stop == none ? n : (stop < 0 ? stop + n : stop);
    start = start < 0 ? 0 : (start > n ? n : start);
    stop = stop < 0 ? 0 : (stop > n ? n : stop);
    *first = start;
    return stop > start ? (stop - start - 1) / step + 1 : 0;
  }
  start = start == none ? n - 1 : (start < 0 ? start + n : start);
  stop = stop == none ? -1 : (stop < 0 ? stop + n : stop);
  start = start < 0 ? -1 : (start >= n ? n - 1 : start);
  stop = stop < 0 ? -1 : (stop >= n ? n - 1 : stop);
  *first = start;
  return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

static gtstorage_slice_spec range(int64_t start, int64_t stop, int64_t step) {
  gtstorage_slice_spec s = {start, stop, step, GTSTORAGE_SLICE_RANGE, 0};
  return s;
}
static gtstorage_slice_spec index_spec(int64_t i) {
  gtstorage_slice_spec s = {i, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_INDEX, 0};
  return s;
}

/* Applies @p spec to the base and checks shape, strides, data pointer and every value. */
static gtstorage_handle slice_and_check(gtstorage_handle base, const gtstorage_slice_spec* spec) {
  gtstorage_interface_info bi = gts_host_info(base), vi;
  gtstorage_handle v = 0;
  mapping m;
  int vd = 0;
  char* want_data = (char*)bi.data;
  memset(&m, 0, sizeof m);
  m.base_ndim = 3;
  GTS_OK(gtstorage_slice(base, spec, 3, &v));
  vi = gts_host_info(v);
  for (int d = 0; d < 3; ++d) {
    if (spec[d].kind == GTSTORAGE_SLICE_INDEX) {
      int64_t i = spec[d].start < 0 ? spec[d].start + kShape[d] : spec[d].start;
      m.vd[d] = -1;
      m.first[d] = i;
      want_data += i * bi.strides[d];
    } else {
      int64_t first, len = py_slice(kShape[d], spec[d].start, spec[d].stop, spec[d].step, &first);
      m.vd[d] = vd;
      m.first[d] = first;
      m.step[d] = spec[d].step;
      if (vi.shape[vd] != len)
        fail_msg("dim %d: length %" PRId64 ", Python says %" PRId64, d, vi.shape[vd], len);
      GTS_EQ64(vi.strides[vd], bi.strides[d] * spec[d].step);
      assert_string_equal(vi.dims[vd], bi.dims[d]);
      if (len > 0) want_data += first * bi.strides[d];
      ++vd;
    }
  }
  GTS_EQ64(vi.ndim, vd);
  if (gts_product(vi.shape, vd) > 0) {
    assert_ptr_equal(vi.data, want_data);
    check_view(v, &m);
  }
  /* A view shares the allocation. */
  assert_ptr_equal(vi.allocation, bi.allocation);
  return v;
}

static void test_slice_ranges_and_index(void** state) {
  gtstorage_handle base = make_base(0), v;
  gtstorage_slice_spec s[3];
  (void)state;
  s[0] = range(1, 5, 1);
  s[1] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 2);
  s[2] = index_spec(3);
  v = slice_and_check(base, s);
  {
    gtstorage_interface_info vi = gts_host_info(v);
    GTS_EQ64(vi.ndim, 2);
    GTS_EQ_ARRAY(vi.shape, 4, 4);
    GTS_EQ64(vi.nbytes, 4 * 4 * 8);
    assert_string_equal(vi.dims[0], "I");
    assert_string_equal(vi.dims[1], "J");
  }
  GTS_OK(gtstorage_release(v));
  /* Two indices: a 1-d view along K. */
  s[0] = index_spec(2);
  s[1] = index_spec(-1);
  s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  v = slice_and_check(base, s);
  {
    gtstorage_interface_info vi = gts_host_info(v);
    GTS_EQ64(vi.ndim, 1);
    GTS_EQ64(vi.shape[0], 8);
    assert_string_equal(vi.dims[0], "K");
  }
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(base));
}

static void test_slice_negative(void** state) {
  gtstorage_handle base = make_base(0), v;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info bi, vi;
  (void)state;
  bi = gts_host_info(base);
  s[0] = range(-3, GTSTORAGE_SLICE_NONE, 1);                    /* 3,4,5 */
  s[1] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1); /* 6..0 */
  s[2] = range(5, 1, -2);                                       /* 5,3 */
  v = slice_and_check(base, s);
  vi = gts_host_info(v);
  GTS_EQ_ARRAY(vi.shape, 3, 7, 2);
  assert_true(vi.strides[1] < 0 && vi.strides[2] < 0);
  assert_ptr_equal(vi.data,
                   (char*)bi.data + 3 * bi.strides[0] + 6 * bi.strides[1] + 5 * bi.strides[2]);
  GTS_OK(gtstorage_release(v));
  /* Out-of-range bounds clamp like Python. */
  s[0] = range(2, 100, 1);
  s[1] = range(-100, 3, 1);
  s[2] = range(100, 0, -3); /* 7,4,1 */
  v = slice_and_check(base, s);
  vi = gts_host_info(v);
  GTS_EQ_ARRAY(vi.shape, 4, 3, 3);
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(base));
}

/* Every start/stop in -10..10 or None and step in ±1..±4 on one dim, against Python. */
static void test_slice_sweep_python(void** state) {
  gtstorage_handle base = make_base(0);
  long checked = 0;
  (void)state;
  for (int64_t a = -11; a <= 10; ++a)
    for (int64_t b = -11; b <= 10; ++b)
      for (int64_t st = -4; st <= 4; ++st) {
        gtstorage_slice_spec s[3];
        gtstorage_handle v;
        int64_t first, len;
        if (st == 0) continue;
        s[0] = index_spec(1);
        s[1] = range(a == -11 ? GTSTORAGE_SLICE_NONE : a, b == -11 ? GTSTORAGE_SLICE_NONE : b, st);
        s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
        len = py_slice(kShape[1], s[1].start, s[1].stop, st, &first);
        if (len == 0) continue; /* empty results are covered by test_slice_empty */
        v = slice_and_check(base, s);
        GTS_OK(gtstorage_release(v));
        ++checked;
      }
  assert_true(checked > 1000);
  GTS_OK(gtstorage_release(base));
}

/* Python semantics: a slice that selects nothing is an empty view, not an error. */
static void test_slice_empty(void** state) {
  gtstorage_handle base = make_base(0), v = 0;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info vi;
  (void)state;
  s[0] = range(5, 2, 1);
  s[1] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  vi = gts_host_info(v);
  GTS_EQ64(vi.shape[0], 0);
  GTS_EQ64(vi.nbytes, 0);
  GTS_OK(gtstorage_fill_double(v, 1.0)); /* writes nothing */
  GTS_OK(gtstorage_release(v));
  {
    mapping m = {3, {0, 1, 2}, {0, 0, 0}, {1, 1, 1}};
    gts_check_doubles(base, expect_mapped, &m);
  }
  GTS_OK(gtstorage_release(base));
}

/* Halo widths shrink to what remains inside the view; 0 for steps other than 1. */
static void test_slice_halo(void** state) {
  gtstorage_handle base = make_base(0), v = 0;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info vi;
  (void)state;
  s[0] = range(0, 5, 1); /* n 6, halo (1,2): lower 1, upper 2-(6-5) = 1 */
  s[1] = range(3, 7, 1); /* n 7, halo (2,1): lower 0, upper 1 */
  s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 2); /* step 2: 0, 0 */
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  vi = gts_host_info(v);
  GTS_EQ_ARRAY(vi.halo[0], 1, 1);
  GTS_EQ_ARRAY(vi.halo[1], 0, 1);
  GTS_EQ_ARRAY(vi.halo[2], 0, 0);
  for (int d = 0; d < 3; ++d) GTS_EQ64(vi.origin[d], vi.halo[d][0]);
  /* The base's aligned point (1,2,0): inside along I (view index 1), outside along J. */
  GTS_EQ_ARRAY(vi.aligned_index, 1, -1);
  GTS_OK(gtstorage_release(v));
  s[0] = range(2, 4, 1); /* entirely interior: no halo left */
  s[1] = range(2, 6, 1);
  s[2] = range(0, 5, 1);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  vi = gts_host_info(v);
  for (int d = 0; d < 3; ++d) {
    GTS_EQ_ARRAY(vi.halo[d], 0, 0);
  }
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(base));
}

static void test_transpose(void** state) {
  gtstorage_handle base = make_base(0), t = 0;
  int32_t perm[3] = {2, 0, 1};
  gtstorage_interface_info bi, ti;
  mapping m;
  (void)state;
  bi = gts_host_info(base);
  GTS_OK(gtstorage_transpose(base, perm, 3, &t));
  ti = gts_host_info(t);
  assert_ptr_equal(ti.data, bi.data);
  for (int d = 0; d < 3; ++d) {
    GTS_EQ64(ti.shape[d], bi.shape[perm[d]]);
    GTS_EQ64(ti.strides[d], bi.strides[perm[d]]);
    GTS_EQ_ARRAY(ti.halo[d], bi.halo[perm[d]][0], bi.halo[perm[d]][1]);
    GTS_EQ64(ti.aligned_index[d], bi.aligned_index[perm[d]]);
    GTS_EQ64(ti.origin[d], bi.origin[perm[d]]);
    assert_string_equal(ti.dims[d], bi.dims[perm[d]]);
  }
  /* numpy layout (0,1,2) seen as (K,I,J): K is contiguous, I slowest. */
  GTS_EQ_ARRAY(ti.layout, 2, 0, 1);
  GTS_EQ64(ti.is_c_contiguous, 0);
  memset(&m, 0, sizeof m);
  m.base_ndim = 3;
  for (int d = 0; d < 3; ++d) {
    m.vd[perm[d]] = d;
    m.step[perm[d]] = 1;
  }
  check_view(t, &m);
  GTS_OK(gtstorage_release(t));
  /* Identity permutation: same geometry. */
  perm[0] = 0;
  perm[1] = 1;
  perm[2] = 2;
  GTS_OK(gtstorage_transpose(base, perm, 3, &t));
  ti = gts_host_info(t);
  for (int d = 0; d < 3; ++d) GTS_EQ64(ti.strides[d], bi.strides[d]);
  GTS_OK(gtstorage_release(t));
  GTS_OK(gtstorage_release(base));
}

/* 4-d with a data dimension: transposing moves the data dim's label along. */
static void test_transpose_data_dim(void** state) {
  int64_t shape[4] = {3, 4, 5, 2};
  gtstorage_handle base = gts_create_valued("gt:cpu_ifirst", "IJK0", 4, shape, NULL), t = 0;
  int32_t perm[4] = {3, 2, 1, 0};
  gtstorage_interface_info ti;
  mapping m;
  (void)state;
  GTS_OK(gtstorage_transpose(base, perm, 4, &t));
  ti = gts_host_info(t);
  assert_string_equal(ti.dims[0], "0");
  assert_string_equal(ti.dims[3], "I");
  /* gt:cpu_ifirst IJK0 = (3,2,1,0); reversed dims -> (0,1,2,3): C-contiguous. */
  for (int d = 0; d < 4; ++d) GTS_EQ64(ti.layout[d], d);
  assert_true(ti.is_c_contiguous != 0);
  memset(&m, 0, sizeof m);
  m.base_ndim = 4;
  for (int d = 0; d < 4; ++d) {
    m.vd[perm[d]] = d;
    m.step[perm[d]] = 1;
  }
  check_view(t, &m);
  GTS_OK(gtstorage_release(t));
  GTS_OK(gtstorage_release(base));
}

static void test_domain_view(void** state) {
  gtstorage_handle base = make_base(0), dv = 0, dv2 = 0;
  gtstorage_interface_info bi, di, di2;
  mapping m;
  (void)state;
  bi = gts_host_info(base);
  for (int d = 0; d < 3; ++d) GTS_EQ64(bi.origin[d], kHalo[2 * d]);
  GTS_OK(gtstorage_domain_view(base, &dv));
  di = gts_host_info(dv);
  for (int d = 0; d < 3; ++d) {
    GTS_EQ64(di.shape[d], kShape[d] - kHalo[2 * d] - kHalo[2 * d + 1]);
    GTS_EQ64(di.strides[d], bi.strides[d]);
    GTS_EQ_ARRAY(di.halo[d], 0, 0);
    GTS_EQ64(di.origin[d], 0);
    /* The base's aligned point is the first interior point. */
    GTS_EQ64(di.aligned_index[d], 0);
  }
  assert_ptr_equal(di.data, (char*)bi.data + kHalo[0] * bi.strides[0] + kHalo[2] * bi.strides[1] +
                                kHalo[4] * bi.strides[2]);
  GTS_EQ64(di.byte_offset, (char*)di.data - (char*)di.allocation);
  memset(&m, 0, sizeof m);
  m.base_ndim = 3;
  for (int d = 0; d < 3; ++d) {
    m.vd[d] = d;
    m.first[d] = kHalo[2 * d];
    m.step[d] = 1;
  }
  check_view(dv, &m);
  /* Idempotent. */
  GTS_OK(gtstorage_domain_view(dv, &dv2));
  di2 = gts_host_info(dv2);
  assert_ptr_equal(di2.data, di.data);
  for (int d = 0; d < 3; ++d) GTS_EQ64(di2.shape[d], di.shape[d]);
  GTS_RELEASE(dv2, dv, base);
}

/* Views of views compose: domain_view -> transpose -> slice. */
static void test_view_of_view(void** state) {
  gtstorage_handle base = make_base(0), dv = 0, t = 0, s = 0;
  int32_t perm[3] = {1, 2, 0};
  gtstorage_slice_spec sp[3];
  mapping m;
  (void)state;
  GTS_OK(gtstorage_domain_view(base, &dv));     /* shape (3,4,5), base = view + (1,2,0) */
  GTS_OK(gtstorage_transpose(dv, perm, 3, &t)); /* (J,K,I): shape (4,5,3) */
  sp[0] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1); /* J reversed: 3..0 */
  sp[1] = index_spec(2);                                         /* K = 2 */
  sp[2] = range(1, GTSTORAGE_SLICE_NONE, 1);                     /* I = 1,2 */
  GTS_OK(gtstorage_slice(t, sp, 3, &s));
  /* view (a, b): J = 3 - a, K = 2, I = 1 + b; base = domain + (1,2,0). */
  memset(&m, 0, sizeof m);
  m.base_ndim = 3;
  m.vd[0] = 1;
  m.first[0] = 1 + 1;
  m.step[0] = 1;
  m.vd[1] = 0;
  m.first[1] = 2 + 3;
  m.step[1] = -1;
  m.vd[2] = -1;
  m.first[2] = 0 + 2;
  {
    gtstorage_interface_info si = gts_host_info(s);
    GTS_EQ64(si.ndim, 2);
    GTS_EQ_ARRAY(si.shape, 4, 2);
    assert_string_equal(si.dims[0], "J");
    assert_string_equal(si.dims[1], "I");
  }
  check_view(s, &m);
  GTS_RELEASE(s, t, dv, base);
}

/* Writes through one view are seen through the base and other views. */
static void test_views_share_memory(void** state) {
  gtstorage_handle base = make_base(0), v = 0, t = 0;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info bi;
  int32_t perm[3] = {2, 1, 0};
  int64_t idx[3] = {0};
  (void)state;
  s[0] = range(1, 3, 1);
  s[1] = range(0, 7, 3); /* 0, 3, 6 */
  s[2] = index_spec(4);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  GTS_OK(gtstorage_fill_double(v, -7.0));
  bi = gts_host_info(base);
  do {
    double got, want = gts_value(idx, 3);
    if (idx[0] >= 1 && idx[0] < 3 && idx[1] % 3 == 0 && idx[2] == 4) want = -7.0;
    memcpy(&got, gts_elem(bi.data, bi.strides, idx, 3), sizeof got);
    if (got != want)
      fail_msg("base (%" PRId64 ",%" PRId64 ",%" PRId64 ") = %g, expected %g", idx[0], idx[1],
               idx[2], got, want);
  } while (gts_next_index(idx, kShape, 3));
  /* Write the whole base through a transposed view from caller memory. */
  GTS_OK(gtstorage_transpose(base, perm, 3, &t));
  {
    int64_t tshape[3] = {8, 7, 6};
    double* buf = (double*)malloc(8 * 7 * 6 * sizeof(double));
    int64_t k = 0;
    for (int64_t i = 0; i < 8 * 7 * 6; ++i) buf[i] = (double)i;
    gtstorage_array a = gts_array(3, tshape, buf);
    GTS_OK(gtstorage_copy_from_array(t, &a));
    free(buf);
    /* base (i,j,k) == transposed (k,j,i) == buf[k*42 + j*6 + i] */
    memset(idx, 0, sizeof idx);
    do {
      double got;
      memcpy(&got, gts_elem(bi.data, bi.strides, idx, 3), sizeof got);
      k = idx[2] * 42 + idx[1] * 6 + idx[0];
      if (got != (double)k) fail_msg("base element %g, expected %g", got, (double)k);
    } while (gts_next_index(idx, kShape, 3));
  }
  GTS_RELEASE(t, v, base);
}

/* A view keeps the buffer alive after the base handle is released. */
static void test_view_keeps_buffer_alive(void** state) {
  gts_live before = gts_live_now(), now;
  gtstorage_handle base = make_base(0), v = 0, dv = 0;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info vi, after;
  mapping m;
  (void)state;
  s[0] = range(1, 4, 1);
  s[1] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  s[2] = range(2, 6, 2);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  GTS_OK(gtstorage_domain_view(base, &dv));
  now = gts_live_now();
  GTS_EQ64(now.handles, before.handles + 3);
  GTS_EQ64(now.buffers, before.buffers + 1);
  vi = gts_host_info(v);
  GTS_OK(gtstorage_release(base));
  now = gts_live_now();
  GTS_EQ64(now.handles, before.handles + 2);
  GTS_EQ64(now.buffers, before.buffers + 1);
  assert_true(now.host_bytes > before.host_bytes);
  {
    void* p = NULL;
    GTS_EXPECT(gtstorage_data(base, GTSTORAGE_SIDE_HOST, &p), GTSTORAGE_ERROR_INVALID_HANDLE,
               "handle");
  }
  after = gts_host_info(v);
  assert_ptr_equal(after.data, vi.data);
  memset(&m, 0, sizeof m);
  m.base_ndim = 3;
  m.vd[0] = 0, m.first[0] = 1, m.step[0] = 1;
  m.vd[1] = 1, m.first[1] = 0, m.step[1] = 1;
  m.vd[2] = 2, m.first[2] = 2, m.step[2] = 2;
  check_view(v, &m);
  GTS_OK(gtstorage_fill_double(dv, 3.0)); /* still writable */
  GTS_OK(gtstorage_release(v));
  now = gts_live_now();
  GTS_EQ64(now.buffers, before.buffers + 1);
  GTS_OK(gtstorage_release(dv));
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

static void test_refcount(void** state) {
  gtstorage_handle base = make_base(0), v = 0;
  int64_t rc = -1;
  (void)state;
  GTS_OK(gtstorage_refcount(base, &rc));
  GTS_EQ64(rc, 1);
  GTS_OK(gtstorage_retain(base));
  GTS_OK(gtstorage_retain(base));
  GTS_OK(gtstorage_refcount(base, &rc));
  GTS_EQ64(rc, 3);
  GTS_OK(gtstorage_domain_view(base, &v));
  /* A view is its own handle with its own count; it does not add to the base handle's count. */
  GTS_OK(gtstorage_refcount(v, &rc));
  GTS_EQ64(rc, 1);
  GTS_OK(gtstorage_refcount(base, &rc));
  GTS_EQ64(rc, 3);
  GTS_OK(gtstorage_release(base));
  GTS_OK(gtstorage_release(base));
  GTS_OK(gtstorage_refcount(base, &rc));
  GTS_EQ64(rc, 1);
  (void)gts_host_info(base); /* still valid */
  GTS_OK(gtstorage_release(base));
  GTS_EXPECT(gtstorage_refcount(base, &rc), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_EXPECT(gtstorage_retain(base), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_OK(gtstorage_retain(v));
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(v));
  GTS_EXPECT(gtstorage_release(v), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
}

/* Views of a read-only storage are read-only. */
static void test_readonly_views(void** state) {
  gtstorage_handle base = make_base(1), v = 0, t = 0;
  int32_t perm[3] = {1, 0, 2};
  (void)state;
  GTS_OK(gtstorage_domain_view(base, &v));
  GTS_OK(gtstorage_transpose(v, perm, 3, &t));
  assert_true(gts_host_info(base).readonly != 0);
  assert_true(gts_host_info(v).readonly != 0);
  assert_true(gts_host_info(t).readonly != 0);
  GTS_EXPECT(gtstorage_fill_double(t, 1.0), GTSTORAGE_ERROR_READONLY, "read");
  {
    mapping m = {3, {0, 1, 2}, {0, 0, 0}, {1, 1, 1}};
    gts_check_doubles(base, expect_mapped, &m);
  }
  GTS_RELEASE(t, v, base);
}

/* nbytes and contiguity of views. */
static void test_view_contiguity(void** state) {
  int64_t shape[3] = {4, 5, 6};
  gtstorage_handle base = gts_create_valued("numpy", NULL, 3, shape, NULL), v = 0;
  gtstorage_slice_spec s[3];
  gtstorage_interface_info bi, vi;
  (void)state;
  bi = gts_host_info(base);
  assert_true(bi.is_c_contiguous != 0);
  GTS_EQ64(bi.nbytes, 4 * 5 * 6 * 8);
  /* Leading-dim range slice stays contiguous; a stepped one does not. */
  s[0] = range(1, 3, 1);
  s[1] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 1);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  vi = gts_host_info(v);
  assert_true(vi.is_c_contiguous != 0);
  GTS_EQ64(vi.nbytes, 2 * 5 * 6 * 8);
  GTS_OK(gtstorage_release(v));
  s[2] = range(GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, 2);
  GTS_OK(gtstorage_slice(base, s, 3, &v));
  vi = gts_host_info(v);
  assert_true(vi.is_c_contiguous == 0);
  GTS_EQ64(vi.nbytes, 2 * 5 * 3 * 8);
  GTS_OK(gtstorage_release(v));
  GTS_OK(gtstorage_release(base));
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
