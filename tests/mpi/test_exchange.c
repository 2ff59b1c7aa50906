/* libgtstorage_mpi: decompositions and halo exchanges on 1 … 6 processes (run under mpiexec by
 * CTest, label "mpi"). Every exchanged field is filled with a function of the global index of
 * each point (halos with a sentinel), exchanged, read back and compared point by point with
 * what the global field holds there: interiors unchanged, every halo point within the exchanged
 * width filled from the right neighbour (periodic wrap included), corners only with BOX, points
 * without a neighbour or beyond the width still the sentinel. Bad input must give every process
 * a status and a message, and nothing may hang (CTest has a timeout).
 *
 * Checks do not stop a process (a collective call must still be made by all of them); the
 * failures of all processes are summed at the end. */
#include <gtstorage/gtstorage_experimental.h>
#include <gtstorage/gtstorage_mpi.h>
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* A call that must fail with @p status and a message containing @p text. */
#define FAILS(status, text, call)                                                               \
  do {                                                                                          \
    int rc_ = (call);                                                                           \
    ++checks;                                                                                   \
    if (rc_ != (status) || strstr(gtstorage_last_error(), (text)) == NULL)                      \
      failed(__FILE__, __LINE__, "%s -> %s \"%s\", expected %s with \"%s\"", #call,             \
             gtstorage_status_name(rc_), gtstorage_last_error(), gtstorage_status_name(status), \
             (text));                                                                           \
  } while (0)

/* ---- field values -------------------------------------------------------------------------- */

/* The global field number f at global index (gi, gj, gk); K need not be inside 0 … N-1 (halos
 * of dims that are not decomposed hold the same values on every process). */
static long long value(int f, long long gi, long long gj, long long gk) {
  return 1 + f * 1000003LL + (gi + 50) * 10007LL + (gj + 50) * 101LL + (gk + 50) * 3LL;
}

#define SENTINEL LLONG_MIN

static long long reduce(const char* dtype, long long v) {
  if (v == SENTINEL) return v;
  if (!strcmp(dtype, "<f4")) return v % (1LL << 22);
  if (!strcmp(dtype, "<i4")) return v % (1LL << 30);
  if (!strcmp(dtype, "<i2")) return v % (1LL << 14);
  if (!strcmp(dtype, "|u1")) return v % 251;
  if (!strcmp(dtype, "|b1")) return v & 1;
  return v; /* <f8, <i8, <c16 */
}

/* The dtypes stored as one number: X(typestr, C type, what an element of value SENTINEL holds).
 * |u1, |b1 and <c16 have their own conversions. */
#define NUMBER_DTYPES(X) \
  X("<f8", double, -1.5) \
  X("<f4", float, -1.5f) \
  X("<i4", int32_t, -7)  \
  X("<i2", int16_t, -7)  \
  X("<i8", int64_t, -7)

static int64_t itemsize_of(const char* dtype) {
#define NUMBER_SIZE(name, type, sentinel) \
  if (!strcmp(dtype, name)) return (int64_t)sizeof(type);
  NUMBER_DTYPES(NUMBER_SIZE)
#undef NUMBER_SIZE
  if (!strcmp(dtype, "<c16")) return 16;
  return 1; /* |u1, |b1 */
}

static void put(const char* dtype, unsigned char* p, long long v) {
#define PUT_NUMBER(name, type, sentinel)                 \
  if (!strcmp(dtype, name)) {                            \
    const type x = v == SENTINEL ? (sentinel) : (type)v; \
    memcpy(p, &x, sizeof x);                             \
    return;                                              \
  }
  NUMBER_DTYPES(PUT_NUMBER)
#undef PUT_NUMBER
  if (!strcmp(dtype, "|u1")) {
    *p = v == SENTINEL ? 255 : (unsigned char)v;
  } else if (!strcmp(dtype, "|b1")) {
    *p = v == SENTINEL ? 0 : (unsigned char)v;
  } else { /* <c16 */
    double x[2] = {v == SENTINEL ? -1.5 : (double)v, v == SENTINEL ? -1.5 : -(double)v};
    memcpy(p, x, 16);
  }
}

static int same(const char* dtype, const unsigned char* p, long long v) {
  unsigned char want[16];
  put(dtype, want, v);
  return memcmp(p, want, (size_t)itemsize_of(dtype)) == 0;
}

/* ---- the test's view of a decomposition ----------------------------------------------------- */

typedef struct {
  gtstorage_decomp d;
  gtstorage_decomp_info info;
  int64_t global[3]; /* global extents of the decomposed dims, grid order */
  int64_t offset[3]; /* this process's block */
  int64_t extent[3];
  int axis[3]; /* field dim (I=0, J=1, K=2) of each decomposed dim */
} grid;

static int make_grid(grid* g, int ndim, const char* dims, const int32_t* proc_dims,
                     const int32_t* periodic, const int64_t* global) {
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  o.ndim = (uint32_t)ndim;
  o.comm = comm_f(MPI_COMM_WORLD);
  o.dims = dims;
  o.proc_dims = proc_dims;
  o.periodic = periodic;
  memset(g, 0, sizeof *g);
  int rc = gtstorage_decomp_create(&o, &g->d);
  if (rc != GTSTORAGE_OK) return rc;
  g->info.struct_size = sizeof g->info;
  OK(gtstorage_decomp_get_info(g->d, &g->info));
  memcpy(g->global, global, (size_t)ndim * sizeof(int64_t));
  OK(gtstorage_decomp_local_extent(g->d, -1, global, (uint32_t)ndim, g->offset, g->extent));
  for (int k = 0; k < ndim; ++k) g->axis[k] = g->info.dims[k][0] - 'I';
  return GTSTORAGE_OK;
}

