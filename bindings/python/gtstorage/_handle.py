# gtstorage Python binding: library handles and what is read from them, below any Storage.
#
# The owned reference (the ``base`` of arrays over library memory), the sync state object, the
# geometry of one side of a handle (read once from gtstorage_interface), the gtstorage_array of a
# NumPy array, gtstorage_wrap of caller memory and the CUDA Array Interface's stream. Everything
# here speaks handles, never Storage objects: the Storage floor (_storage) and everything above
# build on it.
"""Handles, their geometry and sync state, and wrapped caller memory."""

from __future__ import annotations

import ctypes
import itertools
import operator
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from . import _args, _capi
from ._capi import check, lib

# Lazily imported optional modules (CuPy is optional everywhere).
_cupy_module: ModuleType | None = None


def _cupy() -> ModuleType:
    global _cupy_module
    if _cupy_module is None:
        import cupy  # ImportError tells the caller CuPy is missing

        _cupy_module = cupy
    return _cupy_module


def _cupy_or_none() -> ModuleType | None:
    try:
        return _cupy()
    except ImportError:
        return None


def _release_quietly(handle: int) -> None:
    """Gives back one library reference from a finalizer: never raises (at interpreter shutdown
    the library may already be unloaded)."""
    if handle and lib is not None:
        try:
            lib.gtstorage_release(handle)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class _OwnedReference:
    """Owns one library reference, given back when the object goes: the ``base`` of arrays over
    library memory (NumPy's via ``__array_interface__``, CuPy's via the CUDA Array Interface)."""

    __slots__ = ("handle", "__weakref__")

    def __init__(self, handle: int):
        self.handle = handle

    def __del__(self, _release: Callable[[int], None] = _release_quietly) -> None:
        # (_release bound now: globals may be gone at shutdown)
        h, self.handle = getattr(self, "handle", 0), 0
        _release(h)


class SyncState:
    """Which buffer of a host/device pair is modified (GDP-3 ``gt4py.storage.SyncState``).

    One instance is shared by a storage and every view made from it, because the C library keeps
    one sync state per buffer pair: changing it through any view changes it for all. A
    ``SyncState`` created by the user (``SyncState(SyncState.SYNC_HOST_DIRTY)``) is unbound and
    only carries a value, e.g. for ``as_storage(..., sync_state=...)``; the storage created from it
    binds it.

    Parameters
    ----------
    state : int, optional
        ``SYNC_CLEAN`` (default), ``SYNC_HOST_DIRTY`` or ``SYNC_DEVICE_DIRTY``.
    """

    #: Host and device hold the same values.
    SYNC_CLEAN = _capi.SYNC_CLEAN
    #: The host is modified: the next device access copies host -> device.
    SYNC_HOST_DIRTY = _capi.SYNC_HOST_DIRTY
    #: The device is modified: the next host access copies device -> host.
    SYNC_DEVICE_DIRTY = _capi.SYNC_DEVICE_DIRTY
    _NAMES = {0: "SYNC_CLEAN", 1: "SYNC_HOST_DIRTY", 2: "SYNC_DEVICE_DIRTY"}
    # The side each state marks modified (gtstorage_modify); CLEAN: gtstorage_mark_synchronized.
    _MODIFIED_SIDE = {
        _capi.SYNC_HOST_DIRTY: _capi.SIDE_HOST,
        _capi.SYNC_DEVICE_DIRTY: _capi.SIDE_DEVICE,
    }

    def __init__(self, state: int = SYNC_CLEAN):
        self._handle = 0  # an own library reference once bound, so no Python cycle is needed
        self._value = self._check(state)

    @classmethod
    def _check(cls, state: Any) -> int:
        try:
            value = operator.index(state)
        except TypeError:
            raise TypeError("sync state must be an int constant of SyncState, "
                            f"got {state!r}") from None
        if value not in cls._NAMES:
            raise ValueError(f"sync state {value} is not one of SYNC_CLEAN (0), "
                             "SYNC_HOST_DIRTY (1), SYNC_DEVICE_DIRTY (2)")
        return value

    def _bind(self, handle: int) -> SyncState:
        check(lib.gtstorage_retain(handle), "sync_state")
        self._handle = handle
        return self

    @property
    def is_bound(self) -> bool:
        """True once a storage uses this object (its value is then the library's)."""
        return self._handle != 0

    @property
    def state(self) -> int:
        """SYNC_CLEAN, SYNC_HOST_DIRTY or SYNC_DEVICE_DIRTY; setting it marks the buffers so
        (without copying)."""
        if not self._handle:
            return self._value
        out = ctypes.c_int32()
        check(lib.gtstorage_get_sync_state(self._handle, ctypes.byref(out)), "sync_state")
        return out.value

    @state.setter
    def state(self, value: Any) -> None:
        value = self._check(value)
        if not self._handle:
            self._value = value
            return
        if value == _capi.SYNC_CLEAN:
            check(lib.gtstorage_mark_synchronized(self._handle), "sync_state")
        else:
            check(lib.gtstorage_modify(self._handle, self._MODIFIED_SIDE[value], 0), "sync_state")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SyncState):
            return self is other or (not self._handle and not other._handle
                                     and self._value == other._value)
        return NotImplemented

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        unbound = "" if self._handle else ", unbound"
        return f"SyncState({self._NAMES.get(self.state, self.state)}{unbound})"

    def __del__(self, _release: Callable[[int], None] = _release_quietly) -> None:
        # (_release bound now: globals may be gone at shutdown)
        h, self._handle = getattr(self, "_handle", 0), 0
        _release(h)


