/* Robustness campaign: with a fixed seed, a long random sequence of calls to every public entry
 * point of gtstorage.h with a mix of valid and invalid arguments (NULL pointers, wrong
 * struct_size, out-of-range ndim/enums, negative/huge extents, garbage dtypes/dims/presets,
 * non-permutation layouts, bad halos/alignments, extreme slice specs, stale/random handles, bad
 * sync ops/flags/sides/streams), on the emulated device backend so device paths run too.
 *
 * After every call: the status is GTSTORAGE_OK or one of the documented negative statuses
 * (GTSTORAGE_ERROR_INTERNAL counts as a bug); gtstorage_last_error() is "" after success and
 * non-empty (at most 1023 chars) after failure; outputs are untouched on failure; and the live
 * handle/buffer counts of gtstorage_get_stats() equal this test's own bookkeeping (handles,
 * views, DLPack tensors keeping buffers alive, wrap release callbacks called exactly once after
 * the last reference). At the end everything is released and the counts must be zero.
 *
 * Memory safety of the test itself: only valid pointers are passed. Caller arrays (copy
 * sources/destinations, wrapped memory) are given a data pointer such that the byte span their
 * shape and strides describe lies inside memory the test owns; a wrap whose geometry does not
 * fit (huge or negative extents) is only created, described and released, never read or written.
 *
 * Environment: GTSTORAGE_FUZZ_SEED (default 20260101), GTSTORAGE_FUZZ_STEPS (default 500000),
 * GTSTORAGE_FUZZ_TRACE=1 prints each call before it is made (the last line names the culprit).
 */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* cmocka must come after the headers above */
#include <cmocka.h>

#include "cmocka_main.h"
#include "dlpack/dlpack.h"
/* The suites use the experimental tier (refcounts, counter resets, backend switching) and
 * also cover the deprecated sync spellings, which stay supported within the major version. */
#define GTSTORAGE_NO_DEPRECATION_WARNINGS
#include "gtstorage/gtstorage_experimental.h"

/* ---------------------------------------------------------------------------------------------- */
/* Random numbers (splitmix64: tiny, good enough, identical everywhere). */

static uint64_t rng_state;

static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) {
  return n == 0 ? 0 : rnd() % n;
}

static int chance(unsigned pct) {
  return below(100) < pct;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define PICK(a) ((a)[below(COUNT(a))])

static const int64_t interesting_i64[] = {0,
                                          1,
                                          -1,
                                          2,
                                          -2,
                                          3,
                                          7,
                                          16,
                                          255,
                                          INT32_MAX,
                                          (int64_t)INT32_MAX + 1,
                                          INT32_MIN,
                                          (int64_t)1 << 31,
                                          (int64_t)1 << 32,
                                          (int64_t)1 << 40,
                                          -((int64_t)1 << 40),
                                          (int64_t)1 << 62,
                                          INT64_MAX,
                                          INT64_MAX - 1,
                                          INT64_MIN,
                                          INT64_MIN + 1};

static int64_t wild_i64(void) {
  return chance(80) ? PICK(interesting_i64) : (int64_t)rnd();
}

static int32_t wild_i32(void) {
  static const int32_t v[] = {0, 1, -1, 2, 3, 4, 5, 10, 11, 16, 17, 99, INT32_MAX, INT32_MIN};
  return chance(85) ? PICK(v) : (int32_t)rnd();
}

/* An enum-like argument: pct% of the time one of the n values from lo, else a wild one. */
static int32_t pick_i32(unsigned pct, int32_t lo, uint64_t n) {
  return chance(pct) ? lo + (int32_t)below(n) : wild_i32();
}

/* struct_size: right most of the time, else 0, off by a bit, or absurd. */
static uint32_t struct_size_of(size_t right) {
  if (chance(92)) return (uint32_t)right;
  const uint32_t v[] = {0, (uint32_t)right - 8, (uint32_t)right + 8, (uint32_t)right - 1,
                        1, UINT32_MAX};
  return PICK(v);
}

/* ---------------------------------------------------------------------------------------------- */
/* Reporting. Every call is described in g_desc first, so a failure names it. */

static uint64_t g_seed;
static long g_step;
static long g_calls;
static int g_trace;
static char g_desc[512];

static void describe(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_desc, sizeof g_desc, fmt, ap);
  va_end(ap);
  if (g_trace) fprintf(stderr, "[step %ld] %s\n", g_step, g_desc);
}

#define BUG(...)                                                                             \
  do {                                                                                       \
    char what_[512];                                                                         \
    snprintf(what_, sizeof what_, __VA_ARGS__);                                              \
    fail_msg("seed %llu step %ld call '%s': %s", (unsigned long long)g_seed, g_step, g_desc, \
             what_);                                                                         \
  } while (0)

static int documented(int rc) {
  return rc == GTSTORAGE_OK ||
         (rc <= GTSTORAGE_ERROR_INVALID_ARGUMENT && rc >= GTSTORAGE_ERROR_BUFFER_TOO_SMALL);
}

/* Per entry point: calls that succeeded / failed (printed at the end, to show coverage). */
enum { MAX_NAMES = 64 };
static char tally_name[MAX_NAMES][48];
static long tally_ok[MAX_NAMES], tally_fail[MAX_NAMES];
static int ntally;

static void tally(int rc) {
  char name[48];
  size_t n = strcspn(g_desc, "( ");
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, g_desc, n);
  name[n] = '\0';
  int k = 0;
  while (k < ntally && strcmp(tally_name[k], name) != 0) ++k;
  if (k == ntally) {
    if (ntally == MAX_NAMES) return;
    memcpy(tally_name[ntally++], name, n + 1);
  }
  if (rc == GTSTORAGE_OK)
    ++tally_ok[k];
  else
    ++tally_fail[k];
}

/* Checks the status and the thread-local message of the call just made. */
static int checked(int rc) {
  ++g_calls;
  tally(rc);
  if (!documented(rc)) {
    BUG("status %d (%s) is not a documented status (or is INTERNAL): '%s'", rc,
        gtstorage_status_name(rc), gtstorage_last_error());
  }
  const char* msg = gtstorage_last_error();
  if (msg == NULL) BUG("gtstorage_last_error() returned NULL");
  const size_t n = strnlen(msg, 1024);
  if (rc == GTSTORAGE_OK && n != 0) BUG("success but last_error is '%s'", msg);
  if (rc != GTSTORAGE_OK && n == 0)
    BUG("status %s but last_error is empty", gtstorage_status_name(rc));
  if (n > 1023) BUG("last_error is not NUL-terminated within 1024 bytes");
  return rc;
}

static void expect_fail(int rc, const char* why) {
  if (rc == GTSTORAGE_OK) BUG("succeeded although %s", why);
}

static void expect_status(int rc, int want, const char* why) {
  if (rc != want)
    BUG("status %s, expected %s (%s)", gtstorage_status_name(rc), gtstorage_status_name(want), why);
}

/* On failure, an output must be left as it was. */
#define PRESET_OUT(obj) memset(&(obj), 0xA5, sizeof(obj))
static int untouched(const void* p, size_t n) {
  const unsigned char* c = (const unsigned char*)p;
  for (size_t i = 0; i < n; ++i)
    if (c[i] != 0xA5) return 0;
  return 1;
}
#define CHECK_UNTOUCHED_ON_FAIL(rc, obj)                         \
  do {                                                           \
    if ((rc) != GTSTORAGE_OK && !untouched(&(obj), sizeof(obj))) \
      BUG("failed but modified its output");                     \
  } while (0)

/* ---------------------------------------------------------------------------------------------- */
/* Bookkeeping of what should be alive. */

enum { MAX_LIVE = 160, MAX_GROUPS = 256, MAX_DL = 24, MAX_DEAD = 64 };

/* A group is one set of buffers (one create or wrap), shared by its views and DLPack tensors. */
typedef struct group {
  int used;
  int users; /* live handles + live DLPack tensors over these buffers */
  int has_cb;
  int cb_calls;
  void* mem[2]; /* wrapped host / device memory owned by the test */
} group;

typedef struct hrec {
  gtstorage_handle h;
  int64_t refs;
  int group;
  uint32_t ndim;
  int64_t shape[GTSTORAGE_MAX_NDIM];
  int64_t itemsize;
} hrec;

typedef struct dlrec {
  int versioned;
  void* tensor;
  int group;
} dlrec;

static group groups[MAX_GROUPS];
static hrec live[MAX_LIVE];
static int nlive;
static dlrec dls[MAX_DL];
static int ndl;
static gtstorage_handle dead[MAX_DEAD];
static int ndead;
static int64_t expected_buffers;

static void on_release(void* user_data) {
  group* g = (group*)user_data;
  g->cb_calls++;
}

static int new_group(void) {
  for (int i = 0; i < MAX_GROUPS; ++i) {
    if (!groups[i].used) {
      memset(&groups[i], 0, sizeof groups[i]);
      groups[i].used = 1;
      return i;
    }
  }
  fail_msg("test bookkeeping: out of groups");
  return -1;
}

static void free_group(int gi) {
  group* g = &groups[gi];
  free(g->mem[0]);
  free(g->mem[1]);
  memset(g, 0, sizeof *g);
}

