/*
 * Issue 8: what NumPy, DLPack and GT4Py allow, the C library allows too.
 *
 * - 0-d storages (ndim 0, shape (), exactly one element, NumPy's np.empty(())): created with every
 *   init kind, planned, wrapped, viewed (slice without specs, domain_view, transpose of 0 axes),
 *   copied, filled, described (host and device) and exported to DLPack.
 * - Zero extents ({0, 3}, {4, 0, 5}, {0}): a storage without elements, whose strides are the
 *   layout's with every 0 counted as 1 (NumPy's rule: np.empty((4, 0, 5)).strides == (40, 40, 8)),
 *   which allocates nothing and whose data is still a valid, non-null address. Every copy, fill,
 *   sync, view and export of it succeeds and touches nothing (run under AddressSanitizer too).
 * - Slicing a storage to an empty range gives such a view.
 *
 * The device half runs on the emulated device (the GPU backend over the simulated CUDA runtime).
 */
#include <dlpack/dlpack.h>

#include "support.h"

static const double kCanary = -12345.0;

static gtstorage_create_options host_options(uint32_t ndim, const int64_t* shape) {
  gtstorage_create_options o = gts_options(ndim, shape, NULL);
  o.dtype = "<f8";
  o.device = GTSTORAGE_DEVICE_CPU;
  return o;
}

/* The one element of a 0-d host storage, read through the descriptor (not through the API). */
static double scalar_of(gtstorage_handle h) {
  gtstorage_interface_info info = gts_info(h, GTSTORAGE_SIDE_HOST);
  double v = 0.0;
  assert_int_equal(info.ndim, 0);
  assert_non_null(info.data);
  memcpy(&v, info.data, sizeof v);
  return v;
}

/* The one element of a 0-d storage, read through gtstorage_copy_to_array (any side). */
static double scalar_copied(gtstorage_handle h) {
  double v = kCanary;
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = 0;
  a.data = &v;
  a.dtype = "<f8";
  GTS_OK(gtstorage_copy_to_array(&a, h));
  return v;
}

/* ---- 0-d storages ------------------------------------------------------------------------ */

static void scalar_plan(void** state) {
  (void)state;
  gtstorage_create_options o = host_options(0, NULL);
  gtstorage_plan_info p = gts_plan_of(&o);
  GTS_EQ64(p.ndim, 0);
  GTS_EQ64(p.itemsize, 8);
  GTS_EQ64(p.padded_bytes, 8);
  GTS_EQ64(p.byte_offset, 0);
  GTS_EQ64(p.allocation_bytes, 8);
  GTS_EQ64(p.contiguous_dim, -1);
  /* Any alignment: one element at an aligned address, no padding. */
  o.alignment_bytes = 64;
  p = gts_plan_of(&o);
  GTS_EQ64(p.padded_bytes, 8);
  GTS_EQ64(p.byte_offset, 0);
  GTS_EQ64(p.allocation_bytes, 8);
  /* Every preset (GT4Py's layout rule has nothing to order); labels "" are ndim 0 labels. */
  o.alignment_bytes = 0;
  o.dims = "";
  o.preset = "gt:cpu_ifirst";
  p = gts_plan_of(&o);
  GTS_EQ64(p.allocation_bytes, 8);
  /* What stays invalid: labels for dimensions it does not have, more than 16 dimensions. */
  o.dims = "I";
  GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims");
  o.dims = NULL;
  o.ndim = GTSTORAGE_MAX_NDIM + 1;
  GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim");
}

