/*
 * libgtstorage_python from C: the call path (storages in order, named scalars), the views it
 * hands Python (addresses, caching, no stale view), threads, and every kind of bad input of
 * issue 24 point 6, each answered by a status and a message naming the function and the
 * argument, with the process able to call again. Python code:
 * tests/integration/bridge/py/bridge_checks.py.
 *
 * One interpreter per process (Python cannot be restarted), so the tests run in order in one
 * group: before init, init, calls, finalize, after finalize. `test_bridge_capi --bad-home`
 * checks a Python that cannot start, in a process of its own.
 *
 * Needs GTSTORAGE_BRIDGE_VENV: a virtual environment of the embedded Python with NumPy
 * (tests/integration/bridge/run.sh uses the GT4Py test's); skipped (77) without it.
 */
#include <pthread.h>

#include "../../c/support.h"
#include "gtstorage/gtstorage_python.h"

static const char* g_venv;

static gtstorage_handle wrap2d(double* data, int64_t n0, int64_t n1) {
  const int64_t shape[2] = {n0, n1};
  return gts_wrap_host(2, shape, data);
}

static gtstorage_handle wrap1d(double* data, int64_t n) {
  const int64_t shape[1] = {n};
  return gts_wrap_host(1, shape, data);
}

/* Wrap options over the host memory @p data of @p ndim extents @p shape, the rest at their
 * defaults, for the caller to set. */
static gtstorage_wrap_options host_wrap_options(uint32_t ndim, const int64_t* shape, void* data) {
  gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
  w.ndim = ndim;
  w.shape = shape;
  w.data = data;
  return w;
}

static gtstorage_python_function resolve(const char* target) {
  gtstorage_python_function fn = 0;
  GTS_OK(gtstorage_python_resolve(target, &fn));
  assert_true(fn != 0);
  return fn;
}

/* The exact status, and a message that contains every '|'-separated part of @p words (the
 * call, the function, the argument, the reason). */
#define expect_failure(call, expected, words) expect_failure_at(#call, (call), (expected), (words))
static void expect_failure_at(const char* what, int status, int expected, const char* words) {
  const char* msg = gtstorage_last_error();
  if (status != expected) {
    fail_msg("%s returned %s (%d), expected %s; message \"%s\"", what,
             gtstorage_status_name(status), status, gtstorage_status_name(expected), msg);
  }
  char part[256];
  for (const char* p = words; *p;) {
    const char* bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n >= sizeof part) n = sizeof part - 1;
    memcpy(part, p, n);
    part[n] = '\0';
    if (!strstr(msg, part)) fail_msg("%s: message \"%s\" does not say \"%s\"", what, msg, part);
    if (!bar) break;
    p = bar + 1;
  }
}

/* Resolves @p target, checks that its call on the one storage @p h fails as expect_failure
 * says, and releases the function; returns the (released) function handle. */
static gtstorage_python_function expect_call_failure(const char* target, gtstorage_handle* h,
                                                     int expected, const char* words) {
  gtstorage_python_function fn = resolve(target);
  expect_failure(gtstorage_python_call(fn, h, 1, NULL, 0, 0), expected, words);
  GTS_OK(gtstorage_python_release_function(fn));
  return fn;
}

/* ---- before init ------------------------------------------------------------------------ */

static void test_calls_before_init(void** state) {
  (void)state;
  int32_t s = -1;
  GTS_OK(gtstorage_python_state(&s));
  assert_int_equal(s, 0);
  gtstorage_python_function fn = 99;
  expect_failure(gtstorage_python_resolve("bridge_checks:axpy", &fn), GTSTORAGE_ERROR_PYTHON,
                 "gtstorage_python_resolve|not initialized");
  assert_true(fn == 0);
  expect_failure(gtstorage_python_call(1, NULL, 0, NULL, 0, 0), GTSTORAGE_ERROR_PYTHON,
                 "gtstorage_python_call|gtstorage_python_init first");
  GTS_OK(gtstorage_python_finalize()); /* nothing to do */
  assert_non_null(strstr(gtstorage_python_build_python(), "3."));
}