static void add_user(int gi) {
  if (groups[gi].users++ == 0) ++expected_buffers;
}

static void drop_user(int gi) {
  group* g = &groups[gi];
  if (--g->users > 0) return;
  --expected_buffers;
  if (g->cb_calls != (g->has_cb ? 1 : 0)) {
    BUG("buffers released: release callback ran %d times (expected %d)", g->cb_calls,
        g->has_cb ? 1 : 0);
  }
  free_group(gi);
}

static void remember_dead(gtstorage_handle h) {
  dead[ndead % MAX_DEAD] = h;
  ++ndead;
}

/* Describes a new handle with gtstorage_interface (host side, else device side). */
static void fill_geometry(hrec* r) {
  gtstorage_interface_info info;
  info.struct_size = sizeof info;
  describe("gtstorage_interface(%#llx, HOST) of a new handle", (unsigned long long)r->h);
  int rc = checked(gtstorage_interface(r->h, GTSTORAGE_SIDE_HOST, &info));
  if (rc == GTSTORAGE_ERROR_NO_SUCH_BUFFER) {
    describe("gtstorage_interface(%#llx, DEVICE) of a new handle", (unsigned long long)r->h);
    rc = checked(gtstorage_interface(r->h, GTSTORAGE_SIDE_DEVICE, &info));
  }
  if (rc != GTSTORAGE_OK) BUG("a new handle has no side that gtstorage_interface describes");
  if (info.ndim > GTSTORAGE_MAX_NDIM) BUG("interface ndim %u", info.ndim);
  r->ndim = info.ndim;
  memcpy(r->shape, info.shape, sizeof r->shape);
  r->itemsize = info.itemsize;
  if (info.itemsize < 1 || info.itemsize > 16)
    BUG("interface itemsize %lld", (long long)info.itemsize);
}

static void track_new_handle(gtstorage_handle h, int gi) {
  if (h == GTSTORAGE_NULL_HANDLE) BUG("success but the new handle is 0");
  for (int i = 0; i < nlive; ++i)
    if (live[i].h == h) BUG("new handle %#llx equals a live one", (unsigned long long)h);
  if (nlive >= MAX_LIVE) fail_msg("test bookkeeping: too many live handles");
  hrec* r = &live[nlive++];
  memset(r, 0, sizeof *r);
  r->h = h;
  r->refs = 1;
  r->group = gi;
  add_user(gi);
  fill_geometry(r);
}

static void forget_handle(int i) {
  const int gi = live[i].group;
  remember_dead(live[i].h);
  live[i] = live[--nlive];
  drop_user(gi);
}

/* Checks the library's live counts against the bookkeeping. */
static void verify_counts(void) {
  gtstorage_stats st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  snprintf(g_desc, sizeof g_desc, "gtstorage_get_stats (verification)");
  checked(gtstorage_get_stats(&st));
  if (st.live_handles != nlive) {
    BUG("live_handles %lld, bookkeeping says %d", (long long)st.live_handles, nlive);
  }
  if (st.live_buffers != expected_buffers) {
    BUG("live_buffers %lld, bookkeeping says %lld", (long long)st.live_buffers,
        (long long)expected_buffers);
  }
  for (int i = 0; i < MAX_GROUPS; ++i) {
    if (groups[i].used && groups[i].cb_calls != 0) {
      BUG("release callback of a wrap ran while %d references remain", groups[i].users);
    }
  }
}

/* A handle argument: usually live, else released, 0, random, or a forged neighbour of a live one.
 * Returns the index in live[] or -1 for an invalid handle. */
static int pick_handle(gtstorage_handle* h) {
  const unsigned r = (unsigned)below(100);
  if (nlive > 0 && r < 78) {
    const int i = (int)below((uint64_t)nlive);
    *h = live[i].h;
    return i;
  }
  if (ndead > 0 && r < 88) {
    const gtstorage_handle c = dead[below(ndead < MAX_DEAD ? (uint64_t)ndead : MAX_DEAD)];
    /* A released slot may have been reissued under a new generation: still invalid. */
    *h = c;
  } else if (r < 92) {
    *h = GTSTORAGE_NULL_HANDLE;
  } else if (r < 96 || nlive == 0) {
    *h = rnd();
  } else {
    const gtstorage_handle base = live[below((uint64_t)nlive)].h;
    const gtstorage_handle forged[] = {base + ((uint64_t)2 << 32), base + ((uint64_t)1 << 32),
                                       base & 0xffffffffull, base + 0x100000, base ^ 0xffffffffull};
    *h = PICK(forged);
  }
  for (int i = 0; i < nlive; ++i)
    if (live[i].h == *h) return i;
  return -1;
}

/* ---------------------------------------------------------------------------------------------- */
/* Argument generators. */

typedef struct dtype_choice {
  const char* s;
  int64_t itemsize; /* 16 (the largest) for strings the library must reject */
} dtype_choice;

static const dtype_choice dtypes[] = {
    {"<f8", 8},
    {"<f4", 4},
    {"<f2", 2},
    {"<i1", 1},
    {"<i2", 2},
    {"<i4", 4},
    {"<i8", 8},
    {"<u1", 1},
    {"<u2", 2},
    {"<u4", 4},
    {"<u8", 8},
    {"|b1", 1},
    {"<c8", 8},
    {"<c16", 16},
    {"|i1", 1},
    {"=f8", 8},
    {"|u1", 1},
    {"=c16", 16},
    {">f8", 16},
    {"<f16", 16},
    {"<f3", 16},
    {"", 16},
    {"f8", 16},
    {"<x4", 16},
    {"<i", 16},
    {"<c32", 16},
    {"<b2", 16},
    {"<f8 ", 16},
    {"<f08", 16},
    {"<i0", 16},
    {"<", 16},
    {"|", 16},
    {"<f-8", 16},
    {"<f999999999999999999", 16},
    {"\xff\xfe", 16},
    {"<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8<f8", 16}};

/* A dtype for a storage: NULL (= <f8) or one of the table. */
static const char* pick_dtype(int64_t* itemsize) {
  if (chance(25)) {
    *itemsize = 8;
    return NULL;
  }
  const dtype_choice* c = chance(85) ? &dtypes[below(18)] : &PICK(dtypes);
  *itemsize = c->itemsize;
  return c->s;
}

static const char* pick_dims(uint32_t ndim, char* buf, size_t size) {
  static const char* const fixed[] = {"IJK",
                                      "KJI",
                                      "IJ",
                                      "I",
                                      "JK",
                                      "IJK0",
                                      "I,J,K,0,1",
                                      "",
                                      "IIK",
                                      "X",
                                      "I,,J",
                                      "0,0",
                                      "I,J,K,99",
                                      ",",
                                      "ijk",
                                      "IJKL",
                                      "0,1,2",
                                      "K,J,I,1",
                                      "I,J,K,0,1,2,3,4,5,6,7,8,9,10,11,12"};
  const unsigned r = (unsigned)below(100);
  if (r < 35) return NULL;
  if (r < 75 && ndim >= 1 && ndim <= GTSTORAGE_MAX_NDIM) {
    /* A valid list for ndim: some of I, J, K (shuffled) then data dims, comma separated. */
    const char* spatial[3] = {"I", "J", "K"};
    for (int i = 2; i > 0; --i) {
      const int j = (int)below((uint64_t)i + 1);
      const char* t = spatial[i];
      spatial[i] = spatial[j];
      spatial[j] = t;
    }
    const uint32_t nsp = (uint32_t)below(ndim < 3 ? ndim + 1 : 4);
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t d = 0; d < ndim; ++d) {
      char label[8];
      if (d < nsp)
        snprintf(label, sizeof label, "%s", spatial[d]);
      else
        snprintf(label, sizeof label, "%u", d - nsp);
      len += (size_t)snprintf(buf + len, size - len, "%s%s", d ? "," : "", label);
    }
    return buf;
  }
  return PICK(fixed);
}

static const char* preset_names[64];
static int npreset_names;
static const char* const fuzz_presets[] = {"fuzz:a", "fuzz:b", "fuzz:gpu", "fuzz:c"};

static const char* pick_preset(void) {
  static const char* const garbage[] = {"",
                                        "nope",
                                        "gt:cpu_kfirstX",
                                        "GT:CPU_KFIRST",
                                        "numpy ",
                                        "0123456789012345678901234567890123456789"};
  const unsigned r = (unsigned)below(100);
  if (r < 30) return NULL;
  if (r < 80 && npreset_names > 0) return preset_names[below((uint64_t)npreset_names)];
  if (r < 90) return PICK(fuzz_presets);
  return PICK(garbage);
}

static int64_t pick_alignment(void) {
  const unsigned r = (unsigned)below(100);
  if (r < 40) return 0;
  if (r < 80) return (int64_t)1 << below(41);
  const int64_t bad[] = {3, -8, 6, 1000, INT64_MIN, INT64_MAX, -1, ((int64_t)1 << 62)};
  return PICK(bad);
}