/* ---- fields -----------------------------------------------------------------------------------
 */

enum kind { HOST, MIRROR, DEVICE_ONLY, UNIFIED, PINNED };

typedef struct {
  const char* dtype;
  const char* preset;
  const int32_t* layout; /* NULL = the preset's */
  int64_t halo[3][2];
  int64_t kextent; /* interior extent of K when K is not decomposed */
  enum kind kind;
} field_spec;

typedef struct {
  gtstorage_handle h;
  field_spec spec;
  int id;
  int64_t shape[3];
  int64_t nbytes;
  unsigned char* image; /* C-ordered host image of the whole field */
} field;

static void image_index(const field* f, int64_t n, int64_t* idx) {
  idx[2] = n % f->shape[2];
  idx[1] = (n / f->shape[2]) % f->shape[1];
  idx[0] = n / (f->shape[2] * f->shape[1]);
}

/* Expected value at local index idx after an exchange over @p g with @p width (NULL = halos),
 * @p star; @p before: the value it held before the exchange. */
static long long expected(const grid* g, const field* f, const int64_t* idx, const int64_t* width,
                          int star, int step, int before) {
  long long gl[3];
  int in_halo = 0, beyond = 0;
  for (int d = 0; d < 3; ++d) gl[d] = idx[d] - f->spec.halo[d][0];
  for (int k = 0; k < (int)g->info.ndim; ++k) {
    const int a = g->axis[k];
    const long long rel = idx[a] - f->spec.halo[a][0];
    const long long n = g->extent[k];
    const long long wl = width ? width[2 * k] : f->spec.halo[a][0];
    const long long wu = width ? width[2 * k + 1] : f->spec.halo[a][1];
    long long glob = g->offset[k] + rel;
    if (rel < 0 || rel >= n) {
      ++in_halo;
      if ((rel < 0 && -rel > wl) || (rel >= n && rel - n >= wu)) beyond = 1;
      if (glob < 0 || glob >= g->global[k]) {
        if (!g->info.periodic[k]) beyond = 1;
        glob = ((glob % g->global[k]) + g->global[k]) % g->global[k];
      }
    }
    gl[a] = glob;
  }
  if (in_halo && (before || beyond || (star && in_halo > 1))) return SENTINEL;
  return reduce(f->spec.dtype, value(f->id + 17 * step, gl[0], gl[1], gl[2]));
}

static void fill_image(const grid* g, field* f, int step) {
  const int64_t item = itemsize_of(f->spec.dtype);
  for (int64_t n = 0; n < f->nbytes / item; ++n) {
    int64_t idx[3];
    image_index(f, n, idx);
    put(f->spec.dtype, f->image + n * item, expected(g, f, idx, NULL, 0, step, 1));
  }
}

static gtstorage_array image_array(field* f) {
  gtstorage_array a = GTSTORAGE_ARRAY_INIT;
  a.ndim = 3;
  a.data = f->image;
  a.shape = f->shape;
  a.dtype = f->spec.dtype;
  return a;
}

/* Writes the image into the field (through the side the field's kind writes). */
static void upload(field* f) {
  gtstorage_array a = image_array(f);
  OK(gtstorage_copy_from_array(f->h, &a));
}

/* The create options that put a field in each kind of memory. */
static const struct {
  int32_t device, host_memory, managed;
} memories[] = {
    [HOST] = {GTSTORAGE_DEVICE_CPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_MANAGED_DEFAULT},
    [PINNED] = {GTSTORAGE_DEVICE_CPU, GTSTORAGE_HOST_PINNED, GTSTORAGE_MANAGED_DEFAULT},
    [MIRROR] = {GTSTORAGE_DEVICE_GPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_MANAGED_MIRROR},
    [DEVICE_ONLY] = {GTSTORAGE_DEVICE_GPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_MANAGED_NONE},
    [UNIFIED] = {GTSTORAGE_DEVICE_GPU, GTSTORAGE_HOST_PAGEABLE, GTSTORAGE_MANAGED_UNIFIED},
};

static int make_field(const grid* g, field* f, const field_spec* spec, int id) {
  memset(f, 0, sizeof *f);
  f->spec = *spec;
  f->id = id;
  for (int d = 0; d < 3; ++d) f->shape[d] = spec->kextent + spec->halo[d][0] + spec->halo[d][1];
  for (int k = 0; k < (int)g->info.ndim; ++k) {
    const int a = g->axis[k];
    f->shape[a] = g->extent[k] + spec->halo[a][0] + spec->halo[a][1];
  }
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  o.ndim = 3;
  o.shape = f->shape;
  o.dtype = spec->dtype;
  o.preset = spec->preset;
  o.layout = spec->layout;
  o.halo = &spec->halo[0][0];
  o.device = memories[spec->kind].device;
  o.host_memory = memories[spec->kind].host_memory;
  o.managed = memories[spec->kind].managed;
  int rc = gtstorage_create(&o, &f->h);
  if (rc != GTSTORAGE_OK) {
    failed(__FILE__, __LINE__, "create %s %s: %s", spec->dtype, spec->preset,
           gtstorage_last_error());
    return rc;
  }
  f->nbytes = f->shape[0] * f->shape[1] * f->shape[2] * itemsize_of(spec->dtype);
  f->image = malloc((size_t)f->nbytes);
  fill_image(g, f, 0);
  upload(f);
  return GTSTORAGE_OK;
}

static void free_field(field* f) {
  if (f->h) OK(gtstorage_release(f->h));
  free(f->image);
  f->h = 0;
  f->image = NULL;
}

