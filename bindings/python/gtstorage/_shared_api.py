# gtstorage Python binding: the API both faces export, gathered once.
#
# gtstorage (GT4Py's drop-in at the top level) and gtstorage.gdp3 (GDP-3's storages) differ in
# their allocators (gtstorage._gt4py's arrays, gtstorage._creation's storages); the rest of what
# they offer, the errors, the storage classes, wrapping, plans and the library-wide functions, is
# the same and both take it from here with a star import.
"""The names gtstorage and gtstorage.gdp3 share (errors, storages, library-wide functions)."""

from __future__ import annotations

from ._allocation import Allocation, allocation
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
from ._handle import SyncState
from ._library import (
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
    "Allocation", "CPUStorage", "CUDAManagedGPUStorage", "GPUStorage", "GTCommunicationError",
    "GTDeviceError", "GTDriverTooOldError", "GTInternalError", "GTMemoryError",
    "GTNoSuchBufferError", "GTStorageError", "GTSyncConflictError", "GTUnknownPresetError",
    "GTUnsupportedError", "GTValueError", "SoftwareManagedGPUStorage", "Storage", "SyncState",
    "allocation", "as_storage", "asstorage", "device_count", "get_device", "get_device_backend",
    "get_stats", "library_path", "library_version", "plan", "pool_set_limit", "pool_stats",
    "pool_trim", "presets", "reset_transfer_stats", "set_device", "set_device_backend",
]