/* ndim for a storage: mostly 1 … 4, sometimes up to 16, sometimes invalid. */
static uint32_t pick_ndim(void) {
  const unsigned r = (unsigned)below(100);
  if (r < 80) return 1 + (uint32_t)below(4);
  if (r < 90) return 1 + (uint32_t)below(GTSTORAGE_MAX_NDIM);
  const uint32_t bad[] = {0, 17, 18, 64, 1000, UINT32_MAX, 0x80000000u, (1u << 30) + 1};
  return PICK(bad);
}

/* Extents: small valid ones, and sometimes zero, negative or huge. Filled for 17 entries. */
static void pick_shape(int64_t* shape, uint32_t ndim, int allow_zero) {
  const int wild = chance(12);
  const int64_t cap = ndim > 4 ? 2 : 8;
  for (uint32_t d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) {
    shape[d] = (allow_zero && chance(3) ? 0 : 1) + (int64_t)below((uint64_t)cap);
    if (wild && (d >= ndim || chance(40))) shape[d] = wild_i64();
  }
}

static void pick_halo(int64_t* halo, const int64_t* shape, uint32_t ndim) {
  const int wild = chance(10);
  for (uint32_t d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) {
    const int64_t ext = d < ndim ? shape[d] : 1;
    const int64_t room = ext > 0 && ext < 64 ? ext : 1;
    halo[2 * d] = (int64_t)below((uint64_t)(room + 1) / 2);
    halo[2 * d + 1] = (int64_t)below((uint64_t)(room + 1) / 2);
    if (wild && chance(40)) halo[2 * d + (d & 1)] = wild_i64();
  }
}

/* perm has room for GTSTORAGE_MAX_NDIM + 1 entries. */
static void pick_permutation(int32_t* perm, uint32_t n, int valid) {
  for (uint32_t d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) perm[d] = (int32_t)d;
  const uint32_t m = n < GTSTORAGE_MAX_NDIM + 1 ? n : GTSTORAGE_MAX_NDIM + 1;
  for (uint32_t i = m; i > 1; --i) {
    const uint32_t j = (uint32_t)below(i);
    const int32_t t = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = t;
  }
  if (!valid && m > 0) {
    const uint32_t d = (uint32_t)below(m);
    const int32_t bad[] = {-1, (int32_t)m, (int32_t)m + 5, INT32_MAX, INT32_MIN, perm[(d + 1) % m]};
    perm[d] = PICK(bad);
  }
}

/* Byte span [lo, hi) of a strided array (elements of at most `esz` bytes). Returns 0 if the
 * arithmetic overflows or an extent is negative (the span is then "does not fit"). *empty is set
 * if an extent is 0 (nothing is accessed). NULL strides = C-contiguous with `itemsize`. */
static int span_of(uint32_t ndim, const int64_t* shape, const int64_t* strides, int64_t itemsize,
                   int64_t esz, int64_t* lo, int64_t* hi, int* empty) {
  int64_t l = 0, h = 0, cstride = itemsize;
  *empty = 0;
  for (uint32_t k = ndim; k-- > 0;) {
    if (shape[k] < 0) return 0;
    if (shape[k] == 0) *empty = 1;
  }
  if (*empty) {
    *lo = *hi = 0;
    return 1;
  }
  for (uint32_t k = ndim; k-- > 0;) {
    int64_t s = cstride;
    if (strides != NULL) s = strides[k];
    int64_t reach;
    if (__builtin_mul_overflow(s, shape[k] - 1, &reach)) return 0;
    if (reach < 0) {
      if (__builtin_add_overflow(l, reach, &l)) return 0;
    } else {
      if (__builtin_add_overflow(h, reach, &h)) return 0;
    }
    if (__builtin_mul_overflow(cstride, shape[k], &cstride)) cstride = INT64_MAX / 2;
  }
  int64_t size;
  if (__builtin_add_overflow(h, esz, &h) || __builtin_sub_overflow(h, l, &size)) return 0;
  *lo = l;
  *hi = h;
  return 1;
}

static void pick_strides(int64_t* strides, const int64_t* shape, uint32_t ndim, int64_t itemsize) {
  /* Start from C order with optional padding/negation/permutation, then maybe break it. */
  int32_t order[GTSTORAGE_MAX_NDIM + 1];
  pick_permutation(order, ndim, 1);
  int64_t s = itemsize * (int64_t)(1 + below(2));
  const uint32_t m = ndim < GTSTORAGE_MAX_NDIM + 1 ? ndim : GTSTORAGE_MAX_NDIM + 1;
  for (uint32_t i = m; i-- > 0;) {
    const int32_t d = order[i];
    strides[d] = chance(15) ? -s : s;
    const int64_t ext = shape[d] > 0 && shape[d] < 1024 ? shape[d] : 1;
    s = s * ext + (chance(20) ? itemsize * (int64_t)below(3) : 0);
  }
  for (uint32_t d = m; d < GTSTORAGE_MAX_NDIM + 1; ++d) strides[d] = itemsize;
  if (chance(20) && m > 0) {
    const int64_t bad[] = {0,
                           1,
                           3,
                           -1,
                           itemsize + 1,
                           (int64_t)1 << 40,
                           INT64_MAX,
                           INT64_MIN,
                           -((int64_t)1 << 40),
                           itemsize * 1000003};
    strides[below(m)] = PICK(bad);
  }
}

/* Caller memory for copy sources/destinations and fill values. */
enum { SCRATCH_BYTES = 1 << 18 };
static unsigned char scratch[SCRATCH_BYTES] __attribute__((aligned(64)));
static unsigned char value16[16] __attribute__((aligned(16)));

/* Describes part of scratch as an array of the given geometry. Returns 1 if the array lies in
 * scratch (or is empty); else points at scratch anyway and returns 0 (the caller must then make
 * sure the call is rejected before memory is touched). */
static int place_in_scratch(gtstorage_array* a, const int64_t* shape, int64_t itemsize) {
  int64_t lo, hi;
  int empty;
  a->data = scratch;
  if (!span_of(a->ndim <= GTSTORAGE_MAX_NDIM ? a->ndim : 0, shape, a->strides, itemsize, 16, &lo,
               &hi, &empty)) {
    return 0;
  }
  if (empty) return 1;
  if (hi - lo > SCRATCH_BYTES) return 0;
  int64_t base = -lo;
  const int64_t slack = (SCRATCH_BYTES - (hi - lo)) / 16;
  base += 16 * (int64_t)below((uint64_t)slack + 1);
  a->data = scratch + base;
  return 1;
}

static int same_shape(uint32_t n, const int64_t* a, uint32_t m, const int64_t* b) {
  if (n != m) return 0;
  for (uint32_t d = 0; d < n; ++d)
    if (a[d] != b[d]) return 0;
  return 1;
}

/* An array argument for a copy to/from a storage of geometry r (NULL r: random). `shape` and
 * `strides` are storage for 17 entries. Ensures memory safety as described above. */
static void make_array(gtstorage_array* a, const hrec* r, int64_t* shape, int64_t* strides) {
  gtstorage_array init = GTSTORAGE_ARRAY_INIT;
  *a = init;
  a->struct_size = struct_size_of(sizeof *a);
  int64_t itemsize = r ? r->itemsize : 8;
  if (chance(70)) {
    a->dtype = NULL;
  } else {
    a->dtype = pick_dtype(&itemsize);
    /* A NULL array dtype means the storage's dtype (pick_dtype's 8 is the create default). */
    if (a->dtype == NULL && r != NULL) itemsize = r->itemsize;
  }
  if (r != NULL && chance(80)) {
    a->ndim = r->ndim;
    for (uint32_t d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) shape[d] = d < r->ndim ? r->shape[d] : 1;
    if (chance(10) && r->ndim > 0) {
      const uint64_t d = below(r->ndim);
      shape[d] = (shape[d] < INT64_MAX - 1 && chance(50)) || shape[d] == INT64_MIN ? shape[d] + 1
                                                                                   : shape[d] - 1;
    }
  } else {
    a->ndim = chance(90) ? (uint32_t)below(5) : pick_ndim();
    pick_shape(shape, a->ndim, 1);
  }
  a->shape = chance(97) ? shape : NULL;
  if (chance(50)) {
    pick_strides(strides, shape, a->ndim <= GTSTORAGE_MAX_NDIM ? a->ndim : 0, itemsize);
    a->strides = strides;
  }
  const int fits = place_in_scratch(a, shape, itemsize);
  if (chance(2)) a->data = NULL;
  if (!fits) {
    const int mismatch =
        r == NULL || a->shape == NULL || !same_shape(a->ndim, a->shape, r->ndim, r->shape);
    if (!mismatch || r == NULL) a->struct_size = 0; /* must be rejected up front */
  }
}

/* ---------------------------------------------------------------------------------------------- */
/* Operations. */

/* The fields that create and wrap options share, drawn alike for both (in this order):
 * struct_size, ndim, the extents in `shape` (zero ones too if allow_zero), the shape pointer,
 * the dtype with its `itemsize`, and the dims written into the char array `dims_buf`. */
