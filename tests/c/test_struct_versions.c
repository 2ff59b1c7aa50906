/*
 * The struct-size contract across versions (issue 9, point 2): the library is called with
 * frozen copies of the 1.0 structs (their definitions copied from the 1.0 header, commit
 * 2595734, renamed v10_*), each followed by a guard region that must come back untouched:
 * nothing is written past the caller's struct_size, input structs are read only up to it, and
 * the size-less *_init functions write only the layout they were introduced with.
 */
#include "support.h"

/* ---- Frozen 1.0 definitions (gtstorage.h of version 1.0.0). Never edit these. ---- */
typedef struct v10_array {
  uint32_t struct_size;
  uint32_t ndim;
  void* data;
  const int64_t* shape;
  const int64_t* strides;
  const char* dtype;
} v10_array;

typedef struct v10_create_options {
  uint32_t struct_size;
  uint32_t ndim;
  const int64_t* shape;
  const char* dtype;
  const char* dims;
  const char* preset;
  const int32_t* layout;
  const int64_t* halo;
  const int64_t* aligned_index;
  int64_t alignment_bytes;
  int32_t init;
  int32_t device;
  int32_t device_id;
  int32_t managed;
  int32_t host_memory;
  int32_t readonly;
  const void* fill_value;
  const v10_array* source;
} v10_create_options;

typedef struct v10_wrap_options {
  uint32_t struct_size;
  uint32_t ndim;
  void* data;
  const int64_t* shape;
  const int64_t* strides;
  const char* dtype;
  const char* dims;
  const int64_t* halo;
  int32_t readonly;
  int32_t device_id;
  void (*release)(void* user_data);
  void* user_data;
  void* device_data;
  const int64_t* device_strides;
  int32_t sync_state;
  int32_t reserved;
} v10_wrap_options;

typedef struct v10_plan_info {
  uint32_t struct_size;
  uint32_t ndim;
  int64_t shape[16];
  int64_t padded_shape[16];
  int64_t strides[16];
  int32_t layout[16];
  int64_t halo[16][2];
  int64_t aligned_index[16];
  char dims[16][4];
  char typestr[8];
  char preset[32];
  int64_t itemsize;
  int64_t alignment_bytes;
  int64_t byte_offset;
  int64_t padded_bytes;
  int64_t allocation_bytes;
  int32_t contiguous_dim;
  int32_t device;
} v10_plan_info;

typedef struct v10_preset_info {
  uint32_t struct_size;
  uint32_t reserved;
  char name[32];
  int64_t alignment;
  int32_t alignment_unit;
  int32_t device;
  int32_t rule;
  int32_t base_layout[3];
} v10_preset_info;

typedef struct v10_interface_info {
  uint32_t struct_size;
  uint32_t ndim;
  void* data;
  int64_t shape[16];
  int64_t strides[16];
  int32_t layout[16];
  int64_t halo[16][2];
  int64_t origin[16];
  int64_t aligned_index[16];
  char dims[16][4];
  char typestr[8];
  int64_t itemsize;
  int64_t nbytes;
  void* allocation;
  int64_t allocation_bytes;
  int64_t byte_offset;
  int32_t readonly;
  int32_t device_type;
  int32_t device_id;
  int32_t side;
  int32_t sync_state;
  int32_t is_c_contiguous;
  uint64_t stream;
} v10_interface_info;

typedef struct v10_stats {
  uint32_t struct_size;
  uint32_t reserved;
  int64_t live_handles;
  int64_t live_buffers;
  int64_t host_bytes;
  int64_t device_bytes;
  int64_t h2d_count;
  int64_t h2d_bytes;
  int64_t d2h_count;
  int64_t d2h_bytes;
} v10_stats;

typedef struct v10_transfer_stats {
  uint32_t struct_size;
  uint32_t reserved;
  int64_t h2d_count;
  int64_t h2d_bytes;
  int64_t d2h_count;
  int64_t d2h_bytes;
} v10_transfer_stats;
/* ---- end of the frozen 1.0 definitions ---- */

#define GUARD_BYTES 256
#define GUARD 0xA5

/* A frozen struct followed by a guard region; the library sees only the struct. */
#define GUARDED(T)                    \
  struct {                            \
    T s;                              \
    unsigned char guard[GUARD_BYTES]; \
  }

static void arm(void* guard) {
  memset(guard, GUARD, GUARD_BYTES);
}

static void check_guard(const unsigned char* guard, const char* what) {
  for (int i = 0; i < GUARD_BYTES; ++i) {
    if (guard[i] != GUARD) fail_msg("%s: byte %d past the struct was written", what, i);
  }
}