def _info(handle: int, side: int) -> _capi.InterfaceInfo:
    info = _capi.new_struct(_capi.InterfaceInfo)
    check(lib.gtstorage_interface(handle, side, ctypes.byref(info)),
          "host buffer" if side == _capi.SIDE_HOST else "device buffer")
    return info


class _Geometry:
    """What never changes about one side of a handle, read once from gtstorage_interface().

    A handle's shape, strides, dims, halo, origin, layout, dtype and data address are fixed for
    its lifetime (views are new handles), so the protocol properties answer from this cache
    instead of a ctypes round trip each time.
    """

    __slots__ = ("ndim", "shape", "strides", "typestr", "dtype", "data", "readonly", "dims",
                 "halo", "origin", "layout", "aligned_index", "itemsize", "nbytes", "allocation",
                 "device_type", "device_id", "interface")

    def __init__(self, info: _capi.InterfaceInfo):
        n = int(info.ndim)
        self.ndim = n
        self.shape: tuple[int, ...] = tuple(info.shape[:n])
        self.strides: tuple[int, ...] = tuple(info.strides[:n])
        self.typestr: str = info.typestr.decode("ascii")
        self.dtype: np.dtype[Any] = np.dtype(self.typestr)
        self.data = int(info.data or 0)
        self.readonly = bool(info.readonly)
        self.dims: tuple[str, ...] = tuple(info.dims[d].value.decode("ascii") for d in range(n))
        self.halo = tuple((int(info.halo[d][0]), int(info.halo[d][1])) for d in range(n))
        self.origin: tuple[int, ...] = tuple(info.origin[:n])
        self.layout: tuple[int, ...] = tuple(info.layout[:n])
        self.aligned_index = tuple(None if a < 0 else int(a) for a in info.aligned_index[:n])
        self.itemsize = int(info.itemsize)
        self.nbytes = int(info.nbytes)
        self.allocation = int(info.allocation or 0)
        self.device_type = int(info.device_type)
        self.device_id = int(info.device_id)
        # The NumPy array interface (v3) of this side; handed out as a copy. A zero-size buffer
        # may have no address (wrapped empty memory); NumPy 1.x refuses a NULL address even for
        # an empty array, so it is given one that is never read.
        data = self.data
        if not data and 0 in self.shape:
            data = _EMPTY_ADDRESS
        self.interface = {"shape": self.shape, "typestr": self.typestr,
                          "data": (data, self.readonly), "strides": self.strides,
                          "version": 3}


# The address a zero-size buffer without one reports (never dereferenced: no element).
_EMPTY_BUFFER = ctypes.create_string_buffer(16)
_EMPTY_ADDRESS = ctypes.addressof(_EMPTY_BUFFER)


def _has_side(handle: int, side: int) -> bool:
    out = ctypes.c_int32()
    check(lib.gtstorage_has_side(handle, side, ctypes.byref(out)))
    return bool(out.value)


def _tuple(arr: Any, n: int) -> tuple[int, ...]:
    return tuple(int(arr[i]) for i in range(n))


_INT64_MAX = 2**63 - 1


def _clamp(value: int, low: int, high: int) -> int:
    return low if value < low else high if value > high else value


def _new_handle(fn: Callable[..., int], *args: Any, context: str) -> int:
    out = _capi.handle_t()
    check(fn(*args, ctypes.byref(out)), context)
    return out.value


# DLPack device types of memory a CUDA Array Interface consumer can use: CUDA device, host
# (pinned) and managed memory, and ROCm memory for CuPy on ROCm.
_CAI_DEVICE_TYPES = (_capi.DL_CUDA, _capi.DL_CUDA_HOST, _capi.DL_CUDA_MANAGED, _capi.DL_ROCM)


