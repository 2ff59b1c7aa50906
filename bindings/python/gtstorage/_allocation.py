# gtstorage Python binding: the allocation behind an array that libgtstorage allocated.
#
# gt4py.next's TensorBuffer names the raw allocation (address, size, offset of the first
# element), and users who hand drop-in arrays to other code want to know whether the memory is
# the library's and which storage owns it. The native extension records the allocation in the
# array's Owner when it makes the array, so the common case costs one C call and no library
# call; the other owners (arrays made through ctypes, CuPy arrays, Storage objects) ask the
# library once (gtstorage_interface).
"""Allocation records of arrays over libgtstorage memory."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from . import _capi
from ._capi import check, lib
from ._handle import _OwnedReference
from ._storage import Storage

__all__ = ["Allocation", "allocation"]

_HOST_DEVICE_TYPES = (_capi.DL_CPU, _capi.DL_CUDA_HOST, _capi.DL_ROCM_HOST)


class Allocation(tuple[Any, ...]):
    """The allocation of libgtstorage memory behind an array (:func:`gtstorage.allocation`).

    A record (a tuple, like ``os.stat_result``) of ``(address, size, byte_offset, device,
    handle, owner)``, made by :func:`gtstorage.allocation`; the owner keeps the storage's
    reference, so the record keeps the memory alive. It describes the raw bytes as a
    one-dimensional ``uint8`` buffer (``__array_interface__`` for host memory,
    ``__cuda_array_interface__`` for device memory): what gt4py.next's ``TensorBuffer.buffer``
    holds.

    Parameters
    ----------
    iterable : tuple
        ``(address, size, byte_offset, (device type, device id), handle, owner)``.
    """

    __slots__ = ()

    @property
    def address(self) -> int:
        """Start of the allocation (for a storage that wraps caller memory: of the span of the
        wrapped elements)."""
        value: int = self[0]
        return value

    @property
    def size(self) -> int:
        """Bytes of the allocation."""
        value: int = self[1]
        return value

    @property
    def byte_offset(self) -> int:
        """Address of the array's element (0, …, 0) minus :attr:`address`."""
        value: int = self[2]
        return value

    @property
    def device(self) -> tuple[int, int]:
        """``(DLPack device type, device id)`` of the memory, as ``__dlpack_device__`` says it:
        ``(1, 0)`` host memory, ``(2, n)`` CUDA device ``n``, ``(10, n)`` ROCm, …"""
        device: tuple[int, int] = self[3]
        return device

    @property
    def handle(self) -> int:
        """The handle of the storage that owns the memory (valid while this record lives)."""
        value: int = self[4]
        return value

    @property
    def storage(self) -> Storage:
        """The :class:`gtstorage.Storage` that owns the memory (a new reference to it)."""
        return Storage.from_handle(self[4])

    @property
    def is_host(self) -> bool:
        """True for memory the host addresses (host and pinned host memory)."""
        return self[3][0] in _HOST_DEVICE_TYPES

    def _bytes_interface(self) -> dict[str, Any]:
        return {"shape": (self[1],), "typestr": "|u1", "data": (self[0], False),
                "strides": None, "version": 3}

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy's array interface of the allocation's bytes (host memory only)."""
        if not self.is_host:
            raise AttributeError("__array_interface__: device memory (use "
                                 "__cuda_array_interface__)")
        return self._bytes_interface()

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The CUDA Array Interface of the allocation's bytes (device memory only)."""
        if self.is_host:
            raise AttributeError("__cuda_array_interface__: host memory (use "
                                 "__array_interface__)")
        return self._bytes_interface()

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(DLPack device type, device id)`` of the memory (as :attr:`device`).

        Returns
        -------
        tuple of int
            The DLPack device.
        """
        device: tuple[int, int] = self[3]
        return device

    def __repr__(self) -> str:
        return (f"Allocation(address=0x{self[0]:x}, size={self[1]}, byte_offset={self[2]}, "
                f"device={self[3]}, handle=0x{self[4]:x})")


_native_allocation_of: Callable[[object], Allocation | None] | None = None
if _capi.native is not None and hasattr(_capi.native, "set_allocation_type"):
    _capi.native.set_allocation_type(Allocation)
    _native_allocation_of = _capi.native.allocation_of


def _owner_and_address(obj: Any) -> tuple[Any, int, int, int | None] | None:
    """(owner, handle, side, data address) of an array or Storage over library memory whose
    storage holds all of it, else None. The owner is the object holding the reference."""
    if isinstance(obj, Storage):
        side = _capi.SIDE_HOST if obj._has_host else _capi.SIDE_DEVICE
        return obj, obj._handle, side, None
    base = getattr(obj, "base", None)
    if base is not None and hasattr(obj, "__array_interface__"):  # NumPy (or alike)
        while base is not None and not isinstance(base, _OwnedReference):
            base = getattr(base, "base", None)
        if base is not None and getattr(base, "handle", None):
            return base, base.handle, _capi.SIDE_HOST, int(obj.__array_interface__["data"][0])
        return None
    # CuPy: the memory of an array built from an owner's CUDA Array Interface is an
    # UnownedMemory whose _owner is that object.
    mem = getattr(getattr(getattr(obj, "data", None), "mem", None), "_owner", None)
    if isinstance(mem, _OwnedReference) and mem.handle and hasattr(obj,
                                                                   "__cuda_array_interface__"):
        return mem, mem.handle, _capi.SIDE_DEVICE, int(obj.__cuda_array_interface__["data"][0])
    return None


def _library_allocation(obj: object) -> Allocation | None:
    """:func:`allocation` of @p obj, or None where its memory is not the library's."""
    if _native_allocation_of is not None:
        record = _native_allocation_of(obj)
        if record is not None:
            return record
    found = _owner_and_address(obj)
    if found is None:
        return None
    owner, handle, side, data = found
    info = _capi.new_struct(_capi.InterfaceInfo)
    check(lib.gtstorage_interface(handle, side, ctypes.byref(info)), "allocation")
    address = int(info.allocation or 0)
    offset = (data if data is not None else int(info.data or 0)) - address
    return Allocation((address, int(info.allocation_bytes), offset,
                       (int(info.device_type), int(info.device_id)), handle, owner))


def allocation(array: Any) -> Allocation:
    """The allocation behind an array that libgtstorage allocated, without copying anything.

    Parameters
    ----------
    array : numpy.ndarray, cupy.ndarray or Storage
        A drop-in array (``gtstorage.zeros``, ``gtstorage.next`` fields' buffers, …), a view
        of one, or a :class:`gtstorage.Storage`.

    Returns
    -------
    Allocation
        Address, size, byte offset of the array's first element, device and owning storage.
        For a NumPy array made by the native extension this reads what was recorded at
        allocation (no library call).

    Raises
    ------
    ValueError
        The memory is not libgtstorage's (a plain NumPy array, a wrap of caller memory
        made elsewhere).
    """
    if _native_allocation_of is not None:  # the common case, without a second Python call
        record = _native_allocation_of(array)
        if record is not None:
            return record
    record = _library_allocation(array)
    if record is None:
        raise ValueError(f"allocation: a {type(array).__module__}.{type(array).__qualname__} "
                         "whose memory libgtstorage did not allocate (or a view not reachable "
                         "from its owner)")
    return record
