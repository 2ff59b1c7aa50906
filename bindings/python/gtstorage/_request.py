# gtstorage Python binding: the one options pipeline of both faces (GDP-3 and the GT4Py drop-in).
#
# Every keyword of an allocation becomes a field of gtstorage_create_options; the C library picks
# the layout, padding, alignment and default dims. Python only checks what a pointer cannot carry
# (the lengths of per-dimension sequences) and the Python types of the arguments. A validated
# argument set is a Request; the one cache of Requests (by each face's key of its arguments)
# serves both faces, and the native allocator of the drop-in reads it too. The allocators both
# faces share (allocate, allocate_copy) turn a Request into a new handle; each face makes its own
# result of it (a Storage, or a NumPy/CuPy array).
"""Validated allocation requests, their cache, and the allocators both faces share."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _args, _capi
from ._args import public
from ._capi import check, lib
from ._handle import _array_desc
from ._storage import Storage, StorageCore, _wrap_cuda_array

_UNSET: Any = _args.UNSET  # "not given"

_MANAGED = {
    None: _capi.MANAGED_NONE,
    False: _capi.MANAGED_NONE,
    "none": _capi.MANAGED_NONE,
    "gtstorage": _capi.MANAGED_MIRROR,
    "gt4py": _capi.MANAGED_MIRROR,
    "mirror": _capi.MANAGED_MIRROR,
    "cuda": _capi.MANAGED_UNIFIED,
    "unified": _capi.MANAGED_UNIFIED,
}


def _ints(name: str, values: Any, *, allow_scalar: bool = False) -> list[int]:
    return _args.int_sequence(name, values, allow_scalar=allow_scalar)


def _dims_string(dims: Any) -> str:
    """Dims labels as the C library's comma-separated string ("I,J,K,0")."""
    labels: list[str]
    if isinstance(dims, str):
        labels = list(dims) if "," not in dims else dims.split(",")
    else:
        if not hasattr(dims, "__iter__"):
            raise TypeError(f"dims must be a sequence of str, got {dims!r}")
        labels = []
        for d in dims:
            d = getattr(d, "__gt_axis_name__", d)  # gtscript axes (I, J, K objects)
            if not isinstance(d, str):
                raise TypeError(f"dims must be a sequence of str, got {dims!r}")
            labels.append(d)
    return ",".join(labels)


def _alias(name_a: str, a: Any, name_b: str, b: Any) -> Any:
    if a is not _UNSET and b is not _UNSET and a != b:
        raise TypeError(f"{name_a}={a!r} and {name_b}={b!r} are aliases; give only one")
    return a if a is not _UNSET else b


def _split_dtype(dtype: Any) -> tuple[np.dtype[Any], tuple[int, ...]]:
    """NumPy dtype and the extra trailing dims of a sub-array dtype such as (float, (3,))."""
    dt = _args.dtype(dtype)
    if dt.subdtype is not None:
        base, sub_shape = dt.subdtype
        return np.dtype(base), tuple(sub_shape)
    return dt, ()


# gtstorage_pitch_padding by its Python name.
_PITCH_PADDING = {"none": _capi.PITCH_PADDING_NONE,
                  "avoid_aliasing": _capi.PITCH_PADDING_AVOID_ALIASING}


class Request:
    """A validated gtstorage_create_options (``struct``), the ctypes objects its pointers refer to
    (``keep``), and what every allocation from it shares.

    The native allocator of the drop-in reads ``address``, ``device`` and ``shape_types`` of a
    cached Request (gtstorage_native.c); none of them changes once the Request is cached, nor does
    the struct (an allocation that needs other fields copies it: :func:`allocate`).
    """

    __slots__ = ("struct", "keep", "params", "base_dtype", "device", "shape", "shape_types",
                 "address", "host_interface")

    def __init__(self, shape: Any) -> None:
        self.struct = _capi.new_struct(_capi.CreateOptions)
        self.keep: list[object] = []
        self.params: dict[str, Any] = {}  # GDP-3 parameters a Storage remembers (*_like, pickle)
        self.base_dtype: np.dtype[Any] = np.dtype(np.float64)  # the element type (sub-array's base)
        self.device = False  # the drop-in returns a CuPy array (a device backend)
        self.shape = shape  # as given: a cache hit must be given the same element types
        self.shape_types = _types(shape)
        self.address = ctypes.addressof(self.struct)  # what the native extension takes
        self.host_interface: dict[str, Any] | None = None  # the drop-in's template (no data)

    def ptr(self, arr: ctypes.Array[Any], ctype: type[Any]) -> Any:
        self.keep.append(arr)
        return ctypes.cast(arr, ctypes.POINTER(ctype))


