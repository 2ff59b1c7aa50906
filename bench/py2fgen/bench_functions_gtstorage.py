"""Python functions of the benchmark for our bridge (libgtstorage_python, ``gtstorage.bridge``).

Same semantics as ``bench_functions.py`` (the py2fgen half), so that the timings compare:

* ``empty_1``, ``empty_10``, ``empty_40``: 1/10/40 3-D float64 arrays, no body.
* ``diffusion``: out = in + alpha * 5-point horizontal Laplacian on the interior, in plain
  NumPy.  The halo is not a scalar argument here: the Fortran layer wraps the arrays with
  ``halo=[h, h, 0]`` and the function reads it from the storage (``form="storage"``).
* ``probe``: reports what Python sees into ``info`` (int64) and adds 1 to ``a``.
* ``fail``: raises.

Extra (our bridge only, used by ``bench_persistent.F90``): ``empty_0`` (no storage at all,
the fixed cost of one call).

The Fortran side resolves each function once (``gtstorage_python_resolve(fn,
"bench_functions_gtstorage:empty_1")``) and calls it with ``gtstorage_python_call``; scalars
arrive as keyword arguments.
"""

import bench_bodies
import numpy as np

from gtstorage import bridge

F3 = dict(dtype="float64", ndim=3)


def _args(n):
    return [bridge.Arg(f"a{i:02d}", **F3) for i in range(n)]


# --------------------------------------------------------------------------- empty calls
@bridge.export()
def empty_0():
    pass


@bridge.export(*_args(1))
def empty_1(a00):
    pass


@bridge.export(*_args(10))
def empty_10(a00, a01, a02, a03, a04, a05, a06, a07, a08, a09):
    pass


@bridge.export(*_args(40))
def empty_40(
    a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,
    a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,
    a20, a21, a22, a23, a24, a25, a26, a27, a28, a29,
    a30, a31, a32, a33, a34, a35, a36, a37, a38, a39,
):  # fmt: skip
    pass


# ------------------------------------------------------------------------ diffusion step
@bridge.export(
    bridge.Arg("field_in", readonly=True, **F3),
    bridge.Arg("field_out", **F3),
    form="storage",
)
def diffusion(field_in, field_out, *, alpha):
    """out = in + alpha * 5-point horizontal Laplacian on the interior.

    ``field_in`` and ``field_out`` are gtstorage storages (GDP-3) over the Fortran arrays,
    halo included; the origin of the interior comes from the storage's halo (the Fortran
    layer wraps with ``halo=[h, h, 0]``).  The NumPy expression is bench_bodies.diffusion_step,
    as for ``bench_functions.diffusion``.
    """
    (hx, _), (hy, _), _ = field_in.halo
    bench_bodies.diffusion_step(np.asarray(field_in), np.asarray(field_out), alpha, hx, hy)


# ------------------------------------------------------------------------ introspection
@bridge.export(bridge.Arg("a", **F3), bridge.Arg("info", dtype="int64", ndim=1))
def probe(a, info, *, flag):
    """Report what Python sees and write to ``a`` (bench_bodies.probe; address
    a.__array_interface__["data"][0])."""
    bench_bodies.probe(a, info, flag, a.__array_interface__["data"][0])


@bridge.export(bridge.Arg("a", **F3))
def fail(a):
    """Always raises; used to observe the bridge's error reporting to Fortran."""
    raise RuntimeError("bench_functions.fail: deliberate error")
