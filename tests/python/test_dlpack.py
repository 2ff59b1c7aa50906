# DLPack export: versioned and legacy capsules from the C library, consumed zero-copy by NumPy
# (2.x versioned, 1.x legacy) and torch; unconsumed capsules release their storage reference.
import gc
import sys

import numpy as np
import pytest

import gtstorage.gdp3 as gs  # the GDP-3 face: allocators return Storage objects
from conftest import live
from gtstorage import _dlpack

NUMPY2 = int(np.__version__.split(".")[0]) >= 2


def host_storage():
    s = gs.empty((4, 5, 6), np.float32, backend="gt:cpu_ifirst", halo=(1, 0, 2))
    s[...] = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    return s


def test_capsule_names_follow_max_version():
    s = host_storage()
    assert "dltensor_versioned" in repr(s.__dlpack__(max_version=(1, 0)))
    assert "dltensor_versioned" in repr(s.__dlpack__(max_version=(1, 3)))
    assert '"dltensor"' in repr(s.__dlpack__())
    assert '"dltensor"' in repr(s.__dlpack__(max_version=(0, 8)))


def test_capsule_describes_the_storage():
    s = host_storage()
    for versioned, cap in ((True, s.__dlpack__(max_version=(1, 0))), (False, s.__dlpack__())):
        managed, is_versioned = _dlpack.capsule_tensor(cap)
        assert is_versioned is versioned
        t = managed.dl_tensor
        assert t.ndim == 3
        assert [t.shape[i] for i in range(3)] == [4, 5, 6]
        assert [t.strides[i] * 4 for i in range(3)] == list(s.strides)  # DLPack counts elements
        assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 32, 1)  # kDLFloat
        assert (t.device.device_type, t.device.device_id) == (1, 0)
        assert t.data + t.byte_offset == s.to_numpy().ctypes.data
        if versioned:
            assert (managed.version.major, managed.version.minor) >= (1, 0)
            assert not managed.flags & _dlpack.DLPACK_FLAG_BITMASK_READ_ONLY


def test_unconsumed_capsule_releases_reference():
    base = live()
    s = host_storage()
    rc = s.refcount()
    caps = [s.__dlpack__(max_version=(1, 0)), s.__dlpack__()]
    assert s.refcount() == rc  # exports hold the buffers, not the handle
    del s
    gc.collect()
    assert live()[1] == base[1] + 1  # the capsules keep the buffer
    del caps
    assert live() == base


def test_numpy_from_dlpack_zero_copy():
    base = live()
    s = host_storage()
    x = np.from_dlpack(s)
    assert x.ctypes.data == s.to_numpy().ctypes.data
    assert x.strides == s.strides and x.shape == s.shape and x.dtype == np.float32
    s[0, 0, 0] = 99
    assert x[0, 0, 0] == 99
    if NUMPY2:  # NumPy 1.x marks every DLPack import read-only
        x[0, 0, 1] = 98
        assert s[0, 0, 1] == 98
    del s
    gc.collect()
    assert x[1, 2, 3] == np.float32(1 * 30 + 2 * 6 + 3)
    del x
    assert live() == base


def test_numpy_consumes_versioned_or_legacy():
    # NumPy 2 asks for max_version (1, 0) and gets a versioned capsule; NumPy 1.x calls
    # __dlpack__(stream=None) and gets a legacy one. Record what the consumer asked for.
    s = host_storage()
    calls = []

    class Spy:
        def __dlpack__(self, **kw):
            calls.append(kw)
            return s.__dlpack__(**kw)

        def __dlpack_device__(self):
            return s.__dlpack_device__()

    x = np.from_dlpack(Spy())
    np.testing.assert_array_equal(x, s.to_numpy())
    if NUMPY2:
        assert calls[-1].get("max_version") is not None and tuple(calls[-1]["max_version"]) >= (1, 0)
    else:
        assert calls[-1].get("max_version") is None


def test_legacy_capsule_consumed_by_numpy_low_level():
    # Whatever NumPy asks, a legacy capsule must be accepted too (NumPy 1.24 only reads those).
    s = host_storage()

    class LegacyOnly:
        def __dlpack__(self, stream=None):
            return s.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return s.__dlpack_device__()

    base = live()
    x = np.from_dlpack(LegacyOnly())
    assert np.shares_memory(x, s.to_numpy())
    del x
    assert live() == base


def test_readonly_flag_exported():
    s = gs.zeros((3,), readonly=True)
    managed, _ = _dlpack.capsule_tensor(s.__dlpack__(max_version=(1, 0)))
    assert managed.flags & _dlpack.DLPACK_FLAG_BITMASK_READ_ONLY
    if NUMPY2:
        assert not np.from_dlpack(s).flags.writeable


def test_dlpack_copy_and_device_arguments():
    s = host_storage()
    c = s.__dlpack__(copy=True)
    assert _dlpack.capsule_tensor(c)[0].dl_tensor.data != s.to_numpy().ctypes.data
    if NUMPY2 and tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 1):
        c = np.from_dlpack(s, copy=True)
        assert not np.shares_memory(c, s.to_numpy())
        np.testing.assert_array_equal(c, s.to_numpy())
    cap = s.__dlpack__(dl_device=(1, 0), copy=False)
    assert _dlpack.capsule_tensor(cap)[0].dl_tensor.data is not None
    with pytest.raises(BufferError):
        s.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        s.__dlpack__(stream=5)  # a stream makes no sense for host memory
    with pytest.raises(TypeError):
        s.__dlpack__(dl_device="cpu")


def test_torch_from_dlpack_zero_copy():
    torch = pytest.importorskip("torch")
    base = live()
    s = host_storage()
    t = torch.from_dlpack(s)
    assert t.data_ptr() == s.to_numpy().ctypes.data
    assert tuple(t.shape) == s.shape
    assert tuple(st * 4 for st in t.stride()) == s.strides
    t[1, 1, 1] = -7
    assert s[1, 1, 1] == -7
    del s
    gc.collect()
    assert float(t[2, 3, 4]) == 2 * 30 + 3 * 6 + 4
    del t
    assert live() == base


def test_readonly_storage_exports_only_versioned_capsules():
    import gtstorage.gdp3 as gs

    s = gs.as_storage(np.frombuffer(bytes(80)))
    with pytest.raises(BufferError, match="read-only"):
        s.__dlpack__()  # legacy: cannot carry the flag
    cap = s.__dlpack__(max_version=(1, 0))
    assert type(cap).__name__ == "PyCapsule"
    if int(np.__version__.split(".")[0]) >= 2:
        a = np.from_dlpack(s)
        assert not a.flags.writeable
