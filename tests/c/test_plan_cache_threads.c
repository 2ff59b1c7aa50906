/*
 * The per-thread memo of allocation plans (src/storage/plan_cache.cpp) must be invisible: a
 * request answered from it gives exactly what a fresh computation gives, plan, storage geometry
 * and error message alike. A fresh computation is taken from a new thread (its memo is empty) with
 * other requests planned in between, so every reference is a miss. The memo is keyed by content,
 * so the requests are also replayed from one reused buffer rewritten in place (same pointers,
 * other content) and from copies (other pointers, same content); and it must forget plans that
 * depend on a preset whose definition changes, also while other threads plan concurrently.
 * Worker threads never call cmocka asserts: they record failures for the main thread.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "support.h"

#define POOL 40
#define MAX_ND 4
#define FLUSH 12 /* more distinct requests than the memo holds */
#define FIXED 20 /* pool[0 … FIXED) are fixed requests, the rest random */

/* One request, self-contained (its arrays are its own). */
typedef struct request {
  uint32_t ndim;
  int64_t shape[MAX_ND];
  int64_t halo[2 * MAX_ND];
  int64_t aligned_index[MAX_ND];
  int32_t layout[MAX_ND];
  char dtype[8];
  char preset[32];
  char dims[16];
  int use_halo, use_aligned_index, use_layout, use_dtype, use_preset, use_dims;
  int64_t alignment_bytes;
} request;

/* What a request gives: the plan (or its error) and a storage's geometry (or its error). */
typedef struct outcome {
  int plan_status;
  char plan_message[512];
  gtstorage_plan_info plan;
  int create_status;
  char create_message[512];
  gtstorage_interface_info iface; /* data and allocation zeroed: addresses differ */
} outcome;

static void options_of(const request* r, gtstorage_create_options* o) {
  gtstorage_create_options_init(o);
  o->ndim = r->ndim;
  o->shape = r->shape;
  o->halo = r->use_halo ? r->halo : NULL;
  o->aligned_index = r->use_aligned_index ? r->aligned_index : NULL;
  o->layout = r->use_layout ? r->layout : NULL;
  o->dtype = r->use_dtype ? r->dtype : NULL;
  o->preset = r->use_preset ? r->preset : NULL;
  o->dims = r->use_dims ? r->dims : NULL;
  o->alignment_bytes = r->alignment_bytes;
  o->init = GTSTORAGE_INIT_ZEROS;
}

static void copy_message(char* dst, size_t size, const char* msg) {
  snprintf(dst, size, "%s", msg ? msg : "(null)");
}

static void evaluate(const request* r, int with_create, outcome* out) {
  gtstorage_create_options o;
  gtstorage_handle h = GTSTORAGE_NULL_HANDLE;
  memset(out, 0, sizeof *out);
  options_of(r, &o);
  out->plan.struct_size = sizeof out->plan;
  out->plan_status = gtstorage_plan(&o, &out->plan);
  if (out->plan_status != GTSTORAGE_OK) {
    copy_message(out->plan_message, sizeof out->plan_message, gtstorage_last_error());
    memset(&out->plan, 0, sizeof out->plan);
  }
  if (!with_create) return;
  out->create_status = gtstorage_create(&o, &h);
  if (out->create_status != GTSTORAGE_OK) {
    copy_message(out->create_message, sizeof out->create_message, gtstorage_last_error());
    return;
  }
  out->iface.struct_size = sizeof out->iface;
  if (gtstorage_interface(h, GTSTORAGE_SIDE_HOST, &out->iface) != GTSTORAGE_OK) {
    out->create_status = -1000;
    copy_message(out->create_message, sizeof out->create_message, gtstorage_last_error());
  }
  out->iface.data = NULL;
  out->iface.allocation = NULL;
  gtstorage_release(h);
}

/* The plan half and the storage half of two outcomes (separately: a preset may change between
 * the two calls of one evaluate()). */
static int same_plan(const outcome* a, const outcome* b) {
  return memcmp(a, b, offsetof(outcome, create_status)) == 0;
}
static int same_create(const outcome* a, const outcome* b) {
  const size_t at = offsetof(outcome, create_status);
  return memcmp((const char*)a + at, (const char*)b + at, sizeof *a - at) == 0;
}

