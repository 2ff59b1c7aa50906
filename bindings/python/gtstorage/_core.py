# gtstorage Python binding: the core of a Storage, over a libgtstorage handle.
#
# A Storage owns one reference to a C handle and releases it when collected. Everything it
# reports (shape, strides, layout, halo, origin, aligned index, data addresses) comes from
# gtstorage_interface(); views come from gtstorage_slice/transpose/domain_view. The core is the
# handle, its geometry, its views and the values' host access; the mixins add indexing
# (_indexing), host/device synchronization (_sync), the buffer protocols (_protocols) and the
# NumPy duck array (_duck_array), and gtstorage._storage composes them into Storage.
"""The core of Storage: handle, geometry, views, host access to the values."""

from __future__ import annotations

import ctypes
import operator
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, cast

import numpy as np

from . import _args, _capi
from ._capi import GTNoSuchBufferError, check, lib
from ._handle import (
    SyncState,
    _array_desc,
    _cai_stream,
    _cupy,
    _cupy_or_none,
    _Geometry,
    _HandleOwner,
    _has_side,
    _info,
    _InterfaceHolder,
    _new_handle,
    _release_quietly,
    wrap_handle,
)


class _Allocators:
    """The GDP-3 allocators a Storage calls for itself: its constructor (``storage``),
    :meth:`StorageCore.copy` (``empty_like``) and unpickling (``from_array``).

    They are made on a higher floor (gtstorage._creation, over the options pipeline of
    gtstorage._request, which itself builds on Storage), so that floor fills this table when it is
    imported; the package imports it before any Storage exists. This floor imports nothing from
    above.
    """

    storage: Callable[..., Any]
    empty_like: Callable[..., Any]
    from_array: Callable[..., Any]


allocators = _Allocators()

_S = TypeVar("_S", bound="StorageCore")


