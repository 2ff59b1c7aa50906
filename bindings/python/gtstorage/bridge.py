"""Python functions that C and Fortran models call on their own fields (libgtstorage_python).

A model wraps its arrays as storages (host or device memory, any strides, halos), resolves a
function once with ``gtstorage_python_resolve("package.module:function")`` and calls it every step
with ``gtstorage_python_call``: the storages in order, then named scalars. On the Python side the
function declares what each storage must be and in which form it wants it::

    from gtstorage import bridge

    @bridge.export(
        bridge.Arg("u", dtype="float64", ndim=3, readonly=True),
        bridge.Arg("out", dtype="float64", ndim=3),
        form="storage",
    )
    def diffuse(u, out, *, alpha: float):
        ...

Forms (per function, or per argument with ``Arg(form=...)``):

``"numpy"`` (the default)
    a ``numpy.ndarray`` over the host buffer (a ``cupy.ndarray`` over the device buffer for an
    argument declared ``side="device"``), the whole array, halo included. A ``readonly`` argument
    is a read-only view.
``"storage"``
    a :class:`gtstorage.Storage` (GDP-3): ``halo``, ``dims``, ``domain_view()``, every buffer
    protocol.
``"gt4py.next"``
    a gt4py.next field over the same memory (``NumPyArrayField``, ``CuPyArrayField`` on the
    device), no copy: made through GT4Py's public API, ``gtx.empty(domain,
    allocator=gtstorage.next.wrap(array))``. Its dimensions are the argument's ``dims``
    (``gtx.Dimension`` objects, or labels made into dimensions of those names) and its domain puts
    index 0 at the first point after the lower halo: a Fortran array ``u(1-nh:nx+nh, ...)`` is
    the field over ``I: (-nh, nx+nh)``, so that ``domain={I: (0, nx)}`` is the model's interior.

Every storage is checked against its declaration when it first arrives at its position; a
mismatch raises :class:`ArgumentError` naming the function and the argument, which the C caller
gets as ``GTSTORAGE_ERROR_INVALID_ARGUMENT``. The views are cached with the function, keyed
by position and handle: calling again with the same handle at the same position (also in a
time loop that swaps two fields) reuses them (a mirrored
storage is made current on the declared side first). Handles are generation-checked and never
reused, so a handle that was released, even if its memory address comes back in a new storage,
can never be given an old view.

The objects handed to the function hold no reference of their own: they are valid during the
call. Code that keeps one longer must take a reference (``gtstorage.Storage.from_handle``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, TypeVar, Union

import numpy as np

from . import _capi, next as gtstorage_next
from ._handle import _EMPTY_ADDRESS, _Geometry, _has_side
from ._storage import Storage

if TYPE_CHECKING:
    # What _describe returns for a storage's side: (data, shape, strides, typestr, readonly,
    # halo, dims, has host, has device, DLPack device type).
    _Description = tuple[Any, ...]
    _Refresh = Callable[[], object]
    # A converted argument: (value, refresh before each call or None, on the device).
    _Entry = tuple[Any, _Refresh | None, bool]
    # A call's arguments, their refreshes and the first device storage's handle (or None).
    _Hit = tuple[tuple[Any, ...], tuple[_Refresh, ...], int | None]

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["Arg", "ArgumentError", "export", "adapter_for", "current_stream"]

FORMS = ("numpy", "storage", "gt4py.next")
SIDES = ("host", "device")


_state = threading.local()


def current_stream() -> int | None:
    """The stream of the call in progress on this thread.

    It is the CUDA (or HIP) stream of the call's first device storage (``gtstorage_set_stream``;
    a model passes its OpenACC queue's stream, ``acc_get_cuda_stream``). Device work the function
    queues on it runs after the model's kernels, with no synchronization; with CuPy installed
    the call already runs inside ``cupy.cuda.ExternalStream(current_stream())``.

    Returns
    -------
    int or None
        The stream handle (0: the default stream), or None outside a call or in a call without
        device storages.
    """
    return getattr(_state, "stream", None)


class ArgumentError(TypeError):
    """A storage passed by a C or Fortran caller does not match the function's declaration (or
    the number of storages is wrong). libgtstorage_python returns it as
    ``GTSTORAGE_ERROR_INVALID_ARGUMENT``."""

    _gtstorage_status = _capi.ERROR_INVALID_ARGUMENT


HaloSpec = Union[int, Sequence[Union[int, tuple[int, int]]]]


class Arg:
    """What one storage argument must be, and the form the function receives it in.

    Parameters
    ----------
    name : str
        The argument's name (in messages).
    dtype : numpy dtype-like, optional
        Required element type (``"float64"``, ``np.int32``, ``bool`` for a Fortran
        ``logical(c_bool)``). None: any.
    ndim : int, optional
        Required number of dimensions. None: any (or ``len(dims)`` when dims is given).
    dims : str or sequence of str or gt4py.next Dimension, optional
        Required dimension labels (``"IJK"``, ``("I", "J", "K")``, or gt4py.next dimensions,
        whose names are the labels); needed for ``form="gt4py.next"``.
    halo : int or sequence, optional
        Required halo: one width for all dimensions, one per dimension, or (lower, upper) pairs.
    side : {"host", "device"}
        Which buffer the function works on; the storage must have it.
    readonly : bool
        The function only reads the storage (a mirrored storage is then not marked modified, and
        a NumPy view is read-only).
    form : {"numpy", "storage"}, optional
        Overrides the function's form for this argument.
    """

    __slots__ = ("name", "dtype", "ndim", "dims", "labels", "halo", "side", "readonly", "form")

    def __init__(self, name: str, *, dtype: Any = None, ndim: int | None = None,
                 dims: str | Sequence[str] | None = None, halo: HaloSpec | None = None,
                 side: str = "host", readonly: bool = False, form: str | None = None):
        if not isinstance(name, str) or not name:
            raise TypeError("Arg: name must be a non-empty str")
        self.name = name
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.dims = None if dims is None else tuple(dims)
        # The labels a storage must have: strings as given, gt4py.next dimensions by name.
        self.labels = None if self.dims is None else tuple(
            d if isinstance(d, str) else str(getattr(d, "value", d)) for d in self.dims)
        if ndim is None and self.dims is not None:
            ndim = len(self.dims)
        if ndim is not None and (not isinstance(ndim, int) or ndim < 0):
            raise TypeError(f"Arg {name!r}: ndim must be a non-negative int")
        if self.dims is not None and ndim != len(self.dims):
            raise TypeError(f"Arg {name!r}: ndim {ndim} but {len(self.dims)} dims")
        self.ndim = ndim
        self.halo = halo
        if side not in SIDES:
            raise ValueError(f"Arg {name!r}: side must be one of {SIDES}, not {side!r}")
        self.side = side
        self.readonly = bool(readonly)
        if form is not None and form not in FORMS:
            raise ValueError(f"Arg {name!r}: form must be one of {FORMS}, not {form!r}")
        self.form = form

    def _check_form(self, form: str) -> None:
        if form == "gt4py.next" and self.dims is None:
            raise ValueError(f"Arg {self.name!r}: form 'gt4py.next' needs dims (the field's "
                             "dimensions)")

    def __repr__(self) -> str:
        fields = [repr(self.name)] + [f"{k}={getattr(self, k)!r}" for k in self.__slots__[1:]
                                      if k != "labels"
                                      and getattr(self, k) not in (None, False, "host")]
        return f"Arg({', '.join(fields)})"


class _Export:
    """The declaration attached to a function by :func:`export`."""

    __slots__ = ("args", "form")

    def __init__(self, args: tuple[Arg, ...] | None, form: str):
        self.args = args
        self.form = form


def export(*args: Arg, form: str = "numpy") -> Callable[[_F], _F]:
    """Declares a function callable from C and Fortran through libgtstorage_python.

    Parameters
    ----------
    *args : Arg
        One declaration per storage, in the order the caller passes them. Without any, the
        function takes any number of storages, each in ``form`` on its host buffer (device
        buffer if it has no host buffer).
    form : {"numpy", "storage"}
        How the storages arrive (see the module documentation).

    Returns
    -------
    callable
        A decorator that returns the function itself, unchanged (Python callers call it as
        before), with the declaration attached.
    """
    if form not in FORMS:
        raise ValueError(f"export: form must be one of {FORMS}, not {form!r}")
    for a in args:
        if not isinstance(a, Arg):
            raise TypeError(f"export: positional arguments must be Arg, not {type(a).__name__}")
    for a in args:
        a._check_form(a.form or form)
    if form == "gt4py.next" and not args:
        raise ValueError("export: form 'gt4py.next' needs one Arg (with dims) per storage")
    names = [a.name for a in args]
    if len(set(names)) != len(names):
        raise ValueError(f"export: argument names repeat: {names}")

    def decorate(fn: _F) -> _F:
        # (A function takes attributes; its Callable type does not say so.)
        fn.__gtstorage_bridge__ = _Export(  # type: ignore[attr-defined]
            tuple(args) if args else None, form)
        return fn

    return decorate


def _halo_pairs(halo: HaloSpec, ndim: int) -> tuple[tuple[int, int], ...] | None:
    if isinstance(halo, int):
        return tuple((halo, halo) for _ in range(ndim))
    items = list(halo)
    if len(items) != ndim:
        return None
    return tuple((h, h) if isinstance(h, int) else (int(h[0]), int(h[1])) for h in items)


class _Adapter:
    """What libgtstorage_python calls: ``adapter(handles, **scalars)``."""

    __slots__ = ("_fn", "_args", "_form", "_n", "_cache", "_calls", "_views", "_fast", "_name",
                 "__weakref__")

    def __init__(self, fn: Callable[..., Any], decl: _Export, target: str):
        self._fn = fn
        self._args = decl.args
        self._form = decl.form
        self._n = None if decl.args is None else len(decl.args)
        # (position, handle) -> (value, refresh or None), oldest first.
        self._cache: dict[tuple[int, int], _Entry] = {}
        # handles of a recent call -> (its arguments, the refreshes they need), oldest first.
        self._calls: dict[tuple[int, ...], _Hit] = {}
        # (position, description of a host-only storage) -> its NumPy view (see _convert).
        self._views: dict[tuple[int, object], np.ndarray] = {}
        # Per position: whether its argument is a NumPy view of the host buffer (None: every
        # position of an undeclared function, whose storages are such views when they can be).
        self._fast = None if decl.args is None else tuple(
            (a.form or decl.form) == "numpy" and a.side == "host" for a in decl.args)
        self._name = target

    def __call__(self, handles: tuple[int, ...], **scalars: Any) -> Any:
        # The time loop's case first: the same handles as a recent call (a tuple compare and a
        # dict lookup, whatever the number of storages).
        hit = self._calls.get(handles)
        if hit is None:
            hit = self._prepare(handles)
        values, refreshes, device_handle = hit
        for refresh in refreshes:
            refresh()
        if device_handle is None:
            return self._fn(*values, **scalars)
        return self._call_on_stream(device_handle, values, scalars)

    def _call_on_stream(self, device_handle: int, values: tuple[Any, ...],
                        scalars: dict[str, Any]) -> Any:
        """Runs the function with current_stream() set (and CuPy's current stream, if CuPy is
        there) to the stream of the first device storage."""
        info = _capi.new_struct(_capi.InterfaceInfo)
        _capi.check(_capi.lib.gtstorage_interface(device_handle, _capi.SIDE_DEVICE,
                                                  ctypes.byref(info)), "device storage")
        stream = int(info.stream)
        previous = getattr(_state, "stream", None)
        _state.stream = stream
        try:
            with _cupy_stream(stream):
                return self._fn(*values, **scalars)
        finally:
            _state.stream = previous

    def _prepare(self, handles: tuple[int, ...]) -> _Hit:
        """The arguments for these handles (views made or found per position), the refreshes
        they need before each call, and the first device storage's handle (or None), remembered
        for the next call with the same handles."""
        n = len(handles)
        if self._n is not None and n != self._n:
            raise ArgumentError(
                f"{self._name}: {n} storage{'s' if n != 1 else ''} passed; the function takes "
                f"{self._n} ({', '.join(a.name for a in self._args or ())})")
        cache = self._cache
        views = self._views
        fast = self._fast
        values: list[Any] = []
        refreshes: list[_Refresh] = []
        device_handle = None
        for key in enumerate(handles):
            if fast is None or fast[key[0]]:
                # A NumPy view of a host-only storage: found by its description (see _convert).
                view = views.get((key[0], _host_key(key[1])))
                if view is not None:
                    values.append(view)
                    continue
            entry = cache.get(key)
            if entry is None:
                entry = self._convert(*key)
                if len(cache) >= self._limit(n):
                    # Full: start again (O(1); removing the oldest entry one at a time would make
                    # each removal scan the dict's freed slots when handles never come back).
                    cache.clear()
                cache[key] = entry
            values.append(entry[0])
            if entry[1] is not None:
                refreshes.append(entry[1])
            if entry[2] and device_handle is None:
                device_handle = key[1]
        hit = (tuple(values), tuple(refreshes), device_handle)
        calls = self._calls
        if len(calls) >= 8:
            calls.clear()
        calls[handles] = hit
        return hit

    @staticmethod
    def _limit(n: int) -> int:
        # Room for a time loop that swaps its fields (u, v then v, u: two handles per position)
        # and then some; entries of released handles go when the cache is full (they are never
        # handed out again: a released handle's value is never issued again).
        return max(16, 4 * n)

    # ---- first arrival of a handle at a position --------------------------------------------

    def _describe(self, i: int) -> str:
        if self._args is not None:
            return f"{self._name}: argument {i} ({self._args[i].name!r})"
        return f"{self._name}: argument {i}"

    def _convert(self, i: int, handle: int) -> _Entry:
        where = self._describe(i)
        spec = self._args[i] if self._args is not None else None
        form = (spec.form if spec is not None else None) or self._form
        readonly = spec.readonly if spec is not None else False
        if spec is None:
            # Undeclared: the host buffer if there is one, else the device buffer.
            d = _describe(handle, _capi.SIDE_HOST)
            side = "host"
            if d == _capi.ERROR_NO_SUCH_BUFFER:
                side, d = "device", _describe(handle, _capi.SIDE_DEVICE)
        else:
            side = spec.side
            d = _describe(handle, _capi.SIDE_HOST if side == "host" else _capi.SIDE_DEVICE)
        if form == "numpy" and side == "host" and not isinstance(d, int) and not d[8]:
            # A host-only storage's NumPy view is a function of its description (address,
            # shape, strides, type, flags: all of it, so a view of this key is exactly the view
            # a new conversion would make), and so is the check against the declaration: a
            # model that wraps its arrays anew every call finds them here (_prepare).
            key = (i, _host_key(handle))
            arr = self._views.get(key)
            if arr is None:
                if spec is not None:
                    self._check(where, spec, d)
                arr = _host_array(d, readonly)
                if len(self._views) >= self._limit(len(self._args or ())):
                    self._views.clear()
                self._views[key] = arr
            return (arr, None, False)
        if isinstance(d, int):
            if d == _capi.ERROR_NO_SUCH_BUFFER:
                other = "a device" if side == "host" else "a host"
                raise ArgumentError(f"{where}: declared side={side!r}, but the storage has "
                                    f"{other} buffer only")
            raise _capi.error_for(d, where)
        if spec is not None:
            self._check(where, spec, d)
        if form == "numpy" and side == "host":
            # The common case without a Storage object: one description, one array.
            arr = _host_array(d, readonly)
            refresh = None
            if d[8]:  # a device side too: make the host current (and modified) before each call
                refresh = functools.partial(_make_current, handle, _capi.SIDE_HOST, not readonly)
                refresh()
            return (arr, refresh, False)
        st = Storage._borrow(handle)
        on_device = side == "device"
        if form == "storage":
            return (st, None, on_device)
        if form == "gt4py.next":
            assert spec is not None  # export() wants an Arg per storage for this form
            return self._next_field(st, spec, side, readonly) + (on_device,)
        try:
            import cupy
        except ImportError:
            # No CuPy: the storage itself (CUDA Array Interface, DLPack) is the device view.
            return (st, None, True)
        return (cupy.asarray(st), self._device_refresh(st, readonly), True)

    def _next_field(self, st: Storage, spec: Arg, side: str,
                    readonly: bool) -> tuple[Any, _Refresh | None]:
        from gt4py import next as gtx

        assert spec.dims is not None  # Arg() wants dims for this form
        dims = tuple(d if not isinstance(d, str) else gtx.Dimension(d) for d in spec.dims)
        g = st._geom(_capi.SIDE_HOST if side == "host" else _capi.SIDE_DEVICE)
        domain = gtx.domain({d: (-lo, n - lo) for d, n, (lo, _) in zip(dims, g.shape, g.halo)})
        refresh: _Refresh | None
        if side == "host":
            arr = st._host_view(not readonly)
            refresh = functools.partial(st._host_view, not readonly) if st._has_device else None
        else:
            import cupy

            arr = cupy.asarray(st)
            refresh = self._device_refresh(st, readonly)
        # gt4py.next's public route to a field over existing memory: an allocation that is the
        # memory (gtstorage.next.wrap), no copy.
        field = gtx.empty(domain, dtype=arr.dtype, allocator=gtstorage_next.wrap(arr))
        return (field, refresh)

    @staticmethod
    def _device_refresh(st: Storage, readonly: bool) -> Callable[[], None] | None:
        if not st._has_host:
            return None
        h = st._handle

        def refresh() -> None:
            _capi.check(_capi.lib.gtstorage_sync_to(h, _capi.SIDE_DEVICE, 0), "device access")
            if not readonly:
                _capi.check(_capi.lib.gtstorage_modify(h, _capi.SIDE_DEVICE, 0), "device access")

        return refresh

    @staticmethod
    def _check(where: str, spec: Arg, d: _Description) -> None:
        """Checks a storage described by _describe against its declaration."""
        _, shape, _, typestr, readonly, halo, dims = d[:7]
        ndim = len(shape)
        if spec.ndim is not None and ndim != spec.ndim:
            raise ArgumentError(f"{where}: {ndim} dimensions {shape}, declared ndim={spec.ndim}")
        if spec.dtype is not None and typestr != spec.dtype.str and np.dtype(typestr) != spec.dtype:
            raise ArgumentError(f"{where}: dtype {np.dtype(typestr)} ({typestr}), declared "
                                f"{spec.dtype} ({spec.dtype.str})")
        if spec.labels is not None and dims != spec.labels:
            raise ArgumentError(f"{where}: dims {','.join(dims) or '()'}, declared "
                                f"{','.join(spec.labels)}")
        if spec.halo is not None:
            want = _halo_pairs(spec.halo, ndim)
            if want != halo:
                raise ArgumentError(f"{where}: halo {halo}, declared {want or spec.halo}")
        if readonly and not spec.readonly:
            raise ArgumentError(f"{where}: the storage is read-only, but the argument is not "
                                "declared readonly=True")


class _BorrowedView:
    """The array interface of a borrowed buffer (ndarray.base of a NumPy view the bridge made:
    it holds no library reference; the view is valid while the handle is, see the module
    documentation)."""

    __slots__ = ("__array_interface__",)

    def __init__(self, interface: dict[str, Any]):
        self.__array_interface__ = interface


def _host_array(d: _Description, readonly: bool) -> np.ndarray:
    data, shape, strides, typestr, storage_readonly = d[:5]
    if not data and 0 in shape:
        data = _EMPTY_ADDRESS  # NumPy 1.x refuses a NULL address even without elements
    return np.asarray(_BorrowedView({"shape": shape, "typestr": typestr,
                                     "data": (data, storage_readonly or readonly),
                                     "strides": strides, "version": 3}))


def _make_current(handle: int, side: int, write: bool) -> None:
    """Makes @p side of a storage with two sides current (and modified when @p write)."""
    _capi.check(_capi.lib.gtstorage_sync_to(handle, side, 0), "bridge")
    if write:
        _capi.check(_capi.lib.gtstorage_modify(handle, side, 0), "bridge")


def _describe_ctypes(handle: int, side: int) -> int | _Description:
    """What _gtstorage_embedding.describe returns, through ctypes (outside libgtstorage_python:
    a Python program that drives an adapter itself, the tests)."""
    info = _capi.new_struct(_capi.InterfaceInfo)
    status = _capi.lib.gtstorage_interface(handle, side, ctypes.byref(info))
    if status != _capi.OK:
        return int(status)
    g = _Geometry(info)
    return (g.data, g.shape, g.strides, g.typestr, g.readonly, g.halo, g.dims,
            _has_side(handle, _capi.SIDE_HOST), _has_side(handle, _capi.SIDE_DEVICE),
            g.device_type)


def _host_key_ctypes(handle: int) -> int | _Description | None:
    """What _gtstorage_embedding.host_key returns, through ctypes: a description of a host-only
    storage's view (a tuple here), None or a status."""
    d = _describe_ctypes(handle, _capi.SIDE_HOST)
    if isinstance(d, int):
        return None if d == _capi.ERROR_NO_SUCH_BUFFER else d
    return None if d[8] else d[:7]


