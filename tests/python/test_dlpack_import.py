# DLPack import (issue 8, point 5): gtstorage._dlpack_import.wrap_dlpack wraps the memory of any
# DLPack producer (NumPy, PyTorch, a hand-made ctypes producer, gtstorage itself) without a copy,
# keeps it alive while the storage or any view lives, hands it back after, and consumes the
# capsule only on success.
import ctypes
import gc
import threading
import weakref

import numpy as np
import pytest

import gtstorage
from gtstorage import _capi, _dlpack
from gtstorage._dlpack_import import wrap_dlpack, _capsule_name

Storage = gtstorage.Storage
lib = _capi.lib

NP_VERSIONED = tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 1)

try:
    import torch
except Exception:  # noqa: BLE001 - not installed, or broken against this NumPy
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
pytestmark = pytest.mark.usefixtures("no_leak")


def wrap(obj, **kw):
    return Storage._from_handle(wrap_dlpack(obj, context="test", **kw))


def host_info(s):
    info = _capi.new_struct(_capi.InterfaceInfo)
    _capi.check(lib.gtstorage_interface(s.handle, _capi.SIDE_HOST, ctypes.byref(info)))
    return info


def address(s):
    return host_info(s).data


def byte_strides(s):
    i = host_info(s)
    return tuple(i.strides[d] for d in range(i.ndim))


def fill(s, value):
    _capi.check(lib.gtstorage_fill_double(s.handle, float(value)), "fill")


# ---------------------------------------------------------------------------------------------
# A hand-made producer: a ctypes DLManagedTensor(Versioned) over a ctypes buffer whose deleter
# counts its calls, in a capsule whose destructor calls the deleter unless it was consumed
# (gtstorage's own capsule destructor, _dlpack._capsule_destructor, does exactly that).


class Producer:
    def __init__(self, shape=(3, 4), *, versioned=True, code=2, bits=64, lanes=1, flags=0,
                 strides=None, device_type=_capi.DL_CPU, byte_offset=0, size=None):
        self.n = size if size is not None else int(np.prod(shape)) if shape else 1
        self.buf = (ctypes.c_double * max(self.n, 1))()
        self.shape = _capi.int64_array(shape)
        self.strides = _capi.int64_array(strides) if strides is not None else None
        self.deleted = 0
        self.versioned = versioned
        self._deleter = _dlpack.DELETER(self._on_delete)  # kept alive by the producer
        t = _dlpack.DLTensor()
        t.data = ctypes.addressof(self.buf)
        t.device = _dlpack.DLDevice(device_type, 0)
        t.ndim = len(shape)
        t.dtype = _dlpack.DLDataType(code, bits, lanes)
        t.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        if self.strides is not None:
            t.strides = ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        if versioned:
            m = _dlpack.DLManagedTensorVersioned()
            m.version = _dlpack.DLPackVersion(1, 0)
            m.flags = flags
        else:
            m = _dlpack.DLManagedTensor()
        m.dl_tensor = t
        m.manager_ctx = None
        m.deleter = self._deleter
        self.managed = m

    def _on_delete(self, _address):
        self.deleted += 1

    def capsule(self):
        name = _dlpack.NAME_VERSIONED if self.versioned else _dlpack.NAME_LEGACY
        return _dlpack._PyCapsule_New(ctypes.addressof(self.managed), name,
                                      _dlpack._capsule_destructor)

    def __dlpack__(self, *, stream=None, max_version=None):
        assert stream is None
        return self.capsule()

    def values(self):
        return np.ctypeslib.as_array(self.buf)


# ---------------------------------------------------------------------------------------------
# NumPy


def test_numpy_is_wrapped_in_place():
    a = np.arange(12.0).reshape(3, 4)
    s = wrap(a)
    assert isinstance(s, gtstorage.CPUStorage)
    assert address(s) == a.ctypes.data
    assert s.shape == (3, 4) and s.dtype == np.float64
    assert byte_strides(s) == a.strides
    assert s.dims == ("I", "J")
    np.testing.assert_array_equal(np.asarray(s), a)
    a[1, 2] = -5.0  # producer -> storage
    assert np.asarray(s)[1, 2] == -5.0
    fill(s, 7.0)  # storage -> producer
    assert (a == 7.0).all()


def test_numpy_capsule_kind_follows_the_producer():
    a = np.zeros((2, 3))
    cap = a.__dlpack__(max_version=(1, 0)) if NP_VERSIONED else a.__dlpack__()
    expected = "dltensor_versioned" if NP_VERSIONED else "dltensor"
    assert _capsule_name(cap) == expected
    s = wrap(cap)
    assert _capsule_name(cap) == "used_" + expected
    assert address(s) == a.ctypes.data
    del s, cap