static void scalar_create_every_init(void** state) {
  (void)state;
  gtstorage_create_options o = host_options(0, NULL);
  gtstorage_handle h;
  /* uninitialized: exists, one element at a non-null address */
  h = gts_create(&o);
  {
    gtstorage_interface_info info = gts_info(h, GTSTORAGE_SIDE_HOST);
    GTS_EQ64(info.ndim, 0);
    assert_non_null(info.data);
    GTS_EQ64(info.nbytes, 8);
    GTS_EQ64(info.itemsize, 8);
    assert_string_equal(info.typestr, "<f8");
    assert_true(info.is_c_contiguous);
    assert_true(info.allocation_bytes >= 8);
    GTS_EQ64((char*)info.data - (char*)info.allocation, info.byte_offset);
  }
  GTS_OK(gtstorage_release(h));
  /* zeros */
  o.init = GTSTORAGE_INIT_ZEROS;
  h = gts_create(&o);
  assert_true(scalar_of(h) == 0.0);
  GTS_OK(gtstorage_release(h));
  /* ones */
  o.init = GTSTORAGE_INIT_ONES;
  h = gts_create(&o);
  assert_true(scalar_of(h) == 1.0);
  GTS_OK(gtstorage_release(h));
  /* value */
  {
    const double v = 42.5;
    o.init = GTSTORAGE_INIT_VALUE;
    o.fill_value = &v;
    h = gts_create(&o);
    assert_true(scalar_of(h) == 42.5);
    GTS_OK(gtstorage_release(h));
    o.fill_value = NULL;
  }
  /* copy from a 0-d gtstorage_array (shape NULL: there are no extents), converting the dtype */
  {
    const float x = 7.25f;
    gtstorage_array src = GTSTORAGE_ARRAY_INIT;
    src.ndim = 0;
    src.data = (void*)&x;
    src.dtype = "<f4";
    o.init = GTSTORAGE_INIT_COPY;
    o.source = &src;
    h = gts_create(&o);
    assert_true(scalar_of(h) == 7.25);
    assert_true(scalar_copied(h) == 7.25);
    GTS_OK(gtstorage_release(h));
    /* a 1-d source does not have the shape () */
    {
      const int64_t one[1] = {1};
      gtstorage_handle bad = GTSTORAGE_NULL_HANDLE;
      src.ndim = 1;
      src.shape = one;
      GTS_EXPECT(gtstorage_create(&o, &bad), GTSTORAGE_ERROR_SHAPE_MISMATCH, "source");
      assert_true(bad == GTSTORAGE_NULL_HANDLE);
    }
  }
}

