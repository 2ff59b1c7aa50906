/*
 * gtstorage_wrap_dlpack (issue 8, point 5): a DLPack tensor of any producer is wrapped without a
 * copy; the library owns it on success and calls its deleter exactly once after the last view
 * (on whichever thread), never on a failed call; read-only tensors stay read-only; what cannot
 * be wrapped is refused with a message naming the field. Hand-made legacy and versioned
 * tensors, round trips through the library's own DLPack export, and device memory of the
 * emulated device (kDLExtDev).
 */
#include <pthread.h>

#include "dlpack/dlpack.h"
#include "support.h"

/* dlpack.h declares the versioned struct without a typedef in C. */
typedef struct DLManagedTensorVersioned DLManagedTensorVersioned;

/* ------------------------------------------------------------------------------------------ */
/* A hand-made producer: one heap block holding both DLPack structs, the shape and strides, and
 * a log of the deleter's calls. */

typedef struct deleter_log {
  int calls;
  pthread_t thread; /* thread of the last call */
} deleter_log;

typedef struct producer {
  DLManagedTensor legacy;
  DLManagedTensorVersioned versioned;
  int64_t shape[GTSTORAGE_MAX_NDIM + 1];
  int64_t strides[GTSTORAGE_MAX_NDIM + 1];
  deleter_log* log;
} producer;

static void delete_legacy(DLManagedTensor* self) {
  producer* p = (producer*)self->manager_ctx;
  p->log->calls++;
  p->log->thread = pthread_self();
  free(p);
}

static void delete_versioned(DLManagedTensorVersioned* self) {
  producer* p = (producer*)self->manager_ctx;
  p->log->calls++;
  p->log->thread = pthread_self();
  free(p);
}

/* A tensor over @p data; @p strides (elements) NULL = compact row-major. */
static producer* make_producer(deleter_log* log, void* data, int ndim, const int64_t* shape,
                               const int64_t* strides, uint8_t code, uint8_t bits) {
  producer* p = (producer*)calloc(1, sizeof *p);
  DLTensor t;
  assert_non_null(p);
  p->log = log;
  for (int d = 0; d < ndim && d <= GTSTORAGE_MAX_NDIM; ++d) {
    p->shape[d] = shape[d];
    if (strides) p->strides[d] = strides[d];
  }
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = p->shape;
  t.strides = strides ? p->strides : NULL;
  t.byte_offset = 0;
  p->legacy.dl_tensor = t;
  p->legacy.manager_ctx = p;
  p->legacy.deleter = delete_legacy;
  p->versioned.version.major = DLPACK_MAJOR_VERSION;
  p->versioned.version.minor = DLPACK_MINOR_VERSION;
  p->versioned.manager_ctx = p;
  p->versioned.deleter = delete_versioned;
  p->versioned.flags = 0;
  p->versioned.dl_tensor = t;
  return p;
}

static double read_at(gtstorage_handle h, int64_t i0, int64_t i1) {
  gtstorage_interface_info info = gts_info(h, GTSTORAGE_SIDE_HOST);
  double v = 0;
  memcpy(&v, (char*)info.data + i0 * info.strides[0] + i1 * info.strides[1], sizeof v);
  return v;
}

/* ------------------------------------------------------------------------------------------ */

/* A legacy tensor (NULL strides = row-major): same address, C strides, values both ways. */
static void legacy_host_tensor_is_wrapped_in_place(void** state) {
  double buf[3 * 4];
  const int64_t shape[2] = {3, 4};
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  gtstorage_handle h = 0;
  gtstorage_interface_info info;
  double out[12];
  (void)state;
  for (int n = 0; n < 12; ++n) buf[n] = n;
  GTS_OK(gtstorage_wrap_dlpack(&p->legacy, GTSTORAGE_DLPACK_LEGACY, NULL, &h));
  info = gts_info(h, GTSTORAGE_SIDE_HOST);
  assert_ptr_equal(info.data, buf);
  GTS_EQ64(info.ndim, 2);
  GTS_EQ_ARRAY(info.shape, 3, 4);
  GTS_EQ_ARRAY(info.strides, 32, 8);
  assert_string_equal(info.typestr, "<f8");
  assert_string_equal(info.dims[0], "I");
  assert_string_equal(info.dims[1], "J");
  GTS_EQ64(info.readonly, 0);
  GTS_EQ64(info.device_type, GTSTORAGE_DL_CPU);
  /* producer -> library */
  buf[5] = 42.0;
  gtstorage_array a = gts_array(2, shape, out);
  GTS_OK(gtstorage_copy_to_array(&a, h));
  assert_true(out[5] == 42.0 && out[11] == 11.0);
  /* library -> producer */
  GTS_OK(gtstorage_fill_double(h, 7.0));
  for (int n = 0; n < 12; ++n) assert_true(buf[n] == 7.0);
  GTS_EQ64(log.calls, 0);
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 1);
}