def _types(shape: Any) -> object:
    return tuple(map(type, shape)) if type(shape) in (tuple, list) else type(shape)


def validate(shape: Any, dtype: Any, *, backend: Any = _UNSET, defaults: Any = _UNSET,
             aligned_index: Any = None, dimensions: Any = _UNSET, dims: Any = _UNSET,
             layout: Any = None, alignment_size: Any = None, halo: Any = None,
             device: Any = _UNSET, managed: Any = _UNSET, device_id: Any = -1,
             pinned: Any = False, readonly: Any = False, pitch_padding: Any = None) -> Request:
    """The Request of these arguments (GDP-3's keywords; the drop-in adapts GT4Py's to them),
    validated: TypeError, ValueError or OverflowError say what is wrong."""
    o = Request(shape)
    s = o.struct
    shape = _ints("shape", shape, allow_scalar=True)
    dt, sub_shape = _split_dtype(dtype)
    o.base_dtype = dt
    base_ndim = len(shape)
    shape = shape + list(sub_shape)
    ndim = len(shape)
    s.ndim = ndim
    s.shape = o.ptr(_capi.int64_array(shape), ctypes.c_int64)
    typestr = dt.str.encode("ascii")
    o.keep.append(typestr)
    s.dtype = typestr

    preset = _alias("backend", backend, "defaults", defaults)
    if preset is not _UNSET and preset is not None:
        if not isinstance(preset, str):
            raise TypeError(f"backend/defaults must be a preset name (str), got {preset!r}")
        b = _args.c_string("backend", preset, "utf-8")
        o.keep.append(b)
        s.preset = b
        o.params["backend"] = preset

    dims = _alias("dimensions", dimensions, "dims", dims)
    if dims is not _UNSET and dims is not None:
        labels = _dims_string(dims).split(",")
        if sub_shape:
            # GT4Py: a sub-array dtype adds data dimensions "0", "1", … after the given ones.
            labels += [str(i) for i in range(len(sub_shape))]
        if labels == [""]:
            labels = []
        if len(labels) != ndim:
            # "non-matching sizes" is GT4Py's wording (its test_shape matches on it).
            raise ValueError(f"dims {tuple(labels)} and shape {tuple(shape)} have non-matching "
                             f"sizes: {len(labels)} labels for a shape of {ndim} dimensions")
        if labels:  # a 0-d storage has no labels to pass
            d = _args.c_string("dims", ",".join(labels))
            o.keep.append(d)
            s.dims = d
    elif sub_shape:
        # The default labels of the base shape come from the library (GT4Py's rule), then the
        # data dimensions of the sub-array dtype follow.
        labels = list(plan(shape[:base_ndim], dt,
                           backend=preset if preset is not _UNSET else None)["dims"])
        labels += [str(i) for i in range(len(sub_shape))]
        d = ",".join(labels).encode("ascii")
        o.keep.append(d)
        s.dims = d

    if layout is not None:
        if callable(layout):
            layout = layout(ndim)
        lay = _ints("layout", layout)
        if len(lay) != ndim:
            raise ValueError(f"layout {tuple(lay)} has {len(lay)} entries for {ndim} dimensions")
        s.layout = o.ptr(_capi.int32_array(lay, "layout"), ctypes.c_int32)
        o.params["layout_given"] = True

    if halo is not None:
        flat = halo_widths(halo, base_ndim)  # an int: the same for every (non-data) dimension
        n = len(flat) // 2
        if n == base_ndim and sub_shape:
            flat += [0, 0] * len(sub_shape)
            n = ndim
        if n != ndim:
            raise ValueError(f"halo has {n} entries for {ndim} dimensions")
        s.halo = o.ptr(_capi.int64_array(flat), ctypes.c_int64)

    if aligned_index is not None:
        ai = _ints("aligned_index", aligned_index)
        if len(ai) == base_ndim and sub_shape:
            ai += [0] * len(sub_shape)
        if len(ai) != ndim:
            raise ValueError(f"aligned_index {tuple(ai)} has {len(ai)} entries for {ndim} "
                             "dimensions")
        s.aligned_index = o.ptr(_capi.int64_array(ai), ctypes.c_int64)

    if alignment_size is not None:
        alignment = _args.int_scalar("alignment_size", alignment_size)
        if alignment <= 0:  # the C library's 0 ("the preset's") is None here
            raise ValueError(f"alignment_size must be a positive number of bytes, got "
                             f"{alignment} (None: the preset's alignment)")
        s.alignment_bytes = alignment
        o.params["alignment_size"] = s.alignment_bytes

    if device is _UNSET:
        s.device = _capi.DEVICE_DEFAULT
    elif device is None or device == "cpu":
        s.device = _capi.DEVICE_CPU
    elif device == "gpu":
        s.device = _capi.DEVICE_GPU
    else:
        raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")

    if managed is _UNSET:
        # GDP-3: an explicit device="gpu" defaults to managed="gt4py" (host + device, synced by
        # the library); otherwise the preset decides (device only for the GPU presets, as GT4Py).
        s.managed = _capi.MANAGED_MIRROR if device == "gpu" else _capi.MANAGED_DEFAULT
    elif s.device == _capi.DEVICE_CPU:
        s.managed = _capi.MANAGED_DEFAULT  # GDP-3: managed only has effect with a device buffer
    else:
        key = managed.lower() if isinstance(managed, str) else managed
        if key not in _MANAGED:
            raise ValueError("managed must be None, 'gtstorage' (or 'gt4py') or 'cuda', "
                             f"got {managed!r}")
        s.managed = _MANAGED[key]

    s.device_id = _args.int_scalar("device_id", device_id, _args.INT32_MIN, _args.INT32_MAX)
    s.host_memory = _capi.HOST_PINNED if pinned else _capi.HOST_PAGEABLE
    s.readonly = 1 if readonly else 0
    if pitch_padding is not None:
        if not isinstance(pitch_padding, str) or pitch_padding not in _PITCH_PADDING:
            raise ValueError(f"pitch_padding must be None, 'none' or 'avoid_aliasing', got "
                             f"{pitch_padding!r}")
        s.pitch_padding = _PITCH_PADDING[pitch_padding]
        o.params["pitch_padding"] = pitch_padding
    o.params.update(device_id=s.device_id, pinned=bool(pinned))
    return o


