# gtstorage Python binding: the GT4Py drop-in allocators (``gt4py.storage.empty`` & co.).
#
# They take GT4Py's arguments and return what gt4py.storage returns: a plain numpy.ndarray for
# host backends, a cupy.ndarray for device backends, over memory that libgtstorage allocated
# (the array's base owns one library reference and releases it when the last view goes). The
# layout is the C library's; this module only prepares options and builds the array.
#
# They are thin adapters over gtstorage._request, the options pipeline both faces share: this
# module turns GT4Py's arguments, defaults and errors into a Request (cached by GT4Py's key of the
# arguments in the one cache) and makes the array over the handle the shared allocators create.
# The native extension (gtstorage._native, when built) serves the common call from that cache and
# creates the storage and its ndarray in one C call.
"""GT4Py drop-in allocators returning NumPy (or CuPy) arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _args, _capi, _handle
from ._args import public
from ._capi import check, lib
from ._handle import _HandleOwner, _info, _OwnedReference
from ._library import presets
from ._request import (
    Request,
    _dims_string,
    _fingerprint,
    _plan_of,
    _split_dtype,
    _types,
    allocate,
    allocate_copy,
    cache,
    cached_request,
    copy_source,
    lookup,
    source_shape,
    validate,
)

__all__ = ["empty", "zeros", "ones", "full", "from_array", "empty_like", "zeros_like",
           "ones_like", "full_like"]

DTypeLike = Any
Array = Any  # numpy.ndarray or cupy.ndarray

_device_presets: dict[str, bool] | None = None


def _is_device_backend(backend: str | None) -> bool:
    global _device_presets
    if _device_presets is None:
        _device_presets = {p["name"]: p["device"] == "gpu" for p in presets()}
    if not backend:
        return False
    return _device_presets.get(backend, False)


def _key_part(value: Any) -> Any:
    return tuple(value) if type(value) is list else value


def _native_order(dtype: Any) -> Any:
    """GT4Py's element type for @p dtype: a non-native byte order becomes the native one
    (``">f8"`` allocates float64 arrays, as gt4py.storage does)."""
    dt = _args.dtype(dtype)
    if dt.subdtype is not None:  # (a sub-array dtype reports itself native whatever its base)
        base, sub_shape = dt.subdtype
        return dtype if base.isnative else np.dtype((base.newbyteorder("="), sub_shape))
    return dtype if dt.isnative else dt.newbyteorder("=")


def _prepare(init: int, shape: Any, dtype: Any, backend: Any, aligned_index: Any,
             dimensions: Any, layout: Any, alignment_size: Any, pitch_padding: Any = None,
             device_id: Any = None) -> Request:
    """The cached Request of these arguments, validated on first use."""
    key: tuple[object, ...] | None
    try:
        if (aligned_index is None and dimensions is None and layout is None
                and alignment_size is None and pitch_padding is None and device_id is None):
            key = (init, _key_part(shape), dtype, backend)
        else:
            # By fingerprint: 1.0, 1 and True are one dict key, but GT4Py refuses the first in
            # an aligned_index and accepts the others; validation must not depend on which of
            # them came first.
            key = (init, _key_part(shape), dtype, backend, _fingerprint(aligned_index),
                   _fingerprint(dimensions), _fingerprint(layout), _fingerprint(alignment_size),
                   pitch_padding, _fingerprint(device_id))
        # 8 == 8.0 == True as dict keys: a float shape must not reuse the entry of an int one
        # (GT4Py raises TypeError for it).
        entry = lookup(key, shape)
    except TypeError:  # unhashable arguments (e.g. a NumPy array as shape): not cached
        key, entry = None, None
    if entry is not None:
        return entry
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"backend must be a preset name (str), got {backend!r}")
    dtype = _native_order(dtype)
    if dimensions is not None:
        shape, dtype, aligned_index, dimensions = _gt4py_dimensions(shape, dtype, aligned_index,
                                                                    dimensions)
    c_device_id = _device_id(backend, device_id)

    def make() -> Request:
        r = validate(shape, dtype, backend=backend, aligned_index=aligned_index,
                     dimensions=dimensions, layout=layout, alignment_size=alignment_size,
                     pitch_padding=pitch_padding, device_id=c_device_id)
        r.struct.init = init
        r.device = _is_device_backend(backend)
        return r

    return cached_request(key, shape, make)


def _device_id(backend: Any, device_id: Any) -> int:
    """The C library's device_id of a drop-in call: None is -1 (the current device); host
    backends take only None or 0, as gt4py.next's CPU allocator."""
    if device_id is None:
        return -1
    value = _args.int_scalar("device_id", device_id, _args.INT32_MIN, _args.INT32_MAX)
    if value < 0:
        raise ValueError(f"device_id {value} must be >= 0 (None: the current device)")
    if not _is_device_backend(backend):
        if value != 0:
            raise ValueError(f"device_id {value}: backend {backend!r} allocates host memory "
                             "(device_id must be None or 0)")
        return -1
    return value


