# gtstorage Python binding: the ctypes view of include/gtstorage/gtstorage.h.
#
# Everything here mirrors the public header one to one (structs, enums, prototypes); nothing
# computes a layout. Keep it in sync with the header: tests/python/test_abi_structs.py compiles a
# small C program against the header and compares every struct's size and field offsets with the
# ctypes definitions below.
"""Low-level access to libgtstorage (library discovery, structs, prototypes, error mapping)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import List, Optional

# ---------------------------------------------------------------------------------------------
# Constants of the header (values are fixed forever by the ABI).

ABI_MAJOR = 1  # the binding speaks version 1.x of the C ABI
MAX_NDIM = 16
DIM_LABEL_SIZE = 4
TYPESTR_SIZE = 8
PRESET_NAME_SIZE = 32

OK = 0
ERROR_INVALID_ARGUMENT = -1
ERROR_INVALID_HANDLE = -2
ERROR_OUT_OF_MEMORY = -3
ERROR_OVERFLOW = -4
ERROR_NO_SUCH_BUFFER = -5
ERROR_NO_DEVICE = -6
ERROR_DEVICE = -7
ERROR_UNKNOWN_PRESET = -8
ERROR_SHAPE_MISMATCH = -9
ERROR_SYNC_CONFLICT = -10
ERROR_READONLY = -11
ERROR_UNSUPPORTED = -12
ERROR_BUFFER_TOO_SMALL = -13
ERROR_DRIVER_TOO_OLD = -14
ERROR_INTERNAL = -99

INIT_UNINITIALIZED = 0
INIT_ZEROS = 1
INIT_ONES = 2
INIT_VALUE = 3
INIT_COPY = 4

DEVICE_DEFAULT = 0
DEVICE_CPU = 1
DEVICE_GPU = 2

MANAGED_DEFAULT = 0
MANAGED_NONE = 1
MANAGED_MIRROR = 2
MANAGED_UNIFIED = 3

HOST_PAGEABLE = 0
HOST_PINNED = 1

SIDE_HOST = 0
SIDE_DEVICE = 1

SYNC_CLEAN = 0
SYNC_HOST_DIRTY = 1
SYNC_DEVICE_DIRTY = 2

SYNC_HOST_TO_DEVICE = 1
SYNC_DEVICE_TO_HOST = 2
SYNC_SYNCHRONIZE = 3
SYNC_SET_HOST_MODIFIED = 4
SYNC_SET_DEVICE_MODIFIED = 5
SYNC_SET_SYNCHRONIZED = 6
SYNC_ACQUIRE_HOST = 7
SYNC_ACQUIRE_DEVICE = 8
SYNC_TOUCH_HOST = 9
SYNC_TOUCH_DEVICE = 10
SYNC_WAIT_STREAM = 11

SYNC_FLAG_NONE = 0
SYNC_FLAG_FORCE = 1

RULE_BY_DIMS = 0
RULE_C_ORDER = 1
RULE_FORTRAN_ORDER = 2

ALIGN_ELEMENTS = 0
ALIGN_BYTES = 1

DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_ROCM = 10
DL_ROCM_HOST = 11
DL_EXT_DEV = 12  # the emulated device: host memory that must not pass for a GPU pointer
DL_CUDA_MANAGED = 13

SLICE_RANGE = 0
SLICE_INDEX = 1
SLICE_NONE = -(2**63)  # INT64_MIN: Python's None in a slice

DLPACK_LEGACY = 0  # gtstorage_dlpack_kind: struct DLManagedTensor
DLPACK_VERSIONED = 1  # struct DLManagedTensorVersioned

handle_t = ctypes.c_uint64
NULL_HANDLE = 0

# ---------------------------------------------------------------------------------------------
# Structs (field order and types exactly as in the header).

_i64p = ctypes.POINTER(ctypes.c_int64)
_i32p = ctypes.POINTER(ctypes.c_int32)


class Array(ctypes.Structure):
    """gtstorage_array: a strided N-d array in caller memory."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_uint32),
        ("data", ctypes.c_void_p),
        ("shape", _i64p),
        ("strides", _i64p),
        ("dtype", ctypes.c_char_p),
    ]


