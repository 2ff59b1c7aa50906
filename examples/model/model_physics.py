"""The Python half of the mini-model (examples/model): one horizontal diffusion step, written
once as a GT4Py cartesian stencil (gtscript) and once as a gt4py.next field operator, exported
to the Fortran and C drivers through gtstorage.bridge. Both run on the model's own arrays: the
storages wrap its memory, and the stencil writes the model's output array in place.

    out = u + alpha * (u[i-1] + u[i+1] + u[j-1] + u[j+1] - 4 u)   on the interior

The drivers check the result against a plain Fortran (or C) implementation of the same
expression, evaluated in the same order.

Environment: GTSTORAGE_MODEL_BACKEND selects the cartesian stencil backend (default "numpy";
"gt:cpu_kfirst" and "dace:cpu" compile C++); GTSTORAGE_MODEL_NEXT_BACKEND the gt4py.next
backend ("embedded", the default, or "gtfn_cpu", which compiles for about a minute).
"""

import os

import numpy as np
from gt4py import next as gtx
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from gtstorage import bridge

# ---- GT4Py cartesian ------------------------------------------------------------------------

BACKEND = os.environ.get("GTSTORAGE_MODEL_BACKEND", "numpy")
F64 = gtscript.Field[np.float64]


@gtscript.stencil(backend=BACKEND)
def _diffusion_stencil(u: F64, out: F64, *, alpha: np.float64):
    with computation(PARALLEL), interval(...):
        out = u + alpha * (u[-1, 0, 0] + u[1, 0, 0] + u[0, -1, 0] + u[0, 1, 0] - 4.0 * u[0, 0, 0])


@bridge.export(bridge.Arg("u", dtype="float64", dims="IJK", readonly=True),
               bridge.Arg("out", dtype="float64", dims="IJK"),
               form="storage")
def diffuse(u, out, *, alpha: float):
    """One step: out = diffusion(u) on the interior; the halos (which the model exchanges)
    are read, never written. The origin and domain come from the storages' halos."""
    origin = tuple(lo for lo, _ in u.halo)
    domain = tuple(n - lo - hi for n, (lo, hi) in zip(u.shape, u.halo))
    _diffusion_stencil(np.asarray(u), np.asarray(out), alpha=alpha, origin=origin, domain=domain)


# ---- gt4py.next -----------------------------------------------------------------------------

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
IJKField = gtx.Field[gtx.Dims[I, J, K], gtx.float64]

def _next_backend():
    """None (embedded execution: NumPy) or a gt4py.next backend by name (gtfn_cpu, ...)."""
    name = os.environ.get("GTSTORAGE_MODEL_NEXT_BACKEND", "embedded")
    return None if name == "embedded" else getattr(gtx, name)


@gtx.field_operator
def _diffusion_step(u: IJKField, alpha: gtx.float64) -> IJKField:
    return u + alpha * (u(I - 1) + u(I + 1) + u(J - 1) + u(J + 1) - 4.0 * u)


@gtx.program(backend=_next_backend())
def _diffusion_program(u: IJKField, out: IJKField, alpha: gtx.float64, nx: gtx.int32,
                       ny: gtx.int32, nz: gtx.int32):
    _diffusion_step(u, alpha, out=out, domain={I: (0, nx), J: (0, ny), K: (0, nz)})


@bridge.export(bridge.Arg("u", dtype="float64", dims=(I, J, K), readonly=True),
               bridge.Arg("out", dtype="float64", dims=(I, J, K)),
               form="gt4py.next")
def diffuse_next(u, out, *, alpha: float, nx: int, ny: int, nz: int):
    """The same step as a gt4py.next program: u and out are fields over the model's memory
    whose index 0 is the first interior point (the halo is at negative indices)."""
    _diffusion_program(u, out, alpha, np.int32(nx), np.int32(ny), np.int32(nz),
                       offset_provider={})