_CARTESIAN = ("I", "J", "K")


def _gt4py_dimensions(shape: Any, dtype: Any, aligned_index: Any,
                      dimensions: Any) -> tuple[Any, Any, Any, Any]:
    """GT4Py's reading of ``dimensions``, as labels the C library lays out by name.

    GT4Py 1.2.3 (``gt4py.storage.cartesian.layout.layout_maker_factory``) applies a backend's
    base layout by position, not by name: the first dimensions get the ranks of the I, J, K
    that ``dimensions`` contains, in I, J, K order, and the remaining ones are data dimensions
    (a sub-array dtype appends its own). ``dimensions=("K", "J", "I")`` is therefore laid out as
    ``("I", "J", "K")``. This returns (shape, dtype, aligned_index, labels) that give the C
    library's by-name layout exactly that: the labels are those canonical ones (a sub-array
    dtype's data dimensions made explicit). Arguments that are not a clean GT4Py call (bad
    types, unknown or repeated labels, a length mismatch) are returned unchanged, so that the
    usual checks report them.
    """
    try:
        labels = [d for d in _dims_string(dimensions).split(",") if d]
        base, sub_shape = _split_dtype(dtype)
    except (TypeError, ValueError):
        return shape, dtype, aligned_index, dimensions
    if not all(d in _CARTESIAN or (d.isascii() and d.isdigit()) for d in labels):
        return shape, dtype, aligned_index, dimensions
    cartesian = [d for d in _CARTESIAN if d in labels]
    if sum(d in _CARTESIAN for d in labels) != len(cartesian):  # a repeated I, J or K
        return shape, dtype, aligned_index, dimensions
    if not sub_shape:
        n = len(labels)
        data_dims = tuple(map(str, range(n - len(cartesian))))
        return shape, dtype, aligned_index, tuple(cartesian) + data_dims
    # GT4Py appends the sub-array's dimensions (data dimensions) to shape, dims and aligned index.
    if type(shape) not in (tuple, list) or not all(_args.is_int(e) for e in shape) \
            or len(shape) != len(labels):
        return shape, dtype, aligned_index, dimensions
    n = len(labels) + len(sub_shape)
    canonical = tuple(cartesian) + tuple(map(str, range(n - len(cartesian))))
    if aligned_index is not None:
        if type(aligned_index) not in (tuple, list) or len(aligned_index) != len(shape):
            return shape, dtype, aligned_index, dimensions
        aligned_index = tuple(aligned_index) + (0,) * len(sub_shape)
    return tuple(shape) + tuple(sub_shape), base, aligned_index, canonical


def _allocate(init: int, context: str, shape: Any, dtype: Any, backend: Any, aligned_index: Any,
              dimensions: Any, layout: Any, alignment_size: Any, pitch_padding: Any = None,
              device_id: Any = None) -> Array:
    """The work of empty/zeros/ones: a cache hit on the common call (a shape tuple, only dtype
    and backend given) costs one dict lookup before the native create."""
    if (aligned_index is None and dimensions is None and layout is None and alignment_size is None
            and pitch_padding is None and device_id is None and type(shape) is tuple):
        try:
            p = cache.get((init, shape, dtype, backend))
        except TypeError:  # an unhashable element: the full path says what is wrong
            p = None
        if p is not None and (p.shape is shape or p.shape_types == _types(shape)):
            if _native_create is not None and not p.device:
                result = _native_create(p.address)
                if type(result) is not int:
                    return result
                check(result, context)
            return _new_array(p, context)
    try:
        p = _prepare(init, shape, dtype, backend, aligned_index,
                     dimensions, layout, alignment_size, pitch_padding, device_id)
    except (TypeError, ValueError, OverflowError) as exc:
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (_args.prefix(exc.args[0], context),) + exc.args[1:]
        raise
    return _new_array(p, context)