static void test_init_bad_options(void** state) {
  (void)state;
  gtstorage_python_options o = GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.struct_size = 3;
  expect_failure(gtstorage_python_init(&o), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "options.struct_size");
  o = (gtstorage_python_options)GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.virtual_env = "/nonexistent/venv";
  expect_failure(gtstorage_python_init(&o), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "virtual_env|not a directory");
  o.virtual_env = GTS_BRIDGE_BINARY_DIR; /* a directory, but no pyvenv.cfg */
  expect_failure(gtstorage_python_init(&o), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "virtual_env|not a virtual environment");
  /* A venv of another Python minor version. */
  FILE* cfg = fopen(GTS_BRIDGE_BINARY_DIR "/venv-2.7/pyvenv.cfg", "w");
  assert_non_null(cfg);
  fputs("home = /usr/bin\nversion = 2.7.18\n", cfg);
  fclose(cfg);
  o.virtual_env = GTS_BRIDGE_BINARY_DIR "/venv-2.7";
  expect_failure(
      gtstorage_python_init(&o), GTSTORAGE_ERROR_INVALID_ARGUMENT,
      "virtual_env|was made with Python 2.7.18|this libgtstorage_python embeds Python 3.");
  int32_t s = -1;
  GTS_OK(gtstorage_python_state(&s));
  assert_int_equal(s, 0); /* nothing started: a good init may follow */
}

/* gts-test-entry: cmocka_unit_test (the interpreter's own objects are not the test's leak) */
static void test_init(void** state) {
  (void)state;
  gtstorage_python_options o = GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.virtual_env = g_venv;
  o.sys_path = GTS_BRIDGE_SYS_PATH;
  GTS_OK(gtstorage_python_init(&o));
  int32_t s = -1;
  GTS_OK(gtstorage_python_state(&s));
  assert_int_equal(s, 1);
  GTS_OK(gtstorage_python_init(NULL)); /* a second init does nothing */
}

/* ---- resolve ------------------------------------------------------------------------------ */

static void test_resolve_errors(void** state) {
  (void)state;
  gtstorage_python_function fn = 5;
  expect_failure(gtstorage_python_resolve(NULL, &fn), GTSTORAGE_ERROR_INVALID_ARGUMENT, "target");
  expect_failure(gtstorage_python_resolve("bridge_checks:axpy", NULL),
                 GTSTORAGE_ERROR_INVALID_ARGUMENT, "out");
  expect_failure(gtstorage_python_resolve("bridge_checks.axpy", &fn),
                 GTSTORAGE_ERROR_INVALID_ARGUMENT, "target|package.module:function");
  assert_true(fn == 0);
  expect_failure(gtstorage_python_resolve("no_such_module_xyz:f", &fn), GTSTORAGE_ERROR_PYTHON,
                 "no_such_module_xyz:f|ModuleNotFoundError|no_such_module_xyz");
  expect_failure(gtstorage_python_resolve("bridge_checks:no_such_function", &fn),
                 GTSTORAGE_ERROR_PYTHON, "bridge_checks:no_such_function|AttributeError");
  expect_failure(gtstorage_python_resolve("bridge_checks:max_inside", &fn), GTSTORAGE_ERROR_PYTHON,
                 "bridge_checks:max_inside|not callable");
  /* After the failures, resolving works. */
  fn = resolve("bridge_checks:axpy");
  GTS_OK(gtstorage_python_release_function(fn));
  expect_failure(gtstorage_python_release_function(fn), GTSTORAGE_ERROR_INVALID_HANDLE,
                 "gtstorage_python_release_function|fn");
}

/* ---- calls --------------------------------------------------------------------------------- */

static void test_call_numpy_in_place(void** state) {
  (void)state;
  double a[12], b[12];
  for (int i = 0; i < 12; ++i) {
    a[i] = i;
    b[i] = 100.0 * i;
  }
  gtstorage_handle hs[2] = {wrap2d(a, 3, 4), wrap2d(b, 3, 4)};
  gtstorage_python_function fn = resolve("bridge_checks:axpy");
  gtstorage_python_arg alpha = {"alpha", GTSTORAGE_PYTHON_DOUBLE, 0, 0, 0.5, NULL};
  for (int step = 1; step <= 3; ++step) {
    GTS_OK(gtstorage_python_call(fn, hs, 2, &alpha, 1, 0));
    for (int i = 0; i < 12; ++i) assert_true(a[i] == i + step * 50.0 * i);
  }
  for (int i = 0; i < 12; ++i) assert_true(b[i] == 100.0 * i); /* readonly: untouched */
  gtstorage_stats stats = GTSTORAGE_STATS_INIT;
  GTS_OK(gtstorage_get_stats(&stats));
  assert_true(stats.host_bytes == 0); /* nothing allocated: Python worked on the caller's memory */
  GTS_OK(gtstorage_python_release_function(fn));
  GTS_OK(gtstorage_release(hs[0]));
  GTS_OK(gtstorage_release(hs[1]));
}

