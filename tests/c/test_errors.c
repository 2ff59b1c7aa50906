/*
 * Catalogue of bad inputs. Each case asserts the exact status, that gtstorage_last_error()
 * names the offending parameter (or the problem), that the live statistics did not change
 * (nothing leaked, nothing half-created) and that a storage created before is still intact.
 */
#include "support.h"

static gtstorage_handle witness; /* created in the group setup, checked after every failure */
static const int64_t kShape[3] = {4, 5, 6};

static void check_witness(void) {
  gts_check_doubles(witness, gts_expect_value, NULL);
}

/* One bad call: status + message + nothing changed. */
#define BAD(call, status, words)                  \
  do {                                            \
    gts_live bad_before_ = gts_live_now();        \
    GTS_EXPECT(call, status, words);              \
    GTS_ASSERT_LIVE(gts_live_now(), bad_before_); \
    check_witness();                              \
  } while (0)

/* Like BAD for calls that create a handle in @p out: if the library wrongly succeeds, the
 * handle is released first so the failure is reported alone, not followed by a leak report. */
#define BADH(call, out, status, words)                                                            \
  do {                                                                                            \
    gts_live bad_before_ = gts_live_now();                                                        \
    int bad_st_ = (call);                                                                         \
    char bad_msg_[512];                                                                           \
    snprintf(bad_msg_, sizeof bad_msg_, "%s", gtstorage_last_error());                            \
    if (bad_st_ == GTSTORAGE_OK && (out) != GTSTORAGE_NULL_HANDLE) {                              \
      (void)gtstorage_release(out);                                                               \
      (out) = GTSTORAGE_NULL_HANDLE;                                                              \
    }                                                                                             \
    if (bad_st_ != (status))                                                                      \
      fail_msg("%s returned %s (%d), expected %s; message \"%s\"", #call,                         \
               gtstorage_status_name(bad_st_), bad_st_, gtstorage_status_name(status), bad_msg_); \
    if (!gts_contains_any(bad_msg_, (words)))                                                     \
      fail_msg("%s: message \"%s\" does not name any of \"%s\"", #call, bad_msg_, (words));       \
    assert_true((out) == GTSTORAGE_NULL_HANDLE);                                                  \
    GTS_ASSERT_LIVE(gts_live_now(), bad_before_);                                                 \
    check_witness();                                                                              \
  } while (0)

#define INVALID GTSTORAGE_ERROR_INVALID_ARGUMENT
#define BADHANDLE GTSTORAGE_ERROR_INVALID_HANDLE
#define CASE(name) static void name(void** state)

static gtstorage_create_options opts(void) {
  return gts_options(3, kShape, NULL);
}

static gtstorage_handle make(void) {
  gtstorage_create_options o = opts();
  o.init = GTSTORAGE_INIT_ZEROS;
  return gts_create(&o);
}

/* Create with @p o must fail with @p status naming @p words. */
static void bad_create_only(const gtstorage_create_options* o, int status, const char* words) {
  gtstorage_handle h = 0;
  BADH(gtstorage_create(o, &h), h, status, words);
  assert_true(h == GTSTORAGE_NULL_HANDLE);
}

/* As bad_create_only, and the plan (which sees the same geometry) must fail the same way. */
static void bad_create(const gtstorage_create_options* o, int status, const char* words) {
  gtstorage_plan_info p;
  bad_create_only(o, status, words);
  if (status != GTSTORAGE_ERROR_OUT_OF_MEMORY && status != GTSTORAGE_ERROR_NO_DEVICE) {
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    BAD(gtstorage_plan(o, &p), status, words);
  }
}

static int setup_group(void** state) {
  gts_group_setup(state);
  witness = gts_create_valued("gt:gpu", "IJK", 3, kShape, NULL);
  return 0;
}
static int teardown_group(void** state) {
  if (gtstorage_release(witness) != GTSTORAGE_OK) return -1;
  return gts_group_teardown(state);
}

/* ---- create / plan arguments ------------------------------------------------------------ */

CASE(null_options) {
  gtstorage_handle h = 0;
  gtstorage_plan_info p;
  (void)state;
  BADH(gtstorage_create(NULL, &h), h, INVALID, "options");
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  BAD(gtstorage_plan(NULL, &p), INVALID, "options");
  BAD(gtstorage_create_options_init(NULL), INVALID, "options");
}
CASE(null_out) {
  gtstorage_create_options o = opts();
  (void)state;
  BAD(gtstorage_create(&o, NULL), INVALID, "out");
  BAD(gtstorage_plan(&o, NULL), INVALID, "out");
}
CASE(plan_out_struct_size) {
  gtstorage_create_options o = opts();
  gtstorage_plan_info p;
  (void)state;
  memset(&p, 0, sizeof p);
  BAD(gtstorage_plan(&o, &p), INVALID, "struct_size");
}
/* ndim 0 is a scalar (NumPy's shape (), issue 8), not an error; what is invalid about it is
 * anything per dimension that it does not have. */
CASE(ndim_zero) {
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  o.ndim = 0;
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_release(h));
  o.dims = "I";
  bad_create(&o, INVALID, "dims");
}
CASE(shape_null) {
  gtstorage_create_options o = opts();
  (void)state;
  o.shape = NULL;
  bad_create(&o, INVALID, "shape");
}
/* An extent 0 is an empty storage (NumPy and DLPack allow it, issue 8), not an error; its only
 * aligned index is 0. */