/* A versioned tensor with explicit (Fortran order) strides, dims labels and a halo. */
static void versioned_tensor_with_strides_dims_and_halo(void** state) {
  int32_t buf[4 * 6];
  const int64_t shape[2] = {4, 6};
  const int64_t strides[2] = {1, 4}; /* elements: column-major */
  const int64_t halo[4] = {1, 1, 2, 0};
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 2, shape, strides, kDLInt, 32);
  gtstorage_dlpack_options o = GTSTORAGE_DLPACK_OPTIONS_INIT;
  gtstorage_handle h = 0, dv = 0;
  gtstorage_interface_info info;
  (void)state;
  for (int n = 0; n < 24; ++n) buf[n] = n;
  o.dims = "KJ";
  o.halo = halo;
  GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, &o, &h));
  info = gts_info(h, GTSTORAGE_SIDE_HOST);
  assert_ptr_equal(info.data, buf);
  assert_string_equal(info.typestr, "<i4");
  GTS_EQ_ARRAY(info.strides, 4, 16);
  GTS_EQ_ARRAY(info.layout, 1, 0);
  assert_string_equal(info.dims[0], "K");
  assert_string_equal(info.dims[1], "J");
  GTS_EQ_ARRAY(info.halo[0], 1, 1);
  GTS_EQ64(info.halo[1][0], 2);
  GTS_EQ64(info.origin[1], 2);
  /* the interior through a domain view: element (1, 2) of the tensor */
  GTS_OK(gtstorage_domain_view(h, &dv));
  info = gts_info(dv, GTSTORAGE_SIDE_HOST);
  GTS_EQ_ARRAY(info.shape, 2, 4);
  assert_int_equal(*(int32_t*)info.data, buf[1 + 2 * 4]);
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(dv));
  GTS_EQ64(log.calls, 1);
}

/* The deleter waits for the last view, whichever order the handles go in. */
static void deleter_runs_once_after_the_last_view(void** state) {
  double buf[5 * 5];
  const int64_t shape[2] = {5, 5};
  const int64_t halo[4] = {1, 1, 1, 1};
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  gtstorage_dlpack_options o = GTSTORAGE_DLPACK_OPTIONS_INIT;
  gtstorage_slice_spec spec[2] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
  gtstorage_handle h = 0, dv = 0, sl = 0, other = 0;
  (void)state;
  o.halo = halo;
  GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, &o, &h));
  GTS_OK(gtstorage_domain_view(h, &dv));
  spec[0].start = 1;
  spec[0].step = 2;
  GTS_OK(gtstorage_slice(dv, spec, 2, &sl));
  GTS_OK(gtstorage_retain(h));
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(h)); /* the original handle is gone first */
  GTS_EXPECT(gtstorage_release(h), GTSTORAGE_ERROR_INVALID_HANDLE, "handle");
  GTS_EQ64(log.calls, 0);
  GTS_OK(gtstorage_release(dv));
  GTS_EQ64(log.calls, 0);
  /* a DLPack export of the wrapped storage keeps the producer's memory too */
  {
    DLManagedTensorVersioned* exported = NULL;
    GTS_OK(gtstorage_to_dlpack_versioned(sl, GTSTORAGE_SIDE_HOST, &exported));
    GTS_OK(gtstorage_release(sl));
    GTS_EQ64(log.calls, 0);
    /* ... and wrapping that export again chains the ownership */
    GTS_OK(gtstorage_wrap_dlpack(exported, GTSTORAGE_DLPACK_VERSIONED, NULL, &other));
    GTS_EQ64(log.calls, 0);
  }
  GTS_OK(gtstorage_release(other));
  GTS_EQ64(log.calls, 1);
}

