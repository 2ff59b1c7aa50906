# gtstorage Python binding: the Storage class (GDP-3), composed of its core and mixins.
#
# Storage = the core (gtstorage._core: handle, geometry, views, host access) + indexing
# (_indexing) + host/device synchronization (_sync) + the buffer protocols (_protocols) + the
# NumPy duck array, conversions and pickling (_duck_array); its four concrete classes say where
# the buffers are. Its constructor is GDP-3's storage() (gtstorage._creation).
"""Storage classes: the composed Storage and its concrete kinds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._args import UNSET as _UNSET
from ._core import StorageCore, _wait_for_producer, _wrap_cuda_array, allocators
from ._duck_array import DuckArray
from ._handle import SyncState, wrap_handle
from ._protocols import BufferProtocols

__all__ = ["CPUStorage", "CUDAManagedGPUStorage", "GPUStorage", "SoftwareManagedGPUStorage",
           "Storage", "StorageCore", "_RESULT_DOC", "_STORAGE_PARAMETERS_DOC", "_wait_for_producer",
           "_wrap_cuda_array", "allocators", "wrap_buffers"]

# The Returns section of the functions that create a storage, and the head of their Raises.
_RESULT_DOC = """
    Returns
    -------
    Storage
        ``CPUStorage``, ``GPUStorage``, ``SoftwareManagedGPUStorage`` or
        ``CUDAManagedGPUStorage`` by where the buffers are.

    Raises
    ------
    TypeError, ValueError, OverflowError
"""
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
""" + _RESULT_DOC + """\
        Bad arguments, or parameters that do not match wrapped data (the message names the
        function and the argument).
"""
# The constructor's part of it, appended to the docstrings of the storage classes.
_CONSTRUCTOR_DOC = _STORAGE_PARAMETERS_DOC.split("    Returns")[0].rstrip() + "\n"


class Storage(DuckArray, BufferProtocols):
    """A GT4Py/GDP-3 storage: an N-d field allocated and described by libgtstorage.

    Use the creation functions (``empty``, ``zeros``, ``from_array``, ``as_storage`` …);
    ``Storage(data, ...)`` is :func:`gtstorage.gdp3.storage`, whose parameters it takes. The
    concrete class tells where the buffers are: ``CPUStorage`` (host only), ``GPUStorage``
    (device only), ``SoftwareManagedGPUStorage`` (host + device, synchronized by gtstorage) and
    ``CUDAManagedGPUStorage`` (one unified-memory buffer).
    """

    __array_priority__ = 10

    def __new__(cls, data: Any = None, device_data: Any = None, *, dtype: Any = None,
                copy: bool = True, sync_state: Any = None,
                shape: Sequence[int] | None = None, backend: Any = _UNSET,
                defaults: Any = _UNSET, aligned_index: Any = None, dimensions: Any = _UNSET,
                dims: Any = _UNSET, layout: Any = None, alignment_size: Any = None,
                halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
                device_id: int = -1, readonly: Any = None) -> Storage:
        result: Storage = allocators.storage(
            data, device_data, dtype=dtype, copy=copy, sync_state=sync_state, shape=shape,
            backend=backend, defaults=defaults, aligned_index=aligned_index,
            dimensions=dimensions, dims=dims, layout=layout, alignment_size=alignment_size,
            halo=halo, device=device, managed=managed, device_id=device_id, readonly=readonly)
        return result

    def __init__(self, data: Any = None, device_data: Any = None, *, dtype: Any = None,
                 copy: bool = True, sync_state: Any = None,
                 shape: Sequence[int] | None = None, backend: Any = _UNSET,
                 defaults: Any = _UNSET, aligned_index: Any = None, dimensions: Any = _UNSET,
                 dims: Any = _UNSET, layout: Any = None, alignment_size: Any = None,
                 halo: Any = None, device: Any = _UNSET, managed: Any = _UNSET,
                 device_id: int = -1, readonly: Any = None) -> None:
        # All work happens in __new__ (storage()); the arguments were used there.
        pass


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

StorageCore._kinds = (CPUStorage, GPUStorage, SoftwareManagedGPUStorage, CUDAManagedGPUStorage)


def wrap_buffers(*, sync_state_obj: SyncState | None = None, **options: Any) -> Storage:
    """A Storage over caller memory (gtstorage_wrap; @p options as :func:`_handle.wrap_handle`
    takes them), bound to the unbound SyncState object @p sync_state_obj if one is given."""
    return Storage._from_handle(wrap_handle(**options), sync_state=sync_state_obj)
