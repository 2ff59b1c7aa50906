/*
 * GT4Py layout vectors and strides. Main cases are literal tables worked out by hand from the
 * rule in issue 2 (data dims outermost, "0" slowest; I/J/K take the base ranks in that order,
 * missing axes dropped, re-ranked densely; applied by dim name). The exhaustive sweep compares
 * against a small independent re-implementation of that rule.
 */
#include "support.h"

static gtstorage_plan_info plan_for(const char* preset, const char* dims, int ndim,
                                    const int64_t* shape, const char* dtype) {
  gtstorage_create_options o;
  gtstorage_plan_info p;
  int64_t fallback[GTSTORAGE_MAX_NDIM];
  for (int d = 0; d < GTSTORAGE_MAX_NDIM; ++d) fallback[d] = 4;
  o = gts_options((uint32_t)ndim, shape ? shape : fallback, preset);
  o.dims = dims;
  o.dtype = dtype;
  memset(&p, 0, sizeof p);
  p.struct_size = sizeof p;
  {
    int st = gtstorage_plan(&o, &p);
    if (st != GTSTORAGE_OK)
      fail_msg("plan(%s, dims=%s, ndim=%d) failed: %s \"%s\"", preset, dims ? dims : "NULL", ndim,
               gtstorage_status_name(st), gtstorage_last_error());
  }
  return p;
}

typedef struct layout_case {
  const char* preset;
  const char* dims;
  int ndim;
  int32_t layout[6];
} layout_case;

/* Hand-computed vectors. Base (0,1,2) = numpy; (2,0,1) = gridtools:cpu_ifirst and gtmc;
 * (2,1,0) = gt:cpu_ifirst; (1,2,0) = dace:cpu. */
static const layout_case kCases[] = {
    /* base (0,1,2) */
    {"numpy", "IJK", 3, {0, 1, 2}},
    {"numpy", "IJ", 2, {0, 1}},
    {"numpy", "IK", 2, {0, 1}},
    {"numpy", "JK", 2, {0, 1}},
    {"numpy", "I", 1, {0}},
    {"numpy", "J", 1, {0}},
    {"numpy", "K", 1, {0}},
    {"numpy", "IJK0", 4, {1, 2, 3, 0}},
    {"numpy", "IJK01", 5, {2, 3, 4, 0, 1}},
    {"numpy", "IJ0", 3, {1, 2, 0}},
    {"numpy", "IK0", 3, {1, 2, 0}},
    {"numpy", "K0", 2, {1, 0}},
    {"numpy", "0", 1, {0}},
    {"numpy", "01", 2, {0, 1}},
    {"numpy", "KJI", 3, {2, 1, 0}},
    {"numpy", "0IJK", 4, {0, 1, 2, 3}},
    {"numpy", "JKI0", 4, {2, 3, 1, 0}},
    {"gt:cpu_kfirst", "IJK", 3, {0, 1, 2}},
    {"dace:gpu_IJK", "IJK0", 4, {1, 2, 3, 0}},
    /* base (2,0,1) */
    {"gridtools:cpu_ifirst", "IJK", 3, {2, 0, 1}},
    {"gridtools:cpu_ifirst", "IJ", 2, {1, 0}},
    {"gridtools:cpu_ifirst", "IK", 2, {1, 0}},
    {"gridtools:cpu_ifirst", "JK", 2, {0, 1}},
    {"gridtools:cpu_ifirst", "I", 1, {0}},
    {"gridtools:cpu_ifirst", "J", 1, {0}},
    {"gridtools:cpu_ifirst", "K", 1, {0}},
    {"gridtools:cpu_ifirst", "IJK0", 4, {3, 1, 2, 0}},
    {"gridtools:cpu_ifirst", "IJK01", 5, {4, 2, 3, 0, 1}},
    {"gridtools:cpu_ifirst", "IJ0", 3, {2, 1, 0}},
    {"gridtools:cpu_ifirst", "JK0", 3, {1, 2, 0}},
    {"gridtools:cpu_ifirst", "K0", 2, {1, 0}},
    {"gridtools:cpu_ifirst", "KJI", 3, {1, 0, 2}},
    {"gtmc", "IJK", 3, {2, 0, 1}},
    {"gtmc", "IJK0", 4, {3, 1, 2, 0}},
    /* base (2,1,0) */
    {"gt:cpu_ifirst", "IJK", 3, {2, 1, 0}},
    {"gt:cpu_ifirst", "IJ", 2, {1, 0}},
    {"gt:cpu_ifirst", "IK", 2, {1, 0}},
    {"gt:cpu_ifirst", "JK", 2, {1, 0}},
    {"gt:cpu_ifirst", "I", 1, {0}},
    {"gt:cpu_ifirst", "IJK0", 4, {3, 2, 1, 0}},
    {"gt:cpu_ifirst", "IJK01", 5, {4, 3, 2, 0, 1}},
    {"gt:cpu_ifirst", "IJ0", 3, {2, 1, 0}},
    {"gt:cpu_ifirst", "K0", 2, {1, 0}},
    {"gt:cpu_ifirst", "KJI", 3, {0, 1, 2}},
    {"gt:gpu", "IJK", 3, {2, 1, 0}},
    {"gt:gpu", "IJK0", 4, {3, 2, 1, 0}},
    {"dace:gpu", "IJ0", 3, {2, 1, 0}},
    {"gridtools:gpu", "IJK01", 5, {4, 3, 2, 0, 1}},
    {"dace:cpu_KJI", "JK", 2, {1, 0}},
    /* base (1,2,0): J fastest, then I, then K */
    {"dace:cpu", "IJK", 3, {1, 2, 0}},
    {"dace:cpu", "IJ", 2, {0, 1}},
    {"dace:cpu", "IK", 2, {1, 0}},
    {"dace:cpu", "JK", 2, {1, 0}},
    {"dace:cpu", "IJK0", 4, {2, 3, 1, 0}},
    {"dace:cpu", "KJI", 3, {0, 2, 1}},
    /* GDP-3's table: F and C are positional, gtx86/gtcuda go by name. */
    {"F", "IJK", 3, {2, 1, 0}},
    {"F", "KJI", 3, {2, 1, 0}},
    {"C", "IJK", 3, {0, 1, 2}},
    {"C", "KJI", 3, {0, 1, 2}},
    {"gtx86", "IJK", 3, {0, 1, 2}},
    {"gtx86", "KJI", 3, {2, 1, 0}},
    {"gtcuda", "IJK", 3, {2, 1, 0}},
    {"gtcuda", "KJI", 3, {0, 1, 2}},
    {"C", "IJK0", 4, {0, 1, 2, 3}},
    {"F", "IJK0", 4, {3, 2, 1, 0}},
    {"F", "0", 1, {0}},
    {"C", "K0", 2, {0, 1}},
    {"F", "IJK01", 5, {4, 3, 2, 1, 0}},
};

