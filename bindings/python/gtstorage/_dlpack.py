# gtstorage Python binding: DLPack capsules around the tensors that libgtstorage exports.
#
# The C library builds the DLManagedTensor(Versioned) (gtstorage_to_dlpack[_versioned]); this
# module only wraps it in a PyCapsule named as the DLPack Python specification requires and gives
# the capsule a destructor, written with ctypes against the PyCapsule_* C API.
"""DLPack capsule creation for Storage.__dlpack__ (pure ctypes)."""

from __future__ import annotations

import ctypes

from . import _capi

# ---------------------------------------------------------------------------------------------
# The dlpack.h structs (DLPack 1.x); only the fields the destructor needs are read, the rest is
# declared so that the offsets are right (checked against dlpack.h in tests/python).


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1

# Capsule names. PyCapsule keeps the name *pointer*, so the bytes objects must live as long as
# the interpreter: module-level constants do.
NAME_VERSIONED = b"dltensor_versioned"
NAME_LEGACY = b"dltensor"

_api = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_PyCapsule_New = _api.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]

_PyCapsule_IsValid = _api.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

_PyCapsule_GetPointer = _api.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# PyErr_Occurred through PyDLL raises whatever exception is pending on the thread; the destructor
# uses that to notice that it runs while the consumer is failing (see below).
_PyErr_Occurred = _api.PyErr_Occurred
_PyErr_Occurred.restype = ctypes.c_void_p
_PyErr_Occurred.argtypes = []


def _delete_tensor(address: int, versioned: bool) -> None:
    struct = DLManagedTensorVersioned if versioned else DLManagedTensor
    managed = struct.from_address(address)
    if managed.deleter:
        managed.deleter(address)


def _capsule_destructor_impl(capsule: int) -> None:
    """Runs when a capsule made by to_capsule() is freed.

    A consumer that takes the tensor renames the capsule ("used_dltensor…") and becomes
    responsible for calling the deleter; a capsule still carrying its original name was never
    consumed, so the tensor (and the storage reference it holds) is released here.

    CPython may free the capsule while an exception is pending (a consumer that rejects the
    tensor decrefs it on its error path). A ctypes callback cannot hand a pending exception back
    to its C caller, so the exception is taken out first, the tensor is still released, and the
    exception is then re-raised, which ctypes reports through sys.unraisablehook: the real cause
    is printed instead of being lost.
    """
    pending = None
    try:
        _PyErr_Occurred()
    except BaseException as exc:  # noqa: BLE001 - any pending exception, see the docstring
        pending = exc
    try:
        if _PyCapsule_IsValid(capsule, NAME_VERSIONED):
            _delete_tensor(_PyCapsule_GetPointer(capsule, NAME_VERSIONED), True)
        elif _PyCapsule_IsValid(capsule, NAME_LEGACY):
            _delete_tensor(_PyCapsule_GetPointer(capsule, NAME_LEGACY), False)
    finally:
        if pending is not None:
            raise pending


# The C-callable destructor must outlive every capsule: a module global, never collected.
_capsule_destructor = _CAPSULE_DESTRUCTOR(_capsule_destructor_impl)


def to_capsule(handle: int, side: int, versioned: bool) -> object:
    """A DLPack capsule over side @p side of storage @p handle (holds a library reference)."""
    out = ctypes.c_void_p()
    if versioned:
        _capi.check(
            _capi.lib.gtstorage_to_dlpack_versioned(handle, side, ctypes.byref(out)), "__dlpack__"
        )
    else:
        _capi.check(_capi.lib.gtstorage_to_dlpack(handle, side, ctypes.byref(out)), "__dlpack__")
    address = out.value
    try:
        return _PyCapsule_New(address, NAME_VERSIONED if versioned else NAME_LEGACY,
                              _capsule_destructor)
    except BaseException:
        # No capsule owns the tensor: release it here or the storage would never be freed.
        if address is not None:  # (the library never returns OK with a NULL tensor)
            _delete_tensor(address, versioned)
        raise


def capsule_tensor(
        capsule: object) -> tuple[DLManagedTensorVersioned | DLManagedTensor, bool]:
    """The (DLManagedTensor[Versioned], versioned) behind an unconsumed capsule (for tests)."""
    addr = id(capsule)  # CPython: the object's address
    for name, struct in ((NAME_VERSIONED, DLManagedTensorVersioned),
                         (NAME_LEGACY, DLManagedTensor)):
        if _PyCapsule_IsValid(addr, name):
            return (struct.from_address(_PyCapsule_GetPointer(addr, name)),
                    struct is DLManagedTensorVersioned)
    raise ValueError("not an unconsumed DLPack capsule")