/* DLPACK_FLAG_BITMASK_READ_ONLY (and options.readonly): writes fail, memory unchanged. */
static void read_only_flag_makes_a_read_only_storage(void** state) {
  double buf[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[1] = {6};
  const double src[6] = {0};
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 1, shape, NULL, kDLFloat, 64);
  producer* q = make_producer(&log, buf, 1, shape, NULL, kDLFloat, 64);
  gtstorage_dlpack_options o = GTSTORAGE_DLPACK_OPTIONS_INIT;
  gtstorage_handle h = 0, g = 0, v = 0;
  (void)state;
  p->versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  GTS_EQ64(gts_info(h, GTSTORAGE_SIDE_HOST).readonly, 1);
  GTS_EXPECT(gtstorage_fill_double(h, 9.0), GTSTORAGE_ERROR_READONLY, "read-only");
  gtstorage_array a = gts_array(1, shape, (void*)src);
  GTS_EXPECT(gtstorage_copy_from_array(h, &a), GTSTORAGE_ERROR_READONLY, "read-only");
  GTS_OK(gtstorage_domain_view(h, &v)); /* views stay read-only */
  GTS_EXPECT(gtstorage_fill_double(v, 9.0), GTSTORAGE_ERROR_READONLY, "read-only");
  for (int n = 0; n < 6; ++n) assert_true(buf[n] == n + 1);
  /* a legacy tensor has no flags: options.readonly asks for it */
  o.readonly = 1;
  GTS_OK(gtstorage_wrap_dlpack(&q->legacy, GTSTORAGE_DLPACK_LEGACY, &o, &g));
  GTS_EXPECT(gtstorage_fill_double(g, 9.0), GTSTORAGE_ERROR_READONLY, "read-only");
  GTS_RELEASE(h, v, g);
  GTS_EQ64(log.calls, 2);
}

/* data + byte_offset is element 0; negative strides (a reversed view) are fine. */
static void byte_offset_and_negative_strides(void** state) {
  double buf[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int64_t shape[2] = {2, 3};
  const int64_t strides[2] = {-4, 1}; /* rows reversed, starting at row 1 (buf[4]) */
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 2, shape, strides, kDLFloat, 64);
  gtstorage_handle h = 0;
  gtstorage_interface_info info;
  (void)state;
  p->versioned.dl_tensor.byte_offset = 4 * sizeof(double);
  GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  info = gts_info(h, GTSTORAGE_SIDE_HOST);
  assert_ptr_equal(info.data, buf + 4);
  GTS_EQ64(info.strides[0], -32);
  assert_true(read_at(h, 0, 0) == 4.0);
  assert_true(read_at(h, 1, 2) == 2.0);
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 1);
}

/* Every dtype DLPack and the library share, and the extents DLPack allows (0 included). */
static void dtypes_and_empty_tensors(void** state) {
  static const struct {
    uint8_t code, bits;
    const char* typestr;
  } cases[] = {
      {kDLInt, 8, "|i1"},        {kDLInt, 16, "<i2"},   {kDLInt, 64, "<i8"},
      {kDLUInt, 8, "|u1"},       {kDLUInt, 32, "<u4"},  {kDLUInt, 64, "<u8"},
      {kDLFloat, 16, "<f2"},     {kDLFloat, 32, "<f4"}, {kDLComplex, 64, "<c8"},
      {kDLComplex, 128, "<c16"}, {kDLBool, 8, "|b1"},
  };
  uint64_t buf[8];
  const int64_t shape[1] = {4};
  const int64_t empty[2] = {3, 0};
  deleter_log log = {0};
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    producer* p = make_producer(&log, buf, 1, shape, NULL, cases[c].code, cases[c].bits);
    gtstorage_handle h = 0;
    GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
    assert_string_equal(gts_info(h, GTSTORAGE_SIDE_HOST).typestr, cases[c].typestr);
    GTS_OK(gtstorage_release(h));
  }
  {
    /* an empty tensor may come without a data pointer */
    producer* p = make_producer(&log, NULL, 2, empty, NULL, kDLFloat, 64);
    gtstorage_handle h = 0;
    GTS_OK(gtstorage_wrap_dlpack(&p->legacy, GTSTORAGE_DLPACK_LEGACY, NULL, &h));
    GTS_EQ64(gts_info(h, GTSTORAGE_SIDE_HOST).nbytes, 0);
    GTS_OK(gtstorage_release(h));
  }
  GTS_EQ64(log.calls, (int64_t)(sizeof cases / sizeof cases[0]) + 1);
}