try:  # inside libgtstorage_python: one C call each (src/python/embedding_module.cpp)
    # (A module built into libgtstorage_python's interpreter: no file for mypy to read.)
    from _gtstorage_embedding import (  # type: ignore[import-not-found]
        describe as _describe,
        host_key as _host_key,
    )
except ImportError:
    _describe = _describe_ctypes
    _host_key = _host_key_ctypes


def _cupy_stream(stream: int) -> contextlib.AbstractContextManager[Any]:
    """CuPy's current stream set to @p stream for a block (nothing without CuPy, or for the
    default stream 0)."""
    if not stream:
        return contextlib.nullcontext()
    try:
        import cupy
    except ImportError:
        return contextlib.nullcontext()
    external: contextlib.AbstractContextManager[Any] = cupy.cuda.ExternalStream(stream)
    return external


def adapter_for(obj: Any, target: str) -> _Adapter:
    """The callable libgtstorage_python keeps for a function (called once, at resolve time).

    Parameters
    ----------
    obj : callable
        The function ``target`` names, decorated with :func:`export` or not.
    target : str
        ``"package.module:function"``, as the C or Fortran caller wrote it (in messages).

    Returns
    -------
    callable
        Called as ``adapter(handles, **scalars)`` for every ``gtstorage_python_call``.
    """
    if not callable(obj):
        raise TypeError(f"{target}: {type(obj).__name__} object is not callable")
    decl = getattr(obj, "__gtstorage_bridge__", None)
    if not isinstance(decl, _Export):
        decl = _Export(None, "numpy")
    return _Adapter(obj, decl, target)
