# gtstorage Python binding: creation functions with GT4Py's and GDP-3's names and keywords.
#
# Every keyword becomes a field of gtstorage_create_options; the C library picks the layout,
# padding, alignment and default dims. Python only checks what a pointer cannot carry (the
# lengths of per-dimension sequences) and the Python types of the arguments.
"""Allocators: empty, zeros, ones, full, from_array, *_like, as_storage, storage."""

from __future__ import annotations

import ctypes
import numbers
import operator
from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _capi
from ._capi import check, lib
from ._storage import Storage, SyncState, _cai_stream, _wait_for_producer, _wrap_cuda_array, wrap_buffers

_UNSET: Any = type("_Unset", (), {"__repr__": lambda self: "<unset>"})()

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


def _ints(name: str, values, *, allow_scalar: bool = False) -> list:
    if allow_scalar and isinstance(values, (numbers.Integral, np.integer)):
        values = (values,)
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{name} must be a sequence of ints, got {values!r}")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{name} must be a sequence of ints, got {values!r}") from None
    return out


def _dims_string(dims) -> str:
    """Dims labels as the C library's comma-separated string ("I,J,K,0")."""
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
    if not labels:
        raise ValueError("dims must not be empty")
    return ",".join(labels)


def _alias(name_a: str, a, name_b: str, b):
    if a is not _UNSET and b is not _UNSET and a != b:
        raise TypeError(f"{name_a}={a!r} and {name_b}={b!r} are aliases; give only one")
    return a if a is not _UNSET else b


def _split_dtype(dtype):
    """NumPy dtype and the extra trailing dims of a sub-array dtype such as (float, (3,))."""
    dt = np.dtype(dtype)
    if dt.subdtype is not None:
        base, sub_shape = dt.subdtype
        return np.dtype(base), tuple(sub_shape)
    return dt, ()


class _Options:
    """A filled gtstorage_create_options plus the ctypes arrays its pointers refer to."""

    def __init__(self):
        self.struct = _capi.new_struct(_capi.CreateOptions)
        self.keep = []
        self.params: Dict[str, Any] = {}

    def ptr(self, arr, ctype):
        self.keep.append(arr)
        return ctypes.cast(arr, ctypes.POINTER(ctype))


def _options(shape, dtype, *, backend=_UNSET, defaults=_UNSET, aligned_index=None,
             dimensions=_UNSET, dims=_UNSET, layout=None, alignment_size=None, halo=None,
             device=_UNSET, managed=_UNSET, device_id=-1, pinned=False, readonly=False) -> _Options:
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
        b = preset.encode("utf-8")
        o.keep.append(b)
        s.preset = b
        o.params["backend"] = preset

    dims = _alias("dimensions", dimensions, "dims", dims)
    if dims is not _UNSET and dims is not None:
        labels = _dims_string(dims).split(",")
        if sub_shape:
            # GT4Py: a sub-array dtype adds data dimensions "0", "1", … after the given ones.
            labels += [str(i) for i in range(len(sub_shape))]
        if len(labels) != ndim:
            raise ValueError(f"dims {tuple(labels)} has {len(labels)} labels for a shape of "
                             f"{ndim} dimensions {tuple(shape)}")
        d = ",".join(labels).encode("ascii")
        o.keep.append(d)
        s.dims = d
    elif sub_shape:
        # The default labels of the base shape come from the library (GT4Py's rule), then the
        # data dimensions of the sub-array dtype follow.
        labels = list(plan(shape[:base_ndim], dt, backend=preset if preset is not _UNSET else None)["dims"])
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
        s.layout = o.ptr(_capi.int32_array(lay), ctypes.c_int32)
        o.params["layout_given"] = True

    if isinstance(halo, (numbers.Integral, np.integer)) and not isinstance(halo, bool):
        halo = [halo] * base_ndim  # one width for every (non-data) dimension
    if halo is not None:
        if isinstance(halo, (str, bytes)) or not hasattr(halo, "__iter__"):
            raise TypeError(f"halo must be a sequence of ints or (lower, upper) pairs, got {halo!r}")
        flat = []
        for h in halo:
            if isinstance(h, (numbers.Integral, np.integer)) and not isinstance(h, bool):
                flat += [operator.index(h)] * 2
            else:
                pair = _ints("halo", h)
                if len(pair) != 2:
                    raise ValueError(f"halo entries must be ints or (lower, upper) pairs, got {h!r}")
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
            raise ValueError(f"aligned_index {tuple(ai)} has {len(ai)} entries for {ndim} dimensions")
        s.aligned_index = o.ptr(_capi.int64_array(ai), ctypes.c_int64)

    if alignment_size is not None:
        if isinstance(alignment_size, bool):
            raise TypeError("alignment_size must be an int (bytes)")
        try:
            s.alignment_bytes = operator.index(alignment_size)
        except TypeError:
            raise TypeError(f"alignment_size must be an int (bytes), got {alignment_size!r}") from None
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
            raise ValueError(f"managed must be None, 'gtstorage' (or 'gt4py') or 'cuda', got {managed!r}")
        s.managed = _MANAGED[key]

    try:
        s.device_id = operator.index(device_id)
    except TypeError:
        raise TypeError(f"device_id must be an int, got {device_id!r}") from None
    s.host_memory = _capi.HOST_PINNED if pinned else _capi.HOST_PAGEABLE
    s.readonly = 1 if readonly else 0
    o.params.update(device_id=s.device_id, pinned=bool(pinned))
    return o