class _HandleOwner(_OwnedReference):
    """An owned reference exposing a fixed NumPy array interface."""

    __slots__ = ("__array_interface__",)

    def __init__(self, handle: int, interface: dict[str, Any]):
        super().__init__(handle)
        self.__array_interface__ = interface


class _InterfaceHolder:
    """Exposes a fixed array interface and keeps its storage alive (used as ndarray.base)."""

    __slots__ = ("storage", "__array_interface__")

    def __init__(self, storage: object, interface: dict[str, Any]):
        self.storage = storage
        self.__array_interface__ = interface


def _array_desc(arr: np.ndarray) -> tuple[_capi.Array, tuple[object, ...]]:
    """A gtstorage_array over a NumPy array (returns it and the ctypes objects to keep alive)."""
    desc = _capi.new_struct(_capi.Array)
    shape = _capi.int64_array(arr.shape)
    strides = _capi.int64_array(arr.strides)
    typestr = arr.dtype.str.encode("ascii")
    desc.ndim = arr.ndim
    desc.data = arr.ctypes.data if arr.size else None
    desc.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    desc.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    desc.dtype = typestr
    return desc, (shape, strides, typestr, arr)


# Objects kept alive for wrapped storages until the library calls the release callback.
_wrap_keepalive: dict[int, Any] = {}
_wrap_tokens = itertools.count(1)  # next() is atomic under the GIL; "+= 1" on a list is not


def _release_wrapped(user_data: int) -> None:
    # Called by the library once the last reference to a wrapped buffer is gone. Only a
    # subscript deletion (no call) so it also works when it runs while an exception is pending.
    del _wrap_keepalive[user_data]


_release_callback = _capi.RELEASE_FN(_release_wrapped)


def wrap_handle(*, data: int | None = None, device_data: int | None = None,
                shape: Sequence[int], host_strides: Sequence[int] | None = None,
                device_strides: Sequence[int] | None = None, typestr: str,
                dims: str | None = None, halo: Sequence[int] | None = None,
                readonly: bool = False, device_id: int = -1,
                sync_state: int = _capi.SYNC_CLEAN, keepalive: object = None) -> int:
    """A new handle from gtstorage_wrap over caller memory; @p keepalive stays referenced while
    the C side lives."""
    opts = _capi.new_struct(_capi.WrapOptions)
    c_shape = _capi.int64_array(shape)
    ndim = len(shape)
    opts.ndim = ndim
    opts.data = data
    opts.device_data = device_data
    opts.shape = ctypes.cast(c_shape, ctypes.POINTER(ctypes.c_int64))
    keep = [c_shape]
    if host_strides is not None:
        hs = _capi.int64_array(host_strides)
        keep.append(hs)
        opts.strides = ctypes.cast(hs, ctypes.POINTER(ctypes.c_int64))
    if device_strides is not None:
        ds = _capi.int64_array(device_strides)
        keep.append(ds)
        opts.device_strides = ctypes.cast(ds, ctypes.POINTER(ctypes.c_int64))
    opts.dtype = typestr.encode("ascii")
    opts.dims = _args.c_string("dims", dims) if dims else None
    if halo is not None:
        h = _capi.int64_array(halo)
        keep.append(h)
        opts.halo = ctypes.cast(h, ctypes.POINTER(ctypes.c_int64))
    opts.readonly = 1 if readonly else 0
    opts.device_id = device_id
    opts.sync_state = sync_state
    token = 0
    if keepalive is not None:
        token = next(_wrap_tokens)
        _wrap_keepalive[token] = keepalive
        opts.release = _release_callback
        opts.user_data = token
    out = _capi.handle_t()
    status = lib.gtstorage_wrap(ctypes.byref(opts), ctypes.byref(out))
    if status != _capi.OK:
        _wrap_keepalive.pop(token, None)  # the library does not call release on failure
        check(status, "as_storage")
    return int(out.value)


def _cai_stream(cai: dict[str, Any]) -> int | None:
    """The producer's stream of a CUDA Array Interface dict (None: nothing to wait for).

    CAI v3: None (or an older version, which has no stream) means no synchronization is needed;
    1 is the legacy default stream, 2 the per-thread default; 0 is not allowed (ambiguous).
    """
    stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
    if stream is None:
        return None
    if isinstance(stream, bool) or not isinstance(stream, (int, np.integer)):
        raise TypeError(f"__cuda_array_interface__: stream must be None or an int, got {stream!r}")
    stream = int(stream)
    if stream == 0:
        raise ValueError("__cuda_array_interface__: stream 0 is not allowed (CAI v3: it is "
                         "ambiguous; 1 is the legacy default stream, 2 the per-thread default "
                         "stream)")
    if stream < 0 or stream >= 1 << 64:
        raise ValueError(f"__cuda_array_interface__: stream {stream} is not a stream handle")
    return stream
