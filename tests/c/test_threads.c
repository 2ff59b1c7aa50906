/*
 * Two threads creating, viewing and releasing concurrently; handles used across threads; racing
 * double releases and retain/release storms;
 * the last-error message is per thread; preset registration concurrent with lookups. Worker
 * threads never call cmocka asserts (they longjmp): they record failures, and the main thread
 * checks them after joining.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "support.h"

#define ITERATIONS 10000

typedef struct worker {
  int id;
  pthread_barrier_t* barrier;
  long failures;
  char first_failure[512];
  gtstorage_handle* handoff; /* for the cross-thread test */
  int nhandoff;
} worker;

static void record(worker* w, const char* what, int st) {
  if (w->failures++ == 0)
    snprintf(w->first_failure, sizeof w->first_failure, "thread %d: %s: %s \"%s\"", w->id, what,
             gtstorage_status_name(st), gtstorage_last_error());
}

#define W_OK(w, call)            \
  do {                           \
    int w_st_ = (call);          \
    if (w_st_ != GTSTORAGE_OK) { \
      record((w), #call, w_st_); \
      goto next;                 \
    }                            \
  } while (0)

static void* create_release_worker(void* arg) {
  worker* w = (worker*)arg;
  gts_rng rng;
  rng.s = 0x1234567ULL + (uint64_t)w->id * 0x9E3779B97F4A7C15ULL;
  pthread_barrier_wait(w->barrier);
  for (int it = 0; it < ITERATIONS; ++it) {
    int64_t shape[3], halo[6] = {1, 1, 1, 1, 0, 0};
    gtstorage_create_options o;
    gtstorage_handle h = 0, v = 0, t = 0;
    gtstorage_slice_spec s[3] = {GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL, GTSTORAGE_SLICE_ALL};
    int32_t perm[3] = {2, 1, 0};
    void* p = NULL;
    double value = (double)(w->id * 1000000 + it), got = 0;
    shape[0] = gts_rand_range(&rng, 3, 9);
    shape[1] = gts_rand_range(&rng, 3, 9);
    shape[2] = gts_rand_range(&rng, 1, 9);
    o = gts_options(3, shape, (it & 1) ? "gt:cpu_ifirst" : "gridtools:cpu_ifirst");
    o.halo = halo;
    W_OK(w, gtstorage_create(&o, &h));
    s[0].start = 1;
    W_OK(w, gtstorage_slice(h, s, 3, &v));
    W_OK(w, gtstorage_transpose(v, perm, 3, &t));
    W_OK(w, gtstorage_fill_double(t, value));
    /* Read back the base's element (1,0,0) = the view's (0,0,0). */
    W_OK(w, gtstorage_data(v, GTSTORAGE_SIDE_HOST, &p));
    memcpy(&got, p, sizeof got);
    if (got != value) record(w, "value read back through the base", GTSTORAGE_OK);
    /* Release in a random order: buffers must survive until the last one. */
    switch (gts_rand_range(&rng, 0, 2)) {
      case 0:
        W_OK(w, gtstorage_release(h));
        W_OK(w, gtstorage_release(v));
        W_OK(w, gtstorage_release(t));
        break;
      case 1:
        W_OK(w, gtstorage_release(t));
        W_OK(w, gtstorage_release(h));
        W_OK(w, gtstorage_release(v));
        break;
      default:
        W_OK(w, gtstorage_retain(v));
        W_OK(w, gtstorage_release(v));
        W_OK(w, gtstorage_release(v));
        W_OK(w, gtstorage_release(t));
        W_OK(w, gtstorage_release(h));
        break;
    }
    continue;
  next:
    /* After a failure, give back what exists so the leak check reports the real failure. */
    if (t) (void)gtstorage_release(t);
    if (v) (void)gtstorage_release(v);
    if (h) (void)gtstorage_release(h);
  }
  return NULL;
}

static void run_two(void* (*fn)(void*), worker* a, worker* b) {
  pthread_t ta, tb;
  pthread_barrier_t barrier;
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
  a->barrier = b->barrier = &barrier;
  assert_int_equal(pthread_create(&ta, NULL, fn, a), 0);
  assert_int_equal(pthread_create(&tb, NULL, fn, b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&barrier);
  if (a->failures) fail_msg("%ld failures, first: %s", a->failures, a->first_failure);
  if (b->failures) fail_msg("%ld failures, first: %s", b->failures, b->first_failure);
}

static void test_concurrent_create_release(void** state) {
  worker a, b;
  gts_live before = gts_live_now();
  (void)state;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.id = 1;
  b.id = 2;
  run_two(create_release_worker, &a, &b);
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* Handles are valid in every thread: created here, released by two other threads. */
static void* release_handoff_worker(void* arg) {
  worker* w = (worker*)arg;
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < w->nhandoff; ++i) {
    int64_t rc = 0;
    int st = gtstorage_refcount(w->handoff[i], &rc);
    if (st != GTSTORAGE_OK || rc != 1) record(w, "refcount of a handed-off handle", st);
    st = gtstorage_release(w->handoff[i]);
    if (st != GTSTORAGE_OK) record(w, "release of a handed-off handle", st);
  }
  return NULL;
}

static void test_handles_cross_threads(void** state) {
  enum { N = 2000 };
  static gtstorage_handle hs[N];
  int64_t shape[2] = {8, 8};
  gtstorage_create_options o;
  gts_live before = gts_live_now(), mid;
  worker a, b;
  (void)state;
  o = gts_options(2, shape, NULL);
  for (int i = 0; i < N; ++i) {
    if (i % 2 == 0) {
      GTS_OK(gtstorage_create(&o, &hs[i]));
    } else {
      GTS_OK(gtstorage_domain_view(hs[i - 1], &hs[i])); /* a view, released by the other thread */
    }
  }
  mid = gts_live_now();
  GTS_EQ64(mid.handles, before.handles + N);
  GTS_EQ64(mid.buffers, before.buffers + N / 2);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.id = 1;
  b.id = 2;
  /* Thread a gets the even (base) handles, thread b the odd (view) ones. */
  {
    static gtstorage_handle even[N / 2], odd[N / 2];
    for (int i = 0; i < N / 2; ++i) {
      even[i] = hs[2 * i];
      odd[i] = hs[2 * i + 1];
    }
    a.handoff = even;
    b.handoff = odd;
    a.nhandoff = b.nhandoff = N / 2;
    run_two(release_handoff_worker, &a, &b);
  }
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* Both threads release the same handles at once (a double release racing with itself); thread
 * 1 also creates a storage right after each release, so the freed slot is reused while thread 2
 * may still hold the stale handle. Exactly one release per handle succeeds, the other is
 * INVALID_HANDLE, and no stale release touches the reference count of the new handle. */
enum { RACE_N = 4000 };
static gtstorage_handle race_handles[RACE_N], race_new[RACE_N];
static int race_status[2][RACE_N];

static atomic_int race_arrivals;

/* Both threads start release i together: a spin barrier per handle (a pthread barrier would let
 * the scheduler separate them by microseconds, and the race would almost never happen). */
static void race_rendezvous(int i) {
  atomic_fetch_add(&race_arrivals, 1);
  for (int spins = 0; atomic_load(&race_arrivals) < 2 * (i + 1); ++spins) {
    if (spins > 1000) sched_yield(); /* the other thread may not be running (one core, load) */
  }
}

static void* racing_release_worker(void* arg) {
  worker* w = (worker*)arg;
  int64_t shape[1] = {4};
  gtstorage_create_options o = gts_options(1, shape, NULL);
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < RACE_N; ++i) {
    race_rendezvous(i);
    race_status[w->id - 1][i] = gtstorage_release(race_handles[i]);
    if (w->id == 1) {
      int st = gtstorage_create(&o, &race_new[i]);
      if (st != GTSTORAGE_OK) record(w, "create after a racing release", st);
    }
  }
  return NULL;
}

static void test_racing_double_release(void** state) {
  int64_t shape[1] = {4};
  gtstorage_create_options o;
  gts_live before = gts_live_now();
  worker a, b;
  (void)state;
  o = gts_options(1, shape, NULL);
  for (int i = 0; i < RACE_N; ++i) GTS_OK(gtstorage_create(&o, &race_handles[i]));
  atomic_store(&race_arrivals, 0);
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.id = 1;
  b.id = 2;
  run_two(racing_release_worker, &a, &b);
  for (int i = 0; i < RACE_N; ++i) {
    const int s1 = race_status[0][i], s2 = race_status[1][i];
    int64_t rc = 0;
    if (!((s1 == GTSTORAGE_OK && s2 == GTSTORAGE_ERROR_INVALID_HANDLE) ||
          (s2 == GTSTORAGE_OK && s1 == GTSTORAGE_ERROR_INVALID_HANDLE))) {
      fail_msg("handle %d: releases returned %s and %s; expected one OK and one INVALID_HANDLE", i,
               gtstorage_status_name(s1), gtstorage_status_name(s2));
    }
    GTS_OK(gtstorage_refcount(race_new[i], &rc));
    GTS_EQ64(rc, 1);
    GTS_OK(gtstorage_release(race_new[i]));
  }
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* Retains and releases of one handle from both threads at once keep an exact count. */
static gtstorage_handle shared_handle;

static void* retain_release_worker(void* arg) {
  worker* w = (worker*)arg;
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < 50000; ++i) {
    int st = gtstorage_retain(shared_handle);
    if (st != GTSTORAGE_OK) record(w, "retain", st);
    st = gtstorage_release(shared_handle);
    if (st != GTSTORAGE_OK) record(w, "release", st);
  }
  return NULL;
}

static void test_concurrent_retain_release(void** state) {
  int64_t shape[1] = {4}, rc = 0;
  gtstorage_create_options o;
  gts_live before = gts_live_now();
  worker a, b;
  (void)state;
  o = gts_options(1, shape, NULL);
  GTS_OK(gtstorage_create(&o, &shared_handle));
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.id = 1;
  b.id = 2;
  run_two(retain_release_worker, &a, &b);
  GTS_OK(gtstorage_refcount(shared_handle, &rc));
  GTS_EQ64(rc, 1);
  GTS_OK(gtstorage_release(shared_handle));
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* ---- thread-local last_error ------------------------------------------------------------- */

typedef struct err_worker {
  worker base;
  const char* param; /* the parameter this thread's errors name */
  char saved[512];
} err_worker;

static int make_error(const char* param) {
  int64_t shape[3] = {4, 5, 6}, neg[3] = {4, -5, 6}, halo[6] = {9, 9, 0, 0, 0, 0};
  gtstorage_create_options o = gts_options(3, shape, NULL);
  gtstorage_handle h = 0;
  if (strcmp(param, "dtype") == 0) o.dtype = "<f3";
  if (strcmp(param, "shape") == 0) o.shape = neg;
  if (strcmp(param, "halo") == 0) o.halo = halo;
  return gtstorage_create(&o, &h);
}

static void* error_worker(void* arg) {
  err_worker* w = (err_worker*)arg;
  /* Phase 1: this thread fails, the other waits. Thread 1 goes first. */
  for (int phase = 1; phase <= 2; ++phase) {
    pthread_barrier_wait(w->base.barrier);
    if (phase == w->base.id) {
      int st = make_error(w->param);
      const char* m = gtstorage_last_error();
      if (st != GTSTORAGE_ERROR_INVALID_ARGUMENT || !gts_contains_ci(m, w->param))
        record(&w->base, "own error", st);
      snprintf(w->saved, sizeof w->saved, "%s", m);
    }
  }
  pthread_barrier_wait(w->base.barrier);
  /* Both have failed now; each still sees only its own message. */
  if (strcmp(gtstorage_last_error(), w->saved) != 0) record(&w->base, "message changed", 0);
  pthread_barrier_wait(w->base.barrier);
  /* Thread 2 succeeds at something: its message clears, thread 1's does not. */
  if (w->base.id == 2) {
    int32_t n = 0;
    if (gtstorage_preset_count(&n) != GTSTORAGE_OK || gtstorage_last_error()[0] != '\0')
      record(&w->base, "success did not clear the message", 0);
  }
  pthread_barrier_wait(w->base.barrier);
  if (w->base.id == 1 && strcmp(gtstorage_last_error(), w->saved) != 0)
    record(&w->base, "other thread's success cleared this thread's message", 0);
  /* Then hammer: interleaved failures, each thread checks its own message every time. */
  pthread_barrier_wait(w->base.barrier);
  for (int it = 0; it < ITERATIONS; ++it) {
    int st = make_error(w->param);
    if (st != GTSTORAGE_ERROR_INVALID_ARGUMENT ||
        !gts_contains_ci(gtstorage_last_error(), w->param))
      record(&w->base, "concurrent error message", st);
  }
  return NULL;
}

static void test_last_error_thread_local(void** state) {
  err_worker a, b;
  pthread_t ta, tb;
  pthread_barrier_t barrier;
  gts_live before = gts_live_now();
  (void)state;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.base.id = 1;
  b.base.id = 2;
  a.param = "dtype";
  b.param = "halo";
  assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
  a.base.barrier = b.base.barrier = &barrier;
  assert_int_equal(pthread_create(&ta, NULL, error_worker, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, error_worker, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  pthread_barrier_destroy(&barrier);
  if (a.base.failures) fail_msg("%ld failures, first: %s", a.base.failures, a.base.first_failure);
  if (b.base.failures) fail_msg("%ld failures, first: %s", b.base.failures, b.base.first_failure);
  /* The messages differ, so the test could tell them apart. */
  assert_true(strcmp(a.saved, b.saved) != 0);
  assert_true(gts_contains_ci(a.saved, "dtype") && !gts_contains_ci(a.saved, "halo"));
  GTS_ASSERT_LIVE(gts_live_now(), before);
}

/* ---- presets registered while another thread looks them up and creates ------------------ */

static void* register_worker(void* arg) {
  worker* w = (worker*)arg;
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < 200; ++i) {
    gtstorage_preset_info p = gts_preset("", 64, GTSTORAGE_ALIGN_BYTES, 2, 1, 0);
    int st;
    snprintf(p.name, sizeof p.name, "thread:%d", i);
    st = gtstorage_preset_register(&p);
    if (st != GTSTORAGE_OK) record(w, "register", st);
  }
  return NULL;
}

static void* lookup_worker(void* arg) {
  worker* w = (worker*)arg;
  pthread_barrier_wait(w->barrier);
  for (int i = 0; i < 2000; ++i) {
    int32_t n = 0;
    int64_t shape[3] = {5, 4, 3};
    gtstorage_create_options o = GTSTORAGE_CREATE_OPTIONS_INIT;
    gtstorage_handle h = 0;
    char name[32];
    int st = gtstorage_preset_count(&n);
    if (st != GTSTORAGE_OK) record(w, "count", st);
    for (int32_t k = 0; k < n; k += 7) {
      gtstorage_preset_info p = GTSTORAGE_PRESET_INFO_INIT;
      st = gtstorage_preset_at(k, &p);
      if (st != GTSTORAGE_OK || memchr(p.name, '\0', sizeof p.name) == NULL)
        record(w, "preset_at", st);
    }
    /* A name that may or may not be registered yet: either it works or it is unknown. */
    snprintf(name, sizeof name, "thread:%d", i % 200);
    o.ndim = 3;
    o.shape = shape;
    o.preset = name;
    st = gtstorage_create(&o, &h);
    if (st == GTSTORAGE_OK) {
      gtstorage_interface_info info;
      memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      if (gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &info) != GTSTORAGE_OK ||
          info.strides[0] != 8 || (uintptr_t)info.data % 64 != 0)
        record(w, "storage from a concurrently registered preset", 0);
      (void)gtstorage_release(h);
    } else if (st != GTSTORAGE_ERROR_UNKNOWN_PRESET) {
      record(w, "create with a concurrently registered preset", st);
    }
  }
  return NULL;
}

static void* register_or_lookup(void* arg) {
  worker* w = (worker*)arg;
  return w->id == 1 ? register_worker(arg) : lookup_worker(arg);
}

static void test_concurrent_presets(void** state) {
  worker a, b;
  int32_t before = 0, after = 0;
  gts_live live = gts_live_now();
  (void)state;
  GTS_OK(gtstorage_preset_count(&before));
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.id = 1;
  b.id = 2;
  run_two(register_or_lookup, &a, &b);
  GTS_OK(gtstorage_preset_count(&after));
  GTS_EQ64(after, before + 200);
  GTS_ASSERT_LIVE(gts_live_now(), live);
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
