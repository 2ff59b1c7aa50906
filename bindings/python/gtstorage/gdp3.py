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

from ._creation import *  # noqa: F403  (GDP-3's allocators, which return storages)
from ._shared_api import *  # noqa: F403  (errors, storages, library-wide functions …)

__all__ = [
    "CPUStorage", "CUDAManagedGPUStorage", "GPUStorage", "GTCommunicationError", "GTDeviceError",
    "GTDriverTooOldError", "GTInternalError", "GTMemoryError", "GTNoSuchBufferError",
    "GTStorageError", "GTSyncConflictError", "GTUnknownPresetError", "GTUnsupportedError",
    "GTValueError",
    "SoftwareManagedGPUStorage", "Storage", "SyncState", "as_storage", "asstorage", "empty",
    "empty_like", "from_array", "full", "full_like", "ones", "ones_like", "plan", "storage",
    "zeros", "zeros_like",
]
