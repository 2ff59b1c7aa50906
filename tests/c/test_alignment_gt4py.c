/*
 * Issue 8: GT4Py's alignment rule (gt4py.storage.allocators, 1.2.3). An alignment is accepted
 * when gcd(alignment, itemsize) is the alignment or the item size, i.e. it is a multiple of the
 * item size (24 bytes for <f8: 3 items per aligned block) or a divisor of it (4 bytes for <f8);
 * it need not be a power of two. Then:
 *
 *   items_per_aligned_block = alignment // itemsize, or 1
 *   padded_shape[c] = ceil(shape[c] / items_per_aligned_block) * items_per_aligned_block
 *                     for the contiguous dimension c only
 *   strides          = the layout's products of the padded extents
 *   the address of the element at aligned_index is a multiple of the alignment: element 0 sits
 *   (items_per_aligned_block * ceil(ai[c] / items_per_aligned_block) - ai[c]) * itemsize bytes
 *   after an aligned address (every other stride is a multiple of the alignment)
 *
 * The expected numbers below are worked out by hand from that rule. No allocator aligns to 24
 * bytes, so the library over-allocates (alignment - 1 bytes, as GT4Py does) and places the block
 * from the address it got: the aligned element's address is checked over many live allocations,
 * on the host and on the emulated device.
 */
#include "support.h"

static const int64_t kShape[3] = {5, 4, 7}; /* I, J, K */

/* The four layouts the presets give dims IJK, and their plans for kShape. */
enum { K_FAST, I_FAST, I_FAST_K_NEXT, J_FAST };

typedef struct layout_expect {
  int32_t layout[3];
  int64_t padded[3];
  int64_t strides_f8_24[3]; /* <f8, 24 bytes: 3 items per block */
  int64_t strides_f4_12[3]; /* <f4, 12 bytes: 3 items per block */
  int contiguous;           /* the padded dimension */
} layout_expect;

static const layout_expect kLayouts[4] = {
    /* (0,1,2): K contiguous, 7 -> 9; J = 9 K, I = 4 J */
    [K_FAST] = {{0, 1, 2}, {5, 4, 9}, {288, 72, 8}, {144, 36, 4}, 2},
    /* (2,1,0): I contiguous, 5 -> 6; J = 6 I, K = 4 J */
    [I_FAST] = {{2, 1, 0}, {6, 4, 7}, {8, 48, 192}, {4, 24, 96}, 0},
    /* (2,0,1): I contiguous, 5 -> 6; K = 6 I, J = 7 K */
    [I_FAST_K_NEXT] = {{2, 0, 1}, {6, 4, 7}, {8, 336, 48}, {4, 168, 24}, 0},
    /* (1,2,0): J contiguous, 4 -> 6; I = 6 J, K = 5 I */
    [J_FAST] = {{1, 2, 0}, {5, 6, 7}, {48, 8, 240}, {24, 4, 120}, 1},
};

typedef struct preset_case {
  const char* name;
  int layout;
} preset_case;

static const preset_case kPresets[] = {
    {"numpy", K_FAST},
    {"debug", K_FAST},
    {"gt:cpu_kfirst", K_FAST},
    {"gt:cpu_ifirst", I_FAST},
    {"gt:gpu", I_FAST},
    {"dace:cpu", J_FAST},
    {"dace:cpu_kfirst", K_FAST},
    {"dace:cpu_KJI", I_FAST},
    {"dace:gpu", I_FAST},
    {"dace:gpu_IJK", K_FAST},
    {"gridtools:cpu_kfirst", K_FAST},
    {"gridtools:cpu_ifirst", I_FAST_K_NEXT},
    {"gridtools:gpu", I_FAST},
    {"gtx86", K_FAST},
    {"gtmc", I_FAST_K_NEXT},
    {"gtcuda", I_FAST},
    {"C", K_FAST},
    {"F", I_FAST},
};

/* Aligned indices and the items element 0 sits after an aligned address: for the contiguous
 * index ai[c], (3 * ceil(ai[c] / 3) - ai[c]) items, by the contiguous dimension (I, J, K). */
