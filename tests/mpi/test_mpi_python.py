"""gtstorage.mpi under mpiexec (CTest label "mpi"): every process runs these tests in the same
order, so collective calls line up. Values are checked against the global field everywhere.

Run: mpiexec -n 4 python3 -m pytest -q tests/mpi/test_mpi_python.py (PYTHONPATH: the staged
package of a build, which holds libgtstorage and libgtstorage_mpi).
"""

import numpy as np
import pytest

import gtstorage.gdp3 as gdp3
import gtstorage.mpi as gsm
from gtstorage import GTStorageError

MPI = pytest.importorskip("mpi4py.MPI")
WORLD = MPI.COMM_WORLD


def global_field(shape, seed):
    """The global field: a distinct value at every global point."""
    idx = np.indices(shape)
    return (seed * 100000 + idx[0] * 1000 + idx[1] * 10 + idx[2]).astype(np.float64)


def local_block(d, g, halo, corners=True, periodic=(True, True)):
    """What this process's block with its halo holds after an exchange (NaN where nothing
    arrives: beyond a non-periodic edge, or a corner without corners)."""
    (oi, oj), (ni, nj) = d.local_extent(g.shape[:2])
    h = halo
    gi = np.arange(oi - h, oi + ni + h)
    gj = np.arange(oj - h, oj + nj + h)
    out = g[np.ix_(gi % g.shape[0], gj % g.shape[1])].copy()
    outside_i = (gi < 0) | (gi >= g.shape[0]) if not periodic[0] else np.zeros(gi.shape, bool)
    outside_j = (gj < 0) | (gj >= g.shape[1]) if not periodic[1] else np.zeros(gj.shape, bool)
    out[outside_i, :] = np.nan
    out[:, outside_j] = np.nan
    if not corners:
        hi = (np.arange(len(gi)) < h) | (np.arange(len(gi)) >= h + ni)
        hj = (np.arange(len(gj)) < h) | (np.arange(len(gj)) >= h + nj)
        out[np.ix_(hi, hj)] = np.nan
    return out


def make_field(d, g, halo, backend):
    (oi, oj), (ni, nj) = d.local_extent(g.shape[:2])
    s = gdp3.full((ni + 2 * halo, nj + 2 * halo, g.shape[2]), np.nan, dtype=np.float64,
                  backend=backend, halo=(halo, halo, 0))
    np.asarray(s)[halo:halo + ni, halo:halo + nj] = g[oi:oi + ni, oj:oj + nj]
    return s


def test_decomposition_from_mpi4py_and_handle():
    d = gsm.Decomposition(WORLD, "IJ", periodic=(True, False))
    assert d.size == WORLD.size and d.rank == WORLD.rank
    assert d.dims == ("I", "J") and d.periodic == (True, False)
    assert d.proc_dims[0] * d.proc_dims[1] == WORLD.size
    total = 0
    for r in range(d.size):
        off, ext = d.local_extent((13, 7), rank=r)
        total += ext[0] * ext[1]
    assert total == 13 * 7
    cart = MPI.Comm.f2py(d.comm_handle)
    assert cart.Get_topology() == MPI.CART
    assert MPI.Cartcomm(cart).Get_topo()[0] == list(d.proc_dims)
    d2 = gsm.Decomposition(WORLD.py2f(), "J")
    assert d2.proc_dims == (WORLD.size,)
    if d2.coords[0] == 0:
        assert d2.neighbors[0][0] is None


@pytest.mark.parametrize("backend", ["gt:cpu_kfirst", "gt:cpu_ifirst", "numpy"])
@pytest.mark.parametrize("corners", [True, False])
def test_exchange_values(backend, corners):
    d = gsm.Decomposition(WORLD, "IJ", periodic=True)
    g = global_field((12, 10, 4), 7)
    u = make_field(d, g, 2, backend)
    with d.exchange([u], corners=corners) as ex:
        ex.run()
        want = np.stack([local_block(d, g[:, :, k], 2, corners) for k in range(4)], axis=2)
        np.testing.assert_array_equal(np.asarray(u), want)
        info = ex.info
        assert info["steps"] == 1 and info["nfields"] == 1 and info["in_flight"] == 0


def test_exchange_many_fields_start_test_wait():
    d = gsm.Decomposition(WORLD, "IJ", periodic=(True, False))
    gs = [global_field((11, 9, 3), s) for s in range(5)]
    us = [make_field(d, g, 1, b) for g, b in zip(gs, ["gt:cpu_kfirst", "gt:cpu_ifirst"] * 3)]
    ex = d.exchange(us, method="pack")
    for step in range(3):
        ex.start()
        while not ex.test():
            pass
        for g, u in zip(gs, us):
            want = np.stack([local_block(d, g[:, :, k], 1, True, (True, False))
                             for k in range(3)], axis=2)
            np.testing.assert_array_equal(np.asarray(u), want)
    assert ex.info["steps"] == 3
    ex.release()
    with pytest.raises(ValueError, match="released"):
        ex.start()


def test_errors_on_every_process():
    with pytest.raises(TypeError, match="comm must be an mpi4py communicator"):
        gsm.Decomposition("world")
    with pytest.raises(GTStorageError, match="not a valid communicator"):
        gsm.Decomposition(987654)
    with pytest.raises(GTStorageError, match="does not fit"):
        gsm.Decomposition(WORLD, "IJ", proc_dims=(WORLD.size + 1, 1))
    d = gsm.Decomposition(WORLD, "IJ", periodic=True)
    with pytest.raises(TypeError, match="not a gtstorage storage"):
        d.exchange([np.zeros((8, 8, 2))])
    u = make_field(d, global_field((12, 10, 2), 1), 1, "gt:cpu_kfirst")
    with pytest.raises(GTStorageError, match="narrower than the exchanged width"):
        d.exchange([u], width=(2, 2, 2, 2))
    with pytest.raises(ValueError, match="method must be one of"):
        d.exchange([u], method="fast")
    # One process binds a field of another size: every process raises.
    (oi, oj), (ni, nj) = d.local_extent((12, 10))
    bigger = WORLD.rank == 0 and WORLD.size > 1
    v = gdp3.zeros((ni + 2 + bigger, nj + 2 + bigger, 2), np.float64, backend="gt:cpu_kfirst",
                   halo=(1, 1, 0))
    if WORLD.size > 1:
        with pytest.raises(GTStorageError):
            d.exchange([v])
    else:
        d.exchange([v]).run()


def test_gpu_aware_query():
    assert gsm.gpu_aware() in (True, False)