def _create(o: _Options, init: int, context: str, *, fill=None, source=None) -> Storage:
    o.struct.init = init
    if fill is not None:
        o.struct.fill_value = fill.ctypes.data
        o.keep.append(fill)
    if source is not None:
        o.struct.source = ctypes.pointer(source)
    out = _capi.handle_t()
    check(lib.gtstorage_create(ctypes.byref(o.struct), ctypes.byref(out)), context)
    return Storage._from_handle(out.value, params=o.params)


# ---- GT4Py allocators ---------------------------------------------------------------------------


def empty(shape: Sequence[int], dtype=np.float64, *, backend=_UNSET, aligned_index=None,
          dimensions=_UNSET, **kwargs) -> Storage:
    """Storage with uninitialized values (GT4Py ``gt4py.storage.empty``).

    Keywords: ``backend``/``defaults`` (preset name, default "numpy"), ``aligned_index``,
    ``dimensions``/``dims``, ``layout``, ``alignment_size`` (bytes), ``halo`` (ints or
    (lower, upper) pairs), ``device`` (None or "gpu"), ``managed`` (None, "gtstorage"/"gt4py",
    "cuda"), ``device_id``, ``pinned``, ``readonly``.
    """
    o = _options(shape, dtype, backend=backend, aligned_index=aligned_index,
                 dimensions=dimensions, **kwargs)
    return _create(o, _capi.INIT_UNINITIALIZED, "empty")


def zeros(shape: Sequence[int], dtype=np.float64, *, backend=_UNSET, aligned_index=None,
          dimensions=_UNSET, **kwargs) -> Storage:
    """Storage filled with 0 (halo and padding included)."""
    o = _options(shape, dtype, backend=backend, aligned_index=aligned_index,
                 dimensions=dimensions, **kwargs)
    return _create(o, _capi.INIT_ZEROS, "zeros")


def ones(shape: Sequence[int], dtype=np.float64, *, backend=_UNSET, aligned_index=None,
         dimensions=_UNSET, **kwargs) -> Storage:
    """Storage filled with 1."""
    o = _options(shape, dtype, backend=backend, aligned_index=aligned_index,
                 dimensions=dimensions, **kwargs)
    return _create(o, _capi.INIT_ONES, "ones")


def full(shape: Sequence[int], fill_value, dtype=np.float64, *, backend=_UNSET,
         aligned_index=None, dimensions=_UNSET, **kwargs) -> Storage:
    """Storage filled with ``fill_value`` (converted to ``dtype`` like NumPy)."""
    o = _options(shape, dtype, backend=backend, aligned_index=aligned_index,
                 dimensions=dimensions, **kwargs)
    value = _scalar(fill_value, _split_dtype(dtype)[0])
    return _create(o, _capi.INIT_VALUE, "full", fill=value)


def _scalar(value, dtype: np.dtype) -> np.ndarray:
    if isinstance(value, Storage):
        value = value.__array__()
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise ValueError(f"fill_value must be a scalar, got an array of shape {arr.shape}")
    return np.array(arr, dtype=dtype)


def _source_array(data):
    """(host ndarray or None, device storage or None) for a copy source."""
    if isinstance(data, Storage):
        return None, data
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        return None, _wrap_cuda_array(data)
    return np.asarray(data), None