static void scalar_copy_fill(void** state) {
  (void)state;
  gtstorage_create_options o = host_options(0, NULL);
  const double v = 3.5;
  gtstorage_handle a, b;
  o.init = GTSTORAGE_INIT_VALUE;
  o.fill_value = &v;
  a = gts_create(&o);
  o.init = GTSTORAGE_INIT_ZEROS;
  o.fill_value = NULL;
  o.dtype = "<i4"; /* a copy converts */
  b = gts_create(&o);
  GTS_OK(gtstorage_copy(b, a));
  {
    int32_t got = 0;
    gtstorage_interface_info info = gts_info(b, GTSTORAGE_SIDE_HOST);
    memcpy(&got, info.data, sizeof got);
    GTS_EQ64(got, 3);
  }
  GTS_OK(gtstorage_fill_double(a, -2.0));
  assert_true(scalar_of(a) == -2.0);
  {
    const double w = 9.0;
    GTS_OK(gtstorage_fill(a, &w));
    assert_true(scalar_of(a) == 9.0);
  }
  {
    const double x = 11.0;
    gtstorage_array src = GTSTORAGE_ARRAY_INIT;
    src.data = (void*)&x;
    GTS_OK(gtstorage_copy_from_array(a, &src));
    assert_true(scalar_of(a) == 11.0);
  }
  /* shapes () and (1,) differ */
  {
    const int64_t one[1] = {1};
    gtstorage_create_options co = host_options(1, one);
    gtstorage_handle c;
    co.init = GTSTORAGE_INIT_ZEROS;
    c = gts_create(&co);
    GTS_EXPECT(gtstorage_copy(c, a), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
    GTS_OK(gtstorage_release(c));
  }
  GTS_OK(gtstorage_release(a));
  GTS_OK(gtstorage_release(b));
}

/* @p h is a 0-d storage of one double at @p data. */
static void check_scalar_at(gtstorage_handle h, const void* data) {
  const gtstorage_interface_info info = gts_info(h, GTSTORAGE_SIDE_HOST);
  GTS_EQ64(info.ndim, 0);
  assert_ptr_equal(info.data, data);
  GTS_EQ64(info.nbytes, 8);
}

static void scalar_views_and_wrap(void** state) {
  (void)state;
  gtstorage_create_options o = host_options(0, NULL);
  const double v = 5.0;
  o.init = GTSTORAGE_INIT_VALUE;
  o.fill_value = &v;
  gtstorage_handle h = gts_create(&o), s, t, d;
  const gtstorage_interface_info base = gts_info(h, GTSTORAGE_SIDE_HOST);
  /* slicing with no specs (spec may be NULL for nspec 0), transposing 0 axes, domain_view */
  GTS_OK(gtstorage_slice(h, NULL, 0, &s));
  GTS_OK(gtstorage_transpose(h, NULL, 0, &t));
  GTS_OK(gtstorage_domain_view(h, &d));
  {
    const gtstorage_handle views[3] = {s, t, d};
    for (int i = 0; i < 3; ++i) check_scalar_at(views[i], base.data);
  }
  GTS_OK(gtstorage_fill_double(s, 6.0)); /* a write through a view is seen by the others */
  assert_true(scalar_of(t) == 6.0);
  assert_true(scalar_of(d) == 6.0);
  GTS_EXPECT(gtstorage_slice(h, NULL, 1, &s), GTSTORAGE_ERROR_INVALID_ARGUMENT, "spec");
  GTS_RELEASE(s, t, d);

  /* indexing every dimension of a 2-d storage gives a 0-d view of that element */
  {
    const int64_t shape[2] = {3, 4};
    gtstorage_handle m = gts_create_valued("numpy", "IJ", 2, shape, NULL), e;
    const gtstorage_slice_spec spec[2] = {{2, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_INDEX, 0},
                                          {-1, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_INDEX, 0}};
    const int64_t idx[2] = {2, 3};
    GTS_OK(gtstorage_slice(m, spec, 2, &e));
    assert_true(scalar_of(e) == gts_value(idx, 2));
    assert_true(scalar_copied(e) == gts_value(idx, 2));
    GTS_OK(gtstorage_release(e));
    GTS_OK(gtstorage_release(m));
  }

  /* wrapping one caller element */
  {
    double x = 1.5;
    gtstorage_wrap_options w = gts_wrap_options(0, NULL, &x);
    gtstorage_handle wh;
    GTS_OK(gtstorage_wrap(&w, &wh));
    check_scalar_at(wh, &x);
    GTS_OK(gtstorage_copy(wh, h));
    assert_true(x == 6.0);
    GTS_OK(gtstorage_release(wh));
    /* one element needs an address */
    w.data = NULL;
    GTS_EXPECT(gtstorage_wrap(&w, &wh), GTSTORAGE_ERROR_INVALID_ARGUMENT, "data");
  }
  GTS_OK(gtstorage_release(h));
}

static void scalar_dlpack(void** state) {
  (void)state;
  gtstorage_create_options o = host_options(0, NULL);
  const double v = 2.25;
  o.init = GTSTORAGE_INIT_VALUE;
  o.fill_value = &v;
  gtstorage_handle h = gts_create(&o);
  struct DLManagedTensorVersioned* t = NULL;
  struct DLManagedTensor* l = NULL;
  GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_HOST, &t));
  assert_non_null(t);
  GTS_EQ64(t->dl_tensor.ndim, 0);
  assert_non_null(t->dl_tensor.data);
  GTS_EQ64(t->dl_tensor.dtype.code, kDLFloat);
  GTS_EQ64(t->dl_tensor.dtype.bits, 64);
  GTS_EQ64(t->dl_tensor.device.device_type, kDLCPU);
  {
    double got = 0.0;
    memcpy(&got, (char*)t->dl_tensor.data + t->dl_tensor.byte_offset, sizeof got);
    assert_true(got == 2.25);
  }
  GTS_OK(gtstorage_release(h)); /* the tensor keeps the memory alive */
  {
    double got = 0.0;
    memcpy(&got, (char*)t->dl_tensor.data + t->dl_tensor.byte_offset, sizeof got);
    assert_true(got == 2.25);
  }
  h = gts_create(&o);
  GTS_OK(gtstorage_to_dlpack(h, GTSTORAGE_SIDE_HOST, &l));
  GTS_EQ64(l->dl_tensor.ndim, 0);
  assert_non_null(l->dl_tensor.data);
  GTS_OK(gtstorage_release(h));
  t->deleter(t);
  l->deleter(l);
}

