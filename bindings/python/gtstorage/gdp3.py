# gtstorage Python binding: the GDP-3 face (storages with halos, views, sync state).
"""GDP-3 storages: ``import gtstorage.gdp3 as gs``.

The allocators here return :class:`gtstorage.Storage` objects (GDP-3, "GT4Py Storages"):
fields that know their halo (``domain_view``, ``__gt_origin__``), their dims
(``__gt_dims__``), their host and device buffers and which one is current (``sync_state``,
``__gt_data_interface__``, ``__gt_interface__``), and that behave as NumPy duck arrays
(operators, ufuncs, ``sum``, ``fill``, … with NumPy's copy semantics). The top-level
``gtstorage.zeros`` & co. are GT4Py's drop-in and return plain NumPy/CuPy arrays instead.
"""

from __future__ import annotations

from typing import Any

from ._capi import (
    GTCommunicationError,
    GTDeviceError,
    GTDriverTooOldError,
    GTInternalError,
    GTMemoryError,
    GTNoSuchBufferError,
    GTStorageError,
    GTSyncConflictError,
    GTUnknownPresetError,
    GTUnsupportedError,
    GTValueError,
)
from ._creation import (
    as_storage,
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    ones,
    ones_like,
    plan,
    storage,
    zeros,
    zeros_like,
)
from ._storage import (
    CPUStorage,
    CUDAManagedGPUStorage,
    GPUStorage,
    SoftwareManagedGPUStorage,
    Storage,
    SyncState,
)

asstorage = as_storage  # the spelling of GDP-3's first draft

__all__ = [
    "CPUStorage", "CUDAManagedGPUStorage", "GPUStorage", "GTCommunicationError", "GTDeviceError",
    "GTDriverTooOldError", "GTInternalError", "GTMemoryError", "GTNoSuchBufferError",
    "GTStorageError", "GTSyncConflictError", "GTUnknownPresetError", "GTUnsupportedError",
    "GTValueError",
    "SoftwareManagedGPUStorage", "Storage", "SyncState", "as_storage", "asstorage", "empty",
    "empty_like", "from_array", "full", "full_like", "ones", "ones_like", "plan", "storage",
    "zeros", "zeros_like",
]


def __getattr__(name: str) -> Any:
    # The library-wide functions (get_stats, presets, set_device, …) live in the package; they
    # are reachable from here too so that ``import gtstorage.gdp3 as gs`` is a complete face.
    import gtstorage

    if name in gtstorage.__all__ and not name.startswith("_"):
        return getattr(gtstorage, name)
    raise AttributeError(f"module 'gtstorage.gdp3' has no attribute {name!r}")
