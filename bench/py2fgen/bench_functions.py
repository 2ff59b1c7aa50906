"""Python functions exported to Fortran through icon4py's py2fgen (icon4py-tools 0.4.x).

Generated with:
    py2fgen bench_functions empty_1,empty_10,empty_40,diffusion,probe,fail py2fgen_bench

Notes on the py2fgen API (see CAPABILITIES.md for file:line evidence):
* Every parameter needs a ``ParamDescriptor``; here via ``Annotated[..., descriptor]``.
* Without an ``annotation_mapping_hook`` py2fgen passes the *raw* ``ArrayInfo`` tuple
  ``(cffi pointer, shape, on_gpu, is_optional)`` to the function, not a NumPy array
  (``_export.get_param_mappings`` only consults ``default_mapping`` when a hook is set).
  ``_default_only`` below is the idiom used by icon4py's own tests to get the default
  NumPy-view mapping (which is ``functools.lru_cache(maxsize=2)``-cached per parameter).
* Exported functions must return ``None``; the Fortran side gets an ``rc`` argument.
"""

from typing import Annotated

import bench_bodies
import numpy as np

from icon4py.tools import py2fgen


def _default_only(_annotation: object, _descriptor: py2fgen.ParamDescriptor) -> None:
    """Mapping hook that always defers to py2fgen's default mapping (NumPy views)."""
    return None


_export = py2fgen.export(annotation_mapping_hook=_default_only)

F3 = Annotated[
    np.ndarray,
    py2fgen.ArrayParamDescriptor(
        rank=3, dtype=py2fgen.FLOAT64, memory_space=py2fgen.MemorySpace.HOST, is_optional=False
    ),
]
I1 = Annotated[
    np.ndarray,
    py2fgen.ArrayParamDescriptor(
        rank=1, dtype=py2fgen.INT64, memory_space=py2fgen.MemorySpace.HOST, is_optional=False
    ),
]
F64 = Annotated[float, py2fgen.ScalarParamDescriptor(dtype=py2fgen.FLOAT64)]
I32 = Annotated[int, py2fgen.ScalarParamDescriptor(dtype=py2fgen.INT32)]
BOOL = Annotated[bool, py2fgen.ScalarParamDescriptor(dtype=py2fgen.BOOL)]


# --------------------------------------------------------------------------- empty calls
@_export
def empty_1(a00: F3) -> None:
    pass


@_export
def empty_10(
    a00: F3, a01: F3, a02: F3, a03: F3, a04: F3, a05: F3, a06: F3, a07: F3, a08: F3, a09: F3
) -> None:
    pass


@_export
def empty_40(
    a00: F3, a01: F3, a02: F3, a03: F3, a04: F3, a05: F3, a06: F3, a07: F3, a08: F3, a09: F3,
    a10: F3, a11: F3, a12: F3, a13: F3, a14: F3, a15: F3, a16: F3, a17: F3, a18: F3, a19: F3,
    a20: F3, a21: F3, a22: F3, a23: F3, a24: F3, a25: F3, a26: F3, a27: F3, a28: F3, a29: F3,
    a30: F3, a31: F3, a32: F3, a33: F3, a34: F3, a35: F3, a36: F3, a37: F3, a38: F3, a39: F3,
) -> None:  # fmt: skip
    pass


# ------------------------------------------------------------------------ diffusion step
@_export
def diffusion(field_in: F3, field_out: F3, alpha: F64, halo: I32) -> None:
    """out = in + alpha * 5-point horizontal Laplacian on the interior (halo width ``halo``).

    Arrays arrive as Fortran-ordered NumPy views with shape (nx+2h, ny+2h, nz) and
    0-based indices (the Fortran lower bounds are not transmitted).
    """
    bench_bodies.diffusion_step(field_in, field_out, alpha, halo, halo)


# ------------------------------------------------------------------------ introspection
@_export
def probe(a: F3, info: I1, flag: BOOL) -> None:
    """Report what Python sees and write to ``a`` (bench_bodies.probe; address a.ctypes.data)."""
    bench_bodies.probe(a, info, flag, a.ctypes.data)


@_export
def fail(a: F3) -> None:
    """Always raises; used to observe py2fgen's error reporting to Fortran."""
    raise RuntimeError("bench_functions.fail: deliberate error")
