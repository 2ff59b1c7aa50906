/*
 * The preset table of issue 2 (point 3), checked entry by entry through gtstorage_preset_find()
 * and gtstorage_preset_at(), plus run-time registration. Expected values are written out from
 * the table, not read from the library.
 */
#include "support.h"

typedef struct expected_preset {
  const char* name;
  int64_t alignment;
  int32_t unit;
  int32_t device;
  int32_t rule;
  int32_t base[3];
} expected_preset;

#define CPU GTSTORAGE_DEVICE_CPU
#define GPU GTSTORAGE_DEVICE_GPU
#define EL GTSTORAGE_ALIGN_ELEMENTS
#define BY GTSTORAGE_ALIGN_BYTES
#define DIMS GTSTORAGE_RULE_BY_DIMS

/* The table, row by row. */
static const expected_preset kTable[] = {
    {"numpy", 1, EL, CPU, DIMS, {0, 1, 2}},
    {"debug", 1, EL, CPU, DIMS, {0, 1, 2}},
    {"gt:cpu_kfirst", 1, EL, CPU, DIMS, {0, 1, 2}},
    {"dace:cpu_kfirst", 1, EL, CPU, DIMS, {0, 1, 2}},
    {"gt:cpu_ifirst", 1, EL, CPU, DIMS, {2, 1, 0}},
    {"dace:cpu_KJI", 1, EL, CPU, DIMS, {2, 1, 0}},
    {"dace:cpu", 1, EL, CPU, DIMS, {1, 2, 0}},
    {"gt:gpu", 32, EL, GPU, DIMS, {2, 1, 0}},
    {"dace:gpu", 1, EL, GPU, DIMS, {2, 1, 0}},
    {"dace:gpu_IJK", 1, EL, GPU, DIMS, {0, 1, 2}},
    {"gridtools:cpu_kfirst", 1, BY, CPU, DIMS, {0, 1, 2}},
    {"gridtools:cpu_ifirst", 64, BY, CPU, DIMS, {2, 0, 1}},
    {"gridtools:gpu", 128, BY, GPU, DIMS, {2, 1, 0}},
    {"gtx86", 1, EL, CPU, DIMS, {0, 1, 2}},
    {"gtmc", 8, EL, CPU, DIMS, {2, 0, 1}},
    {"gtcuda", 32, EL, GPU, DIMS, {2, 1, 0}},
    {"C", 1, EL, CPU, GTSTORAGE_RULE_C_ORDER, {-1, -1, -1}},
    {"F", 1, EL, CPU, GTSTORAGE_RULE_FORTRAN_ORDER, {-1, -1, -1}},
};
#define NTABLE ((int)(sizeof kTable / sizeof kTable[0]))

static gtstorage_preset_info find_preset(const char* name) {
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  memset(p.name, 'x', sizeof p.name); /* The library must overwrite (and terminate) the name. */
  GTS_OK(gtstorage_preset_find(name, &p));
  return p;
}

static void check_row(const gtstorage_preset_info* p, const expected_preset* e) {
  if (memchr(p->name, '\0', sizeof p->name) == NULL) fail_msg("%s: name not terminated", e->name);
  assert_string_equal(p->name, e->name);
  if (p->alignment != e->alignment || p->alignment_unit != e->unit || p->device != e->device ||
      p->rule != e->rule)
    fail_msg("%s: alignment %" PRId64 " unit %d device %d rule %d, expected %" PRId64
             " unit %d device %d rule %d",
             e->name, p->alignment, p->alignment_unit, p->device, p->rule, e->alignment, e->unit,
             e->device, e->rule);
  if (e->rule == DIMS && (p->base_layout[0] != e->base[0] || p->base_layout[1] != e->base[1] ||
                          p->base_layout[2] != e->base[2]))
    fail_msg("%s: base layout (%d,%d,%d), expected (%d,%d,%d)", e->name, p->base_layout[0],
             p->base_layout[1], p->base_layout[2], e->base[0], e->base[1], e->base[2]);
}

