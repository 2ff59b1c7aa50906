# Device storages through the C API: GPUStorage (device only), SoftwareManagedGPUStorage (host +
# device kept in sync), CUDA Array Interface v3, DLPack device export and GDP-3's "Choosing the
# Device". run.sh runs these on GTSTORAGE_DEVICE_BACKEND=emulated (a separate "device" copy in
# host memory), so the sync logic and the transfer counts are checked on every machine.
import gc
import sys

import numpy as np
import pytest

import gtstorage
import gtstorage.gdp3 as gs  # the GDP-3 face: allocators return Storage objects
from conftest import live, run_in_threads, write_device_memory

SHAPE = (5, 6, 7)
# The emulated device (the GPU backend on the simulated CUDA runtime) is host memory: it is never
# exported as CUDA memory. Its device memory is DLPack's kDLExtDev (12), its unified memory host
# memory (kDLCPU), and it has no __cuda_array_interface__.
EMULATED = gs.get_device_backend() == "emulated"
DL_EXT_DEV = 12


def device_interface(s):
    """What a device consumer sees: the CUDA Array Interface, or on the emulated device (which
    offers none) the same description after the same acquire + touch."""
    if hasattr(s, "__cuda_array_interface__"):
        return s.__cuda_array_interface__
    s.host_to_device() if isinstance(s, gs.SoftwareManagedGPUStorage) else None
    s.set_device_modified()
    return s._cuda_interface_dict()


def ref():
    return np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)


class FakeDeviceArray:
    """A device array seen only through __cuda_array_interface__ (memory from a device storage)."""

    def __init__(self, storage):
        self.storage = storage
        self.__cuda_array_interface__ = storage._cuda_interface_dict()


def test_backend_is_usable():
    assert gs.device_count() >= 1
    assert gs.get_device_backend() in ("emulated", "cuda", "hip")


def test_gpu_preset_gives_device_only_storage():
    s = gs.zeros(SHAPE, backend="gt:gpu")
    assert isinstance(s, gs.GPUStorage) and s.device == "gpu" and s.managed is False
    assert s.strides == (8, 8 * 32, 8 * 32 * 6)
    assert not hasattr(s, "__array_interface__")
    with pytest.raises(gs.GTNoSuchBufferError):
        s.to_numpy()
    cai = device_interface(s)
    assert cai["version"] == 3 and cai["shape"] == SHAPE and cai["strides"] == s.strides
    assert cai["typestr"] == "<f8" and cai["data"][0] != 0 and cai["stream"] in (1, 2) or cai["stream"] > 2
    if EMULATED:
        assert not hasattr(s, "__cuda_array_interface__")
        assert s.__dlpack_device__() == (DL_EXT_DEV, 0)
    else:
        assert s.__dlpack_device__()[0] in (2, 10)  # CUDA or ROCm
    assert list(s.__gt_data_interface__) == ["gpu"]
    # Values go through the library's transfers.
    s[...] = ref()
    np.testing.assert_array_equal(np.asarray(s), ref())  # __array__ copies device -> host
    assert s[1, 2, 3] == ref()[1, 2, 3]
    s[1] = 5.0
    assert s[1, 0, 0] == 5.0 and s[0, 0, 0] == 0.0
    with pytest.raises(ValueError, match="copy"):
        s.__array__(copy=False)


def test_device_storage_lifetime():
    base = live()
    s = gs.ones((64, 64), backend="gt:gpu")
    assert live()[3] > base[3]  # device bytes
    v = s[10:20]
    del s
    gc.collect()
    assert live()[3] > base[3]
    del v
    assert live() == base