static void test_named_scalars(void** state) {
  (void)state;
  double out[6] = {0};
  gtstorage_handle h = wrap1d(out, 6);
  gtstorage_python_function fn = resolve("bridge_checks:record_scalars");
  gtstorage_python_arg args[4] = {{"i", GTSTORAGE_PYTHON_INT64, 0, -9007199254740993LL, 0, NULL},
                                  {"x", GTSTORAGE_PYTHON_DOUBLE, 0, 0, -2.5e-300, NULL},
                                  {"flag", GTSTORAGE_PYTHON_BOOL, 0, 42, 0, NULL},
                                  {"text", GTSTORAGE_PYTHON_STRING, 0, 0, 0, "h\xc3\xa9llo"}};
  GTS_OK(gtstorage_python_call(fn, &h, 1, args, 4, 0));
  assert_true(out[0] == (double)-9007199254740993LL);
  assert_true(out[1] == -2.5e-300);
  assert_true(out[2] == 1.0);
  assert_true(out[3] == 5.0); /* "héllo": 5 characters from 6 UTF-8 bytes */
  assert_true(out[4] == 'h');
  assert_true(out[5] == 1.0); /* int, float, bool, str */

  /* Bad scalars: rejected before Python runs, naming the argument. */
  gtstorage_python_arg bad = args[0];
  bad.name = NULL;
  expect_failure(gtstorage_python_call(fn, &h, 1, &bad, 1, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "bridge_checks:record_scalars|args[0].name");
  bad = args[0];
  bad.kind = 9;
  expect_failure(gtstorage_python_call(fn, &h, 1, &bad, 1, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "args[0].kind|'i'");
  bad = args[3];
  bad.string_value = NULL;
  expect_failure(gtstorage_python_call(fn, &h, 1, &bad, 1, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "args[0].string_value|'text'");
  /* A keyword the function does not take: Python's TypeError, naming it. */
  gtstorage_python_arg extra[5] = {
      args[0], args[1], args[2], args[3], {"nope", GTSTORAGE_PYTHON_INT64, 0, 1, 0, NULL}};
  expect_failure(gtstorage_python_call(fn, &h, 1, extra, 5, 0), GTSTORAGE_ERROR_PYTHON,
                 "bridge_checks:record_scalars|TypeError|nope");
  /* A missing one. */
  expect_failure(gtstorage_python_call(fn, &h, 1, args, 3, 0), GTSTORAGE_ERROR_PYTHON,
                 "TypeError|text");
  GTS_OK(gtstorage_python_call(fn, &h, 1, args, 4, 0)); /* and the next call works */
  expect_failure(gtstorage_python_call(fn, &h, 1, args, 4, 1), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "flags");
  expect_failure(gtstorage_python_call(fn, NULL, 1, args, 4, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "storages");
  expect_failure(gtstorage_python_call(fn, &h, 1, NULL, 4, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "args");
  GTS_OK(gtstorage_python_release_function(fn));
  GTS_OK(gtstorage_release(h));
}

/* What bridge_checks.describe saw: id, address, ndim, shape[7], writeable. */
typedef struct seen {
  double id, address, ndim, shape[7], writeable;
} seen;

static void test_views_cached_and_never_stale(void** state) {
  (void)state;
  double* memory = calloc(24, sizeof(double));
  double report[11];
  gtstorage_handle out = wrap1d(report, 11);
  gtstorage_python_function fn = resolve("bridge_checks:describe");

  gtstorage_handle a = wrap2d(memory, 4, 6);
  gtstorage_handle hs[2] = {a, out};
  GTS_OK(gtstorage_python_call(fn, hs, 2, NULL, 0, 0));
  const seen first = *(const seen*)report;
  assert_true(first.address == (double)(uintptr_t)memory); /* the caller's memory, no copy */
  assert_true(first.ndim == 2 && first.shape[0] == 4 && first.shape[1] == 6);
  GTS_OK(gtstorage_python_call(fn, hs, 2, NULL, 0, 0));
  assert_true(((const seen*)report)->id == first.id); /* the same handle: the cached view */

  /* The model releases the storage and wraps the same memory with another shape: the address
   * is the same (py2fgen's pointer-keyed cache would hand out the 4x6 view), the handle is not. */
  GTS_OK(gtstorage_release(a));
  hs[0] = a;
  expect_failure(gtstorage_python_call(fn, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_HANDLE,
                 "bridge_checks:describe|storages[0]");
  gtstorage_handle b = wrap2d(memory, 3, 8);
  assert_true(b != a);
  hs[0] = b;
  GTS_OK(gtstorage_python_call(fn, hs, 2, NULL, 0, 0));
  const seen second = *(const seen*)report;
  assert_true(second.address == (double)(uintptr_t)memory);
  assert_true(second.shape[0] == 3 && second.shape[1] == 8);
  assert_true(second.id != first.id);

  GTS_OK(gtstorage_python_release_function(fn));
  GTS_OK(gtstorage_release(b));
  GTS_OK(gtstorage_release(out));
  free(memory);
}

static void test_declaration_mismatches(void** state) {
  (void)state;
  double a[12] = {0}, b[12] = {0};
  float f[12] = {0};
  gtstorage_handle ha = wrap2d(a, 3, 4), hb = wrap2d(b, 3, 4);
  const int64_t shape[2] = {3, 4}, shape3[3] = {3, 2, 2};
  gtstorage_wrap_options w = host_wrap_options(2, shape, f);
  w.dtype = "<f4";
  gtstorage_handle hf = 0;
  GTS_OK(gtstorage_wrap(&w, &hf));
  gtstorage_handle h3 = gts_wrap_host(3, shape3, a);
  w = host_wrap_options(2, shape, a);
  w.readonly = 1;
  gtstorage_handle hro = 0;
  GTS_OK(gtstorage_wrap(&w, &hro));

  gtstorage_python_function fn = resolve("bridge_checks:axpy");
  gtstorage_handle hs[2] = {ha, hb};
  /* wrong arity */
  expect_failure(gtstorage_python_call(fn, hs, 1, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "bridge_checks:axpy|1 storage passed|takes 2");
  expect_failure(gtstorage_python_call(fn, hs, 0, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "0 storages passed");
  /* dtype */
  hs[1] = hf;
  expect_failure(gtstorage_python_call(fn, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "bridge_checks:axpy|argument 1 ('b')|float32");
  /* ndim */
  hs[1] = h3;
  expect_failure(gtstorage_python_call(fn, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "argument 1 ('b')|3 dimensions|ndim=2");
  /* read-only storage for a written argument */
  hs[0] = hro;
  hs[1] = hb;
  expect_failure(gtstorage_python_call(fn, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_ARGUMENT,
                 "argument 0 ('a')|read-only");
  /* a read-only storage for the readonly argument is fine */
  hs[0] = ha;
  hs[1] = hro;
  GTS_OK(gtstorage_python_call(fn, hs, 2, NULL, 0, 0));
  GTS_OK(gtstorage_python_release_function(fn));

  /* dims and halo */
  expect_call_failure("bridge_checks:halo_checked", &h3, GTSTORAGE_ERROR_INVALID_ARGUMENT,
                      "bridge_checks:halo_checked|argument 0 ('u')|halo");
  /* a host storage for a device argument */
  fn = expect_call_failure(
      "bridge_checks:needs_device", &h3, GTSTORAGE_ERROR_INVALID_ARGUMENT,
      "bridge_checks:needs_device|argument 0 ('u')|side='device'|host buffer only");
  /* an invalid function handle (fn is released) */
  expect_failure(gtstorage_python_call(fn, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_HANDLE,
                 "gtstorage_python_call|fn");
  expect_failure(gtstorage_python_call(0, hs, 2, NULL, 0, 0), GTSTORAGE_ERROR_INVALID_HANDLE,
                 "gtstorage_python_call|fn");
  gtstorage_handle all[5] = {ha, hb, hf, h3, hro};
  for (int i = 0; i < 5; ++i) GTS_OK(gtstorage_release(all[i]));
}

static void test_exceptions(void** state) {
  (void)state;
  double a[6] = {0};
  gtstorage_handle h = wrap2d(a, 2, 3);
  gtstorage_python_function fn = resolve("bridge_checks:raises");
  for (int k = 0; k < 2; ++k) { /* the interpreter stays usable: the same failure twice */
    expect_failure(gtstorage_python_call(fn, &h, 1, NULL, 0, 0), GTSTORAGE_ERROR_PYTHON,
                   "gtstorage_python_call(bridge_checks:raises)|ValueError|model asked for "
                   "trouble with shape (2, 3)|bridge_checks.py:|in raises");
  }
  GTS_OK(gtstorage_python_release_function(fn));
  /* A gtstorage exception raised in Python keeps its status. */
  expect_call_failure("bridge_checks:raises_gtstorage", &h, GTSTORAGE_ERROR_INVALID_HANDLE,
                      "GTValueError|raises_gtstorage");
  /* An undeclared function takes any number of storages as NumPy views. */
  fn = resolve("bridge_checks:undeclared");
  gtstorage_handle two[2] = {h, h};
  GTS_OK(gtstorage_python_call(fn, two, 2, NULL, 0, 0));
  for (int i = 0; i < 6; ++i) assert_true(a[i] == 14.0);
  GTS_OK(gtstorage_python_call(fn, NULL, 0, NULL, 0, 0));
  GTS_OK(gtstorage_python_release_function(fn));
  GTS_OK(gtstorage_release(h));
}

/* ---- threads ------------------------------------------------------------------------------ */

enum { kThreads = 4, kCallsPerThread = 10 };

typedef struct worker {
  gtstorage_python_function fn;
  gtstorage_handle h;
  double ms;
  int failures;
} worker;

static void* work(void* p) {
  worker* w = p;
  gtstorage_python_arg ms = {"ms", GTSTORAGE_PYTHON_DOUBLE, 0, 0, w->ms, NULL};
  for (int i = 0; i < kCallsPerThread; ++i) {
    if (gtstorage_python_call(w->fn, &w->h, 1, &ms, 1, 0) != GTSTORAGE_OK) ++w->failures;
  }
  return NULL;
}

/* Threads of the model (an OpenMP region) call at once; one of them holds the GIL (a Python
 * loop without a sleep) while the others ask for it: every call completes, every result is
 * there, none is lost. */
static void test_threads(void** state) {
  (void)state;
  double data[kThreads][3];
  worker w[kThreads];
  pthread_t t[kThreads];
  gtstorage_python_function fn = resolve("bridge_checks:hold_gil");
  for (int k = 0; k < kThreads; ++k) {
    for (int i = 0; i < 3; ++i) data[k][i] = k;
    w[k] = (worker){fn, wrap1d(data[k], 3), k == 0 ? 30.0 : 1.0, 0};
  }
  for (int k = 0; k < kThreads; ++k) assert_int_equal(pthread_create(&t[k], NULL, work, &w[k]), 0);
  for (int k = 0; k < kThreads; ++k) assert_int_equal(pthread_join(t[k], NULL), 0);
  for (int k = 0; k < kThreads; ++k) {
    assert_int_equal(w[k].failures, 0);
    for (int i = 0; i < 3; ++i) assert_true(data[k][i] == k + kCallsPerThread);
    GTS_OK(gtstorage_release(w[k].h));
  }
  GTS_OK(gtstorage_python_release_function(fn));
}

/* ---- the end -------------------------------------------------------------------------------- */

static void test_finalize(void** state) {
  (void)state;
  double a[6] = {0};
  gtstorage_handle h = wrap2d(a, 2, 3);
  gtstorage_python_function fn = resolve("bridge_checks:undeclared");
  GTS_OK(gtstorage_python_finalize());
  int32_t s = -1;
  GTS_OK(gtstorage_python_state(&s));
  assert_int_equal(s, 0);
  expect_failure(gtstorage_python_call(fn, &h, 1, NULL, 0, 0), GTSTORAGE_ERROR_PYTHON,
                 "gtstorage_python_call|finalized");
  gtstorage_python_function g = 0;
  expect_failure(gtstorage_python_resolve("bridge_checks:axpy", &g), GTSTORAGE_ERROR_PYTHON,
                 "finalized");
  expect_failure(gtstorage_python_init(NULL), GTSTORAGE_ERROR_UNSUPPORTED,
                 "gtstorage_python_init|cannot be started again");
  GTS_OK(gtstorage_python_finalize()); /* again: nothing to do */
  /* The storage library goes on. */
  GTS_OK(gtstorage_fill_double(h, 3.0));
  assert_true(a[5] == 3.0);
  GTS_OK(gtstorage_release(h));
}

/* ---- a Python that cannot start (own process) ------------------------------------------- */

/* @p dir: a directory without lib/python3.X, given as python_home; NULL: PYTHONHOME names it. */
static int bad_home(const char* dir) {
  gtstorage_python_options o = GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.python_home = dir;
  o.use_environment = dir == NULL;
  if (dir == NULL) dir = getenv("PYTHONHOME");
  if (dir == NULL) {
    printf("PYTHONHOME not set\n");
    return 1;
  }
  int rc = 0;
  for (int k = 0; k < 2; ++k) {
    const int st = gtstorage_python_init(&o);
    printf("gtstorage_python_init(python_home=%s): %s: %s\n", dir, gtstorage_status_name(st),
           gtstorage_last_error());
    if (st != GTSTORAGE_ERROR_PYTHON || !strstr(gtstorage_last_error(), "Python could not start") ||
        !strstr(gtstorage_last_error(), dir))
      rc = 1;
  }
  gtstorage_python_function fn = 0;
  if (gtstorage_python_resolve("os:getcwd", &fn) != GTSTORAGE_ERROR_PYTHON) rc = 1;
  /* The model goes on with the rest of the library. */
  double a[4] = {0};
  const int64_t shape[1] = {4};
  const gtstorage_wrap_options w = host_wrap_options(1, shape, a);
  gtstorage_handle h = 0;
  if (gtstorage_wrap(&w, &h) != GTSTORAGE_OK || gtstorage_fill_double(h, 2.0) != GTSTORAGE_OK ||
      a[3] != 2.0 || gtstorage_release(h) != GTSTORAGE_OK)
    rc = 1;
  printf("%s\n", rc == 0 ? "bad home: failed cleanly, the process goes on" : "FAILED");
  return rc;
}

/* A model that never calls gtstorage_python_finalize: the process exits normally (Python's
 * state is left to the OS, as for any embedding that skips Py_FinalizeEx). */
static int skip_finalize(const char* venv, const char* sys_path) {
  gtstorage_python_options o = GTSTORAGE_PYTHON_OPTIONS_INIT;
  o.virtual_env = venv;
  o.sys_path = sys_path;
  double a[6] = {1, 2, 3, 4, 5, 6};
  gtstorage_handle h = wrap2d(a, 2, 3);
  gtstorage_python_function fn = 0;
  if (gtstorage_python_init(&o) != GTSTORAGE_OK ||
      gtstorage_python_resolve("bridge_checks:undeclared", &fn) != GTSTORAGE_OK ||
      gtstorage_python_call(fn, &h, 1, NULL, 0, 0) != GTSTORAGE_OK || a[5] != 13.0) {
    printf("FAILED: %s\n", gtstorage_last_error());
    return 1;
  }
  printf("called; exiting without gtstorage_python_finalize\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--bad-home") == 0) return bad_home(argv[2]);
  if (argc == 2 && strcmp(argv[1], "--bad-pythonhome") == 0) return bad_home(NULL);
  g_venv = getenv("GTSTORAGE_BRIDGE_VENV");
  if (g_venv == NULL || *g_venv == '\0') {
    printf("SKIPPED: GTSTORAGE_BRIDGE_VENV (a venv of the embedded Python with NumPy) not set\n");
    return 77;
  }
  if (argc == 2 && strcmp(argv[1], "--skip-finalize") == 0) {
    return skip_finalize(g_venv, GTS_BRIDGE_SYS_PATH);
  }
  int failed = 0;
  GTS_RUN_TESTS(failed, "tests", GTS_TESTS, GTS_TEST, gts_group_setup, gts_group_teardown);
  return failed;
}
