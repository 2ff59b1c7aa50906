# gtstorage: Python binding of libgtstorage (pure Python over ctypes).
"""gtstorage — GT4Py storages allocated and described by libgtstorage.

Two faces over one C library (all layout decisions are the library's; see docs/python.md):

- GT4Py's drop-in: ``gtstorage.empty/zeros/ones/full/from_array`` (and ``*_like``) take
  ``gt4py.storage``'s arguments and return plain ``numpy.ndarray`` (host backends) or
  ``cupy.ndarray`` (device backends) with GT4Py's strides and alignment, over memory that
  libgtstorage owns. ``import gtstorage as gs`` runs code written for ``gt4py.storage``.
- GDP-3 storages: :mod:`gtstorage.gdp3` (``import gtstorage.gdp3 as gs``), plus
  :func:`as_storage`, :func:`storage` and :class:`Storage` here: fields with halos, views,
  host/device synchronization and every buffer protocol (NumPy array interface, CUDA Array
  Interface v3, DLPack, ``__gt_dims__``, ``__gt_origin__``, ``__gt_data_interface__``).
"""

from __future__ import annotations

from . import _xarray, gdp3
from ._capi import lib as _lib
from ._creation import storage
from ._gt4py import *  # noqa: F403  (GT4Py's drop-in allocators, which return arrays)
from ._shared_api import *  # noqa: F403  (errors, storages, library-wide functions …)

try:  # generated from project(VERSION) by CMake (build tree, wheel)
    from ._version import __version__  # type: ignore[import-not-found,unused-ignore]  # generated
except ImportError:  # the source tree: the loaded library's version
    __version__ = _lib.gtstorage_version_string().decode("ascii")

__all__ = [
    "Allocation", "CPUStorage", "CUDAManagedGPUStorage", "GPUStorage", "GTCommunicationError",
    "GTDeviceError", "GTDriverTooOldError", "GTInternalError", "GTMemoryError",
    "GTNoSuchBufferError", "GTStorageError", "GTSyncConflictError", "GTUnknownPresetError",
    "GTUnsupportedError", "GTValueError", "SoftwareManagedGPUStorage", "Storage", "SyncState",
    "allocation", "as_storage", "asstorage", "device_count", "empty", "empty_like", "from_array",
    "full", "full_like", "gdp3", "get_device", "get_device_backend", "get_stats", "library_path",
    "library_version", "ones", "ones_like", "plan", "pool_set_limit", "pool_stats", "pool_trim",
    "presets", "reset_transfer_stats", "set_device", "set_device_backend", "storage", "zeros",
    "zeros_like"
]


# Public classes report the package as their module (readable tracebacks and reprs).
for _cls in (GTCommunicationError, GTDeviceError, GTDriverTooOldError, GTInternalError,
             GTMemoryError, GTNoSuchBufferError, GTStorageError, GTSyncConflictError,
             GTUnknownPresetError, GTUnsupportedError, GTValueError,
             CPUStorage, CUDAManagedGPUStorage, GPUStorage, SoftwareManagedGPUStorage, Storage,
             SyncState):
    _cls.__module__ = __name__
del _cls

_xarray.register()