class CreateOptions(ctypes.Structure):
    """gtstorage_create_options."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_uint32),
        ("shape", _i64p),
        ("dtype", ctypes.c_char_p),
        ("dims", ctypes.c_char_p),
        ("preset", ctypes.c_char_p),
        ("layout", _i32p),
        ("halo", _i64p),
        ("aligned_index", _i64p),
        ("alignment_bytes", ctypes.c_int64),
        ("init", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("managed", ctypes.c_int32),
        ("host_memory", ctypes.c_int32),
        ("readonly", ctypes.c_int32),
        ("fill_value", ctypes.c_void_p),
        ("source", ctypes.POINTER(Array)),
    ]


RELEASE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class WrapOptions(ctypes.Structure):
    """gtstorage_wrap_options (GDP-3 as_storage)."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_uint32),
        ("data", ctypes.c_void_p),
        ("shape", _i64p),
        ("strides", _i64p),
        ("dtype", ctypes.c_char_p),
        ("dims", ctypes.c_char_p),
        ("halo", _i64p),
        ("readonly", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("release", RELEASE_FN),
        ("user_data", ctypes.c_void_p),
        ("device_data", ctypes.c_void_p),
        ("device_strides", _i64p),
        ("sync_state", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


class DlpackOptions(ctypes.Structure):
    """gtstorage_dlpack_options (optional parameters of gtstorage_wrap_dlpack)."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("readonly", ctypes.c_int32),
        ("dims", ctypes.c_char_p),
        ("halo", _i64p),
    ]


class PlanInfo(ctypes.Structure):
    """gtstorage_plan_info."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_uint32),
        ("shape", ctypes.c_int64 * MAX_NDIM),
        ("padded_shape", ctypes.c_int64 * MAX_NDIM),
        ("strides", ctypes.c_int64 * MAX_NDIM),
        ("layout", ctypes.c_int32 * MAX_NDIM),
        ("halo", (ctypes.c_int64 * 2) * MAX_NDIM),
        ("aligned_index", ctypes.c_int64 * MAX_NDIM),
        ("dims", (ctypes.c_char * DIM_LABEL_SIZE) * MAX_NDIM),
        ("typestr", ctypes.c_char * TYPESTR_SIZE),
        ("preset", ctypes.c_char * PRESET_NAME_SIZE),
        ("itemsize", ctypes.c_int64),
        ("alignment_bytes", ctypes.c_int64),
        ("byte_offset", ctypes.c_int64),
        ("padded_bytes", ctypes.c_int64),
        ("allocation_bytes", ctypes.c_int64),
        ("contiguous_dim", ctypes.c_int32),
        ("device", ctypes.c_int32),
    ]


class PresetInfo(ctypes.Structure):
    """gtstorage_preset_info."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("name", ctypes.c_char * PRESET_NAME_SIZE),
        ("alignment", ctypes.c_int64),
        ("alignment_unit", ctypes.c_int32),
        ("device", ctypes.c_int32),
        ("rule", ctypes.c_int32),
        ("base_layout", ctypes.c_int32 * 3),
    ]


class SliceSpec(ctypes.Structure):
    """gtstorage_slice_spec."""

    _fields_ = [
        ("start", ctypes.c_int64),
        ("stop", ctypes.c_int64),
        ("step", ctypes.c_int64),
        ("kind", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


class InterfaceInfo(ctypes.Structure):
    """gtstorage_interface_info: the descriptor of one side of a storage."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_uint32),
        ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * MAX_NDIM),
        ("strides", ctypes.c_int64 * MAX_NDIM),
        ("layout", ctypes.c_int32 * MAX_NDIM),
        ("halo", (ctypes.c_int64 * 2) * MAX_NDIM),
        ("origin", ctypes.c_int64 * MAX_NDIM),
        ("aligned_index", ctypes.c_int64 * MAX_NDIM),
        ("dims", (ctypes.c_char * DIM_LABEL_SIZE) * MAX_NDIM),
        ("typestr", ctypes.c_char * TYPESTR_SIZE),
        ("itemsize", ctypes.c_int64),
        ("nbytes", ctypes.c_int64),
        ("allocation", ctypes.c_void_p),
        ("allocation_bytes", ctypes.c_int64),
        ("byte_offset", ctypes.c_int64),
        ("readonly", ctypes.c_int32),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("side", ctypes.c_int32),
        ("sync_state", ctypes.c_int32),
        ("is_c_contiguous", ctypes.c_int32),
        ("stream", ctypes.c_uint64),
    ]