static const int64_t shape3[3] = {5, 4, 3};

/* The 1.0 sizes of the ABI baseline (tests/abi/gtstorage.abi), on LP64. */
static void frozen_sizes_are_the_baseline(void** state) {
  (void)state;
  if (sizeof(void*) != 8) skip();
  GTS_EQ64(sizeof(v10_array), 40);
  GTS_EQ64(sizeof(v10_create_options), 112);
  GTS_EQ64(sizeof(v10_wrap_options), 104);
  GTS_EQ64(sizeof(v10_plan_info), 992);
  GTS_EQ64(sizeof(v10_preset_info), 72);
  GTS_EQ64(sizeof(v10_interface_info), 992);
  GTS_EQ64(sizeof(v10_stats), 72);
  GTS_EQ64(sizeof(v10_transfer_stats), 40);
  /* 1.1: only gtstorage_stats grew; two structs are new. */
  GTS_EQ64(sizeof(gtstorage_stats), 104);
  GTS_EQ64(sizeof(gtstorage_pool_stats), 72);
  GTS_EQ64(sizeof(gtstorage_dlpack_options), 24);
}

/* The size-less init functions write the layout they were introduced with, never more. */
static void sizeless_init_writes_only_its_version(void** state) {
  (void)state;
  GUARDED(v10_create_options) c;
  memset(&c, 0x5A, sizeof c.s);
  arm(c.guard);
  GTS_OK(gtstorage_create_options_init((gtstorage_create_options*)&c.s));
  check_guard(c.guard, "create_options_init");
  GTS_EQ64(c.s.struct_size, sizeof(v10_create_options));
  GTS_EQ64(c.s.device_id, -1);
  GTS_EQ64(c.s.ndim, 0);
  assert_null(c.s.shape);
  assert_null(c.s.source);

  GUARDED(v10_wrap_options) w;
  memset(&w, 0x5A, sizeof w.s);
  arm(w.guard);
  GTS_OK(gtstorage_wrap_options_init((gtstorage_wrap_options*)&w.s));
  check_guard(w.guard, "wrap_options_init");
  GTS_EQ64(w.s.struct_size, sizeof(v10_wrap_options));
  GTS_EQ64(w.s.device_id, -1);
  assert_null(w.s.data);

  /* The DLPack options came in 1.1: their size-less init writes the 1.1 layout. */
  GUARDED(gtstorage_dlpack_options) d;
  memset(&d, 0x5A, sizeof d.s);
  arm(d.guard);
  GTS_OK(gtstorage_dlpack_options_init(&d.s));
  check_guard(d.guard, "dlpack_options_init");
  GTS_EQ64(d.s.struct_size, sizeof(gtstorage_dlpack_options));
  assert_null(d.s.dims);
}

/* _init_sized writes exactly struct_size bytes; a size no version had writes nothing. */
static void sized_init(void** state) {
  (void)state;
  GUARDED(v10_create_options) c;
  memset(&c.s, 0x5A, sizeof c.s);
  arm(c.guard);
  GTS_OK(gtstorage_create_options_init_sized((gtstorage_create_options*)&c.s, sizeof c.s));
  check_guard(c.guard, "create_options_init_sized");
  GTS_EQ64(c.s.struct_size, sizeof c.s);
  GTS_EQ64(c.s.device_id, -1);

  gtstorage_create_options full;
  GTS_OK(gtstorage_create_options_init_sized(&full, sizeof full));
  const gtstorage_create_options init = GTSTORAGE_CREATE_OPTIONS_INIT;
  assert_memory_equal(&full, &init, sizeof full);

  gtstorage_wrap_options wrap;
  GTS_OK(gtstorage_wrap_options_init_sized(&wrap, sizeof wrap));
  const gtstorage_wrap_options wrap_init = GTSTORAGE_WRAP_OPTIONS_INIT;
  assert_memory_equal(&wrap, &wrap_init, sizeof wrap);
  gtstorage_dlpack_options dl;
  GTS_OK(gtstorage_dlpack_options_init_sized(&dl, sizeof dl));
  GTS_EQ64(dl.struct_size, sizeof dl);

  /* Sizes no version had (a newer header's, garbage): rejected, nothing written. */
  const size_t bad[] = {0, 4, sizeof full - 4, sizeof full + 8, 4096, (size_t)UINT32_MAX + 1};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    unsigned char raw[8192];
    memset(raw, GUARD, sizeof raw);
    GTS_EXPECT(gtstorage_create_options_init_sized((gtstorage_create_options*)raw, bad[i]),
               GTSTORAGE_ERROR_INVALID_ARGUMENT, "struct_size");
    for (size_t k = 0; k < sizeof raw; ++k) {
      if (raw[k] != GUARD) fail_msg("init_sized(%zu) wrote byte %zu", bad[i], k);
    }
  }
  GTS_EXPECT(gtstorage_wrap_options_init_sized(NULL, sizeof wrap), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "options");
  GTS_EXPECT(gtstorage_create_options_init(NULL), GTSTORAGE_ERROR_INVALID_ARGUMENT, "options");
}

