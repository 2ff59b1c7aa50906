# gtstorage Python binding: the library-wide functions (counters, pools, presets, devices).
#
# They speak to the library as a whole, not to a storage; the package and gtstorage.gdp3 export
# them, and the options pipeline (gtstorage._request) reads the presets.
"""Library-wide counters, pools, presets and device selection."""

from __future__ import annotations

import ctypes
from typing import Any, Callable

from . import _args, _capi
from ._args import INT32_MAX, INT32_MIN, int_scalar
from ._capi import check as _check, lib as _lib

#: Version of the loaded C library ("MAJOR.MINOR.PATCH") and the path it was loaded from.
library_version: str = _lib.gtstorage_version_string().decode("ascii")
#: Path of the loaded libgtstorage.
library_path: str = _capi.library_path


def get_stats() -> dict[str, int]:
    """Library-wide counters: live handles and buffers, bytes allocated, transfers, pools.

    Returns
    -------
    dict
        ``live_handles``, ``live_buffers``, ``host_bytes``, ``device_bytes``, the host<->device
        transfer counters (``h2d_count``, ``h2d_bytes``, ``d2h_count``, ``d2h_bytes``) and the
        pool counters of ``gtstorage_stats``, by name.
    """
    out = _capi.new_struct(_capi.Stats)
    _check(_lib.gtstorage_get_stats(ctypes.byref(out)), "get_stats")
    return {name: int(getattr(out, name)) for name, *_ in _capi.Stats._fields_[2:]}


def reset_transfer_stats() -> None:
    """Sets the library-wide host<->device transfer counters of :func:`get_stats` to zero."""
    _check(_lib.gtstorage_reset_transfer_stats(), "reset_transfer_stats")


_POOL_MEMORIES = {"host": _capi.MEMORY_HOST, "pinned_host": _capi.MEMORY_PINNED_HOST,
                  "device": _capi.MEMORY_DEVICE, "all": _capi.MEMORY_ALL}


def _pool_memory(memory: str, context: str, allow_all: bool = True) -> int:
    if not isinstance(memory, str):
        raise TypeError(f"{context}: memory must be a str, got {memory!r}")
    names = [k for k in _POOL_MEMORIES if allow_all or k != "all"]
    if memory not in names:
        raise ValueError(f"{context}: memory must be one of {names}, got {memory!r}")
    return _POOL_MEMORIES[memory]


def pool_stats(memory: str = "host") -> dict[str, int]:
    """Counters of one memory pool.

    Parameters
    ----------
    memory : str
        ``"host"`` (pageable), ``"pinned_host"`` or ``"device"`` (every device together).

    Returns
    -------
    dict
        ``held_bytes``, ``held_blocks`` (kept for reuse; -1 where the runtime does not count),
        ``in_use_bytes``, ``high_water_bytes``, ``hits``, ``misses``, ``evictions`` and
        ``limit_bytes`` (0: not pooled).
    """
    m = _pool_memory(memory, "pool_stats", allow_all=False)
    out = _capi.new_struct(_capi.PoolStats)
    _check(_lib.gtstorage_pool_get_stats(m, ctypes.byref(out)), "pool_stats")
    return {name: int(getattr(out, name)) for name, *_ in _capi.PoolStats._fields_[2:]}


def pool_trim(memory: str = "all", keep_bytes: int = 0) -> None:
    _pool_bytes_call(_lib.gtstorage_pool_trim, "pool_trim", memory, "keep_bytes", keep_bytes)


def pool_set_limit(memory: str, limit_bytes: int) -> None:
    _pool_bytes_call(_lib.gtstorage_pool_set_limit, "pool_set_limit", memory, "limit_bytes",
                     limit_bytes)


def _pool_bytes_call(function: Callable[[int, int], int], context: str, memory: str,
                     name: str, value: int) -> None:
    """pool_trim and pool_set_limit: one pool (or all) and a byte count, checked and passed."""
    m = _pool_memory(memory, context)
    _check(function(m, _args.int_scalar(f"{context}: {name}", value, 0)), context)


def _pool_bytes_doc(summary: str, name: str, meaning: str) -> str:
    return f"""{summary}

    Parameters
    ----------
    memory : str
        ``"host"``, ``"pinned_host"``, ``"device"`` or ``"all"``.
    {name} : int
        {meaning}

    Raises
    ------
    TypeError, ValueError, OverflowError
        An unknown memory, or ``{name}`` not an int in [0, 2**63).
    """