static void test_literal_layouts(void** state) {
  (void)state;
  for (size_t c = 0; c < sizeof kCases / sizeof kCases[0]; ++c) {
    const layout_case* k = &kCases[c];
    gtstorage_plan_info p = plan_for(k->preset, k->dims, k->ndim, NULL, NULL);
    GTS_EQ64(p.ndim, k->ndim);
    for (int d = 0; d < k->ndim; ++d)
      if (p.layout[d] != k->layout[d]) {
        char got[64] = "", want[64] = "";
        for (int e = 0; e < k->ndim; ++e) {
          snprintf(got + strlen(got), sizeof got - strlen(got), "%d ", p.layout[e]);
          snprintf(want + strlen(want), sizeof want - strlen(want), "%d ", k->layout[e]);
        }
        fail_msg("%s dims %s: layout (%s), expected (%s)", k->preset, k->dims, got, want);
      }
  }
}

/* Comma separated labels, multi-digit data dims: "10" is the slowest-but-two data dim. */
static void test_comma_dims(void** state) {
  int64_t shape[6] = {2, 3, 4, 2, 2, 2};
  gtstorage_plan_info p = plan_for("numpy", "I,J,K,0,1,10", 6, shape, NULL);
  static const int32_t want[6] = {3, 4, 5, 0, 1, 2};
  (void)state;
  for (int d = 0; d < 6; ++d) GTS_EQ64(p.layout[d], want[d]);
  assert_string_equal(p.dims[0], "I");
  assert_string_equal(p.dims[3], "0");
  assert_string_equal(p.dims[5], "10");
  p = plan_for("gt:cpu_ifirst", "K,J,I", 3, shape, NULL);
  GTS_EQ_ARRAY(p.layout, 0, 1, 2);
  assert_string_equal(p.dims[0], "K");
}