def halo_widths(halo: Any, ndim: int) -> list[int]:
    """The flat (lower, upper) widths of @p halo: one int for each of @p ndim dimensions, or a
    sequence of ints and (lower, upper) pairs (TypeError, ValueError otherwise)."""
    if _args.is_int(halo):
        halo = [halo] * ndim
    if isinstance(halo, (str, bytes)) or not hasattr(halo, "__iter__"):
        raise TypeError(f"halo must be a sequence of ints or (lower, upper) pairs, got {halo!r}")
    flat = []
    for h in halo:
        if _args.is_int(h):
            flat += [_args.int_scalar("halo", h)] * 2
        else:
            pair = _ints("halo", h)
            if len(pair) != 2:
                raise ValueError(f"halo entries must be ints or (lower, upper) pairs, got {h!r}")
            flat += pair
    return flat


def _fingerprint(value: Any) -> tuple[object, ...]:
    """A hashable key that tells 8 from 8.0 and True (equal as dict keys) and lists from tuples;
    TypeError for unhashable values."""
    t = type(value)
    if t is tuple or t is list:
        return (t,) + tuple(map(_fingerprint, value))
    hash(value)
    return (t, value)


# The one cache of validated Requests, by each face's key of its arguments (a model allocates the
# same few fields again and again): the drop-in's (init, shape, dtype, backend) for its common call
# (the native allocator builds that key too) or a longer tuple, GDP-3's ("gdp3", init, ...).
# Bounded: cleared when it grows past 512 entries. A Request is only read once cached, so threads
# share its entries.
cache: dict[tuple[object, ...], Request] = {}
_cache_lock = threading.Lock()