typedef struct aligned_case {
  int64_t index[3];
  int64_t items[3]; /* if I, J or K is the contiguous dimension */
} aligned_case;

static const aligned_case kAligned[] = {
    {{0, 0, 0}, {0, 0, 0}}, /* GT4Py's default */
    {{1, 2, 1}, {2, 1, 2}}, /* I: 3 - 1; J: 3 - 2; K: 3 - 1 */
    {{2, 1, 5}, {1, 2, 1}}, /* I: 3 - 2; J: 3 - 1; K: 6 - 5 */
    {{3, 3, 6}, {0, 0, 0}}, /* multiples of 3 */
    {{4, 0, 4}, {2, 0, 2}}, /* I: 6 - 4; J: 0; K: 6 - 4 */
};

static gtstorage_create_options options(const char* preset, const char* dtype, int64_t alignment) {
  gtstorage_create_options o = gts_options(3, kShape, preset);
  o.dims = "IJK";
  o.dtype = dtype;
  o.alignment_bytes = alignment;
  o.device = GTSTORAGE_DEVICE_CPU;
  return o;
}

static int64_t aligned_point(const gtstorage_plan_info* p) {
  int64_t off = p->byte_offset;
  for (uint32_t d = 0; d < p->ndim; ++d) off += p->aligned_index[d] * p->strides[d];
  return off;
}

static void check_plan(const char* preset, const char* dtype, int64_t alignment, int layout,
                       const int64_t* want_strides) {
  const layout_expect* e = &kLayouts[layout];
  const int64_t itemsize = strcmp(dtype, "<f8") == 0 ? 8 : 4;
  for (size_t a = 0; a < sizeof kAligned / sizeof kAligned[0]; ++a) {
    gtstorage_create_options o = options(preset, dtype, alignment);
    gtstorage_plan_info p;
    o.aligned_index = kAligned[a].index;
    p = gts_plan_of(&o);
    GTS_EQ64(p.alignment_bytes, alignment);
    GTS_EQ64(p.contiguous_dim, e->contiguous);
    for (int d = 0; d < 3; ++d) {
      if (p.layout[d] != e->layout[d] || p.padded_shape[d] != e->padded[d] ||
          p.strides[d] != want_strides[d])
        fail_msg("%s %s %" PRId64 " B, dim %d: layout %d padded %" PRId64 " stride %" PRId64
                 ", GT4Py's rule gives %d, %" PRId64 ", %" PRId64,
                 preset, dtype, alignment, d, p.layout[d], p.padded_shape[d], p.strides[d],
                 e->layout[d], e->padded[d], want_strides[d]);
    }
    GTS_EQ64(p.padded_bytes, e->padded[0] * e->padded[1] * e->padded[2] * itemsize);
    if (p.byte_offset != kAligned[a].items[e->contiguous] * itemsize)
      fail_msg("%s %s %" PRId64 " B, aligned index %zu: byte offset %" PRId64 ", expected %" PRId64,
               preset, dtype, alignment, a, p.byte_offset,
               kAligned[a].items[e->contiguous] * itemsize);
    GTS_EQ64(p.allocation_bytes, p.padded_bytes + p.byte_offset);
    GTS_EQ64(aligned_point(&p) % alignment, 0);
  }
}

static void plans_follow_gt4py_rule(void** state) {
  (void)state;
  for (size_t i = 0; i < sizeof kPresets / sizeof kPresets[0]; ++i) {
    const preset_case* c = &kPresets[i];
    check_plan(c->name, "<f8", 24, c->layout, kLayouts[c->layout].strides_f8_24);
    check_plan(c->name, "<f4", 12, c->layout, kLayouts[c->layout].strides_f4_12);
  }
}

/* Divisors of the item size are GT4Py-valid too: one item per block, no padding, and any
 * element of an 8-aligned <f8 array is 4-aligned (byte offset 0). */