def from_array(data, dtype=None, *, backend=_UNSET, aligned_index=None, dimensions=_UNSET,
               **kwargs) -> Storage:
    """New storage with a copy of ``data`` (any source layout, host or device, converted to
    ``dtype``; None keeps the data's dtype)."""
    host, src = _source_array(data)
    src_dtype = (host if host is not None else src).dtype
    dt = np.dtype(src_dtype if dtype is None else dtype)
    if dtype is None and not dt.isnative:
        dt = dt.newbyteorder("=")  # the library stores native byte order; the copy converts
    shape = tuple(host.shape if host is not None else src.shape)
    base, sub_shape = _split_dtype(dt)
    if sub_shape:
        if shape[len(shape) - len(sub_shape):] != sub_shape:
            raise ValueError(f"data of shape {shape} does not end in the dtype's shape {sub_shape}")
        shape = shape[: len(shape) - len(sub_shape)]
    if dimensions is _UNSET and "dims" not in kwargs and hasattr(data, "__gt_dims__"):
        kwargs["dims"] = tuple(data.__gt_dims__)
    o = _options(shape, dt, backend=backend, aligned_index=aligned_index, dimensions=dimensions,
                 **kwargs)
    if host is not None:
        if host.dtype.kind not in "biufc" or not host.dtype.isnative:
            host = host.astype(base)
        if any(st == 0 for st in host.strides) and host.size > 1:
            host = np.ascontiguousarray(host)
        from ._storage import _array_desc

        desc, keep = _array_desc(host)
        out = _create(o, _capi.INIT_COPY, "from_array", source=desc)
        del keep
        return out
    out = _create(o, _capi.INIT_UNINITIALIZED, "from_array")
    check(lib.gtstorage_copy(out._handle, src._handle), "from_array")
    return out


# ---- GDP-3 *_like ------------------------------------------------------------------------------


def _like_kwargs(data, dtype, kwargs: Dict[str, Any]):
    """Shape, dtype and keywords of a *_like call: unset parameters taken from ``data``."""
    kw = dict(kwargs)
    if isinstance(data, Storage):
        shape = data.shape
        dt = data.dtype if dtype is None else dtype
        p = data._params
        override_layout = any(k in kw for k in ("layout", "dims", "dimensions", "backend", "defaults"))
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
        arr = np.asarray(data) if not hasattr(data, "__cuda_array_interface__") else None
        if arr is None:
            cai = data.__cuda_array_interface__
            shape, dt = tuple(cai["shape"]), np.dtype(cai["typestr"] if dtype is None else dtype)
            kw.setdefault("device", "gpu")
        else:
            shape, dt = arr.shape, arr.dtype if dtype is None else dtype
        if "dims" not in kw and "dimensions" not in kw and hasattr(data, "__gt_dims__"):
            kw["dims"] = tuple(data.__gt_dims__)
    return shape, dt, kw


def empty_like(data, dtype=None, **kwargs) -> Storage:
    """Like ``empty`` with the parameters not given taken from ``data`` (a Storage or array)."""
    shape, dt, kw = _like_kwargs(data, dtype, kwargs)
    return empty(shape, dt, **kw)


def zeros_like(data, dtype=None, **kwargs) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, kwargs)
    return zeros(shape, dt, **kw)


def ones_like(data, dtype=None, **kwargs) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, kwargs)
    return ones(shape, dt, **kw)


def full_like(data, fill_value, dtype=None, **kwargs) -> Storage:
    shape, dt, kw = _like_kwargs(data, dtype, kwargs)
    return full(shape, fill_value, dt, **kw)


# ---- GDP-3 wrapping -----------------------------------------------------------------------------


def _host_interface(data) -> Dict[str, Any]:
    """Array-interface dict of a host buffer (no copy), with a NumPy array keeping it alive."""
    if isinstance(data, np.ndarray):
        arr = data
    elif hasattr(data, "__array_interface__") or hasattr(data, "__array_struct__"):
        arr = np.asarray(data)
    else:
        try:
            memoryview(data)
        except TypeError:
            raise TypeError(
                f"as_storage: data must expose a buffer (__array_interface__, the buffer protocol),"
                f" got {type(data).__name__}; use from_array() to copy other data") from None
        arr = np.asarray(data)
    return {"array": arr, "data": arr.ctypes.data if arr.size else None, "shape": arr.shape,
            "strides": arr.strides, "typestr": arr.dtype.str, "readonly": not arr.flags.writeable}