#define PICK_GEOMETRY(o, shape, allow_zero, itemsize, dims_buf) \
  do {                                                          \
    (o).struct_size = struct_size_of(sizeof(o));                \
    (o).ndim = pick_ndim();                                     \
    pick_shape(shape, (o).ndim, allow_zero);                    \
    (o).shape = chance(98) ? (shape) : NULL;                    \
    (itemsize) = 8;                                             \
    (o).dtype = pick_dtype(&(itemsize));                        \
    (o).dims = pick_dims((o).ndim, dims_buf, sizeof(dims_buf)); \
  } while (0)

static void op_create(void) {
  int64_t shape[GTSTORAGE_MAX_NDIM + 1], halo[2 * (GTSTORAGE_MAX_NDIM + 1)],
      aligned[GTSTORAGE_MAX_NDIM + 1];
  int32_t layout[GTSTORAGE_MAX_NDIM + 1];
  int64_t src_shape[GTSTORAGE_MAX_NDIM + 1], src_strides[GTSTORAGE_MAX_NDIM + 1];
  char dims_buf[128];
  gtstorage_array source;
  gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
  int64_t itemsize;
  PICK_GEOMETRY(o, shape, 0, itemsize, dims_buf);
  o.preset = pick_preset();
  if (chance(30)) {
    pick_permutation(layout, o.ndim, chance(80));
    o.layout = layout;
  }
  if (chance(40)) {
    pick_halo(halo, shape, o.ndim);
    o.halo = halo;
  }
  if (chance(20)) {
    for (uint32_t d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) {
      const int64_t ext = d < o.ndim ? shape[d] : 1;
      aligned[d] = chance(90) && ext > 0 ? (int64_t)below((uint64_t)ext) : wild_i64();
    }
    o.aligned_index = aligned;
  }
  o.alignment_bytes = pick_alignment();
  o.init = pick_i32(90, 0, 5);
  o.device = pick_i32(92, 0, 3);
  o.device_id = pick_i32(90, -1, 3);
  o.managed = pick_i32(92, 0, 4);
  o.host_memory = pick_i32(92, 0, 2);
  o.readonly = chance(85) ? 0 : (chance(50) ? 1 : wild_i32());
  o.pool = pick_i32(92, 0, 2); /* read only by 1.1 callers */
  o.fill_value = chance(95) ? value16 : NULL;
  if (o.init == GTSTORAGE_INIT_COPY && chance(95)) {
    hrec fake;
    memset(&fake, 0, sizeof fake);
    fake.ndim = o.ndim <= GTSTORAGE_MAX_NDIM ? o.ndim : 0;
    memcpy(fake.shape, shape, sizeof fake.shape);
    fake.itemsize = itemsize;
    /* (If ndim or shape are invalid, the plan fails before anything is copied.) */
    make_array(&source, &fake, src_shape, src_strides);
    o.source = &source;
  }
  if (chance(45)) {
    /* Half of the creates are fully valid, so there is something to view, copy and sync. */
    o.struct_size = sizeof o;
    o.ndim = 1 + (uint32_t)below(4);
    for (uint32_t d = 0; d < o.ndim; ++d) shape[d] = 1 + (int64_t)below(8);
    o.shape = shape;
    o.dtype = dtypes[below(14)].s;
    o.dims = NULL;
    o.preset =
        npreset_names > 0 && chance(70) ? preset_names[below((uint64_t)npreset_names)] : NULL;
    if (o.layout != NULL) pick_permutation(layout, o.ndim, 1);
    if (o.halo != NULL) {
      for (uint32_t d = 0; d < o.ndim; ++d) {
        halo[2 * d] = (int64_t)below((uint64_t)(shape[d] + 1) / 2);
        halo[2 * d + 1] = (int64_t)below((uint64_t)(shape[d] + 1) / 2);
      }
    }
    o.aligned_index = NULL;
    o.alignment_bytes = chance(50) ? 0 : (int64_t)16 << below(4);
    o.init = (int32_t)below(4);
    o.source = NULL;
    o.fill_value = value16;
    o.device = (int32_t)below(3);
    o.device_id = (int32_t)below(3) - 1;
    o.managed = o.device == GTSTORAGE_DEVICE_GPU ? (int32_t)below(4) : GTSTORAGE_MANAGED_DEFAULT;
    o.host_memory = (int32_t)below(2);
    o.readonly = chance(10);
    o.pool = (int32_t)below(2);
  }

  /* The plan first: it says how much create would allocate. */
  gtstorage_plan_info plan;
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  describe("gtstorage_plan(ndim=%u shape0=%lld dtype=%s dims=%s preset=%s align=%lld dev=%d)",
           o.ndim, o.shape ? (long long)shape[0] : -1LL, o.dtype ? o.dtype : "NULL",
           o.dims ? o.dims : "NULL", o.preset ? o.preset : "NULL", (long long)o.alignment_bytes,
           o.device);
  const int prc = checked(gtstorage_plan(&o, &plan));
  if (prc == GTSTORAGE_OK) {
    if (plan.ndim != o.ndim) BUG("plan ndim %u for ndim %u", plan.ndim, o.ndim);
    if (plan.allocation_bytes < 0)
      BUG("plan allocation_bytes %lld", (long long)plan.allocation_bytes);
    if (plan.allocation_bytes > (1 << 20) && plan.allocation_bytes <= ((int64_t)1 << 47)) {
      return; /* would really allocate (and fill) a large block: skip */
    }
  }

  gtstorage_handle out;
  PRESET_OUT(out);
  const int gi = new_group();
  describe(
      "gtstorage_create(ndim=%u shape=[%lld,%lld,..] dtype=%s dims=%s preset=%s layout=%s "
      "halo=%s align=%lld init=%d device=%d device_id=%d managed=%d host_memory=%d "
      "readonly=%d source=%s, plan %s)",
      o.ndim, o.shape ? (long long)shape[0] : -1LL, o.shape ? (long long)shape[1] : -1LL,
      o.dtype ? o.dtype : "NULL", o.dims ? o.dims : "NULL", o.preset ? o.preset : "NULL",
      o.layout ? "set" : "NULL", o.halo ? "set" : "NULL", (long long)o.alignment_bytes, o.init,
      o.device, o.device_id, o.managed, o.host_memory, o.readonly, o.source ? "set" : "NULL",
      gtstorage_status_name(prc));
  const int rc = checked(chance(2) ? gtstorage_create(chance(50) ? NULL : &o, NULL)
                                   : gtstorage_create(chance(1) ? NULL : &o, &out));
  CHECK_UNTOUCHED_ON_FAIL(rc, out);
  if (prc != GTSTORAGE_OK) expect_fail(rc, "gtstorage_plan rejected the same options");
  if (rc != GTSTORAGE_OK) {
    free_group(gi);
    return;
  }
  track_new_handle(out, gi);
  const hrec* r = &live[nlive - 1];
  if (!same_shape(r->ndim, r->shape, o.ndim, shape)) BUG("created storage has another shape");
}