_native_create = _capi.native.create_array if _capi.native is not None else None


def _new_array(p: Request, context: str) -> Array:
    """Creates the storage that @p p describes and returns the array over it."""
    native = _capi.native
    if native is not None and not p.device:
        result = native.create_array(p.address)
        if type(result) is int:
            check(result, context)
        return result
    return _array_over_handle(allocate(p, p.struct.init, context), p.device, context, p)


def _array_over_handle(handle: int, device: bool, context: str,
                       p: Request | None = None) -> Array:
    """The ndarray (or cupy.ndarray) over a handle whose one reference the caller gives up.
    With @p p, the geometry of an earlier allocation from the same options is reused and only
    the address is read."""
    try:
        if device:
            info = _info(handle, _capi.SIDE_DEVICE)
            return _cupy_array(handle, info, context)
        info = _info(handle, _capi.SIDE_HOST)
        template = p.host_interface if p is not None else None
        if template is None:
            n = int(info.ndim)
            template = {"shape": tuple(info.shape[:n]), "typestr": info.typestr.decode("ascii"),
                        "strides": tuple(info.strides[:n]), "version": 3,
                        "readonly": bool(info.readonly)}
            if p is not None:
                p.host_interface = template
        interface = dict(template)
        interface["data"] = (int(info.data or 0), interface.pop("readonly"))
    except BaseException:
        lib.gtstorage_release(handle)
        raise
    return np.asarray(_HandleOwner(handle, interface))


