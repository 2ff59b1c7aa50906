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
    h = halo
    nx = field_in.shape[0] - 2 * h
    ny = field_in.shape[1] - 2 * h
    c = field_in[h : h + nx, h : h + ny, :]
    lap = (
        field_in[h - 1 : h - 1 + nx, h : h + ny, :]
        + field_in[h + 1 : h + 1 + nx, h : h + ny, :]
        + field_in[h : h + nx, h - 1 : h - 1 + ny, :]
        + field_in[h : h + nx, h + 1 : h + 1 + ny, :]
        - 4.0 * c
    )
    field_out[h : h + nx, h : h + ny, :] = c + alpha * lap


# ------------------------------------------------------------------------ introspection
@_export
def probe(a: F3, info: I1, flag: BOOL) -> None:
    """Report what Python sees and write to ``a`` (to check write-back).

    info[0] = address of the data NumPy sees (a.ctypes.data)
    info[1:4] = a.shape
    info[4] = 1 if the scalar logical arrived as True else 0
    info[5] = 1 if a.flags.f_contiguous
    info[6] = 1 if a.flags.writeable
    info[7] = type tag: 1 numpy.ndarray, 2 tuple (raw ArrayInfo), 0 other
    a += 1.0 (every element), so the caller can check that writes come back.
    """
    info[0] = a.ctypes.data
    info[1:4] = a.shape
    info[4] = 1 if flag else 0
    info[5] = 1 if a.flags.f_contiguous else 0
    info[6] = 1 if a.flags.writeable else 0
    info[7] = 1 if isinstance(a, np.ndarray) else (2 if isinstance(a, tuple) else 0)
    a += 1.0


@_export
def fail(a: F3) -> None:
    """Always raises; used to observe py2fgen's error reporting to Fortran."""
    raise RuntimeError("bench_functions.fail: deliberate error")
