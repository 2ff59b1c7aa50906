# gtstorage Python binding: the GDP-3 face's allocators, which return Storage objects.
#
# They are thin adapters over the pipeline of gtstorage._request (the one validated options
# pipeline and cache, and the allocators both faces share): GDP-3's keywords and defaults here,
# a Storage of the new handle as the result.
"""GDP-3 allocators: empty, zeros, ones, full, from_array, *_like, storage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from . import _args, _capi
from ._args import public
from ._handle import SyncState
from ._request import (
    Request,
    _fingerprint,
    _split_dtype,
    allocate,
    allocate_copy,
    cached_request,
    copy_source,
    source_shape,
    validate,
)
from ._storage import _RESULT_DOC, _STORAGE_PARAMETERS_DOC, Storage, allocators
from ._wrap import as_storage

__all__ = ["empty", "zeros", "ones", "full", "from_array", "empty_like", "zeros_like",
           "ones_like", "full_like", "storage"]

_UNSET: Any = _args.UNSET  # "not given"


def _request(init: int, shape: Any, dtype: Any, **kw: Any) -> Request:
    """The cached Request of a GDP-3 call (keyed by the fingerprint of its arguments)."""
    key: tuple[object, ...] | None
    try:
        key = ("gdp3", init, _fingerprint(shape), dtype, _fingerprint(tuple(kw.values())))
    except TypeError:  # unhashable (a callable layout is hashable; a dict is not): no cache
        key = None

    def make() -> Request:
        r = validate(shape, dtype, **kw)
        r.struct.init = init
        return r

    return cached_request(key, shape, make)


# ---- GDP-3 allocators (Storage results) --------------------------------------------------------

_PARAMETERS_DOC = """
    Parameters
    ----------
    shape : int or sequence of int
        Extents in elements, halo included (a sub-array ``dtype`` appends data dimensions).
    dtype : dtype-like, optional
        Element type (default ``numpy.float64``).
    backend, defaults : str, optional
        Preset name (GT4Py backend or gtstorage preset; aliases: give one): stride order,
        alignment, padding and device. Default: the library's default preset ("numpy").
    aligned_index : sequence of int, optional
        Index of the element whose address is aligned (default: the first interior point).
    dimensions, dims : sequence of str or str, optional
        Dimension labels ("I", "J", "K", data dimensions "0", "1", …; aliases: give one); they
        choose the stride order and are stored (``__gt_dims__``).
    layout : sequence of int or callable, optional
        Stride order (0 = largest stride) overriding the preset's; a callable gets ``ndim``.
    alignment_size : int, optional
        Alignment in bytes of the aligned element: any positive multiple of the item size (or a
        divisor of it), as GT4Py allows.
    halo : int or sequence of int or (lower, upper) pairs, optional
        Halo widths in elements per dimension (one int: the same for every dimension).
    device : None, "cpu" or "gpu", optional
        Where the buffers are; default from the preset. ``"gpu"`` alone means a host + device
        pair synchronized by gtstorage.
    managed : None, "gtstorage" (or "gt4py") or "cuda", optional
        How a device storage is kept: None device only, "gtstorage" host + device mirror,
        "cuda" one unified-memory buffer.
    device_id : int, optional
        Device ordinal; -1 (default) is the calling thread's current device.
    pinned : bool, optional
        Page-locked host memory (faster transfers).
    readonly : bool, optional
        A storage that refuses writes after its initialization.
    pitch_padding : None, "none" or "avoid_aliasing", optional
        None (the default) and "none" give GT4Py's strides. "avoid_aliasing" raises every
        stride of 4 KiB or more (other than the contiguous dimension's) to an odd multiple of
        64 bytes (of lcm(64, alignment, itemsize)), so that no stride is a multiple of 4 KiB;
        copies and stencils across planes or rows of power-of-two extents then keep their
        cache lines (gtstorage_create_options.pitch_padding).
""" + _RESULT_DOC + """\
        Bad arguments (the message names the function and the argument); ``RuntimeError``
        (:class:`GTUnknownPresetError`) for an unknown preset.
"""


def _doc(summary: str) -> str:
    return summary + "\n" + _PARAMETERS_DOC


# The keyword parameters of the allocators, in the order of their signatures (and of the
# request's cache key).
_KEYWORDS = ("backend", "defaults", "aligned_index", "dimensions", "dims", "layout",
             "alignment_size", "halo", "device", "managed", "device_id", "pinned", "readonly",
             "pitch_padding")


def _keywords(arguments: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of an allocator's call, from its ``locals()``."""
    return {k: arguments[k] for k in _KEYWORDS}


def _allocator(shape: int | Sequence[int], dtype: Any = np.float64, *, backend: Any = _UNSET,
               defaults: Any = _UNSET, aligned_index: Sequence[int] | None = None,
               dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = None,
               alignment_size: int | None = None, halo: Any = None, device: Any = _UNSET,
               managed: Any = _UNSET, device_id: int = -1, pinned: bool = False,
               readonly: bool = False, pitch_padding: str | None = None,
               _init: int = _capi.INIT_UNINITIALIZED, _context: str = "empty") -> Storage:
    """empty, zeros and ones, written once (_args.variant gives each its _init and _context)."""
    r = _request(_init, shape, dtype, backend=backend, defaults=defaults,
                 aligned_index=aligned_index, dimensions=dimensions, dims=dims, layout=layout,
                 alignment_size=alignment_size, halo=halo, device=device, managed=managed,
                 device_id=device_id, pinned=pinned, readonly=readonly,
                 pitch_padding=pitch_padding)
    return Storage._from_handle(allocate(r, _init, _context), params=r.params)


empty = public()(_args.variant(
    _allocator, "empty", _doc("""Storage with uninitialized values (GDP-3 ``empty``)."""),
    _init=_capi.INIT_UNINITIALIZED, _context="empty"))
zeros = public()(_args.variant(
    _allocator, "zeros",
    _doc("""Storage filled with 0, halo and padding included (GDP-3 ``zeros``)."""),
    _init=_capi.INIT_ZEROS, _context="zeros"))
ones = public()(_args.variant(_allocator, "ones", _doc(
    """Storage filled with 1 (GDP-3 ``ones``)."""), _init=_capi.INIT_ONES, _context="ones"))


@public()
def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = np.float64, *,
         backend: Any = _UNSET, defaults: Any = _UNSET,
         aligned_index: Sequence[int] | None = None, dimensions: Any = _UNSET,
         dims: Any = _UNSET, layout: Any = None, alignment_size: int | None = None,
         halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET, device_id: int = -1,
         pinned: bool = False, readonly: bool = False,
         pitch_padding: str | None = None) -> Storage:
    r = _request(_capi.INIT_VALUE, shape, dtype, **_keywords(locals()))
    value = _scalar(fill_value, _split_dtype(dtype)[0])
    return Storage._from_handle(allocate(r, _capi.INIT_VALUE, "full", fill=value),
                                params=r.params)