def test_mirrored_storage_sync_state_and_transfers():
    s = gs.zeros(SHAPE, device="gpu")  # GDP-3 default managed="gt4py"
    assert isinstance(s, gs.SoftwareManagedGPUStorage) and s.managed == "gtstorage"
    gs.reset_transfer_stats()
    s.set_synchronized()
    st = s.sync_state
    assert st.state == gs.SyncState.SYNC_CLEAN
    # Host write through __setitem__ (value on the host) -> host modified.
    s[...] = ref()
    assert st.state == gs.SyncState.SYNC_HOST_DIRTY
    s.host_to_device()
    assert st.state == gs.SyncState.SYNC_CLEAN
    t = s.transfer_stats()
    assert t["h2d_count"] == 1 and t["h2d_bytes"] >= ref().nbytes and t["d2h_count"] == 0
    s.host_to_device()  # clean: nothing to copy
    assert s.transfer_stats()["h2d_count"] == 1
    s.host_to_device(force=True)
    assert s.transfer_stats()["h2d_count"] == 2
    # Device "compute" through the CAI, declared with set_device_modified, then read on host.
    s.set_device_modified()
    assert st.state == gs.SyncState.SYNC_DEVICE_DIRTY
    s.device_to_host()
    assert st.state == gs.SyncState.SYNC_CLEAN and s.transfer_stats()["d2h_count"] == 1
    s.set_host_modified()
    s.synchronize()
    assert st.state == gs.SyncState.SYNC_CLEAN and s.transfer_stats()["h2d_count"] == 3
    # Views share the state (one SyncState object for the whole buffer pair).
    v = s[1:3]
    assert v.sync_state is st
    v.set_device_modified()
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    st.state = gs.SyncState.SYNC_CLEAN
    assert v.sync_state.state == gs.SyncState.SYNC_CLEAN
    assert gs.get_stats()["h2d_count"] >= 3


def test_interfaces_acquire_their_side():
    s = gs.from_array(ref(), device="gpu", managed="gtstorage")
    s.host_to_device()
    gs.reset_transfer_stats()
    # Write on the "device" through the CAI pointer, as a kernel would.
    cai = device_interface(s)
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY  # the consumer may write
    write_device_memory(cai["data"][0], np.array([-1.0]))
    a = s.to_numpy()  # host access copies device -> host first
    assert a[0, 0, 0] == -1.0
    assert gs.get_stats()["d2h_count"] == 1
    assert s.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    gdi = s.__gt_data_interface__
    assert set(gdi) == {None, "gpu"}
    gdi["gpu"]["acquire"]()  # host_to_device
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    gdi["gpu"]["touch"]()
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    gdi[None]["acquire"]()
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    gdi[None]["touch"]()
    assert s.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY


def test_setitem_chooses_device_like_gdp3():
    s = gs.zeros(SHAPE, device="gpu")
    s.set_synchronized()
    # A host value is written on the host.
    s[0] = np.ones((6, 7))
    assert s.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    # A GPU value (device-only storage) is written on the device.
    g = gs.full((6, 7), 3.0, backend="gt:gpu")
    s[1] = g
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    # A mirrored storage whose host is modified counts as a host value.
    m = gs.full((6, 7), 4.0, device="gpu")
    m.set_host_modified()
    s[2] = m
    assert s.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    # An object with only __cuda_array_interface__ is a GPU value.
    s[3] = FakeDeviceArray(gs.full((6, 7), 6.0, backend="gt:gpu"))
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    a = s.to_numpy()
    assert np.all(a[0] == 1) and np.all(a[1] == 3) and np.all(a[2] == 4) and np.all(a[3] == 6)
    assert np.all(a[4] == 0)


def test_copy_and_like_keep_device_kind():
    s = gs.from_array(ref(), device="gpu")
    c = s.copy()
    assert isinstance(c, gs.SoftwareManagedGPUStorage)
    np.testing.assert_array_equal(c.to_numpy(), ref())
    g = gs.from_array(ref(), backend="gt:gpu")
    assert isinstance(g, gs.GPUStorage)
    gc_ = g.copy()
    assert isinstance(gc_, gs.GPUStorage) and gc_.strides == g.strides
    np.testing.assert_array_equal(np.asarray(gc_), ref())
    z = gs.zeros_like(g)
    assert isinstance(z, gs.GPUStorage) and np.all(np.asarray(z) == 0)
    h = gs.zeros_like(g, device=None)
    assert isinstance(h, gs.CPUStorage)


def test_from_array_of_device_source():
    g = gs.from_array(ref(), backend="gt:gpu")
    h = gs.from_array(FakeDeviceArray(g), backend="gt:cpu_kfirst")
    np.testing.assert_array_equal(h.to_numpy(), ref())


