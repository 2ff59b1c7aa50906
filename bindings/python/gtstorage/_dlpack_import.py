# gtstorage Python binding: zero-copy import of any DLPack producer (issue 8, point 5).
#
# The producer's tensor is taken out of its PyCapsule with the PyCapsule_* C API (through
# ctypes.pythonapi) and handed to gtstorage_wrap_dlpack(), which wraps it without a copy and
# calls its deleter once the last view of the storage is gone. Per the DLPack Python
# specification the capsule is renamed "used_dltensor[_versioned]" once the library owns the
# tensor, so the capsule's own destructor leaves it alone; on failure it keeps its name and
# stays the owner.
"""DLPack import: wrap_dlpack(obj) -> a new storage handle over the producer's memory."""

from __future__ import annotations

import ctypes
import datetime
from collections.abc import Iterable
from typing import Any

from . import _args, _capi, _dlpack

__all__ = ["wrap_dlpack"]

# Capsule names of the DLPack Python specification. PyCapsule keeps the name *pointer*, so the
# bytes objects given to PyCapsule_SetName must live as long as the interpreter: module globals.
_NAME_VERSIONED = b"dltensor_versioned"
_NAME_LEGACY = b"dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"
_USED_LEGACY = b"used_dltensor"

# Private prototypes: the function objects of ctypes.pythonapi are shared (and _dlpack.py gives
# them other argument types), so these are separate foreign functions over the same symbols.
# PYFUNCTYPE keeps the GIL and raises the Python error a failing call sets.
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))
_PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_CAPSULE_TYPE = type(datetime.datetime_CAPI)  # types.CapsuleType (Python >= 3.13)


def _is_capsule(obj: object) -> bool:
    return type(obj) is _CAPSULE_TYPE


def _capsule_name(capsule: object) -> str | None:
    address = _PyCapsule_GetName(capsule)
    return None if not address else ctypes.string_at(address).decode("utf-8", "replace")


def _get_capsule(obj: Any, stream: Any, context: str) -> object:
    """The capsule of @p obj: obj itself, or what its __dlpack__ returns."""
    if _is_capsule(obj):
        return obj
    method = getattr(obj, "__dlpack__", None)
    if method is None or not callable(method):
        raise TypeError(f"{context}: {type(obj).__name__} is neither a DLPack capsule nor a DLPack "
                        "producer (it has no __dlpack__ method)")
    kwargs = {} if stream is None else {"stream": stream}
    try:
        capsule = method(max_version=(1, 0), **kwargs)
        legacy_producer = False
    except TypeError:
        # Producers older than the DLPack 2023.12 Python API take no max_version (NumPy < 2.1,
        # PyTorch < 2.3): they export a legacy capsule. (Called outside the handler, so that
        # their own errors are not shown as caused by the TypeError.)
        legacy_producer = True
    if legacy_producer:
        capsule = method(**kwargs)
    if not _is_capsule(capsule):
        raise TypeError(f"{context}: {type(obj).__name__}.__dlpack__() returned "
                        f"{type(capsule).__name__}, not a PyCapsule")
    return capsule


def _halo_array(halo: Any,
                context: str) -> tuple[ctypes.Array[ctypes.c_int64], int]:
    """2*MAX_NDIM int64 widths (zero-padded, so the library never reads past them) and the
    number given. Accepts the C format (2*ndim ints) or (lower, upper) pairs."""
    if isinstance(halo, (str, bytes)) or not hasattr(halo, "__iter__"):
        raise TypeError(f"{context}: halo must be a sequence of 2*ndim ints or of (lower, upper) "
                        f"pairs, got {halo!r}")
    flat: list[int] = []
    for h in halo:
        if hasattr(h, "__iter__"):
            pair = [int(x) for x in h]
            if len(pair) != 2:
                raise ValueError(f"{context}: halo entries must be ints or (lower, upper) pairs, "
                                 f"got {h!r}")
            flat += pair
        else:
            flat.append(int(h))
    if len(flat) > 2 * _capi.MAX_NDIM:
        raise ValueError(f"{context}: halo has {len(flat)} widths, more than 2 * {_capi.MAX_NDIM}")
    return (ctypes.c_int64 * (2 * _capi.MAX_NDIM))(*flat), len(flat)


def _tensor_ndim(address: int, versioned: bool) -> int | None:
    """ndim of the tensor, or None where the struct cannot be read (an unknown major version:
    the library refuses it before reading anything else)."""
    managed: _dlpack.DLManagedTensorVersioned | _dlpack.DLManagedTensor
    if versioned:
        managed = _dlpack.DLManagedTensorVersioned.from_address(address)
        if managed.version.major != 1:
            return None
    else:
        managed = _dlpack.DLManagedTensor.from_address(address)
    return int(managed.dl_tensor.ndim)


