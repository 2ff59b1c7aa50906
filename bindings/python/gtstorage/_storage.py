# gtstorage Python binding: the Storage object (GDP-3) over a libgtstorage handle.
#
# A Storage owns one reference to a C handle and releases it when collected. Everything it
# reports (shape, strides, layout, halo, origin, aligned index, data addresses) comes from
# gtstorage_interface(); views come from gtstorage_slice/transpose/domain_view. Python only turns
# keys and keywords into C arguments and builds the protocol dictionaries.
"""Storage classes, SyncState and the array protocols."""

from __future__ import annotations

import ctypes
import operator
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from . import _args, _capi, _dlpack
from ._args import UNSET as _UNSET
from ._capi import GTNoSuchBufferError, check, lib
from ._handle import (
    _CAI_DEVICE_TYPES,
    _INT64_MAX,
    SyncState,
    _array_desc,
    _cai_stream,
    _clamp,
    _cupy,
    _cupy_or_none,
    _Geometry,
    _HandleOwner,
    _has_side,
    _info,
    _new_handle,
    _release_quietly,
    _tuple,
    wrap_handle,
)


class _Allocators:
    """The GDP-3 allocators a Storage calls for itself: its constructor (``storage``),
    :meth:`Storage.copy` (``empty_like``) and unpickling (``from_array``).

    They are made on a higher floor (gtstorage._creation, over the options pipeline of
    gtstorage._request, which itself builds on Storage), so that floor fills this table when it is
    imported; the package imports it before any Storage exists. This floor imports nothing from
    above.
    """

    storage: Callable[..., Storage]
    empty_like: Callable[..., Storage]
    from_array: Callable[..., Storage]


allocators = _Allocators()

def _sides_and_class(handle: int) -> tuple[bool, bool, type[Storage]]:
    """(has host buffer, has device buffer, Storage subclass) of a handle."""
    has_host = _has_side(handle, _capi.SIDE_HOST)
    has_device = _has_side(handle, _capi.SIDE_DEVICE)
    if has_host and has_device:
        # Unified memory: one buffer seen from both sides.
        same = (_info(handle, _capi.SIDE_DEVICE).allocation ==
                _info(handle, _capi.SIDE_HOST).allocation)
        return True, True, CUDAManagedGPUStorage if same else SoftwareManagedGPUStorage
    return has_host, has_device, GPUStorage if has_device else CPUStorage


def _is_gpu_value(value: object) -> bool:
    """GDP-3 "Choosing the Device": is @p value GPU-enabled?"""
    if isinstance(value, SoftwareManagedGPUStorage):
        return value.sync_state.state != _capi.SYNC_HOST_DIRTY
    if isinstance(value, Storage):
        return value._has_device
    gdi = getattr(value, "__gt_data_interface__", None)
    if isinstance(gdi, dict):
        return "gpu" in gdi and gdi["gpu"] is not None
    return hasattr(value, "__cuda_array_interface__")


# The parameters of GDP-3's storage() and of the Storage constructor, which is storage().
_STORAGE_PARAMETERS_DOC = """
    Parameters
    ----------
    data : array-like, optional
        Host source: anything :func:`~gtstorage.gdp3.from_array` copies (``copy=True``) or
        :func:`~gtstorage.gdp3.as_storage` wraps (``copy=False``).
    device_data : array-like, optional
        Device source (``__cuda_array_interface__`` or a device storage). With ``data`` too and
        ``copy=True``, the side that ``sync_state`` says is current is copied; with
        ``copy=False`` the two become a synchronized pair.
    dtype : dtype-like, optional
        Element type: the data's by default (``float64`` for an allocation); a copy converts, a
        wrap checks it.
    copy : bool, optional
        Copy the data into a new storage (default) or wrap its buffers.
    sync_state : SyncState or int, optional
        Which of ``data`` and ``device_data`` is current (see
        :func:`~gtstorage.gdp3.as_storage`).
    shape : sequence of int, optional
        Only with ``copy=False``: the extents of a storage allocated without data, or checked
        against the wrapped buffer.
    backend, defaults : str, optional
        Preset name (aliases): the copy's layout, alignment and device, or what a wrapped buffer
        must suit.
    aligned_index : sequence of int, optional
        Index of the aligned element (default: the first interior point).
    dimensions, dims : sequence of str or str, optional
        Dimension labels (aliases; default: the data's ``__gt_dims__`` or the library's).
    layout : sequence of int, optional
        Stride order (0 = largest stride) of the copy, or checked against the wrapped buffer.
    alignment_size : int, optional
        Alignment in bytes of the aligned element (a positive multiple or divisor of the item
        size).
    halo : int or sequence of int or (lower, upper) pairs, optional
        Halo widths in elements per dimension.
    device : None, "cpu" or "gpu", optional
        Where the buffers are (default: the preset's, or the data's).
    managed : None, "gtstorage" (or "gt4py") or "cuda", optional
        How a device storage is kept (see :func:`gtstorage.gdp3.empty`).
    device_id : int, optional
        Device ordinal; -1 (default) is the calling thread's current device, or the wrapped
        pointer's.
    readonly : bool, optional
        A storage that refuses writes (default: writable, or the wrapped buffer's flag).

    Returns
    -------
    Storage
        ``CPUStorage``, ``GPUStorage``, ``SoftwareManagedGPUStorage`` or
        ``CUDAManagedGPUStorage`` by where the buffers are.

    Raises
    ------
    TypeError, ValueError, OverflowError
        Bad arguments, or parameters that do not match wrapped data (the message names the
        function and the argument).
"""
# The constructor's part of it, appended to the docstrings of the storage classes.
_CONSTRUCTOR_DOC = _STORAGE_PARAMETERS_DOC.split("    Returns")[0].rstrip() + "\n"