/* A 0-d tensor (a scalar: ndim 0, shape may be NULL) is one element. */
static void zero_dim_tensor(void** state) {
  double value = 3.0;
  deleter_log log = {0};
  producer* p = make_producer(&log, &value, 0, NULL, NULL, kDLFloat, 64);
  gtstorage_handle h = 0;
  (void)state;
  p->versioned.dl_tensor.shape = NULL;
  GTS_OK(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, NULL, &h));
  GTS_EQ64(gts_info(h, GTSTORAGE_SIDE_HOST).ndim, 0);
  assert_ptr_equal(gts_info(h, GTSTORAGE_SIDE_HOST).data, &value);
  GTS_OK(gtstorage_fill_double(h, 8.0));
  assert_true(value == 8.0);
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 1);
}

/* Every refusal: the status, a message naming the field, and the caller keeps the tensor (the
 * deleter is not called; the caller calls it once at the end). */
#define EXPECT_REFUSED(p, kind_, opts, status, words)                                             \
  do {                                                                                            \
    gtstorage_handle h_ = 0;                                                                      \
    void* t_ = (kind_) == GTSTORAGE_DLPACK_LEGACY ? (void*)&(p)->legacy : (void*)&(p)->versioned; \
    GTS_EXPECT(gtstorage_wrap_dlpack(t_, (kind_), (opts), &h_), (status), (words));               \
    GTS_EQ64(h_, 0);                                                                              \
    GTS_EQ64(log.calls, 0);                                                                       \
    if ((kind_) == GTSTORAGE_DLPACK_LEGACY)                                                       \
      (p)->legacy.deleter(&(p)->legacy);                                                          \
    else                                                                                          \
      (p)->versioned.deleter(&(p)->versioned);                                                    \
    GTS_EQ64(log.calls, 1);                                                                       \
    log.calls = 0;                                                                                \
  } while (0)