/* Every row of the table, found by name. */
static void test_table_by_find(void** state) {
  (void)state;
  for (int i = 0; i < NTABLE; ++i) {
    gtstorage_preset_info p = find_preset(kTable[i].name);
    check_row(&p, &kTable[i]);
  }
}

/* Enumeration lists exactly the built-ins, each once, and agrees with find. */
static void test_table_by_index(void** state) {
  int32_t count = -1;
  int seen[NTABLE] = {0};
  (void)state;
  GTS_OK(gtstorage_preset_count(&count));
  GTS_EQ64(count, NTABLE);
  for (int32_t i = 0; i < count; ++i) {
    gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
    int found = -1;
    GTS_OK(gtstorage_preset_at(i, &p));
    for (int j = 0; j < NTABLE; ++j)
      if (strcmp(p.name, kTable[j].name) == 0) found = j;
    if (found < 0) fail_msg("preset_at(%d) gave unexpected preset \"%s\"", i, p.name);
    if (seen[found]++) fail_msg("preset \"%s\" listed twice", p.name);
    check_row(&p, &kTable[found]);
  }
  GTS_EXPECT(gtstorage_preset_at(count, &(gtstorage_preset_info)GTSTORAGE_PRESET_INFO_INIT),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "index");
  GTS_EXPECT(gtstorage_preset_at(-1, &(gtstorage_preset_info)GTSTORAGE_PRESET_INFO_INIT),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "index");
}

static int same_settings(const gtstorage_preset_info* a, const gtstorage_preset_info* b) {
  return a->alignment == b->alignment && a->alignment_unit == b->alignment_unit &&
         a->device == b->device && a->rule == b->rule &&
         memcmp(a->base_layout, b->base_layout, sizeof a->base_layout) == 0;
}

/* GDP-3 era names equal their modern counterparts. */
static void test_aliases(void** state) {
  gtstorage_preset_info gtx86 = find_preset("gtx86"), kfirst = find_preset("gt:cpu_kfirst");
  gtstorage_preset_info gtcuda = find_preset("gtcuda"), gpu = find_preset("gt:gpu");
  gtstorage_preset_info gtmc = find_preset("gtmc");
  (void)state;
  assert_true(same_settings(&gtx86, &kfirst));
  assert_true(same_settings(&gtcuda, &gpu));
  GTS_EQ64(gtmc.alignment, 8);
  GTS_EQ64(gtmc.alignment_unit, GTSTORAGE_ALIGN_ELEMENTS);
  GTS_EQ64(gtmc.device, GTSTORAGE_DEVICE_CPU);
  GTS_EQ_ARRAY(gtmc.base_layout, 2, 0, 1);
}

/* The effective alignment in a plan: elements times itemsize, or bytes as given. */
static void test_alignment_in_plan(void** state) {
  static const char* dtypes[] = {"<f8", "<f4", "<i2", "|u1", "<c16"};
  static const int64_t itemsizes[] = {8, 4, 2, 1, 16};
  int64_t shape[3] = {3, 4, 5};
  (void)state;
  for (int i = 0; i < NTABLE; ++i) {
    for (int t = 0; t < 5; ++t) {
      gtstorage_create_options o;
      gtstorage_plan_info p;
      int64_t want =
          kTable[i].unit == EL ? kTable[i].alignment * itemsizes[t] : kTable[i].alignment;
      o = gts_options(3, shape, kTable[i].name);
      o.dtype = dtypes[t];
      p = gts_plan_of(&o);
      if (p.alignment_bytes != want)
        fail_msg("%s %s: alignment_bytes %" PRId64 ", expected %" PRId64, kTable[i].name, dtypes[t],
                 p.alignment_bytes, want);
      GTS_EQ64(p.itemsize, itemsizes[t]);
      GTS_EQ64(p.device, kTable[i].device);
      assert_string_equal(p.preset, kTable[i].name);
    }
  }
}