/* ---- zero extents ------------------------------------------------------------------------ */

typedef struct empty_case {
  uint32_t ndim;
  int64_t shape[3];
  const char* preset;
  int64_t alignment;
  int64_t strides[3];      /* NumPy's rule: every 0 counted as 1 in the stride products */
  int64_t padded_shape[3]; /* GT4Py's: the contiguous extent rounded up, 0 stays 0 */
} empty_case;

static const empty_case kEmpty[] = {
    {2, {0, 3}, "numpy", 0, {24, 8}, {0, 3}},
    {3, {4, 0, 5}, "numpy", 0, {40, 40, 8}, {4, 0, 5}},
    {1, {0}, "numpy", 0, {8}, {0}},
    /* I contiguous (base layout (2,1,0)): I 8, J 4*8, K 32*1 */
    {3, {4, 0, 5}, "gt:cpu_ifirst", 0, {8, 32, 32}, {4, 0, 5}},
    /* 32 bytes = 4 doubles: K padded 5 -> 8; J and I step over one padded K row each */
    {3, {4, 0, 5}, "numpy", 32, {64, 64, 8}, {4, 0, 8}},
    /* the empty dim is the padded one: counted as one element padded to 4 for the stride of I */
    {2, {3, 0}, "numpy", 32, {32, 8}, {3, 0}},
    {1, {0}, "numpy", 32, {8}, {0}},
    /* 24 bytes = 3 doubles (not a power of two): K padded 5 -> 6 */
    {3, {4, 0, 5}, "numpy", 24, {48, 48, 8}, {4, 0, 6}},
};

static gtstorage_create_options empty_options(const empty_case* c) {
  gtstorage_create_options o = host_options(c->ndim, c->shape);
  o.preset = c->preset;
  o.alignment_bytes = c->alignment;
  return o;
}

static void empty_plan_and_interface(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof kEmpty / sizeof kEmpty[0]; ++i) {
    const empty_case* c = &kEmpty[i];
    gtstorage_create_options o = empty_options(c);
    gtstorage_plan_info p = gts_plan_of(&o);
    GTS_EQ64(p.ndim, c->ndim);
    for (uint32_t d = 0; d < c->ndim; ++d) {
      if (p.strides[d] != c->strides[d] || p.padded_shape[d] != c->padded_shape[d])
        fail_msg("case %zu dim %u: stride %" PRId64 " padded %" PRId64 ", expected %" PRId64
                 " and %" PRId64,
                 i, d, p.strides[d], p.padded_shape[d], c->strides[d], c->padded_shape[d]);
      GTS_EQ64(p.aligned_index[d], 0);
    }
    GTS_EQ64(p.padded_bytes, 0);
    GTS_EQ64(p.byte_offset, 0);
    GTS_EQ64(p.allocation_bytes, 0);
    for (int32_t init = GTSTORAGE_INIT_UNINITIALIZED; init <= GTSTORAGE_INIT_VALUE; ++init) {
      const double v = 1.0;
      o.init = init;
      o.fill_value = init == GTSTORAGE_INIT_VALUE ? &v : NULL;
      gtstorage_handle h = gts_create(&o);
      gtstorage_interface_info info = gts_info(h, GTSTORAGE_SIDE_HOST);
      GTS_EQ64(info.ndim, c->ndim);
      assert_non_null(info.data); /* a valid address, never dereferenced */
      GTS_EQ64(info.nbytes, 0);
      GTS_EQ64(info.allocation_bytes, 0);
      assert_true(info.is_c_contiguous);
      for (uint32_t d = 0; d < c->ndim; ++d) {
        GTS_EQ64(info.shape[d], c->shape[d]);
        GTS_EQ64(info.strides[d], c->strides[d]);
        /* no aligned element in an empty dimension, as a view of it says */
        GTS_EQ64(info.aligned_index[d], c->shape[d] > 0 ? 0 : -1);
      }
      GTS_OK(gtstorage_release(h));
    }
  }
  /* What stays invalid: a negative extent, an aligned index inside an empty dimension. */
  {
    const int64_t neg[2] = {0, -1}, ai[2] = {1, 0}, shape[2] = {0, 3};
    gtstorage_create_options o = host_options(2, neg);
    gtstorage_plan_info p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "shape");
    o.shape = shape;
    o.aligned_index = ai;
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "aligned_index");
  }
}