@pytest.mark.parametrize("view", ["transposed", "strided", "reversed_free", "fortran", "3d_slice"])
def test_numpy_non_contiguous(view):
    base = np.arange(4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    a = {
        "transposed": base[0].T,
        "strided": base[:, ::2, 1::2],
        "reversed_free": base[1:3, 2, :],
        "fortran": np.asfortranarray(base),
        "3d_slice": base[::3, 1:5, ::4],
    }[view]
    s = wrap(a)
    assert address(s) == a.ctypes.data
    assert s.shape == a.shape
    assert byte_strides(s) == a.strides
    np.testing.assert_array_equal(np.asarray(s), a)
    fill(s, -1.0)
    assert (a == -1.0).all()
    if np.shares_memory(a, base):  # nothing outside the view was written
        assert (base == -1.0).sum() == a.size


@pytest.mark.parametrize("dtype", ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4",
                                   "f8", "c8", "c16", "?"])
def test_numpy_dtypes(dtype):
    a = np.ones((3, 2), dtype=dtype)
    try:
        cap = a.__dlpack__(max_version=(1, 0)) if NP_VERSIONED else a.__dlpack__()
    except (BufferError, TypeError, RuntimeError) as exc:  # NumPy 1.24 cannot export bool
        pytest.skip(f"NumPy {np.__version__} cannot export {dtype}: {exc}")
    s = wrap(cap)
    assert s.dtype == a.dtype
    assert address(s) == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(s), a)


def test_numpy_zero_dim():
    a = np.array(5.0)
    s = wrap(a)
    assert s.shape == ()
    assert address(s) == a.ctypes.data
    fill(s, 2.0)
    assert a[()] == 2.0


def test_numpy_dims_and_halo():
    a = np.arange(5 * 6, dtype=np.float64).reshape(5, 6)
    s = wrap(a, dims="KJ", halo=[1, 1, 2, 0])
    assert s.dims == ("K", "J")
    assert s.halo == ((1, 1), (2, 0))
    d = s.domain_view
    np.testing.assert_array_equal(np.asarray(d), a[1:4, 2:])
    del d
    s2 = wrap(a, halo=[(0, 1), (1, 1)])
    assert s2.halo == ((0, 1), (1, 1))


def test_numpy_memory_lives_while_any_view_does():
    a = np.arange(36.0).reshape(6, 6)
    alive = weakref.ref(a)
    s = wrap(a, halo=[1, 1, 1, 1])
    view = s.domain_view[::2, :]
    del a
    gc.collect()
    assert alive() is not None  # the capsule's deleter has not run
    del s
    gc.collect()
    assert alive() is not None  # the view still refers to the memory
    np.testing.assert_array_equal(np.asarray(view), np.arange(36.0).reshape(6, 6)[1:5, 1:5][::2])
    del view
    gc.collect()
    assert alive() is None  # the last view released it


def test_deleter_may_run_on_another_thread():
    a = np.arange(10.0)
    alive = weakref.ref(a)
    handle = wrap_dlpack(a, context="test")
    del a
    statuses = []
    t = threading.Thread(target=lambda: statuses.append(lib.gtstorage_release(handle)))
    t.start()
    t.join()
    gc.collect()
    assert statuses == [_capi.OK]
    assert alive() is None


@pytest.mark.skipif(not NP_VERSIONED, reason="NumPy < 2.1 exports no versioned (read-only) DLPack")
def test_numpy_read_only_array_gives_a_read_only_storage():
    a = np.arange(6.0)
    a.flags.writeable = False
    s = wrap(a)
    assert s.readonly
    with pytest.raises(gtstorage.GTStorageError) as err:
        fill(s, 1.0)
    assert err.value.status == _capi.ERROR_READONLY
    np.testing.assert_array_equal(a, np.arange(6.0))


@pytest.mark.skipif(NP_VERSIONED, reason="NumPy >= 2.1 exports read-only arrays (versioned)")
def test_numpy_legacy_refuses_read_only_arrays_itself():
    a = np.arange(6.0)
    a.flags.writeable = False
    with pytest.raises(BufferError):  # NumPy's legacy export has no read-only flag: it refuses
        wrap(a)


def test_readonly_option():
    a = np.arange(6.0)
    s = wrap(a, readonly=True)
    assert s.readonly
    with pytest.raises(gtstorage.GTStorageError):
        fill(s, 1.0)