static void op_wrap(void) {
  int64_t shape[GTSTORAGE_MAX_NDIM + 1], strides[GTSTORAGE_MAX_NDIM + 1],
      dstrides[GTSTORAGE_MAX_NDIM + 1], halo[2 * (GTSTORAGE_MAX_NDIM + 1)];
  char dims_buf[128];
  static unsigned char dummy[64] __attribute__((aligned(64)));
  gtstorage_wrap_options o = GTSTORAGE_WRAP_OPTIONS_INIT;
  int64_t itemsize;
  PICK_GEOMETRY(o, shape, 1, itemsize, dims_buf);
  if (chance(30)) {
    pick_halo(halo, shape, o.ndim);
    o.halo = halo;
  }
  uint32_t gndim = o.ndim <= GTSTORAGE_MAX_NDIM ? o.ndim : 0;
  if (chance(50)) {
    pick_strides(strides, shape, gndim, itemsize);
    o.strides = strides;
  }
  const unsigned sides = (unsigned)below(100); /* <70 host only, <85 host+device, else device */
  const int want_host = sides < 85 || chance(3);
  const int want_device = sides >= 70;
  if (want_device && chance(50)) {
    pick_strides(dstrides, shape, gndim, itemsize);
    o.device_strides = dstrides;
  }
  o.readonly = chance(85) ? 0 : 1;
  o.device_id = pick_i32(90, -1, 3);
  o.sync_state = pick_i32(92, 0, 3);
  o.reserved = chance(97) ? 0 : 1;
  if (chance(40)) {
    /* A fully valid wrap of small extents. */
    o.struct_size = sizeof o;
    o.ndim = 1 + (uint32_t)below(4);
    for (uint32_t d = 0; d < o.ndim; ++d) shape[d] = 1 + (int64_t)below(6);
    o.shape = shape;
    const dtype_choice* c = &dtypes[below(14)];
    o.dtype = c->s;
    itemsize = c->itemsize;
    gndim = o.ndim;
    o.dims = NULL;
    o.halo = NULL;
    o.device_id = -1;
    o.sync_state = (int32_t)below(3);
    o.reserved = 0;
    if (o.strides != NULL) pick_strides(strides, shape, o.ndim, itemsize);
    if (o.device_strides != NULL) pick_strides(dstrides, shape, o.ndim, itemsize);
  }

  /* Memory for each side, sized by the span this test computes itself. */
  int fits = 1;
  void* mem[2] = {NULL, NULL};
  for (int s = 0; s < 2; ++s) {
    if (!(s == 0 ? want_host : want_device)) continue;
    const int64_t* st = s == 0 ? o.strides : (o.device_strides ? o.device_strides : o.strides);
    int64_t lo = 0, hi = 0;
    int empty = 0;
    const int ok = o.shape != NULL && o.ndim <= GTSTORAGE_MAX_NDIM &&
                   span_of(gndim, shape, st, itemsize, 16, &lo, &hi, &empty);
    void* data;
    if (ok && (empty || hi - lo <= (1 << 16))) {
      mem[s] = malloc(empty ? 16 : (size_t)(hi - lo));
      if (mem[s] == NULL) fail_msg("malloc");
      data = (unsigned char*)mem[s] + (empty ? 0 : -lo);
    } else {
      fits = 0;
      data = dummy;
    }
    if (s == 0)
      o.data = data;
    else
      o.device_data = data;
  }
  if (chance(2)) o.data = o.device_data = NULL;
  const int gi = new_group();
  groups[gi].mem[0] = mem[0];
  groups[gi].mem[1] = mem[1];
  if (chance(70)) {
    o.release = on_release;
    o.user_data = &groups[gi];
  }
  gtstorage_handle out;
  PRESET_OUT(out);
  describe(
      "gtstorage_wrap(ndim=%u shape=[%lld,%lld,..] strides=%s dtype=%s dims=%s halo=%s "
      "host=%d device=%d device_strides=%s sync_state=%d device_id=%d reserved=%d fits=%d)",
      o.ndim, o.shape ? (long long)shape[0] : -1LL, o.shape ? (long long)shape[1] : -1LL,
      o.strides ? "set" : "NULL", o.dtype ? o.dtype : "NULL", o.dims ? o.dims : "NULL",
      o.halo ? "set" : "NULL", o.data != NULL, o.device_data != NULL,
      o.device_strides ? "set" : "NULL", o.sync_state, o.device_id, o.reserved, fits);
  const int rc =
      checked(chance(2) ? gtstorage_wrap(chance(50) ? NULL : &o, NULL) : gtstorage_wrap(&o, &out));
  CHECK_UNTOUCHED_ON_FAIL(rc, out);
  if (groups[gi].cb_calls != 0) BUG("release callback ran during gtstorage_wrap");
  if (rc != GTSTORAGE_OK) {
    free_group(gi);
    return;
  }
  groups[gi].has_cb = o.release != NULL;
  track_new_handle(out, gi);
  if (!fits) {
    /* Geometry this test cannot back with memory: describe it, then release it at once. */
    gtstorage_interface_info info;
    info.struct_size = sizeof info;
    describe("gtstorage_interface(%#llx, DEVICE) of a wrap without backing memory",
             (unsigned long long)out);
    checked(gtstorage_interface(out, GTSTORAGE_SIDE_DEVICE, &info));
    verify_counts();
    describe("gtstorage_release(%#llx) of a wrap without backing memory", (unsigned long long)out);
    expect_status(checked(gtstorage_release(out)), GTSTORAGE_OK, "live handle");
    forget_handle(nlive - 1);
  }
}

static void op_retain(void) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  describe("gtstorage_retain(%#llx)", (unsigned long long)h);
  const int rc = checked(gtstorage_retain(h));
  if (i < 0) {
    expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
  } else {
    expect_status(rc, GTSTORAGE_OK, "live handle");
    live[i].refs++;
  }
}

static void op_release(void) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  describe("gtstorage_release(%#llx)", (unsigned long long)h);
  const int rc = checked(gtstorage_release(h));
  if (i < 0) {
    expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
    return;
  }
  expect_status(rc, GTSTORAGE_OK, "live handle");
  if (--live[i].refs == 0) forget_handle(i);
}

static void pick_slice(gtstorage_slice_spec* spec, const hrec* r) {
  for (int d = 0; d < GTSTORAGE_MAX_NDIM + 1; ++d) {
    const int64_t e = r && d < (int)r->ndim ? r->shape[d] : 4;
    gtstorage_slice_spec* s = &spec[d];
    const int64_t pos[] = {GTSTORAGE_SLICE_NONE,
                           0,
                           1,
                           -1,
                           e,
                           -e,
                           e - 1,
                           e < INT64_MAX ? e + 1 : e,
                           -e - 1,
                           INT64_MAX,
                           INT64_MIN + 1,
                           (int64_t)1 << 40};
    s->start = chance(85) ? (chance(50) ? (int64_t)below((uint64_t)(e > 0 ? e : 1)) : PICK(pos))
                          : wild_i64();
    s->stop = chance(85) ? (chance(50) ? (int64_t)below((uint64_t)(e > 0 ? e : 1) + 1) : PICK(pos))
                         : wild_i64();
    const int64_t steps[] = {1,
                             1,
                             1,
                             -1,
                             2,
                             -2,
                             3,
                             0,
                             INT64_MIN,
                             INT64_MAX,
                             INT64_MIN + 1,
                             (int64_t)1 << 40,
                             -((int64_t)1 << 40)};
    s->step = chance(60) ? 1 : PICK(steps);
    s->kind =
        chance(95) ? (chance(80) ? GTSTORAGE_SLICE_RANGE : GTSTORAGE_SLICE_INDEX) : wild_i32();
    s->reserved = chance(98) ? 0 : 1;
  }
}

static void new_view_result(int rc, int src_index, gtstorage_handle out) {
  CHECK_UNTOUCHED_ON_FAIL(rc, out);
  if (rc != GTSTORAGE_OK) return;
  if (src_index < 0) BUG("a view of an invalid handle succeeded");
  track_new_handle(out, live[src_index].group);
}

static void op_slice(void) {
  gtstorage_handle h, out;
  const int i = pick_handle(&h);
  gtstorage_slice_spec spec[GTSTORAGE_MAX_NDIM + 1];
  pick_slice(spec, i >= 0 ? &live[i] : NULL);
  uint32_t nspec = i >= 0 && chance(90) ? live[i].ndim : (uint32_t)wild_i32();
  const int null_spec = chance(3), null_out = chance(3);
  PRESET_OUT(out);
  describe("gtstorage_slice(%#llx, spec0={%lld,%lld,%lld,kind %d,res %d}, nspec=%u%s%s)",
           (unsigned long long)h, (long long)spec[0].start, (long long)spec[0].stop,
           (long long)spec[0].step, spec[0].kind, spec[0].reserved, nspec,
           null_spec ? ", spec NULL" : "", null_out ? ", out NULL" : "");
  const int rc =
      checked(gtstorage_slice(h, null_spec ? NULL : spec, nspec, null_out ? NULL : &out));
  new_view_result(rc, i, out);
}

static void op_transpose(void) {
  gtstorage_handle h, out;
  const int i = pick_handle(&h);
  int32_t perm[GTSTORAGE_MAX_NDIM + 1];
  uint32_t nperm = i >= 0 && chance(90) ? live[i].ndim : (uint32_t)wild_i32();
  pick_permutation(perm, nperm, chance(80));
  const int null_perm = chance(3), null_out = chance(3);
  PRESET_OUT(out);
  describe("gtstorage_transpose(%#llx, perm0=%d, nperm=%u%s%s)", (unsigned long long)h, perm[0],
           nperm, null_perm ? ", perm NULL" : "", null_out ? ", out NULL" : "");
  const int rc =
      checked(gtstorage_transpose(h, null_perm ? NULL : perm, nperm, null_out ? NULL : &out));
  new_view_result(rc, i, out);
}

static void op_domain_view(void) {
  gtstorage_handle h, out;
  const int i = pick_handle(&h);
  const int null_out = chance(3);
  PRESET_OUT(out);
  describe("gtstorage_domain_view(%#llx%s)", (unsigned long long)h, null_out ? ", out NULL" : "");
  const int rc = checked(gtstorage_domain_view(h, null_out ? NULL : &out));
  new_view_result(rc, i, out);
}

static int32_t pick_side(void) {
  return pick_i32(92, 0, 2);
}

/* ---------------------------------------------------------------------------------------------- */
/* Queries: calls that read into one output and change nothing. One row of `queries` each; they
 * share how the arguments are drawn (handle, side, struct_size, then a NULL output, in that
 * order), the described call and the checks on the output. */

/* Room for the output of any query. */
typedef union query_out {
  int64_t count;
  int32_t value;
  void* pointer;
  gtstorage_interface_info interface;
  gtstorage_transfer_stats transfer;
  gtstorage_stats stats;
} query_out;

/* What a query takes: a handle, a side; an output that begins with its struct_size. */
enum { Q_HANDLE = 1, Q_SIDE = 2, Q_SIZED = 4 };

typedef struct query {
  const char* name;
  unsigned args;
  unsigned null_pct; /* how often the output pointer is NULL */
  size_t out_size;   /* of the output type proper, not of query_out */
  int (*call)(gtstorage_handle h, int32_t side, query_out* out);
  /* What the result must satisfy beyond the common checks; NULL: nothing. i indexes live[]
   * (-1: an invalid handle). */
  void (*check)(int rc, int i, int null_out, const query_out* out);
} query;

