/*
 * gtstorage — storage layer for GT4Py/GridTools-style weather and climate codes.
 * Copyright (c) 2026, the gtstorage developers. SPDX-License-Identifier: BSD-3-Clause
 */
/*
 * The C version of the mini-model (model.f90): a C host model that owns its fields (row-major,
 * K fastest here: field[i][j][k], with a halo of 2 in I and J), decomposes the domain over MPI
 * processes, exchanges halos with libgtstorage_mpi and calls the GT4Py stencil of
 * model_physics.py every step through libgtstorage_python, on its own memory.
 *
 *   mpiexec -n 4 ./model_c [cartesian|next] [steps]
 *
 * Environment: VIRTUAL_ENV (a venv with gt4py) and PYTHONPATH (where model_physics.py is).
 * Each process compares its block with plain C on the whole periodic field (the same expression
 * in the same order: no tolerance), checks the stencil left the halo alone and that the library
 * allocated and copied nothing while the model ran.
 */
#include <gtstorage/gtstorage_mpi.h>
#include <gtstorage/gtstorage_python.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NI = 40, NJ = 30, NK = 5, NH = 2 };
static const double kAlpha = 0.1;
static const double kSentinel = -999.0;

/* Stops every process with the library's message (the model's own error policy). */
static void check(int status, const char* what) {
  if (status != GTSTORAGE_OK) {
    fprintf(stderr, "model_c: %s: %s: %s\n", what, gtstorage_status_name(status),
            gtstorage_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static double initial(int i, int j, int k) { /* 0-based global indices */
  return (double)((7 * (i + 1) + 13 * (j + 1) + 5 * (k + 1)) % 17) / 4;
}

/* One step on the whole periodic field, in model_physics.py's order of operations. */
static void reference_step(const double* a, double* b) {
  for (int i = 0; i < NI; ++i) {
    const int im = (i + NI - 1) % NI, ip = (i + 1) % NI;
    for (int j = 0; j < NJ; ++j) {
      const int jm = (j + NJ - 1) % NJ, jp = (j + 1) % NJ;
      for (int k = 0; k < NK; ++k) {
#define G(ii, jj) a[((ii)*NJ + (jj)) * NK + k]
        b[(i * NJ + j) * NK + k] =
            G(i, j) + kAlpha * ((((G(im, j) + G(ip, j)) + G(i, jm)) + G(i, jp)) - 4.0 * G(i, j));
#undef G
      }
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  const char* variant = argc > 1 ? argv[1] : "cartesian";
  const int next = strcmp(variant, "next") == 0;
  const int steps = argc > 2 ? atoi(argv[2]) : 8;

  /* ---- decomposition and the model's own fields ---------------------------------------- */
  gtstorage_decomp_options dopt = GTSTORAGE_DECOMP_OPTIONS_INIT;
  const int32_t periodic[2] = {1, 1};
  dopt.comm = MPI_Comm_c2f(MPI_COMM_WORLD);
  dopt.dims = "IJ";
  dopt.periodic = periodic;
  gtstorage_decomp d = 0;
  check(gtstorage_decomp_create(&dopt, &d), "gtstorage_decomp_create");
  const int64_t global[2] = {NI, NJ};
  int64_t off[2], ext[2];
  check(gtstorage_decomp_local_extent(d, -1, global, 2, off, ext), "local extent");
  const int64_t ni = ext[0] + 2 * NH, nj = ext[1] + 2 * NH;
  double* fields[2] = {calloc((size_t)(ni * nj * NK), sizeof(double)),
                       calloc((size_t)(ni * nj * NK), sizeof(double))};
  double* ref = malloc(sizeof(double) * NI * NJ * NK);
  double* rnext = malloc(sizeof(double) * NI * NJ * NK);
  if (!fields[0] || !fields[1] || !ref || !rnext) MPI_Abort(MPI_COMM_WORLD, 2);
#define AT(f, i, j, k) (f)[(((i) + NH) * nj + ((j) + NH)) * NK + (k)] /* i, j from -NH */
  for (int i = 0; i < NI; ++i)
    for (int j = 0; j < NJ; ++j)
      for (int k = 0; k < NK; ++k) ref[(i * NJ + j) * NK + k] = initial(i, j, k);
  for (int i = 0; i < ext[0]; ++i)
    for (int j = 0; j < ext[1]; ++j)
      for (int k = 0; k < NK; ++k) AT(fields[0], i, j, k) = initial(off[0] + i, off[1] + j, k);

  /* ---- the same memory as storages -------------------------------------------------------- */
  const int64_t shape[3] = {ni, nj, NK};
  const int64_t halo[6] = {NH, NH, NH, NH, 0, 0};
  gtstorage_handle s[2];
  gtstorage_exchange ex[2];
  for (int f = 0; f < 2; ++f) {
    gtstorage_wrap_options w = GTSTORAGE_WRAP_OPTIONS_INIT;
    w.ndim = 3;
    w.shape = shape; /* strides NULL: C order, as allocated */
    w.data = fields[f];
    w.halo = halo;
    w.dims = "IJK";
    check(gtstorage_wrap(&w, &s[f]), "gtstorage_wrap");
    check(gtstorage_exchange_create(d, &s[f], 1, NULL, &ex[f]), "gtstorage_exchange_create");
  }

  /* ---- Python (process 0 first: GT4Py builds its cache once) -------------------------------- */
  check(gtstorage_python_init(NULL), "gtstorage_python_init");
  const char* target = next ? "model_physics:diffuse_next" : "model_physics:diffuse";
  gtstorage_python_function fn = 0;
  if (rank == 0) check(gtstorage_python_resolve(target, &fn), "gtstorage_python_resolve");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) check(gtstorage_python_resolve(target, &fn), "gtstorage_python_resolve");
  gtstorage_python_arg args[4] = {{"alpha", GTSTORAGE_PYTHON_DOUBLE, 0, 0, kAlpha, NULL},
                                  {"nx", GTSTORAGE_PYTHON_INT64, 0, ext[0], 0, NULL},
                                  {"ny", GTSTORAGE_PYTHON_INT64, 0, ext[1], 0, NULL},
                                  {"nz", GTSTORAGE_PYTHON_INT64, 0, NK, 0, NULL}};

  /* ---- the time loop -------------------------------------------------------------------- */
  gtstorage_stats before = GTSTORAGE_STATS_INIT, after = GTSTORAGE_STATS_INIT;
  check(gtstorage_get_stats(&before), "stats");
  int halo_writes = 0, cur = 0;
  for (int step = 0; step < steps; ++step) {
    const int nxt = 1 - cur;
    check(gtstorage_exchange_run(ex[cur]), "gtstorage_exchange_run");
    for (int64_t i = -NH; i < ext[0] + NH; ++i)
      for (int64_t j = -NH; j < ext[1] + NH; ++j)
        if (i < 0 || j < 0 || i >= ext[0] || j >= ext[1])
          for (int k = 0; k < NK; ++k) AT(fields[nxt], i, j, k) = kSentinel;
    const gtstorage_handle pair[2] = {s[cur], s[nxt]};
    check(gtstorage_python_call(fn, pair, 2, args, next ? 4 : 1, 0), "gtstorage_python_call");
    for (int64_t i = -NH; i < ext[0] + NH; ++i)
      for (int64_t j = -NH; j < ext[1] + NH; ++j)
        if (i < 0 || j < 0 || i >= ext[0] || j >= ext[1])
          for (int k = 0; k < NK; ++k) halo_writes += AT(fields[nxt], i, j, k) != kSentinel;
    cur = nxt;
  }
  check(gtstorage_get_stats(&after), "stats");

  /* ---- compare with the reference ---------------------------------------------------------- */
  for (int step = 0; step < steps; ++step) {
    reference_step(ref, rnext);
    double* t = ref;
    ref = rnext;
    rnext = t;
  }
  int bad = 0;
  for (int i = 0; i < ext[0]; ++i)
    for (int j = 0; j < ext[1]; ++j)
      for (int k = 0; k < NK; ++k)
        bad += AT(fields[cur], i, j, k) != ref[((off[0] + i) * NJ + off[1] + j) * NK + k];
  int copied = after.host_bytes != before.host_bytes || after.h2d_bytes != before.h2d_bytes ||
               after.d2h_bytes != before.d2h_bytes || after.live_handles != before.live_handles;
  int totals[3] = {bad, halo_writes, copied};
  MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("model_c (%s): %d process(es), %d steps, %d points\n", variant, nprocs, steps,
           NI * NJ * NK);
    printf(
        "  library while the model ran: host bytes allocated %lld, bytes copied "
        "host<->device %lld, storages made %lld\n",
        (long long)(after.host_bytes - before.host_bytes),
        (long long)(after.h2d_bytes - before.h2d_bytes + after.d2h_bytes - before.d2h_bytes),
        (long long)(after.live_handles - before.live_handles));
    printf("  points differing from the C reference: %d; halo points the stencil wrote: %d\n",
           totals[0], totals[1]);
    printf("  %s\n", totals[0] == 0 && totals[1] == 0 && totals[2] == 0
                         ? "OK: identical to the reference, halo untouched, zero copies"
                         : "FAILED");
  }

  check(gtstorage_python_release_function(fn), "release function");
  check(gtstorage_python_finalize(), "gtstorage_python_finalize");
  for (int f = 0; f < 2; ++f) {
    check(gtstorage_exchange_release(ex[f]), "exchange release");
    check(gtstorage_release(s[f]), "release");
    free(fields[f]);
  }
  check(gtstorage_decomp_release(d), "decomp release");
  free(ref);
  free(rnext);
  MPI_Finalize();
  return totals[0] == 0 && totals[1] == 0 && totals[2] == 0 ? 0 : 1;
#undef AT
}
