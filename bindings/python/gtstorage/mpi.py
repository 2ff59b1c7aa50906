# gtstorage Python binding: halo exchange over MPI (libgtstorage_mpi, gtstorage_mpi.h).
"""Domain decomposition and halo exchange of storages over MPI (``libgtstorage_mpi``).

A :class:`Decomposition` splits up to three labelled dims (I, J and optionally K) of a global
domain over a Cartesian grid of processes; :meth:`Decomposition.exchange` binds a persistent
:class:`Exchange` of the halos of any number of storages, run every time step::

    from mpi4py import MPI
    import numpy as np
    import gtstorage.gdp3 as gdp3
    import gtstorage.mpi as gsm

    d = gsm.Decomposition(MPI.COMM_WORLD, dims="IJ", periodic=(True, True))
    offset, extent = d.local_extent((128, 96))
    u = gdp3.zeros((extent[0] + 4, extent[1] + 4, 64), np.float64, backend="gt:cpu_kfirst",
                   halo=(2, 2, 0))
    ex = d.exchange([u])
    ex.start(); ...; ex.wait()          # or ex.run(), or ex()

The communicator is anything with ``py2f()`` (an mpi4py communicator) or its Fortran handle as
an int, so mpi4py stays optional. The library works on a duplicate of it; failures raise
``GTStorageError`` subclasses (``GTCommunicationError`` for MPI failures and for the other
processes of a collective call when one of them failed). The shared library is looked for in
``GTSTORAGE_MPI_LIBRARY`` (a file or directory), next to the loaded libgtstorage, then by the
system loader; it is built by the CMake build where an MPI is found (not part of the wheel: it
must link the site's MPI).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import _args, _capi, _mpi_capi_generated as _m
from ._capi import GTCommunicationError, GTStorageError, check, lib  # noqa: F401

__all__ = ["Decomposition", "Exchange", "GTCommunicationError", "gpu_aware", "library_path"]

_ABI = _capi.ABI_MAJOR
_NAMES = ([f"libgtstorage_mpi.{_ABI}.dylib", "libgtstorage_mpi.dylib"] if sys.platform == "darwin"
          else [f"libgtstorage_mpi.so.{_ABI}", "libgtstorage_mpi.so"])


def _load() -> ctypes.CDLL:
    tried: list[str] = []
    env = os.environ.get("GTSTORAGE_MPI_LIBRARY")
    if env:
        paths = ([os.path.join(env, n) for n in _NAMES if os.path.isfile(os.path.join(env, n))]
                 if os.path.isdir(env) else [env])
        if not paths:
            raise ImportError(f"gtstorage.mpi: GTSTORAGE_MPI_LIBRARY={env!r} is a directory "
                              f"without any of {_NAMES}")
        candidates = paths[:1]
    else:
        here = os.path.dirname(os.path.abspath(_capi.library_path))
        candidates = [os.path.join(here, n) for n in _NAMES
                      if os.path.isfile(os.path.join(here, n))]
        found = ctypes.util.find_library("gtstorage_mpi")
        candidates += ([found] if found else []) + _NAMES
    for path in candidates:
        try:
            # RTLD_GLOBAL: the MPI library's own plugins (Open MPI's components) resolve their
            # symbols against libmpi, which this load brings in.
            mpi_lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            tried.append(f"{path} ({exc})")
            continue
        # One libgtstorage in the process: the component must use the very library the package
        # loaded (its libgtstorage.so.1 dependency resolves to it by SONAME), or its handles
        # would be another library's.
        ours = ctypes.cast(lib.gtstorage_create, ctypes.c_void_p).value
        theirs = ctypes.cast(mpi_lib.gtstorage_create, ctypes.c_void_p).value
        if ours != theirs:
            raise ImportError(f"gtstorage.mpi: {path} uses another libgtstorage than "
                              f"{_capi.library_path}")
        return mpi_lib
    raise ImportError("gtstorage.mpi: libgtstorage_mpi was not found (it is built with the C "
                      "library where an MPI is found). Set GTSTORAGE_MPI_LIBRARY to it. Tried: "
                      + "; ".join(tried or candidates))


_lib = _load()
for _name, (_restype, _argtypes) in _m.PROTOTYPES.items():
    _fn = getattr(_lib, _name)
    _fn.restype, _fn.argtypes = _restype, _argtypes
#: Path of the loaded libgtstorage_mpi.
library_path: str = _lib._name

_PATTERNS = {True: _m.EXCHANGE_BOX, False: _m.EXCHANGE_STAR}
_METHODS = {"auto": _m.EXCHANGE_AUTO, "datatype": _m.EXCHANGE_DATATYPE, "pack": _m.EXCHANGE_PACK}
_SIDES = {"current": _m.EXCHANGE_SIDE_CURRENT, "host": _m.EXCHANGE_SIDE_HOST,
          "device": _m.EXCHANGE_SIDE_DEVICE}


def _comm_handle(where: str, comm: Any) -> int:
    """The Fortran handle of @p comm: ``comm.py2f()`` (mpi4py) or an int."""
    if hasattr(comm, "py2f"):
        comm = comm.py2f()
    elif not _args.is_int(comm):
        raise TypeError(f"{where}: comm must be an mpi4py communicator (anything with py2f()) or "
                        f"a Fortran communicator handle (int), got {comm!r}")
    return _args.int_scalar(f"{where}: comm", comm, _args.INT32_MIN, _args.INT32_MAX)


def _handle_of(where: str, field: Any) -> int:
    """The library handle behind @p field: a gtstorage.gdp3 storage, or an array whose memory
    libgtstorage owns (what the GT4Py drop-in functions return)."""
    h = getattr(field, "_handle", None)
    if _args.is_int(h) and h:
        return int(h)
    base = field
    while base is not None:
        h = getattr(base, "handle", None)
        if type(base).__name__ == "_OwnedReference" and _args.is_int(h) and h:
            return int(h)
        base = getattr(base, "base", None)
    raise TypeError(f"{where}: {type(field).__name__} is not a gtstorage storage (wrap other "
                    "arrays with gtstorage.gdp3.as_storage(array, halo=...))")


def gpu_aware() -> bool:
    """Whether this MPI passes device memory (``MPIX_Query_cuda_support()``), unless the
    environment variable ``GTSTORAGE_MPI_GPU_AWARE`` (0 or 1) says otherwise.

    Returns
    -------
    bool
        True if device halos can be handed to MPI as device memory.
    """
    out = ctypes.c_int32()
    check(_lib.gtstorage_mpi_gpu_aware(ctypes.byref(out)), "gpu_aware")
    return bool(out.value)


class Decomposition:
    """A Cartesian grid of processes over labelled dims of a global domain.

    Parameters
    ----------
    comm
        The communicator: an mpi4py communicator or a Fortran handle (int). It is duplicated.
        Collective: every process of it creates the decomposition.
    dims : str
        Labels of the decomposed dims in grid order ("IJ", "I", "IJK", "JI", or "I,J").
    proc_dims : sequence of int, optional
        Processes per dim; 0 (or None for all) lets ``MPI_Dims_create`` choose.
    periodic : bool or sequence of bool
        Periodicity per dim (one bool for all).
    reorder : bool
        Allow MPI to renumber the processes (see :attr:`rank`).

    Raises
    ------
    GTStorageError
        On every process when any process's arguments are wrong (``ValueError`` there,
        ``GTCommunicationError`` naming the failed rank on the others).
    """

    def __init__(self, comm: Any, dims: str = "IJ", *, proc_dims: Sequence[int] | None = None,
                 periodic: Any = False, reorder: bool = False) -> None:
        where = "Decomposition"
        self._handle = 0
        if not isinstance(dims, str):
            raise TypeError(f"{where}: dims must be a str such as 'IJ', got {dims!r}")
        labels = dims.split(",") if "," in dims else list(dims)
        n = len(labels)
        o = _m.DecompOptions()
        check(_lib.gtstorage_decomp_options_init_sized(ctypes.byref(o), ctypes.sizeof(o)), where)
        o.ndim = n
        o.comm = _comm_handle(where, comm)
        keep: list[Any] = []
        cdims = dims.encode("ascii", "strict") if dims.isascii() else None
        if cdims is None or b"\0" in cdims:
            raise ValueError(f"{where}: dims must be ASCII labels such as 'IJ', got {dims!r}")
        o.dims = cdims
        if proc_dims is not None:
            p = _args.int_sequence(f"{where}: proc_dims", proc_dims, low=_args.INT32_MIN,
                                   high=_args.INT32_MAX)
            if len(p) != n:
                raise ValueError(f"{where}: proc_dims has {len(p)} values for {n} dims")
            arr = (ctypes.c_int32 * n)(*p)
            keep.append(arr)
            o.proc_dims = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int32))
        flags = [bool(periodic)] * n if isinstance(periodic, bool) else list(periodic)
        if len(flags) != n or not all(isinstance(f, bool) for f in flags):
            raise ValueError(f"{where}: periodic must be a bool or {n} bools, got {periodic!r}")
        parr = (ctypes.c_int32 * n)(*[int(f) for f in flags])
        keep.append(parr)
        o.periodic = ctypes.cast(parr, ctypes.POINTER(ctypes.c_int32))
        o.reorder = int(bool(reorder))
        out = _m.decomp_t()
        check(_lib.gtstorage_decomp_create(ctypes.byref(o), ctypes.byref(out)), where)
        self._handle = out.value
        info = _m.DecompInfo()
        info.struct_size = ctypes.sizeof(info)
        check(_lib.gtstorage_decomp_get_info(self._handle, ctypes.byref(info)), where)
        self._info = info

    def __del__(self) -> None:
        h, self._handle = getattr(self, "_handle", 0), 0
        if h and _lib is not None:
            _lib.gtstorage_decomp_release(h)

    # ---- what it is ----------------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        """Number of decomposed dims."""
        return int(self._info.ndim)

    @property
    def dims(self) -> tuple[str, ...]:
        """Labels of the decomposed dims, in grid order."""
        return tuple(self._info.dims[k].value.decode() for k in range(self.ndim))

    @property
    def rank(self) -> int:
        """This process's rank in the grid's communicator."""
        return int(self._info.rank)

    @property
    def size(self) -> int:
        """Number of processes."""
        return int(self._info.size)

    @property
    def proc_dims(self) -> tuple[int, ...]:
        """Processes per decomposed dim."""
        return tuple(int(self._info.proc_dims[k]) for k in range(self.ndim))

    @property
    def periodic(self) -> tuple[bool, ...]:
        """Periodicity per decomposed dim."""
        return tuple(bool(self._info.periodic[k]) for k in range(self.ndim))

    @property
    def coords(self) -> tuple[int, ...]:
        """This process's coordinates in the grid."""
        return tuple(int(self._info.coords[k]) for k in range(self.ndim))

    @property
    def neighbors(self) -> tuple[tuple[int | None, int | None], ...]:
        """(lower, upper) neighbour rank per decomposed dim; None at a non-periodic edge."""
        return tuple((None if lo < 0 else int(lo), None if hi < 0 else int(hi))
                     for lo, hi in (self._info.neighbors[k] for k in range(self.ndim)))

    @property
    def comm_handle(self) -> int:
        """Fortran handle of the grid's Cartesian communicator (owned by the decomposition)."""
        return int(self._info.comm)

    def local_extent(self, global_shape: Sequence[int], rank: int | None = None
                     ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The block of a global domain that a process owns.

        Parameters
        ----------
        global_shape : sequence of int
            Global extents of the decomposed dims, in grid order.
        rank : int, optional
            The process (default: this one).

        Returns
        -------
        offset : tuple of int
            First global index (0-based) of the block, per decomposed dim.
        extent : tuple of int
            Extent of the block, per decomposed dim.
        """
        where = "Decomposition.local_extent"
        g = _args.int_sequence(f"{where}: global_shape", global_shape)
        r = -1 if rank is None else _args.int_scalar(f"{where}: rank", rank, 0, _args.INT32_MAX)
        n = len(g)
        off, ext = (ctypes.c_int64 * max(n, 1))(), (ctypes.c_int64 * max(n, 1))()
        check(_lib.gtstorage_decomp_local_extent(self._handle, r, _capi.int64_array(g), n, off,
                                                 ext), where)
        return tuple(off[:n]), tuple(ext[:n])

    def exchange(self, fields: Sequence[Any], *, width: Sequence[int] | None = None,
                 corners: bool = True, method: str = "auto", side: str = "current",
                 gpu_aware: bool | None = None) -> Exchange:
        """Binds a persistent halo exchange of @p fields (collective).

        Parameters
        ----------
        fields : sequence
            Storages (``gtstorage.gdp3``) or arrays whose memory libgtstorage owns (the GT4Py
            drop-in's), each with a halo along every decomposed dim.
        width : sequence of int, optional
            (lower, upper) width per decomposed dim, flattened; default: each field's halo.
        corners : bool
            Fill edges and corners from the diagonal neighbours (BOX) or faces only (STAR).
        method : {"auto", "datatype", "pack"}
            How host regions travel: MPI datatypes, packed by the library, or chosen per region.
        side : {"current", "host", "device"}
            Which copy of a host/device pair is exchanged.
        gpu_aware : bool, optional
            Hand device halos to MPI as device memory (default: :func:`gpu_aware`).

        Returns
        -------
        Exchange
            The exchange; it keeps every field alive until it is released.
        """
        return Exchange(self, fields, width=width, corners=corners, method=method, side=side,
                        gpu_aware=gpu_aware)

    def __repr__(self) -> str:
        return (f"Decomposition(dims={''.join(self.dims)!r}, proc_dims={self.proc_dims}, "
                f"periodic={self.periodic}, rank={self.rank}, coords={self.coords})")


class Exchange:
    """A persistent halo exchange bound to storages (see :meth:`Decomposition.exchange`).

    Parameters
    ----------
    decomposition : Decomposition
        The process grid.
    fields : sequence
        The storages (see :meth:`Decomposition.exchange`).
    width, corners, method, side, gpu_aware
        As in :meth:`Decomposition.exchange`.
    """

    def __init__(self, decomposition: Decomposition, fields: Sequence[Any], *,
                 width: Sequence[int] | None = None, corners: bool = True,
                 method: str = "auto", side: str = "current",
                 gpu_aware: bool | None = None) -> None:
        where = "Decomposition.exchange"
        self._handle = 0
        if not isinstance(decomposition, Decomposition):
            raise TypeError(f"{where}: decomposition must be a Decomposition")
        if isinstance(fields, (str, bytes)) or not hasattr(fields, "__iter__"):
            raise TypeError(f"{where}: fields must be a sequence of storages")
        fields = list(fields)
        handles = [_handle_of(f"{where}: fields[{i}]", f) for i, f in enumerate(fields)]
        if not handles:
            raise ValueError(f"{where}: fields is empty")
        o = _m.ExchangeOptions()
        check(_lib.gtstorage_exchange_options_init_sized(ctypes.byref(o), ctypes.sizeof(o)), where)
        keep = None
        if width is not None:
            w = _args.int_sequence(f"{where}: width", width, low=0)
            if len(w) != 2 * decomposition.ndim:
                raise ValueError(f"{where}: width has {len(w)} values; expected 2 per decomposed "
                                 f"dim ({2 * decomposition.ndim})")
            keep = _capi.int64_array(w)
            o.width = ctypes.cast(keep, ctypes.POINTER(ctypes.c_int64))
        if not isinstance(corners, bool):
            raise TypeError(f"{where}: corners must be a bool")
        o.pattern = _PATTERNS[corners]
        if method not in _METHODS:
            raise ValueError(f"{where}: method must be one of {sorted(_METHODS)}, got {method!r}")
        o.method = _METHODS[method]
        if side not in _SIDES:
            raise ValueError(f"{where}: side must be one of {sorted(_SIDES)}, got {side!r}")
        o.side = _SIDES[side]
        if gpu_aware is not None and not isinstance(gpu_aware, bool):
            raise TypeError(f"{where}: gpu_aware must be None or a bool")
        o.gpu_aware = _m.GPU_AWARE_AUTO if gpu_aware is None else int(gpu_aware)
        arr = (_capi.handle_t * len(handles))(*handles)
        out = _m.exchange_t()
        check(_lib.gtstorage_exchange_create(decomposition._handle, arr, len(handles),
                                             ctypes.byref(o), ctypes.byref(out)), where)
        self._handle = out.value
        self._decomposition = decomposition
        self._fields = fields  # the Python objects too, so what the caller sees stays alive

    def __del__(self) -> None:
        h, self._handle = getattr(self, "_handle", 0), 0
        if h and _lib is not None:
            _lib.gtstorage_exchange_release(h)

    def _live(self, where: str) -> int:
        if not self._handle:
            raise ValueError(f"Exchange.{where}: the exchange was released")
        return self._handle

    def start(self) -> None:
        """Packs and posts one exchange; complete it with :meth:`wait` or :meth:`test`."""
        check(_lib.gtstorage_exchange_start(self._live("start")), "Exchange.start")

    def wait(self) -> None:
        """Completes the exchange: the halos are in place when it returns."""
        check(_lib.gtstorage_exchange_wait(self._live("wait")), "Exchange.wait")

    def test(self) -> bool:
        """Completes the exchange if every message has arrived.

        Returns
        -------
        bool
            True if it completed.
        """
        done = ctypes.c_int32()
        check(_lib.gtstorage_exchange_test(self._live("test"), ctypes.byref(done)), "Exchange.test")
        return bool(done.value)

    def run(self) -> None:
        """:meth:`start` then :meth:`wait`."""
        check(_lib.gtstorage_exchange_run(self._live("run")), "Exchange.run")

    __call__ = run

    def release(self) -> None:
        """Releases the exchange (completing a step in flight) and its hold on the fields."""
        h, self._handle = self._handle, 0
        self._fields = []
        if h:
            check(_lib.gtstorage_exchange_release(h), "Exchange.release")

    def __enter__(self) -> Exchange:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    @property
    def info(self) -> dict[str, int]:
        """What the exchange does per step (gtstorage_exchange_info as a dict)."""
        out = _m.ExchangeInfo()
        out.struct_size = ctypes.sizeof(out)
        check(_lib.gtstorage_exchange_get_info(self._live("info"), ctypes.byref(out)),
              "Exchange.info")
        return {name: int(getattr(out, name)) for name, *_ in out._fields_
                if name not in ("struct_size", "reserved")}
