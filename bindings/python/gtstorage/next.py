# gtstorage Python binding: gt4py.next field allocation over libgtstorage.
#
# gt4py.next allocates every field through an allocator object (its FieldBufferAllocatorProtocol:
# __gt_device_type__ and __gt_allocate__(domain, dtype, device_id, aligned_index) returning a
# TensorBuffer). allocator() is such an object over the library's memory (pools, the library's
# zeroing and layout math); wrap() is one whose single allocation is memory the caller already
# has, which is how a gt4py.next field over existing memory is made through GT4Py's public API
# (gtx.as_field always copies). gt4py is imported on first use only: importing this module does
# not need it.
#
# What is GT4Py's rule here and stays GT4Py's: the order of the dimensions by kind (its
# horizontal_first_layout_mapper, called, not copied), the 64 / 128 byte alignment of the
# aligned element, and the translation of absolute aligned indices to relative ones (a few
# lines, below). Strides, padding and the offset of the aligned element come from the C library
# (the same plan as gt4py.storage's allocations), never from this module.
"""gt4py.next allocators over libgtstorage: :func:`allocator` and :func:`wrap`."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import _args, _capi
from ._allocation import _library_allocation
from ._gt4py import _new_array, _prepare
from ._handle import _cupy
from ._request import Request
from ._storage import Storage

__all__ = ["allocator", "wrap", "Allocator", "WrapAllocator"]

#: Byte alignment of the aligned element, by device kind (gt4py.next's defaults).
DEFAULT_ALIGNMENT = {"cpu": 64, "cuda": 128, "rocm": 128}

# The library preset each device kind starts from: its padding rule and memory kind (host
# memory; device memory only, as GT4Py's GPU allocator). Layout and alignment are overridden.
_PRESET = {"cpu": "gt:cpu_ifirst", "cuda": "gt:gpu", "rocm": "gt:gpu"}


def _gt4py() -> tuple[ModuleType, ModuleType, ModuleType]:
    """gt4py's modules this one uses (imported on first use)."""
    global _modules
    if _modules is None:
        import gt4py._core.definitions as core_defs
        import gt4py.next.custom_layout_allocators as next_allocators
        import gt4py.storage.allocators as core_allocators

        _modules = (core_defs, next_allocators, core_allocators)
    return _modules


_modules: tuple[ModuleType, ModuleType, ModuleType] | None = None


def _device_type(device: str) -> Any:
    core_defs = _gt4py()[0]
    return {"cpu": core_defs.DeviceType.CPU, "cuda": core_defs.DeviceType.CUDA,
            "rocm": core_defs.DeviceType.ROCM}[device]


def _relative_aligned_index(aligned_index: Any, domain: Any) -> tuple[int, ...]:
    """gt4py.next's reading of an aligned index: absolute positions (NamedIndex) made relative
    to the domain's start; dimensions of the domain that it does not name take their start,
    named dimensions outside the domain are ignored, and a position outside the domain's range
    is a ValueError (the same message as GT4Py's)."""
    by_dim = {named.dim: int(named.value) for named in aligned_index}
    out: list[int] = []
    for named_range in domain:
        start, stop = named_range.unit_range.start, named_range.unit_range.stop
        position = by_dim.get(named_range.dim, start)
        if position < start or position >= stop:
            raise ValueError(
                f"Absolute index for dimension '{named_range.dim}' is {position}, "
                f"which is outside the domain range [{start}, {stop}).")
        out.append(position - start)
    return tuple(out)


def _numpy_dtype(dtype: Any) -> np.dtype[Any]:
    """The NumPy dtype of a gt4py DType (or anything NumPy reads)."""
    dt = getattr(dtype, "dtype", None)
    dt = dt if isinstance(dt, np.dtype) else np.dtype(dtype)
    if dt.subdtype is not None:
        raise TypeError(f"gtstorage.next: tensor dtypes ({dtype}) are not supported: a field's "
                        "elements are scalars")
    return dt


def _largest_alignment(address: int) -> int:
    """The largest power of two (at most 4096) that divides @p address."""
    return min(address & -address, 4096) if address else 4096


# TensorBuffer is a frozen dataclass without __slots__ or __post_init__: filling its __dict__
# is what its generated __init__ does, without one object.__setattr__ per field (a third of the
# cost of an allocation at 16^3). Checked once; otherwise the constructor is called.
_tensor_buffer_fields: tuple[str, ...] | None = None


def _tensor_buffer(**fields: Any) -> Any:
    global _tensor_buffer_fields
    core_allocators = _gt4py()[2]
    cls = core_allocators.TensorBuffer
    if _tensor_buffer_fields is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        plain = (not hasattr(cls, "__slots__") and not hasattr(cls, "__post_init__")
                 and set(names) == set(fields))
        _tensor_buffer_fields = names if plain else ()
    if not _tensor_buffer_fields:
        return cls(**fields)
    tb = object.__new__(cls)
    tb.__dict__.update(fields)
    return tb