typedef struct query_result {
  int rc;
  int null_out;
  query_out out;
} query_result;

static int call_refcount(gtstorage_handle h, int32_t side, query_out* out) {
  (void)side;
  return gtstorage_refcount(h, out ? &out->count : NULL);
}
static int call_interface(gtstorage_handle h, int32_t side, query_out* out) {
  return gtstorage_interface(h, side, out ? &out->interface : NULL);
}
static int call_data(gtstorage_handle h, int32_t side, query_out* out) {
  return gtstorage_data(h, side, out ? &out->pointer : NULL);
}
static int call_has_side(gtstorage_handle h, int32_t side, query_out* out) {
  return gtstorage_has_side(h, side, out ? &out->value : NULL);
}
static int call_sync_state(gtstorage_handle h, int32_t side, query_out* out) {
  (void)side;
  return gtstorage_get_sync_state(h, out ? &out->value : NULL);
}
static int call_transfer_stats(gtstorage_handle h, int32_t side, query_out* out) {
  (void)side;
  return gtstorage_get_transfer_stats(h, out ? &out->transfer : NULL);
}
static int call_preset_count(gtstorage_handle h, int32_t side, query_out* out) {
  (void)h, (void)side;
  return gtstorage_preset_count(out ? &out->value : NULL);
}
static int call_device_count(gtstorage_handle h, int32_t side, query_out* out) {
  (void)h, (void)side;
  return gtstorage_device_count(out ? &out->value : NULL);
}
static int call_get_device(gtstorage_handle h, int32_t side, query_out* out) {
  (void)h, (void)side;
  return gtstorage_get_device(out ? &out->value : NULL);
}
static int call_get_stats(gtstorage_handle h, int32_t side, query_out* out) {
  (void)h, (void)side;
  return gtstorage_get_stats(out ? &out->stats : NULL);
}

static void check_refcount(int rc, int i, int null_out, const query_out* out) {
  if (null_out) {
    expect_fail(rc, "out_count is NULL");
  } else if (i < 0) {
    expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
  } else {
    expect_status(rc, GTSTORAGE_OK, "live handle");
    if (out->count != live[i].refs)
      BUG("refcount %lld, expected %lld", (long long)out->count, (long long)live[i].refs);
  }
}
static void check_interface(int rc, int i, int null_out, const query_out* out) {
  const gtstorage_interface_info* info = &out->interface;
  (void)null_out;
  if (rc != GTSTORAGE_OK) return;
  if (!same_shape(info->ndim, info->shape, live[i].ndim, live[i].shape))
    BUG("interface shape differs from the handle's");
  if (info->itemsize != live[i].itemsize) BUG("interface itemsize changed");
  if (strnlen(info->typestr, sizeof info->typestr) == sizeof info->typestr)
    BUG("typestr not terminated");
}
static void check_has_side(int rc, int i, int null_out, const query_out* out) {
  (void)i, (void)null_out;
  if (rc == GTSTORAGE_OK && out->value != 0 && out->value != 1) BUG("has_side %d", out->value);
}
static void check_sync_state(int rc, int i, int null_out, const query_out* out) {
  (void)i, (void)null_out;
  if (rc == GTSTORAGE_OK && (out->value < 0 || out->value > 2))
    BUG("bad result, state %d", out->value);
}
static void check_transfer_stats(int rc, int i, int null_out, const query_out* out) {
  (void)i, (void)null_out;
  if (rc == GTSTORAGE_OK && (out->transfer.h2d_count < 0 || out->transfer.d2h_count < 0))
    BUG("bad result");
}
static void check_preset_count(int rc, int i, int null_out, const query_out* out) {
  (void)i, (void)null_out;
  if (rc == GTSTORAGE_OK && out->value < npreset_names)
    BUG("preset count shrank to %d", out->value);
}
static void check_device_count(int rc, int i, int null_out, const query_out* out) {
  (void)i, (void)null_out;
  if (rc == GTSTORAGE_OK && out->value < 0) BUG("device count %d", out->value);
}

enum {
  QUERY_REFCOUNT,
  QUERY_INTERFACE,
  QUERY_DATA,
  QUERY_HAS_SIDE,
  QUERY_SYNC_STATE,
  QUERY_TRANSFER_STATS,
  QUERY_PRESET_COUNT,
  QUERY_DEVICE_COUNT,
  QUERY_GET_DEVICE,
  QUERY_GET_STATS
};

static const query queries[] = {
    {"gtstorage_refcount", Q_HANDLE, 5, sizeof(int64_t), call_refcount, check_refcount},
    {"gtstorage_interface", Q_HANDLE | Q_SIDE | Q_SIZED, 3, sizeof(gtstorage_interface_info),
     call_interface, check_interface},
    {"gtstorage_data", Q_HANDLE | Q_SIDE, 4, sizeof(void*), call_data, NULL},
    {"gtstorage_has_side", Q_HANDLE | Q_SIDE, 4, sizeof(int32_t), call_has_side, check_has_side},
    {"gtstorage_get_sync_state", Q_HANDLE, 4, sizeof(int32_t), call_sync_state, check_sync_state},
    {"gtstorage_get_transfer_stats", Q_HANDLE | Q_SIZED, 3, sizeof(gtstorage_transfer_stats),
     call_transfer_stats, check_transfer_stats},
    {"gtstorage_preset_count", 0, 5, sizeof(int32_t), call_preset_count, check_preset_count},
    {"gtstorage_device_count", 0, 5, sizeof(int32_t), call_device_count, check_device_count},
    {"gtstorage_get_device", 0, 5, sizeof(int32_t), call_get_device, NULL},
    {"gtstorage_get_stats", Q_SIZED, 5, sizeof(gtstorage_stats), call_get_stats, NULL}};

/* Makes query q with drawn arguments; on failure its output must be untouched (but for the
 * struct_size the test wrote), on success its handle must have been a live one. */
static void run_query(const query* q, query_result* r) {
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  const int i = q->args & Q_HANDLE ? pick_handle(&h) : -1;
  const int32_t side = q->args & Q_SIDE ? pick_side() : 0;
  size_t kept = 0; /* leading bytes the test writes itself */
  char args[96];
  int n = 0;
  PRESET_OUT(r->out);
  args[0] = '\0';
  if (q->args & Q_HANDLE)
    n += snprintf(args + n, sizeof args - (size_t)n, "%#llx, ", (unsigned long long)h);
  if (q->args & Q_SIDE) n += snprintf(args + n, sizeof args - (size_t)n, "side %d, ", side);
  if (q->args & Q_SIZED) {
    const uint32_t size = struct_size_of(q->out_size);
    memcpy(&r->out, &size, sizeof size);
    kept = sizeof size;
    n += snprintf(args + n, sizeof args - (size_t)n, "struct_size %u, ", size);
  }
  r->null_out = chance(q->null_pct);
  describe("%s(%sout %s)", q->name, args, r->null_out ? "NULL" : "set");
  r->rc = checked(q->call(h, side, r->null_out ? NULL : &r->out));
  if (r->rc != GTSTORAGE_OK && !untouched((const unsigned char*)&r->out + kept, q->out_size - kept))
    BUG("failed but modified its output");
  if (r->rc == GTSTORAGE_OK && (q->args & Q_HANDLE) && i < 0) BUG("succeeded on an invalid handle");
  if (q->check != NULL) q->check(r->rc, i, r->null_out, &r->out);
}

static void op_copy(void) {
  gtstorage_handle d, s;
  const int di = pick_handle(&d);
  int si = -1;
  if (di >= 0 && chance(60)) {
    /* Prefer a source of the same shape (else nearly every copy is a shape mismatch). */
    const int start = (int)below((uint64_t)nlive);
    for (int k = 0; k < nlive; ++k) {
      const int j = (start + k) % nlive;
      if (same_shape(live[j].ndim, live[j].shape, live[di].ndim, live[di].shape)) {
        si = j;
        break;
      }
    }
    s = live[si].h;
  } else {
    si = pick_handle(&s);
  }
  describe("gtstorage_copy(dst %#llx, src %#llx)", (unsigned long long)d, (unsigned long long)s);
  const int rc = checked(gtstorage_copy(d, s));
  if (di < 0 || si < 0) expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
  if (rc == GTSTORAGE_OK &&
      !same_shape(live[di].ndim, live[di].shape, live[si].ndim, live[si].shape))
    BUG("copy between different shapes succeeded");
}

static void op_copy_array(int to_array) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  int64_t shape[GTSTORAGE_MAX_NDIM + 1], strides[GTSTORAGE_MAX_NDIM + 1];
  gtstorage_array a;
  make_array(&a, i >= 0 ? &live[i] : NULL, shape, strides);
  const int null_arr = chance(2);
  describe(
      "gtstorage_copy_%s_array(%#llx, array{size %u ndim %u shape %s strides %s dtype %s "
      "data %s}%s)",
      to_array ? "to" : "from", (unsigned long long)h, a.struct_size, a.ndim,
      a.shape ? "set" : "NULL", a.strides ? "set" : "NULL", a.dtype ? a.dtype : "NULL",
      a.data ? "set" : "NULL", null_arr ? ", array NULL" : "");
  const gtstorage_array* ap = null_arr ? NULL : &a;
  const int rc =
      checked(to_array ? gtstorage_copy_to_array(ap, h) : gtstorage_copy_from_array(h, ap));
  if (rc == GTSTORAGE_OK) {
    if (i < 0) BUG("succeeded on an invalid handle");
    if (null_arr || a.struct_size != sizeof a) BUG("succeeded with a bad array struct");
    if (!same_shape(a.ndim, a.shape, live[i].ndim, live[i].shape)) BUG("shape mismatch accepted");
  }
}