def test_as_storage_device_data_and_sync_state():
    base = live()
    owner = gs.from_array(ref(), backend="gt:gpu")
    host = np.zeros(SHAPE)
    w = gs.as_storage(data=host, device_data=FakeDeviceArray(owner),
                      sync_state=gs.SyncState(gs.SyncState.SYNC_DEVICE_DIRTY))
    assert isinstance(w, gs.SoftwareManagedGPUStorage)
    assert w.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    w.device_to_host()
    np.testing.assert_array_equal(host, ref())  # the wrapped host buffer got the device data
    d = gs.as_storage(device_data=FakeDeviceArray(owner))
    assert isinstance(d, gs.GPUStorage)
    # A device array given as data (CuPy, a CUDA tensor) is the device buffer, not a copy.
    g = gs.as_storage(FakeDeviceArray(owner))
    assert isinstance(g, gs.GPUStorage)
    assert g._cuda_interface_dict()["data"][0] == owner._cuda_interface_dict()["data"][0]
    with pytest.raises(ValueError, match=r"as_storage: device='cpu' contradicts data, a device"):
        gs.as_storage(FakeDeviceArray(owner), device="cpu")
    del g
    del owner, w, d, host
    assert live() == base
    with pytest.raises(ValueError, match="device_data"):
        gs.as_storage(np.zeros(3), FakeDeviceArray(gs.zeros((4,), backend="gt:gpu")))
    # The message names the device the caller gave, not another one.
    for device in ("cpu", None):
        with pytest.raises(ValueError, match=rf"as_storage: device={device!r} contradicts "
                                             r"device_data \(pass device='gpu'"):
            gs.as_storage(data=np.zeros(SHAPE), device=device,
                          device_data=FakeDeviceArray(gs.zeros(SHAPE, backend="gt:gpu")))


class StreamedDeviceArray:
    """A producer's device array whose __cuda_array_interface__ names a stream (CAI v3)."""

    def __init__(self, storage, stream, version=3):
        self.storage = storage
        self.__cuda_array_interface__ = dict(storage._cuda_interface_dict(), stream=stream,
                                             version=version)


def test_imported_cai_stream_is_waited_for():
    owner = gs.from_array(ref(), backend="gt:gpu")
    base = live()
    # CAI v3: the consumer waits for the producer's stream where the buffer is handed over. The
    # emulated device knows the predefined streams (1 legacy default, 2 per-thread default) and
    # rejects a stream that was never created: so the import did wait on the stream it was given.
    for stream in (1, 2):
        d = gs.as_storage(device_data=StreamedDeviceArray(owner, stream))
        # Afterwards the storage works on its own stream (a producer's stream may be destroyed).
        assert d._cuda_interface_dict()["stream"] == 1
        del d
    if EMULATED:  # CUDA cannot check a stream handle: a real runtime may crash on a dead one
        with pytest.raises(ValueError, match="stream: 0x7f00 is not a live stream"):
            gs.as_storage(device_data=StreamedDeviceArray(owner, 0x7F00))
        with pytest.raises(ValueError, match="stream: 0x7f00 is not a live stream"):
            gs.from_array(StreamedDeviceArray(owner, 0x7F00), backend="numpy")
    # A mirrored wrap waits too, and its transfers are right.
    host = np.zeros(SHAPE)
    w = gs.as_storage(data=host, device_data=StreamedDeviceArray(owner, 2),
                      sync_state=gs.SyncState(gs.SyncState.SYNC_DEVICE_DIRTY))
    w.device_to_host()
    np.testing.assert_array_equal(host, ref())
    np.testing.assert_array_equal(
        gs.from_array(StreamedDeviceArray(owner, 2), backend="numpy").to_numpy(), ref())
    # No stream (None), or an interface older than v3 (no stream at all): nothing to wait for.
    gs.as_storage(device_data=StreamedDeviceArray(owner, None))
    gs.as_storage(device_data=StreamedDeviceArray(owner, 0x7F00, version=2))
    del w, host
    gc.collect()
    assert live() == base


def test_imported_cai_bad_stream_is_rejected():
    owner = gs.from_array(ref(), backend="gt:gpu")
    base = live()
    with pytest.raises(ValueError, match="stream 0 is not allowed"):
        gs.as_storage(device_data=StreamedDeviceArray(owner, 0))
    with pytest.raises(ValueError, match="stream 0 is not allowed"):
        gs.from_array(StreamedDeviceArray(owner, 0))
    with pytest.raises(ValueError, match="not a stream handle"):
        gs.as_storage(device_data=StreamedDeviceArray(owner, -5))
    with pytest.raises(TypeError, match="stream must be None or an int"):
        gs.as_storage(device_data=StreamedDeviceArray(owner, "s1"))
    with pytest.raises(TypeError, match="stream must be None or an int"):
        gs.as_storage(device_data=StreamedDeviceArray(owner, True))
    assert live() == base  # nothing was wrapped