# ---------------------------------------------------------------------------------------------
# A hand-made ctypes producer: exact deleter accounting


@pytest.mark.parametrize("versioned", [True, False])
def test_deleter_runs_once_after_the_last_view(versioned):
    p = Producer((4, 5), versioned=versioned)
    p.values()[:] = np.arange(20.0)
    cap = p.capsule()
    s = wrap(cap, halo=[1, 1, 1, 1])
    assert _capsule_name(cap) == ("used_dltensor_versioned" if versioned else "used_dltensor")
    assert address(s) == ctypes.addressof(p.buf)
    view = s.domain_view
    sliced = view[1:, :]
    del cap  # a consumed capsule leaves the tensor alone
    gc.collect()
    assert p.deleted == 0
    del s, view
    gc.collect()
    assert p.deleted == 0
    np.testing.assert_array_equal(np.asarray(sliced), np.arange(20.0).reshape(4, 5)[2:3, 1:4])
    del sliced
    gc.collect()
    assert p.deleted == 1


def test_read_only_flag_of_a_versioned_tensor():
    p = Producer((6,), flags=_dlpack.DLPACK_FLAG_BITMASK_READ_ONLY | _dlpack.DLPACK_FLAG_BITMASK_IS_COPIED)
    s = wrap(p)
    assert s.readonly
    with pytest.raises(gtstorage.GTStorageError) as err:
        fill(s, 3.0)
    assert err.value.status == _capi.ERROR_READONLY
    del err  # its traceback refers to the storage
    assert (p.values() == 0).all()
    del s
    gc.collect()
    assert p.deleted == 1


@pytest.mark.parametrize("case, exc, words", [
    (dict(code=4, bits=16), gtstorage.GTStorageError, "kDLBfloat"),
    (dict(lanes=2), gtstorage.GTStorageError, "lanes 2"),
    (dict(strides=(0, 1)), gtstorage.GTStorageError, "stride 0"),
    (dict(strides=(1, 1)), gtstorage.GTStorageError, "overlap"),
    (dict(device_type=_capi.DL_CUDA), gtstorage.GTStorageError, "device_type"),
    (dict(device_type=4), gtstorage.GTStorageError, "kDLOpenCL"),
])
def test_refused_tensor_stays_with_the_capsule(case, exc, words):
    p = Producer((3, 4), **case)
    cap = p.capsule()
    with pytest.raises(exc) as err:
        wrap(cap)
    message = str(err.value)
    del err  # its traceback refers to the capsule
    if case.get("device_type") == _capi.DL_CUDA and gtstorage.get_device_backend() == "cuda":
        # A real CUDA runtime knows the address: the refusal names the host memory instead.
        words = "is not device, managed or pinned memory"
    assert words in message
    assert message.startswith("test: ")
    assert _capsule_name(cap) == "dltensor_versioned"  # untouched: it still owns the tensor
    assert p.deleted == 0
    del cap  # the capsule's destructor calls the deleter, once
    gc.collect()
    assert p.deleted == 1


def test_unknown_major_version_is_refused():
    p = Producer((3,))
    p.managed.version = _dlpack.DLPackVersion(2, 0)
    cap = p.capsule()
    with pytest.raises(gtstorage.GTStorageError, match="version.major") as err:
        wrap(cap)
    del err  # its traceback refers to the capsule
    assert _capsule_name(cap) == "dltensor_versioned"
    del cap
    gc.collect()
    assert p.deleted == 1


def test_library_error_leaves_the_capsule_then_a_retry_consumes_it():
    a = np.zeros((3, 4))
    cap = a.__dlpack__(max_version=(1, 0)) if NP_VERSIONED else a.__dlpack__()
    name = _capsule_name(cap)
    with pytest.raises(gtstorage.GTStorageError, match="halo"):
        wrap(cap, halo=[2, 2, 0, 0])  # wider than the extent 3
    assert _capsule_name(cap) == name
    with pytest.raises(ValueError, match="halo has 2 widths"):
        wrap(cap, halo=[1, 1])  # checked here: the library would read 2 * ndim
    assert _capsule_name(cap) == name
    s = wrap(cap, halo=[1, 1, 0, 0])
    assert _capsule_name(cap) == "used_" + name
    with pytest.raises(ValueError, match="already consumed"):
        wrap(cap)
    assert address(s) == a.ctypes.data
    del s