class StorageCore:
    """The core of :class:`gtstorage.Storage`: one owned reference to a library handle, the
    geometry of its sides, its views, and host access to its values."""

    # Set by _from_handle (instances are made by object.__new__; __init__ does nothing).
    _handle: int
    _has_host: bool
    _has_device: bool
    _sync_state: SyncState | None
    _params: dict[str, Any]
    _geoms: list[_Geometry | None]  # per side
    _host_arr: np.ndarray | None
    _host_mv: memoryview | None
    _base: Any  # ndarray.base: None, a storage or a buffer
    _borrowed: bool
    # The concrete classes by buffers: host only, device only, host + device mirror, one unified
    # buffer (set by gtstorage._storage, which defines them).
    _kinds: ClassVar[tuple[type[StorageCore], type[StorageCore], type[StorageCore],
                           type[StorageCore]]]

    # ---- construction from a handle (internal) ------------------------------------------------

    @classmethod
    def _from_handle(cls: type[_S], handle: int, *, sync_state: SyncState | None = None,
                     params: dict[str, Any] | None = None,
                     view_of: StorageCore | None = None) -> _S:
        """Wraps a handle with refcount owned by the caller (released if this fails). A view
        (@p view_of: the storage it was made from) has that storage's buffers, hence its sides
        and class, which are then not asked of the library again."""
        try:
            if view_of is not None:
                has_host, has_device, kind = view_of._has_host, view_of._has_device, type(view_of)
            else:
                has_host, has_device, kind = _sides_and_class(handle)
            # The SyncState object is made on first use (most storages never need it); one given
            # by the caller (a view's parent's, or an unbound user object) is bound now.
            if sync_state is not None and not sync_state.is_bound:
                sync_state._bind(handle)
        except BaseException:
            lib.gtstorage_release(handle)
            raise
        obj = cast(_S, object.__new__(kind))
        obj._handle = handle
        obj._has_host = has_host
        obj._has_device = has_device
        obj._sync_state = sync_state
        obj._params = dict(params or {})
        obj._geoms = [None, None]  # per side, filled on first use
        obj._host_arr = None  # NumPy view of the host buffer, made on first use
        obj._host_mv = None  # memoryview of it (PEP 688 __buffer__ of a host-only storage)
        obj._base = None  # what the memory belongs to (ndarray.base): None, a storage or a buffer
        obj._borrowed = False
        return obj

    @classmethod
    def _borrow(cls: type[_S], handle: int) -> _S:
        """A storage over a handle someone else keeps alive, holding no reference of its own
        (gtstorage.bridge: libgtstorage_python references the handle for the duration of each
        call; the object is valid while the handle is). Its NumPy views hold none either."""
        check(lib.gtstorage_retain(handle), "handle")
        obj = cls._from_handle(handle)
        lib.gtstorage_release(handle)
        obj._borrowed = True
        return obj

    def __del__(self, _release: Callable[[int], None] = _release_quietly) -> None:
        # (_release bound now: globals may be gone at shutdown)
        h, self._handle = getattr(self, "_handle", 0), 0
        if not getattr(self, "_borrowed", False):
            _release(h)

    @classmethod
    def from_handle(cls: type[_S], handle: int) -> _S:
        """A Python view of a storage created elsewhere (C, Fortran) by its handle.

        The handle is borrowed: this takes its own reference (``gtstorage_retain``), so the caller
        may release theirs independently.

        Parameters
        ----------
        handle : int
            A live ``gtstorage_handle`` (an unsigned 64-bit integer).

        Returns
        -------
        Storage
            A storage of the concrete class its buffers call for.

        Raises
        ------
        TypeError, OverflowError
            ``handle`` is not an int, or not in [0, 2**64).
        GTStorageError
            An invalid handle (GTValueError).
        """
        h = _args.int_scalar("Storage.from_handle: handle", handle, 0, _args.UINT64_MAX)
        check(lib.gtstorage_retain(ctypes.c_uint64(h)), "Storage.from_handle: handle")
        return cls._from_handle(h)

    @property
    def handle(self) -> int:
        """The C handle (a borrowed reference: retain it with the C API to keep it longer)."""
        return self._handle

    # ---- description (cached: a handle's geometry never changes) ------------------------------

    def _primary_side(self) -> int:
        return _capi.SIDE_HOST if self._has_host else _capi.SIDE_DEVICE

    def _info(self, side: int | None = None) -> _capi.InterfaceInfo:
        return _info(self._handle, self._primary_side() if side is None else side)

    def _geom(self, side: int | None = None) -> _Geometry:
        """The cached geometry of @p side (default: the host side if there is one)."""
        if side is None:
            side = _capi.SIDE_HOST if self._has_host else _capi.SIDE_DEVICE
        g = self._geoms[side]
        if g is None:
            g = self._geoms[side] = _Geometry(_info(self._handle, side))
        return g

    @property
    def ndim(self) -> int:
        """Number of dimensions (0 for a 0-d storage)."""
        return self._geom().ndim

    @property
    def shape(self) -> tuple[int, ...]:
        """Extents in elements, halo included."""
        return self._geom().shape

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes (of the host buffer if there is one, else of the device buffer)."""
        return self._geom().strides

    @property
    def dtype(self) -> np.dtype[Any]:
        """NumPy dtype of the elements (native byte order)."""
        return self._geom().dtype

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._geom().itemsize

    @property
    def size(self) -> int:
        """Number of elements (product of the shape; 1 for a 0-d storage)."""
        n = 1
        for e in self._geom().shape:
            n *= e
        return n

    @property
    def nbytes(self) -> int:
        """Bytes of the elements, padding excluded."""
        return self._geom().nbytes

    @property
    def halo(self) -> tuple[tuple[int, int], ...]:
        """(lower, upper) halo widths per dimension, in elements."""
        return self._geom().halo

    @property
    def dims(self) -> tuple[str, ...]:
        """Dimension labels ("I", "J", "K", data dimensions "0", "1", …)."""
        return self._geom().dims

    @property
    def aligned_index(self) -> tuple[int | None, ...]:
        """Index of the aligned element; None in dimensions where it lies outside this view."""
        return self._geom().aligned_index

    @property
    def layout(self) -> tuple[int, ...]:
        """Rank of each dimension in stride order (0 = largest stride)."""
        return self._geom().layout

    @property
    def readonly(self) -> bool:
        """True if the storage must not be written (wrapped read-only memory)."""
        return self._geom().readonly

    @property
    def device(self) -> str | None:
        """"gpu" if the storage has a device buffer, None otherwise (GDP-3)."""
        return "gpu" if self._has_device else None

    @property
    def managed(self) -> bool | str:
        """GDP-3 ``managed``: False (no sync needed), "gtstorage" or "cuda"."""
        return False

    @property
    def sync_state(self) -> SyncState:
        """The shared host/device :class:`SyncState` of the buffers behind this storage."""
        if self._sync_state is None:
            self._sync_state = SyncState()._bind(self._handle)
        return self._sync_state

    @property
    def domain_view(self) -> StorageCore:
        """View without the halo: index (0, …) is the first interior point."""
        return self._view(_new_handle(lib.gtstorage_domain_view, self._handle,
                                      context="domain_view"))

    @property
    def data(self) -> memoryview | None:
        """The host buffer as a memoryview (GDP-3), None without a host buffer."""
        return self._host_view(write=not self.readonly).data if self._has_host else None

    @property
    def T(self) -> StorageCore:
        """View with the dimensions reversed (like ``ndarray.T``)."""
        return self.transpose()

    def __len__(self) -> int:
        """Extent of the first dimension (TypeError for a 0-d storage), like NumPy."""
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d storage")
        return shape[0]

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype}, dims={self.dims}, "
                f"halo={self.halo}, layout={self.layout}, device={self.device!r})")

    # ---- views -------------------------------------------------------------------------------

    def _view(self: _S, handle: int) -> _S:
        view = type(self)._from_handle(handle, sync_state=self.sync_state, params=self._params,
                                    view_of=self)
        # NumPy: a view's base is the array that owns the memory (chains collapse).
        view._base = self if self._base is None else self._base
        return view

    def transpose(self: _S, *axes: Any) -> _S:
        """View with the dimensions permuted (``numpy.ndarray.transpose``).

        Parameters
        ----------
        *axes : int, or one sequence of int, or None
            The permutation: ``axes[i]`` is the dimension of this storage that becomes dimension
            ``i`` (negative values count from the end). None or no axes reverses the dimensions.

        Returns
        -------
        Storage
            A view sharing the buffers and the sync state (dims, halo and strides permuted).
        """
        ndim = self.ndim
        given_axes: Any = axes
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            given_axes = axes[0]
        if given_axes is None or (isinstance(given_axes, tuple) and len(given_axes) == 0):
            perm = list(range(ndim))[::-1]
        else:
            try:
                perm = [operator.index(a) for a in given_axes]
            except TypeError:
                raise TypeError(f"transpose: axes must be ints, got {given_axes!r}") from None
        if len(perm) != ndim:
            raise ValueError(f"transpose: {len(perm)} axes given for a storage of ndim {ndim}")
        for given in perm:
            if not -ndim <= given < ndim:  # also before the C int32 array truncates it
                raise ValueError(f"transpose: axis {given} is out of bounds for a storage of "
                                 f"ndim {ndim}")
        perm = [p + ndim if p < 0 else p for p in perm]
        arr = _capi.int32_array(perm, "transpose: axes")
        return self._view(_new_handle(lib.gtstorage_transpose, self._handle, arr, len(perm),
                                      context="transpose"))

    # ---- copies between the storage and NumPy arrays (the C library converts and transfers) ---

    def _copy_from_ndarray(self, arr: np.ndarray) -> None:
        shape = self.shape
        if arr.dtype.kind not in "biufc" or not arr.dtype.isnative:
            arr = arr.astype(self.dtype)
        if arr.shape != shape:
            try:
                arr = np.broadcast_to(arr, shape)
            except ValueError:
                raise ValueError(f"could not broadcast input array from shape {arr.shape} into "
                                 f"shape {shape}") from None
        if any(s == 0 for s in arr.strides) and arr.size > 1:
            arr = np.ascontiguousarray(arr)  # the C library rejects overlapping source strides
        desc, keep = _array_desc(arr)
        check(lib.gtstorage_copy_from_array(self._handle, ctypes.byref(desc)), "copy from array")
        del keep

    def _copy_to_ndarray(self, arr: np.ndarray) -> None:
        desc, keep = _array_desc(arr)
        check(lib.gtstorage_copy_to_array(ctypes.byref(desc), self._handle), "copy to array")
        del keep

    def _raw_interface(self, side: int) -> dict[str, Any]:
        """Array-interface dict of one side, without touching the sync state."""
        return dict(self._geom(side).interface)

    def _raw_array_interface_object(self, side: int) -> _InterfaceHolder:
        return _InterfaceHolder(self, self._raw_interface(side))

    def _host_array_for_read(self) -> np.ndarray:
        """A host ndarray with this view's values: zero-copy with a host buffer, else a copy."""
        if self._has_host:
            return self.to_numpy()
        out = np.empty(self.shape, dtype=self.dtype)
        self._copy_to_ndarray(out)
        return out

    def _host_view(self, write: bool) -> np.ndarray:
        """A NumPy array over the host buffer, host made current first (and marked modified when
        @p write: the caller may write through it). The array holds its own library reference,
        so it is cached without a reference cycle."""
        if not self._has_host:
            raise GTNoSuchBufferError("the storage has no host buffer", _capi.ERROR_NO_SUCH_BUFFER)
        if self._has_device:
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "host access")
            if write:
                check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "host access")
        arr = self._host_arr
        if arr is None and self._borrowed:
            arr = self._host_arr = np.asarray(
                _InterfaceHolder(self, self._geom(_capi.SIDE_HOST).interface))
        elif arr is None:
            check(lib.gtstorage_retain(self._handle), "host access")
            arr = self._host_arr = np.asarray(
                _HandleOwner(self._handle, self._geom(_capi.SIDE_HOST).interface))
        return arr

    def _read_array(self) -> np.ndarray:
        """Values as an array for reading (host view, or a host copy of a device-only storage)."""
        if self._has_host:
            return self._host_view(write=False)
        return self._host_array_for_read()

    def _write_array(self, context: str) -> np.ndarray:
        if not self._has_host:
            raise GTNoSuchBufferError(f"{context}: the storage has no host buffer to write "
                                      "through (use __setitem__ or a device array)",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        if self.readonly:
            raise ValueError(f"{context}: the storage is read-only")
        return self._host_view(write=True)

    # ---- conversions -------------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """Zero-copy NumPy view of the host buffer; the array keeps the storage alive."""
        if not self._has_host:
            raise GTNoSuchBufferError("to_numpy: the storage has no host buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        view: np.ndarray = self._host_view(write=not self.readonly).view()
        return view

    def to_cupy(self) -> Any:
        """Zero-copy CuPy view of the device buffer (needs CuPy)."""
        if not self._has_device:
            raise GTNoSuchBufferError("to_cupy: the storage has no device buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        return _cupy().asarray(self)

    def to_ndarray(self) -> Any:
        """CuPy view of the device buffer if there is one and CuPy is importable, else the NumPy
        view of the host buffer (GDP-3)."""
        if self._has_device and _cupy_or_none() is not None:
            return self.to_cupy()
        if self._has_host:
            return self.to_numpy()
        raise GTNoSuchBufferError("to_ndarray: device-only storage and CuPy is not importable",
                                  _capi.ERROR_NO_SUCH_BUFFER)

    def copy(self: _S) -> _S:
        """New storage with the same parameters (layout, dims, halo, device) and a copy of the
        data."""
        out: _S = allocators.empty_like(self)
        check(lib.gtstorage_copy(out._handle, self._handle), "copy")
        return out

    def __copy__(self: _S) -> _S:
        """Same as :meth:`copy` (a storage owns no Python state worth sharing)."""
        return self.copy()

    def __deepcopy__(self: _S, memo: Any = None) -> _S:
        """Same as :meth:`copy` (``copy.deepcopy``).

        Parameters
        ----------
        memo : dict, optional
            ``copy.deepcopy``'s memo (a storage holds no Python objects to share).

        Returns
        -------
        Storage
            A new storage with a copy of the data.
        """
        return self.copy()


def _sides_and_class(handle: int) -> tuple[bool, bool, type[StorageCore]]:
    """(has host buffer, has device buffer, Storage subclass) of a handle."""
    has_host = _has_side(handle, _capi.SIDE_HOST)
    has_device = _has_side(handle, _capi.SIDE_DEVICE)
    if has_host and has_device:
        # Unified memory: one buffer seen from both sides.
        same = (_info(handle, _capi.SIDE_DEVICE).allocation ==
                _info(handle, _capi.SIDE_HOST).allocation)
        kinds = StorageCore._kinds
        return True, True, kinds[3] if same else kinds[2]
    return has_host, has_device, StorageCore._kinds[1 if has_device else 0]


def _is_gpu_value(value: object) -> bool:
    """GDP-3 "Choosing the Device": is @p value GPU-enabled?"""
    if isinstance(value, StorageCore._kinds[2]):
        return value.sync_state.state != _capi.SYNC_HOST_DIRTY
    if isinstance(value, StorageCore):
        return value._has_device
    gdi = getattr(value, "__gt_data_interface__", None)
    if isinstance(gdi, dict):
        return "gpu" in gdi and gdi["gpu"] is not None
    return hasattr(value, "__cuda_array_interface__")


def _wait_for_producer(storage: _S, stream: int | None) -> _S:
    """CAI v3 asks a consumer to synchronize with the producer's stream where the buffer is
    handed over: wait once, here, for the work queued there (the storage keeps its own stream,
    so a producer's stream that is destroyed later is never used)."""
    if stream is not None:
        check(lib.gtstorage_wait_stream(storage._handle, stream), "__cuda_array_interface__ stream")
    return storage


def _wrap_cuda_array(value: Any) -> StorageCore:
    """A device-only storage over an object exposing __cuda_array_interface__ (no copy)."""
    cai = value.__cuda_array_interface__
    stream = _cai_stream(cai)
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    out = _wait_for_producer(
        StorageCore._from_handle(wrap_handle(
            device_data=int(cai["data"][0]) or None,
            shape=shape,
            device_strides=None if strides is None else tuple(int(s) for s in strides),
            typestr=cai["typestr"],
            readonly=bool(cai["data"][1]),
            keepalive=value,
        )),
        stream,
    )
    out._base = value
    return out
