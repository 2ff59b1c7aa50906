/* libgtstorage_mpi: the collective calls check their collective arguments collectively (issue
 * 23, F7, F9, F10), on 1 … 6 processes under mpiexec (CTest label "mpi"):
 *
 * - one process without a communicator (MPI_COMM_NULL, a handle MPI never issued) or without a
 *   decomposition (a bad handle in gtstorage_exchange_create): it returns at once naming its
 *   argument, the others return GTSTORAGE_ERROR_COMMUNICATION at the deadline
 *   (GTSTORAGE_MPI_AGREE_TIMEOUT, set to 1 s around these calls only), naming it; nobody hangs;
 * - one process with any other bad argument (ndim, options.reserved, out, dims, proc_dims, the
 *   deadline variable itself; pattern, options.struct_size, nfields, out of an exchange): it
 *   returns its own status, the others GTSTORAGE_ERROR_COMMUNICATION naming its rank;
 * - processes that pass different ndim, dims, proc_dims, periodic, reorder, or a different
 *   pattern or number of fields to an exchange: GTSTORAGE_ERROR_INVALID_ARGUMENT on every
 *   process naming the parameter, two values and their ranks;
 * - proc_dims whose product overflows ({65536, 65536} and more): INVALID_ARGUMENT naming
 *   proc_dims, no signed overflow (the UBSan build stops at one).
 *
 * A communicator that a process never joined keeps a collective operation pending for good, so
 * each such case runs on a communicator of its own that is never used again. Checks do not stop
 * a process; the failures of all processes are summed at the end. "test_mpi_agreement NAME"
 * runs one group (bad_comm, bad_decomp, one_bad, disagree, overflow). */
#include <gtstorage/gtstorage_mpi.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* A status @p rc that must be @p status with a message containing every one of @p texts
 * (NULL-terminated). */
static void expect(const char* file, int line, int rc, int status, ...) {
  va_list ap;
  va_start(ap, status);
  int ok = rc == status;
  const char* missing = NULL;
  for (const char* t = va_arg(ap, const char*); t != NULL; t = va_arg(ap, const char*)) {
    if (strstr(gtstorage_last_error(), t) == NULL && missing == NULL) missing = t;
  }
  va_end(ap);
  ++checks;
  if (!ok || missing != NULL) {
    failed(file, line, "-> %s \"%s\", expected %s with \"%s\"", gtstorage_status_name(rc),
           gtstorage_last_error(), gtstorage_status_name(status), missing ? missing : "");
  }
}
#define EXPECT(rc, status, ...) expect(__FILE__, __LINE__, (rc), (status), __VA_ARGS__, NULL)

/* The others' message when rank @p r failed: "failed on rank R: <text>". */
static const char* failed_on(int r) {
  static char text[64];
  snprintf(text, sizeof text, "failed on rank %d: ", r);
  return text;
}

static gtstorage_decomp world_grid(void) {
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  o.comm = comm_f(MPI_COMM_WORLD);
  const int32_t periodic[2] = {1, 1};
  o.periodic = periodic;
  gtstorage_decomp d = 0;
  OK(gtstorage_decomp_create(&o, &d));
  return d;
}

/* A host field of this process's block of a 12 x 10 domain with halo 1 in I and J. */
static gtstorage_handle make_field(gtstorage_decomp d) {
  const int64_t global[2] = {12, 10};
  int64_t offset[2] = {0, 0}, extent[2] = {1, 1};
  OK(gtstorage_decomp_local_extent(d, -1, global, 2, offset, extent));
  const int64_t shape[3] = {extent[0] + 2, extent[1] + 2, 3};
  const int64_t halo[6] = {1, 1, 1, 1, 0, 0};
  gtstorage_create_options co = GTSTORAGE_CREATE_OPTIONS_INIT;
  co.ndim = 3;
  co.shape = shape;
  co.halo = halo;
  co.preset = "gt:cpu_kfirst";
  gtstorage_handle h = 0;
  OK(gtstorage_create(&co, &h));
  return h;
}

/* ---- F7: a process without a communicator or decomposition -------------------------------- */