static void divisor_alignment(void** state) {
  (void)state;
  gtstorage_create_options o = options("numpy", "<f8", 4);
  const int64_t ai[3] = {1, 2, 3};
  gtstorage_plan_info p;
  gtstorage_handle h;
  o.aligned_index = ai;
  p = gts_plan_of(&o);
  GTS_EQ_ARRAY(p.strides, 224, 56, 8);
  GTS_EQ64(p.padded_shape[2], 7);
  GTS_EQ64(p.byte_offset, 0);
  GTS_EQ64(p.allocation_bytes, 5 * 4 * 7 * 8);
  o.init = GTSTORAGE_INIT_ZEROS;
  GTS_OK(gtstorage_create(&o, &h));
  GTS_OK(gtstorage_release(h));
  /* 3 bytes for one-byte items: 3 items per block, the u1 K rows padded 7 -> 9 */
  o = options("numpy", "|u1", 3);
  p = gts_plan_of(&o);
  GTS_EQ64(p.padded_shape[2], 9);
  GTS_EQ64(p.strides[1], 9);
}

static void incompatible_alignments_are_refused(void** state) {
  (void)state;
  /* gcd(12, 8) = 4: neither 12 nor 8 */
  static const struct {
    const char* dtype;
    int64_t alignment;
    const char* words;
  } bad[] = {
      {"<f8", 12, "alignment"},        {"<f8", 20, "item size"},
      {"<f4", 6, "alignment"},         {"<c16", 24, "item size"},
      {"<f8", 0 - 24, "alignment"},    {"<f8", ((int64_t)1 << 30) + 8, "alignment"},
      {"<f8", INT64_MIN, "alignment"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    gtstorage_create_options o = options("numpy", bad[i].dtype, bad[i].alignment);
    gtstorage_plan_info p;
    gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, bad[i].words);
    GTS_EXPECT(gtstorage_create(&o, &h), GTSTORAGE_ERROR_INVALID_ARGUMENT, "alignment");
    assert_true(h == GTSTORAGE_NULL_HANDLE);
  }
  {
    gtstorage_create_options o = options("numpy", "<f8", 12);
    gtstorage_plan_info p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "12 bytes");
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "item size 8");
  }
}

/* Presets may carry such alignments as well, in bytes or in elements. */
/* gts-test-entry: cmocka_unit_test (registers presets: they stay) */
static void presets_with_gt4py_alignments(void** state) {
  (void)state;
  /* I contiguous */
  gtstorage_preset_info in = gts_preset("test:align24bytes", 24, GTSTORAGE_ALIGN_BYTES, 2, 1, 0);
  GTS_OK(gtstorage_preset_register(&in));
  {
    gtstorage_preset_info out = GTSTORAGE_PRESET_INFO_INIT;
    GTS_OK(gtstorage_preset_find("test:align24bytes", &out));
    GTS_EQ64(out.alignment, 24);
  }
  check_plan("test:align24bytes", "<f8", 24, I_FAST, kLayouts[I_FAST].strides_f8_24);
  {
    /* <f4: 24 bytes = 6 items per block, I 5 -> 6 as well */
    gtstorage_create_options o = options("test:align24bytes", "<f4", 0);
    gtstorage_plan_info p = gts_plan_of(&o);
    GTS_EQ64(p.alignment_bytes, 24);
    GTS_EQ64(p.padded_shape[0], 6);
    GTS_EQ64(p.strides[1], 24);
    /* <c16: gcd(24, 16) = 8 */
    o.dtype = "<c16";
    GTS_EXPECT(gtstorage_plan(&o, &p), GTSTORAGE_ERROR_INVALID_ARGUMENT, "alignment");
  }
  snprintf(in.name, sizeof in.name, "test:align3items");
  in.alignment = 3;
  in.alignment_unit = GTSTORAGE_ALIGN_ELEMENTS;
  GTS_OK(gtstorage_preset_register(&in));
  check_plan("test:align3items", "<f8", 24, I_FAST, kLayouts[I_FAST].strides_f8_24);
  check_plan("test:align3items", "<f4", 12, I_FAST, kLayouts[I_FAST].strides_f4_12);
  /* still refused: 0, negative, more than 2^30 */
  in.alignment = 0;
  GTS_EXPECT(gtstorage_preset_register(&in), GTSTORAGE_ERROR_INVALID_ARGUMENT, "alignment");
  in.alignment = -24;
  GTS_EXPECT(gtstorage_preset_register(&in), GTSTORAGE_ERROR_INVALID_ARGUMENT, "alignment");
  in.alignment = ((int64_t)1 << 30) + 3;
  GTS_EXPECT(gtstorage_preset_register(&in), GTSTORAGE_ERROR_INVALID_ARGUMENT, "alignment");
}