class Stats(ctypes.Structure):
    """gtstorage_stats."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("live_handles", ctypes.c_int64),
        ("live_buffers", ctypes.c_int64),
        ("host_bytes", ctypes.c_int64),
        ("device_bytes", ctypes.c_int64),
        ("h2d_count", ctypes.c_int64),
        ("h2d_bytes", ctypes.c_int64),
        ("d2h_count", ctypes.c_int64),
        ("d2h_bytes", ctypes.c_int64),
    ]


class TransferStats(ctypes.Structure):
    """gtstorage_transfer_stats."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("h2d_count", ctypes.c_int64),
        ("h2d_bytes", ctypes.c_int64),
        ("d2h_count", ctypes.c_int64),
        ("d2h_bytes", ctypes.c_int64),
    ]


def new_struct(cls):
    """An instance of a versioned struct with struct_size set, as the header's *_INIT macros do."""
    obj = cls()
    obj.struct_size = ctypes.sizeof(cls)
    return obj


# ---------------------------------------------------------------------------------------------
# Errors: every failing call raises one of these, carrying the library's message.


class GTStorageError(Exception):
    """Base class of the errors reported by libgtstorage (``status`` holds the C status code)."""

    def __init__(self, message: str, status: int = ERROR_INTERNAL):
        super().__init__(message)
        self.status = status

    @property
    def status_name(self) -> str:
        """Name of the C status code (e.g. "GTSTORAGE_ERROR_INVALID_ARGUMENT")."""
        return status_name(self.status)


class GTValueError(GTStorageError, ValueError):
    """A parameter was rejected by the library (bad value, shape mismatch, read-only …)."""


class GTMemoryError(GTStorageError, MemoryError):
    """An allocation failed (host or device)."""


class GTNoSuchBufferError(GTStorageError, AttributeError):
    """The storage has no buffer on the requested side (GDP-3's GTNoSuchBufferError).

    It is an AttributeError too, so that ``hasattr(storage, "__cuda_array_interface__")`` is False
    for a host-only storage, as array consumers expect.
    """


class GTUnknownPresetError(GTStorageError, ValueError, RuntimeError):
    """The backend/defaults name is not a registered preset (GT4Py raises RuntimeError here)."""


class GTDeviceError(GTStorageError, RuntimeError):
    """No usable device, or the device runtime failed."""


class GTDriverTooOldError(GTDeviceError):
    """A GPU is held back by a driver older than the CUDA runtime the library was built with
    (the message names both versions)."""


class GTSyncConflictError(GTStorageError, RuntimeError):
    """Host and device were both modified without a synchronization."""


class GTUnsupportedError(GTStorageError, NotImplementedError):
    """A valid request that this build or this storage cannot do."""


class GTInternalError(GTStorageError, RuntimeError):
    """A bug in gtstorage."""


_ERROR_CLASSES = {
    ERROR_INVALID_ARGUMENT: GTValueError,
    ERROR_INVALID_HANDLE: GTValueError,
    ERROR_OUT_OF_MEMORY: GTMemoryError,
    ERROR_OVERFLOW: GTValueError,
    ERROR_NO_SUCH_BUFFER: GTNoSuchBufferError,
    ERROR_NO_DEVICE: GTDeviceError,
    ERROR_DEVICE: GTDeviceError,
    ERROR_UNKNOWN_PRESET: GTUnknownPresetError,
    ERROR_SHAPE_MISMATCH: GTValueError,
    ERROR_SYNC_CONFLICT: GTSyncConflictError,
    ERROR_READONLY: GTValueError,
    ERROR_UNSUPPORTED: GTUnsupportedError,
    ERROR_BUFFER_TOO_SMALL: GTValueError,
    ERROR_DRIVER_TOO_OLD: GTDriverTooOldError,
    ERROR_INTERNAL: GTInternalError,
}


def error_for(status: int, context: Optional[str] = None) -> GTStorageError:
    """The exception for a failed call: the library's thread-local message, prefixed by context."""
    raw = lib.gtstorage_last_error()
    message = raw.decode("utf-8", "replace") if raw else ""
    if not message:
        message = status_name(status)
    if context:
        message = f"{context}: {message}"
    cls = _ERROR_CLASSES.get(status, GTInternalError)
    return cls(message, status)


def check(status: int, context: Optional[str] = None) -> None:
    """Raises the mapped exception if @p status is not OK."""
    if status != OK:
        raise error_for(status, context)


def status_name(status: int) -> str:
    return lib.gtstorage_status_name(status).decode("ascii", "replace")


# ---------------------------------------------------------------------------------------------
# Library discovery: GTSTORAGE_LIBRARY, next to the package, then the system loader.

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))

