"""The bodies of the benchmark's Python functions that both bridges run the same way.

``bench_functions.py`` (py2fgen) and ``bench_functions_gtstorage.py`` (our bridge) only
differ in how the arrays arrive; what is done with them is here, so the timings compare.
"""

import numpy as np


def diffusion_step(fin, fout, alpha, hx, hy):
    """fout = fin + alpha * 5-point horizontal Laplacian on the interior (halo widths hx, hy)."""
    nx = fin.shape[0] - 2 * hx
    ny = fin.shape[1] - 2 * hy
    c = fin[hx : hx + nx, hy : hy + ny, :]
    lap = (
        fin[hx - 1 : hx - 1 + nx, hy : hy + ny, :]
        + fin[hx + 1 : hx + 1 + nx, hy : hy + ny, :]
        + fin[hx : hx + nx, hy - 1 : hy - 1 + ny, :]
        + fin[hx : hx + nx, hy + 1 : hy + 1 + ny, :]
        - 4.0 * c
    )
    fout[hx : hx + nx, hy : hy + ny, :] = c + alpha * lap


def probe(a, info, flag, address):
    """Report what Python sees of ``a`` (its data at ``address``) into ``info``, then a += 1.

    info[0] = address of the data NumPy sees
    info[1:4] = a.shape
    info[4] = 1 if the scalar logical arrived as True else 0
    info[5] = 1 if a.flags.f_contiguous
    info[6] = 1 if a.flags.writeable
    info[7] = type tag: 1 numpy.ndarray, 2 tuple (raw ArrayInfo), 0 other
    a += 1.0 (every element), so the caller can check that writes come back.
    """
    info[0] = address
    info[1:4] = a.shape
    info[4] = 1 if flag else 0
    info[5] = 1 if a.flags.f_contiguous else 0
    info[6] = 1 if a.flags.writeable else 0
    info[7] = 1 if isinstance(a, np.ndarray) else (2 if isinstance(a, tuple) else 0)
    a += 1.0