static void op_fill(void) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  if (chance(50)) {
    for (int k = 0; k < 16; ++k) value16[k] = (unsigned char)rnd();
    const int null_value = chance(5);
    describe("gtstorage_fill(%#llx%s)", (unsigned long long)h, null_value ? ", NULL" : "");
    const int rc = checked(gtstorage_fill(h, null_value ? NULL : value16));
    if (rc == GTSTORAGE_OK && (i < 0 || null_value)) BUG("bad fill succeeded");
  } else {
    const double values[] = {0.0,       1.0,    -1.0,    0.5,   1e300, -1e300, NAN,   INFINITY,
                             -INFINITY, 9.3e18, -9.3e18, 4.3e9, 255.5, -0.0,   1e-310};
    const double v = chance(80) ? PICK(values) : (double)(int64_t)rnd();
    describe("gtstorage_fill_double(%#llx, %g)", (unsigned long long)h, v);
    const int rc = checked(gtstorage_fill_double(h, v));
    if (i < 0) expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
  }
}

static uint64_t pick_stream(void) {
  return chance(85) ? 0 : (chance(50) ? (uint64_t)below(4) : rnd());
}

static void op_sync(void) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  const int32_t op = pick_i32(90, 1, 11);
  const uint32_t flags = chance(90) ? (uint32_t)below(2) : (uint32_t)rnd();
  const unsigned which = (unsigned)below(5);
  int rc;
  if (which == 0) {
    const uint64_t stream = pick_stream();
    describe("gtstorage_sync_async(%#llx, op %d, flags %u, stream %llu)", (unsigned long long)h, op,
             flags, (unsigned long long)stream);
    rc = checked(gtstorage_sync_async(h, op, flags, stream));
  } else if (which == 1) {
    const int32_t side = pick_side();
    describe("gtstorage_acquire(%#llx, side %d)", (unsigned long long)h, side);
    rc = checked(gtstorage_acquire(h, side));
  } else if (which == 2) {
    const int32_t side = pick_side();
    describe("gtstorage_touch(%#llx, side %d)", (unsigned long long)h, side);
    rc = checked(gtstorage_touch(h, side));
  } else {
    describe("gtstorage_sync(%#llx, op %d, flags %u)", (unsigned long long)h, op, flags);
    rc = checked(gtstorage_sync(h, op, flags));
  }
  if (rc == GTSTORAGE_OK && i < 0) BUG("succeeded on an invalid handle");
}

static void op_set_stream(void) {
  gtstorage_handle h;
  const int i = pick_handle(&h);
  const uint64_t stream = chance(70) ? 0 : pick_stream();
  describe("gtstorage_set_stream(%#llx, %llu)", (unsigned long long)h, (unsigned long long)stream);
  const int rc = checked(gtstorage_set_stream(h, stream));
  if (i < 0) expect_status(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "invalid handle");
}

static void op_dlpack_export(void) {
  if (ndl >= MAX_DL) return;
  gtstorage_handle h;
  const int i = pick_handle(&h);
  const int32_t side = pick_side();
  const int versioned = chance(50), null_out = chance(4);
  void* t;
  PRESET_OUT(t);
  describe("gtstorage_to_dlpack%s(%#llx, side %d%s)", versioned ? "_versioned" : "",
           (unsigned long long)h, side, null_out ? ", NULL" : "");
  const int rc = checked(
      versioned ? gtstorage_to_dlpack_versioned(
                      h, side, null_out ? NULL : (struct DLManagedTensorVersioned**)&t)
                : gtstorage_to_dlpack(h, side, null_out ? NULL : (struct DLManagedTensor**)&t));
  CHECK_UNTOUCHED_ON_FAIL(rc, t);
  if (rc != GTSTORAGE_OK) return;
  if (i < 0) BUG("succeeded on an invalid handle");
  if (t == NULL) BUG("success but NULL tensor");
  const DLTensor* dt = versioned ? &((struct DLManagedTensorVersioned*)t)->dl_tensor
                                 : &((DLManagedTensor*)t)->dl_tensor;
  const int has_deleter = versioned ? ((struct DLManagedTensorVersioned*)t)->deleter != NULL
                                    : ((DLManagedTensor*)t)->deleter != NULL;
  if (!has_deleter) BUG("tensor without deleter");
  if (dt->ndim != (int32_t)live[i].ndim) BUG("tensor ndim %d", dt->ndim);
  for (int d = 0; d < dt->ndim; ++d)
    if (dt->shape[d] != live[i].shape[d]) BUG("tensor shape differs");
  dls[ndl].versioned = versioned;
  dls[ndl].tensor = t;
  dls[ndl].group = live[i].group;
  ++ndl;
  add_user(live[i].group);
}

static void delete_dl(int k) {
  dlrec r = dls[k];
  dls[k] = dls[--ndl];
  describe("DLPack deleter of tensor %p", r.tensor);
  if (r.versioned) {
    struct DLManagedTensorVersioned* t = (struct DLManagedTensorVersioned*)r.tensor;
    t->deleter(t);
  } else {
    DLManagedTensor* t = (DLManagedTensor*)r.tensor;
    t->deleter(t);
  }
  drop_user(r.group);
}

static void op_dlpack_delete(void) {
  if (ndl > 0) delete_dl((int)below((uint64_t)ndl));
}

static void op_presets(void) {
  gtstorage_preset_info info;
  PRESET_OUT(info);
  info.struct_size = struct_size_of(sizeof info);
  const unsigned which = (unsigned)below(4);
  int rc;
  if (which == 0) {
    query_result count;
    run_query(&queries[QUERY_PRESET_COUNT], &count);
    return;
  }
  if (which == 1) {
    const int32_t index = pick_i32(80, -2, 24);
    describe("gtstorage_preset_at(%d, size %u)", index, info.struct_size);
    rc = checked(gtstorage_preset_at(index, chance(3) ? NULL : &info));
  } else if (which == 2) {
    const char* name = chance(5) ? NULL : pick_preset();
    if (name == NULL && chance(50)) name = "numpy";
    describe("gtstorage_preset_find(%s, size %u)", name ? name : "NULL", info.struct_size);
    rc = checked(gtstorage_preset_find(name, chance(3) ? NULL : &info));
  } else {
    gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
    p.struct_size = struct_size_of(sizeof p);
    p.reserved = chance(97) ? 0 : 1;
    const unsigned n = (unsigned)below(100);
    if (n < 80) {
      snprintf(p.name, sizeof p.name, "%s", PICK(fuzz_presets));
    } else if (n < 88 && npreset_names > 0) {
      snprintf(p.name, sizeof p.name, "%s", preset_names[below((uint64_t)npreset_names)]);
    } else if (n < 94) {
      p.name[0] = '\0';
    } else {
      memset(p.name, 'x', sizeof p.name); /* not terminated */
    }
    const int64_t aligns[] = {1, 2, 8, 64, 128, 3, 0, -4, (int64_t)1 << 40, INT64_MIN};
    p.alignment = PICK(aligns);
    p.alignment_unit = pick_i32(90, 0, 2);
    p.device = pick_i32(90, 1, 2);
    p.rule = pick_i32(90, 0, 3);
    int32_t perm[GTSTORAGE_MAX_NDIM + 1];
    pick_permutation(perm, 3, 1);
    memcpy(p.base_layout, perm, sizeof p.base_layout);
    if (chance(10)) p.base_layout[below(3)] = wild_i32();
    describe("gtstorage_preset_register(name '%.32s' align %lld unit %d device %d rule %d)", p.name,
             (long long)p.alignment, p.alignment_unit, p.device, p.rule);
    rc = checked(gtstorage_preset_register(chance(3) ? NULL : &p));
    return;
  }
  if (rc != GTSTORAGE_OK && !untouched((const unsigned char*)&info + 4, sizeof info - 4))
    BUG("failed but modified its output");
  if (rc == GTSTORAGE_OK && strnlen(info.name, sizeof info.name) == sizeof info.name)
    BUG("preset name not terminated");
}

