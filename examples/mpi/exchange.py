"""Diffusion on a periodic 2-D domain split over processes, with gtstorage.mpi halo exchange.

    mpiexec -n 4 python3 examples/mpi/exchange.py

Every process owns a block of a 64 x 48 x 4 field (a GDP-3 storage with a halo of 2 in I and J,
K-fastest as gt:cpu_kfirst lays it out). Each step exchanges the halos (start, then wait while
nothing else is to do) and applies a 5-point diffusion stencil to the interior. At the end the
blocks are gathered and compared with the same steps computed on the whole field by one
process with NumPy (np.roll): they must agree exactly.
"""

import numpy as np
from mpi4py import MPI

import gtstorage.gdp3 as gdp3
import gtstorage.mpi as gsm

NI, NJ, NK, HALO, STEPS, NU = 64, 48, 4, 2, 10, 0.1


def initial(shape):
    i, j, k = np.indices(shape)
    return np.sin(2 * np.pi * i / shape[0]) * np.cos(2 * np.pi * j / shape[1]) + 0.1 * k


def diffuse(u):
    """One step on an array whose halo of 1 is filled: the new interior."""
    c = u[1:-1, 1:-1]
    return c + NU * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * c)


def main():
    comm = MPI.COMM_WORLD
    d = gsm.Decomposition(comm, "IJ", periodic=(True, True))
    (oi, oj), (ni, nj) = d.local_extent((NI, NJ))
    u = gdp3.zeros((ni + 2 * HALO, nj + 2 * HALO, NK), np.float64, backend="gt:cpu_kfirst",
                   halo=(HALO, HALO, 0))
    a = np.asarray(u)  # zero-copy view of the storage, halo included
    a[HALO:-HALO, HALO:-HALO] = initial((NI, NJ, NK))[oi:oi + ni, oj:oj + nj]

    with d.exchange([u]) as ex:
        for _ in range(STEPS):
            ex.start()
            ex.wait()  # computation that needs no halo could run between start and wait
            a[HALO:-HALO, HALO:-HALO] = diffuse(a[HALO - 1:a.shape[0] - HALO + 1,
                                                  HALO - 1:a.shape[1] - HALO + 1])
        info = ex.info

    blocks = comm.gather(((oi, oj), a[HALO:-HALO, HALO:-HALO].copy()), root=0)
    if comm.rank == 0:
        result = np.empty((NI, NJ, NK))
        for (bi, bj), block in blocks:
            result[bi:bi + block.shape[0], bj:bj + block.shape[1]] = block
        ref = initial((NI, NJ, NK))
        for _ in range(STEPS):
            # The same sums in the same order as diffuse(): i+1, i-1, j+1, j-1.
            ref = ref + NU * (np.roll(ref, -1, 0) + np.roll(ref, 1, 0) + np.roll(ref, -1, 1)
                              + np.roll(ref, 1, 1) - 4 * ref)
        same = np.array_equal(result, ref)
        print(f"{d.size} processes, grid {d.proc_dims}, {STEPS} steps, "
              f"{info['bytes_sent']} halo bytes sent per step by rank 0: "
              f"{'matches' if same else 'DIFFERS FROM'} the serial result")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