static const char* const dtypes[] = {"<f8", "f8", "<f4", "|b1", "<i2", "<c16", "=u8", "<f3", ">f8"};
static const char* const presets[] = {"numpy",
                                      "gt:cpu_ifirst",
                                      "gt:cpu_kfirst",
                                      "gtmc",
                                      "gridtools:cpu_ifirst",
                                      "dace:cpu",
                                      "F",
                                      "C",
                                      "tst:var",
                                      "tst:var",
                                      "tst:late",
                                      "gt:gpu"};
static const char* const dims3[] = {"IJK", "KJI", "JKI", "I,J,K", "IJ0", "KIJ", "IIK"};
static const int64_t alignments[] = {8, 16, 24, 64, 12, 4};

static void random_request(gts_rng* g, request* r) {
  memset(r, 0, sizeof *r);
  r->ndim = (uint32_t)gts_rand_range(g, 0, MAX_ND);
  for (uint32_t d = 0; d < r->ndim; ++d) {
    r->shape[d] = gts_rand_range(g, 0, 9) == 0 ? 0 : gts_rand_range(g, 1, 7);
  }
  if ((r->use_dtype = gts_rand_range(g, 0, 3) != 0)) {
    snprintf(r->dtype, sizeof r->dtype, "%s",
             dtypes[gts_rand_range(g, 0, sizeof dtypes / sizeof *dtypes - 1)]);
  }
  if ((r->use_preset = gts_rand_range(g, 0, 5) != 0)) {
    snprintf(r->preset, sizeof r->preset, "%s",
             presets[gts_rand_range(g, 0, sizeof presets / sizeof *presets - 1)]);
  }
  if ((r->use_dims = r->ndim == 3 && gts_rand_range(g, 0, 2) == 0)) {
    snprintf(r->dims, sizeof r->dims, "%s",
             dims3[gts_rand_range(g, 0, sizeof dims3 / sizeof *dims3 - 1)]);
  }
  if ((r->use_layout = gts_rand_range(g, 0, 4) == 0)) {
    for (uint32_t d = 0; d < r->ndim; ++d) r->layout[d] = (int32_t)d;
    for (uint32_t d = r->ndim; d > 1; --d) { /* shuffle; sometimes break the permutation */
      const uint32_t k = (uint32_t)gts_rand_range(g, 0, d - 1);
      const int32_t t = r->layout[d - 1];
      r->layout[d - 1] = r->layout[k];
      r->layout[k] = t;
    }
    if (r->ndim > 1 && gts_rand_range(g, 0, 5) == 0) r->layout[0] = r->layout[1];
  }
  if ((r->use_halo = gts_rand_range(g, 0, 2) == 0)) {
    for (uint32_t d = 0; d < 2 * r->ndim; ++d) r->halo[d] = gts_rand_range(g, 0, 3);
  }
  if ((r->use_aligned_index = gts_rand_range(g, 0, 4) == 0)) {
    for (uint32_t d = 0; d < r->ndim; ++d) r->aligned_index[d] = gts_rand_range(g, 0, 4);
  }
  if (gts_rand_range(g, 0, 3) == 0) {
    r->alignment_bytes =
        alignments[gts_rand_range(g, 0, sizeof alignments / sizeof *alignments - 1)];
  }
}

/* Distinct requests planned between two references, so that each reference is a miss. */
static void flush_memo(void) {
  for (int k = 0; k < FLUSH; ++k) {
    int64_t shape[1] = {1000 + k};
    gtstorage_create_options o;
    gtstorage_plan_info p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    o = gts_options(1, shape, NULL);
    gtstorage_plan(&o, &p);
  }
}

typedef struct reference_job {
  const request* pool;
  outcome* out;
} reference_job;

static void* reference_thread(void* arg) {
  reference_job* job = (reference_job*)arg;
  for (int i = 0; i < POOL; ++i) {
    flush_memo();
    evaluate(&job->pool[i], 1, &job->out[i]);
  }
  return NULL;
}