static void bad_comm_cases(void) {
  config = "bad communicator on the last rank";
  setenv("GTSTORAGE_MPI_AGREE_TIMEOUT", "1", 1);
  const int64_t bad[2] = {comm_f(MPI_COMM_NULL), 987654};
  for (int i = 0; i < 2; ++i) {
    /* The others' communicator keeps an operation that the last process never joins: one of
     * its own, never used again (nor freed: freeing is collective). */
    MPI_Comm victim = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &victim);
    gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
    o.comm = rank_ == size_ - 1 ? bad[i] : comm_f(victim);
    gtstorage_decomp d = 0;
    const double start = MPI_Wtime();
    const int rc = gtstorage_decomp_create(&o, &d);
    const double took = MPI_Wtime() - start;
    if (rank_ == size_ - 1) {
      EXPECT(rc, GTSTORAGE_ERROR_INVALID_ARGUMENT, "comm: ", "is not a valid communicator");
      CHECK(took < 5, "the process without a communicator took %.2f s to return", took);
    } else {
      EXPECT(rc, GTSTORAGE_ERROR_COMMUNICATION, "gtstorage_decomp_create: not every process",
             "MPI_Comm_idup", "deadline of 1 s (GTSTORAGE_MPI_AGREE_TIMEOUT)",
             "the communicator passed keeps it pending");
      CHECK(took > 0.9 && took < 30, "returned after %.2f s (deadline 1 s)", took);
    }
    CHECK(d == 0, "a handle was written on failure");
  }
  unsetenv("GTSTORAGE_MPI_AGREE_TIMEOUT");
}

static void bad_decomp_cases(void) {
  config = "bad decomposition handle on the last rank";
  gtstorage_decomp d = world_grid();
  gtstorage_handle f = make_field(d);
  setenv("GTSTORAGE_MPI_AGREE_TIMEOUT", "1", 1);
  gtstorage_exchange ex = 0;
  const double start = MPI_Wtime();
  const int rc = gtstorage_exchange_create(rank_ == size_ - 1 ? 12345 : d, &f, 1, NULL, &ex);
  const double took = MPI_Wtime() - start;
  if (rank_ == size_ - 1) {
    EXPECT(rc, GTSTORAGE_ERROR_INVALID_HANDLE, "decomp: 12345");
  } else {
    EXPECT(rc, GTSTORAGE_ERROR_COMMUNICATION, "gtstorage_exchange_create: not every process",
           "deadline of 1 s", "the decomposition's communicator");
    CHECK(took > 0.9 && took < 30, "returned after %.2f s (deadline 1 s)", took);
    /* That decomposition's communicator is not used again: refused at once. */
    EXPECT(gtstorage_exchange_create(d, &f, 1, NULL, &ex), GTSTORAGE_ERROR_COMMUNICATION,
           "decomp: its communicator keeps a collective operation");
  }
  unsetenv("GTSTORAGE_MPI_AGREE_TIMEOUT");
  OK(gtstorage_release(f));
  OK(gtstorage_decomp_release(d));
}

/* ---- one process with a bad argument: its own status, the others the rank ------------------ */

/* @p rc of a call where only the last process passed a bad argument: its own @p status and
 * @p text there, GTSTORAGE_ERROR_COMMUNICATION "failed on rank <last>: <text>" elsewhere. */
#define ONE_BAD(rc, status, text)                                                \
  do {                                                                           \
    if (rank_ == size_ - 1) {                                                    \
      EXPECT((rc), (status), (text));                                            \
    } else {                                                                     \
      EXPECT((rc), GTSTORAGE_ERROR_COMMUNICATION, failed_on(size_ - 1), (text)); \
    }                                                                            \
  } while (0)