pool_trim.__doc__ = _pool_bytes_doc(
    "Frees kept blocks, least recently kept first, until at most ``keep_bytes`` are kept.",
    "keep_bytes", "Bytes the pool may keep afterwards (≥ 0; 0 frees every kept block).")
pool_set_limit.__doc__ = _pool_bytes_doc(
    "Limits the bytes a pool keeps for reuse, freeing kept blocks beyond it at once.",
    "limit_bytes", "The limit (≥ 0); 0 turns pooling off for that memory.")


def presets() -> list[dict[str, Any]]:
    """The registered presets (GT4Py backends and more), in registration order.

    Returns
    -------
    list of dict
        Per preset: ``name``, ``alignment`` and its ``alignment_unit`` (``"bytes"`` or
        ``"elements"``), ``device`` (``"cpu"`` or ``"gpu"``), ``rule`` (``"by_dims"``, ``"C"``
        or ``"F"``) and ``base_layout`` (the ranks of I, J, K).
    """
    count = ctypes.c_int32()
    _check(_lib.gtstorage_preset_count(ctypes.byref(count)), "presets")
    result = []
    for i in range(count.value):
        p = _capi.new_struct(_capi.PresetInfo)
        _check(_lib.gtstorage_preset_at(i, ctypes.byref(p)), "presets")
        result.append({
            "name": p.name.decode("utf-8"),
            "alignment": int(p.alignment),
            "alignment_unit": "bytes" if p.alignment_unit == _capi.ALIGN_BYTES else "elements",
            "device": "gpu" if p.device == _capi.DEVICE_GPU else "cpu",
            "rule": {0: "by_dims", 1: "C", 2: "F"}.get(p.rule, p.rule),
            "base_layout": tuple(p.base_layout),
        })
    return result


def device_count() -> int:
    """The number of usable devices of the active device backend.

    Returns
    -------
    int
        Usable devices (0 without a device backend).

    Raises
    ------
    GTDriverTooOldError
        A GPU is held back by a driver older than the library's CUDA runtime.
    """
    out = ctypes.c_int32()
    _check(_lib.gtstorage_device_count(ctypes.byref(out)), "device_count")
    return int(out.value)


def set_device_backend(name: str) -> None:
    """Selects the device backend (only while no device storage is alive).

    Parameters
    ----------
    name : str
        ``"cuda"``, ``"hip"``, ``"emulated"`` (the real GPU code over a simulated runtime on
        host memory) or ``"auto"`` (the first that has a device).

    Raises
    ------
    TypeError
        ``name`` is not a str.
    ValueError
        An unknown backend name (a GTValueError from the library).
    GTStorageError
        The backend cannot be changed now (device storages are alive) or is not built in.
    """
    if not isinstance(name, str):
        raise TypeError(f"set_device_backend: name must be a str, got {name!r}")
    if not name.isascii():
        raise ValueError(f"set_device_backend: unknown device backend {name!r}")
    _check(_lib.gtstorage_set_device_backend(name.encode("ascii")), "set_device_backend")


def get_device_backend() -> str:
    """The active device backend.

    Returns
    -------
    str
        ``"cuda"``, ``"hip"``, ``"emulated"`` or ``"none"``.
    """
    buf = ctypes.create_string_buffer(64)
    _check(_lib.gtstorage_get_device_backend(buf, len(buf)), "get_device_backend")
    return buf.value.decode("ascii")


def set_device(device_id: int) -> None:
    """Makes ``device_id`` the calling thread's current device (``cudaSetDevice``).

    Storages this thread creates without an explicit device go there; other threads keep their
    own current device.

    Parameters
    ----------
    device_id : int
        A device ordinal of the active backend (0 ≤ ``device_id`` < :func:`device_count`).

    Raises
    ------
    TypeError, OverflowError
        ``device_id`` is not an int in the int32 range.
    GTStorageError
        No such device (GTValueError or GTDeviceError).
    """
    _check(_lib.gtstorage_set_device(int_scalar("set_device: device_id", device_id, INT32_MIN,
                                                INT32_MAX)), "set_device")


def get_device() -> int:
    """The calling thread's current device (``cudaGetDevice``).

    Storages this thread creates without an explicit device go there.

    Returns
    -------
    int
        The ordinal set by :func:`set_device` (or the application's own ``cudaSetDevice``) in this
        thread; 0 in a thread that set none.

    Raises
    ------
    GTDeviceError
        The active backend has no device (the message says why; GTDriverTooOldError where a
        driver older than the library's CUDA holds a GPU back).
    """
    out = ctypes.c_int32()
    _check(_lib.gtstorage_get_device(ctypes.byref(out)), "get_device")
    return int(out.value)