static void empty_copy_fill_view_export(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof kEmpty / sizeof kEmpty[0]; ++i) {
    const empty_case* c = &kEmpty[i];
    gtstorage_create_options o = empty_options(c);
    gtstorage_handle a = gts_create(&o), b;
    /* copy from an empty caller array without a pointer, and from a storage of another dtype */
    {
      gtstorage_array src = gts_array(c->ndim, c->shape, NULL);
      o.init = GTSTORAGE_INIT_COPY;
      o.source = &src;
      o.dtype = "<f4";
      b = gts_create(&o);
      GTS_OK(gtstorage_copy_from_array(b, &src));
      GTS_OK(gtstorage_copy_to_array(&src, b));
    }
    GTS_OK(gtstorage_copy(a, b));
    GTS_OK(gtstorage_copy(b, a));
    GTS_OK(gtstorage_fill_double(a, 4.0));
    {
      const float f = 1.0f;
      GTS_OK(gtstorage_fill(b, &f));
    }
    /* every sync op is a valid no-op on a host storage */
    for (int32_t op = GTSTORAGE_SYNC_HOST_TO_DEVICE; op <= GTSTORAGE_SYNC_WAIT_STREAM; ++op) {
      GTS_OK(gtstorage_sync(a, op, 0));
    }
    /* views: all of it, the domain, transposed */
    {
      gtstorage_slice_spec all[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
      int32_t perm[3] = {0, 1, 2};
      gtstorage_handle v[3];
      for (uint32_t d = 0; d < c->ndim; ++d) perm[d] = (int32_t)(c->ndim - 1 - d);
      GTS_OK(gtstorage_slice(a, all, c->ndim, &v[0]));
      GTS_OK(gtstorage_domain_view(a, &v[1]));
      GTS_OK(gtstorage_transpose(a, perm, c->ndim, &v[2]));
      for (int k = 0; k < 3; ++k) {
        gtstorage_interface_info info = gts_info(v[k], GTSTORAGE_SIDE_HOST);
        GTS_EQ64(info.nbytes, 0);
        assert_non_null(info.data);
        GTS_OK(gtstorage_fill_double(v[k], 2.0));
        GTS_OK(gtstorage_copy(v[k], v[k]));
      }
      for (int k = 0; k < 3; ++k) GTS_OK(gtstorage_release(v[k]));
    }
    /* DLPack: a tensor with a zero in its shape */
    {
      struct DLManagedTensorVersioned* t = NULL;
      GTS_OK(gtstorage_to_dlpack_versioned(b, GTSTORAGE_SIDE_HOST, &t));
      GTS_EQ64(t->dl_tensor.ndim, c->ndim);
      for (uint32_t d = 0; d < c->ndim; ++d) GTS_EQ64(t->dl_tensor.shape[d], c->shape[d]);
      GTS_EQ64(t->dl_tensor.dtype.bits, 32);
      t->deleter(t);
    }
    GTS_OK(gtstorage_release(a));
    GTS_OK(gtstorage_release(b));
  }
}

/* Slicing to an empty range (Python semantics) gives an empty view; writing to it, or copying
 * into it, touches nothing of the memory around it. */
