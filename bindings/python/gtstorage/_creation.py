# gtstorage Python binding: creation functions with GT4Py's and GDP-3's names and keywords.
#
# Every keyword becomes a field of gtstorage_create_options; the C library picks the layout,
# padding, alignment and default dims. Python only checks what a pointer cannot carry (the
# lengths of per-dimension sequences) and the Python types of the arguments.
"""Allocators: empty, zeros, ones, full, from_array, *_like, as_storage, storage."""

from __future__ import annotations

import ctypes
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _args, _capi
from ._args import public
from ._capi import GTStorageError, check, lib
from ._storage import (
    _STORAGE_PARAMETERS_DOC,
    Storage,
    SyncState,
    _array_desc,
    _cai_stream,
    _wait_for_producer,
    _wrap_cuda_array,
    wrap_buffers,
)

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


class _Options:
    """A filled gtstorage_create_options plus the ctypes arrays its pointers refer to."""

    def __init__(self) -> None:
        self.struct = _capi.new_struct(_capi.CreateOptions)
        self.keep: list[object] = []
        self.params: dict[str, Any] = {}

    def ptr(self, arr: ctypes.Array[Any], ctype: type[Any]) -> Any:
        self.keep.append(arr)
        return ctypes.cast(arr, ctypes.POINTER(ctype))


def _options(shape: Any, dtype: Any, *, backend: Any = _UNSET, defaults: Any = _UNSET,
             aligned_index: Any = None, dimensions: Any = _UNSET, dims: Any = _UNSET,
             layout: Any = None, alignment_size: Any = None, halo: Any = None,
             device: Any = _UNSET, managed: Any = _UNSET, device_id: Any = -1,
             pinned: Any = False, readonly: Any = False, pitch_padding: Any = None) -> _Options:
    o = _Options()
    s = o.struct
    shape = _ints("shape", shape, allow_scalar=True)
    dt, sub_shape = _split_dtype(dtype)
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

    if not isinstance(halo, bool) and isinstance(halo, (numbers.Integral, np.integer)):
        halo = [halo] * base_ndim  # one width for every (non-data) dimension
    if halo is not None:
        if isinstance(halo, (str, bytes)) or not hasattr(halo, "__iter__"):
            raise TypeError("halo must be a sequence of ints or (lower, upper) pairs, "
                            f"got {halo!r}")
        flat = []
        for h in halo:
            if _args.is_int(h):
                flat += [_args.int_scalar("halo", h)] * 2
            else:
                pair = _ints("halo", h)
                if len(pair) != 2:
                    raise ValueError("halo entries must be ints or (lower, upper) pairs, "
                                     f"got {h!r}")
                flat += pair
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


def _fingerprint(value: Any) -> tuple[object, ...]:
    """A hashable key that tells 8 from 8.0 and True (equal as dict keys) and lists from tuples;
    TypeError for unhashable values."""
    t = type(value)
    if t is tuple or t is list:
        return (t,) + tuple(map(_fingerprint, value))
    hash(value)
    return (t, value)


# Validated options of empty/zeros/ones calls, by argument fingerprint: a model allocates the same
# few fields again and again. Bounded (cleared past 512 entries); the struct is only read by
# gtstorage_create, so threads may share an entry.
_options_cache: dict[tuple[object, ...], _Options] = {}


def _cached_options(init: int, shape: Any, dtype: Any, **kw: Any) -> _Options:
    key: tuple[object, ...] | None
    try:
        key = (init, _fingerprint(shape), dtype, _fingerprint(tuple(kw.values())))
    except TypeError:  # unhashable (a callable layout is hashable; a dict is not): no cache
        key = None
    o = _options_cache.get(key) if key is not None else None
    if o is None:
        o = _options(shape, dtype, **kw)
        o.struct.init = init
        if key is not None:
            if len(_options_cache) > 512:
                _options_cache.clear()
            _options_cache[key] = o
    return o


def _create(o: _Options, init: int, context: str, *, fill: np.ndarray | None = None,
            source: _capi.Array | None = None) -> Storage:
    if o.struct.init != init:
        o.struct.init = init
    if fill is not None:
        o.struct.fill_value = fill.ctypes.data
        o.keep.append(fill)
    if source is not None:
        o.struct.source = ctypes.pointer(source)
    out = _capi.handle_t()
    check(lib.gtstorage_create(ctypes.byref(o.struct), ctypes.byref(out)), context)
    return Storage._from_handle(out.value, params=o.params)


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

    Returns
    -------
    Storage
        ``CPUStorage``, ``GPUStorage``, ``SoftwareManagedGPUStorage`` or
        ``CUDAManagedGPUStorage`` by where the buffers are.

    Raises
    ------
    TypeError, ValueError, OverflowError
        Bad arguments (the message names the function and the argument); ``RuntimeError``
        (:class:`GTUnknownPresetError`) for an unknown preset.