def test_bad_capsules_and_objects():
    p = Producer((2,))
    foreign = _dlpack._PyCapsule_New(ctypes.addressof(p.buf), b"not_dlpack", _dlpack._CAPSULE_DESTRUCTOR())
    with pytest.raises(TypeError, match=r"^arg: a PyCapsule named 'not_dlpack' is not a DLPack"):
        wrap_dlpack(foreign, context="arg")
    with pytest.raises(TypeError, match=r"^arg: int is neither a DLPack capsule nor"):
        wrap_dlpack(42, context="arg")

    class BadProducer:
        def __dlpack__(self, **kw):
            return "not a capsule"

    with pytest.raises(TypeError, match="returned str, not a PyCapsule"):
        wrap_dlpack(BadProducer(), context="arg")
    with pytest.raises(TypeError, match="halo"):
        wrap_dlpack(p, context="arg", halo=3)
    gc.collect()
    assert p.deleted == 1  # the capsule made for the failed halo call was never consumed


def test_producer_without_max_version_gets_a_legacy_capsule():
    class Legacy:
        def __init__(self):
            self.p = Producer((2, 2), versioned=False)
            self.calls = []

        def __dlpack__(self, stream=None):  # a pre-2023 producer: no max_version
            self.calls.append(stream)
            return self.p.capsule()

    obj = Legacy()
    s = wrap(obj)
    assert obj.calls == [None]
    assert address(s) == ctypes.addressof(obj.p.buf)
    del s
    gc.collect()
    assert obj.p.deleted == 1


def test_byte_offset_and_negative_strides():
    p = Producer((2, 3), strides=(-4, 1), byte_offset=4 * 8, size=8)
    p.values()[:] = np.arange(8.0)
    s = wrap(p)
    assert address(s) == ctypes.addressof(p.buf) + 32
    assert byte_strides(s) == (-32, 8)
    np.testing.assert_array_equal(np.asarray(s), [[4.0, 5.0, 6.0], [0.0, 1.0, 2.0]])


# ---------------------------------------------------------------------------------------------
# gtstorage itself as the producer (its own __dlpack__), host and emulated device


def _create(preset, shape, device=_capi.DEVICE_DEFAULT):
    o = _capi.new_struct(_capi.CreateOptions)
    _capi.check(lib.gtstorage_create_options_init(ctypes.byref(o)))
    shp = _capi.int64_array(shape)
    o.ndim = len(shape)
    o.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    o.preset = preset.encode()
    o.device = device
    o.init = _capi.INIT_ONES
    h = _capi.handle_t()
    _capi.check(lib.gtstorage_create(ctypes.byref(o), ctypes.byref(h)), "create")
    return Storage._from_handle(h.value)


def test_round_trip_through_gtstorage_export():
    src = _create("gt:cpu_kfirst", (3, 4, 5))
    s = wrap(src, dims="IJK")
    assert address(s) == address(src)
    assert byte_strides(s) == byte_strides(src)
    assert s.layout == src.layout
    fill(s, 2.5)
    assert (np.asarray(src) == 2.5).all()
    del src
    gc.collect()
    assert (np.asarray(s) == 2.5).all()  # the export keeps the original buffers alive


def test_emulated_device_memory_round_trip():
    backend = ctypes.create_string_buffer(32)
    _capi.check(lib.gtstorage_get_device_backend(backend, 32))
    count = ctypes.c_int32(0)
    if backend.value != b"emulated" or lib.gtstorage_device_count(ctypes.byref(count)) != 0 \
            or count.value == 0:
        pytest.skip("the emulated device backend is not active")
    src = _create("gt:gpu", (4, 6))
    s = wrap(src)
    assert isinstance(s, gtstorage.GPUStorage)
    info_s = _capi.new_struct(_capi.InterfaceInfo)
    info_d = _capi.new_struct(_capi.InterfaceInfo)
    _capi.check(lib.gtstorage_interface(s.handle, _capi.SIDE_DEVICE, ctypes.byref(info_s)))
    _capi.check(lib.gtstorage_interface(src.handle, _capi.SIDE_DEVICE, ctypes.byref(info_d)))
    assert info_s.data == info_d.data
    assert info_s.device_type == _capi.DL_EXT_DEV
    del src, s


# ---------------------------------------------------------------------------------------------
# PyTorch (Debian's python3-torch in the NumPy 1.x pass)


@needs_torch
def test_torch_cpu_tensor_zero_copy():
    t = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    s = wrap(t)
    assert address(s) == t.data_ptr()
    assert byte_strides(s) == (32, 8)
    fill(s, 4.0)
    assert bool((t == 4.0).all())
    t[0, 0] = -1.0
    assert np.asarray(s)[0, 0] == -1.0