full.__doc__ = _doc("""Storage filled with ``fill_value`` (GDP-3 ``full``).""").replace(
    """    dtype : dtype-like, optional
""", """    fill_value : scalar
        The value of every element, converted to ``dtype`` as NumPy converts.
    dtype : dtype-like, optional
""", 1)


def _scalar(value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    _args.array_source("fill_value", value)
    if isinstance(value, Storage):
        value = value.__array__()
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise ValueError(f"fill_value must be a scalar, got an array of shape {arr.shape}")
    return np.array(arr, dtype=dtype)


@public()
def from_array(data: Any, dtype: Any = None, *, backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Sequence[int] | None = None, dimensions: Any = _UNSET,
               dims: Any = _UNSET, layout: Any = None, alignment_size: int | None = None,
               halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
               device_id: int = -1, pinned: bool = False, readonly: bool = False,
               pitch_padding: str | None = None) -> Storage:
    host, src = copy_source(data)
    ref = host if host is not None else src
    assert ref is not None  # copy_source gives one of the two
    dt = ref.dtype if dtype is None else _args.dtype(dtype)
    if dtype is None and not dt.isnative:
        dt = dt.newbyteorder("=")  # the library stores native byte order; the copy converts
    shape = source_shape(tuple(ref.shape), dt)
    if dimensions is _UNSET and dims is _UNSET and hasattr(data, "__gt_dims__"):
        dims = tuple(data.__gt_dims__)
    r = _request(_capi.INIT_COPY, shape, dt, **_keywords(locals()))
    return Storage._from_handle(allocate_copy(r, host, src, "from_array"), params=r.params)


from_array.__doc__ = _doc("""New storage with a copy of ``data`` (any source layout, host or
    device, converted to ``dtype``; None keeps the data's dtype). The copy changes layout in the
    C library (multi-threaded, cache-blocked). ``data``'s ``__gt_dims__`` are the default dims."""
    ).replace(
    """    shape : int or sequence of int
        Extents in elements, halo included (a sub-array ``dtype`` appends data dimensions).
    dtype : dtype-like, optional
        Element type (default ``numpy.float64``).
""", """    data : array-like
        Source values, host or device, any layout; its shape is the storage's shape, halo
        included (a sub-array ``dtype`` takes its trailing extents as data dimensions).
    dtype : dtype-like, optional
        Element type (default: the data's).
""")


# ---- GDP-3 *_like ------------------------------------------------------------------------------


def _like_kwargs(data: Any, dtype: Any,
                 kwargs: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """Shape, dtype and keywords of a *_like call: unset parameters taken from ``data``."""
    kw = {k: v for k, v in kwargs.items() if v is not _UNSET}
    if isinstance(data, Storage):
        shape = data.shape
        dt = data.dtype if dtype is None else dtype
        p = data._params
        override_layout = any(k in kw for k in ("layout", "dims", "dimensions", "backend",
                                                "defaults"))
        if "backend" not in kw and "defaults" not in kw and "backend" in p:
            kw["backend"] = p["backend"]
        if "dims" not in kw and "dimensions" not in kw:
            kw["dims"] = data.dims
        if not override_layout:
            kw["layout"] = data.layout
        if "halo" not in kw:
            kw["halo"] = data.halo
            ai = data.aligned_index
            if "aligned_index" not in kw and all(a is not None for a in ai):
                kw["aligned_index"] = ai
        if "alignment_size" not in kw and "alignment_size" in p:
            kw["alignment_size"] = p["alignment_size"]
        if "pitch_padding" not in kw and "pitch_padding" in p:
            kw["pitch_padding"] = p["pitch_padding"]
        if "device" not in kw:
            kw["device"] = data.device
        if "managed" not in kw and data.device == "gpu":
            kw["managed"] = data.managed if data.managed else None
        elif kw.get("device") is None:
            kw.pop("managed", None)
        if "device_id" not in kw and "device_id" in p:
            kw["device_id"] = p["device_id"]
        if "pinned" not in kw and p.get("pinned"):
            kw["pinned"] = True
    else:
        _args.array_source("data", data)
        arr = np.asarray(data) if not hasattr(data, "__cuda_array_interface__") else None
        if arr is None:
            cai = data.__cuda_array_interface__
            shape, dt = tuple(cai["shape"]), _args.dtype(cai["typestr"] if dtype is None else dtype)
            kw.setdefault("device", "gpu")
        else:
            shape, dt = arr.shape, arr.dtype if dtype is None else dtype
        if "dims" not in kw and "dimensions" not in kw and hasattr(data, "__gt_dims__"):
            kw["dims"] = tuple(data.__gt_dims__)
    return shape, dt, kw


_LIKE_DOC = """{what} storage shaped like ``data`` (GDP-3 ``{name}_like``).

    Every parameter not given is taken from ``data`` (a Storage: shape, dtype, preset, dims,
    layout, halo, aligned index, alignment, device, managed, device id, pinned, pitch padding;
    an array: shape, dtype and ``__gt_dims__``). ``shape`` cannot be overridden; a sub-array
    ``dtype`` appends its extents to it (as NumPy's ``*_like`` do).
"""


def _allocator_like(data: Any, dtype: Any = None, *, backend: Any = _UNSET,
                    defaults: Any = _UNSET, aligned_index: Any = _UNSET,
                    dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = _UNSET,
                    alignment_size: Any = _UNSET, halo: Any = _UNSET, device: Any = _UNSET,
                    managed: Any = _UNSET, device_id: Any = _UNSET, pinned: Any = _UNSET,
                    readonly: Any = _UNSET, pitch_padding: Any = _UNSET,
                    _allocator: Callable[..., Storage] = empty) -> Storage:
    """empty_like, zeros_like and ones_like, written once (_args.variant gives each its
    _allocator)."""
    shape, dt, kw = _like_kwargs(data, dtype, _keywords(locals()))
    return _allocator(shape, dt, **kw)


empty_like = public()(_args.variant(_allocator_like, "empty_like", None, _allocator=empty))
zeros_like = public()(_args.variant(_allocator_like, "zeros_like", None, _allocator=zeros))
ones_like = public()(_args.variant(_allocator_like, "ones_like", None, _allocator=ones))


@public()
def full_like(data: Any, fill_value: Any, dtype: Any = None, *, backend: Any = _UNSET,
              defaults: Any = _UNSET, aligned_index: Any = _UNSET, dimensions: Any = _UNSET,
              dims: Any = _UNSET, layout: Any = _UNSET, alignment_size: Any = _UNSET,
              halo: Any = _UNSET, device: Any = _UNSET, managed: Any = _UNSET,
              device_id: Any = _UNSET, pinned: Any = _UNSET, readonly: Any = _UNSET,
              pitch_padding: Any = _UNSET) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, _keywords(locals()))
    return full(shape, fill_value, dt, **kw)


for _f, _n, _what in ((empty_like, "empty", "An uninitialized"), (zeros_like, "zeros", "A zero"),
                     (ones_like, "ones", "A ones"), (full_like, "full", "A ``fill_value``")):
    _params = _PARAMETERS_DOC.replace(
        """    shape : int or sequence of int
        Extents in elements, halo included (a sub-array ``dtype`` appends data dimensions).
    dtype : dtype-like, optional
        Element type (default ``numpy.float64``).
""", """    data : Storage or array-like
        The template.
""" + ("""    fill_value : scalar
        The value of every element, converted to ``dtype`` as NumPy converts.
""" if _n == "full" else "") + """    dtype : dtype-like, optional
        Element type (default: the data's).
""")
    assert _params != _PARAMETERS_DOC
    _f.__doc__ = _LIKE_DOC.format(name=_n, what=_what) + _params
    # (__wrapped__ is set by @public's functools.wraps; the type of _f does not say so.)
    _f.__wrapped__.__doc__ = _f.__doc__  # type: ignore[union-attr]
del _f, _n, _what, _params


@public()
def storage(data: Any = None, device_data: Any = None, *, dtype: Any = None, copy: bool = True,
            sync_state: Any = None, shape: Sequence[int] | None = None, backend: Any = _UNSET,
            defaults: Any = _UNSET, aligned_index: Any = None, dimensions: Any = _UNSET,
            dims: Any = _UNSET, layout: Any = None, alignment_size: Any = None, halo: Any = None,
            device: Any = _UNSET, managed: Any = _UNSET, device_id: int = -1,
            readonly: Any = None) -> Storage:
    """A storage holding a copy of ``data``, or wrapping it (GDP-3 ``storage``).

    With ``copy=True`` (the default) the values of ``data`` (or ``device_data``) are copied into
    a new storage (see :func:`from_array`); with ``copy=False`` the buffers are wrapped (see
    :func:`as_storage`) and, without any data, a storage is allocated like :func:`empty`
    (``shape`` then required). ``Storage(...)`` is this function.
{parameters}    """
    common = {k: v for k, v in dict(backend=backend, defaults=defaults, dimensions=dimensions,
                                    dims=dims, device=device, managed=managed).items()
              if v is not _UNSET}
    for k, v in dict(aligned_index=aligned_index, layout=layout, alignment_size=alignment_size,
                     halo=halo, readonly=readonly).items():
        if v is not None:
            common[k] = v
    if device_id != -1:
        common["device_id"] = device_id
    if not copy:
        if data is None and device_data is None:
            if shape is None:
                raise TypeError("storage(copy=False) without data needs shape")
            return empty(shape, np.float64 if dtype is None else dtype, **common)
        return as_storage(data, device_data, sync_state=sync_state, dtype=dtype, shape=shape,
                          **common)
    if data is None and device_data is None:
        raise TypeError("storage() needs data or device_data to copy")
    if shape is not None:
        raise TypeError("storage(copy=True) takes its shape from the data; shape is not allowed")
    source = data
    if device_data is not None:
        state = sync_state.state if isinstance(sync_state, SyncState) else sync_state
        if data is None or state == _capi.SYNC_DEVICE_DIRTY:
            source = device_data
        common.setdefault("device", "gpu")
    return from_array(source, dtype, **common)


if storage.__doc__:  # (None under python -OO)
    # (__wrapped__ is set by @public's functools.wraps; the type of storage does not say so.)
    storage.__doc__ = storage.__wrapped__.__doc__ = (  # type: ignore[attr-defined]
        storage.__doc__.format(parameters=_STORAGE_PARAMETERS_DOC))


# What a Storage allocates for itself (its constructor, copy(), unpickling) is this face's.
allocators.storage = storage
allocators.empty_like = empty_like
allocators.from_array = from_array