class Allocator:
    """A gt4py.next field allocator over libgtstorage memory (see :func:`allocator`).

    Hashable and compared by value (device, device_id, alignment, layout_mapper), so that
    gt4py.next's cache of field constructors works with it.

    Parameters
    ----------
    device : {"cpu", "cuda", "rocm"}
        Where the fields live.
    device_id : int
        The GPU of the fields (0 for "cpu").
    alignment : int, optional
        Byte alignment of the aligned element (default 64 on the host, 128 on GPUs).
    layout_mapper : callable, optional
        ``dims -> layout map``; default gt4py.next's ``horizontal_first_layout_mapper``.
    """

    __slots__ = ("device", "device_id", "alignment", "layout_mapper", "_options", "_lock",
                 "__weakref__")

    def __init__(self, device: str = "cpu", device_id: int = 0,
                 alignment: int | None = None,
                 layout_mapper: Callable[[Sequence[Any]], Sequence[int]] | None = None):
        if not isinstance(device, str) or device not in _PRESET:
            raise ValueError(f"device must be 'cpu', 'cuda' or 'rocm', got {device!r}")
        device_id = _args.int_scalar("device_id", device_id, 0, _args.INT32_MAX)
        if device == "cpu" and device_id != 0:
            raise ValueError(f"Unsupported device ID {device_id} for CPU memory allocation")
        if alignment is None:
            alignment = DEFAULT_ALIGNMENT[device]
        alignment = _args.int_scalar("alignment", alignment, 1, _args.INT32_MAX)
        if layout_mapper is not None and not callable(layout_mapper):
            raise TypeError(f"layout_mapper must be callable (dims -> layout map), got "
                            f"{layout_mapper!r}")
        self.device = device
        self.device_id = device_id
        self.alignment = alignment
        self.layout_mapper = layout_mapper
        # (dims, shape, dtype, relative aligned index, device id) -> prepared create options
        self._options: dict[tuple[Any, ...], tuple[Request, tuple[int, ...]]] = {}
        self._lock = threading.Lock()

    # ---- gt4py.next's allocator protocol ------------------------------------------------------

    @property
    def __gt_device_type__(self) -> Any:
        return _device_type(self.device)

    def __gt_allocate__(self, domain: Any, dtype: Any, device_id: int = 0,
                        aligned_index: Any = None) -> Any:
        """A TensorBuffer of a new field over ``domain`` (gt4py.next's allocator protocol).

        ``device_id``: gt4py.next passes 0 when the caller named no device; 0 then means this
        allocator's ``device_id``. Any other value must be it (ValueError otherwise).
        """
        device_id = self._device_for(device_id)
        dims = domain.dims
        shape = domain.shape
        relative = _relative_aligned_index(aligned_index, domain) if aligned_index else None
        key = (dims, shape, dtype, relative, device_id)
        cached = True
        try:
            entry = self._options.get(key)
        except TypeError:  # an unhashable dtype or dims: prepared every time
            cached, entry = False, None
        if entry is None:
            entry = self._prepare(dims, shape, dtype, relative, device_id)
            if cached:
                with self._lock:
                    if len(self._options) > 256:
                        self._options.clear()
                    self._options[key] = entry
        prepared, layout_map = entry
        array = _new_array(prepared, "gtstorage.next.allocator")
        record = _library_allocation(array)
        assert record is not None  # the library's own memory
        core_defs = _gt4py()[0]
        return _tensor_buffer(
            buffer=record, memory_address=record.address,
            device=core_defs.Device(self.__gt_device_type__, device_id), dtype=dtype,
            shape=shape, strides=array.strides, layout_map=layout_map,
            byte_offset=record.byte_offset, byte_alignment=self.alignment,
            aligned_index=relative if relative is not None else (0,) * len(shape),
            ndarray=array)

    # ---- helpers ------------------------------------------------------------------------------

    def _device_for(self, device_id: Any) -> int:
        device_id = _args.int_scalar("device_id", device_id, _args.INT32_MIN, _args.INT32_MAX)
        if self.device == "cpu":
            if device_id != 0:
                raise ValueError(f"Unsupported device ID {device_id} for CPU memory allocation")
            return 0
        if device_id == 0 or device_id == self.device_id:
            return self.device_id
        raise ValueError(f"device_id {device_id} was asked of an allocator for {self.device} "
                         f"device {self.device_id} (make one with device_id={device_id})")

    def _prepare(self, dims: Any, shape: Any, dtype: Any, relative: tuple[int, ...] | None,
                 device_id: int) -> tuple[Request, tuple[int, ...]]:
        """The drop-in's prepared create options of one field shape, and its layout map."""
        next_allocators, core_allocators = _gt4py()[1:]
        mapper = self.layout_mapper or next_allocators.horizontal_first_layout_mapper
        layout_map = tuple(mapper(dims))
        if len(layout_map) != len(shape) or not core_allocators.is_valid_layout_map(layout_map):
            raise ValueError(f"Invalid layout_map {layout_map} for shape {tuple(shape)}")
        dt = _numpy_dtype(dtype)
        # The library's plan is GT4Py's: the contiguous dimension padded to whole aligned
        # blocks, the element at `relative` on `alignment` bytes (GT4Py checks that the
        # alignment and the item size divide one another; so does the library).
        prepared = _prepare(_capi.INIT_UNINITIALIZED, tuple(int(e) for e in shape), dt,
                            _PRESET[self.device], relative, None, layout_map, self.alignment,
                            None, None if self.device == "cpu" else device_id)
        return prepared, layout_map

    def _state(self) -> tuple[str, int, int, Callable[[Sequence[Any]], Sequence[int]] | None]:
        return (self.device, self.device_id, self.alignment, self.layout_mapper)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._state() == self._state()

    def __hash__(self) -> int:
        return hash(self._state())

    def __repr__(self) -> str:
        mapper = "" if self.layout_mapper is None else f", layout_mapper={self.layout_mapper!r}"
        return (f"gtstorage.next.allocator(device={self.device!r}, device_id={self.device_id}, "
                f"alignment={self.alignment}{mapper})")

    def __reduce__(self) -> tuple[type[Allocator], tuple[Any, ...]]:
        return (Allocator, self._state())