/* Default dims are GT4Py's: "IJK"[:n], then data dims "0", "1", …. */
static void test_default_dims(void** state) {
  static const char* want[5][5] = {
      {"I"}, {"I", "J"}, {"I", "J", "K"}, {"I", "J", "K", "0"}, {"I", "J", "K", "0", "1"}};
  static const int32_t want_layout[5][5] = {{0}, {0, 1}, {0, 1, 2}, {1, 2, 3, 0}, {2, 3, 4, 0, 1}};
  (void)state;
  for (int n = 1; n <= 5; ++n) {
    gtstorage_plan_info p = plan_for("numpy", NULL, n, NULL, NULL);
    for (int d = 0; d < n; ++d) {
      assert_string_equal(p.dims[d], want[n - 1][d]);
      GTS_EQ64(p.layout[d], want_layout[n - 1][d]);
    }
  }
}

/* ---- independent re-implementation of the layout rule, for the sweep -------------------- */

static int is_data_label(const char* l) {
  return l[0] >= '0' && l[0] <= '9';
}
static int axis_of(const char* l) {
  return l[0] == 'I' ? 0 : l[0] == 'J' ? 1 : 2;
}

static void rule_layout(const gtstorage_preset_info* pr, int ndim, char labels[][4], int32_t* out) {
  int ndata = 0;
  if (pr->rule == GTSTORAGE_RULE_C_ORDER) {
    for (int d = 0; d < ndim; ++d) out[d] = d;
    return;
  }
  if (pr->rule == GTSTORAGE_RULE_FORTRAN_ORDER) {
    for (int d = 0; d < ndim; ++d) out[d] = ndim - 1 - d;
    return;
  }
  for (int d = 0; d < ndim; ++d) ndata += is_data_label(labels[d]);
  for (int d = 0; d < ndim; ++d) {
    int rank = 0;
    if (is_data_label(labels[d])) {
      /* Data dims: ordered by their number, "0" slowest. */
      int mine = atoi(labels[d]);
      for (int e = 0; e < ndim; ++e)
        if (is_data_label(labels[e]) && atoi(labels[e]) < mine) ++rank;
    } else {
      /* Spatial dims: base rank, re-ranked densely among those present, after the data dims. */
      int mine = pr->base_layout[axis_of(labels[d])];
      rank = ndata;
      for (int e = 0; e < ndim; ++e)
        if (!is_data_label(labels[e]) && pr->base_layout[axis_of(labels[e])] < mine) ++rank;
    }
    out[d] = rank;
  }
}

/* Next permutation of perm[0..n) in lexicographic order; 0 after the last. */
static int next_perm(int* perm, int n) {
  int i = n - 2, j = n - 1;
  while (i >= 0 && perm[i] >= perm[i + 1]) --i;
  if (i < 0) return 0;
  while (perm[j] <= perm[i]) --j;
  {
    int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int a = i + 1, b = n - 1; a < b; ++a, --b) {
    int t = perm[a];
    perm[a] = perm[b];
    perm[b] = t;
  }
  return 1;
}

/* Every preset x every subset of IJK x 0..2 data dims x every order of the labels. */
static void test_sweep_against_rule(void** state) {
  int32_t npresets = 0;
  long checked = 0;
  (void)state;
  GTS_OK(gtstorage_preset_count(&npresets));
  for (int32_t pi = 0; pi < npresets; ++pi) {
    gtstorage_preset_info pr = GTSTORAGE_PRESET_INFO_INIT;
    GTS_OK(gtstorage_preset_at(pi, &pr));
    for (int mask = 0; mask < 8; ++mask) {
      for (int ndata = 0; ndata <= 2; ++ndata) {
        char pool[5][4];
        int n = 0, perm[5];
        for (int a = 0; a < 3; ++a)
          if (mask & (1 << a)) snprintf(pool[n++], 4, "%c", "IJK"[a]);
        for (int x = 0; x < ndata; ++x) snprintf(pool[n++], 4, "%d", x);
        if (n == 0) continue;
        for (int i = 0; i < n; ++i) perm[i] = i;
        do {
          char labels[5][4], dims[32] = "";
          int32_t want[5];
          gtstorage_plan_info p;
          for (int i = 0; i < n; ++i) {
            memcpy(labels[i], pool[perm[i]], 4);
            strcat(dims, i ? "," : "");
            strcat(dims, labels[i]);
          }
          rule_layout(&pr, n, labels, want);
          p = plan_for(pr.name, dims, n, NULL, NULL);
          for (int d = 0; d < n; ++d) {
            assert_string_equal(p.dims[d], labels[d]);
            if (p.layout[d] != want[d])
              fail_msg("%s dims %s: layout[%d] = %d, rule says %d", pr.name, dims, d, p.layout[d],
                       want[d]);
          }
          ++checked;
        } while (next_perm(perm, n));
      }
    }
  }
  /* 18 presets x 276 label orders (sum over the 23 label sets of n!). */
  assert_true(checked >= 18 * 276);
}