/* A 1.0 caller creates, plans, describes, copies and queries with its own structs. */
static void v10_caller_round_trip(void** state) {
  (void)state;
  v10_create_options o;
  GTS_OK(gtstorage_create_options_init((gtstorage_create_options*)&o));
  o.ndim = 3;
  o.shape = shape3;
  o.preset = "gt:cpu_kfirst";
  o.init = GTSTORAGE_INIT_ZEROS;

  GUARDED(v10_plan_info) plan;
  memset(&plan.s, 0, sizeof plan.s);
  plan.s.struct_size = sizeof plan.s;
  arm(plan.guard);
  GTS_OK(gtstorage_plan((const gtstorage_create_options*)&o, (gtstorage_plan_info*)&plan.s));
  check_guard(plan.guard, "plan");
  GTS_EQ64(plan.s.ndim, 3);
  GTS_EQ64(plan.s.itemsize, 8);
  assert_string_equal(plan.s.preset, "gt:cpu_kfirst");

  gtstorage_handle h = 0;
  GTS_OK(gtstorage_create((const gtstorage_create_options*)&o, &h));

  GUARDED(v10_interface_info) info;
  memset(&info.s, 0, sizeof info.s);
  info.s.struct_size = sizeof info.s;
  arm(info.guard);
  GTS_OK(gtstorage_interface(h, GTSTORAGE_SIDE_HOST, (gtstorage_interface_info*)&info.s));
  check_guard(info.guard, "interface");
  GTS_EQ64(info.s.struct_size, sizeof info.s);
  GTS_EQ64(info.s.ndim, 3);
  GTS_EQ64(info.s.shape[0], 5);
  assert_string_equal(info.s.typestr, "<f8");
  GTS_EQ64(info.s.nbytes, 5 * 4 * 3 * 8);

  /* Caller arrays of the 1.0 layout, both directions. */
  double src[60], dst[60];
  for (int i = 0; i < 60; ++i) src[i] = i + 0.5;
  GUARDED(v10_array) a;
  memset(&a.s, 0, sizeof a.s);
  a.s.struct_size = sizeof a.s;
  a.s.ndim = 3;
  a.s.data = src;
  a.s.shape = shape3;
  arm(a.guard);
  GTS_OK(gtstorage_copy_from_array(h, (const gtstorage_array*)&a.s));
  a.s.data = dst;
  GTS_OK(gtstorage_copy_to_array((const gtstorage_array*)&a.s, h));
  check_guard(a.guard, "array");
  assert_memory_equal(src, dst, sizeof src);

  GUARDED(v10_transfer_stats) t;
  memset(&t.s, 0, sizeof t.s);
  t.s.struct_size = sizeof t.s;
  arm(t.guard);
  GTS_OK(gtstorage_get_transfer_stats(h, (gtstorage_transfer_stats*)&t.s));
  check_guard(t.guard, "transfer_stats");
  GTS_EQ64(t.s.h2d_count, 0);

  GUARDED(v10_preset_info) p;
  memset(&p.s, 0, sizeof p.s);
  p.s.struct_size = sizeof p.s;
  arm(p.guard);
  GTS_OK(gtstorage_preset_find("gt:cpu_kfirst", (gtstorage_preset_info*)&p.s));
  check_guard(p.guard, "preset_find");
  GTS_OK(gtstorage_preset_at(0, (gtstorage_preset_info*)&p.s));
  check_guard(p.guard, "preset_at");
  /* A 1.0 caller registers a preset with its own struct (an input). */
  strcpy(p.s.name, "test:v10_struct");
  GTS_OK(gtstorage_preset_register((const gtstorage_preset_info*)&p.s));
  check_guard(p.guard, "preset_register");

  GUARDED(v10_stats) st;
  memset(&st.s, 0, sizeof st.s);
  st.s.struct_size = sizeof st.s;
  arm(st.guard);
  GTS_OK(gtstorage_get_stats((gtstorage_stats*)&st.s));
  check_guard(st.guard, "stats");
  GTS_EQ64(st.s.struct_size, 72);
  assert_true(st.s.live_handles >= 1);
  assert_true(st.s.host_bytes >= 5 * 4 * 3 * 8);

  GTS_OK(gtstorage_release(h));
}