@needs_torch
@pytest.mark.parametrize("view", ["t", "slice", "permute", "narrow"])
def test_torch_non_contiguous(view):
    base = torch.arange(4 * 6 * 5, dtype=torch.float32).reshape(4, 6, 5)
    t = {
        "t": base[1].t(),
        "slice": base[:, ::2, 1::3],
        "permute": base.permute(2, 0, 1),
        "narrow": base.narrow(1, 2, 3),
    }[view]
    s = wrap(t)
    assert address(s) == t.data_ptr()
    assert s.shape == tuple(t.shape)
    assert byte_strides(s) == tuple(x * t.element_size() for x in t.stride())
    np.testing.assert_array_equal(np.asarray(s), t.numpy())


@needs_torch
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "float16",
                                   "float32", "float64", "complex64", "complex128", "bool"])
def test_torch_dtypes(dtype):
    t = torch.ones((2, 3), dtype=getattr(torch, dtype))
    try:
        cap = t.__dlpack__()
    except RuntimeError as exc:  # torch < 1.12 cannot export bool
        pytest.skip(f"torch {torch.__version__} cannot export {dtype}: {exc}")
    s = wrap(cap)
    assert address(s) == t.data_ptr()
    np.testing.assert_array_equal(np.asarray(s), t.numpy())


@needs_torch
def test_torch_broadcast_is_refused_and_released():
    t = torch.arange(4.0).expand(3, 4)  # stride 0 on dimension 0
    with pytest.raises(gtstorage.GTStorageError, match="stride 0"):
        wrap(t)


@needs_torch
def test_torch_memory_lives_while_the_storage_does():
    t = torch.arange(1000, dtype=torch.float64)
    ptr = t.data_ptr()
    s = wrap(t)
    view = s[10:20]
    del t, s
    gc.collect()
    # the tensor's memory is still the storage's: nothing reallocated it under the view
    np.testing.assert_array_equal(np.asarray(view), np.arange(10, 20, dtype=np.float64))
    assert address(view) == ptr + 80
    del view


def test_as_storage_wraps_any_dlpack_producer_without_a_copy():
    torch = pytest.importorskip("torch")
    import gtstorage

    t = torch.arange(12.0, dtype=torch.float64).reshape(3, 4)
    s = gtstorage.as_storage(t, dims="IJ", halo=(1, 0))
    assert isinstance(s, gtstorage.Storage) and s.shape == (3, 4) and s.halo == ((1, 1), (0, 0))
    assert s.__array_interface__["data"][0] == t.data_ptr()  # zero-copy
    s[0, 0] = -1.0
    assert float(t[0, 0]) == -1.0
    r = gtstorage.as_storage(t.T, readonly=True)
    assert r.readonly and r.shape == (4, 3)
    with pytest.raises(ValueError):
        r[0, 0] = 5.0
    with pytest.raises(ValueError, match="shape"):
        gtstorage.as_storage(t, shape=(4, 3))


@needs_torch
def test_torch_tensor_that_requires_grad_is_refused_naming_the_argument():
    # PyTorch exports a tensor that requires grad through no protocol (RuntimeError from
    # __array__, __dlpack__ and the CAI alike): every entry point refuses it with a TypeError that
    # names itself and the argument, allocates nothing, and leaves the tensor as it was.
    import gtstorage.gdp3 as gs

    t = torch.ones((2, 3), dtype=torch.float64, requires_grad=True)
    s = gs.zeros((2, 3))
    calls = {
        "as_storage: data": lambda: gs.as_storage(t),
        "as_storage: device_data": lambda: gs.as_storage(device_data=t),
        "from_array: data": lambda: gs.from_array(t),
        "zeros_like: data": lambda: gs.zeros_like(t),
        "full: fill_value": lambda: gs.full((2,), t[0, 0]),
        "__setitem__: value": lambda: s.__setitem__(Ellipsis, t),
        "fill: value": lambda: s.fill(t[0, 0]),
        # the GT4Py face
        "gtstorage.from_array: data": lambda: gtstorage.from_array(t, backend="gt:cpu_ifirst"),
        "gtstorage.zeros_like: data": lambda: gtstorage.zeros_like(t),
        "gtstorage.full: fill_value": lambda: gtstorage.full((2,), t[0, 0]),
    }
    before = gtstorage.get_stats()["live_handles"]
    for where, call in calls.items():
        argument = where.rpartition(" ")[2]
        with pytest.raises(TypeError) as info:
            call()
        message = str(info.value)
        assert message.startswith(where.replace("gtstorage.", "")), message
        assert "requires grad" in message and f"{argument}.detach()" in message, message
    assert gtstorage.get_stats()["live_handles"] == before
    assert t.requires_grad and float(t.sum()) == 6.0
    # Detached, the same memory is shared as usual.
    w = gs.as_storage(t.detach())
    assert w.__array_interface__["data"][0] == t.data_ptr()