def test_dlpack_device_export():
    s = gs.from_array(ref(), backend="gt:gpu")
    cap = s.__dlpack__(max_version=(1, 0), stream=1)
    from gtstorage import _dlpack

    managed, _ = _dlpack.capsule_tensor(cap)
    assert managed.dl_tensor.device.device_type == s.__dlpack_device__()[0]
    with pytest.raises(BufferError):
        s.__dlpack__(stream=0)
    # A CPU export of a device-only storage needs a copy: allowed unless copy=False.
    host_cap = s.__dlpack__(dl_device=(1, 0))
    managed, _ = _dlpack.capsule_tensor(host_cap)
    assert managed.dl_tensor.device.device_type == 1
    with pytest.raises(BufferError):
        s.__dlpack__(dl_device=(1, 0), copy=False)
    if tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 1):
        np.testing.assert_array_equal(np.from_dlpack(s, device="cpu"), ref())


def test_consumer_rejecting_device_tensor_does_not_leak(monkeypatch):
    # NumPy rejects a CUDA tensor after taking the capsule: the capsule dies while NumPy's
    # exception is pending. The destructor still releases the tensor, and the pending exception
    # is reported through sys.unraisablehook (a ctypes callback cannot hand it back).
    base = live()
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))
    s = gs.zeros((3, 4), backend="gt:gpu")
    with pytest.raises(Exception):  # noqa: B017 - SystemError or NumPy's own error
        np.from_dlpack(s)
    del s
    assert live() == base
    assert seen and "device" in str(seen[-1]).lower()


def test_unified_memory_storage():
    # managed="cuda": one unified buffer, the same address on both sides, DLPack type CUDA_MANAGED
    # (on the emulated device: host memory, kDLCPU).
    s = gs.zeros((4, 4), device="gpu", managed="cuda")
    assert isinstance(s, gs.CUDAManagedGPUStorage) and s.managed == "cuda"
    assert s.__dlpack_device__() == ((1, 0) if EMULATED else (13, 0))
    assert device_interface(s)["data"][0] == s.__array_interface__["data"][0]
    s[1] = 2.0
    a = s.to_numpy()
    assert a[1, 0] == 2.0 and a[0, 0] == 0.0
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN  # nothing to synchronize
    x = np.from_dlpack(s)  # NumPy reads CUDA-managed memory as host memory
    assert np.shares_memory(x, a)


# ---- what the emulated device says it is ---------------------------------------------------------

@pytest.mark.skipif(not EMULATED, reason="the emulated device only")
def test_emulated_device_memory_never_poses_as_cuda(monkeypatch):
    # NumPy's refusal surfaces in the capsule's destructor (see the test above).
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    g = gs.ones((3, 4), backend="gt:gpu")
    assert not hasattr(g, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="not CUDA memory"):
        g.__cuda_array_interface__
    assert g.__dlpack_device__() == (DL_EXT_DEV, 0)
    from gtstorage import _dlpack

    cap = g.__dlpack__(max_version=(1, 0), stream=1)
    managed, _ = _dlpack.capsule_tensor(cap)
    assert managed.dl_tensor.device.device_type == DL_EXT_DEV
    del managed, cap
    assert g.__gt_data_interface__["gpu"]["device"] == (DL_EXT_DEV, 0)
    # Host consumers refuse it instead of reading a "device" pointer.
    with pytest.raises(Exception):  # noqa: B017 - NumPy's error for an unsupported device
        np.from_dlpack(g)
    # Mirrors: the host side is ordinary host memory and stays exportable.
    m = gs.ones((3, 4), device="gpu")
    assert m.__dlpack_device__() == (DL_EXT_DEV, 0)
    cap = m.__dlpack__(dl_device=(1, 0), max_version=(1, 0))
    host_side, _ = _dlpack.capsule_tensor(cap)
    assert host_side.dl_tensor.device.device_type == 1
    np.testing.assert_array_equal(m.to_numpy(), np.ones((3, 4)))


@pytest.mark.skipif(not EMULATED, reason="the emulated device only")
def test_torch_refuses_emulated_device_memory():
    torch = pytest.importorskip("torch")
    g = gs.ones((3, 4), backend="gt:gpu")
    with pytest.raises((RuntimeError, BufferError, TypeError, ValueError)):
        torch.from_dlpack(g)
    # A host copy is what torch can have.
    t = torch.from_dlpack(g.__dlpack__(dl_device=(1, 0)))
    assert t.device.type == "cpu" and float(t.sum()) == 12.0


def report_device_type(monkeypatch, device_type):
    """Makes the library's description of a device side (gtstorage._core._info) report the
    DLPack device type @p device_type (2 CUDA, 10 ROCm), which the emulated device lacks."""
    from gtstorage import _core

    real_info = _core._info

    def info_of(handle, side):
        info = real_info(handle, side)
        if side == gtstorage._capi.SIDE_DEVICE:
            info.device_type = device_type
        return info

    monkeypatch.setattr(_core, "_info", info_of)