"""


def _doc(summary: str) -> str:
    return summary + "\n" + _PARAMETERS_DOC


@public()
def empty(shape: int | Sequence[int], dtype: Any = np.float64, *, backend: Any = _UNSET,
          defaults: Any = _UNSET, aligned_index: Sequence[int] | None = None,
          dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = None,
          alignment_size: int | None = None, halo: Any = None, device: Any = _UNSET,
          managed: Any = _UNSET, device_id: int = -1, pinned: bool = False,
          readonly: bool = False, pitch_padding: str | None = None) -> Storage:
    o = _cached_options(_capi.INIT_UNINITIALIZED, shape, dtype, backend=backend, defaults=defaults,
                        aligned_index=aligned_index, dimensions=dimensions, dims=dims,
                        layout=layout, alignment_size=alignment_size, halo=halo, device=device,
                        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
                        pitch_padding=pitch_padding)
    return _create(o, _capi.INIT_UNINITIALIZED, "empty")


@public()
def zeros(shape: int | Sequence[int], dtype: Any = np.float64, *, backend: Any = _UNSET,
          defaults: Any = _UNSET, aligned_index: Sequence[int] | None = None,
          dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = None,
          alignment_size: int | None = None, halo: Any = None, device: Any = _UNSET,
          managed: Any = _UNSET, device_id: int = -1, pinned: bool = False,
          readonly: bool = False, pitch_padding: str | None = None) -> Storage:
    o = _cached_options(_capi.INIT_ZEROS, shape, dtype, backend=backend, defaults=defaults,
                        aligned_index=aligned_index, dimensions=dimensions, dims=dims,
                        layout=layout, alignment_size=alignment_size, halo=halo, device=device,
                        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
                        pitch_padding=pitch_padding)
    return _create(o, _capi.INIT_ZEROS, "zeros")


@public()
def ones(shape: int | Sequence[int], dtype: Any = np.float64, *, backend: Any = _UNSET,
         defaults: Any = _UNSET, aligned_index: Sequence[int] | None = None,
         dimensions: Any = _UNSET, dims: Any = _UNSET, layout: Any = None,
         alignment_size: int | None = None, halo: Any = None, device: Any = _UNSET,
         managed: Any = _UNSET, device_id: int = -1, pinned: bool = False,
         readonly: bool = False, pitch_padding: str | None = None) -> Storage:
    o = _cached_options(_capi.INIT_ONES, shape, dtype, backend=backend, defaults=defaults,
                        aligned_index=aligned_index, dimensions=dimensions, dims=dims,
                        layout=layout, alignment_size=alignment_size, halo=halo, device=device,
                        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
                        pitch_padding=pitch_padding)
    return _create(o, _capi.INIT_ONES, "ones")


@public()
def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = np.float64, *,
         backend: Any = _UNSET, defaults: Any = _UNSET,
         aligned_index: Sequence[int] | None = None, dimensions: Any = _UNSET,
         dims: Any = _UNSET, layout: Any = None, alignment_size: int | None = None,
         halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET, device_id: int = -1,
         pinned: bool = False, readonly: bool = False,
         pitch_padding: str | None = None) -> Storage:
    o = _options(shape, dtype, backend=backend, defaults=defaults, aligned_index=aligned_index,
                 dimensions=dimensions, dims=dims, layout=layout, alignment_size=alignment_size,
                 halo=halo, device=device, managed=managed, device_id=device_id, pinned=pinned,
                 readonly=readonly, pitch_padding=pitch_padding)
    value = _scalar(fill_value, _split_dtype(dtype)[0])
    return _create(o, _capi.INIT_VALUE, "full", fill=value)


empty.__doc__ = _doc("""Storage with uninitialized values (GDP-3 ``empty``).""")
zeros.__doc__ = _doc("""Storage filled with 0, halo and padding included (GDP-3 ``zeros``).""")
ones.__doc__ = _doc("""Storage filled with 1 (GDP-3 ``ones``).""")
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


def _source_array(data: Any) -> tuple[np.ndarray | None, Storage | None]:
    """(host ndarray or None, device storage or None) for a copy source."""
    _args.array_source("data", data)
    if isinstance(data, Storage):
        return None, data
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        return None, _wrap_cuda_array(data)
    return np.asarray(data), None


def _copyable_host(host: np.ndarray, base: np.dtype) -> np.ndarray:
    """@p host in a form the C copy takes: a native numeric dtype, no overlapping strides."""
    if host.dtype.kind not in "biufc" or not host.dtype.isnative:
        host = host.astype(base)
    if any(st == 0 for st in host.strides) and host.size > 1:
        host = np.ascontiguousarray(host)
    return host


@public()
def from_array(data: Any, dtype: Any = None, *, backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Sequence[int] | None = None, dimensions: Any = _UNSET,
               dims: Any = _UNSET, layout: Any = None, alignment_size: int | None = None,
               halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
               device_id: int = -1, pinned: bool = False, readonly: bool = False,
               pitch_padding: str | None = None) -> Storage:
    host, src = _source_array(data)
    ref = host if host is not None else src
    assert ref is not None  # _source_array gives one of the two
    src_dtype = ref.dtype
    dt = src_dtype if dtype is None else _args.dtype(dtype)
    if dtype is None and not dt.isnative:
        dt = dt.newbyteorder("=")  # the library stores native byte order; the copy converts
    shape = tuple(ref.shape)
    base, sub_shape = _split_dtype(dt)
    if sub_shape:
        if shape[len(shape) - len(sub_shape):] != sub_shape:
            raise ValueError(f"data of shape {shape} does not end in the dtype's shape {sub_shape}")
        shape = shape[: len(shape) - len(sub_shape)]
    if dimensions is _UNSET and dims is _UNSET and hasattr(data, "__gt_dims__"):
        dims = tuple(data.__gt_dims__)
    o = _options(shape, dt, backend=backend, defaults=defaults, aligned_index=aligned_index,
                 dimensions=dimensions, dims=dims, layout=layout, alignment_size=alignment_size,
                 halo=halo, device=device, managed=managed, device_id=device_id, pinned=pinned,
                 readonly=readonly, pitch_padding=pitch_padding)
    if host is not None:
        desc, keep = _array_desc(_copyable_host(host, base))
        out = _create(o, _capi.INIT_COPY, "from_array", source=desc)
        del keep
        return out
    out = _create(o, _capi.INIT_UNINITIALIZED, "from_array")
    assert src is not None
    check(lib.gtstorage_copy(out._handle, src._handle), "from_array")
    return out


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


@public()
def empty_like(data: Any, dtype: Any = None, *, backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Any = _UNSET, dimensions: Any = _UNSET, dims: Any = _UNSET,
               layout: Any = _UNSET, alignment_size: Any = _UNSET, halo: Any = _UNSET,
               device: Any = _UNSET, managed: Any = _UNSET, device_id: Any = _UNSET,
               pinned: Any = _UNSET, readonly: Any = _UNSET,
               pitch_padding: Any = _UNSET) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, dict(
        backend=backend, defaults=defaults, aligned_index=aligned_index, dimensions=dimensions,
        dims=dims, layout=layout, alignment_size=alignment_size, halo=halo, device=device,
        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
        pitch_padding=pitch_padding))
    return empty(shape, dt, **kw)


@public()
def zeros_like(data: Any, dtype: Any = None, *, backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Any = _UNSET, dimensions: Any = _UNSET, dims: Any = _UNSET,
               layout: Any = _UNSET, alignment_size: Any = _UNSET, halo: Any = _UNSET,
               device: Any = _UNSET, managed: Any = _UNSET, device_id: Any = _UNSET,
               pinned: Any = _UNSET, readonly: Any = _UNSET,
               pitch_padding: Any = _UNSET) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, dict(
        backend=backend, defaults=defaults, aligned_index=aligned_index, dimensions=dimensions,
        dims=dims, layout=layout, alignment_size=alignment_size, halo=halo, device=device,
        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
        pitch_padding=pitch_padding))
    return zeros(shape, dt, **kw)


@public()
def ones_like(data: Any, dtype: Any = None, *, backend: Any = _UNSET, defaults: Any = _UNSET,
              aligned_index: Any = _UNSET, dimensions: Any = _UNSET, dims: Any = _UNSET,
              layout: Any = _UNSET, alignment_size: Any = _UNSET, halo: Any = _UNSET,
              device: Any = _UNSET, managed: Any = _UNSET, device_id: Any = _UNSET,
              pinned: Any = _UNSET, readonly: Any = _UNSET,
              pitch_padding: Any = _UNSET) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, dict(
        backend=backend, defaults=defaults, aligned_index=aligned_index, dimensions=dimensions,
        dims=dims, layout=layout, alignment_size=alignment_size, halo=halo, device=device,
        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
        pitch_padding=pitch_padding))
    return ones(shape, dt, **kw)


@public()
def full_like(data: Any, fill_value: Any, dtype: Any = None, *, backend: Any = _UNSET,
              defaults: Any = _UNSET, aligned_index: Any = _UNSET, dimensions: Any = _UNSET,
              dims: Any = _UNSET, layout: Any = _UNSET, alignment_size: Any = _UNSET,
              halo: Any = _UNSET, device: Any = _UNSET, managed: Any = _UNSET,
              device_id: Any = _UNSET, pinned: Any = _UNSET, readonly: Any = _UNSET,
              pitch_padding: Any = _UNSET) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, dict(
        backend=backend, defaults=defaults, aligned_index=aligned_index, dimensions=dimensions,
        dims=dims, layout=layout, alignment_size=alignment_size, halo=halo, device=device,
        managed=managed, device_id=device_id, pinned=pinned, readonly=readonly,
        pitch_padding=pitch_padding))
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


# ---- GDP-3 wrapping -----------------------------------------------------------------------------


def _host_interface(data: Any) -> dict[str, Any]:
    """Array-interface dict of a host buffer (no copy), with a NumPy array keeping it alive."""
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        # np.asarray() of a NumPy scalar is a new array (a silent copy): the scalar's own bytes,
        # immutable, are wrapped instead, read-only and with the scalar's dtype.
        arr = np.frombuffer(data, dtype=data.dtype).reshape(())
    elif hasattr(data, "__array_interface__") or hasattr(data, "__array_struct__"):
        arr = np.asarray(data)
    else:
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(
                f"as_storage: data must expose a buffer (__array_interface__, the buffer protocol),"
                f" got {type(data).__name__}; use from_array() to copy other data") from None
        # Through the memoryview: np.asarray(b"ab") would copy into a new 0-d "S2" array.
        try:
            arr = np.asarray(view)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"as_storage: the buffer of {type(data).__name__} (format "
                            f"{view.format!r}) has no NumPy dtype: {exc}") from None
    return {"array": arr, "data": arr.ctypes.data if arr.size else None, "shape": arr.shape,
            "strides": arr.strides, "typestr": arr.dtype.str, "readonly": not arr.flags.writeable}


@public()
def as_storage(data: Any = None, device_data: Any = None, *, sync_state: Any = None,
               dims: Any = _UNSET, dimensions: Any = _UNSET, halo: Any = None,
               readonly: bool | None = None, device_id: int = -1,
               shape: Sequence[int] | None = None, dtype: Any = None,
               layout: Sequence[int] | None = None, managed: Any = _UNSET, device: Any = _UNSET,
               backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Sequence[int] | None = None,
               alignment_size: int | None = None) -> Storage:
    """Storage over existing memory, without copying (GDP-3 ``as_storage``).

    Every parameter given is validated against the buffer (GDP-3), and the error says what does
    not match. A gtstorage :class:`Storage` as ``data`` gives a view sharing its buffers and
    :class:`SyncState`; its parameters are fixed, so ``shape``, ``dtype``, ``dims``, ``halo``,
    ``device``, ``managed``, ``device_id`` and ``sync_state`` must be its own, and
    ``readonly=True`` gives a read-only view (NumPy's ``setflags(write=False)`` on a view; only
    a storage with one buffer, host or device, has one).

    Parameters
    ----------
    data : array-like, optional
        Host buffer: a NumPy array, anything with ``__array_interface__`` or the buffer
        protocol, or any DLPack producer (``__dlpack__``: PyTorch tensors, JAX arrays, …); a
        device array (``__cuda_array_interface__`` only: CuPy, CUDA PyTorch tensors) is taken
        as ``device_data``.
    device_data : object, optional
        Device buffer (``__cuda_array_interface__`` or ``__dlpack__``). With both, the storage is
        a mirrored pair whose initial ``sync_state`` says which side is current.
    sync_state : SyncState or int, optional
        Initial state of a host + device pair (default: both equal).
    dims, dimensions : sequence of str, optional
        Dimension labels (default: the buffer's ``__gt_dims__`` or the library's default).
    halo : int or sequence, optional
        Halo widths (as in :func:`gtstorage.gdp3.empty`).
    readonly : bool, optional
        Refuse writes (default: the buffer's own flag; a read-only buffer cannot be made writable).
    device_id : int, optional
        Device ordinal of ``device_data`` (-1: as the pointer says).
    shape, dtype, layout : optional
        Checked against the buffer.
    managed, device : optional
        GDP-3 keywords; only values consistent with wrapping (and with a storage given as
        ``data``) are accepted.
    backend, defaults : str, optional
        A preset the buffer must suit: its stride order for these dims and its alignment of the
        aligned element are checked.
    aligned_index : sequence of int, optional
        Element whose address must be aligned (default: the first interior point).
    alignment_size : int, optional
        Alignment in bytes that element's address must have.

    Returns
    -------
    Storage
        Sharing the memory; the wrapped objects stay alive until the last view and DLPack
        export are gone.

    Raises
    ------
    TypeError, ValueError, OverflowError
        A buffer that cannot be wrapped or a parameter that does not match it (the message says
        which and how).
    """
    if data is None and device_data is None:
        raise TypeError("as_storage needs data, device_data or both")
    _args.array_source("data", data)
    _args.array_source("device_data", device_data)
    if readonly is not None and not isinstance(readonly, (bool, np.bool_)):
        raise TypeError(f"readonly must be None, True or False, got {readonly!r}")
    if isinstance(data, Storage) and device_data is None:
        return _as_storage_of_storage(
            data, sync_state=sync_state, dims=_alias("dimensions", dimensions, "dims", dims),
            halo=halo, readonly=readonly, device_id=device_id, shape=shape, dtype=dtype,
            layout=layout, managed=managed, device=device,
            preset=_alias("backend", backend, "defaults", defaults),
            aligned_index=aligned_index, alignment_size=alignment_size)
    if device_data is None:
        own = _library_storage(data)
        if own is not None:
            # A drop-in array over a storage's whole view: that storage's buffers (a view of it),
            # not a wrap of its memory. Keywords it does not satisfy (other dims, a halo) fall
            # through to the wrap below, which takes them or says what does not fit.
            try:
                return _as_storage_of_storage(
                    own, sync_state=sync_state,
                    dims=_alias("dimensions", dimensions, "dims", dims), halo=halo,
                    readonly=readonly, device_id=device_id, shape=shape, dtype=dtype,
                    layout=layout, managed=managed, device=device,
                    preset=_alias("backend", backend, "defaults", defaults),
                    aligned_index=aligned_index, alignment_size=alignment_size)
            except ValueError:
                pass
    if (device_data is None and hasattr(data, "__cuda_array_interface__")
            and not hasattr(data, "__array_interface__")):
        # A device array given as data (CuPy, a CUDA PyTorch tensor): its memory is the device
        # buffer, as from_array() takes it.
        if device in (None, "cpu"):
            raise ValueError(f"as_storage: device={device!r} contradicts data, a device array "
                             "(pass device='gpu' or leave device out)")
        data, device_data = None, data
    if device_data is None and _is_dlpack_only(data):
        return _as_storage_dlpack(data, dims=_alias("dimensions", dimensions, "dims", dims),
                                  halo=halo, readonly=readonly, shape=shape, dtype=dtype,
                                  layout=layout,
                                  preset=_alias("backend", backend, "defaults", defaults),
                                  aligned_index=aligned_index, alignment_size=alignment_size,
                                  device=device, managed=managed, device_id=device_id,
                                  sync_state=sync_state)
    if managed is not _UNSET and managed not in (None, False, "gtstorage", "gt4py"):
        raise ValueError(f"as_storage: managed={managed!r} cannot wrap existing buffers")
    if device is not _UNSET and device not in (None, "cpu", "gpu"):
        raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")
    if device in (None, "cpu") and device_data is not None:
        raise ValueError(f"as_storage: device={device!r} contradicts device_data (pass "
                         "device='gpu' or leave device out)")
    host = _host_interface(data) if data is not None else None
    dev = None
    if device_data is not None:
        if not hasattr(device_data, "__cuda_array_interface__"):
            raise TypeError("as_storage: device_data must expose __cuda_array_interface__")
        cai = device_data.__cuda_array_interface__
        dev_stream = _cai_stream(cai)
        dev = {"data": int(cai["data"][0]) or None, "shape": tuple(int(s) for s in cai["shape"]),
               "strides": (None if cai.get("strides") is None
                           else tuple(int(s) for s in cai["strides"])),
               "typestr": np.dtype(cai["typestr"]).str, "readonly": bool(cai["data"][1])}
        if host is not None:
            if tuple(host["shape"]) != dev["shape"] or host["typestr"] != dev["typestr"]:
                raise ValueError(f"as_storage: data {host['shape']} {host['typestr']} and "
                                 f"device_data {dev['shape']} {dev['typestr']} differ in shape "
                                 "or dtype")
    ref = host if host is not None else dev
    assert ref is not None  # data or device_data is given (checked above)
    if shape is not None and tuple(_ints("shape", shape, allow_scalar=True)) != tuple(ref["shape"]):
        raise ValueError(f"as_storage: shape {tuple(shape)} does not match the buffer's "
                         f"{tuple(ref['shape'])}")
    if dtype is not None and _args.dtype(dtype).str != ref["typestr"]:
        raise ValueError(f"as_storage: dtype {_args.dtype(dtype)} does not match the buffer's "
                         f"{ref['typestr']}")
    ndim = len(ref["shape"])
    d = _alias("dimensions", dimensions, "dims", dims)
    if (d is _UNSET or d is None) and hasattr(data if data is not None else device_data,
                                              "__gt_dims__"):
        d = tuple((data if data is not None else device_data).__gt_dims__)
    dims_str = None if d is _UNSET or d is None else _dims_string(d)
    halo_flat = None if halo is None else _halo_flat(halo, ndim)
    state_obj = None
    state = _capi.SYNC_CLEAN
    if sync_state is not None:
        if isinstance(sync_state, SyncState):
            state = sync_state.state
            state_obj = None if sync_state.is_bound else sync_state
        else:
            state = SyncState._check(sync_state)
    # A read-only source stays read-only: readonly=False cannot make immutable memory writable.
    if readonly is not None and not readonly and ref["readonly"]:
        raise ValueError("readonly=False was asked for, but the source buffer is read-only")
    ro = bool(readonly) if readonly is not None else bool(ref["readonly"])
    keep = tuple(x for x in (host["array"] if host else None, device_data) if x is not None)
    st = wrap_buffers(
        data=host["data"] if host else None,
        device_data=dev["data"] if dev else None,
        shape=tuple(ref["shape"]),
        host_strides=tuple(host["strides"]) if host else None,
        device_strides=dev["strides"] if dev else None,
        typestr=ref["typestr"],
        dims=dims_str,
        halo=halo_flat,
        readonly=ro,
        device_id=device_id,
        sync_state=state,
        keepalive=keep,
        sync_state_obj=state_obj,
    )
    st._base = data if data is not None else device_data
    if host is None or dev is None:
        # One buffer: device, managed and sync_state cannot be set, only stated; a statement
        # the buffer contradicts (device="gpu" of host memory, a dirty side of a storage that
        # has one side) is an error, not something to ignore.
        # (The state asked for, as it was before the wrap bound a SyncState object to st.)
        _check_fixed(st, device=device, managed=managed, device_id=device_id,
                     sync_state=None if sync_state is None else state)
    _validate(st, _alias("backend", backend, "defaults", defaults), aligned_index,
              alignment_size, layout)
    return _wait_for_producer(st, dev_stream) if dev is not None else st


def _library_storage(data: object) -> Storage | None:
    """The Storage whose whole view @p data is (a drop-in array over libgtstorage memory with
    that storage's address, shape and strides), else None."""
    from ._allocation import _library_allocation

    record = _library_allocation(data)
    if record is None or isinstance(data, Storage):
        return None
    st = record.storage
    key = "__array_interface__" if record.is_host else "__cuda_array_interface__"
    try:
        theirs = getattr(data, key)
        ours = getattr(st, key)
    except (AttributeError, TypeError, ValueError, GTStorageError):
        return None
    same = (int(theirs["data"][0]) == int(ours["data"][0])
            and tuple(theirs["shape"]) == tuple(ours["shape"])
            and np.dtype(theirs["typestr"]) == np.dtype(ours["typestr"])
            and _strides_of(theirs) == _strides_of(ours))
    return st if same else None


def _strides_of(interface: dict[str, Any]) -> tuple[int, ...]:
    """Byte strides of an array interface (C-contiguous when it says None)."""
    strides = interface.get("strides")
    if strides is not None:
        return tuple(int(x) for x in strides)
    out: list[int] = []
    step = np.dtype(interface["typestr"]).itemsize
    for extent in reversed(tuple(interface["shape"])):
        out.append(step)
        step *= int(extent)
    return tuple(reversed(out))


_MANAGED_NAMES = {None: False, False: False, "none": False, "gtstorage": "gtstorage",
                  "gt4py": "gtstorage", "mirror": "gtstorage", "cuda": "cuda", "unified": "cuda"}


def _as_storage_of_storage(st: Storage, *, sync_state: Any, dims: Any, halo: Any,
                           readonly: Any, device_id: Any, shape: Any, dtype: Any, layout: Any,
                           managed: Any, device: Any, preset: Any, aligned_index: Any,
                           alignment_size: Any) -> Storage:
    """GDP-3 ``as_storage`` of a gtstorage Storage: a view of the same buffers that shares its
    sync state. A storage's parameters are fixed, so every given parameter is checked against it
    (ValueError saying what does not match); ``readonly=True`` of a writable storage gives a
    read-only view (NumPy's ``setflags(write=False)`` on a view), which needs a storage with one
    buffer (a host + device pair's sync state cannot be shared by a second handle)."""
    if shape is not None:
        want = tuple(_ints("shape", shape, allow_scalar=True))
        if want != st.shape:
            raise ValueError(f"shape {want} does not match the storage's shape {st.shape}")
    if dtype is not None:
        dt = _args.dtype(dtype)
        if dt != st.dtype:
            raise ValueError(f"dtype {dt} does not match the storage's dtype {st.dtype} "
                             "(as_storage never converts; use astype() or from_array() for a "
                             "copy)")
    if dims is not _UNSET and dims is not None:
        labels = tuple(x for x in _dims_string(dims).split(",") if x)
        if labels != st.dims:
            raise ValueError(f"dims {labels} do not match the storage's dims {st.dims}")
    if halo is not None:
        flat = _halo_flat(halo, st.ndim)
        want_halo = tuple((flat[2 * d], flat[2 * d + 1]) for d in range(len(flat) // 2))
        if want_halo != st.halo:
            raise ValueError(f"halo {want_halo} does not match the storage's halo {st.halo}")
    _check_fixed(st, device=device, managed=managed, device_id=device_id, sync_state=sync_state)
    if readonly is not None and not readonly and st.readonly:
        raise ValueError("readonly=False was asked for, but the storage is read-only")
    if readonly and not st.readonly:
        view = _readonly_view(st)
    else:
        view = st[...]
    _validate(view, preset, aligned_index, alignment_size, layout)
    return view


def _check_fixed(st: Storage, *, device: Any, managed: Any, device_id: Any,
                 sync_state: Any) -> None:
    """Checks GDP-3 parameters that a storage fixed when it was made (its buffers' place,
    management, device and sync state) against the values given to ``as_storage``; a mismatch
    is a ValueError saying what does not match."""
    if device is not _UNSET:
        if not (device is None or (isinstance(device, str) and device in ("cpu", "gpu"))):
            raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")
        if (device == "gpu") != st._has_device:
            raise ValueError(f"device={device!r} does not match the storage's device={st.device!r}")
    if managed is not _UNSET:
        key = managed.lower() if isinstance(managed, str) else managed
        if not (key is None or key is False or (isinstance(key, str) and key in _MANAGED_NAMES)):
            raise ValueError(f"managed must be None, 'gtstorage' (or 'gt4py') or 'cuda', got "
                             f"{managed!r}")
        if _MANAGED_NAMES[key] != st.managed:
            raise ValueError(f"managed={managed!r} does not match the storage's "
                             f"managed={st.managed!r}")
    device_id = _args.int_scalar("device_id", device_id, _args.INT32_MIN, _args.INT32_MAX)
    if device_id != -1:
        if not st._has_device:
            raise ValueError(f"device_id={device_id} does not match: the storage has no device "
                             "buffer")
        have = st._geom(_capi.SIDE_DEVICE).device_id
        if have != device_id:
            raise ValueError(f"device_id={device_id} does not match the storage's device {have}")
    if sync_state is not None:
        own = st.sync_state
        if isinstance(sync_state, SyncState) and sync_state.is_bound:
            if sync_state is not own:
                raise ValueError("sync_state is the SyncState of another storage; a view shares "
                                 "the storage's own (storage.sync_state)")
        else:
            value = (sync_state.state if isinstance(sync_state, SyncState)
                     else SyncState._check(sync_state))
            if value != own.state:
                names = SyncState._NAMES
                raise ValueError(
                    f"sync_state {names[value]} does not match the storage's {names[own.state]} "
                    "(as_storage does not change the state of a storage: use modify() or "
                    "set_synchronized())")


def _readonly_view(st: Storage) -> Storage:
    """A read-only storage over the buffer of @p st (kept alive by it): a new handle whose
    buffer refuses writes, as the library keeps the flag per buffer."""
    if st._has_host and st._has_device:
        raise ValueError(
            "readonly=True: a read-only view of a storage with host and device buffers cannot "
            "share its sync state (it lives with the buffers, which stay writable); only a "
            "host-only or device-only storage has read-only views")
    side = _capi.SIDE_HOST if st._has_host else _capi.SIDE_DEVICE
    g = st._geom(side)
    if side == _capi.SIDE_DEVICE:
        # Work queued on the source's stream is settled before a second handle uses the memory.
        check(lib.gtstorage_wait_stream(st._handle, 0), "as_storage")
    halo = [h for pair in g.halo for h in pair]
    out = wrap_buffers(
        data=(g.data or None) if side == _capi.SIDE_HOST else None,
        device_data=(g.data or None) if side == _capi.SIDE_DEVICE else None,
        shape=g.shape,
        host_strides=g.strides if side == _capi.SIDE_HOST else None,
        device_strides=g.strides if side == _capi.SIDE_DEVICE else None,
        typestr=g.typestr,
        dims=",".join(g.dims) or None,
        halo=halo or None,
        readonly=True,
        device_id=g.device_id if side == _capi.SIDE_DEVICE else -1,
        keepalive=st,
    )
    out._params = dict(st._params)
    out._base = st if st._base is None else st._base
    return out


def _is_dlpack_only(data: Any) -> bool:
    """A DLPack producer that offers no NumPy/buffer interface (torch tensors, JAX arrays), or a
    DLPack capsule itself."""
    if type(data).__name__ == "PyCapsule":
        return True
    if isinstance(data, np.ndarray) or not hasattr(data, "__dlpack__"):
        return False
    if hasattr(data, "__array_interface__") or hasattr(data, "__cuda_array_interface__"):
        return False
    try:
        memoryview(data)
        return False
    except TypeError:
        return True


def _as_storage_dlpack(data: Any, *, dims: Any, halo: Any, readonly: Any, shape: Any,
                       dtype: Any, layout: Any, preset: Any, aligned_index: Any,
                       alignment_size: Any, device: Any, managed: Any, device_id: Any,
                       sync_state: Any) -> Storage:
    from ._dlpack_import import wrap_dlpack

    dims_str = None if dims is _UNSET or dims is None else _dims_string(dims)
    if dims_str is None and hasattr(data, "__gt_dims__"):
        dims_str = _dims_string(tuple(data.__gt_dims__))
    halo_flat = None
    if halo is not None:
        ndim = len(data.shape) if hasattr(data, "shape") else None
        halo_flat = _halo_flat(halo, ndim)
    handle = wrap_dlpack(data, context="as_storage(data)", dims=dims_str, halo=halo_flat,
                         readonly=bool(readonly))
    st = Storage._from_handle(handle)
    st._base = data
    if readonly is False and st.readonly:
        raise ValueError("readonly=False was asked for, but the DLPack tensor is read-only")
    if shape is not None and tuple(_ints("shape", shape, allow_scalar=True)) != st.shape:
        raise ValueError(f"shape {tuple(shape)} does not match the buffer's {st.shape}")
    if dtype is not None and _args.dtype(dtype) != st.dtype:
        raise ValueError(f"dtype {_args.dtype(dtype)} does not match the buffer's {st.dtype}")
    # The tensor says where it lives; what the caller says about it must agree.
    _check_fixed(st, device=device, managed=managed, device_id=device_id, sync_state=sync_state)
    _validate(st, preset, aligned_index, alignment_size, layout)
    return st


def _halo_flat(halo: Any, ndim: int | None) -> list[int]:
    if _args.is_int(halo):
        if ndim is None:
            raise TypeError("halo must be a sequence when the buffer's ndim is unknown")
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
    if ndim is not None and len(flat) != 2 * ndim:
        raise ValueError(f"halo has {len(flat) // 2} entries for {ndim} dimensions")
    return flat


def _validate(st: Storage, preset: Any, aligned_index: Any, alignment_size: Any,
              layout: Any) -> None:
    """GDP-3: "the consistency of the parameters with the buffers is validated". Checks the
    wrapped storage @p st against a preset (stride order for its dims, alignment of the aligned
    element), an explicit layout, aligned_index and alignment_size; raises ValueError naming
    what does not match."""
    if layout is not None:
        lay = tuple(_ints("layout", layout))
        if lay != st.layout:
            raise ValueError(f"layout {lay} does not match the buffer's {st.layout}")
    if preset is _UNSET or preset is None:
        preset = None
    elif not isinstance(preset, str):
        raise TypeError(f"backend/defaults must be a preset name (str), got {preset!r}")
    if preset is None and aligned_index is None and alignment_size is None:
        return
    ndim = st.ndim
    if aligned_index is not None:
        ai = tuple(_ints("aligned_index", aligned_index))
        if len(ai) != ndim:
            raise ValueError(f"aligned_index {ai} has {len(ai)} entries for {ndim} dimensions")
        for d, (i, n) in enumerate(zip(ai, st.shape)):
            if not 0 <= i < max(n, 1):
                raise ValueError(f"aligned_index {ai} is outside the buffer's shape {st.shape} "
                                 f"in dimension {d}")
    else:
        ai = st.__gt_origin__
    alignment = None
    if alignment_size is not None:
        alignment = _args.int_scalar("alignment_size", alignment_size)
        if alignment <= 0:
            raise ValueError(f"alignment_size must be positive, got {alignment}")
    if preset is not None:
        p = plan(st.shape, st.dtype, backend=preset, dims=st.dims)
        if p["layout"] != st.layout:
            raise ValueError(
                f"the buffer's stride order {st.layout} (strides {st.strides}) is not preset "
                f"{preset!r}'s {p['layout']} for dims {st.dims}")
        if p["device"] == "gpu" and not st._has_device:
            raise ValueError(f"preset {preset!r} is a device preset, but no device buffer was "
                             "given")
        if alignment is None:
            alignment = p["alignment_bytes"]
    if alignment is not None and alignment > 1:
        g = st._geom()
        address = g.data + sum(i * s for i, s in zip(ai, g.strides))
        if address % alignment:
            raise ValueError(
                f"the element at aligned_index {tuple(ai)} (address {address:#x}) is not aligned "
                f"to {alignment} bytes (it is {address % alignment} bytes past a boundary)")


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


# ---- library queries ----------------------------------------------------------------------------


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
    o = _options(shape, dtype, backend=backend, defaults=defaults, aligned_index=aligned_index,
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


def _plan_of(o: _Options, context: str) -> dict[str, Any]:
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