/* Reads the field back and compares it with the global field; returns the mismatches. */
static int verify(const grid* g, field* f, const int64_t* width, int star, int step) {
  unsigned char* got = malloc((size_t)f->nbytes);
  gtstorage_array a = image_array(f);
  a.data = got;
  OK(gtstorage_copy_to_array(&a, f->h));
  const int64_t item = itemsize_of(f->spec.dtype);
  int bad = 0;
  for (int64_t n = 0; n < f->nbytes / item; ++n) {
    int64_t idx[3];
    image_index(f, n, idx);
    const long long want = expected(g, f, idx, width, star, step, 0);
    if (!same(f->spec.dtype, got + n * item, want)) {
      if (bad < 3) {
        failed(__FILE__, __LINE__,
               "field %d (%s %s) at (%lld, %lld, %lld): wrong value (want %lld)", f->id,
               f->spec.dtype, f->spec.preset, (long long)idx[0], (long long)idx[1],
               (long long)idx[2], want);
      }
      ++bad;
    }
  }
  ++checks;
  free(got);
  return bad;
}

/* The interior of every field rewritten with the values of @p step (halos back to sentinel),
 * so a repeated exchange must move new data. */
static void next_step(const grid* g, field* fields, int n, int step) {
  for (int i = 0; i < n; ++i) {
    fill_image(g, &fields[i], step);
    upload(&fields[i]);
  }
}

/* ---- one exchange configuration ---------------------------------------------------------------
 */

typedef struct {
  const char* name;
  int ndim;
  const char* dims;
  int32_t periodic[3];
  int64_t global[3];
  const field_spec* specs;
  int nspecs;
  int nfields;          /* fields made, cycling through the specs */
  const int64_t* width; /* NULL = halos */
  int32_t pattern;
  int32_t method;
  int32_t gpu_aware;
  int steps;
  int use_test; /* complete with gtstorage_exchange_test polling */
} exchange_case;

static void run_case(const exchange_case* c) {
  config = c->name;
  grid g;
  if (make_grid(&g, c->ndim, c->dims, NULL, c->periodic, c->global) != GTSTORAGE_OK) {
    failed(__FILE__, __LINE__, "decomposition: %s", gtstorage_last_error());
    return;
  }
  field* fields = calloc((size_t)c->nfields, sizeof *fields);
  gtstorage_handle* handles = calloc((size_t)c->nfields, sizeof *handles);
  for (int i = 0; i < c->nfields; ++i) {
    make_field(&g, &fields[i], &c->specs[i % c->nspecs], i);
    handles[i] = fields[i].h;
  }
  gtstorage_exchange_options o = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
  o.width = c->width;
  o.pattern = c->pattern;
  o.method = c->method;
  o.gpu_aware = c->gpu_aware;
  gtstorage_exchange ex = 0;
  OK(gtstorage_exchange_create(g.d, handles, (uint32_t)c->nfields, &o, &ex));
  for (int step = 0; ex && step < c->steps; ++step) {
    if (step > 0) next_step(&g, fields, c->nfields, step);
    if (c->use_test) {
      OK(gtstorage_exchange_start(ex));
      int32_t done = 0;
      for (long spins = 0; !done && spins < 100000000L; ++spins) {
        OK(gtstorage_exchange_test(ex, &done));
      }
      CHECK(done, "gtstorage_exchange_test never completed");
    } else if (step % 2) {
      OK(gtstorage_exchange_start(ex));
      OK(gtstorage_exchange_wait(ex));
    } else {
      OK(gtstorage_exchange_run(ex));
    }
    for (int i = 0; i < c->nfields; ++i) {
      verify(&g, &fields[i], c->width, c->pattern == GTSTORAGE_EXCHANGE_STAR, step);
    }
  }
  if (ex) {
    gtstorage_exchange_info info = GTSTORAGE_EXCHANGE_INFO_INIT;
    OK(gtstorage_exchange_get_info(ex, &info));
    CHECK(info.nfields == (uint32_t)c->nfields, "info.nfields %u", info.nfields);
    CHECK(info.steps == c->steps, "info.steps %lld", (long long)info.steps);
    CHECK(info.in_flight == 0, "in flight after wait");
    if (c->method == GTSTORAGE_EXCHANGE_DATATYPE) {
      int devices = 0;
      for (int i = 0; i < c->nspecs; ++i)
        devices += c->specs[i].kind == MIRROR || c->specs[i].kind == DEVICE_ONLY;
      if (!devices)
        CHECK(info.packed_regions == 0, "DATATYPE packed %d regions", info.packed_regions);
    }
    if (c->method == GTSTORAGE_EXCHANGE_PACK) {
      CHECK(info.datatype_regions == 0, "PACK sent %d regions as datatypes", info.datatype_regions);
    }
    OK(gtstorage_exchange_release(ex));
  }
  for (int i = 0; i < c->nfields; ++i) free_field(&fields[i]);
  free(fields);
  free(handles);
  OK(gtstorage_decomp_release(g.d));
}

/* ---- the configurations ------------------------------------------------------------------------
 */

static const int32_t ifirst_layout[3] = {2, 1, 0}; /* I contiguous */
static const int32_t jfirst_layout[3] = {1, 2, 0}; /* J contiguous, then I, then K */