/* No preset named: "numpy". */
static void test_default_preset_is_numpy(void** state) {
  gtstorage_create_options o;
  int64_t shape[3] = {3, 4, 5};
  gtstorage_plan_info p;
  (void)state;
  o = gts_options(3, shape, NULL);
  p = gts_plan_of(&o);
  assert_string_equal(p.preset, "numpy");
  assert_string_equal(p.typestr, "<f8");
  GTS_EQ_ARRAY(p.strides, 160, 40, 8);
}

/* Unknown names fail with UNKNOWN_PRESET and a message listing every known name. */
static void test_unknown_preset(void** state) {
  gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_plan_info plan;
  gtstorage_handle h = 0;
  int64_t shape[3] = {3, 4, 5};
  static const char* bad[] = {"nope", "NUMPY", "gt:cpu", "", "numpy "};
  (void)state;
  for (int b = 0; b < 5; ++b) {
    int st = gtstorage_preset_find(bad[b], &p);
    const char* msg = gtstorage_last_error();
    if (st != GTSTORAGE_ERROR_UNKNOWN_PRESET)
      fail_msg("find(\"%s\") returned %s: %s", bad[b], gtstorage_status_name(st), msg);
    for (int i = 0; i < NTABLE; ++i)
      if (strstr(msg, kTable[i].name) == NULL)
        fail_msg("message \"%s\" does not list \"%s\"", msg, kTable[i].name);
  }
  o.ndim = 3;
  o.shape = shape;
  o.preset = "no:such_backend";
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  GTS_EXPECT(gtstorage_plan(&o, &plan), GTSTORAGE_ERROR_UNKNOWN_PRESET, "gt:cpu_ifirst");
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_UNKNOWN_PRESET, "gridtools:cpu_kfirst");
  assert_true(h == GTSTORAGE_NULL_HANDLE);
  /* The message names the bad name too, so the user sees what they typed. */
  assert_non_null(strstr(gtstorage_last_error(), "no:such_backend"));
}

/* Registering a new preset and creating storages with it; re-registering replaces it. */
static void test_register_and_use(void** state) {
  gtstorage_preset_info in = gts_preset("test:ifirst16", 16, GTSTORAGE_ALIGN_BYTES, 2, 1, 0), out;
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  gtstorage_interface_info info;
  gtstorage_handle h = 0;
  int64_t shape[3] = {3, 4, 5};
  int32_t before = 0, after = 0;
  (void)state;
  GTS_OK(gtstorage_preset_count(&before));
  GTS_OK(gtstorage_preset_register(&in));
  GTS_OK(gtstorage_preset_count(&after));
  GTS_EQ64(after, before + 1);
  out = find_preset("test:ifirst16");
  assert_string_equal(out.name, "test:ifirst16");
  assert_true(same_settings(&in, &out));
  /* It is enumerated too. */
  {
    int listed = 0;
    for (int32_t i = 0; i < after; ++i) {
      gtstorage_preset_info q = GTSTORAGE_PRESET_INFO_INIT;
      GTS_OK(gtstorage_preset_at(i, &q));
      listed += strcmp(q.name, "test:ifirst16") == 0;
    }
    GTS_EQ64(listed, 1);
  }

  /* 16 bytes = 2 doubles: I (contiguous) padded 3 -> 4, so strides (8, 32, 128). */
  o.ndim = 3;
  o.shape = shape;
  o.preset = "test:ifirst16";
  GTS_OK(gtstorage_create(&o, &h));
  info = gts_host_info(h);
  GTS_EQ_ARRAY(info.strides, 8, 32, 128);
  GTS_EQ_ARRAY(info.layout, 2, 1, 0);
  GTS_EQ64((uintptr_t)info.data % 16, 0);
  GTS_OK(gtstorage_release(h));

  /* Replace the user preset: K first, 4 elements. f4 -> 16 bytes: K padded 5 -> 8. */
  in.alignment = 4;
  in.alignment_unit = GTSTORAGE_ALIGN_ELEMENTS;
  in.base_layout[0] = 0;
  in.base_layout[1] = 1;
  in.base_layout[2] = 2;
  GTS_OK(gtstorage_preset_register(&in));
  GTS_OK(gtstorage_preset_count(&after));
  GTS_EQ64(after, before + 1);
  out = find_preset("test:ifirst16");
  assert_true(same_settings(&in, &out));
  o.dtype = "<f4";
  GTS_OK(gtstorage_create(&o, &h));
  info = gts_host_info(h);
  GTS_EQ64(info.strides[2], 4);
  GTS_EQ64(info.strides[1], 32);
  GTS_EQ64(info.strides[0], 128);
  GTS_EQ64((uintptr_t)info.data % 16, 0);
  GTS_OK(gtstorage_release(h));

  /* A positional preset ignores the dims names. */
  memset(in.name, 0, sizeof in.name);
  snprintf(in.name, sizeof in.name, "test:fortran");
  in.rule = GTSTORAGE_RULE_FORTRAN_ORDER;
  in.alignment = 1;
  GTS_OK(gtstorage_preset_register(&in));
  o.dims = "KJI";
  o.preset = "test:fortran";
  o.dtype = "<f8";
  {
    gtstorage_plan_info p = gts_plan_of(&o);
    GTS_EQ_ARRAY(p.layout, 2, 1, 0);
    GTS_EQ_ARRAY(p.strides, 8, 24, 96);
  }

  /* A GPU preset resolves to the GPU device in a plan (plans need no device). */
  memset(in.name, 0, sizeof in.name);
  snprintf(in.name, sizeof in.name, "test:gpu");
  in.rule = GTSTORAGE_RULE_BY_DIMS;
  in.device = GTSTORAGE_DEVICE_GPU;
  GTS_OK(gtstorage_preset_register(&in));
  o.preset = "test:gpu";
  o.dims = NULL;
  {
    gtstorage_plan_info p = gts_plan_of(&o);
    GTS_EQ64(p.device, GTSTORAGE_DEVICE_GPU);
  }
  /* The longest name that fits (31 characters) is accepted. */
  memset(in.name, 0, sizeof in.name);
  memset(in.name, 'n', GTSTORAGE_PRESET_NAME_SIZE - 1);
  in.device = GTSTORAGE_DEVICE_CPU;
  GTS_OK(gtstorage_preset_register(&in));
  out = find_preset(in.name);
  assert_string_equal(out.name, in.name);
}

