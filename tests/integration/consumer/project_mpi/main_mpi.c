/* Installed libgtstorage_mpi from a downstream program: a periodic decomposition of the
 * processes, one field with a halo of 1, one exchange; every halo point must then hold its
 * neighbour's value. Prints "consumer_mpi OK" on rank 0. */
#include <gtstorage/gtstorage_mpi.h>
#include <mpi.h>
#include <stdio.h>

#define CHECK(call)                                                                               \
  do {                                                                                            \
    int rc_ = (call);                                                                             \
    if (rc_ != GTSTORAGE_OK) {                                                                    \
      fprintf(stderr, "%s: %s: %s\n", #call, gtstorage_status_name(rc_), gtstorage_last_error()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                               \
    }                                                                                             \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gtstorage_decomp_options o = GTSTORAGE_DECOMP_OPTIONS_INIT;
  const int32_t periodic[1] = {1};
  o.ndim = 1;
  o.comm = MPI_Comm_c2f(MPI_COMM_WORLD);
  o.dims = "I";
  o.periodic = periodic;
  gtstorage_decomp d = 0;
  CHECK(gtstorage_decomp_create(&o, &d));
  /* 4 interior points and a halo of 1 in I, filled with the rank. */
  const int64_t shape[2] = {6, 3}, halo[4] = {1, 1, 0, 0};
  double value = rank;
  gtstorage_create_options c = GTSTORAGE_CREATE_OPTIONS_INIT;
  c.ndim = 2;
  c.shape = shape;
  c.halo = halo;
  c.init = GTSTORAGE_INIT_VALUE;
  c.fill_value = &value;
  gtstorage_handle u = 0;
  CHECK(gtstorage_create(&c, &u));
  gtstorage_exchange ex = 0;
  CHECK(gtstorage_exchange_create(d, &u, 1, NULL, &ex));
  CHECK(gtstorage_exchange_run(ex));
  double a[6][3];
  gtstorage_array arr = GTSTORAGE_ARRAY_INIT;
  arr.ndim = 2;
  arr.shape = shape;
  arr.data = a;
  CHECK(gtstorage_copy_to_array(&arr, u));
  const double lower = (rank + size - 1) % size, upper = (rank + 1) % size;
  int bad = 0;
  for (int j = 0; j < 3; ++j) bad += a[0][j] != lower || a[5][j] != upper || a[2][j] != rank;
  CHECK(gtstorage_exchange_release(ex));
  CHECK(gtstorage_release(u));
  CHECK(gtstorage_decomp_release(d));
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf(all == 0 ? "consumer_mpi OK\n" : "consumer_mpi: %d wrong halo points\n", all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