def test_dlpack_stream_zero_is_fine_for_rocm(monkeypatch):
    # DLPack: stream 0 is ambiguous for CUDA but the default stream for ROCm, where PyTorch passes
    # it. The device type decides (here a storage that reports ROCm).
    s = gs.ones((3, 4), backend="gt:gpu")
    with pytest.raises(BufferError, match="stream 0"):
        s.__dlpack__(stream=0)
    monkeypatch.setattr(type(s), "__dlpack_device__", lambda self: (10, 0))
    cap = s.__dlpack__(stream=0, max_version=(1, 0))
    assert cap is not None
    # And the CUDA Array Interface of a ROCm buffer names no stream 1 (HIP has none).
    report_device_type(monkeypatch, 10)
    s._geoms[gtstorage._capi.SIDE_DEVICE] = None  # forget the cached geometry of the device side
    assert s._cuda_interface_dict()["stream"] is None
    assert "stream" in s.__cuda_array_interface__


def test_cai_export_acquires_and_touches(monkeypatch):
    # The CUDA Array Interface of CUDA memory (here the emulated device made to report CUDA's
    # DLPack type, since the emulated device itself offers none): the device side is made current
    # and marked modified, as the consumer may write; the stream is the storage's (1 for 0).
    s = gs.from_array(ref(), device="gpu")  # host modified
    report_device_type(monkeypatch, 2)
    gs.reset_transfer_stats()
    cai = s.__cuda_array_interface__
    assert s.transfer_stats()["h2d_count"] == 1  # acquire copied the host's data over
    assert s.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    assert cai["version"] == 3 and cai["stream"] == 1 and cai["shape"] == SHAPE
    assert cai["data"][0] == s._cuda_interface_dict()["data"][0]
    assert s.__gt_data_interface__["gpu"]["device"] == (2, 0)


def test_set_device_is_per_thread():
    if gs.device_count() < 2:
        pytest.skip("needs two devices")
    seen = {}

    def rank(dev):
        fresh = gs.get_device()  # a new thread starts on device 0
        gs.set_device(dev)
        made_on = gs.zeros((2, 2), backend="gt:gpu").__dlpack_device__()[1]
        seen[dev] = (fresh, gs.get_device(), made_on)

    assert not run_in_threads(rank, [(1,), (0,)])
    assert seen == {0: (0, 0, 0), 1: (0, 1, 1)}
    assert gs.get_device() == 0  # this thread: 0
    assert gs.zeros((2, 2), backend="gt:gpu").__dlpack_device__()[1] == 0


def test_get_device_without_a_device():
    # The "none" backend (what "auto" picks without a GPU): no current device to report, an error
    # saying why (the same as set_device's), never a made-up 0.
    backend = gs.get_device_backend()
    gc.collect()  # the backend changes only while no device storage is alive
    gs.set_device_backend("none")
    try:
        for fn, args in ((gs.get_device, ()), (gs.set_device, (0,))):
            with pytest.raises(gs.GTStorageError, match=fn.__name__) as err:
                fn(*args)
            assert isinstance(err.value, gs.GTDeviceError) and "'none'" in str(err.value)
    finally:
        gs.set_device_backend(backend)


@pytest.mark.skipif(not EMULATED, reason="the emulated device only")
def test_old_driver_is_its_own_error():
    import os
    import subprocess

    code = (
        "import gtstorage.gdp3 as gs\n"
        "try:\n"
        "    gs.zeros((2, 2), backend='gt:gpu')\n"
        "except gs.GTDriverTooOldError as e:\n"
        "    print('create:', e)\n"
        "try:\n"
        "    gs.device_count()\n"
        "except gs.GTDriverTooOldError as e:\n"
        "    print('count:', e)\n"
        "try:\n"
        "    gs.get_device()\n"
        "except gs.GTDriverTooOldError as e:\n"
        "    print('current:', e)\n"
        "print('host ok', float(gs.ones((2, 2)).to_numpy().sum()))\n")
    env = dict(os.environ, GTSTORAGE_SIM_DRIVER_VERSION="12040", GTSTORAGE_DEVICE_BACKEND="emulated")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert "create:" in out and "count:" in out and "current:" in out and "host ok 4.0" in out
    assert "the driver supports CUDA 12.4" in out and "built with CUDA 13.0" in out