class _DeviceOwner(_OwnedReference):
    """An owned reference to a device storage that describes it to CuPy (CAI v3)."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, handle: int, interface: dict[str, Any]):
        super().__init__(handle)
        self.__cuda_array_interface__ = interface


def _cupy_array(handle: int, info: _capi.InterfaceInfo, context: str) -> Array:
    owner = None
    try:
        # (Read from _handle at each call: tests let the emulated device through as CUDA memory.)
        if int(info.device_type) not in _handle._CAI_DEVICE_TYPES:
            raise RuntimeError(
                f"{context}: the device backend is the emulated device (DLPack device type "
                f"{int(info.device_type)}: host memory), which CuPy cannot use; select a CUDA or "
                "HIP backend, or use gtstorage.gdp3 for device storages on the emulated device")
        try:
            cupy = _handle._cupy()
        except ImportError:
            # The wheel to name follows the memory: ROCm's for HIP, else CUDA's (a CUDA 13 build
            # runs only on drivers that run cupy-cuda13x; a CUDA 12 build, cupy-cuda12x).
            wheel = ("the cupy-rocm-* wheel of your ROCm" if int(info.device_type) == _capi.DL_ROCM
                     else "cupy-cuda13x, or cupy-cuda12x for a CUDA 12 build")
            raise RuntimeError(
                f"{context}: this backend allocates device memory and returns a cupy.ndarray, but "
                f"CuPy is not installed (pip install {wheel})") from None
        n = int(info.ndim)
        stream = int(info.stream)
        interface = {"shape": tuple(info.shape[:n]), "typestr": info.typestr.decode("ascii"),
                     "data": (int(info.data or 0), bool(info.readonly)),
                     "strides": tuple(info.strides[:n]), "version": 3,
                     "stream": stream if stream else 1}
        owner = _DeviceOwner(handle, interface)
        handle = 0
        return cupy.asarray(owner)
    finally:
        if handle:
            lib.gtstorage_release(handle)


# ---- public allocators -----------------------------------------------------------------------

# The docstring parts the allocators share.
_DOC_PARTS = {
    "shape": """    shape : int or sequence of int
        Extents of the array (a sub-array ``dtype`` appends its shape as data dimensions).""",
    "dtype": """    dtype : dtype-like, optional
        Element type (default ``numpy.float64``).""",
    "keywords": """    backend : str, optional
        A GT4Py backend or gtstorage preset name (``"numpy"``, ``"gt:cpu_kfirst"``,
        ``"gt:gpu"``, …); it decides stride order, padding, alignment and device.
    aligned_index : sequence of int, optional
        Index of the element whose address is aligned (default: the first element).
    dimensions : sequence of str, optional
        Labels of the dimensions (``"I"``, ``"J"``, ``"K"``, data dimensions ``"0"``, …), which
        choose the stride order as in GT4Py: by position (the first dimensions take the ranks
        of the I, J, K present, in that order; the others are data dimensions). They are not
        stored.
    layout : sequence of int, optional
        Stride order overriding the backend's (0 = largest stride), the allocation note's
        ``layout``.
    alignment_size : int, optional
        Alignment in bytes of the aligned element overriding the backend's: any positive
        multiple of the item size (or a divisor of it), as GT4Py allows.
    pitch_padding : None, "none" or "avoid_aliasing", optional
        Not in GT4Py (None, the default, gives GT4Py's strides). ``"avoid_aliasing"`` raises
        every stride of 4 KiB or more (other than the contiguous dimension's) to an odd multiple
        of 64 bytes (of lcm(64, alignment, itemsize)), so that no stride is a multiple of 4 KiB:
        layout-changing copies and stencils that read across planes or rows of power-of-two
        extents then stop evicting their own cache lines (the float64 F to K-fastest copy of a
        512x512x128 field ran 1.3-1.5x faster). The strides are not GT4Py's.
    device_id : int, optional
        Not in GT4Py: the GPU of a device backend (default None: the current device, as
        GT4Py). Host backends accept only None or 0.""",
    "returns": """    Returns
    -------
    numpy.ndarray or cupy.ndarray
        A NumPy array for host backends, a CuPy array for device backends; its memory belongs to
        libgtstorage and lives as long as the array or any view of it.

    Raises
    ------
    TypeError
        An argument of the wrong type.
    ValueError
        Illegal or inconsistent values (``RuntimeError`` for an unknown backend, like GT4Py).
    OverflowError
        An integer out of the range of the C API (int64 extents and indices).
    RuntimeError
        A device backend without CuPy, or on the emulated device (whose memory CuPy cannot
        use).
""",
}


def _summary(what: str, gt4py_name: str) -> str:
    return f"""Allocates an array {what} (``gt4py.storage.{gt4py_name}``).

    Parameters
    ----------
{{shape}}
{{dtype}}
{{keywords}}

{{returns}}"""


def _allocator(shape: int | Sequence[int], dtype: DTypeLike = np.float64, *,
               backend: str | None = "numpy", aligned_index: Sequence[int] | None = None,
               dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
               alignment_size: int | None = None,
               pitch_padding: str | None = None, device_id: int | None = None,
               _init: int = _capi.INIT_UNINITIALIZED, _context: str = "empty") -> Array:
    """empty, zeros and ones, written once (_args.variant gives each its _init and _context)."""
    return _allocate(_init, _context, shape, dtype, backend, aligned_index, dimensions, layout,
                     alignment_size, pitch_padding, device_id)


empty = _args.variant(_allocator, "empty", _summary(
    "of uninitialized values with the layout a backend wants\n   ", "empty"),
    _init=_capi.INIT_UNINITIALIZED, _context="empty")
zeros = _args.variant(_allocator, "zeros", _summary("filled with 0", "zeros"),
                      _init=_capi.INIT_ZEROS, _context="zeros")
ones = _args.variant(_allocator, "ones", _summary("filled with 1", "ones"),
                     _init=_capi.INIT_ONES, _context="ones")


@public()
def full(shape: int | Sequence[int], fill_value: Any, dtype: DTypeLike = np.float64, *,
         backend: str | None = "numpy", aligned_index: Sequence[int] | None = None,
         dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
         alignment_size: int | None = None,
         pitch_padding: str | None = None, device_id: int | None = None) -> Array:
    """Allocates an array filled with ``fill_value`` (``gt4py.storage.full``).

    Parameters
    ----------
{shape}
    fill_value : scalar
        Converted to the element type as ``dtype.type(fill_value)`` (GT4Py's conversion).
{dtype}
{keywords}

{returns}"""
    return _full("full", shape, fill_value, dtype, backend, aligned_index, dimensions, layout,
                 alignment_size, pitch_padding, device_id)


def _full(context: str, shape: Any, fill_value: Any, dtype: Any, backend: Any,
          aligned_index: Any, dimensions: Any, layout: Any, alignment_size: Any,
          pitch_padding: Any = None, device_id: Any = None) -> Array:
    _args.array_source("fill_value", fill_value)
    arr = _allocate(_capi.INIT_UNINITIALIZED, context, shape, dtype, backend, aligned_index,
                    dimensions, layout, alignment_size, pitch_padding, device_id)
    arr[...] = arr.dtype.type(fill_value)
    return arr


def _data_shape_dtype(data: Any) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """Shape and dtype of array-like @p data without copying it (host or device)."""
    _args.array_source("data", data)
    if hasattr(data, "__cuda_array_interface__") and not hasattr(data, "__array_interface__"):
        cai = data.__cuda_array_interface__
        return tuple(cai["shape"]), np.dtype(cai["typestr"])
    if hasattr(data, "shape") and hasattr(data, "dtype"):
        try:
            return tuple(data.shape), np.dtype(data.dtype)
        except TypeError:  # a dtype NumPy does not know by name (torch.float32): ask NumPy below
            pass
    arr = np.asarray(data)  # a view for arrays that export their memory (__array__, buffers)
    return arr.shape, arr.dtype


@public()
def from_array(data: Any, dtype: DTypeLike = np.float64, *, backend: str | None = "numpy",
               aligned_index: Sequence[int] | None = None,
               dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
               alignment_size: int | None = None,
               pitch_padding: str | None = None, device_id: int | None = None) -> Array:
    """Allocates an array with a copy of ``data`` (``gt4py.storage.from_array``).

    The copy changes layout and converts the element type in the C library (multi-threaded,
    cache-blocked), whatever the source layout; host and device sources are accepted.

    Parameters
    ----------
    data : array-like
        Source values (anything NumPy converts, or a device array with
        ``__cuda_array_interface__``); its shape is the result's shape (a sub-array ``dtype``
        takes its trailing extents as data dimensions).
    dtype : dtype-like or None, optional
        Element type of the result: ``numpy.float64`` by default, as in GT4Py; None keeps the
        source's.
{keywords}

{returns}"""
    host, src = copy_source(data)
    ref = host if host is not None else src
    assert ref is not None  # copy_source gives one of the two
    dt = _native_order(ref.dtype if dtype is None else dtype)
    dt = dt if isinstance(dt, np.dtype) else _args.dtype(dt)
    shape = source_shape(tuple(ref.shape), dt)
    p = _prepare(_capi.INIT_UNINITIALIZED, shape, dt, backend, aligned_index, dimensions,
                 layout, alignment_size, pitch_padding, device_id)
    handle = allocate_copy(p, host, src, "from_array")
    return _array_over_handle(handle, p.device, "from_array", p)


def _like(data: Any, dtype: Any, dimensions: Any) -> tuple[Any, Any, Any]:
    shape, dt = _data_shape_dtype(data)
    if dtype is not None:
        dt = _args.dtype(dtype)
    if dimensions is None and hasattr(data, "__gt_dims__"):
        dimensions = tuple(data.__gt_dims__)
    base, sub_shape = dt.subdtype if dt.subdtype is not None else (dt, ())
    if sub_shape:
        # As from_array: the data's trailing extents are the sub-array dtype's data dimensions
        # (the result has the data's shape).
        if tuple(shape[len(shape) - len(sub_shape):]) != tuple(sub_shape):
            raise ValueError(f"data of shape {tuple(shape)} does not end in the dtype's shape "
                             f"{tuple(sub_shape)}")
        shape = shape[: len(shape) - len(sub_shape)]
    return shape, dt, dimensions


def _allocator_like(data: Any, dtype: DTypeLike = None, *, backend: str | None = "numpy",
                    aligned_index: Sequence[int] | None = None,
                    dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
                    alignment_size: int | None = None,
                    pitch_padding: str | None = None, device_id: int | None = None,
                    _init: int = _capi.INIT_UNINITIALIZED,
                    _context: str = "empty_like") -> Array:
    """empty_like, zeros_like and ones_like, written once (see _allocator)."""
    shape, dt, dims = _like(data, dtype, dimensions)
    return _allocate(_init, _context, shape, dt, backend, aligned_index, dims, layout,
                     alignment_size, pitch_padding, device_id)


_LIKE_PARAMETERS = """
    GT4Py has no ``*_like``; these take GDP-3's rule: what is not given comes from ``data``
    (its shape, its dtype, its ``__gt_dims__`` as ``dimensions``).

    Parameters
    ----------
    data : array-like
        The template: a NumPy or CuPy array, a storage, anything NumPy converts. With a
        sub-array ``dtype``, its trailing extents must be the dtype's (as in
        :func:`from_array`).{fill_value}
    dtype : dtype-like, optional
        Element type (default: the data's).
{{keywords}}

{{returns}}"""


def _like_doc(what: str, like: str, fill_value: str = "") -> str:
    return (f"Allocates an array of {what} shaped like ``data`` (as :func:`{like}`).\n" +
            _LIKE_PARAMETERS.format(fill_value=fill_value))


empty_like = public()(_args.variant(
    _allocator_like, "empty_like", _like_doc("uninitialized values", "empty"),
    _init=_capi.INIT_UNINITIALIZED, _context="empty_like"))
zeros_like = public()(_args.variant(_allocator_like, "zeros_like", _like_doc("zeros", "zeros"),
                                    _init=_capi.INIT_ZEROS, _context="zeros_like"))
ones_like = public()(_args.variant(_allocator_like, "ones_like", _like_doc("ones", "ones"),
                                   _init=_capi.INIT_ONES, _context="ones_like"))


@public()
def full_like(data: Any, fill_value: Any, dtype: DTypeLike = None, *,
              backend: str | None = "numpy", aligned_index: Sequence[int] | None = None,
              dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
              alignment_size: int | None = None,
              pitch_padding: str | None = None, device_id: int | None = None) -> Array:
    shape, dt, dims = _like(data, dtype, dimensions)
    return _full("full_like", shape, fill_value, dt, backend, aligned_index, dims, layout,
                 alignment_size, pitch_padding, device_id)


full_like.__doc__ = _like_doc("``fill_value``", "full", """
    fill_value : scalar
        Converted to the element type as ``dtype.type(fill_value)`` (GT4Py's conversion).""")


def _plan(shape: int | Sequence[int], dtype: DTypeLike = np.float64, *,
          backend: str | None = "numpy", aligned_index: Sequence[int] | None = None,
          dimensions: Sequence[str] | None = None, layout: Sequence[int] | None = None,
          alignment_size: int | None = None,
          pitch_padding: str | None = None,
          device_id: int | None = None) -> dict[str, Any]:
    """The library's plan of a drop-in call (the array's shape, strides, alignment, device)
    allocating nothing, as :func:`gtstorage.gdp3.plan` returns it; device backends need no
    CuPy here (the tests compare GPU layouts with GT4Py's through it)."""
    p = _prepare(_capi.INIT_UNINITIALIZED, shape, dtype, backend, aligned_index, dimensions,
                 layout, alignment_size, pitch_padding, device_id)
    return _plan_of(p, "plan")


for _f in (empty, zeros, ones, full, from_array, empty_like, zeros_like, ones_like, full_like):
    if not _f.__doc__:  # (None under python -OO)
        continue
    _f.__doc__ = _f.__doc__.format(**_DOC_PARTS)
    if hasattr(_f, "__wrapped__"):  # the @public wrapper shares the text
        _f.__wrapped__.__doc__ = _f.__doc__
del _f


# The native fast path of empty/zeros/ones (gtstorage._native.allocator): a call with a shape
# tuple of ints and at most dtype and backend that hits the cache of _request is served in C;
# every other call goes to the Python function above, which it wraps (same name, doc and signature).
if _capi.native is not None and hasattr(_capi.native, "allocator"):
    empty = _capi.native.allocator(empty, cache, _capi.INIT_UNINITIALIZED)
    zeros = _capi.native.allocator(zeros, cache, _capi.INIT_ZEROS)
    ones = _capi.native.allocator(ones, cache, _capi.INIT_ONES)