def as_storage(data=None, device_data=None, *, sync_state=None, dims=_UNSET, dimensions=_UNSET,
               halo=None, readonly=None, device_id=-1, shape=None, dtype=None, layout=None,
               managed=_UNSET, device=_UNSET, **kwargs) -> Storage:
    """Storage over existing memory, without copying (GDP-3 ``as_storage``).

    ``data`` is a host buffer (NumPy array or anything with ``__array_interface__``/the buffer
    protocol), ``device_data`` a device buffer (``__cuda_array_interface__``); with both, the
    storage is a mirrored pair whose initial ``sync_state`` says which side is current. The
    wrapped objects stay alive until the last view and DLPack export are gone. ``shape``,
    ``dtype`` and ``layout`` are checked against the buffers.
    """
    if kwargs:
        unknown = ", ".join(sorted(kwargs))
        raise TypeError(f"as_storage: unsupported keyword(s) {unknown} (the layout of wrapped "
                        "memory is the caller's; use from_array() to re-layout)")
    if data is None and device_data is None:
        raise TypeError("as_storage needs data, device_data or both")
    if isinstance(data, Storage) and device_data is None:
        view = data[...]
        return view
    if managed is not _UNSET and managed not in (None, False, "gtstorage", "gt4py"):
        raise ValueError(f"as_storage: managed={managed!r} cannot wrap existing buffers")
    if device is not _UNSET and device not in (None, "cpu", "gpu"):
        raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")
    if device in (None, "cpu") and device_data is not None:
        raise ValueError("as_storage: device=None contradicts device_data")
    host = _host_interface(data) if data is not None else None
    dev = None
    if device_data is not None:
        if not hasattr(device_data, "__cuda_array_interface__"):
            raise TypeError("as_storage: device_data must expose __cuda_array_interface__")
        cai = device_data.__cuda_array_interface__
        dev_stream = _cai_stream(cai)
        dev = {"data": int(cai["data"][0]) or None, "shape": tuple(int(s) for s in cai["shape"]),
               "strides": None if cai.get("strides") is None else tuple(int(s) for s in cai["strides"]),
               "typestr": np.dtype(cai["typestr"]).str, "readonly": bool(cai["data"][1])}
        if host is not None:
            if tuple(host["shape"]) != dev["shape"] or host["typestr"] != dev["typestr"]:
                raise ValueError(f"as_storage: data {host['shape']} {host['typestr']} and device_data "
                                 f"{dev['shape']} {dev['typestr']} differ in shape or dtype")
    ref = host if host is not None else dev
    if shape is not None and tuple(_ints("shape", shape, allow_scalar=True)) != tuple(ref["shape"]):
        raise ValueError(f"as_storage: shape {tuple(shape)} does not match the buffer's {tuple(ref['shape'])}")
    if dtype is not None and np.dtype(dtype).str != ref["typestr"]:
        raise ValueError(f"as_storage: dtype {np.dtype(dtype)} does not match the buffer's {ref['typestr']}")
    ndim = len(ref["shape"])
    d = _alias("dimensions", dimensions, "dims", dims)
    if (d is _UNSET or d is None) and hasattr(data if data is not None else device_data, "__gt_dims__"):
        d = tuple((data if data is not None else device_data).__gt_dims__)
    dims_str = None if d is _UNSET or d is None else _dims_string(d)
    halo_flat = None
    if isinstance(halo, (numbers.Integral, np.integer)) and not isinstance(halo, bool):
        halo = [halo] * ndim
    if halo is not None:
        halo_flat = []
        for h in halo:
            if isinstance(h, (numbers.Integral, np.integer)) and not isinstance(h, bool):
                halo_flat += [operator.index(h)] * 2
            else:
                pair = _ints("halo", h)
                if len(pair) != 2:
                    raise ValueError(f"halo entries must be ints or (lower, upper) pairs, got {h!r}")
                halo_flat += pair
        if len(halo_flat) != 2 * ndim:
            raise ValueError(f"halo has {len(halo_flat) // 2} entries for {ndim} dimensions")
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
    if layout is not None:
        lay = tuple(_ints("layout", layout))
        if lay != st.layout:
            raise ValueError(f"as_storage: layout {lay} does not match the buffer's {st.layout}")
    return _wait_for_producer(st, dev_stream) if dev is not None else st


def storage(data=None, device_data=None, *, dtype=None, copy=True, sync_state=None,
            **kwargs) -> Storage:
    """GDP-3 ``storage``: a copy of ``data`` (or ``device_data``) with copy=True, else
    ``as_storage``. Without any data and copy=False it allocates like ``empty``."""
    if not copy:
        if data is None and device_data is None:
            shape = kwargs.pop("shape", None)
            if shape is None:
                raise TypeError("storage(copy=False) without data needs shape")
            return empty(shape, np.float64 if dtype is None else dtype, **kwargs)
        return as_storage(data, device_data, sync_state=sync_state, dtype=dtype, **kwargs)
    if data is None and device_data is None:
        raise TypeError("storage() needs data or device_data to copy")
    source = data
    if device_data is not None:
        state = sync_state.state if isinstance(sync_state, SyncState) else sync_state
        if data is None or state == _capi.SYNC_DEVICE_DIRTY:
            source = device_data
        kwargs.setdefault("device", "gpu")
    return from_array(source, dtype, **kwargs)


# ---- library queries ----------------------------------------------------------------------------


def plan(shape, dtype=np.float64, **kwargs) -> Dict[str, Any]:
    """The library's allocation plan for these parameters (allocates nothing): padded shape,
    strides, layout, halo, aligned index, dims, alignment and byte sizes."""
    o = _options(shape, dtype, **kwargs)
    out = _capi.new_struct(_capi.PlanInfo)
    check(lib.gtstorage_plan(ctypes.byref(o.struct), ctypes.byref(out)), "plan")
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
