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

from ._allocation import Allocation, allocation  # noqa: F401  (gdp3 is a complete face)
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
    empty,
    empty_like,
    from_array,
    full,
    full_like,
    ones,
    ones_like,
    storage,
    zeros,
    zeros_like,
)
from ._handle import SyncState
from ._library import (  # noqa: F401  (the library-wide functions: gdp3 is a complete face)
    device_count,
    get_device,
    get_device_backend,
    get_stats,
    library_path,
    library_version,
    pool_set_limit,
    pool_stats,
    pool_trim,
    presets,
    reset_transfer_stats,
    set_device,
    set_device_backend,
)
from ._request import plan
from ._storage import (
    CPUStorage,
    CUDAManagedGPUStorage,
    GPUStorage,
    SoftwareManagedGPUStorage,
    Storage,
)
from ._wrap import as_storage

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