/* References for the whole pool, computed without the memo's help (a new thread, flushed). */
static void references(const request* pool, outcome* out) {
  pthread_t t;
  reference_job job = {pool, out};
  assert_int_equal(pthread_create(&t, NULL, reference_thread, &job), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
}

static void make_pool(request* pool, uint64_t seed) {
  gts_rng g;
  g.s = seed;
  for (int i = 0; i < POOL; ++i) random_request(&g, &pool[i]);
  /* A few fixed ones: the benchmark's request and ones on the preset that changes. */
  memset(&pool[0], 0, sizeof pool[0]);
  pool[0].ndim = 3;
  pool[0].shape[0] = pool[0].shape[1] = pool[0].shape[2] = 8;
  pool[0].use_dtype = 1;
  snprintf(pool[0].dtype, sizeof pool[0].dtype, "<f8");
  pool[1] = pool[0];
  pool[1].use_preset = 1;
  snprintf(pool[1].preset, sizeof pool[1].preset, "tst:var");
  pool[2] = pool[1];
  pool[2].use_dims = 1;
  snprintf(pool[2].dims, sizeof pool[2].dims, "KJI");
  pool[3] = pool[1];
  snprintf(pool[3].preset, sizeof pool[3].preset, "tst:late");
  /* Pairs that differ in one field's content only (same pointers' presence, same lengths). */
  for (int i = 4; i < FIXED; ++i) pool[i] = pool[0];
  pool[4].use_dims = pool[5].use_dims = pool[6].use_dims = 1;
  snprintf(pool[4].dims, sizeof pool[4].dims, "IJK");
  snprintf(pool[5].dims, sizeof pool[5].dims, "KJI");
  snprintf(pool[6].dims, sizeof pool[6].dims, "JKI");
  snprintf(pool[7].dtype, sizeof pool[7].dtype, "<f4");
  pool[8].use_preset = pool[9].use_preset = 1;
  snprintf(pool[8].preset, sizeof pool[8].preset, "gt:cpu_ifirst");
  snprintf(pool[9].preset, sizeof pool[9].preset, "gt:cpu_kfirst");
  pool[10].use_halo = pool[11].use_halo = 1;
  for (int d = 0; d < 6; ++d) pool[10].halo[d] = 1, pool[11].halo[d] = 2;
  pool[12].use_layout = pool[13].use_layout = 1;
  pool[12].layout[0] = 2, pool[12].layout[1] = 1, pool[12].layout[2] = 0;
  pool[13].layout[0] = 0, pool[13].layout[1] = 2, pool[13].layout[2] = 1;
  pool[14].use_aligned_index = pool[15].use_aligned_index = 1;
  for (int d = 0; d < 3; ++d) pool[14].aligned_index[d] = 1, pool[15].aligned_index[d] = 3;
  pool[16].alignment_bytes = 16;
  pool[17].alignment_bytes = 64;
  pool[18].shape[1] = 9;
  pool[19].shape[2] = 9;
}

static void register_variant(const char* name, int variant) {
  const gtstorage_preset_info p = variant == 0
                                      ? gts_preset(name, 8, GTSTORAGE_ALIGN_ELEMENTS, 2, 1, 0)
                                      : gts_preset(name, 64, GTSTORAGE_ALIGN_BYTES, 1, 2, 0);
  GTS_OK(gtstorage_preset_register(&p));
}

/* Replays @p picks random pool entries, alternately from the pool's own arrays, from one buffer
 * rewritten in place and from a fresh copy; returns the number of mismatches with @p expected
 * (or with @p alternative, when given). */
typedef struct replay {
  const request* pool;
  const outcome* expected;
  const outcome* alternative; /* may be NULL */
  int picks;
  int range; /* picks from pool[0 … range), 0 = the whole pool */
  uint64_t seed;
  int with_create;
  long mismatches;
  char first[1024];
} replay;

static void run_replay(replay* rp) {
  gts_rng g;
  request reused; /* same address every time, different content */
  outcome got;
  g.s = rp->seed;
  for (int it = 0; it < rp->picks; ++it) {
    const int i = (int)gts_rand_range(&g, 0, (rp->range > 0 ? rp->range : POOL) - 1);
    const int how = (int)gts_rand_range(&g, 0, 2);
    const int create = rp->with_create && gts_rand_range(&g, 0, 3) == 0;
    if (how == 0) {
      evaluate(&rp->pool[i], create, &got);
    } else if (how == 1) {
      reused = rp->pool[i];
      evaluate(&reused, create, &got);
    } else {
      request* copy = (request*)malloc(sizeof *copy);
      *copy = rp->pool[i];
      evaluate(copy, create, &got);
      free(copy);
    }
    outcome want = rp->expected[i];
    if (!create) memset(&want.create_status, 0, sizeof want - offsetof(outcome, create_status));
    int plan_ok = same_plan(&got, &want), create_ok = same_create(&got, &want);
    if (rp->alternative != NULL) {
      want = rp->alternative[i];
      if (!create) memset(&want.create_status, 0, sizeof want - offsetof(outcome, create_status));
      plan_ok = plan_ok || same_plan(&got, &want);
      create_ok = create_ok || same_create(&got, &want);
    }
    const int ok = plan_ok && create_ok;
    if (!ok && rp->mismatches++ == 0) {
      snprintf(rp->first, sizeof rp->first,
               "pick %d: pool entry %d (ndim %u, preset '%s'): %s differs; plan status %d vs %d, "
               "\"%.300s\"",
               it, i, rp->pool[i].ndim, rp->pool[i].use_preset ? rp->pool[i].preset : "(null)",
               plan_ok ? "storage" : "plan", got.plan_status, rp->expected[i].plan_status,
               got.plan_message);
    }
  }
}

static void check_replay(replay* rp) {
  run_replay(rp);
  if (rp->mismatches != 0) fail_msg("%ld mismatches; first: %s", rp->mismatches, rp->first);
}

/* Plans pool[0 … 3] (the preset-dependent ones) so that they are in this thread's memo. */
static void warm(const request* pool) {
  outcome o;
  for (int i = 0; i < 4; ++i) evaluate(&pool[i], 0, &o);
}

/* pool[1], pool[2] (and pool[3]) against @p ref right after a registration, memo still warm. */
static void check_first_after_registration(const request* pool, const outcome* ref) {
  for (int i = 1; i < 4; ++i) {
    outcome got;
    evaluate(&pool[i], 1, &got);
    if (!same_plan(&got, &ref[i]) || !same_create(&got, &ref[i]))
      fail_msg("pool entry %d: stale result after a preset registration (status %d vs %d)", i,
               got.plan_status, ref[i].plan_status);
  }
}

static void replay_both(const request* pool, const outcome* ref, uint64_t seed) {
  replay rp;
  memset(&rp, 0, sizeof rp); /* the fixed requests: many hits, pairs that differ in content */
  rp.pool = pool, rp.expected = ref, rp.picks = 3000, rp.range = FIXED, rp.seed = seed;
  rp.with_create = 1;
  check_replay(&rp);
  memset(&rp, 0, sizeof rp); /* the whole pool: hits and evictions */
  rp.pool = pool, rp.expected = ref, rp.picks = 3000, rp.seed = seed + 1000, rp.with_create = 1;
  check_replay(&rp);
}

/* Hits and misses agree across many random requests, and a preset's redefinition (or its first
 * registration) is seen at once by the thread that planned with its old meaning. */
static void test_hits_equal_misses(void** state) {
  static request pool[POOL];
  static outcome ref0[POOL], ref1[POOL], ref2[POOL];
  (void)state;
  make_pool(pool, 0xC0FFEEULL);

  /* "tst:var" and "tst:late" are unknown: errors, never memoized, identical messages. */
  references(pool, ref0);
  assert_int_equal(ref0[1].plan_status, GTSTORAGE_ERROR_UNKNOWN_PRESET);
  replay_both(pool, ref0, 1);

  warm(pool);
  register_variant("tst:var", 0);
  references(pool, ref1);
  assert_int_equal(ref1[1].plan_status, GTSTORAGE_OK);
  check_first_after_registration(pool, ref1);
  replay_both(pool, ref1, 2);

  /* New meaning for the same name (the memo is warm with the old one), and a late name. */
  warm(pool);
  register_variant("tst:var", 1);
  register_variant("tst:late", 0);
  references(pool, ref2);
  assert_true(memcmp(&ref1[1].plan, &ref2[1].plan, sizeof ref2[1].plan) != 0);
  assert_true(memcmp(&ref1[2].plan, &ref2[2].plan, sizeof ref2[2].plan) != 0);
  assert_int_equal(ref2[3].plan_status, GTSTORAGE_OK);
  check_first_after_registration(pool, ref2);
  replay_both(pool, ref2, 3);
}

/* The same with several threads planning and creating while another one flips a preset between
 * two meanings: during the flips each answer is one of the two, afterwards only the last. */
#define WORKERS 4
#define FLIPS 200

typedef struct worker {
  replay rp;
  pthread_barrier_t* barrier;
  atomic_int* flipping;
  replay after;
} worker;

static void* worker_main(void* arg) {
  worker* w = (worker*)arg;
  pthread_barrier_wait(w->barrier);
  while (atomic_load(w->flipping)) {
    run_replay(&w->rp);
    w->rp.seed += 7;
  }
  pthread_barrier_wait(w->barrier); /* the last registration is done */
  run_replay(&w->after);
  return NULL;
}

static void test_threads_and_registration(void** state) {
  static request pool[POOL];
  static outcome ref_a[POOL], ref_b[POOL];
  pthread_t threads[WORKERS];
  static worker workers[WORKERS];
  pthread_barrier_t barrier;
  atomic_int flipping;
  (void)state;
  make_pool(pool, 0xBADC0DEULL);
  register_variant("tst:var", 0);
  register_variant("tst:late", 1);
  references(pool, ref_a);
  register_variant("tst:var", 1);
  references(pool, ref_b);
  assert_true(memcmp(&ref_a[1].plan, &ref_b[1].plan, sizeof ref_a[1].plan) != 0);

  atomic_init(&flipping, 1);
  assert_int_equal(pthread_barrier_init(&barrier, NULL, WORKERS + 1), 0);
  for (int t = 0; t < WORKERS; ++t) {
    worker* w = &workers[t];
    memset(w, 0, sizeof *w);
    w->barrier = &barrier;
    w->flipping = &flipping;
    w->rp.pool = pool, w->rp.expected = ref_a, w->rp.alternative = ref_b;
    /* Mostly the preset-dependent requests, so that the memo holds them across the flips. */
    w->rp.picks = 50, w->rp.range = 6, w->rp.seed = 100 + (uint64_t)t, w->rp.with_create = 1;
    w->after.pool = pool, w->after.expected = ref_b, w->after.range = 6;
    w->after.picks = 500, w->after.seed = 200 + (uint64_t)t, w->after.with_create = 1;
    assert_int_equal(pthread_create(&threads[t], NULL, worker_main, w), 0);
  }
  pthread_barrier_wait(&barrier);
  for (int f = 0; f < FLIPS; ++f) {
    register_variant("tst:var", f & 1);
    sched_yield();
  }
  register_variant("tst:var", 1); /* ends as ref_b */
  atomic_store(&flipping, 0);
  pthread_barrier_wait(&barrier);
  for (int t = 0; t < WORKERS; ++t) assert_int_equal(pthread_join(threads[t], NULL), 0);
  pthread_barrier_destroy(&barrier);
  for (int t = 0; t < WORKERS; ++t) {
    if (workers[t].rp.mismatches != 0)
      fail_msg("worker %d during flips: %ld mismatches; first: %s", t, workers[t].rp.mismatches,
               workers[t].rp.first);
    if (workers[t].after.mismatches != 0)
      fail_msg("worker %d after flips: %ld mismatches; first: %s", t, workers[t].after.mismatches,
               workers[t].after.first);
  }
}

/* Requests whose strings do not fit a memo key (a long dims list, a long unknown preset name)
 * are still planned correctly, every time. */
static void test_unmemoizable_requests(void** state) {
  int64_t shape[12] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  gtstorage_create_options o;
  gtstorage_plan_info a, b;
  char long_name[200];
  (void)state;
  o = gts_options(12, shape, NULL);
  /* Longer than a memo key's room for dims (whatever the parser makes of it). */
  o.dims = "I,J,K,0,1,2,3,4,5,6,7,8                                                        ";
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  const int st = gtstorage_plan(&o, &a);
  char first_message[512];
  copy_message(first_message, sizeof first_message, gtstorage_last_error());
  for (int k = 0; k < 3; ++k) {
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    assert_int_equal(gtstorage_plan(&o, &b), st);
    if (st == GTSTORAGE_OK) {
      assert_memory_equal(&a, &b, sizeof a);
    } else {
      assert_string_equal(gtstorage_last_error(), first_message);
    }
  }
  o.dims = NULL;
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  o.preset = long_name;
  for (int k = 0; k < 3; ++k) {
    GTS_EXPECT(gtstorage_plan(&o, &b), GTSTORAGE_ERROR_UNKNOWN_PRESET, "xxxx");
  }
}

GTS_TEST_MAIN(gts_group_setup, gts_group_teardown)