static void refused_tensors_stay_with_the_caller(void** state) {
  double buf[4 * 4];
  const int64_t shape[2] = {4, 4};
  deleter_log log = {0};
  producer* p;
  gtstorage_dlpack_options o = GTSTORAGE_DLPACK_OPTIONS_INIT;
  (void)state;

  /* dtypes */
  p = make_producer(&log, buf, 2, shape, NULL, kDLBfloat, 16);
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "dl_tensor.dtype: code 4 (kDLBfloat) bits 16 lanes 1");
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 32);
  p->legacy.dl_tensor.dtype.lanes = 4;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "dl_tensor.dtype: code 2 (kDLFloat) bits 32 lanes 4");
  p = make_producer(&log, buf, 2, shape, NULL, kDLInt, 24);
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_UNSUPPORTED, "bits 24");
  p = make_producer(&log, buf, 2, shape, NULL, kDLOpaqueHandle, 64);
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_UNSUPPORTED, "dtype");
  p = make_producer(&log, buf, 2, shape, NULL, kDLBool, 1);
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_UNSUPPORTED, "dtype");

  /* ndim */
  {
    int64_t big[GTSTORAGE_MAX_NDIM + 1];
    for (int d = 0; d <= GTSTORAGE_MAX_NDIM; ++d) big[d] = 1;
    p = make_producer(&log, buf, GTSTORAGE_MAX_NDIM + 1, big, NULL, kDLFloat, 64);
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "dl_tensor.ndim: 17");
    p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
    p->legacy.dl_tensor.ndim = -1;
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "dl_tensor.ndim");
  }
  /* shape */
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->legacy.dl_tensor.shape = NULL;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "dl_tensor.shape");
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->shape[1] = -4;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "dl_tensor.shape");

  /* strides: a broadcast (zero stride), overlapping elements, a stride that overflows */
  {
    const struct {
      int64_t strides[2];
      int status;
      const char* words;
    } cases[] = {
        {{0, 1}, GTSTORAGE_ERROR_UNSUPPORTED, "dl_tensor.strides: stride 0 of dimension 0"},
        {{2, 1}, GTSTORAGE_ERROR_INVALID_ARGUMENT, "dl_tensor.strides"},
        {{INT64_MAX / 4, 1}, GTSTORAGE_ERROR_OVERFLOW, "dl_tensor.strides"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
      p = make_producer(&log, buf, 2, shape, cases[k].strides, kDLFloat, 64);
      EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, cases[k].status, cases[k].words);
    }
  }
  /* data and byte_offset */
  p = make_producer(&log, NULL, 2, shape, NULL, kDLFloat, 64);
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_LEGACY, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "dl_tensor.data");
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.byte_offset = UINT64_MAX - 4;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "dl_tensor.byte_offset");

  /* an unknown major version: nothing but the version is read */
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.version.major = 2;
  p->versioned.dl_tensor.ndim = 1000; /* would be refused differently if it were read */
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "version.major: DLPack 2.");
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.version.major = 0;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED, "version.major");

  /* device types no backend here addresses */
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.device.device_type = kDLOpenCL;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "dl_tensor.device.device_type: 4 (kDLOpenCL)");
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.device.device_type = (DLDeviceType)99;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "device_type: 99");

  /* the options */
  {
    const int64_t bad_halo[4] = {3, 2, 0, 0};
    o.halo = bad_halo;
    p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, &o, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "options->halo");
    o.halo = NULL;
    o.dims = "IJK";
    p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, &o, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "options->dims");
    o.dims = NULL;
    o.struct_size = 8;
    p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, &o, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "options.struct_size");
  }
  /* the arguments themselves */
  p = make_producer(&log, buf, 2, shape, NULL, kDLFloat, 64);
  GTS_EXPECT(gtstorage_wrap_dlpack(&p->versioned, 2, NULL, NULL), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "kind");
  GTS_EXPECT(gtstorage_wrap_dlpack(&p->versioned, GTSTORAGE_DLPACK_VERSIONED, NULL, NULL),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "out");
  {
    gtstorage_handle h = 0;
    GTS_EXPECT(gtstorage_wrap_dlpack(NULL, GTSTORAGE_DLPACK_VERSIONED, NULL, &h),
               GTSTORAGE_ERROR_INVALID_ARGUMENT, "managed_tensor");
  }
  GTS_EQ64(log.calls, 0);
  p->versioned.deleter(&p->versioned);
  {
    gtstorage_dlpack_options z;
    memset(&z, 0xab, sizeof z);
    GTS_OK(gtstorage_dlpack_options_init(&z));
    GTS_EQ64(z.struct_size, sizeof z);
    assert_null(z.dims);
    assert_null(z.halo);
    GTS_EQ64(z.readonly, 0);
    GTS_EXPECT(gtstorage_dlpack_options_init(NULL), GTSTORAGE_ERROR_INVALID_ARGUMENT, "options");
  }
}

/* Without the emulated backend active, kDLExtDev (and kDLCUDA, kDLROCM) memory is refused. */
static void device_types_need_their_backend(void** state) {
  double buf[4];
  const int64_t shape[1] = {4};
  static const int types[] = {kDLExtDev, kDLCUDA, kDLCUDAManaged, kDLCUDAHost, kDLROCM};
  deleter_log log = {0};
  (void)state;
  GTS_OK(gtstorage_set_device_backend("none"));
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    producer* p = make_producer(&log, buf, 1, shape, NULL, kDLFloat, 64);
    p->versioned.dl_tensor.device.device_type = (DLDeviceType)types[i];
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                   "device backend 'none'");
  }
}