def wrap_dlpack(obj: Any, *, context: str, dims: str | Iterable[object] | None = None,
                halo: Any = None, stream: Any = None, readonly: bool = False) -> int:
    """Wraps the memory of a DLPack producer without copying; returns a new storage handle.

    @p obj is an object with ``__dlpack__`` (NumPy, PyTorch, CuPy, JAX, a gtstorage Storage …),
    called with ``max_version=(1, 0)`` (a versioned DLPack 1.x capsule; producers that do not
    take the argument are called without it and give a legacy one), or a DLPack PyCapsule itself
    ("dltensor_versioned" or "dltensor"). @p stream is passed on to ``__dlpack__`` (the consumer
    stream the producer must order its work before; None for host memory) and, for device
    memory, becomes the storage's stream. @p dims (labels, as ``gtstorage_create_options.dims``:
    "IJK" or "I,J,K,0") and @p halo (2*ndim widths, lower and upper per dimension, or (lower,
    upper) pairs; part of the shape) describe the storage; @p readonly makes it read-only even
    where the producer allows writes (a versioned read-only tensor is always read-only).

    The returned int owns one reference (give it to ``Storage._from_handle`` or release it with
    ``gtstorage_release``). The library calls the tensor's deleter once the last view of the
    storage is gone; the capsule is renamed "used_dltensor[_versioned]" so that it does not.

    On failure the library's exception is raised with @p context as the message prefix (also
    used for the messages of this function, so it should name the caller and the argument,
    e.g. "as_storage(data)"), and a capsule is left untouched: it still owns the tensor. A
    capsule that is not a DLPack one raises TypeError, an already consumed one ValueError.
    """
    capsule = _get_capsule(obj, stream, context)
    if _PyCapsule_IsValid(capsule, _NAME_VERSIONED):
        name, used, kind = _NAME_VERSIONED, _USED_VERSIONED, _capi.DLPACK_VERSIONED
    elif _PyCapsule_IsValid(capsule, _NAME_LEGACY):
        name, used, kind = _NAME_LEGACY, _USED_LEGACY, _capi.DLPACK_LEGACY
    else:
        shown = _capsule_name(capsule)
        if shown in ("used_dltensor_versioned", "used_dltensor"):
            raise ValueError(f"{context}: the DLPack capsule was already consumed (it is named "
                             f"{shown!r}); a capsule can be wrapped only once, ask the producer "
                             "for a new one (call __dlpack__ again)")
        raise TypeError(f"{context}: a PyCapsule named {shown!r} is not a DLPack capsule "
                        "(expected 'dltensor_versioned' or 'dltensor')")
    address = _PyCapsule_GetPointer(capsule, name)

    options = None
    if dims is not None or halo is not None or readonly:
        options = _capi.new_struct(_capi.DlpackOptions)
        options.readonly = 1 if readonly else 0
        if dims is not None:
            if not isinstance(dims, str):
                dims = ",".join(str(d) for d in dims)
            options.dims = _args.c_string("dims", dims)
        if halo is not None:
            widths, count = _halo_array(halo, context)
            ndim = _tensor_ndim(address, kind == _capi.DLPACK_VERSIONED)
            if ndim is not None and count != 2 * ndim:
                raise ValueError(f"{context}: halo has {count} widths for a tensor of ndim {ndim} "
                                 f"(2 * ndim: lower and upper per dimension)")
            options.halo = ctypes.cast(widths, ctypes.POINTER(ctypes.c_int64))

    # Renamed before the call and named back if it fails, so that no moment exists at which
    # both the library and the capsule own the tensor (at worst an interrupt leaks it).
    out = _capi.handle_t(0)
    status = None
    _PyCapsule_SetName(capsule, used)
    try:
        status = _capi.lib.gtstorage_wrap_dlpack(
            address, kind, ctypes.byref(options) if options is not None else None,
            ctypes.byref(out))
    finally:
        if status != _capi.OK and not out.value:
            _PyCapsule_SetName(capsule, name)  # the caller (the capsule) keeps the tensor
    _capi.check(status, context)
    handle = int(out.value)

    if stream is not None and stream != -1:
        try:
            has = ctypes.c_int32(0)
            _capi.check(_capi.lib.gtstorage_has_side(handle, _capi.SIDE_DEVICE, ctypes.byref(has)),
                        context)
            if has.value:
                _capi.check(_capi.lib.gtstorage_set_stream(handle, int(stream)), context)
        except BaseException:
            _capi.lib.gtstorage_release(handle)
            raise
    return handle