static void host_cases(void) {
  const field_spec kfirst = {"<f8", "gt:cpu_kfirst", NULL, {{2, 2}, {2, 2}, {0, 0}}, 5, HOST};
  const field_spec three_layouts[] = {
      {"<f8", "gt:cpu_kfirst", NULL, {{2, 2}, {2, 2}, {0, 0}}, 5, HOST},  /* K contiguous, padded */
      {"<f8", "gt:cpu_ifirst", NULL, {{2, 2}, {2, 2}, {0, 0}}, 5, HOST},  /* I contiguous, padded */
      {"<f8", "numpy", jfirst_layout, {{2, 2}, {2, 2}, {1, 1}}, 5, HOST}, /* J contiguous, K halo */
  };
  /* I faces of 2 x 256 x 256 elements (1 MiB of f8 with one process in J) and more: packed with
   * streaming stores, the J faces (a few KiB) with ordinary ones, in one exchange. */
  const field_spec big_faces[] = {
      {"<f8", "gt:cpu_ifirst", NULL, {{2, 2}, {2, 2}, {0, 0}}, 256, HOST},
      {"<f8", "gt:cpu_kfirst", NULL, {{2, 2}, {2, 2}, {0, 0}}, 256, HOST},
  };
  const field_spec halos[] = {
      {"<f8", "gt:cpu_kfirst", NULL, {{1, 1}, {1, 1}, {0, 0}}, 3, HOST},
      {"<f8", "gt:cpu_kfirst", NULL, {{2, 3}, {2, 3}, {0, 0}}, 3, HOST},
      {"<f8", "gt:cpu_ifirst", NULL, {{3, 0}, {3, 0}, {0, 0}}, 3, HOST},
  };
  const field_spec dtypes[] = {
      {"<f8", "gt:cpu_kfirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"<f4", "gt:cpu_ifirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"<i4", "numpy", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"|u1", "gt:cpu_kfirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"<c16", "gt:cpu_ifirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"<i2", "numpy", ifirst_layout, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
      {"|b1", "gt:cpu_kfirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
  };
  const int64_t width_21[] = {2, 1, 1, 2}; /* below the halos (2, 3) and (2, 3) */
  const int64_t width_0[] = {0, 2, 1, 0};
  /* 3-D: K split too (halo in K), on grids MPI_Dims_create chooses. */
  const field_spec k3[] = {
      {"<f8", "gt:cpu_kfirst", NULL, {{1, 1}, {2, 1}, {1, 2}}, 0, HOST},
      {"<f4", "gt:cpu_ifirst", NULL, {{1, 1}, {2, 1}, {1, 2}}, 0, HOST},
  };
  /* clang-format off */
  const exchange_case cases[] = {
      /* name, ndim, dims, periodic, global,
       *  specs, nspecs, nfields, width, pattern, method, gpu_aware, steps, use_test */
      {"2-D periodic BOX, K-first", 2, "IJ", {1, 1}, {12, 10},
       &kfirst, 1, 1, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"2-D non-periodic STAR", 2, "IJ", {0, 0}, {12, 10},
       &kfirst, 1, 2, NULL, GTSTORAGE_EXCHANGE_STAR, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"2-D non-periodic BOX", 2, "IJ", {0, 0}, {12, 10},
       &kfirst, 1, 1, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 1, 0},
      {"2-D periodic in I only, uneven 13x11", 2, "IJ", {1, 0}, {13, 11},
       three_layouts, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"1-D I periodic, halos (1,1) (2,3) (3,0)", 1, "I", {1}, {23},
       halos, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"1-D J non-periodic, halos (1,1) (2,3) (3,0)", 1, "J", {0}, {20},
       halos, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"2-D three layouts, DATATYPE", 2, "IJ", {1, 1}, {12, 10},
       three_layouts, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_DATATYPE, -1, 2, 0},
      {"2-D three layouts, PACK", 2, "IJ", {1, 1}, {12, 10},
       three_layouts, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_PACK, -1, 2, 0},
      {"2-D faces of 1 MiB and more, PACK", 2, "IJ", {1, 1}, {6, 768},
       big_faces, 2, 2, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_PACK, -1, 1, 0},
      {"2-D mixed dtypes", 2, "IJ", {1, 1}, {11, 9},
       dtypes, 7, 7, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"2-D 16 fields, test() polling", 2, "IJ", {1, 1}, {12, 10},
       dtypes, 7, 16, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 1},
      {"2-D width below the halo", 2, "IJ", {1, 1}, {12, 10},
       halos + 1, 1, 2, width_21, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"2-D widths with zeros, STAR", 2, "IJ", {1, 0}, {12, 10},
       halos + 1, 1, 1, width_0, GTSTORAGE_EXCHANGE_STAR, GTSTORAGE_EXCHANGE_PACK, -1, 1, 0},
      {"2-D JI grid order", 2, "JI", {1, 1}, {10, 12},
       three_layouts, 3, 3, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 1, 0},
      {"3-D IJK periodic BOX", 3, "IJK", {1, 1, 1}, {7, 6, 6},
       k3, 2, 2, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO, -1, 2, 0},
      {"3-D IJK non-periodic STAR", 3, "IJK", {0, 1, 0}, {7, 6, 6},
       k3, 2, 2, NULL, GTSTORAGE_EXCHANGE_STAR, GTSTORAGE_EXCHANGE_PACK, -1, 1, 0},
  };
  /* clang-format on */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run_case(&cases[i]);
}

/* ---- device fields on the emulated device -----------------------------------------------------
 */

static void device_cases(void) {
  OK(gtstorage_set_device_backend("emulated"));
  const field_spec kinds[] = {
      {"<f8", "gt:gpu", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, MIRROR},
      {"<f4", "gt:gpu", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, DEVICE_ONLY},
      {"<f8", "gt:gpu", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, UNIFIED},
      {"<i4", "gt:cpu_ifirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, PINNED},
      {"<f8", "gt:cpu_kfirst", NULL, {{2, 2}, {1, 1}, {0, 0}}, 4, HOST},
  };
  for (int aware = 0; aware <= 1; ++aware) {
    /* clang-format off */
    const exchange_case c = {aware ? "device kinds, GPU-aware" : "device kinds, staged", 2, "IJ",
                             {1, 1}, {12, 10},
                             kinds, 5, 5, NULL, GTSTORAGE_EXCHANGE_BOX, GTSTORAGE_EXCHANGE_AUTO,
                             aware, 3, 0};
    /* clang-format on */
    run_case(&c);
  }

  /* Every starting sync state of a mirror, both transports: the current side is exchanged, the
   * other is marked stale, no mirror transfer happens, and only packed halo bytes are staged. */
  config = "mirror sync states";
  grid g;
  const int64_t global[2] = {12, 10};
  const int32_t periodic[2] = {1, 1};
  if (make_grid(&g, 2, "IJ", NULL, periodic, global) != GTSTORAGE_OK) return;
  const field_spec mirror = {"<f8", "gt:gpu", NULL, {{2, 2}, {2, 2}, {0, 0}}, 3, MIRROR};
  for (int aware = 0; aware <= 1; ++aware) {
    for (int state = 0; state < 3; ++state) {
      field f;
      make_field(&g, &f, &mirror, 3);
      /* upload wrote the host: HOST_DIRTY; make the wanted state. */
      if (state == GTSTORAGE_SYNC_CLEAN) OK(gtstorage_sync_to(f.h, GTSTORAGE_SIDE_DEVICE, 0));
      if (state == GTSTORAGE_SYNC_DEVICE_DIRTY) {
        OK(gtstorage_sync_to(f.h, GTSTORAGE_SIDE_DEVICE, 0));
        OK(gtstorage_modify(f.h, GTSTORAGE_SIDE_DEVICE, 0));
      }
      int32_t s = -1;
      OK(gtstorage_get_sync_state(f.h, &s));
      CHECK(s == state, "state %d, wanted %d", s, state);
      gtstorage_transfer_stats before = GTSTORAGE_TRANSFER_STATS_INIT, after = before;
      OK(gtstorage_get_transfer_stats(f.h, &before));
      gtstorage_exchange_options o = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
      o.gpu_aware = aware;
      gtstorage_exchange ex = 0;
      OK(gtstorage_exchange_create(g.d, &f.h, 1, &o, &ex));
      OK(gtstorage_exchange_run(ex));
      OK(gtstorage_get_transfer_stats(f.h, &after));
      CHECK(after.h2d_count == before.h2d_count && after.d2h_count == before.d2h_count,
            "the exchange moved the mirror (state %d)", state);
      OK(gtstorage_get_sync_state(f.h, &s));
      const int exchanged_device = state != GTSTORAGE_SYNC_HOST_DIRTY;
      CHECK(s == (exchanged_device ? GTSTORAGE_SYNC_DEVICE_DIRTY : GTSTORAGE_SYNC_HOST_DIRTY),
            "state after the exchange %d (from %d)", s, state);
      gtstorage_exchange_info info = GTSTORAGE_EXCHANGE_INFO_INIT;
      OK(gtstorage_exchange_get_info(ex, &info));
      CHECK(info.gpu_aware == aware, "gpu_aware %d", info.gpu_aware);
      /* Only packed halo bytes cross, and only when the exchanged side is not the side MPI
       * uses (the pinned buffer when staged, the device buffer when GPU-aware). */
      const int crosses = aware ? !exchanged_device : exchanged_device;
      const int64_t out_bytes = crosses ? info.bytes_sent : 0;
      const int64_t in_bytes = crosses ? info.bytes_received : 0;
      const int64_t want_d2h = aware ? in_bytes : out_bytes;
      const int64_t want_h2d = aware ? out_bytes : in_bytes;
      CHECK(info.bytes_sent > 0 && info.staged_d2h_bytes == want_d2h,
            "staged d2h %lld, want %lld (state %d, aware %d)", (long long)info.staged_d2h_bytes,
            (long long)want_d2h, state, aware);
      CHECK(info.staged_h2d_bytes == want_h2d, "staged h2d %lld, want %lld (state %d, aware %d)",
            (long long)info.staged_h2d_bytes, (long long)want_h2d, state, aware);
      verify(&g, &f, NULL, 0, 0);
      OK(gtstorage_exchange_release(ex));
      free_field(&f);
    }
  }

  /* A side asked for explicitly while the other is modified: refused before anything is posted
   * (on every process: all hold the same state), and the exchange can run after a sync. */
  config = "sync conflict";
  {
    field f;
    make_field(&g, &f, &mirror, 4); /* HOST_DIRTY */
    gtstorage_exchange_options o = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
    o.side = GTSTORAGE_EXCHANGE_SIDE_DEVICE;
    gtstorage_exchange ex = 0;
    OK(gtstorage_exchange_create(g.d, &f.h, 1, &o, &ex));
    FAILS(GTSTORAGE_ERROR_SYNC_CONFLICT, "fields[0]: its host copy is modified",
          gtstorage_exchange_start(ex));
    gtstorage_exchange_info info = GTSTORAGE_EXCHANGE_INFO_INIT;
    OK(gtstorage_exchange_get_info(ex, &info));
    CHECK(info.in_flight == 0, "in flight after a refused start");
    OK(gtstorage_sync_to(f.h, GTSTORAGE_SIDE_DEVICE, 0));
    OK(gtstorage_exchange_run(ex));
    verify(&g, &f, NULL, 0, 0);
    OK(gtstorage_exchange_release(ex));
    free_field(&f);
  }
  OK(gtstorage_decomp_release(g.d));
  OK(gtstorage_set_device_backend("auto"));
}

/* ---- decompositions ------------------------------------------------------------------------- */

static void decomposition_cases(void) {
  config = "decomposition";
  grid g;
  const int64_t global[2] = {13, 7};
  const int32_t periodic[2] = {1, 0};
  OK(make_grid(&g, 2, "I,J", NULL, periodic, global));
  CHECK(g.info.size == size_, "size %d", g.info.size);
  CHECK(g.info.proc_dims[0] * g.info.proc_dims[1] == size_, "grid %d x %d", g.info.proc_dims[0],
        g.info.proc_dims[1]);
  CHECK(!strcmp(g.info.dims[0], "I") && !strcmp(g.info.dims[1], "J"), "dims %s %s", g.info.dims[0],
        g.info.dims[1]);
  CHECK(g.info.periodic[0] == 1 && g.info.periodic[1] == 0, "periodic");
  /* The blocks tile the global domain: extents sum to it, offsets follow each other. */
  long long sum = 0;
  for (int r = 0; r < size_; ++r) {
    int64_t off[2], ext[2];
    OK(gtstorage_decomp_local_extent(g.d, r, global, 2, off, ext));
    sum += ext[0] * ext[1];
    CHECK(ext[0] >= 13 / g.info.proc_dims[0] && ext[0] <= 13 / g.info.proc_dims[0] + 1,
          "uneven split of 13: %lld", (long long)ext[0]);
  }
  CHECK(sum == 13 * 7, "blocks cover %lld points of 91", sum);
  /* Neighbours: periodic I always has two (itself on one process), J none at its edges. */
  CHECK(g.info.neighbors[0][0] >= 0 && g.info.neighbors[0][1] >= 0, "periodic I neighbours");
  if (g.info.coords[1] == 0) CHECK(g.info.neighbors[1][0] == -1, "J edge has no lower neighbour");
  /* The grid's communicator is usable from C. */
  MPI_Comm cart = MPI_Comm_f2c((MPI_Fint)g.info.comm);
  int topo = 0;
  MPI_Topo_test(cart, &topo);
  CHECK(topo == MPI_CART, "the grid communicator is not Cartesian");
  OK(gtstorage_decomp_release(g.d));

  /* Every process gets the grid it asked for. */
  if (size_ % 2 == 0) {
    const int32_t dims[2] = {2, 0};
    OK(make_grid(&g, 2, "JI", dims, NULL, global));
    CHECK(g.info.proc_dims[0] == 2 && g.info.proc_dims[1] == size_ / 2, "grid %d x %d",
          g.info.proc_dims[0], g.info.proc_dims[1]);
    CHECK(g.info.dims[0][0] == 'J', "grid order");
    OK(gtstorage_decomp_release(g.d));
  }
}

/* ---- bad input: a status and a message on every process, nothing hangs -------------------------
 */

static int released_calls = 0;
static void on_release(void* user) {
  (void)user;
  ++released_calls;
}

static void bad_input_cases(void) {
  config = "bad input";
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  gtstorage_decomp d = 0;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "comm: -9223372036854775808 (GTSTORAGE_MPI_COMM_UNSET)",
        gtstorage_decomp_create(&o, &d));
  o.comm = 987654;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "comm: 987654 is not a valid communicator",
        gtstorage_decomp_create(&o, &d));
  o.comm = comm_f(MPI_COMM_NULL);
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "is not a valid communicator",
        gtstorage_decomp_create(&o, &d));
  o.comm = comm_f(MPI_COMM_WORLD);
  o.ndim = 4;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "ndim: 4 is out of range",
        gtstorage_decomp_create(&o, &d));
  o.ndim = 2;
  o.dims = "IX";
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims: 'X'", gtstorage_decomp_create(&o, &d));
  o.dims = "II";
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "appears twice", gtstorage_decomp_create(&o, &d));
  o.dims = "IJK";
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "names 3 dims, but ndim is 2",
        gtstorage_decomp_create(&o, &d));
  o.dims = NULL;
  /* Not a Cartesian layout of these processes. */
  const int32_t wrong[2] = {size_ + 1, 1};
  o.proc_dims = wrong;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "does not fit the communicator's",
        gtstorage_decomp_create(&o, &d));
  const int32_t negative[2] = {-1, 1};
  o.proc_dims = negative;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "is negative", gtstorage_decomp_create(&o, &d));
  o.proc_dims = NULL;
  o.reserved = 3;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "options.reserved", gtstorage_decomp_create(&o, &d));
  o.reserved = 0;
  o.struct_size = 7;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "options.struct_size: 7",
        gtstorage_decomp_create(&o, &d));
  o.struct_size = sizeof o;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "out: must not be NULL",
        gtstorage_decomp_create(&o, NULL));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "decomp: 0 is not a handle", gtstorage_decomp_release(0));
  gtstorage_decomp_info info = GTSTORAGE_DECOMP_INFO_INIT;
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "decomp: 12345 was never issued",
        gtstorage_decomp_get_info(12345, &info));

  /* A valid grid and a field for the exchange errors. */
  grid g;
  const int64_t global[2] = {12, 10};
  const int32_t periodic[2] = {1, 1};
  OK(make_grid(&g, 2, "IJ", NULL, periodic, global));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "global_shape: extent 0 of dim I",
        gtstorage_decomp_local_extent(g.d, -1, (const int64_t[]){0, 5}, 2, (int64_t[2]){0},
                                      (int64_t[2]){0}));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "n: 3 extents given",
        gtstorage_decomp_local_extent(g.d, -1, global, 3, (int64_t[3]){0}, (int64_t[3]){0}));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "rank:",
        gtstorage_decomp_local_extent(g.d, size_, global, 2, (int64_t[2]){0}, (int64_t[2]){0}));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "decomp:", gtstorage_decomp_get_info(g.d + 1, &info));
  const field_spec spec = {"<f8", "gt:cpu_kfirst", NULL, {{1, 1}, {1, 1}, {0, 0}}, 3, HOST};
  field f;
  make_field(&g, &f, &spec, 0);
  gtstorage_exchange ex = 0;
  gtstorage_exchange_options eo = GTSTORAGE_EXCHANGE_OPTIONS_INIT;

  /* Halo narrower than the width (every process). */
  const int64_t wide[4] = {2, 2, 1, 1};
  eo.width = wide;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT,
        "fields[0]: halo (1, 1) of dim I is narrower than the exchanged width (2, 2)",
        gtstorage_exchange_create(g.d, &f.h, 1, &eo, &ex));
  eo.width = NULL;
  /* Each enumerated option at a value it does not have (the others at their defaults). */
  const struct {
    int32_t* option;
    int32_t value;
    const char* message;
  } bad_values[] = {
      {&eo.pattern, 7, "pattern: 7"},
      {&eo.method, 9, "method: 9"},
      {&eo.side, 5, "side: 5"},
      {&eo.gpu_aware, 3, "gpu_aware: 3"},
  };
  for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; ++i) {
    const int32_t kept = *bad_values[i].option;
    *bad_values[i].option = bad_values[i].value;
    FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, bad_values[i].message,
          gtstorage_exchange_create(g.d, &f.h, 1, &eo, &ex));
    *bad_values[i].option = kept;
  }
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "nfields: 0",
        gtstorage_exchange_create(g.d, &f.h, 0, &eo, &ex));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "fields: must not be NULL",
        gtstorage_exchange_create(g.d, NULL, 1, &eo, &ex));
  const int64_t negative_width[4] = {1, -1, 1, 1};
  eo.width = negative_width;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "width: -1 (upper width of dim I)",
        gtstorage_exchange_create(g.d, &f.h, 1, &eo, &ex));
  eo.width = NULL;
  const gtstorage_handle stale = 77;
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "fields[0]: handle: 77",
        gtstorage_exchange_create(g.d, &stale, 1, &eo, &ex));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE,
        "decomp:", gtstorage_exchange_create(f.h, &f.h, 1, &eo, &ex));

  /* One process at fault, all of them told: rank 0 binds a field with one more interior point
   * in I and J; its neighbours see mismatched extents along the face they share, every other
   * process a failure of one of them. */
  {
    field_spec odd = spec;
    field g0;
    make_field(&g, &g0, &spec, 1);
    gtstorage_handle use = g0.h, bigger = 0;
    if (rank_ == 0 && size_ > 1) {
      int64_t shape[3] = {g0.shape[0] + 1, g0.shape[1] + 1, g0.shape[2]};
      gtstorage_create_options co = GTSTORAGE_CREATE_OPTIONS_INIT;
      co.ndim = 3;
      co.shape = shape;
      co.preset = odd.preset;
      co.halo = &odd.halo[0][0];
      OK(gtstorage_create(&co, &bigger));
      use = bigger;
    }
    const int rc = gtstorage_exchange_create(g.d, &use, 1, NULL, &ex);
    if (size_ > 1) {
      CHECK(rc != GTSTORAGE_OK, "mismatched extents were accepted");
      CHECK(strstr(gtstorage_last_error(), "shape") != NULL ||
                strstr(gtstorage_last_error(), "failed on rank") != NULL,
            "message: %s", gtstorage_last_error());
      if (rc == GTSTORAGE_ERROR_SHAPE_MISMATCH) {
        CHECK(strstr(gtstorage_last_error(),
                     "local extents or halos of neighbouring processes disagree") != NULL,
              "message: %s", gtstorage_last_error());
      } else {
        CHECK(rc == GTSTORAGE_ERROR_COMMUNICATION, "status %s", gtstorage_status_name(rc));
      }
    } else {
      OK(rc);
      OK(gtstorage_exchange_release(ex));
    }
    if (bigger) OK(gtstorage_release(bigger));
    free_field(&g0);
  }

  /* A bad field on the last process only: it names its argument, the others the rank. */
  {
    gtstorage_handle use = f.h;
    if (rank_ == size_ - 1) use = 99;
    const int rc = gtstorage_exchange_create(g.d, &use, 1, NULL, &ex);
    if (rank_ == size_ - 1) {
      CHECK(rc == GTSTORAGE_ERROR_INVALID_HANDLE, "status %s", gtstorage_status_name(rc));
    } else {
      char want[64];
      snprintf(want, sizeof want, "failed on rank %d: fields[0]", size_ - 1);
      CHECK(rc == GTSTORAGE_ERROR_COMMUNICATION && strstr(gtstorage_last_error(), want), "%s: %s",
            gtstorage_status_name(rc), gtstorage_last_error());
    }
  }

  /* Read-only fields and fields without a decomposed dim. */
  {
    gtstorage_handle ro = 0, ij = 0, k_only = 0;
    double mem[64];
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = f.shape;
    w.data = mem;
    w.halo = &spec.halo[0][0];
    w.readonly = 1;
    double* big = calloc((size_t)(f.shape[0] * f.shape[1] * f.shape[2]), sizeof(double));
    w.data = big;
    OK(gtstorage_wrap(&w, &ro));
    FAILS(GTSTORAGE_ERROR_READONLY, "fields[0]: the storage is read-only",
          gtstorage_exchange_create(g.d, &ro, 1, NULL, &ex));
    w.readonly = 0;
    w.dims = "IK0";
    OK(gtstorage_wrap(&w, &k_only));
    FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT,
          "fields[0]: has no dim J, which the decomposition splits (its dims are I, K, 0)",
          gtstorage_exchange_create(g.d, &k_only, 1, NULL, &ex));
    (void)ij;
    OK(gtstorage_release(ro));
    OK(gtstorage_release(k_only));
    free(big);
  }

  /* Start twice, wait without start, released handles. */
  OK(gtstorage_exchange_create(g.d, &f.h, 1, NULL, &ex));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "exchange: is not in flight",
        gtstorage_exchange_wait(ex));
  int32_t done = 0;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "exchange: is not in flight",
        gtstorage_exchange_test(ex, &done));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "out_done", gtstorage_exchange_test(ex, NULL));
  OK(gtstorage_exchange_start(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "exchange: is in flight", gtstorage_exchange_start(ex));
  OK(gtstorage_exchange_wait(ex));
  gtstorage_exchange_info xi = GTSTORAGE_EXCHANGE_INFO_INIT;
  xi.struct_size = 3;
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "out.struct_size: 3",
        gtstorage_exchange_get_info(ex, &xi));
  /* Released while in flight: completes first. */
  OK(gtstorage_exchange_start(ex));
  OK(gtstorage_exchange_release(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "exchange:", gtstorage_exchange_start(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "exchange:", gtstorage_exchange_release(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_HANDLE, "exchange: 0 is not a handle", gtstorage_exchange_run(0));
  verify(&g, &f, NULL, 0, 0);

  /* A field released while bound: the exchange holds it; the memory goes with the exchange. */
  {
    int64_t n = f.shape[0] * f.shape[1] * f.shape[2];
    double* mem = malloc((size_t)n * sizeof(double));
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = f.shape;
    w.data = mem;
    w.halo = &spec.halo[0][0];
    w.release = on_release;
    gtstorage_handle wrapped = 0;
    OK(gtstorage_wrap(&w, &wrapped));
    field view = f;
    view.h = wrapped;
    view.image = malloc((size_t)view.nbytes);
    fill_image(&g, &view, 0);
    upload(&view);
    OK(gtstorage_exchange_create(g.d, &wrapped, 1, NULL, &ex));
    /* The caller's only reference goes right after the start, with the messages in flight
     * (docs/architecture.md, "Work left queued"): the exchange holds the field until it is done
     * with it, and the values land. */
    OK(gtstorage_exchange_start(ex));
    OK(gtstorage_release(wrapped));
    CHECK(released_calls == 0, "released while bound");
    OK(gtstorage_exchange_wait(ex));
    OK(gtstorage_exchange_run(ex));
    /* The values landed in the caller's memory. */
    gtstorage_wrap_options r = w;
    r.release = NULL;
    OK(gtstorage_wrap(&r, &view.h));
    verify(&g, &view, NULL, 0, 0);
    OK(gtstorage_release(view.h));
    OK(gtstorage_exchange_release(ex));
    CHECK(released_calls == 1, "release callback ran %d times after the exchange went",
          released_calls);
    free(view.image);
    free(mem);
  }
  free_field(&f);
  OK(gtstorage_decomp_release(g.d));
}

int main(int argc, char** argv) {
  /* Before MPI_Init: a status, not a crash. */
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  gtstorage_decomp d = 0;
  o.comm = 0;
  FAILS(GTSTORAGE_ERROR_COMMUNICATION, "MPI is not initialized", gtstorage_decomp_create(&o, &d));
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int32_t aware = -1;
  OK(gtstorage_mpi_gpu_aware(&aware));
  CHECK(aware == 0 || aware == 1, "gpu_aware %d", aware);
  CHECK(gtstorage_mpi_version() == gtstorage_version(), "component and core versions differ");

  decomposition_cases();
  host_cases();
  device_cases();
  bad_input_cases();

  /* Everything the tests made was given back: no storage, view, wrap or pack buffer of an
   * exchange is left (LeakSanitizer cannot say it here: the MPI library's own allocations are
   * still reachable only from unloaded components at exit). */
  check_nothing_left();

  /* An exchange that outlives MPI: one made now, used after MPI_Finalize (on every process). */
  config = "after MPI_Finalize";
  grid g;
  const int64_t global[2] = {9, 6};
  const field_spec spec = {"<f8", "gt:cpu_kfirst", NULL, {{1, 1}, {1, 1}, {0, 0}}, 2, HOST};
  field f;
  gtstorage_exchange ex = 0, ran = 0;
  OK(make_grid(&g, 2, "I,J", NULL, NULL, global));
  make_field(&g, &f, &spec, 1);
  gtstorage_exchange_options eo = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
  OK(gtstorage_exchange_create(g.d, &f.h, 1, &eo, &ex));
  OK(gtstorage_exchange_create(g.d, &f.h, 1, &eo, &ran));
  OK(gtstorage_exchange_run(ran)); /* a completed step: nothing in flight at MPI_Finalize */

  int all_checks = 0;
  const int total = failures_of_all(&all_checks);
  if (rank_ == 0) {
    printf("%d processes: %d checks, %d failed\n", size_, all_checks, total);
  }
  MPI_Finalize();

  /* No MPI call after MPI_Finalize: every step refuses with a status, and the handles still go
   * back. Counted on each process (no MPI left to add them up). */
  const int before = failures;
  int32_t done = -1;
  FAILS(GTSTORAGE_ERROR_COMMUNICATION, "gtstorage_exchange_start: MPI is already finalized",
        gtstorage_exchange_start(ex));
  FAILS(GTSTORAGE_ERROR_COMMUNICATION, "gtstorage_exchange_start: MPI is already finalized",
        gtstorage_exchange_run(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "is not in flight", gtstorage_exchange_wait(ex));
  FAILS(GTSTORAGE_ERROR_INVALID_ARGUMENT, "is not in flight", gtstorage_exchange_test(ex, &done));
  OK(gtstorage_exchange_release(ex));
  OK(gtstorage_exchange_release(ran));
  free_field(&f);
  OK(gtstorage_decomp_release(g.d));
  if (failures != before)
    printf("rank %d: %d checks after MPI_Finalize failed\n", rank_, failures - before);
  return total == 0 && failures == before ? 0 : 1;
}