/* Built-in presets cannot be replaced, and a refused attempt changes nothing. */
static void test_replace_builtin_refused(void** state) {
  (void)state;
  for (int i = 0; i < NTABLE; ++i) {
    gtstorage_preset_info in = gts_preset(kTable[i].name, 256, GTSTORAGE_ALIGN_BYTES, 1, 0, 2);
    gtstorage_preset_info after;
    int32_t n0 = 0, n1 = 0;
    GTS_OK(gtstorage_preset_count(&n0));
    GTS_EXPECT(gtstorage_preset_register(&in), GTSTORAGE_ERROR_INVALID_ARGUMENT, "built|name");
    GTS_OK(gtstorage_preset_count(&n1));
    GTS_EQ64(n1, n0);
    after = find_preset(kTable[i].name);
    check_row(&after, &kTable[i]);
  }
}

/* Every built-in preset creates a working host storage (device presets with DEVICE_CPU). */
static void test_every_preset_creates(void** state) {
  int64_t shape[3] = {3, 4, 5};
  (void)state;
  for (int i = 0; i < NTABLE; ++i) {
    gtstorage_create_options o;
    gtstorage_handle h = 0;
    gtstorage_interface_info info;
    int64_t align = kTable[i].unit == EL ? kTable[i].alignment * 8 : kTable[i].alignment;
    o = gts_options(3, shape, kTable[i].name);
    o.device = GTSTORAGE_DEVICE_CPU;
    o.init = GTSTORAGE_INIT_ZEROS;
    GTS_OK(gtstorage_create(&o, &h));
    info = gts_host_info(h);
    if ((uintptr_t)info.data % (uintptr_t)align != 0)
      fail_msg("%s: data %p not aligned to %" PRId64, kTable[i].name, info.data, align);
    GTS_EQ64(info.device_type, GTSTORAGE_DL_CPU);
    GTS_OK(gtstorage_release(h));
  }
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