if sys.platform == "darwin":
    _LIB_NAMES = [f"libgtstorage.{ABI_MAJOR}.dylib", "libgtstorage.dylib"]
elif sys.platform.startswith("win"):
    _LIB_NAMES = ["gtstorage.dll", "libgtstorage.dll"]
else:
    _LIB_NAMES = [f"libgtstorage.so.{ABI_MAJOR}", "libgtstorage.so"]


def _candidates_in(directory: str) -> List[str]:
    return [os.path.join(directory, n) for n in _LIB_NAMES if os.path.isfile(os.path.join(directory, n))]


def _load_library() -> ctypes.CDLL:
    tried: List[str] = []
    env = os.environ.get("GTSTORAGE_LIBRARY")
    if env:
        # An explicit choice must not silently fall back to another copy of the library.
        paths = _candidates_in(env) if os.path.isdir(env) else [env]
        if not paths:
            raise ImportError(
                f"gtstorage: GTSTORAGE_LIBRARY={env!r} is a directory without any of {_LIB_NAMES}"
            )
        try:
            return ctypes.CDLL(paths[0])
        except OSError as exc:
            raise ImportError(f"gtstorage: cannot load GTSTORAGE_LIBRARY={env!r}: {exc}") from exc

    for directory in (_PKG_DIR, os.path.dirname(_PKG_DIR)):
        for path in _candidates_in(directory):
            try:
                return ctypes.CDLL(path)
            except OSError as exc:
                tried.append(f"{path} ({exc})")
        if not _candidates_in(directory):
            tried.append(f"{directory}/ (no {' or '.join(_LIB_NAMES)})")

    names = list(_LIB_NAMES)
    found = ctypes.util.find_library("gtstorage")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            tried.append(f"system loader {name!r} ({exc})")
    raise ImportError(
        "gtstorage: libgtstorage was not found. Set GTSTORAGE_LIBRARY to the library file (or the "
        "directory holding it), put it next to the gtstorage package, or install it where the "
        "system loader finds it. Tried: " + "; ".join(tried)
    )