static void op_devices(void) {
  const unsigned which = (unsigned)below(5);
  if (which == 0) {
    query_result count;
    run_query(&queries[QUERY_DEVICE_COUNT], &count);
  } else if (which == 1) {
    char buf[32];
    PRESET_OUT(buf);
    const size_t size = chance(70) ? sizeof buf : (size_t)below(sizeof buf + 1);
    const int null_buf = chance(5);
    describe("gtstorage_get_device_backend(%s, %zu)", null_buf ? "NULL" : "buf", size);
    const int rc = checked(gtstorage_get_device_backend(null_buf ? NULL : buf, size));
    if (rc != GTSTORAGE_OK && !untouched(buf, sizeof buf)) BUG("failed but modified its output");
    if (rc == GTSTORAGE_OK && strnlen(buf, size) == size) BUG("name not terminated in buffer");
  } else if (which == 2) {
    const int32_t id = pick_i32(80, -1, 4);
    describe("gtstorage_set_device(%d)", id);
    const int set_rc = checked(gtstorage_set_device(id));
    query_result current;
    run_query(&queries[QUERY_GET_DEVICE], &current);
    if (set_rc == GTSTORAGE_OK && current.rc != GTSTORAGE_OK && !current.null_out)
      BUG("no current device after set");
    if (set_rc == GTSTORAGE_OK && current.rc == GTSTORAGE_OK && current.out.value != id) {
      BUG("current device %d after gtstorage_set_device(%d)", current.out.value, id);
    }
  } else if (which == 3 && chance(20)) {
    static const char* const names[] = {"emulated", "cuda", "hip", "auto", "none",
                                        "EMULATED", "",     "gpu", NULL,   "emulated "};
    const char* name = PICK(names);
    describe("gtstorage_set_device_backend(%s)", name ? name : "NULL");
    checked(gtstorage_set_device_backend(name));
    describe("gtstorage_set_device_backend(emulated) (restore)");
    checked(gtstorage_set_device_backend("emulated"));
  } else {
    describe("gtstorage_reset_transfer_stats()");
    checked(gtstorage_reset_transfer_stats());
  }
}

static void op_misc(void) {
  const unsigned which = (unsigned)below(6);
  if (which == 0) {
    describe("gtstorage_version()");
    if (gtstorage_version() != GTSTORAGE_VERSION_NUMBER) BUG("version mismatch");
    const char* s = gtstorage_version_string();
    if (s == NULL || s[0] == '\0') BUG("empty version string");
  } else if (which == 1) {
    const int st = chance(50) ? -(int)below(16) : (int)wild_i32();
    describe("gtstorage_status_name(%d)", st);
    const char* s = gtstorage_status_name(st);
    if (s == NULL || s[0] == '\0') BUG("empty status name");
  } else if (which == 2) {
    gtstorage_create_options o;
    const int null_out = chance(10);
    if (chance(50)) {
      /* The size-less init is the 1.0 entry point: it writes the 1.0 layout, which ends where
       * the first field added in 1.1 (pool) begins. */
      describe("gtstorage_create_options_init(%s)", null_out ? "NULL" : "&o");
      const int rc = checked(gtstorage_create_options_init(null_out ? NULL : &o));
      if (rc == GTSTORAGE_OK && o.struct_size != offsetof(gtstorage_create_options, pool))
        BUG("init did not set the 1.0 struct_size");
    } else {
      const uint32_t size = struct_size_of(sizeof o);
      describe("gtstorage_create_options_init_sized(%s, %u)", null_out ? "NULL" : "&o", size);
      const int rc = checked(gtstorage_create_options_init_sized(null_out ? NULL : &o, size));
      if (rc == GTSTORAGE_OK && o.struct_size != size) BUG("init did not set struct_size");
    }
  } else if (which == 3) {
    gtstorage_wrap_options o;
    const int null_out = chance(10);
    describe("gtstorage_wrap_options_init(%s)", null_out ? "NULL" : "&o");
    const int rc = checked(gtstorage_wrap_options_init(null_out ? NULL : &o));
    if (rc == GTSTORAGE_OK && o.struct_size != sizeof o) BUG("init did not set struct_size");
  } else {
    query_result stats;
    run_query(&queries[QUERY_GET_STATS], &stats);
  }
}

/* ---------------------------------------------------------------------------------------------- */

/* An operation and how often it is drawn: a function, or else a row of `queries`. */
typedef struct weighted_op {
  void (*fn)(void);
  const query* query;
  unsigned weight;
} weighted_op;

static void op_copy_from_array(void) {
  op_copy_array(0);
}
static void op_copy_to_array(void) {
  op_copy_array(1);
}

static const weighted_op ops[] = {{op_create, NULL, 14},
                                  {op_wrap, NULL, 8},
                                  {op_retain, NULL, 3},
                                  {op_release, NULL, 9},
                                  {NULL, &queries[QUERY_REFCOUNT], 2},
                                  {op_slice, NULL, 8},
                                  {op_transpose, NULL, 4},
                                  {op_domain_view, NULL, 3},
                                  {NULL, &queries[QUERY_INTERFACE], 4},
                                  {NULL, &queries[QUERY_DATA], 2},
                                  {NULL, &queries[QUERY_HAS_SIDE], 2},
                                  {op_copy, NULL, 5},
                                  {op_copy_from_array, NULL, 4},
                                  {op_copy_to_array, NULL, 4},
                                  {op_fill, NULL, 5},
                                  {op_sync, NULL, 7},
                                  {NULL, &queries[QUERY_SYNC_STATE], 2},
                                  {op_set_stream, NULL, 1},
                                  {NULL, &queries[QUERY_TRANSFER_STATS], 1},
                                  {op_dlpack_export, NULL, 3},
                                  {op_dlpack_delete, NULL, 3},
                                  {op_presets, NULL, 3},
                                  {op_devices, NULL, 2},
                                  {op_misc, NULL, 2}};

static void run_one_step(unsigned total_weight) {
  /* Keep the live set bounded: release when it is full. */
  if (nlive >= MAX_LIVE - 8) {
    op_release();
    return;
  }
  unsigned w = (unsigned)below(total_weight);
  for (size_t k = 0; k < COUNT(ops); ++k) {
    if (w < ops[k].weight) {
      query_result result;
      if (ops[k].fn != NULL)
        ops[k].fn();
      else
        run_query(ops[k].query, &result);
      return;
    }
    w -= ops[k].weight;
  }
}

static void collect_presets(void) {
  static char names[64][GTSTORAGE_PRESET_NAME_SIZE];
  int32_t count = 0;
  describe("gtstorage_preset_count (setup)");
  expect_status(checked(gtstorage_preset_count(&count)), GTSTORAGE_OK, "setup");
  npreset_names = 0;
  for (int32_t k = 0; k < count && k < 64; ++k) {
    gtstorage_preset_info info;
    info.struct_size = sizeof info;
    describe("gtstorage_preset_at(%d) (setup)", k);
    expect_status(checked(gtstorage_preset_at(k, &info)), GTSTORAGE_OK, "setup");
    memcpy(names[k], info.name, sizeof names[k]);
    names[k][GTSTORAGE_PRESET_NAME_SIZE - 1] = '\0';
    preset_names[npreset_names++] = names[k];
  }
}

static void test_random_bad_input(void** state) {
  (void)state;
  const char* env = getenv("GTSTORAGE_FUZZ_SEED");
  g_seed = env && *env ? strtoull(env, NULL, 0) : 20260101ull;
  env = getenv("GTSTORAGE_FUZZ_STEPS");
  const long steps = env && *env ? strtol(env, NULL, 0) : 500000L;
  env = getenv("GTSTORAGE_FUZZ_TRACE");
  g_trace = env && *env && *env != '0';
  rng_state = g_seed;

  describe("gtstorage_set_device_backend(emulated) (setup)");
  expect_status(checked(gtstorage_set_device_backend("emulated")), GTSTORAGE_OK, "setup");
  verify_counts();
  collect_presets();

  unsigned total_weight = 0;
  for (size_t k = 0; k < COUNT(ops); ++k) total_weight += ops[k].weight;

  const clock_t t0 = clock();
  for (g_step = 0; g_step < steps; ++g_step) {
    run_one_step(total_weight);
    verify_counts();
  }

  /* Tear down: tensors, then every reference of every handle. */
  while (ndl > 0) {
    delete_dl(ndl - 1);
    verify_counts();
  }
  while (nlive > 0) {
    hrec* r = &live[nlive - 1];
    describe("gtstorage_release(%#llx) (teardown)", (unsigned long long)r->h);
    expect_status(checked(gtstorage_release(r->h)), GTSTORAGE_OK, "teardown");
    if (--r->refs == 0) forget_handle(nlive - 1);
    verify_counts();
  }
  gtstorage_stats st;
  st.struct_size = sizeof st;
  describe("gtstorage_get_stats (final)");
  expect_status(checked(gtstorage_get_stats(&st)), GTSTORAGE_OK, "final");
  if (st.live_handles != 0 || st.live_buffers != 0)
    BUG("final live handles %lld, buffers %lld", (long long)st.live_handles,
        (long long)st.live_buffers);
  for (int i = 0; i < MAX_GROUPS; ++i)
    if (groups[i].used) BUG("test bookkeeping: group %d still in use", i);
  for (int k = 0; k < ntally; ++k)
    printf("  %-32s ok %8ld  failed %8ld\n", tally_name[k], tally_ok[k], tally_fail[k]);
  printf("robustness: seed %llu, %ld steps, %ld checked calls, %.2f s CPU\n",
         (unsigned long long)g_seed, steps, g_calls, (double)(clock() - t0) / CLOCKS_PER_SEC);
}

GTS_TEST_MAIN_WITH("tests", cmocka_unit_test, NULL, NULL)