/* Round trips through the library's own export: same memory, values, lifetime chained. */
static void round_trip_through_the_library_export(void** state) {
  const int64_t shape[3] = {3, 4, 5};
  gtstorage_handle owner = gts_create_valued("gt:cpu_kfirst", "IJK", 3, shape, NULL);
  gtstorage_interface_info oi = gts_host_info(owner), wi;
  DLManagedTensorVersioned* tv = NULL;
  DLManagedTensor* tl = NULL;
  gtstorage_handle a = 0, b = 0;
  gtstorage_dlpack_options o = GTSTORAGE_DLPACK_OPTIONS_INIT;
  const int64_t halo[6] = {1, 1, 0, 0, 0, 0};
  gts_live base = gts_live_now();
  (void)state;
  GTS_OK(gtstorage_to_dlpack_versioned(owner, GTSTORAGE_SIDE_HOST, &tv));
  GTS_OK(gtstorage_to_dlpack(owner, GTSTORAGE_SIDE_HOST, &tl));
  o.halo = halo;
  o.dims = "IJK";
  GTS_OK(gtstorage_wrap_dlpack(tv, GTSTORAGE_DLPACK_VERSIONED, &o, &a));
  GTS_OK(gtstorage_wrap_dlpack(tl, GTSTORAGE_DLPACK_LEGACY, NULL, &b));
  GTS_OK(gtstorage_release(owner)); /* the exports keep the memory */
  for (int k = 0; k < 2; ++k) {
    wi = gts_host_info(k == 0 ? a : b);
    assert_ptr_equal(wi.data, oi.data);
    for (int d = 0; d < 3; ++d) {
      GTS_EQ64(wi.strides[d], oi.strides[d]);
      GTS_EQ64(wi.layout[d], oi.layout[d]);
    }
    gts_check_doubles(k == 0 ? a : b, gts_expect_value, NULL);
  }
  GTS_EQ64(gts_host_info(a).halo[0][0], 1);
  GTS_OK(gtstorage_fill_double(a, 3.0));
  assert_true(read_at(b, 2, 3) == 3.0);
  GTS_OK(gtstorage_release(a));
  GTS_OK(gtstorage_release(b));
  /* the owner's buffers went with the last wrap */
  {
    gts_live now = gts_live_now();
    GTS_EQ64(now.buffers, base.buffers - 1);
    GTS_EQ64(now.handles, base.handles - 1);
  }
}