/* A 1.0 caller wraps its memory with the 1.0 wrap options. */
static void v10_wrap(void** state) {
  (void)state;
  double mem[60];
  for (int i = 0; i < 60; ++i) mem[i] = i;
  GUARDED(v10_wrap_options) w;
  GTS_OK(gtstorage_wrap_options_init((gtstorage_wrap_options*)&w.s));
  arm(w.guard);
  w.s.ndim = 3;
  w.s.shape = shape3;
  w.s.data = mem;
  gtstorage_handle h = 0;
  GTS_OK(gtstorage_wrap((const gtstorage_wrap_options*)&w.s, &h));
  check_guard(w.guard, "wrap");
  GTS_OK(gtstorage_fill_double(h, 2.0));
  assert_true(mem[59] == 2.0);
  GTS_OK(gtstorage_release(h));
}

/* An output struct with a smaller accepted size is written up to it and not one byte more:
 * a 1.1 gtstorage_stats passed with the 1.0 struct_size keeps its 1.1 tail untouched. */
static void output_written_only_up_to_struct_size(void** state) {
  (void)state;
  gtstorage_stats s;
  memset(&s, GUARD, sizeof s);
  s.struct_size = 72;
  GTS_OK(gtstorage_get_stats(&s));
  GTS_EQ64(s.struct_size, 72);
  const unsigned char* tail = (const unsigned char*)&s + 72;
  for (size_t i = 0; i < sizeof s - 72; ++i) {
    if (tail[i] != GUARD) fail_msg("byte %zu of the 1.1 tail was written", 72 + i);
  }
  const gtstorage_stats full = gts_stats();
  GTS_EQ64(full.struct_size, sizeof full);
  GTS_EQ64(s.live_handles, full.live_handles);
}

/* Sizes no version had are rejected with a message that lists the sizes and names the macro. */
static void unknown_sizes_rejected(void** state) {
  (void)state;
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  s.struct_size = 80;
  GTS_EXPECT(gtstorage_get_stats(&s), GTSTORAGE_ERROR_INVALID_ARGUMENT, "out.struct_size");
  const char* msg = gtstorage_last_error();
  assert_non_null(strstr(msg, "80"));
  assert_non_null(strstr(msg, "72 in 1.0"));
  assert_non_null(strstr(msg, "_INIT macro"));

  gtstorage_interface_info info = GTSTORAGE_INTERFACE_INFO_INIT;
  gtstorage_plan_info plan = GTSTORAGE_PLAN_INFO_INIT;
  gtstorage_create_options o = gts_options(3, shape3, NULL);
  GTS_EQ64(info.struct_size, sizeof info);
  GTS_EQ64(plan.struct_size, sizeof plan);
  GTS_OK(gtstorage_plan(&o, &plan));
  plan.struct_size = sizeof plan + 8; /* a newer header's, larger struct */
  GTS_EXPECT(gtstorage_plan(&o, &plan), GTSTORAGE_ERROR_INVALID_ARGUMENT, "out.struct_size");
  o.struct_size = 0; /* an uninitialized struct */
  gtstorage_handle h = 0;
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "options.struct_size");
  gtstorage_dlpack_options d = GTSTORAGE_DLPACK_OPTIONS_INIT;
  d.struct_size = 16;
  double x = 0;
  GTS_EXPECT(gtstorage_wrap_dlpack(&x, GTSTORAGE_DLPACK_LEGACY, &d, &h),
             GTSTORAGE_ERROR_INVALID_ARGUMENT, "options.struct_size");
}

/* ---- The header's size table (gtstorage.h, "struct (x86-64 / LP64 sizes in bytes)") ---- */

typedef struct size_row {
  const char* name;
  size_t v10; /* sizeof the frozen 1.0 struct; 0: new in 1.1 */
  size_t v11; /* sizeof this header's struct */
} size_row;

static const size_row size_rows[] = {
    {"gtstorage_array", sizeof(v10_array), sizeof(gtstorage_array)},
    {"gtstorage_create_options", sizeof(v10_create_options), sizeof(gtstorage_create_options)},
    {"gtstorage_wrap_options", sizeof(v10_wrap_options), sizeof(gtstorage_wrap_options)},
    {"gtstorage_plan_info", sizeof(v10_plan_info), sizeof(gtstorage_plan_info)},
    {"gtstorage_preset_info", sizeof(v10_preset_info), sizeof(gtstorage_preset_info)},
    {"gtstorage_interface_info", sizeof(v10_interface_info), sizeof(gtstorage_interface_info)},
    {"gtstorage_stats", sizeof(v10_stats), sizeof(gtstorage_stats)},
    {"gtstorage_transfer_stats", sizeof(v10_transfer_stats), sizeof(gtstorage_transfer_stats)},
    {"gtstorage_pool_stats", 0, sizeof(gtstorage_pool_stats)},
    {"gtstorage_dlpack_options", 0, sizeof(gtstorage_dlpack_options)},
};
#define N_SIZE_ROWS (sizeof size_rows / sizeof size_rows[0])