def lookup(key: tuple[object, ...], shape: Any) -> Request | None:
    """The cached Request of @p key, if it was made from a shape of the same element types (8,
    8.0 and True are one dict key, but validation tells them apart); TypeError for an unhashable
    key."""
    entry = cache.get(key)
    # The same tuple object (a literal in a loop) needs no check.
    if entry is not None and ((entry.shape is shape and type(shape) is tuple)
                              or entry.shape_types == _types(shape)):
        return entry
    return None


def cached_request(key: tuple[object, ...] | None, shape: Any,
                   make: Callable[[], Request]) -> Request:
    """The Request of @p key from the cache, else made by @p make (which validates) and cached;
    @p key None (unhashable arguments) is never cached."""
    entry = lookup(key, shape) if key is not None else None
    if entry is None:
        entry = make()
        if key is not None:
            with _cache_lock:
                if len(cache) > 512:
                    cache.clear()
                cache[key] = entry
    return entry


def key_of(*parts: Any) -> tuple[object, ...] | None:
    """A cache key of argument values that tells 8 from 8.0 and True and lists from tuples; None
    for unhashable ones."""
    try:
        return _fingerprint(parts)
    except TypeError:
        return None


# ---- the allocators both faces share ---------------------------------------------------------


def allocate(r: Request, init: int, context: str, *, fill: np.ndarray | None = None,
             source: _capi.Array | None = None) -> int:
    """A new storage handle (one reference, the caller's) from Request @p r, initialized by
    @p init (@p fill: the value of INIT_VALUE; @p source: the array of INIT_COPY)."""
    struct = r.struct
    if struct.init != init or fill is not None or source is not None:
        struct = _capi.CreateOptions.from_buffer_copy(struct)  # a cached Request stays as it is
        struct.init = init
        if fill is not None:
            struct.fill_value = fill.ctypes.data
        if source is not None:
            struct.source = ctypes.pointer(source)
    out = _capi.handle_t()
    check(lib.gtstorage_create(ctypes.byref(struct), ctypes.byref(out)), context)
    return int(out.value)


def copy_source(data: Any) -> tuple[np.ndarray | None, StorageCore | None]:
    """(host ndarray or None, device storage or None) of the source of a copy (from_array)."""
    _args.array_source("data", data)
    if isinstance(data, Storage):
        return None, data
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        return None, _wrap_cuda_array(data)
    return np.asarray(data), None


def source_shape(shape: tuple[int, ...], dtype: np.dtype[Any]) -> tuple[int, ...]:
    """The allocation shape of a copy of data of @p shape into @p dtype: a sub-array dtype takes
    the data's trailing extents as its data dimensions."""
    sub_shape = _split_dtype(dtype)[1]
    if sub_shape:
        if shape[len(shape) - len(sub_shape):] != sub_shape:
            raise ValueError(f"data of shape {shape} does not end in the dtype's shape {sub_shape}")
        shape = shape[: len(shape) - len(sub_shape)]
    return shape


def allocate_copy(r: Request, host: np.ndarray | None, src: StorageCore | None,
                  context: str) -> int:
    """A new storage handle from @p r holding a copy of @p host (any layout, converted by the C
    library) or of the storage @p src (host or device)."""
    if host is not None:
        desc, keep = _array_desc(_copyable_host(host, r.base_dtype))
        handle = allocate(r, _capi.INIT_COPY, context, source=desc)
        del keep
        return handle
    assert src is not None  # copy_source gives one of the two
    handle = allocate(r, _capi.INIT_UNINITIALIZED, context)
    try:
        check(lib.gtstorage_copy(handle, src._handle), context)
    except BaseException:
        lib.gtstorage_release(handle)
        raise
    return handle


def _copyable_host(host: np.ndarray, base: np.dtype) -> np.ndarray:
    """@p host in a form the C copy takes: a native numeric dtype, no overlapping strides."""
    if host.dtype.kind not in "biufc" or not host.dtype.isnative:
        host = host.astype(base)
    if any(st == 0 for st in host.strides) and host.size > 1:
        host = np.ascontiguousarray(host)
    return host