class Storage(np.lib.mixins.NDArrayOperatorsMixin):
    """A GT4Py/GDP-3 storage: an N-d field allocated and described by libgtstorage.

    Use the creation functions (``empty``, ``zeros``, ``from_array``, ``as_storage`` …);
    ``Storage(data, ...)`` is :func:`gtstorage.gdp3.storage`, whose parameters it takes. The
    concrete class tells where the buffers are: ``CPUStorage`` (host only), ``GPUStorage``
    (device only), ``SoftwareManagedGPUStorage`` (host + device, synchronized by gtstorage) and
    ``CUDAManagedGPUStorage`` (one unified-memory buffer).
    """

    __array_priority__ = 10

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

    def __new__(cls, data: Any = None, device_data: Any = None, *, dtype: Any = None,
                copy: bool = True, sync_state: Any = None,
                shape: Sequence[int] | None = None, backend: Any = _UNSET,
                defaults: Any = _UNSET, aligned_index: Any = None, dimensions: Any = _UNSET,
                dims: Any = _UNSET, layout: Any = None, alignment_size: Any = None,
                halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
                device_id: int = -1, readonly: Any = None) -> Storage:
        return allocators.storage(data, device_data, dtype=dtype, copy=copy, sync_state=sync_state,
                       shape=shape, backend=backend, defaults=defaults,
                       aligned_index=aligned_index, dimensions=dimensions, dims=dims,
                       layout=layout, alignment_size=alignment_size, halo=halo, device=device,
                       managed=managed, device_id=device_id, readonly=readonly)

    def __init__(self, data: Any = None, device_data: Any = None, *, dtype: Any = None,
                 copy: bool = True, sync_state: Any = None,
                 shape: Sequence[int] | None = None, backend: Any = _UNSET,
                 defaults: Any = _UNSET, aligned_index: Any = None, dimensions: Any = _UNSET,
                 dims: Any = _UNSET, layout: Any = None, alignment_size: Any = None,
                 halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
                 device_id: int = -1, readonly: Any = None) -> None:
        # All work happens in __new__ (storage()); the arguments were used there.
        pass

    # ---- construction from a handle (internal) ------------------------------------------------

    @staticmethod
    def _from_handle(handle: int, *, sync_state: SyncState | None = None,
                     params: dict[str, Any] | None = None,
                     view_of: Storage | None = None) -> Storage:
        """Wraps a handle with refcount owned by the caller (released if this fails). A view
        (@p view_of: the storage it was made from) has that storage's buffers, hence its sides
        and class, which are then not asked of the library again."""
        try:
            if view_of is not None:
                has_host, has_device, cls = view_of._has_host, view_of._has_device, type(view_of)
            else:
                has_host, has_device, cls = _sides_and_class(handle)
            # The SyncState object is made on first use (most storages never need it); one given
            # by the caller (a view's parent's, or an unbound user object) is bound now.
            if sync_state is not None and not sync_state.is_bound:
                sync_state._bind(handle)
        except BaseException:
            lib.gtstorage_release(handle)
            raise
        obj = object.__new__(cls)
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

    @staticmethod
    def _borrow(handle: int) -> Storage:
        """A storage over a handle someone else keeps alive, holding no reference of its own
        (gtstorage.bridge: libgtstorage_python references the handle for the duration of each
        call; the object is valid while the handle is). Its NumPy views hold none either."""
        check(lib.gtstorage_retain(handle), "handle")
        obj = Storage._from_handle(handle)
        lib.gtstorage_release(handle)
        obj._borrowed = True
        return obj

    def __del__(self, _release: Callable[[int], None] = _release_quietly) -> None:
        # (_release bound now: globals may be gone at shutdown)
        h, self._handle = getattr(self, "_handle", 0), 0
        if not getattr(self, "_borrowed", False):
            _release(h)

    @classmethod
    def from_handle(cls, handle: int) -> Storage:
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
        return Storage._from_handle(h)

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
    def domain_view(self) -> Storage:
        """View without the halo: index (0, …) is the first interior point."""
        return self._view(_new_handle(lib.gtstorage_domain_view, self._handle,
                                      context="domain_view"))

    @property
    def data(self) -> memoryview | None:
        """The host buffer as a memoryview (GDP-3), None without a host buffer."""
        return self._host_view(write=not self.readonly).data if self._has_host else None

    @property
    def T(self) -> Storage:
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

    def _view(self, handle: int) -> Storage:
        view = Storage._from_handle(handle, sync_state=self.sync_state, params=self._params,
                                    view_of=self)
        # NumPy: a view's base is the array that owns the memory (chains collapse).
        view._base = self if self._base is None else self._base
        return view

    def transpose(self, *axes: Any) -> Storage:
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

    def _specs(self, key: Any) -> tuple[list[tuple[int, int, int, int]], bool] | None:
        """C slice specs for a basic-indexing key, or None for advanced indexing."""
        if not isinstance(key, tuple):
            key = (key,)
        shape = self.shape
        ndim = len(shape)
        n_ellipsis = 0
        for k in key:  # one pass: an advanced index anywhere makes the whole key advanced
            if type(k) is slice or type(k) is int:
                continue
            if k is Ellipsis:
                n_ellipsis += 1
            elif (k is None or isinstance(k, (list, np.ndarray, bool, np.bool_))
                  or hasattr(k, "__array_interface__")):
                return None
        if n_ellipsis > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_ellipsis:
            pos = next(i for i, k in enumerate(key) if k is Ellipsis)
            fill = ndim - (len(key) - 1)
            key = key[:pos] + (slice(None),) * max(fill, 0) + key[pos + 1:]
        if len(key) > ndim:
            raise IndexError(f"too many indices: storage is {ndim}-dimensional, but {len(key)} "
                             "were indexed")
        key = key + (slice(None),) * (ndim - len(key))
        specs = []
        # Every dimension indexed by an int gives a scalar; an ellipsis always gives a view (NumPy:
        # s[...] of a 0-d array is a 0-d view, s[()] its value).
        all_int = n_ellipsis == 0
        for d, k in enumerate(key):
            if type(k) is int:  # the common case first (operator.index below takes any index)
                if not -shape[d] <= k < shape[d]:
                    raise IndexError(f"index {k} is out of bounds for axis {d} with size "
                                     f"{shape[d]}")
                specs.append((k, _capi.SLICE_NONE, 1, _capi.SLICE_INDEX))
                continue
            if isinstance(k, slice):
                all_int = False
                step = 1 if k.step is None else operator.index(k.step)
                if step == 0:
                    raise ValueError("slice step cannot be zero")
                # Python integers are unbounded: clamp like CPython's slice handling, so nothing
                # wraps in the int64 fields and no value collides with the SLICE_NONE sentinel.
                step = _clamp(step, -_INT64_MAX, _INT64_MAX)
                start = (_capi.SLICE_NONE if k.start is None
                         else _clamp(operator.index(k.start), -_INT64_MAX, _INT64_MAX))
                stop = (_capi.SLICE_NONE if k.stop is None
                        else _clamp(operator.index(k.stop), -_INT64_MAX, _INT64_MAX))
                specs.append((start, stop, step, _capi.SLICE_RANGE))
                continue
            try:
                i = operator.index(k)
            except TypeError:
                return None
            if not -shape[d] <= i < shape[d]:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {shape[d]}")
            specs.append((i, _capi.SLICE_NONE, 1, _capi.SLICE_INDEX))
        return specs, all_int

    def _slice(self, specs: list[tuple[int, int, int, int]]) -> Storage:
        arr = (_capi.SliceSpec * max(len(specs), 1))()
        for i, (start, stop, step, kind) in enumerate(specs):
            arr[i].start, arr[i].stop, arr[i].step, arr[i].kind = start, stop, step, kind
        return self._view(_new_handle(lib.gtstorage_slice, self._handle, arr, len(specs),
                                      context="index"))

    def __getitem__(self, key: Any) -> Any:
        """The selected elements, like ``ndarray.__getitem__``.

        Parameters
        ----------
        key : int, slice, Ellipsis, tuple of them, or an advanced index
            Basic indexing gives a view (a scalar when every dimension is indexed by an int);
            advanced indexing (arrays, lists, booleans, ``None``) gives a NumPy array, like NumPy.

        Returns
        -------
        Storage or numpy.ndarray or scalar
            A view sharing buffers and sync state, a new NumPy array, or the element's value.
        """
        arr = self._element_array(key)
        if arr is not None:
            return arr[key]
        parsed = self._specs(key)
        if parsed is None:
            return self._host_array_for_read()[key]
        specs, all_int = parsed
        view = self._slice(specs)
        if all_int:
            return view._read_scalar()
        return view

    def _element_array(self, key: Any) -> np.ndarray | None:
        """The cached host ndarray when @p key names one element with Python ints and this
        storage is host-only with a numeric dtype, else None.

        Element loops (``s[i, j] = v``) are the hot case: NumPy indexes, bounds-checks (the same
        IndexError text) and wraps negative indices exactly as the general path does, but
        without a view handle per element (0.5 us instead of 18 to read). A storage with a
        device side takes the general path, which copies the one element from the side that is
        current instead of syncing the buffer.
        """
        if self._has_device or not self._has_host:
            return None
        if type(key) is not tuple:
            if type(key) is not int:
                return None
            key = (key,)
        if not all(type(k) is int for k in key):
            return None
        arr = self._host_arr
        if arr is None:
            arr = self._host_view(False)
        if len(key) != arr.ndim or arr.dtype.kind not in "biufc":
            return None
        return arr

    def _read_scalar(self) -> Any:
        out = np.empty((), dtype=self.dtype)
        self._copy_to_ndarray(out)
        return out[()]

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes ``value`` into the selected elements, on the side that is current.

        Parameters
        ----------
        key : int, slice, Ellipsis, tuple of them, or an advanced index
            As in :meth:`__getitem__`.
        value : scalar, array-like, Storage or device array
            Broadcast to the selection and converted to the dtype, as NumPy does; a GPU-enabled
            value is written to the device buffer of a host + device pair (GDP-3).
        """
        if type(value) in (float, int, bool, complex) or isinstance(value, np.number):
            arr = self._element_array(key)
            if arr is not None and arr.flags.writeable:
                # The general path's conversion (np.asarray to the dtype), then one store.
                arr[key] = np.asarray(value, dtype=arr.dtype)
                return
        _args.array_source("__setitem__: value", value)
        parsed = self._specs(key)
        if parsed is None:
            # Advanced indexing: write through the host buffer with NumPy.
            if not self._has_host:
                raise IndexError("advanced indexing needs a host buffer; this storage has none")
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__setitem__")
            arr = np.asarray(self._raw_array_interface_object(_capi.SIDE_HOST))
            arr[key] = np.asarray(value) if isinstance(value, Storage) else value
            check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__setitem__")
            return
        self._slice(parsed[0])._assign(value)

    def _assign(self, value: Any) -> None:
        """Writes @p value (scalar, array-like, storage) into every element of this view."""
        if (isinstance(self, SoftwareManagedGPUStorage) and _is_gpu_value(value)):
            self._assign_on_device(value)
            return
        if isinstance(value, Storage) and value.shape == self.shape:
            check(lib.gtstorage_copy(self._handle, value._handle), "__setitem__")
            return
        if isinstance(value, Storage):
            value = value._host_array_for_read()
        if np.ndim(value) == 0 and not hasattr(value, "__cuda_array_interface__"):
            scalar = np.asarray(value, dtype=self.dtype)
            check(lib.gtstorage_fill(self._handle, scalar.ctypes.data_as(ctypes.c_void_p)),
                  "__setitem__")
            return
        if hasattr(value, "__cuda_array_interface__") and not hasattr(value, "__array_interface__"):
            wrapped = _wrap_cuda_array(value)
            src = wrapped if wrapped.shape == self.shape else None
            if src is None:
                raise ValueError("__setitem__: a device array value must have the target's shape")
            check(lib.gtstorage_copy(self._handle, src._handle), "__setitem__")
            return
        self._copy_from_ndarray(np.asarray(value))

    def _assign_on_device(self, value: Any) -> None:
        # GDP-3: a GPU-enabled value is written to the device buffer of a mirrored storage. The C
        # copy writes the host side of a storage that has one, so the device side of this view is
        # described as a device-only storage (no copy) and written through that.
        check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__setitem__")
        dev = self._info(_capi.SIDE_DEVICE)
        wrap = _capi.new_struct(_capi.WrapOptions)
        shape = _capi.int64_array(_tuple(dev.shape, dev.ndim))
        strides = _capi.int64_array(_tuple(dev.strides, dev.ndim))
        wrap.ndim = dev.ndim
        wrap.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        wrap.device_strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        wrap.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        wrap.dtype = dev.typestr
        wrap.device_data = dev.data
        wrap.device_id = -1  # where the runtime says it lives (a host kind's DLPack id is 0)
        target = Storage._from_handle(_new_handle(lib.gtstorage_wrap, ctypes.byref(wrap),
                                                  context="__setitem__"))
        src: Storage | None
        if isinstance(value, Storage):
            src = value
        elif hasattr(value, "__cuda_array_interface__"):
            src = _wrap_cuda_array(value)
        else:
            src = None
        if src is not None and src.shape == target.shape:
            check(lib.gtstorage_copy(target._handle, src._handle), "__setitem__")
        else:
            host = np.asarray(value._host_array_for_read() if isinstance(value, Storage) else value)
            target._copy_from_ndarray(host)
        check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__setitem__")

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

    def _host_array_for_read(self) -> np.ndarray:
        """A host ndarray with this view's values: zero-copy with a host buffer, else a copy."""
        if self._has_host:
            return self.to_numpy()
        out = np.empty(self.shape, dtype=self.dtype)
        self._copy_to_ndarray(out)
        return out

    # ---- array interfaces ----------------------------------------------------------------------

    def _raw_interface(self, side: int) -> dict[str, Any]:
        """Array-interface dict of one side, without touching the sync state."""
        return dict(self._geom(side).interface)

    def _raw_array_interface_object(self, side: int) -> _InterfaceHolder:
        return _InterfaceHolder(self, self._raw_interface(side))

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

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy array interface of the host buffer. For a mirrored storage the host is made
        current and marked modified first, since the consumer may write through it."""
        if not self._has_host:
            raise GTNoSuchBufferError("__array_interface__: the storage has no host buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        if self._has_device:
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__array_interface__")
            check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__array_interface__")
        return dict(self._geom(_capi.SIDE_HOST).interface)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 of the device buffer (device made current, marked modified).

        Only memory a CUDA (or HIP) consumer can use is exported: the emulated device's memory is
        host memory, and the interface has no field to say so, so it is not offered at all
        (``hasattr`` is False; DLPack reports it as kDLExtDev)."""
        if not self._has_device:
            raise GTNoSuchBufferError("__cuda_array_interface__: the storage has no device buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        kind = self._geom(_capi.SIDE_DEVICE).device_type
        if kind not in _CAI_DEVICE_TYPES:
            raise AttributeError(
                "__cuda_array_interface__: the device buffer is not CUDA memory (DLPack device "
                f"type {kind}: the emulated device, whose memory is host memory); CuPy and other "
                "CUDA consumers cannot use it")
        check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__cuda_array_interface__")
        check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__cuda_array_interface__")
        return self._cuda_interface_dict()

    def _cuda_interface_dict(self) -> dict[str, Any]:
        """The device buffer described like a CUDA Array Interface dict (whatever the device)."""
        d = self._raw_interface(_capi.SIDE_DEVICE)
        i = _info(self._handle, _capi.SIDE_DEVICE)
        stream = int(i.stream)
        if stream:
            d["stream"] = stream
        elif int(i.device_type) == _capi.DL_ROCM:
            # HIP has no handle 1 for its legacy stream; the buffer was made current
            # synchronously, so there is nothing to wait for.
            d["stream"] = None
        else:
            # CAI v3: 0 is not allowed, 1 names the legacy default stream the library's 0 means.
            d["stream"] = 1
        return d

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The values as a NumPy array (the NumPy ``__array__`` protocol).

        The zero-copy host view unless a copy or a conversion is needed (a device-only storage is
        copied to the host).

        Parameters
        ----------
        dtype : dtype-like, optional
            Element type of the result (a conversion copies).
        copy : bool, optional
            True: always a copy; False: never (ValueError where one is needed); None: a copy only
            where needed.

        Returns
        -------
        numpy.ndarray
            The host view (which keeps the storage alive) or a copy.
        """
        if self._has_host:
            if copy is False and dtype is not None and np.dtype(dtype) != self.dtype:
                raise ValueError("__array__: a dtype conversion needs a copy, but copy=False")
            arr = self.to_numpy()
        else:
            if copy is False:
                raise ValueError("__array__: the storage has only a device buffer; reading it "
                                 "from NumPy needs a copy, but copy=False")
            arr = self._host_array_for_read()
            copy = False  # already a fresh array
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device id) of the buffer __dlpack__ exports by default."""
        g = self._geom(_capi.SIDE_DEVICE if self._has_device else _capi.SIDE_HOST)
        return g.device_type, g.device_id

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> object:
        """DLPack export (the Python array API's ``__dlpack__``).

        Parameters
        ----------
        stream : int, optional
            The consumer's stream (device buffers; None or -1 for a host buffer). The buffer is
            made current synchronously, so the consumer may use it at once on any stream.
        max_version : tuple of int, optional
            The highest DLPack version the consumer takes: ``(1, x)`` or higher gives a versioned
            capsule (which carries the read-only flag), None a legacy one.
        dl_device : tuple of int, optional
            ``(device type, device id)`` the consumer wants; the host of a storage with a device
            buffer is exported (a copy for a device-only storage unless ``copy=False``).
        copy : bool, optional
            True: export a fresh copy; False: never copy (BufferError where one is needed).

        Returns
        -------
        PyCapsule
            A ``dltensor`` (or ``dltensor_versioned``) capsule; the export keeps the storage's
            buffers alive until the consumer's deleter runs.

        Raises
        ------
        BufferError
            An export the storage cannot make (a read-only storage to a legacy capsule, another
            device without a copy, stream 0 for CUDA).
        TypeError, OverflowError
            Arguments of the wrong type or range.
        """
        if max_version is not None:
            if (not isinstance(max_version, tuple) or len(max_version) != 2
                    or not all(_args.is_int(v) for v in max_version)):
                raise TypeError(f"__dlpack__: max_version must be a (major, minor) tuple of ints, "
                                f"got {max_version!r}")
        if stream is not None:
            stream = _args.int_scalar("__dlpack__: stream", stream, -1, _args.UINT64_MAX)
        side = _capi.SIDE_DEVICE if self._has_device else _capi.SIDE_HOST
        if dl_device is not None:
            try:
                wanted = (int(dl_device[0]), int(dl_device[1]))
            except (TypeError, ValueError, IndexError):
                raise TypeError("__dlpack__: dl_device must be a (type, id) pair, "
                                f"got {dl_device!r}") from None
            if wanted == self.__dlpack_device__():
                pass
            elif wanted[0] == _capi.DL_CPU and self._has_host:
                side = _capi.SIDE_HOST
            elif wanted[0] == _capi.DL_CPU and copy is not False:
                return self._host_copy()._export(_capi.SIDE_HOST, stream, max_version)
            else:
                raise BufferError(f"__dlpack__: cannot export to device {wanted} without a copy "
                                  f"(the storage is on {self.__dlpack_device__()})")
        if copy:
            return self.copy()._export(side, stream, max_version)
        return self._export(side, stream, max_version)

    def _host_copy(self) -> Storage:
        out = allocators.empty_like(self, device=None)
        check(lib.gtstorage_copy(out._handle, self._handle), "__dlpack__")
        return out

    def _export(self, side: int, stream: int | None, max_version: Any) -> object:
        versioned = max_version is not None and max_version[0] >= 1
        readonly = self._geom(side).readonly
        if readonly and not versioned:
            # A legacy capsule has no read-only flag: a consumer would be free to write.
            raise BufferError("__dlpack__: a read-only storage can only be exported as a versioned "
                              "DLPack capsule (max_version >= (1, 0)), which carries the flag")
        if side == _capi.SIDE_HOST:
            if stream is not None and stream != -1:
                raise BufferError("__dlpack__: stream must be None for a host buffer, "
                                  f"got {stream!r}")
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__dlpack__")
            if not readonly:  # the consumer may write
                check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__dlpack__")
        else:
            # DLPack: for CUDA 0 is disallowed (ambiguous), 1 is the legacy and 2 the per-thread
            # default stream; for ROCm 0 is the default stream (what PyTorch on ROCm passes).
            if stream == 0 and self.__dlpack_device__()[0] != _capi.DL_ROCM:
                raise BufferError("__dlpack__: stream 0 is ambiguous and not allowed for CUDA "
                                  "(1 is the legacy default stream, 2 the per-thread one)")
            # acquire is synchronous: no work on the data is pending on any stream afterwards, so
            # every consumer stream (or stream=-1, "no synchronization") may use it at once.
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__dlpack__")
            if not readonly:
                check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__dlpack__")
        return _dlpack.to_capsule(self._handle, side, versioned)

    # ---- GT4Py / GDP-3 interfaces ----------------------------------------------------------

    @property
    def __gt_dims__(self) -> tuple[str, ...]:
        """Dimension labels for GT4Py (the storage-interface note's ``__gt_dims__``)."""
        return self._geom().dims

    @property
    def __gt_origin__(self) -> tuple[int, ...]:
        """Index of the first interior point (the lower halo widths): GT4Py's default origin."""
        return self._geom().origin

    @property
    def default_origin(self) -> tuple[int, ...]:
        """The allocation note's spelling of ``__gt_origin__``."""
        return self._geom().origin

    @property
    def __gt_interface__(self) -> dict[str | None, dict[str, Any]]:
        """The storage-interface note's ``__gt_interface__``: per device (None = host, "gpu") the
        array interface with ``"dims"`` and the ``"acquire"``, ``"release"`` and ``"touch"``
        callables a stencil calls around a computation (acquire before: that side is made
        current; touch after, for outputs: that side is marked modified; release after: waits
        for work queued on the storage's stream, so the buffers are settled)."""
        out = self.__gt_data_interface__
        for d in out.values():
            d["release"] = self._release_after_compute
        return out

    def _release_after_compute(self) -> None:
        if self._has_device:
            check(lib.gtstorage_wait_stream(self._handle, 0), "release")

    @property
    def __gt_data_interface__(self) -> dict[str | None, dict[str, Any]]:
        """GDP-3 data interface: per device (None = host, "gpu") the array interface plus
        "acquire"/"touch" callables, "dims" and "halo"."""
        out: dict[str | None, dict[str, Any]] = {}
        extra = {"dims": self.dims, "halo": self.halo}
        if self._has_host:
            d = self._raw_interface(_capi.SIDE_HOST)
            d.update(extra, acquire=self.device_to_host, touch=self.set_host_modified)
            out[None] = d
        if self._has_device:
            d = self._cuda_interface_dict()
            # What the memory is (a consumer must not take the emulated device for CUDA).
            d.update(extra, acquire=self.host_to_device, touch=self.set_device_modified,
                     device=self.__dlpack_device__())
            out["gpu"] = d
        return out

    # ---- NumPy duck array: operators, ufuncs, array functions, ndarray methods -----------------
    #
    # Results follow NumPy's copy semantics: anything NumPy returns as a new array is a new
    # numpy.ndarray; in-place operators and ``out=`` write into the storage. Every read makes the
    # host current (a device-to-host copy of a mirrored storage whose device side is newer) and
    # every write marks the host modified, so the sync state stays right.

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

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on storages (NEP 13).

        Inputs are read from the host (made current first), ``out=`` storages are written through
        and marked modified; results are what NumPy returns (new NumPy arrays, or the given
        ``out``).

        Parameters
        ----------
        ufunc : numpy.ufunc
            The ufunc called.
        method : str
            ``"__call__"``, ``"reduce"``, ``"accumulate"``, ``"outer"``, ``"at"`` …
        *inputs : array-like
            Its inputs (storages among them).
        **kwargs
            Its keywords (``out=``, ``where=``, ``dtype=`` …).

        Returns
        -------
        numpy.ndarray or scalar or Storage or tuple
            As NumPy returns; a storage given as ``out`` is returned itself.
        """
        out = kwargs.get("out")
        outs = out if isinstance(out, tuple) else (() if out is None else (out,))
        if outs and any(isinstance(o, Storage) for o in outs):
            kwargs["out"] = tuple(o._write_array(ufunc.__name__) if isinstance(o, Storage) else o
                                  for o in outs)
        args = [x._read_array() if isinstance(x, Storage) else x for x in inputs]
        result = getattr(ufunc, method)(*args, **kwargs)
        if outs:
            # NumPy returns its out arrays: hand back the storages the caller gave instead.
            if isinstance(result, tuple):
                return tuple(o if isinstance(o, Storage) else r for o, r in zip(outs, result))
            return outs[0] if isinstance(outs[0], Storage) else result
        return result

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: dict[str, Any]) -> Any:
        """NumPy functions (``np.where``, ``np.concatenate``, …) on storages (NEP 18).

        Parameters
        ----------
        func : callable
            The NumPy function called.
        types : collection of type
            The types that implement ``__array_function__`` among the arguments.
        args : tuple
            Its positional arguments; storages are replaced by their values.
        kwargs : dict
            Its keywords; a storage given as ``out`` is written through.

        Returns
        -------
        object
            As NumPy returns; a storage given as ``out`` is returned itself.
        """
        def unwrap(x: Any) -> Any:
            if isinstance(x, Storage):
                return x._read_array()
            if isinstance(x, (list, tuple)):
                return type(x)(unwrap(v) for v in x)
            return x

        out = kwargs.get("out")
        kw = {k: (v._write_array(func.__name__) if k == "out" and isinstance(v, Storage)
                  else unwrap(v))
              for k, v in kwargs.items()}
        result = func(*unwrap(args), **kw)
        return out if isinstance(out, Storage) else result

    def fill(self, value: Any) -> None:
        """Sets every element to ``value``, on the side that is current, without a transfer.

        Parameters
        ----------
        value : scalar
            Converted to the dtype like NumPy converts (an array-like is broadcast).
        """
        _args.array_source("fill: value", value)
        self._assign(value)

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> None:
        """Sorts in place along ``axis`` (``numpy.ndarray.sort``).

        The host buffer is made current, sorted and marked modified.

        Parameters
        ----------
        axis : int, optional
            Dimension to sort along (default: the last).
        kind : str, optional
            NumPy's sorting algorithm (``"quicksort"``, ``"stable"`` …).
        order : str or list of str, optional
            Fields to compare first (structured dtypes).
        """
        self._write_array("sort").sort(axis=axis, kind=kind, order=order)

    @property
    def flags(self) -> Any:
        """``numpy.ndarray.flags`` of the host view (C/F contiguity, alignment, writeable)."""
        return self._read_array().flags

    @property
    def real(self) -> np.ndarray:
        """Real part (a NumPy view of the host buffer for complex dtypes, like ndarray.real)."""
        return self._write_array("real").real if not self.readonly else self._read_array().real

    @property
    def imag(self) -> np.ndarray:
        """Imaginary part (like ndarray.imag)."""
        return self._write_array("imag").imag if not self.readonly else self._read_array().imag

    @property
    def base(self) -> Any:
        """What the memory belongs to, like ``ndarray.base``: None for a storage that owns its
        buffers (an allocation), the storage a view was made from (the owner, as NumPy collapses
        chains of views), or the wrapped object of :func:`as_storage` (e.g. the NumPy array)."""
        return self._base

    @property
    def flat(self) -> np.flatiter:
        """``numpy.ndarray.flat`` of the values: a flat iterator over the host view, which
        writes through it reach the storage (the host is made current and marked modified). A
        read-only or device-only storage gives an iterator over read-only values (a host copy
        for a device-only storage)."""
        return self._values("flat").flat

    @property
    def ctypes(self) -> Any:
        """``numpy.ndarray.ctypes`` of the host buffer (its address as a ctypes pointer, shape,
        strides). The host is made current and, unless the storage is read-only, marked
        modified, since the pointer may be written through (as ``__array_interface__``)."""
        if not self._has_host:
            raise GTNoSuchBufferError("ctypes: the storage has no host buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        return self._host_view(write=not self.readonly).ctypes

    def _values(self, context: str) -> np.ndarray:
        """The host view for reading and writing (host current, marked modified) of a writable
        storage with a host buffer; otherwise read-only values (a device-only storage's are a
        host copy, which writes could not reach)."""
        if self._has_host and not self.readonly:
            return self._write_array(context)
        arr = self._read_array()
        if arr.flags.writeable:
            arr = arr.view()
            arr.flags.writeable = False
        return arr

    def put(self, indices: Any, values: Any,
            mode: Literal["raise", "wrap", "clip"] = "raise") -> None:
        """Writes ``values`` at the flat ``indices`` (``numpy.ndarray.put``).

        The host buffer is made current, written and marked modified.

        Parameters
        ----------
        indices : array-like of int
            Flat (C-order) indices of the elements written.
        values : array-like
            Values written (repeated when shorter than ``indices``).
        mode : {"raise", "wrap", "clip"}, optional
            What an out-of-range index does, as in NumPy.
        """
        self._write_array("put").put(indices, values, mode=mode)

    def partition(self, kth: Any, axis: int = -1, kind: Literal["introselect"] = "introselect",
                  order: Any = None) -> None:
        """Partitions in place along ``axis`` (``numpy.ndarray.partition``).

        The host buffer is made current, partitioned and marked modified.

        Parameters
        ----------
        kth : int or sequence of int
            Element(s) that end up in their sorted position.
        axis : int, optional
            Dimension to partition along (default: the last).
        kind : str, optional
            NumPy's selection algorithm.
        order : str or list of str, optional
            Fields to compare first (structured dtypes).
        """
        self._write_array("partition").partition(kth, axis=axis, kind=kind, order=order)

    def byteswap(self, inplace: bool = False) -> Storage | np.ndarray:
        """The values with their bytes swapped (``numpy.ndarray.byteswap``).

        Parameters
        ----------
        inplace : bool, optional
            Swap the storage's own bytes (the host is made current and marked modified) instead of
            returning a new array.

        Returns
        -------
        numpy.ndarray or Storage
            A new NumPy array, or with ``inplace=True`` the storage itself.
        """
        if inplace:
            self._write_array("byteswap").byteswap(True)
            return self
        swapped: np.ndarray = self._read_array().byteswap(False)
        return swapped

    def setfield(self, val: Any, dtype: Any, offset: int = 0) -> None:
        """Writes ``val`` into a field of every element (``numpy.ndarray.setfield``).

        The host buffer is made current, written and marked modified.

        Parameters
        ----------
        val : scalar or array-like
            Value written into the field.
        dtype : dtype-like
            Type of the field.
        offset : int, optional
            Byte offset of the field in the element.
        """
        self._write_array("setfield").setfield(val, dtype, offset)

    def dumps(self) -> bytes:
        """The pickle of the storage (``numpy.ndarray.dumps``).

        Returns
        -------
        bytes
            ``pickle.loads`` gives back a storage with the same values, dtype, preset, layout, halo
            and dims.
        """
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    def dump(self, file: Any) -> None:
        """Pickles the storage into ``file`` (``numpy.ndarray.dump``).

        Parameters
        ----------
        file : str or os.PathLike or file object
            A path (the file is written) or a binary file object; ``pickle.load`` reads it back.
        """
        if isinstance(file, (str, bytes, os.PathLike)):
            with open(file, "wb") as f:
                pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)
        else:
            pickle.dump(self, file, protocol=pickle.HIGHEST_PROTOCOL)

    def __bool__(self) -> bool:
        return bool(self._read_array())

    def __float__(self) -> float:
        return float(self._read_array())

    def __int__(self) -> int:
        return int(self._read_array())

    def __complex__(self) -> complex:
        return complex(self._read_array())

    def __index__(self) -> int:
        return operator.index(self._read_array())

    def __contains__(self, value: object) -> bool:
        return value in self._read_array()

    def __iter__(self) -> Iterator[Any]:
        """Iterates over the first dimension (views, or scalars for 1-d), like NumPy."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d storage")
        for i in range(self.shape[0]):
            yield self[i]

    if hasattr(np.ndarray, "__buffer__"):  # Python >= 3.12: PEP 688 buffer protocol in Python

        def __buffer__(self, flags: int) -> memoryview:
            """Python buffer protocol (PEP 688) over the host buffer.

            NumPy asks for this before ``__array_interface__`` on Python 3.12, so it is fast: a
            host-only storage hands out one cached memoryview of its host view."""
            # (The ndarray -> memoryview calls are type-checked as Python 3.10, whose NumPy stubs
            # give ndarray no __buffer__; this method exists on 3.12 and later only.)
            if self._has_device or not self._has_host:
                if flags & 1:  # inspect.BufferFlags.WRITABLE
                    return memoryview(self._write_array("__buffer__"))  # type: ignore[arg-type]
                return memoryview(self._read_array())  # type: ignore[arg-type]
            mv = self._host_mv
            if mv is None:
                mv = self._host_mv = memoryview(
                    self._host_view(write=False))  # type: ignore[arg-type]
            if flags & 1 and mv.readonly:
                raise BufferError("__buffer__: the storage is read-only")
            return mv

        def __release_buffer__(self, view: memoryview) -> None:
            if view is not self._host_mv:
                view.release()

    # ---- pickle: by value (data, dtype, preset, layout, halo, dims, device) ---------------------

    def __reduce__(self) -> tuple[Callable[[dict[str, Any]], Storage], tuple[dict[str, Any]]]:
        state = {
            "data": np.array(self._read_array(), order="K"),
            "backend": self._params.get("backend"),
            "layout": self.layout,
            "halo": self.halo,
            "dims": self.dims,
            "aligned_index": self.aligned_index,
            "alignment_size": self._params.get("alignment_size"),
            "device": self.device,
            "managed": self.managed,
            "readonly": self.readonly,
        }
        return (_unpickle_storage, (state,))

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

    def copy(self) -> Storage:
        """New storage with the same parameters (layout, dims, halo, device) and a copy of the
        data."""
        out = allocators.empty_like(self)
        check(lib.gtstorage_copy(out._handle, self._handle), "copy")
        return out

    def __copy__(self) -> Storage:
        """Same as :meth:`copy` (a storage owns no Python state worth sharing)."""
        return self.copy()

    def __deepcopy__(self, memo: Any = None) -> Storage:
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

    # ---- host/device synchronization (no-ops without a host/device pair) ----------------------
    # GDP-3's names, implemented with the C library's DualView-style vocabulary
    # (gtstorage_sync_to, gtstorage_modify, gtstorage_need_sync, gtstorage_mark_synchronized).

    def device_to_host(self, *, force: bool = False) -> None:
        """Copies device -> host if the device is modified; both are then in sync.

        Parameters
        ----------
        force : bool, optional
            Copy even if the device is not marked modified.
        """
        self.sync_to("host", force=force)

    def host_to_device(self, *, force: bool = False) -> None:
        """Copies host -> device if the host is modified; both are then in sync.

        Parameters
        ----------
        force : bool, optional
            Copy even if the host is not marked modified.
        """
        self.sync_to("device", force=force)

    def set_host_modified(self) -> None:
        """Marks the host side modified (the next device access copies host -> device)."""
        self.modify("host")

    def set_device_modified(self) -> None:
        """Marks the device side modified (the next host access copies device -> host)."""
        self.modify("device")

    def set_synchronized(self) -> None:
        """Declares both sides equal, without copying."""
        check(lib.gtstorage_mark_synchronized(self._handle), "set_synchronized")

    def synchronize(self) -> None:
        """Copies whichever side is modified to the other."""
        for side in ("host", "device"):
            if self.need_sync(side):
                self.sync_to(side)
                return

    @staticmethod
    def _side(side: Any, what: str) -> int:
        if side in ("host", _capi.SIDE_HOST) and not isinstance(side, bool):
            return _capi.SIDE_HOST
        if side in ("device", _capi.SIDE_DEVICE) and not isinstance(side, bool):
            return _capi.SIDE_DEVICE
        raise ValueError(f"{what}: side must be 'host' or 'device', got {side!r}")

    def sync_to(self, side: Any, *, force: bool = False, stream: int | None = None) -> None:
        """Makes ``side`` current: copies the other side into it if that one is modified.

        Parameters
        ----------
        side : {"host", "device"}
            The side made current.
        force : bool, optional
            Copy even if the other side is not marked modified.
        stream : int, optional
            Only enqueue the copy on this stream (0: the storage's own); later accesses through the
            library wait for it. None (default) copies synchronously.
        """
        s = self._side(side, "sync_to")
        flags = _capi.SYNC_FLAG_FORCE if force else 0
        if stream is None:
            check(lib.gtstorage_sync_to(self._handle, s, flags), "sync_to")
        else:
            stream = _args.int_scalar("sync_to: stream", stream, 0, _args.UINT64_MAX)
            check(lib.gtstorage_sync_to_async(self._handle, s, flags, stream), "sync_to")

    def modify(self, side: Any, *, force: bool = False) -> None:
        """Marks ``side`` modified (the next access of the other side copies it over).

        Parameters
        ----------
        side : {"host", "device"}
            The side marked modified.
        force : bool, optional
            Discard the other side's changes if it is modified too, instead of raising.

        Raises
        ------
        GTSyncConflictError
            The other side is already modified (and ``force`` is False).
        """
        s = self._side(side, "modify")
        check(lib.gtstorage_modify(self._handle, s, _capi.SYNC_FLAG_FORCE if force else 0),
              "modify")

    def need_sync(self, side: Any) -> bool:
        """Whether ``sync_to(side)`` would copy.

        Parameters
        ----------
        side : {"host", "device"}
            The side asked about.

        Returns
        -------
        bool
            True if the other side is modified.
        """
        s = self._side(side, "need_sync")
        out = ctypes.c_int32()
        check(lib.gtstorage_need_sync(self._handle, s, ctypes.byref(out)), "need_sync")
        return bool(out.value)

    def wait_stream(self, stream: int = 0) -> None:
        """Blocks until the work queued on ``stream`` has completed.

        Parameters
        ----------
        stream : int, optional
            A stream handle; 0 (default) is the storage's own stream.
        """
        stream = _args.int_scalar("wait_stream: stream", stream, 0, _args.UINT64_MAX)
        check(lib.gtstorage_wait_stream(self._handle, stream), "wait_stream")

    def set_stream(self, stream: int) -> None:
        """Sets the stream that ``__cuda_array_interface__`` reports and asynchronous syncs use.

        Parameters
        ----------
        stream : int
            A stream handle of the device runtime (0: the default stream).
        """
        stream = _args.int_scalar("set_stream: stream", stream, 0, _args.UINT64_MAX)
        check(lib.gtstorage_set_stream(self._handle, stream), "set_stream")

    def transfer_stats(self) -> dict[str, int]:
        """Host<->device transfer counters of the buffers behind this storage (shared by views)."""
        out = _capi.new_struct(_capi.TransferStats)
        check(lib.gtstorage_get_transfer_stats(self._handle, ctypes.byref(out)), "transfer_stats")
        return {k: int(getattr(out, k))
                for k in ("h2d_count", "h2d_bytes", "d2h_count", "d2h_bytes")}

    def refcount(self) -> int:
        """Reference count of this handle in the library (DLPack exports add to it)."""
        out = ctypes.c_int64()
        check(lib.gtstorage_refcount(self._handle, ctypes.byref(out)), "refcount")
        return int(out.value)


