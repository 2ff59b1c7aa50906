/* Shared checks of the MPI tests (test_exchange.c, test_agreement.c). A check never stops a
 * process (a collective call must still be made by all of them): each failure is printed with
 * the process's rank and the configuration under test, and counted; the counts of all processes
 * are added up at the end. */
#ifndef GTSTORAGE_TESTS_MPI_SUPPORT_H
#define GTSTORAGE_TESTS_MPI_SUPPORT_H

#include <gtstorage/gtstorage.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

static int rank_ = 0, size_ = 1, failures = 0, checks = 0;
static const char* config = ""; /* what runs now, named in every failure */

static void failed(const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[rank %d] %s:%d (%s): ", rank_, file, line, config);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  ++failures;
}

#define CHECK(cond, ...)                                  \
  do {                                                    \
    ++checks;                                             \
    if (!(cond)) failed(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
/* A call that must succeed. */
#define OK(call)                                                                    \
  do {                                                                              \
    int rc_ = (call);                                                               \
    ++checks;                                                                       \
    if (rc_ != GTSTORAGE_OK)                                                        \
      failed(__FILE__, __LINE__, "%s -> %s: %s", #call, gtstorage_status_name(rc_), \
             gtstorage_last_error());                                               \
  } while (0)

/* The Fortran handle of @p c, as the library's options take it. */
static int64_t comm_f(MPI_Comm c) {
  return (int64_t)MPI_Comm_c2f(c);
}

/* Everything the tests made was given back: no storage, view, wrap or buffer is left. */
static void check_nothing_left(void) {
  config = "end";
  gtstorage_stats stats = GTSTORAGE_STATS_INIT;
  OK(gtstorage_get_stats(&stats));
  CHECK(stats.live_handles == 0 && stats.live_buffers == 0,
        "left behind: %lld handles, %lld buffers", (long long)stats.live_handles,
        (long long)stats.live_buffers);
}

/* The failures of all processes added up (collective); the checks likewise in @p all_checks. */
static int failures_of_all(int* all_checks) {
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

#endif /* GTSTORAGE_TESTS_MPI_SUPPORT_H */