/* ---- strides, by hand ------------------------------------------------------------------- */

typedef struct stride_case {
  const char* preset;
  const char* dims;
  const char* dtype;
  int ndim;
  int64_t shape[4];
  int64_t strides[4];
  int64_t padded[4];
} stride_case;

static const stride_case kStrides[] = {
    /* numpy: C order, no padding. */
    {"numpy", "IJK", "<f8", 3, {3, 4, 5}, {160, 40, 8}, {3, 4, 5}},
    {"numpy", "IJK", "<f4", 3, {3, 4, 5}, {80, 20, 4}, {3, 4, 5}},
    /* gt:gpu: I fastest, 32 elements: I padded 3 -> 32. */
    {"gt:gpu", "IJK", "<f8", 3, {3, 4, 5}, {8, 256, 1024}, {32, 4, 5}},
    {"gt:gpu", "IJK", "<f4", 3, {3, 4, 5}, {4, 128, 512}, {32, 4, 5}},
    {"gt:gpu", "IJK", "<f8", 3, {33, 2, 2}, {8, 512, 1024}, {64, 2, 2}},
    {"gt:gpu", "IJK", "<f8", 3, {32, 2, 2}, {8, 256, 512}, {32, 2, 2}},
    /* gt:gpu with a data dim: it is outermost. */
    {"gt:gpu", "IJK0", "<f8", 4, {3, 4, 5, 2}, {8, 256, 1024, 5120}, {32, 4, 5, 2}},
    /* gt:gpu by name: with dims KJI the contiguous (padded) I is the last dimension. */
    {"gt:gpu", "KJI", "<f8", 3, {5, 4, 3}, {1024, 256, 8}, {5, 4, 32}},
    /* gt:cpu_ifirst: Fortran-like, no padding. */
    {"gt:cpu_ifirst", "IJK", "<f8", 3, {3, 4, 5}, {8, 24, 96}, {3, 4, 5}},
    /* gridtools:cpu_ifirst: 64 bytes, I then K then J: I padded to 8 doubles / 16 floats. */
    {"gridtools:cpu_ifirst", "IJK", "<f8", 3, {3, 4, 5}, {8, 320, 64}, {8, 4, 5}},
    {"gridtools:cpu_ifirst", "IJK", "<f4", 3, {3, 4, 5}, {4, 320, 64}, {16, 4, 5}},
    /* gtmc: 8 elements, (2,0,1). */
    {"gtmc", "IJK", "<f4", 3, {3, 4, 5}, {4, 160, 32}, {8, 4, 5}},
    /* gridtools:gpu: 128 bytes = 16 doubles. */
    {"gridtools:gpu", "IJK", "<f8", 3, {3, 4, 5}, {8, 128, 512}, {16, 4, 5}},
    /* gridtools:cpu_kfirst: 1 byte alignment, C order. */
    {"gridtools:cpu_kfirst", "IJK", "<f8", 3, {3, 4, 5}, {160, 40, 8}, {3, 4, 5}},
    /* dace:cpu: J fastest, then I, then K. */
    {"dace:cpu", "IJK", "<f8", 3, {3, 4, 5}, {32, 8, 96}, {3, 4, 5}},
    /* numpy with a data dim: the data dim is slowest. */
    {"numpy", "IJK0", "<f8", 4, {3, 4, 5, 2}, {160, 40, 8, 480}, {3, 4, 5, 2}},
    /* Fortran preset. */
    {"F", "IJK0", "<f8", 4, {3, 4, 5, 2}, {8, 24, 96, 480}, {3, 4, 5, 2}},
    /* complex and bool */
    {"gt:gpu", "IJ", "<c16", 2, {3, 4}, {16, 512}, {32, 4}},
    {"gridtools:cpu_ifirst", "IJ", "|b1", 2, {3, 4}, {1, 64}, {64, 4}},
};