/* ---- addresses of real allocations ------------------------------------------------------- */

/* Address of the aligned element of side @p side of @p h. */
static uintptr_t aligned_address(gtstorage_handle h, int32_t side) {
  gtstorage_interface_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  GTS_OK(gtstorage_interface(h, side, &info));
  char* p = (char*)info.data;
  for (uint32_t d = 0; d < info.ndim; ++d) {
    assert_true(info.aligned_index[d] >= 0);
    p += info.aligned_index[d] * info.strides[d];
  }
  /* the view lies inside the allocation */
  assert_true((char*)info.data >= (char*)info.allocation);
  return (uintptr_t)p;
}

enum { LIVE = 96 };

typedef struct alloc_case {
  const char* dtype;
  int64_t alignment;
} alloc_case;

static const alloc_case kAllocs[] = {{"<f8", 24}, {"<f4", 12}, {"<f8", 40}, {"<f8", 48},
                                     {"|u1", 3},  {"<f2", 6},  {"<f8", 4}};

/* Many live storages of varied sizes, presets and aligned indices, so the allocator hands out
 * addresses of every residue modulo the alignment: the aligned element is always aligned, and
 * the data round-trips (nothing was written outside the allocation). */
static void run_allocations(const char* preset, int32_t device, int32_t managed, int32_t side,
                            int32_t host_memory) {
  gts_rng rng = {0x9E3779B97F4A7C15ULL};
  for (size_t c = 0; c < sizeof kAllocs / sizeof kAllocs[0]; ++c) {
    gtstorage_handle live[LIVE];
    for (int i = 0; i < LIVE; ++i) {
      int64_t shape[3], ai[3];
      gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
      for (int d = 0; d < 3; ++d) {
        shape[d] = gts_rand_range(&rng, 1, 9);
        ai[d] = gts_rand_range(&rng, 0, shape[d] - 1);
      }
      o.ndim = 3;
      o.shape = shape;
      o.dtype = kAllocs[c].dtype;
      o.preset = preset;
      o.alignment_bytes = kAllocs[c].alignment;
      o.aligned_index = (i % 3) ? ai : NULL;
      o.device = device;
      o.managed = managed;
      o.host_memory = host_memory;
      o.init = GTSTORAGE_INIT_ONES;
      GTS_OK(gtstorage_create(&o, &live[i]));
      {
        const uintptr_t a = aligned_address(live[i], side);
        if (a % (uintptr_t)kAllocs[c].alignment != 0)
          fail_msg("%s %s %" PRId64 " B, storage %d: aligned element at %p", preset,
                   kAllocs[c].dtype, kAllocs[c].alignment, i, (void*)a);
        if (managed == GTSTORAGE_MANAGED_MIRROR) {
          const uintptr_t h = aligned_address(live[i], GTSTORAGE_SIDE_HOST);
          GTS_EQ64(h % (uintptr_t)kAllocs[c].alignment, 0);
        }
      }
    }
    for (int i = 0; i < LIVE; ++i) {
      if (managed == GTSTORAGE_MANAGED_MIRROR) {
        GTS_OK(gtstorage_sync(live[i], GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));
        GTS_OK(gtstorage_sync(live[i], GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, 0));
        GTS_OK(gtstorage_sync(live[i], GTSTORAGE_SYNC_DEVICE_TO_HOST, 0));
      }
      GTS_OK(gtstorage_release(live[i]));
    }
  }
}