# ndarray methods that read the values (result: a new array or a scalar, as NumPy returns) and
# methods whose result may be a view of the host buffer (the host is then marked modified).
_READ_METHODS = ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose",
                 "clip", "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot",
                 "flatten", "item", "max", "mean", "min", "nonzero", "prod", "ptp", "repeat",
                 "round", "searchsorted", "std", "sum", "take", "tobytes", "tofile", "tolist",
                 "trace", "var")
_VIEW_METHODS = ("getfield", "ravel", "reshape", "squeeze", "swapaxes", "view")


# ndarray methods that write the values in place (through the host buffer, marked modified).
_INPLACE_METHODS = ("itemset",)


def _delegate(name: str, write: bool,
              inplace: bool = False) -> Callable[..., Any] | None:
    ndarray_method = getattr(np.ndarray, name, None)
    if ndarray_method is None:  # e.g. ptp, gone in NumPy 2
        return None

    if inplace:
        def method(self: Storage, *args: Any, **kwargs: Any) -> Any:
            return getattr(self._write_array(name), name)(*args, **kwargs)
    else:
        def method(self: Storage, *args: Any, **kwargs: Any) -> Any:
            arr = self._write_array(name) if write and not self.readonly else self._read_array()
            return getattr(arr, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _DELEGATE_DOC.format(name=name, what=(
        _DELEGATE_INPLACE if inplace else _DELEGATE_VIEW if write else _DELEGATE_READ))
    return method


_DELEGATE_DOC = """NumPy's ``ndarray.{name}`` on the storage's values.

    {what}

    Parameters
    ----------
    *args, **kwargs
        The arguments of ``numpy.ndarray.{name}``, with NumPy's meaning.

    Returns
    -------
    object
        What ``numpy.ndarray.{name}`` returns.
    """
_DELEGATE_READ = """A read: the host is made current first (a device-only storage's values are
    copied to the host); the result is a new NumPy array or a scalar, as NumPy returns it."""
_DELEGATE_VIEW = """The result may be a NumPy view of the host buffer, so the host is made current
    and marked modified first (a read-only storage gives a view of read-only values, a
    device-only one a view of a host copy)."""
_DELEGATE_INPLACE = """Writes in place through the host buffer, which is made current first and then
    marked modified."""


for _name in _READ_METHODS + _VIEW_METHODS + _INPLACE_METHODS:
    _m = _delegate(_name, _name not in _READ_METHODS, _name in _INPLACE_METHODS)
    if _m is not None:
        setattr(Storage, _name, _m)
del _name, _m


def _unpickle_storage(state: dict[str, Any]) -> Storage:
    kw = {"layout": state["layout"], "halo": state["halo"], "dims": state["dims"],
          "readonly": state["readonly"]}
    if state["backend"] is not None:
        kw["backend"] = state["backend"]
    if state["alignment_size"] is not None:
        kw["alignment_size"] = state["alignment_size"]
    ai = state["aligned_index"]
    if all(a is not None for a in ai):
        kw["aligned_index"] = ai
    if state["device"] == "gpu":
        kw["device"] = "gpu"
        kw["managed"] = state["managed"] or None
    return allocators.from_array(state["data"], state["data"].dtype, **kw)


class CPUStorage(Storage):
    """Storage with a host buffer only."""


class GPUStorage(Storage):
    """Storage with a device buffer only (GDP-3 managed=False)."""


class SoftwareManagedGPUStorage(Storage):
    """Host + device buffers kept in sync by gtstorage (GDP-3 managed="gt4py")."""

    @property
    def managed(self) -> str:
        """GDP-3 ``managed``: ``"gtstorage"`` (GDP-3's ``"gt4py"``), the library keeps the host
        and device buffers in sync."""
        return "gtstorage"


class CUDAManagedGPUStorage(Storage):
    """One unified-memory buffer visible from host and device (GDP-3 managed="cuda")."""

    @property
    def managed(self) -> str:
        """GDP-3 ``managed``: ``"cuda"``, one unified-memory buffer seen from host and
        device."""
        return "cuda"


for _cls in (Storage, CPUStorage, GPUStorage, SoftwareManagedGPUStorage, CUDAManagedGPUStorage):
    if _cls.__doc__:  # (None under python -OO)
        _cls.__doc__ = _cls.__doc__.rstrip() + "\n" + _CONSTRUCTOR_DOC
del _cls


class _InterfaceHolder:
    """Exposes a fixed array interface and keeps its storage alive (used as ndarray.base)."""

    __slots__ = ("storage", "__array_interface__")

    def __init__(self, storage: Storage, interface: dict[str, Any]):
        self.storage = storage
        self.__array_interface__ = interface


def wrap_buffers(*, sync_state_obj: SyncState | None = None, **options: Any) -> Storage:
    """A Storage over caller memory (gtstorage_wrap; @p options as :func:`_handle.wrap_handle`
    takes them), bound to the unbound SyncState object @p sync_state_obj if one is given."""
    return Storage._from_handle(wrap_handle(**options), sync_state=sync_state_obj)


def _wait_for_producer(storage: Storage, stream: int | None) -> Storage:
    """CAI v3 asks a consumer to synchronize with the producer's stream where the buffer is
    handed over: wait once, here, for the work queued there (the storage keeps its own stream,
    so a producer's stream that is destroyed later is never used)."""
    if stream is not None:
        check(lib.gtstorage_wait_stream(storage._handle, stream), "__cuda_array_interface__ stream")
    return storage


def _wrap_cuda_array(value: Any) -> Storage:
    """A device-only storage over an object exposing __cuda_array_interface__ (no copy)."""
    cai = value.__cuda_array_interface__
    stream = _cai_stream(cai)
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    out = _wait_for_producer(
        wrap_buffers(
            device_data=int(cai["data"][0]) or None,
            shape=shape,
            device_strides=None if strides is None else tuple(int(s) for s in strides),
            typestr=cai["typestr"],
            readonly=bool(cai["data"][1]),
            keepalive=value,
        ),
        stream,
    )
    out._base = value
    return out