static void one_bad_cases(void) {
  const int last = rank_ == size_ - 1;
  gtstorage_decomp d = 0;
  config = "one process: decomp_create";
  {
    gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
    o.comm = comm_f(MPI_COMM_WORLD);
    o.ndim = last ? 4 : 2;
    ONE_BAD(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
            "ndim: 4 is out of range");
    o.ndim = 2;
    o.reserved = last ? 1 : 0;
    ONE_BAD(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
            "options.reserved: must be 0");
    o.reserved = 0;
    ONE_BAD(gtstorage_decomp_create(&o, last ? NULL : &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
            "out: must not be NULL");
    o.dims = last ? "IX" : "IJ";
    ONE_BAD(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT, "dims: 'X'");
    o.dims = NULL;
    const int32_t negative[2] = {-1, 1};
    o.proc_dims = last ? negative : NULL;
    ONE_BAD(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
            "proc_dims: -1 processes in dim I is negative");
    o.proc_dims = NULL;
    if (last) setenv("GTSTORAGE_MPI_AGREE_TIMEOUT", "soon", 1);
    ONE_BAD(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
            "GTSTORAGE_MPI_AGREE_TIMEOUT: \"soon\" is not a number of seconds");
    unsetenv("GTSTORAGE_MPI_AGREE_TIMEOUT");
    /* The same on every process: each names its own argument. */
    setenv("GTSTORAGE_MPI_AGREE_TIMEOUT", "-1", 1);
    EXPECT(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
           "GTSTORAGE_MPI_AGREE_TIMEOUT: \"-1\"");
    /* 0: no deadline. */
    setenv("GTSTORAGE_MPI_AGREE_TIMEOUT", "0", 1);
    OK(gtstorage_decomp_create(&o, &d));
    OK(gtstorage_decomp_release(d));
    unsetenv("GTSTORAGE_MPI_AGREE_TIMEOUT");
    CHECK(d != 0, "no handle");
  }

  config = "one process: exchange_create";
  d = world_grid();
  gtstorage_handle f = make_field(d);
  gtstorage_exchange ex = 0;
  gtstorage_exchange_options eo = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
  eo.pattern = last ? 7 : GTSTORAGE_EXCHANGE_BOX;
  ONE_BAD(gtstorage_exchange_create(d, &f, 1, &eo, &ex), GTSTORAGE_ERROR_INVALID_ARGUMENT,
          "pattern: 7");
  eo.pattern = GTSTORAGE_EXCHANGE_BOX;
  eo.struct_size = last ? 5 : (uint32_t)sizeof eo;
  ONE_BAD(gtstorage_exchange_create(d, &f, 1, &eo, &ex), GTSTORAGE_ERROR_INVALID_ARGUMENT,
          "options.struct_size: 5");
  eo.struct_size = (uint32_t)sizeof eo;
  ONE_BAD(gtstorage_exchange_create(d, &f, 1, &eo, last ? NULL : &ex),
          GTSTORAGE_ERROR_INVALID_ARGUMENT, "out: must not be NULL");
  ONE_BAD(gtstorage_exchange_create(d, &f, last ? 0 : 1, &eo, &ex),
          GTSTORAGE_ERROR_INVALID_ARGUMENT, "nfields: 0 is out of range");
  /* Still usable afterwards. */
  OK(gtstorage_exchange_create(d, &f, 1, &eo, &ex));
  OK(gtstorage_exchange_run(ex));
  OK(gtstorage_exchange_release(ex));
  OK(gtstorage_release(f));
  OK(gtstorage_decomp_release(d));
}

/* ---- F10: processes that disagree ---------------------------------------------------------- */

static void disagree_cases(void) {
  /* Rank 0 differs from the others (nothing to disagree on one process: there it must work). */
  const int odd = rank_ == 0 && size_ > 1;
  const int expected = size_ > 1 ? GTSTORAGE_ERROR_INVALID_ARGUMENT : GTSTORAGE_OK;
  char other[32];
  snprintf(other, sizeof other, "on rank %d", size_ > 1 ? 1 : 0);
  gtstorage_decomp d = 0;
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  o.comm = comm_f(MPI_COMM_WORLD);
#define DISAGREE(text)                                                         \
  do {                                                                         \
    d = 0;                                                                     \
    const int drc = gtstorage_decomp_create(&o, &d);                           \
    if (size_ > 1) {                                                           \
      EXPECT(drc, expected, (text), "on rank 0", other, "every process must"); \
    } else {                                                                   \
      OK(drc);                                                                 \
    }                                                                          \
    if (d != 0) OK(gtstorage_decomp_release(d));                               \
  } while (0)
  config = "disagree: ndim";
  o.ndim = odd ? 1 : 2;
  DISAGREE("ndim: 1 on rank 0 but 2 on rank 1");
  o.ndim = 2;
  config = "disagree: dims";
  o.dims = odd ? "JI" : "IJ";
  DISAGREE("dims: \"JI\" on rank 0 but \"IJ\" on rank 1");
  o.dims = NULL;
  config = "disagree: proc_dims";
  const int32_t rows[2] = {1, size_}, columns[2] = {size_, 1};
  o.proc_dims = odd ? rows : columns;
  DISAGREE("proc_dims[0]:");
  o.proc_dims = NULL;
  config = "disagree: periodic";
  const int32_t ring[2] = {1, 0};
  o.periodic = odd ? ring : NULL;
  DISAGREE("periodic[0]: 0 on rank 1 but 1 on rank 0");
  o.periodic = NULL;
  config = "disagree: reorder";
  o.reorder = odd ? 1 : 0;
  DISAGREE("reorder: 0 on rank 1 but 1 on rank 0");
  o.reorder = 0;
#undef DISAGREE

  /* Exchanges: the pattern decides the directions, so the neighbour check itself would wait for
   * messages that a process of the other pattern never sends. */
  d = world_grid();
  gtstorage_handle f[2] = {make_field(d), make_field(d)};
  gtstorage_exchange ex = 0;
  gtstorage_exchange_options eo = GTSTORAGE_EXCHANGE_OPTIONS_INIT;
  config = "disagree: pattern";
  eo.pattern = odd ? GTSTORAGE_EXCHANGE_STAR : GTSTORAGE_EXCHANGE_BOX;
  int rc = gtstorage_exchange_create(d, f, 1, &eo, &ex);
  if (size_ > 1) {
    EXPECT(rc, GTSTORAGE_ERROR_INVALID_ARGUMENT,
           "pattern: 0 (GTSTORAGE_EXCHANGE_BOX) on rank 1 but 1 (GTSTORAGE_EXCHANGE_STAR) on "
           "rank 0");
  } else {
    OK(rc);
    OK(gtstorage_exchange_release(ex));
  }
  eo.pattern = GTSTORAGE_EXCHANGE_BOX;
  config = "disagree: nfields";
  rc = gtstorage_exchange_create(d, f, odd ? 2 : 1, &eo, &ex);
  if (size_ > 1) {
    EXPECT(rc, GTSTORAGE_ERROR_INVALID_ARGUMENT, "nfields: 1 on rank 1 but 2 on rank 0");
  } else {
    OK(rc);
    OK(gtstorage_exchange_release(ex));
  }
  OK(gtstorage_release(f[0]));
  OK(gtstorage_release(f[1]));
  OK(gtstorage_decomp_release(d));
}

/* ---- F9: products that overflow ------------------------------------------------------------ */

static void overflow_cases(void) {
  config = "overflow";
  gtstorage_decomp d = 0;
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  o.comm = comm_f(MPI_COMM_WORLD);
  const int32_t square[2] = {65536, 65536};
  o.proc_dims = square;
  EXPECT(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
         "proc_dims: a grid of (65536, 65536) = 4294967296 processes does not fit");
  const int32_t huge[3] = {INT32_MAX, INT32_MAX, INT32_MAX};
  o.ndim = 3;
  o.proc_dims = huge;
  EXPECT(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
         "proc_dims: a grid of (2147483647, 2147483647, 2147483647) = more than "
         "9223372036854775807 processes");
  const int32_t open[3] = {65536, 65536, 0};
  o.proc_dims = open;
  EXPECT(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
         "proc_dims: a grid of (65536, 65536, 0), whose fixed dims make 4294967296 processes,");
  const int32_t wrapping[3] = {65536, 65536, 65536}; /* 2^48: wraps to 0 in 32 bits */
  o.proc_dims = wrapping;
  EXPECT(gtstorage_decomp_create(&o, &d), GTSTORAGE_ERROR_INVALID_ARGUMENT,
         "= 281474976710656 processes does not fit");
  CHECK(d == 0, "a handle was written on failure");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  unsetenv("GTSTORAGE_MPI_AGREE_TIMEOUT");
  const char* only = argc > 1 ? argv[1] : NULL;
  struct {
    const char* name;
    void (*run)(void);
  } groups[] = {{"overflow", overflow_cases},
                {"disagree", disagree_cases},
                {"one_bad", one_bad_cases},
                {"bad_comm", bad_comm_cases},
                {"bad_decomp", bad_decomp_cases}};
  const double start = MPI_Wtime();
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g) {
    if (only == NULL || strcmp(only, groups[g].name) == 0) groups[g].run();
  }

  check_nothing_left();
  int all_checks = 0;
  const int total = failures_of_all(&all_checks);
  if (rank_ == 0) {
    printf("%d processes: %d checks, %d failed (%.1f s)\n", size_, all_checks, total,
           MPI_Wtime() - start);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