static void empty_slices_touch_nothing(void** state) {
  (void)state;
  double mem[4 * 5];
  const int64_t shape[2] = {4, 5};
  gtstorage_handle h;
  for (int i = 0; i < 20; ++i) mem[i] = kCanary;
  gtstorage_wrap_options w = gts_wrap_options(2, shape, mem);
  GTS_OK(gtstorage_wrap(&w, &h));
  {
    /* [2:2, :], [:, 5:], [3:1, ::-1] and [::-1, 0:0:-1]: all select nothing */
    const gtstorage_slice_spec specs[4][2] = {
        {{2, 2, 1, GTSTORAGE_SLICE_RANGE, 0}, GTSTORAGE_SLICE_ALL},
        {GTSTORAGE_SLICE_ALL, {5, GTSTORAGE_SLICE_NONE, 1, GTSTORAGE_SLICE_RANGE, 0}},
        {{3, 1, 1, GTSTORAGE_SLICE_RANGE, 0},
         {GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1, GTSTORAGE_SLICE_RANGE, 0}},
        {{GTSTORAGE_SLICE_NONE, GTSTORAGE_SLICE_NONE, -1, GTSTORAGE_SLICE_RANGE, 0},
         {0, 0, -1, GTSTORAGE_SLICE_RANGE, 0}},
    };
    const int64_t want[4][2] = {{0, 5}, {4, 0}, {0, 5}, {4, 0}};
    for (int k = 0; k < 4; ++k) {
      gtstorage_handle v, vv, e;
      GTS_OK(gtstorage_slice(h, specs[k], 2, &v));
      gtstorage_interface_info info = gts_info(v, GTSTORAGE_SIDE_HOST);
      GTS_EQ_ARRAY(info.shape, want[k][0], want[k][1]);
      GTS_EQ64(info.nbytes, 0);
      assert_non_null(info.data);
      GTS_OK(gtstorage_fill_double(v, 1.0));
      /* a view of the empty view, and a storage of its shape copied in both directions */
      GTS_OK(gtstorage_slice(v, specs[0], 2, &vv));
      GTS_OK(gtstorage_fill_double(vv, 1.0));
      {
        gtstorage_create_options o = host_options(2, info.shape);
        o.init = GTSTORAGE_INIT_ONES;
        e = gts_create(&o);
      }
      GTS_OK(gtstorage_copy(v, e));
      GTS_OK(gtstorage_copy(e, v));
      GTS_RELEASE(e, vv, v);
    }
  }
  for (int i = 0; i < 20; ++i) assert_true(mem[i] == kCanary);
  GTS_OK(gtstorage_release(h));
}

/* ---- the emulated device ----------------------------------------------------------------- */

/* gts-test-group: device */
static int use_emulated(void** state) {
  gts_group_setup(state);
  return gtstorage_set_device_backend("emulated") == GTSTORAGE_OK ? 0 : -1;
}

static gtstorage_create_options gpu_options(uint32_t ndim, const int64_t* shape, int32_t managed) {
  gtstorage_create_options o = host_options(ndim, shape);
  o.preset = "gt:gpu";
  o.device = GTSTORAGE_DEVICE_GPU;
  o.managed = managed;
  return o;
}

static void transfers(gtstorage_handle h, int64_t* h2d, int64_t* d2h) {
  gtstorage_transfer_stats t = gts_transfer_stats(h);
  *h2d = t.h2d_count;
  *d2h = t.d2h_count;
}