# ---- library queries ---------------------------------------------------------------------


@public()
def plan(shape: int | Sequence[int], dtype: Any = np.float64, *, backend: Any = _UNSET,
         defaults: Any = _UNSET, aligned_index: Sequence[int] | None = None,
         dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = None,
         alignment_size: int | None = None, halo: Any = None, device: Any = _UNSET,
         managed: Any = _UNSET, pitch_padding: str | None = None) -> dict[str, Any]:
    """The library's allocation plan for these parameters, allocating nothing.

    Parameters
    ----------
    shape, dtype, backend, defaults, aligned_index, dimensions, dims, layout, alignment_size, halo, device, managed, pitch_padding
        As :func:`gtstorage.gdp3.empty`.

    Returns
    -------
    dict
        ``shape``, ``padded_shape``, ``strides`` (bytes), ``layout``, ``halo``,
        ``aligned_index``, ``dims``, ``dtype``, ``preset``, ``itemsize``, ``alignment_bytes``,
        ``byte_offset``, ``padded_bytes``, ``allocation_bytes``, ``contiguous_dim``, ``device``.
    """  # noqa: E501 - numpydoc wants the shared parameter names on one line
    key: tuple[object, ...] | None
    cached: dict[str, Any] | None
    try:
        if (aligned_index is None and layout is None and alignment_size is None and halo is None
                and device is _UNSET and managed is _UNSET and pitch_padding is None
                and type(shape) is tuple and type(dimensions) in _LABEL_TYPES
                and type(dims) in _LABEL_TYPES):
            # The common call: 8, 8.0 and True are one dict key, so the shape's element
            # types are part of it.
            key = (shape, tuple(map(type, shape)), dtype, backend, defaults, dimensions, dims)
        else:  # the arguments' fingerprint keeps 8, 8.0, True and lists, tuples apart
            key = _fingerprint((shape, dtype, backend, defaults, aligned_index, dimensions,
                                dims, layout, alignment_size, halo, device, managed,
                                pitch_padding))
        cached = _plans.get(key)
    except TypeError:  # unhashable arguments: not cached
        key = cached = None
    if cached is not None:
        return cached.copy()  # the caller may change it
    o = validate(shape, dtype, backend=backend, defaults=defaults, aligned_index=aligned_index,
                 dimensions=dimensions, dims=dims, layout=layout, alignment_size=alignment_size,
                 halo=halo, device=device, managed=managed, pitch_padding=pitch_padding)
    result = _plan_of(o, "plan")
    if key is not None:
        if len(_plans) > 512:
            _plans.clear()
        _plans[key] = result
    return result.copy()


# Plans by argument fingerprint (plan() is pure: the same arguments give the same plan; a
# preset's plan does not depend on the device backend or the current device). Bounded.
_plans: dict[tuple[object, ...], dict[str, Any]] = {}
_LABEL_TYPES = (type(None), type(_UNSET), str)


def _plan_of(o: Request, context: str) -> dict[str, Any]:
    """The library's plan (gtstorage_plan) of prepared options, as :func:`plan` returns it."""
    out = _capi.new_struct(_capi.PlanInfo)
    check(lib.gtstorage_plan(ctypes.byref(o.struct), ctypes.byref(out)), context)
    n = out.ndim
    return {
        "shape": tuple(out.shape[:n]),
        "padded_shape": tuple(out.padded_shape[:n]),
        "strides": tuple(out.strides[:n]),
        "layout": tuple(out.layout[:n]),
        "halo": tuple((out.halo[d][0], out.halo[d][1]) for d in range(n)),
        "aligned_index": tuple(out.aligned_index[:n]),
        "dims": tuple(out.dims[d].value.decode("ascii") for d in range(n)),
        "dtype": np.dtype(out.typestr.decode("ascii")),
        "preset": out.preset.decode("ascii"),
        "itemsize": out.itemsize,
        "alignment_bytes": out.alignment_bytes,
        "byte_offset": out.byte_offset,
        "padded_bytes": out.padded_bytes,
        "allocation_bytes": out.allocation_bytes,
        "contiguous_dim": out.contiguous_dim,
        "device": "gpu" if out.device == _capi.DEVICE_GPU else None,
    }