CASE(shape_zero) {
  int64_t shape[3] = {4, 0, 6}, aligned[3] = {0, 1, 0};
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  o.shape = shape;
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_release(h));
  o.aligned_index = aligned;
  bad_create(&o, INVALID, "aligned_index");
}
/* GT4Py's rule (issue 8): any alignment that is a multiple or a divisor of the item size, a
 * power of two or not. 96 bytes for <f8 (12 items) is fine; 3 bytes for <f8 is neither. */
CASE(alignment_not_power_of_two) {
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  o.alignment_bytes = 3;
  bad_create(&o, INVALID, "alignment");
  o.alignment_bytes = 96;
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_release(h));
}
CASE(init_copy_shape_mismatch) {
  double buf[4 * 5 * 7];
  int64_t shape[3] = {4, 5, 7};
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  gtstorage_array src = gts_array(3, shape, buf);
  o.init = GTSTORAGE_INIT_COPY;
  o.source = &src;
  BADH(gtstorage_create(&o, &h), h, GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
}
CASE(options_struct_size) {
  gtstorage_create_options o = opts();
  (void)state;
  o.struct_size = 0;
  bad_create(&o, INVALID, "struct_size");
  /* Older than the first version (1.0 ends where pool begins): not a valid caller. */
  o.struct_size = (uint32_t)offsetof(gtstorage_create_options, pool) - 8;
  bad_create(&o, INVALID, "struct_size");
  o.struct_size = (uint32_t)offsetof(gtstorage_create_options, pool) + 1; /* between versions */
  bad_create(&o, INVALID, "struct_size");
}
CASE(unknown_preset) {
  gtstorage_create_options o = opts();
  (void)state;
  o.preset = "gt:tpu";
  bad_create(&o, GTSTORAGE_ERROR_UNKNOWN_PRESET, "numpy");
  bad_create(&o, GTSTORAGE_ERROR_UNKNOWN_PRESET, "gt:cpu_kfirst");
  bad_create(&o, GTSTORAGE_ERROR_UNKNOWN_PRESET, "gt:tpu");
}
CASE(device_without_device) {
  int32_t n = -1;
  gtstorage_create_options o = opts();
  (void)state;
  GTS_OK(gtstorage_device_count(&n));
  if (n > 0) {
    print_message("a device is available (%d): NO_DEVICE case not applicable\n", n);
    skip();
  }
  o.preset = "gt:gpu"; /* GPU by the preset */
  bad_create(&o, GTSTORAGE_ERROR_NO_DEVICE, "device");
  o = opts();
  o.device = GTSTORAGE_DEVICE_GPU; /* GPU asked explicitly */
  bad_create(&o, GTSTORAGE_ERROR_NO_DEVICE, "device");
}
CASE(huge_allocation) {
  int64_t shape[2] = {(int64_t)1 << 25, (int64_t)1 << 22}; /* 2^50 bytes of f8 */
  gtstorage_create_options o = opts();
  (void)state;
  o.ndim = 2;
  o.shape = shape;
  bad_create(&o, GTSTORAGE_ERROR_OUT_OF_MEMORY, "memory|alloc|bytes");
  o.init = GTSTORAGE_INIT_ZEROS;
  bad_create(&o, GTSTORAGE_ERROR_OUT_OF_MEMORY, "memory|alloc|bytes");
}

/* ---- one option wrong: a table ------------------------------------------------------------ */

/* Arrays the rows point at. */
static const int64_t kOnes17[17] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int64_t kNegativeShape[3] = {4, -5, 6};
static const int64_t kElementsOverflow[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
static const int64_t kBytesOverflow[1] = {(int64_t)1 << 61}; /* fits as a count, 2^64 bytes as f8 */
static const int64_t kPaddingOverflow[1] = {INT64_MAX};      /* padding to 64 elements overflows */
static const int32_t kLayoutRepeats[3] = {0, 0, 1};
static const int32_t kLayoutTooBig[3] = {0, 1, 3};
static const int32_t kLayoutNegative[3] = {-1, 0, 1};
static const int64_t kHaloTooWide[6] = {3, 2, 0, 0, 0, 0}; /* 5 > 4 */
static const int64_t kHaloNegative[6] = {0, 0, -1, 0, 0, 0};
static const int64_t kAlignedTooBig[3] = {4, 0, 0};
static const int64_t kAlignedNegative[3] = {0, -1, 0};

/* A create with opts() and the fields of @c wrong that are set (not 0 or NULL) must fail with
 * @c status naming @c words; so must the plan (which sees the same geometry), unless
 * @c create_only (the plan does not read the field). */
typedef struct bad_option {
  const char* name; /* the cmocka test's name */
  gtstorage_create_options wrong;
  int status;
  const char* words;
  int create_only;
} bad_option;

#define PLAN_TOO 0
#define CREATE_ONLY 1
/* clang-format off */
static const bad_option bad_options[] = {
    {"ndim_too_large", {.ndim = 17, .shape = kOnes17}, INVALID, "ndim", PLAN_TOO},
    {"shape_negative", {.shape = kNegativeShape}, INVALID, "shape", PLAN_TOO},
    {"overflow_elements", {.ndim = 2, .shape = kElementsOverflow}, GTSTORAGE_ERROR_OVERFLOW,
     "shape", PLAN_TOO},
    {"overflow_bytes", {.ndim = 1, .shape = kBytesOverflow}, GTSTORAGE_ERROR_OVERFLOW,
     "shape|bytes|size", PLAN_TOO},
    {"overflow_padding", {.ndim = 1, .shape = kPaddingOverflow, .dtype = "|u1",
                          .alignment_bytes = 64}, GTSTORAGE_ERROR_OVERFLOW,
     "shape|bytes|size|pad", PLAN_TOO},
    {"dtype_bad_size <f3", {.dtype = "<f3"}, INVALID, "dtype", PLAN_TOO},
    {"dtype_bad_size <i3", {.dtype = "<i3"}, INVALID, "dtype", PLAN_TOO},
    {"dtype_garbage xyz", {.dtype = "xyz"}, INVALID, "dtype", PLAN_TOO},
    {"dtype_garbage <U8", {.dtype = "<U8"}, INVALID, "dtype", PLAN_TOO},
    {"dtype_garbage '<f8 '", {.dtype = "<f8 "}, INVALID, "dtype", PLAN_TOO},
    {"dtype_empty", {.dtype = ""}, INVALID, "dtype", PLAN_TOO},
    {"dtype_big_endian", {.dtype = ">f8"}, INVALID, "dtype", PLAN_TOO},
    {"dims_unknown IJX", {.dims = "IJX"}, INVALID, "dims", PLAN_TOO},
    {"dims_unknown I,J,L", {.dims = "I,J,L"}, INVALID, "dims", PLAN_TOO},
    {"dims_duplicate IIK", {.dims = "IIK"}, INVALID, "dims", PLAN_TOO},
    {"dims_duplicate I,0,0", {.dims = "I,0,0"}, INVALID, "dims", PLAN_TOO},
    {"dims_count_mismatch IJ", {.dims = "IJ"}, INVALID, "dims", PLAN_TOO},
    {"dims_count_mismatch IJK0", {.dims = "IJK0"}, INVALID, "dims", PLAN_TOO},
    {"dims_count_mismatch I,,K", {.dims = "I,,K"}, INVALID, "dims", PLAN_TOO},
    {"layout_not_permutation", {.layout = kLayoutRepeats}, INVALID, "layout", PLAN_TOO},
    {"layout_out_of_range 3", {.layout = kLayoutTooBig}, INVALID, "layout", PLAN_TOO},
    {"layout_out_of_range -1", {.layout = kLayoutNegative}, INVALID, "layout", PLAN_TOO},
    {"alignment_negative", {.alignment_bytes = -64}, INVALID, "alignment", PLAN_TOO},
    /* gcd(6, 4) = 2: neither the alignment nor the item size */
    {"alignment_incompatible_with_itemsize", {.dtype = "<f4", .alignment_bytes = 6}, INVALID,
     "alignment", PLAN_TOO},
    {"halo_wider_than_shape", {.halo = kHaloTooWide}, INVALID, "halo", PLAN_TOO},
    {"halo_negative", {.halo = kHaloNegative}, INVALID, "halo", PLAN_TOO},
    {"aligned_index_out_of_range 4", {.aligned_index = kAlignedTooBig}, INVALID,
     "aligned_index", PLAN_TOO},
    {"aligned_index_out_of_range -1", {.aligned_index = kAlignedNegative}, INVALID,
     "aligned_index", PLAN_TOO},
    {"init_invalid", {.init = 9}, INVALID, "init", CREATE_ONLY},
    {"init_value_without_value", {.init = GTSTORAGE_INIT_VALUE}, INVALID, "fill_value",
     CREATE_ONLY},
    {"init_copy_without_source", {.init = GTSTORAGE_INIT_COPY}, INVALID, "source", CREATE_ONLY},
    {"enum_fields_invalid device", {.device = 7}, INVALID, "device", PLAN_TOO},
    {"enum_fields_invalid managed", {.managed = 9}, INVALID, "managed", CREATE_ONLY},
    {"enum_fields_invalid host_memory", {.host_memory = 5}, INVALID, "host_memory", CREATE_ONLY},
};
/* clang-format on */

/* opts() with the fields of @p wrong that are set. */
static gtstorage_create_options with_wrong(const gtstorage_create_options* wrong) {
  gtstorage_create_options o = opts();
  if (wrong->ndim != 0) o.ndim = wrong->ndim;
  if (wrong->shape != NULL) o.shape = wrong->shape;
  if (wrong->dtype != NULL) o.dtype = wrong->dtype;
  if (wrong->dims != NULL) o.dims = wrong->dims;
  if (wrong->layout != NULL) o.layout = wrong->layout;
  if (wrong->halo != NULL) o.halo = wrong->halo;
  if (wrong->aligned_index != NULL) o.aligned_index = wrong->aligned_index;
  if (wrong->alignment_bytes != 0) o.alignment_bytes = wrong->alignment_bytes;
  if (wrong->init != 0) o.init = wrong->init;
  if (wrong->device != 0) o.device = wrong->device;
  if (wrong->managed != 0) o.managed = wrong->managed;
  if (wrong->host_memory != 0) o.host_memory = wrong->host_memory;
  return o;
}

/* One row of bad_options (cmocka's initial state). */
static void one_bad_option(void** state) {
  const bad_option* row = (const bad_option*)*state;
  const gtstorage_create_options o = with_wrong(&row->wrong);
  if (row->create_only)
    bad_create_only(&o, row->status, row->words);
  else
    bad_create(&o, row->status, row->words);
}

/* ---- handles ----------------------------------------------------------------------------- */

CASE(stale_handle) {
  gtstorage_handle h = make();
  gtstorage_interface_info info;
  void* p = NULL;
  int64_t rc = 0;
  (void)state;
  GTS_OK(gtstorage_release(h));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  BAD(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info), BADHANDLE, "handle");
  BAD(gtstorage_data(h, GTSTORAGE_SIDE_HOST, &p), BADHANDLE, "handle");
  BAD(gtstorage_refcount(h, &rc), BADHANDLE, "handle");
  BAD(gtstorage_fill_double(h, 1.0), BADHANDLE, "handle");
  BAD(gtstorage_sync(h, GTSTORAGE_SYNC_SYNCHRONIZE, 0), BADHANDLE, "handle");
}
CASE(double_release) {
  gtstorage_handle h = make();
  (void)state;
  GTS_OK(gtstorage_release(h));
  BAD(gtstorage_release(h), BADHANDLE, "handle");
  BAD(gtstorage_retain(h), BADHANDLE, "handle");
}
CASE(stale_after_slot_reuse) {
  gtstorage_handle a = make(), b;
  gtstorage_interface_info info;
  (void)state;
  GTS_OK(gtstorage_release(a));
  b = make(); /* likely reuses a's slot: the generation must tell them apart */
  assert_true(a != b);
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  BAD(gtstorage_interface(a, GTSTORAGE_SIDE_HOST, &info), BADHANDLE, "handle");
  BAD(gtstorage_release(a), BADHANDLE, "handle");
  (void)gts_host_info(b);
  GTS_OK(gtstorage_release(b));
}
CASE(null_handle) {
  gtstorage_interface_info info;
  (void)state;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  BAD(gtstorage_release(GTSTORAGE_NULL_HANDLE), BADHANDLE, "handle");
  BAD(gtstorage_retain(GTSTORAGE_NULL_HANDLE), BADHANDLE, "handle");
  BAD(gtstorage_interface(GTSTORAGE_NULL_HANDLE, GTSTORAGE_SIDE_HOST, &info), BADHANDLE, "handle");
}
CASE(foreign_handles) {
  const gtstorage_handle foreign[] = {1,
                                      0xDEADBEEFull,
                                      UINT64_MAX,
                                      witness + 1,
                                      witness ^ ((uint64_t)1 << 40),
                                      witness ^ ((uint64_t)1 << 63),
                                      0x0123456789ABCDEFull,
                                      (gtstorage_handle)(uintptr_t)&witness};
  (void)state;
  for (size_t i = 0; i < sizeof foreign / sizeof foreign[0]; ++i) {
    int64_t rc = 0;
    BAD(gtstorage_refcount(foreign[i], &rc), BADHANDLE, "handle");
    BAD(gtstorage_release(foreign[i]), BADHANDLE, "handle");
  }
}
CASE(refcount_null_out) {
  (void)state;
  BAD(gtstorage_refcount(witness, NULL), INVALID, "out");
}

/* ---- descriptors ------------------------------------------------------------------------- */

CASE(interface_null_out) {
  (void)state;
  BAD(gtstorage_interface(witness, GTSTORAGE_SIDE_HOST, NULL), INVALID, "out");
  BAD(gtstorage_data(witness, GTSTORAGE_SIDE_HOST, NULL), INVALID, "out");
  BAD(gtstorage_has_side(witness, GTSTORAGE_SIDE_HOST, NULL), INVALID, "out");
}
CASE(interface_struct_size) {
  gtstorage_interface_info info;
  (void)state;
  memset(&info, 0, sizeof info);
  BAD(gtstorage_interface(witness, GTSTORAGE_SIDE_HOST, &info), INVALID, "struct_size");
}
CASE(bad_side) {
  gtstorage_interface_info info;
  void* p = NULL;
  int32_t has = 0;
  (void)state;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  BAD(gtstorage_interface(witness, 2, &info), INVALID, "side");
  BAD(gtstorage_data(witness, -1, &p), INVALID, "side");
  BAD(gtstorage_has_side(witness, 5, &has), INVALID, "side");
  BAD(gtstorage_acquire(witness, 3), INVALID, "side");
  BAD(gtstorage_touch(witness, -2), INVALID, "side");
}
CASE(missing_side) {
  gtstorage_interface_info info;
  (void)state;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  BAD(gtstorage_interface(witness, GTSTORAGE_SIDE_DEVICE, &info), GTSTORAGE_ERROR_NO_SUCH_BUFFER,
      "device|side");
}

/* ---- sync --------------------------------------------------------------------------------- */

CASE(bad_sync_op) {
  (void)state;
  BAD(gtstorage_sync(witness, 0, 0), INVALID, "op");
  BAD(gtstorage_sync(witness, 12, 0), INVALID, "op");
  BAD(gtstorage_sync(witness, -3, 0), INVALID, "op");
  BAD(gtstorage_sync_async(witness, 42, 0, 0), INVALID, "op");
}
CASE(bad_sync_flags) {
  (void)state;
  BAD(gtstorage_sync(witness, GTSTORAGE_SYNC_SYNCHRONIZE, 0x80), INVALID, "flags");
}
CASE(sync_state_null_out) {
  (void)state;
  BAD(gtstorage_get_sync_state(witness, NULL), INVALID, "out");
}

/* ---- copy / fill ------------------------------------------------------------------------- */

CASE(copy_shape_mismatch) {
  int64_t other[3] = {4, 5, 7};
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  o.shape = other;
  GTS_OK(gtstorage_create(&o, &h));
  BAD(gtstorage_copy(h, witness), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
  BAD(gtstorage_copy(witness, h), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
  GTS_OK(gtstorage_release(h));
}
CASE(copy_ndim_mismatch) {
  int64_t other[2] = {4, 5};
  gtstorage_create_options o = opts();
  gtstorage_handle h = 0;
  (void)state;
  o.ndim = 2;
  o.shape = other;
  GTS_OK(gtstorage_create(&o, &h));
  BAD(gtstorage_copy(h, witness), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape|ndim");
  GTS_OK(gtstorage_release(h));
}
CASE(copy_stale_handles) {
  gtstorage_handle h = make();
  (void)state;
  GTS_OK(gtstorage_release(h));
  BAD(gtstorage_copy(witness, h), BADHANDLE, "handle|src");
  BAD(gtstorage_copy(h, witness), BADHANDLE, "handle|dst");
}
CASE(copy_array_null) {
  double buf[4];
  (void)state;
  BAD(gtstorage_copy_from_array(witness, NULL), INVALID, "src");
  BAD(gtstorage_copy_to_array(NULL, witness), INVALID, "dst");
  gtstorage_array a = gts_array(3, NULL, buf);
  BAD(gtstorage_copy_to_array(&a, witness), INVALID, "shape");
}
CASE(copy_array_shape_mismatch) {
  double buf[4 * 5 * 7];
  int64_t shape[3] = {4, 5, 7};
  (void)state;
  gtstorage_array a = gts_array(3, shape, buf);
  BAD(gtstorage_copy_from_array(witness, &a), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
  BAD(gtstorage_copy_to_array(&a, witness), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape");
  a.ndim = 2;
  BAD(gtstorage_copy_from_array(witness, &a), GTSTORAGE_ERROR_SHAPE_MISMATCH, "shape|ndim");
}
CASE(copy_array_null_data) {
  (void)state;
  gtstorage_array a = gts_array(3, kShape, NULL);
  BAD(gtstorage_copy_from_array(witness, &a), INVALID, "data");
}
CASE(copy_array_bad_dtype) {
  double buf[4 * 5 * 6];
  (void)state;
  gtstorage_array a = gts_array(3, kShape, buf);
  a.dtype = "<q8";
  BAD(gtstorage_copy_to_array(&a, witness), INVALID, "dtype");
}
CASE(copy_array_struct_size) {
  double buf[4 * 5 * 6];
  (void)state;
  gtstorage_array a = gts_array(3, kShape, buf);
  a.struct_size = 0;
  BAD(gtstorage_copy_from_array(witness, &a), INVALID, "struct_size");
}
CASE(fill_null_value) {
  (void)state;
  BAD(gtstorage_fill(witness, NULL), INVALID, "value");
}
CASE(readonly_writes) {
  gtstorage_create_options o = opts();
  gtstorage_handle ro = 0;
  double v = 1.0;
  double buf[4 * 5 * 6] = {0};
  (void)state;
  o.readonly = 1;
  o.init = GTSTORAGE_INIT_ZEROS;
  GTS_OK(gtstorage_create(&o, &ro));
  BAD(gtstorage_fill(ro, &v), GTSTORAGE_ERROR_READONLY, "read");
  BAD(gtstorage_fill_double(ro, 1.0), GTSTORAGE_ERROR_READONLY, "read");
  BAD(gtstorage_copy(ro, witness), GTSTORAGE_ERROR_READONLY, "read");
  gtstorage_array a = gts_array(3, kShape, buf);
  BAD(gtstorage_copy_from_array(ro, &a), GTSTORAGE_ERROR_READONLY, "read");
  GTS_OK(gtstorage_release(ro));
}

/* ---- views -------------------------------------------------------------------------------- */

static gtstorage_slice_spec all(void) {
  gtstorage_slice_spec s = GTSTORAGE_SLICE_ALL;
  return s;
}

/* Slicing the witness with @p nspec entries of @p spec must fail naming @p words. */
static void bad_slice(const gtstorage_slice_spec* spec, uint32_t nspec, const char* words) {
  gtstorage_handle v = 0;
  BADH(gtstorage_slice(witness, spec, nspec, &v), v, INVALID, words);
}

CASE(slice_nspec_mismatch) {
  gtstorage_slice_spec s[3] = {all(), all(), all()};
  (void)state;
  bad_slice(s, 2, "nspec");
  bad_slice(s, 0, "nspec");
}
CASE(slice_step_zero) {
  gtstorage_slice_spec s[3] = {all(), all(), all()};
  (void)state;
  s[1].step = 0;
  bad_slice(s, 3, "step");
}
CASE(slice_index_out_of_range) {
  gtstorage_slice_spec s[3] = {all(), all(), all()};
  (void)state;
  s[0].kind = GTSTORAGE_SLICE_INDEX;
  s[0].start = 4;
  bad_slice(s, 3, "index|start|spec");
  s[0].start = -5;
  bad_slice(s, 3, "index|start|spec");
  s[0].start = GTSTORAGE_SLICE_NONE;
  bad_slice(s, 3, "index|start|spec");
}
CASE(slice_bad_kind_reserved) {
  gtstorage_slice_spec s[3] = {all(), all(), all()};
  (void)state;
  s[2].kind = 5;
  bad_slice(s, 3, "kind");
  s[2] = all();
  s[2].reserved = 1;
  bad_slice(s, 3, "reserved");
}
CASE(slice_null_args) {
  gtstorage_slice_spec s[3] = {all(), all(), all()};
  gtstorage_handle v = 0;
  (void)state;
  BADH(gtstorage_slice(witness, NULL, 3, &v), v, INVALID, "spec");
  BAD(gtstorage_slice(witness, s, 3, NULL), INVALID, "out");
}
CASE(transpose_bad_perm) {
  int32_t dup[3] = {0, 0, 1}, big[3] = {0, 1, 3};
  gtstorage_handle v = 0;
  (void)state;
  BADH(gtstorage_transpose(witness, dup, 3, &v), v, INVALID, "perm");
  BADH(gtstorage_transpose(witness, big, 3, &v), v, INVALID, "perm");
  BADH(gtstorage_transpose(witness, NULL, 3, &v), v, INVALID, "perm");
  BADH(gtstorage_transpose(witness, dup, 2, &v), v, INVALID, "nperm|perm");
  BAD(gtstorage_domain_view(witness, NULL), INVALID, "out");
}

/* ---- wrap --------------------------------------------------------------------------------- */

CASE(wrap_bad_arguments) {
  double buf[12];
  int64_t shape[2] = {3, 4}, overlap[2] = {8, 8}, odd[2] = {32, 12};
  gtstorage_handle h = 0;
  (void)state;
  BADH(gtstorage_wrap(NULL, &h), h, INVALID, "options");
  gtstorage_wrap_options w = gts_wrap_options(2, shape, buf);
  BAD(gtstorage_wrap(&w, NULL), INVALID, "out");
  w.strides = overlap;
  BADH(gtstorage_wrap(&w, &h), h, INVALID, "strides");
  w.strides = odd;
  BADH(gtstorage_wrap(&w, &h), h, INVALID, "strides");
  w.strides = NULL;
  w.reserved = 1;
  BADH(gtstorage_wrap(&w, &h), h, INVALID, "reserved");
  w.reserved = 0;
  w.data = NULL;
  BADH(gtstorage_wrap(&w, &h), h, INVALID, "data");
  w.data = buf;
  w.struct_size = 0;
  BADH(gtstorage_wrap(&w, &h), h, INVALID, "struct_size");
  BAD(gtstorage_wrap_options_init(NULL), INVALID, "options");
}

/* ---- presets ----------------------------------------------------------------------------- */

CASE(preset_lookup_null) {
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  int32_t n = 0;
  (void)state;
  BAD(gtstorage_preset_find(NULL, &p), INVALID, "name");
  BAD(gtstorage_preset_find("numpy", NULL), INVALID, "out");
  BAD(gtstorage_preset_count(NULL), INVALID, "out");
  GTS_OK(gtstorage_preset_count(&n));
  BAD(gtstorage_preset_at(n, &p), INVALID, "index");
}

static gtstorage_preset_info good_preset(void) {
  return gts_preset("test:errors", 16, GTSTORAGE_ALIGN_BYTES, 0, 1, 2);
}

/* One field of good_preset() set to a bad value, and what the refusal must name. */
typedef struct preset_flaw {
  size_t offset;
  size_t size; /* 4 or 8 bytes */
  int64_t value;
  const char* words;
} preset_flaw;

#define PRESET_FIELD(m) offsetof(gtstorage_preset_info, m), sizeof(((gtstorage_preset_info*)0)->m)

static const preset_flaw preset_flaws[] = {
    {PRESET_FIELD(alignment), 0, "alignment"},
    /* 3 alone is fine (issue 8): checked per dtype */
    {PRESET_FIELD(alignment), ((int64_t)1 << 30) + 3, "alignment"},
    {PRESET_FIELD(alignment), -8, "alignment"},
    {PRESET_FIELD(rule), 7, "rule"},
    {PRESET_FIELD(device), 5, "device"},
    {PRESET_FIELD(alignment_unit), 4, "unit"},
    {PRESET_FIELD(struct_size), 0, "struct_size"},
    {PRESET_FIELD(reserved), 1, "reserved"}};

static gtstorage_preset_info flawed_preset(const preset_flaw* f) {
  gtstorage_preset_info p = good_preset();
  char* field = (char*)&p + f->offset;
  if (f->size == sizeof(int64_t)) {
    const int64_t v = f->value;
    memcpy(field, &v, sizeof v);
  } else {
    const int32_t v = (int32_t)f->value;
    memcpy(field, &v, sizeof v);
  }
  return p;
}

CASE(preset_register_bad) {
  gtstorage_preset_info p;
  int32_t before = 0, after = 0;
  (void)state;
  GTS_OK(gtstorage_preset_count(&before));
  BAD(gtstorage_preset_register(NULL), INVALID, "info");
  p = good_preset();
  p.name[0] = '\0';
  BAD(gtstorage_preset_register(&p), INVALID, "name");
  memset(p.name, 'a', sizeof p.name); /* no terminating NUL */
  BAD(gtstorage_preset_register(&p), INVALID, "name");
  snprintf(p.name, sizeof p.name, "gt:cpu_ifirst");
  BAD(gtstorage_preset_register(&p), INVALID, "built|name");
  p = good_preset();
  p.base_layout[0] = 0;
  p.base_layout[1] = 0;
  p.base_layout[2] = 1;
  BAD(gtstorage_preset_register(&p), INVALID, "layout");
  for (size_t k = 0; k < sizeof preset_flaws / sizeof preset_flaws[0]; ++k) {
    p = flawed_preset(&preset_flaws[k]);
    BAD(gtstorage_preset_register(&p), INVALID, preset_flaws[k].words);
  }
  GTS_OK(gtstorage_preset_count(&after));
  GTS_EQ64(after, before); /* nothing registered by the failures */
}

/* ---- library-wide queries ------------------------------------------------------------------ */

CASE(stats_bad_out) {
  gtstorage_stats s;
  gtstorage_transfer_stats t;
  (void)state;
  BAD(gtstorage_get_stats(NULL), INVALID, "out");
  memset(&s, 0, sizeof s);
  BAD(gtstorage_get_stats(&s), INVALID, "struct_size");
  memset(&t, 0, sizeof t);
  BAD(gtstorage_get_transfer_stats(witness, &t), INVALID, "struct_size");
}
CASE(device_backend_buffer) {
  char small[2];
  int32_t n = 0;
  (void)state;
  BAD(gtstorage_get_device_backend(small, sizeof small), GTSTORAGE_ERROR_BUFFER_TOO_SMALL,
      "size|buf");
  BAD(gtstorage_get_device_backend(NULL, 16), INVALID, "buf");
  BAD(gtstorage_device_count(NULL), INVALID, "out");
  GTS_OK(gtstorage_device_count(&n));
  assert_true(n >= 0);
}

/* Messages are cleared by a successful call and status names are never NULL. */
CASE(message_lifecycle) {
  gtstorage_handle h = 0;
  gtstorage_create_options o = opts();
  (void)state;
  o.dtype = "<f3";
  assert_int_not_equal(gtstorage_create(&o, &h), GTSTORAGE_OK);
  assert_true(strlen(gtstorage_last_error()) > 0);
  GTS_OK(gtstorage_retain(witness));
  assert_string_equal(gtstorage_last_error(), "");
  GTS_OK(gtstorage_release(witness));
  assert_string_equal(gtstorage_status_name(GTSTORAGE_ERROR_INVALID_HANDLE),
                      "GTSTORAGE_ERROR_INVALID_HANDLE");
  assert_string_equal(gtstorage_status_name(GTSTORAGE_OK), "GTSTORAGE_OK");
  assert_non_null(gtstorage_status_name(12345));
  assert_non_null(gtstorage_status_name(-12345));
}

int main(void) {
  /* Every test the file defines, one_bad_option once per row of bad_options. */
  const struct CMUnitTest defined[] = {GTS_TESTS(GTS_TEST)};
  enum {
    NDEFINED = sizeof defined / sizeof defined[0],
    NROWS = sizeof bad_options / sizeof bad_options[0]
  };
  struct CMUnitTest tests[NDEFINED - 1 + NROWS];
  size_t n = 0;
  for (size_t i = 0; i < NDEFINED; ++i) {
    if (defined[i].test_func != one_bad_option) {
      tests[n++] = defined[i];
      continue;
    }
    for (size_t r = 0; r < NROWS; ++r) {
      const struct CMUnitTest row = {bad_options[r].name, one_bad_option, gts_test_setup,
                                     gts_test_teardown, (void*)&bad_options[r]};
      tests[n++] = row;
    }
  }
  return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