/* A 0-d mirror: the value survives a round trip host -> device -> host. */
static void scalar_on_device(void** state) {
  (void)state;
  const double v = 8.5;
  gtstorage_create_options o = gpu_options(0, NULL, GTSTORAGE_MANAGED_MIRROR);
  o.init = GTSTORAGE_INIT_VALUE;
  o.fill_value = &v;
  gtstorage_handle h = gts_create(&o);
  gtstorage_interface_info dev = gts_info(h, GTSTORAGE_SIDE_DEVICE);
  int64_t h2d = 0, d2h = 0;
  GTS_EQ64(dev.ndim, 0);
  assert_non_null(dev.data);
  GTS_EQ64(dev.nbytes, 8);
  GTS_EQ64(dev.device_type, GTSTORAGE_DL_EXT_DEV);
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));
  transfers(h, &h2d, &d2h);
  GTS_EQ64(h2d, 1);
  /* overwrite the host copy behind the library's back, then bring the device's value back */
  {
    gtstorage_interface_info host = gts_info(h, GTSTORAGE_SIDE_HOST);
    memcpy(host.data, &kCanary, sizeof kCanary);
  }
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, 0));
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0));
  transfers(h, &h2d, &d2h);
  GTS_EQ64(d2h, 1);
  assert_true(scalar_of(h) == 8.5);
  /* the other way: a host write reaches the device */
  GTS_OK(gtstorage_fill_double(h, -1.0));
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SYNCHRONIZE, 0));
  {
    struct DLManagedTensorVersioned* t = NULL;
    GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_DEVICE, &t));
    GTS_EQ64(t->dl_tensor.ndim, 0);
    assert_ptr_equal(t->dl_tensor.data, dev.data);
    t->deleter(t);
  }
  GTS_OK(gtstorage_release(h));

  /* device-only and unified 0-d storages: filled, copied, read back */
  {
    const int32_t kinds[2] = {GTSTORAGE_MANAGED_NONE, GTSTORAGE_MANAGED_UNIFIED};
    for (int k = 0; k < 2; ++k) {
      gtstorage_create_options d = gpu_options(0, NULL, kinds[k]);
      d.init = GTSTORAGE_INIT_ONES;
      gtstorage_handle g = gts_create(&d), g2;
      assert_true(scalar_copied(g) == 1.0);
      GTS_OK(gtstorage_fill_double(g, 6.5));
      assert_true(scalar_copied(g) == 6.5);
      d.init = GTSTORAGE_INIT_ZEROS;
      g2 = gts_create(&d);
      GTS_OK(gtstorage_copy(g2, g));
      assert_true(scalar_copied(g2) == 6.5);
      GTS_OK(gtstorage_release(g2));
      GTS_OK(gtstorage_release(g));
    }
  }
}

/* Empty device storages: every sync op succeeds and moves nothing; copies and fills too. */
static void empty_on_device(void** state) {
  (void)state;
  for (size_t i = 0; i < 3; ++i) {
    const empty_case* c = &kEmpty[i];
    const int32_t kinds[3] = {GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_MANAGED_NONE,
                              GTSTORAGE_MANAGED_UNIFIED};
    for (int k = 0; k < 3; ++k) {
      gtstorage_create_options o = gpu_options(c->ndim, c->shape, kinds[k]);
      o.init = GTSTORAGE_INIT_ONES;
      gtstorage_handle h = gts_create(&o), host;
      gtstorage_interface_info dev = gts_info(h, GTSTORAGE_SIDE_DEVICE);
      int64_t h2d = -1, d2h = -1;
      assert_non_null(dev.data);
      GTS_EQ64(dev.nbytes, 0);
      for (int32_t op = GTSTORAGE_SYNC_HOST_TO_DEVICE; op <= GTSTORAGE_SYNC_WAIT_STREAM; ++op) {
        GTS_OK(gtstorage_sync(h, op, GTSTORAGE_SYNC_FLAG_FORCE));
      }
      GTS_OK(gtstorage_sync_async(h, GTSTORAGE_SYNC_HOST_TO_DEVICE, GTSTORAGE_SYNC_FLAG_FORCE, 0));
      transfers(h, &h2d, &d2h);
      GTS_EQ64(h2d, 0);
      GTS_EQ64(d2h, 0);
      GTS_OK(gtstorage_fill_double(h, 3.0));
      {
        gtstorage_create_options ho = host_options(c->ndim, c->shape);
        host = gts_create(&ho);
      }
      GTS_OK(gtstorage_copy(h, host));
      GTS_OK(gtstorage_copy(host, h));
      {
        gtstorage_array a = gts_array(c->ndim, c->shape, NULL);
        GTS_OK(gtstorage_copy_to_array(&a, h));
        GTS_OK(gtstorage_copy_from_array(h, &a));
      }
      {
        struct DLManagedTensorVersioned* t = NULL;
        GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_DEVICE, &t));
        GTS_EQ64(t->dl_tensor.ndim, c->ndim);
        t->deleter(t);
      }
      GTS_OK(gtstorage_release(host));
      GTS_OK(gtstorage_release(h));
    }
  }
}

GTS_TEST_MAIN_HOST_DEVICE("host", "emulated device", use_emulated)