static void host_allocations_are_aligned(void** state) {
  (void)state;
  run_allocations("numpy", GTSTORAGE_DEVICE_CPU, GTSTORAGE_MANAGED_DEFAULT, GTSTORAGE_SIDE_HOST,
                  GTSTORAGE_HOST_PAGEABLE);
  run_allocations("gt:cpu_ifirst", GTSTORAGE_DEVICE_CPU, GTSTORAGE_MANAGED_DEFAULT,
                  GTSTORAGE_SIDE_HOST, GTSTORAGE_HOST_PAGEABLE);
  /* A block of 2 MiB and more is mapped (huge pages): aligned the same way, and its data round
   * trips through a copy. */
  {
    const int64_t shape[3] = {301, 299, 5};
    gtstorage_create_options o;
    gtstorage_handle a, b;
    o = gts_options(3, shape, NULL);
    o.alignment_bytes = 24;
    o.device = GTSTORAGE_DEVICE_CPU;
    o.init = GTSTORAGE_INIT_ONES;
    GTS_OK(gtstorage_create(&o, &a));
    GTS_EQ64(aligned_address(a, GTSTORAGE_SIDE_HOST) % 24, 0);
    o.preset = "F";
    o.init = GTSTORAGE_INIT_ZEROS;
    GTS_OK(gtstorage_create(&o, &b));
    GTS_EQ64(aligned_address(b, GTSTORAGE_SIDE_HOST) % 24, 0);
    GTS_OK(gtstorage_copy(b, a));
    {
      double x = 0.0;
      int64_t last[3] = {300, 298, 4};
      gtstorage_interface_info info = gts_host_info(b);
      memcpy(&x, gts_elem(info.data, info.strides, last, 3), sizeof x);
      assert_true(x == 1.0);
    }
    GTS_OK(gtstorage_release(a));
    GTS_OK(gtstorage_release(b));
  }
}

/* gts-test-group: device */
static int use_emulated(void** state) {
  gts_group_setup(state);
  return gtstorage_set_device_backend("emulated") == GTSTORAGE_OK ? 0 : -1;
}

/* cudaMalloc (and the simulated runtime) returns 256-byte aligned blocks, which no multiple of
 * 3 divides: the offset comes from the address the runtime returned. */
static void device_allocations_are_aligned(void** state) {
  (void)state;
  run_allocations("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_NONE, GTSTORAGE_SIDE_DEVICE,
                  GTSTORAGE_HOST_PAGEABLE);
  run_allocations("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_SIDE_DEVICE,
                  GTSTORAGE_HOST_PAGEABLE);
  run_allocations("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_UNIFIED, GTSTORAGE_SIDE_DEVICE,
                  GTSTORAGE_HOST_PAGEABLE);
  run_allocations("gt:gpu", GTSTORAGE_DEVICE_GPU, GTSTORAGE_MANAGED_MIRROR, GTSTORAGE_SIDE_HOST,
                  GTSTORAGE_HOST_PINNED);
}

/* A mirror with a 24-byte alignment keeps its values through a device round trip. */
static void device_round_trip(void** state) {
  (void)state;
  const int64_t shape[3] = {7, 5, 4};
  gtstorage_create_options o;
  gtstorage_handle h, src;
  o = gts_options(3, shape, "gt:gpu");
  o.alignment_bytes = 24;
  o.device = GTSTORAGE_DEVICE_GPU;
  o.managed = GTSTORAGE_MANAGED_MIRROR;
  GTS_OK(gtstorage_create(&o, &h));
  src = gts_create_valued("numpy", "IJK", 3, shape, NULL);
  GTS_OK(gtstorage_copy(h, src));
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_HOST_TO_DEVICE, 0));
  GTS_OK(gtstorage_fill_double(src, 0.0)); /* the host copy is overwritten behind our back */
  {
    gtstorage_interface_info info = gts_host_info(h);
    memset(info.allocation, 0, (size_t)info.allocation_bytes);
  }
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_SET_DEVICE_MODIFIED, 0));
  GTS_OK(gtstorage_sync(h, GTSTORAGE_SYNC_DEVICE_TO_HOST, 0));
  gts_check_doubles(h, gts_expect_value, NULL);
  GTS_OK(gtstorage_release(src));
  GTS_OK(gtstorage_release(h));
}

GTS_TEST_MAIN_HOST_DEVICE("host", "emulated device", use_emulated)