/* A read-only storage exported versioned comes back read-only. */
static void round_trip_keeps_read_only(void** state) {
  double buf[6] = {0};
  const int64_t shape[1] = {6};
  gtstorage_handle h = 0, back = 0;
  DLManagedTensorVersioned* t = NULL;
  (void)state;
  gtstorage_wrap_options w = gts_wrap_options(1, shape, buf);
  w.readonly = 1;
  GTS_OK(gtstorage_wrap(&w, &h));
  GTS_OK(gtstorage_to_dlpack_versioned(h, GTSTORAGE_SIDE_HOST, &t));
  assert_true((t->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  GTS_OK(gtstorage_wrap_dlpack(t, GTSTORAGE_DLPACK_VERSIONED, NULL, &back));
  GTS_EXPECT(gtstorage_fill_double(back, 1.0), GTSTORAGE_ERROR_READONLY, "read-only");
  GTS_OK(gtstorage_release(h));
  GTS_OK(gtstorage_release(back));
}

/* The last reference dropped on another thread runs the deleter there, once. */
typedef struct release_job {
  gtstorage_handle h;
  int status;
} release_job;

static void* release_on_thread(void* arg) {
  release_job* job = (release_job*)arg;
  job->status = gtstorage_release(job->h);
  return NULL;
}

static void deleter_runs_on_the_releasing_thread(void** state) {
  double buf[16];
  const int64_t shape[1] = {16};
  deleter_log log = {0};
  producer* p = make_producer(&log, buf, 1, shape, NULL, kDLFloat, 64);
  release_job job = {0, -1};
  pthread_t thread;
  (void)state;
  GTS_OK(gtstorage_wrap_dlpack(&p->legacy, GTSTORAGE_DLPACK_LEGACY, NULL, &job.h));
  assert_int_equal(pthread_create(&thread, NULL, release_on_thread, &job), 0);
  assert_int_equal(pthread_join(thread, NULL), 0);
  GTS_EQ64(job.status, GTSTORAGE_OK);
  GTS_EQ64(log.calls, 1);
  assert_true(pthread_equal(log.thread, thread));
}

/* ------------------------------------------------------------------------------------------ */
/* Device memory of the emulated device (the simulated CUDA runtime): kDLExtDev. */

/* gts-test-group: device */
static int use_emulated(void** state) {
  (void)state;
  if (gtstorage_set_device_backend("emulated") != GTSTORAGE_OK) return -1;
  return gts_group_setup(state);
}

static void emulated_device_export_round_trip(void** state) {
  const int64_t shape[2] = {8, 6};
  gtstorage_create_options c;
  gtstorage_handle owner = 0, back = 0, host = 0;
  DLManagedTensorVersioned* t = NULL;
  gtstorage_interface_info oi, wi;
  int32_t has = -1;
  (void)state;
  c = gts_options(2, shape, "gt:gpu");
  c.init = GTSTORAGE_INIT_ONES;
  GTS_OK(gtstorage_create(&c, &owner));
  oi = gts_info(owner, GTSTORAGE_SIDE_DEVICE);
  GTS_OK(gtstorage_to_dlpack_versioned(owner, GTSTORAGE_SIDE_DEVICE, &t));
  GTS_EQ64(t->dl_tensor.device.device_type, kDLExtDev);
  GTS_OK(gtstorage_wrap_dlpack(t, GTSTORAGE_DLPACK_VERSIONED, NULL, &back));
  GTS_OK(gtstorage_release(owner));
  GTS_OK(gtstorage_has_side(back, GTSTORAGE_SIDE_HOST, &has));
  GTS_EQ64(has, 0);
  wi = gts_info(back, GTSTORAGE_SIDE_DEVICE);
  assert_ptr_equal(wi.data, oi.data);
  GTS_EQ64(wi.device_type, GTSTORAGE_DL_EXT_DEV);
  GTS_EQ64(wi.device_id, oi.device_id);
  for (int d = 0; d < 2; ++d) GTS_EQ64(wi.strides[d], oi.strides[d]);
  /* the values: a host copy of the wrapped device memory */
  {
    double out[8 * 6];
    gtstorage_create_options hc;
    gtstorage_array a = gts_array(2, shape, out);
    GTS_OK(gtstorage_copy_to_array(&a, back));
    for (int n = 0; n < 48; ++n) assert_true(out[n] == 1.0);
    hc = gts_options(2, shape, NULL);
    hc.init = GTSTORAGE_INIT_ZEROS;
    GTS_OK(gtstorage_create(&hc, &host));
    GTS_OK(gtstorage_fill_double(back, 5.0));
    GTS_OK(gtstorage_copy(host, back));
    assert_true(read_at(host, 7, 5) == 5.0);
  }
  GTS_OK(gtstorage_release(host));
  GTS_OK(gtstorage_release(back));
}

static void emulated_device_hand_made_tensor(void** state) {
  const int64_t n = 32;
  const int64_t shape[2] = {4, 8};
  gtstorage_create_options c;
  gtstorage_handle owner = 0, h = 0;
  void* dev = NULL;
  double host_buf[32];
  deleter_log log = {0};
  producer* p;
  int32_t count = 0;
  (void)state;
  c = gts_options(1, &n, "gt:gpu");
  GTS_OK(gtstorage_create(&c, &owner));
  GTS_OK(gtstorage_data(owner, GTSTORAGE_SIDE_DEVICE, &dev));

  p = make_producer(&log, dev, 2, shape, NULL, kDLFloat, 64);
  p->legacy.dl_tensor.device.device_type = kDLExtDev;
  GTS_OK(gtstorage_wrap_dlpack(&p->legacy, GTSTORAGE_DLPACK_LEGACY, NULL, &h));
  assert_ptr_equal(gts_info(h, GTSTORAGE_SIDE_DEVICE).data, dev);
  GTS_EQ64(gts_info(h, GTSTORAGE_SIDE_DEVICE).device_type, GTSTORAGE_DL_EXT_DEV);
  GTS_OK(gtstorage_release(h));
  GTS_EQ64(log.calls, 1);
  log.calls = 0;

  /* a CUDA-typed tensor is not memory of the emulated backend */
  p = make_producer(&log, dev, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.device.device_type = kDLCUDA;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_UNSUPPORTED,
                 "device_type: 2 (kDLCUDA)");
  /* host memory that claims to be device memory */
  p = make_producer(&log, host_buf, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.device.device_type = kDLExtDev;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "dl_tensor.data");
  /* a device id that disagrees with where the memory lives */
  GTS_OK(gtstorage_device_count(&count));
  if (count > 1) {
    p = make_producer(&log, dev, 2, shape, NULL, kDLFloat, 64);
    p->versioned.dl_tensor.device.device_type = kDLExtDev;
    p->versioned.dl_tensor.device.device_id = 1;
    EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                   "dl_tensor.device.device_id");
  }
  p = make_producer(&log, dev, 2, shape, NULL, kDLFloat, 64);
  p->versioned.dl_tensor.device.device_type = kDLExtDev;
  p->versioned.dl_tensor.device.device_id = 99;
  EXPECT_REFUSED(p, GTSTORAGE_DLPACK_VERSIONED, NULL, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "device_id");
  GTS_OK(gtstorage_release(owner));
}

GTS_TEST_MAIN_HOST_DEVICE("dlpack_import", "dlpack_import_emulated_device", use_emulated)