/* One size cell of the table: a number, or "—" (the struct did not exist): 0. */
static size_t size_cell(const char* text) {
  while (*text == ' ') ++text;
  return (*text >= '0' && *text <= '9') ? (size_t)strtoul(text, NULL, 10) : 0;
}

/* Every row of the header's table is sizeof of its struct in that version (the 1.0 column the
 * frozen 1.0 definitions, the 1.1 column this header's), and every public struct with a
 * struct_size has a row. The table once said 112 for gtstorage_create_options in 1.1, which
 * grew to 120 (pool, pitch_padding). */
static void header_size_table_is_sizeof(void** state) {
  (void)state;
  if (sizeof(void*) != 8) skip(); /* the table gives LP64 sizes */
  FILE* f = fopen(GTS_PUBLIC_HEADER, "r");
  if (f == NULL) fail_msg("cannot open %s", GTS_PUBLIC_HEADER);
  char line[512];
  int seen[N_SIZE_ROWS] = {0};
  while (fgets(line, sizeof line, f) != NULL) {
    const char* cell = strstr(line, "| ::gtstorage_");
    if (cell == NULL) continue;
    cell += strlen("| ::");
    size_t n = strcspn(cell, " |");
    const char* bar1 = strchr(cell, '|');
    const char* bar2 = bar1 != NULL ? strchr(bar1 + 1, '|') : NULL;
    if (bar2 == NULL) fail_msg("a size table row without two size cells: %s", line);
    size_t i = 0;
    while (i < N_SIZE_ROWS &&
           !(strlen(size_rows[i].name) == n && strncmp(size_rows[i].name, cell, n) == 0)) {
      ++i;
    }
    if (i == N_SIZE_ROWS) fail_msg("the size table names an unknown struct: %s", line);
    const size_t v10 = size_cell(bar1 + 1), v11 = size_cell(bar2 + 1);
    if (v10 != size_rows[i].v10 || v11 != size_rows[i].v11) {
      fail_msg("%s: the header's table says %zu (1.0) and %zu (1.1), sizeof is %zu and %zu",
               size_rows[i].name, v10, v11, size_rows[i].v10, size_rows[i].v11);
    }
    seen[i] = 1;
  }
  fclose(f);
  for (size_t i = 0; i < N_SIZE_ROWS; ++i) {
    if (!seen[i]) fail_msg("%s has no row in the header's size table", size_rows[i].name);
  }
}

/* The sizes the library's last message lists for a refused struct_size are @p want. */
static void message_lists(const char* what, const char* want) {
  if (strstr(gtstorage_last_error(), want) == NULL) {
    fail_msg("%s: \"%s\" does not list %s", what, gtstorage_last_error(), want);
  }
}

/* The library's own history (what it accepts, as its message lists it) is the same table. */
static void library_history_is_the_table(void** state) {
  (void)state;
  char want[128];
  gtstorage_handle h = 0;
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.struct_size = 1;
  GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "options.struct_size");
  snprintf(want, sizeof want, "(%zu in 1.0, %zu in 1.1,", sizeof(v10_create_options),
           sizeof(gtstorage_create_options));
  message_lists("create_options", want);
  gtstorage_stats s = GTSTORAGE_STATS_INIT;
  s.struct_size = 1;
  GTS_EXPECT(gtstorage_get_stats(&s), GTSTORAGE_ERROR_INVALID_ARGUMENT, "out.struct_size");
  snprintf(want, sizeof want, "(%zu in 1.0, %zu in 1.1,", sizeof(v10_stats),
           sizeof(gtstorage_stats));
  message_lists("stats", want);
  gtstorage_pool_stats p = GTSTORAGE_POOL_STATS_INIT;
  p.struct_size = 1;
  GTS_EXPECT(gtstorage_pool_get_stats(GTSTORAGE_MEMORY_HOST, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT,
             "struct_size");
  snprintf(want, sizeof want, "(%zu in 1.1,", sizeof(gtstorage_pool_stats));
  message_lists("pool_stats", want);
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