def allocator(device: str = "cpu", device_id: int = 0, alignment: int | None = None,
              layout_mapper: Callable[[Sequence[Any]], Sequence[int]] | None = None
              ) -> Allocator:
    """A gt4py.next field allocator whose fields live in libgtstorage memory.

    Use it wherever gt4py.next takes an allocator: ``gtx.zeros(domain, allocator=a)``,
    ``gtx.empty``, ``gtx.ones``, ``gtx.full``, ``gtx.as_field``, or as a backend's allocator
    (``dataclasses.replace(gtx.gtfn_cpu, allocator=a)``). The fields are what gt4py.next's own
    allocator gives (the same shape, strides, alignment and aligned index: gt4py.next's
    horizontal-first dimension order, the contiguous dimension padded to whole aligned blocks),
    over memory from the library's pools.

    Parameters
    ----------
    device : {"cpu", "cuda", "rocm"}
        Where the fields live: host memory (NumPy arrays) or device memory (CuPy arrays; the
        library's CUDA or HIP backend must be the active one).
    device_id : int
        The GPU of the fields (0 for "cpu"). gt4py.next asks for device 0 when its caller named
        no device: that means this one; a request for another device is refused.
    alignment : int, optional
        Byte alignment of the aligned element (default 64 on the host, 128 on GPUs, as
        gt4py.next).
    layout_mapper : callable, optional
        ``dims -> layout map`` (gt4py.next's FieldLayoutMapper); default gt4py.next's
        ``horizontal_first_layout_mapper``.

    Returns
    -------
    Allocator
        An object with ``__gt_device_type__`` and ``__gt_allocate__``; hashable.

    Notes
    -----
    Streams: a field is handed out with nothing of the library's pending on its memory (its
    descriptor waits for queued work), so gt4py.next may use it on any stream, including the
    legacy default stream it assumes.
    """
    return Allocator(device, device_id, alignment, layout_mapper)