static void test_literal_strides(void** state) {
  (void)state;
  for (size_t c = 0; c < sizeof kStrides / sizeof kStrides[0]; ++c) {
    const stride_case* k = &kStrides[c];
    gtstorage_plan_info p = plan_for(k->preset, k->dims, k->ndim, k->shape, k->dtype);
    int64_t total = p.itemsize;
    for (int d = 0; d < k->ndim; ++d) {
      if (p.strides[d] != k->strides[d] || p.padded_shape[d] != k->padded[d])
        fail_msg("%s %s %s case %zu dim %d: stride %" PRId64 " padded %" PRId64
                 ", expected %" PRId64 " / %" PRId64,
                 k->preset, k->dims, k->dtype, c, d, p.strides[d], p.padded_shape[d], k->strides[d],
                 k->padded[d]);
      GTS_EQ64(p.shape[d], k->shape[d]);
      total *= k->padded[d];
    }
    GTS_EQ64(p.padded_bytes, total);
    assert_true(p.allocation_bytes >= p.byte_offset + p.padded_bytes);
  }
}

/* The same strides on real storages, and the aligned point with a halo. */
static void test_created_storages(void** state) {
  (void)state;
  for (size_t c = 0; c < sizeof kStrides / sizeof kStrides[0]; ++c) {
    const stride_case* k = &kStrides[c];
    gtstorage_create_options o;
    gtstorage_handle h = 0;
    gtstorage_interface_info info;
    gtstorage_plan_info p = plan_for(k->preset, k->dims, k->ndim, k->shape, k->dtype);
    o = gts_options((uint32_t)k->ndim, k->shape, k->preset);
    o.dims = k->dims;
    o.dtype = k->dtype;
    o.device = GTSTORAGE_DEVICE_CPU;
    GTS_OK(gtstorage_create(&o, &h));
    info = gts_host_info(h);
    for (int d = 0; d < k->ndim; ++d) {
      GTS_EQ64(info.strides[d], k->strides[d]);
      GTS_EQ64(info.layout[d], p.layout[d]);
      GTS_EQ64(info.shape[d], k->shape[d]);
      assert_string_equal(info.dims[d], p.dims[d]);
    }
    GTS_EQ64((uintptr_t)info.data % (uintptr_t)p.alignment_bytes, 0);
    GTS_OK(gtstorage_release(h));
  }
  /* gt:gpu with halo 2 on I: element (2,0,0) is 256-byte aligned, so data is 16 bytes before. */
  {
    gtstorage_create_options o;
    int64_t shape[3] = {7, 4, 5}, halo[6] = {2, 2, 1, 1, 0, 0};
    gtstorage_handle h = 0;
    gtstorage_interface_info info;
    o = gts_options(3, shape, "gt:gpu");
    o.halo = halo;
    o.device = GTSTORAGE_DEVICE_CPU;
    GTS_OK(gtstorage_create(&o, &h));
    info = gts_host_info(h);
    GTS_EQ_ARRAY(info.strides, 8, 256, 1024);
    /* Aligned index defaults to the lower halo (2,1,0). */
    GTS_EQ_ARRAY(info.aligned_index, 2, 1, 0);
    GTS_EQ64(((uintptr_t)info.data + 2 * 8 + 1 * 256) % 256, 0);
    GTS_EQ_ARRAY(info.origin, 2, 1);
    GTS_EQ_ARRAY(info.halo[0], 2, 2);
    GTS_OK(gtstorage_release(h));
  }
}

/* An explicit layout overrides the preset's rule. */
static void test_explicit_layout_overrides(void** state) {
  gtstorage_create_options o;
  int64_t shape[3] = {3, 4, 5};
  int32_t layout[3] = {1, 2, 0};
  gtstorage_plan_info p;
  (void)state;
  o = gts_options(3, shape, "gt:gpu");
  o.layout = layout;
  p = gts_plan_of(&o);
  /* J contiguous, padded 4 -> 32; then I; K slowest. */
  GTS_EQ_ARRAY(p.layout, 1, 2, 0);
  GTS_EQ64(p.contiguous_dim, 1);
  GTS_EQ64(p.padded_shape[1], 32);
  GTS_EQ64(p.strides[1], 8);
  GTS_EQ64(p.strides[0], 256);
  GTS_EQ64(p.strides[2], 768);
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