def _declare(lib_: ctypes.CDLL) -> None:
    """Prototypes of every entry point the binding calls (all return an int status)."""
    H = handle_t
    c_int, c_i32, c_u32 = ctypes.c_int, ctypes.c_int32, ctypes.c_uint32
    vp = ctypes.c_void_p
    P = ctypes.POINTER
    protos = {
        "gtstorage_version": (ctypes.c_uint32, []),
        "gtstorage_version_string": (ctypes.c_char_p, []),
        "gtstorage_last_error": (ctypes.c_char_p, []),
        "gtstorage_status_name": (ctypes.c_char_p, [c_int]),
        "gtstorage_retain": (c_int, [H]),
        "gtstorage_release": (c_int, [H]),
        "gtstorage_refcount": (c_int, [H, P(ctypes.c_int64)]),
        "gtstorage_create_options_init": (c_int, [P(CreateOptions)]),
        "gtstorage_create": (c_int, [P(CreateOptions), P(H)]),
        "gtstorage_wrap_options_init": (c_int, [P(WrapOptions)]),
        "gtstorage_wrap": (c_int, [P(WrapOptions), P(H)]),
        "gtstorage_plan": (c_int, [P(CreateOptions), P(PlanInfo)]),
        "gtstorage_preset_count": (c_int, [P(c_i32)]),
        "gtstorage_preset_at": (c_int, [c_i32, P(PresetInfo)]),
        "gtstorage_preset_find": (c_int, [ctypes.c_char_p, P(PresetInfo)]),
        "gtstorage_preset_register": (c_int, [P(PresetInfo)]),
        "gtstorage_slice": (c_int, [H, P(SliceSpec), c_u32, P(H)]),
        "gtstorage_transpose": (c_int, [H, P(c_i32), c_u32, P(H)]),
        "gtstorage_domain_view": (c_int, [H, P(H)]),
        "gtstorage_interface": (c_int, [H, c_i32, P(InterfaceInfo)]),
        "gtstorage_data": (c_int, [H, c_i32, P(vp)]),
        "gtstorage_has_side": (c_int, [H, c_i32, P(c_i32)]),
        "gtstorage_copy": (c_int, [H, H]),
        "gtstorage_copy_from_array": (c_int, [H, P(Array)]),
        "gtstorage_copy_to_array": (c_int, [P(Array), H]),
        "gtstorage_fill": (c_int, [H, vp]),
        "gtstorage_fill_double": (c_int, [H, ctypes.c_double]),
        "gtstorage_sync": (c_int, [H, c_i32, c_u32]),
        "gtstorage_sync_async": (c_int, [H, c_i32, c_u32, ctypes.c_uint64]),
        "gtstorage_get_sync_state": (c_int, [H, P(c_i32)]),
        "gtstorage_acquire": (c_int, [H, c_i32]),
        "gtstorage_touch": (c_int, [H, c_i32]),
        "gtstorage_set_stream": (c_int, [H, ctypes.c_uint64]),
        "gtstorage_device_count": (c_int, [P(c_i32)]),
        "gtstorage_set_device_backend": (c_int, [ctypes.c_char_p]),
        "gtstorage_get_device_backend": (c_int, [ctypes.c_char_p, ctypes.c_size_t]),
        "gtstorage_set_device": (c_int, [c_i32]),
        "gtstorage_get_stats": (c_int, [P(Stats)]),
        "gtstorage_reset_transfer_stats": (c_int, []),
        "gtstorage_get_transfer_stats": (c_int, [H, P(TransferStats)]),
        "gtstorage_to_dlpack_versioned": (c_int, [H, c_i32, P(vp)]),
        "gtstorage_to_dlpack": (c_int, [H, c_i32, P(vp)]),
        "gtstorage_dlpack_options_init": (c_int, [P(DlpackOptions)]),
        "gtstorage_wrap_dlpack": (c_int, [vp, c_i32, P(DlpackOptions), P(H)]),
    }
    missing = []
    for name, (restype, argtypes) in protos.items():
        try:
            fn = getattr(lib_, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError(
            f"gtstorage: {getattr(lib_, '_name', 'libgtstorage')} lacks entry points "
            f"{', '.join(missing)}; it is not a compatible libgtstorage {ABI_MAJOR}.x"
        )


lib = _load_library()
_declare(lib)

version_number = int(lib.gtstorage_version())
if version_number // 10000 != ABI_MAJOR:
    raise ImportError(
        f"gtstorage: {lib._name} is libgtstorage {lib.gtstorage_version_string().decode()}, "
        f"but this binding needs major version {ABI_MAJOR}"
    )
library_path = lib._name


def _load_native():
    """gtstorage._native (the C fast path), or None where it is absent, disabled or unusable.

    It is optional: the package works without it. GTSTORAGE_PY_NATIVE=0 disables it. It is used
    only if it is linked to the very libgtstorage loaded above (its DT_NEEDED libgtstorage.so.1
    resolves to the already loaded library by SONAME; the address check makes that a fact).
    """
    global native_error
    if os.environ.get("GTSTORAGE_PY_NATIVE", "1").strip().lower() in ("0", "no", "off", "false"):
        native_error = "disabled by GTSTORAGE_PY_NATIVE"
        return None
    try:
        from ._version import native_numpy_version as built_with  # type: ignore[import]
    except ImportError:  # the source tree: no _version.py, no _native either
        built_with = ""
    if built_with.startswith("1."):
        import numpy

        if int(numpy.__version__.split(".")[0]) >= 2:
            # NumPy 2 refuses (noisily) a module built with NumPy 1.x headers: do not try.
            native_error = (f"gtstorage._native was built with NumPy {built_with} headers, "
                            f"which NumPy {numpy.__version__} cannot load")
            return None
    try:
        import importlib

        mod = importlib.import_module(__package__ + "._native")
    except Exception as exc:  # absent (source tree), or built for an incompatible NumPy
        native_error = f"{type(exc).__name__}: {exc}"
        return None
    ours = ctypes.cast(lib.gtstorage_create, ctypes.c_void_p).value
    if mod.library_address() != ours:
        native_error = "gtstorage._native is linked to another libgtstorage than " + library_path
        return None
    native_error = None
    return mod


#: Why `native` is None (a message), or None when it is loaded.
native_error: Optional[str] = None
#: The gtstorage._native extension module, or None (see _load_native).
native = _load_native()


# ---------------------------------------------------------------------------------------------
# Small helpers used by the rest of the package.


def int64_array(values) -> "ctypes.Array":
    values = list(values)
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def int32_array(values) -> "ctypes.Array":
    values = list(values)
    return (ctypes.c_int32 * max(len(values), 1))(*values)


def label(raw: bytes) -> str:
    return bytes(raw).split(b"\0", 1)[0].decode("ascii")