class WrapAllocator:
    """An allocator whose one allocation is existing memory (made by :func:`wrap`).

    Parameters
    ----------
    array : numpy.ndarray or cupy.ndarray
        The memory.
    device : tuple of (str, int)
        Its device kind ("cpu", "cuda" or "rocm") and id.
    """

    __slots__ = ("_array", "_shape", "_device", "_used", "_lock", "__weakref__")

    def __init__(self, array: Any, device: tuple[str, int]):
        self._array = array
        self._shape = tuple(array.shape)
        self._device = device
        self._used = False
        self._lock = threading.Lock()

    @property
    def __gt_device_type__(self) -> Any:
        return _device_type(self._device[0])

    def __gt_allocate__(self, domain: Any, dtype: Any, device_id: int = 0,
                        aligned_index: Any = None) -> Any:
        """The wrapped memory as the TensorBuffer of a field over ``domain``, once."""
        with self._lock:
            if self._used:
                raise RuntimeError("gtstorage.next.wrap: this allocator's memory was already "
                                   "handed out (one field per wrap(); make another wrap() for "
                                   "another field)")
            array = self._array
            kind, own_id = self._device
            shape = tuple(int(e) for e in domain.shape)
            if tuple(array.shape) != shape:
                raise ValueError(f"gtstorage.next.wrap: the domain's shape {shape} is not the "
                                 f"wrapped array's {tuple(array.shape)}")
            want = _numpy_dtype(dtype)
            if np.dtype(array.dtype) != want:
                raise ValueError(f"gtstorage.next.wrap: dtype {want} was asked for, the wrapped "
                                 f"array is {np.dtype(array.dtype)} (wrap never converts)")
            device_id = _args.int_scalar("device_id", device_id, _args.INT32_MIN,
                                         _args.INT32_MAX)
            if device_id not in (0, own_id):
                raise ValueError(f"gtstorage.next.wrap: device {device_id} was asked for, the "
                                 f"wrapped memory is on {kind} device {own_id}")
            relative = _relative_aligned_index(aligned_index, domain) if aligned_index else None
            # Spent: the field holds the array from now on, not this allocator (gt4py.next keeps
            # allocators in its constructor cache, which must not keep memory alive).
            self._used = True
            self._array = None
            self._shape = shape
        core_defs = _gt4py()[0]
        record = _library_allocation(array)
        if record is not None:
            buffer, address, offset = record, record.address, record.byte_offset
        else:
            data, low = _data_and_low(array)
            buffer, address, offset = array, low, data - low
        index = relative if relative is not None else (0,) * len(shape)
        first = address + offset + sum(i * s for i, s in zip(index, array.strides))
        strides = tuple(array.strides)
        order = sorted(range(len(strides)), key=lambda d: -abs(strides[d]))
        layout_map = tuple(order.index(d) for d in range(len(strides)))
        return _tensor_buffer(
            buffer=buffer, memory_address=address,
            device=core_defs.Device(self.__gt_device_type__, own_id), dtype=dtype, shape=shape,
            strides=strides, layout_map=layout_map, byte_offset=offset,
            byte_alignment=_largest_alignment(first), aligned_index=index, ndarray=array)

    def __repr__(self) -> str:
        state = "used" if self._used else "unused"
        return (f"gtstorage.next.wrap(array of shape {self._shape}, "
                f"{self._device[0]}:{self._device[1]}, {state})")

    # Hashable by identity (gt4py.next caches field constructors by allocator): two wraps of
    # the same memory are two allocators.


def _data_and_low(array: Any) -> tuple[int, int]:
    """Address of element (0, …, 0) and the lowest address the array touches."""
    key = "__array_interface__" if hasattr(array, "__array_interface__") else \
        "__cuda_array_interface__"
    interface = getattr(array, key)
    data = int(interface["data"][0])
    low = data
    for extent, stride in zip(array.shape, array.strides):
        if extent > 0 and stride < 0:
            low += (extent - 1) * stride
    return data, low


def wrap(array: Any) -> WrapAllocator:
    """An allocator whose next (and only) allocation is ``array``'s memory: a gt4py.next field
    over existing memory, without copying, through GT4Py's public API::

        field = gtx.empty(domain, dtype=..., allocator=gtstorage.next.wrap(array))

    ``field.ndarray`` is then ``array`` itself (the same object: writes through either are
    seen by the other). The domain's shape, the dtype and the device must be the array's
    (ValueError otherwise: nothing is converted or copied). Use ``gtx.empty``: ``gtx.zeros``,
    ``ones`` and ``full`` fill the memory, ``as_field`` copies its data into it.

    Parameters
    ----------
    array : numpy.ndarray, cupy.ndarray or Storage
        Host memory (a NumPy array: any strides, the library's or not), device memory (a CuPy
        array, on the device it lives on), or a :class:`gtstorage.Storage` (its host array if
        it has a host side, else its device array through CuPy).

    Returns
    -------
    WrapAllocator
        Usable once (a second allocation raises RuntimeError, so that two fields never alias
        by accident); hashable by identity.
    """
    if isinstance(array, Storage):
        array = np.asarray(array) if array._has_host else _device_array(array)
    if isinstance(array, np.ndarray):
        return WrapAllocator(array, ("cpu", 0))
    if hasattr(array, "__cuda_array_interface__") and hasattr(array, "device"):
        core_defs = _gt4py()[0]
        kind = "rocm" if core_defs.CUPY_DEVICE_TYPE == core_defs.DeviceType.ROCM else "cuda"
        return WrapAllocator(array, (kind, int(getattr(array.device, "id", 0))))
    raise TypeError(f"gtstorage.next.wrap: a NumPy or CuPy array or a gtstorage Storage is "
                    f"needed, got {type(array).__module__}.{type(array).__qualname__}")


def _device_array(st: Storage) -> Any:
    """The CuPy array over a device-only storage's memory."""
    return _cupy().asarray(st)