@needs_torch
def test_gt4py_like_functions_take_torch_tensors():
    # torch.float32 is no dtype NumPy knows by name: the *_like functions read it through the
    # tensor's memory (a view, no copy) instead of raising.
    t = torch.ones((3, 4), dtype=torch.float32)
    for fn in (gtstorage.zeros_like, gtstorage.ones_like, gtstorage.empty_like):
        a = fn(t)
        assert isinstance(a, np.ndarray) and a.shape == (3, 4) and a.dtype == np.float32
    a = gtstorage.full_like(t, 2.5, backend="gt:cpu_kfirst")
    assert a.dtype == np.float32 and float(a.sum()) == 30.0


class _OnlyDLPack:
    """A producer that offers DLPack and nothing else (no array interface, no buffer protocol),
    as a torch or JAX tensor does, made from a NumPy array so that it runs everywhere."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        try:
            return self._array.__dlpack__(**kwargs)
        except TypeError:  # NumPy < 2.1 takes only stream=
            return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


@pytest.mark.parametrize("kwargs, words", [
    ({"device": "gpu"}, r"device='gpu' does not match the storage's device"),
    ({"managed": "cuda"}, r"managed='cuda' does not match the storage's managed"),
    ({"managed": "gtstorage"}, r"managed='gtstorage' does not match"),
    ({"device_id": 3}, r"device_id=3 does not match: the storage has no device buffer"),
    ({"device_id": 0}, r"device_id=0 does not match: the storage has no device buffer"),
    ({"sync_state": gtstorage.SyncState.SYNC_DEVICE_DIRTY}, r"sync_state SYNC_DEVICE_DIRTY does not match"),
])
def test_as_storage_of_a_dlpack_producer_checks_the_gdp3_keywords(kwargs, words):
    """GDP-3: every parameter given is validated against the buffer. A host tensor imported by
    DLPack is host memory: a device, a management or a device ordinal said of it is refused."""
    producer = _OnlyDLPack(np.arange(6.0))
    with pytest.raises(ValueError, match=r"^as_storage: " + words):
        gtstorage.as_storage(producer, **kwargs)
    s = gtstorage.as_storage(producer, device="cpu", managed=None, device_id=-1)
    assert s.__array_interface__["data"][0] == producer._array.ctypes.data
    np.testing.assert_array_equal(np.asarray(s), np.arange(6.0))


@pytest.mark.parametrize("device_id", [0, 3, -2])
def test_as_storage_of_host_memory_refuses_a_device_id(device_id):
    """A device ordinal belongs to device_data; host memory has none (the C library refuses it
    too, naming device_id)."""
    a = np.zeros(4)
    with pytest.raises(ValueError, match="device_id"):
        gtstorage.as_storage(a, device_id=device_id)
    assert gtstorage.as_storage(a, device_id=-1).__array_interface__["data"][0] == a.ctypes.data


@pytest.mark.parametrize("kwargs, words", [
    ({"device": "gpu"}, r"device='gpu' does not match"),
    ({"managed": "gtstorage"}, r"managed='gtstorage' does not match"),
    ({"sync_state": 2}, r"sync_state"),
    ({"sync_state": gtstorage.SyncState(gtstorage.SyncState.SYNC_HOST_DIRTY)}, r"sync_state"),
])
def test_as_storage_of_host_memory_refuses_what_host_memory_is_not(kwargs, words):
    """Host memory is not a device buffer, not a managed pair and has no dirty side: saying so
    is an error, and a refused SyncState object keeps its value."""
    a = np.zeros(4)
    with pytest.raises(ValueError, match=words):
        gtstorage.as_storage(a, **kwargs)
    if isinstance(kwargs.get("sync_state"), gtstorage.SyncState):
        assert kwargs["sync_state"].state == gtstorage.SyncState.SYNC_HOST_DIRTY
    s = gtstorage.as_storage(a, device="cpu", managed=None, sync_state=0)
    assert s.__array_interface__["data"][0] == a.ctypes.data
