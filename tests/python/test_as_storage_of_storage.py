# as_storage(<gtstorage Storage>, ...): a view of the same buffers sharing the sync state. GDP-3:
# "the consistency of the parameters with the buffers is validated": every parameter given is
# checked against the storage (ValueError/TypeError naming as_storage and the argument, saying
# what does not match), and readonly=True gives a read-only view (NumPy's setflags(write=False)
# on a view) where the storage has one buffer.
import gc

import numpy as np
import pytest

import gtstorage.gdp3 as gs
from conftest import live

DEVICE = gs.device_count() > 0


def make(**kw):
    s = gs.zeros((4, 5, 6), np.float64, backend="gt:cpu_kfirst", halo=1, **kw)
    s[...] = np.arange(120.0).reshape(4, 5, 6)
    return s


def test_no_parameters_is_a_view():
    s = make()
    w = gs.as_storage(s)
    assert type(w) is type(s) and w.handle != s.handle
    assert w.sync_state is s.sync_state
    assert (w.shape, w.dtype, w.dims, w.halo, w.layout, w.readonly) == (
        s.shape, s.dtype, s.dims, s.halo, s.layout, False)
    assert np.shares_memory(w.to_numpy(), s.to_numpy())


def test_matching_parameters_are_accepted():
    s = make()
    w = gs.as_storage(s, shape=(4, 5, 6), dtype=np.float64, dims="IJK", halo=1, layout=(0, 1, 2),
                      backend="gt:cpu_kfirst", aligned_index=(1, 1, 1), alignment_size=8,
                      sync_state=gs.SyncState.SYNC_CLEAN, device=None, managed=None,
                      device_id=-1, readonly=False)
    assert np.shares_memory(w.to_numpy(), s.to_numpy())
    assert gs.as_storage(s, dimensions=("I", "J", "K"), halo=((1, 1), (1, 1), (1, 1)),
                         defaults="gt:cpu_kfirst", shape=[4, 5, 6], dtype="f8",
                         sync_state=s.sync_state, managed=False, device="cpu").shape == s.shape
    assert gs.as_storage(s, sync_state=gs.SyncState(gs.SyncState.SYNC_CLEAN)).shape == s.shape


@pytest.mark.parametrize("kwargs,error,message", [
    ({"dims": "KJI"}, ValueError, r"dims \('K', 'J', 'I'\) do not match the storage's dims "
                                  r"\('I', 'J', 'K'\)"),
    ({"dimensions": ("K", "J", "I")}, ValueError, r"dims \('K', 'J', 'I'\) do not match"),
    ({"dims": "IJ"}, ValueError, r"dims \('I', 'J'\) do not match the storage's dims"),
    ({"dims": 3}, TypeError, r"dims must be a sequence of str"),
    ({"halo": 2}, ValueError, r"halo \(\(2, 2\), \(2, 2\), \(2, 2\)\) does not match the "
                              r"storage's halo \(\(1, 1\), \(1, 1\), \(1, 1\)\)"),
    ({"halo": (1, 1)}, ValueError, r"halo has 2 entries for 3 dimensions"),
    ({"halo": "x"}, TypeError, r"halo must be"),
    ({"shape": (9, 9, 9)}, ValueError, r"shape \(9, 9, 9\) does not match the storage's shape "
                                       r"\(4, 5, 6\)"),
    ({"shape": "abc"}, TypeError, r"shape must be a sequence of ints"),
    ({"dtype": np.int8}, ValueError, r"dtype int8 does not match the storage's dtype float64"),
    ({"dtype": ">f8"}, ValueError, r"dtype >f8 does not match"),
    ({"dtype": "no such type"}, TypeError, r"dtype 'no such type' is not a NumPy dtype"),
    ({"sync_state": gs.SyncState.SYNC_HOST_DIRTY}, ValueError,
     r"sync_state SYNC_HOST_DIRTY does not match the storage's SYNC_CLEAN"),
    ({"sync_state": gs.SyncState(gs.SyncState.SYNC_DEVICE_DIRTY)}, ValueError,
     r"sync_state SYNC_DEVICE_DIRTY does not match"),
    ({"sync_state": 7}, ValueError, r"sync state 7 is not one of"),
    ({"sync_state": "clean"}, TypeError, r"sync state must be an int"),
    ({"device_id": 3}, ValueError, r"device_id=3 does not match: the storage has no device buffer"),
    ({"device_id": 2**40}, OverflowError, r"device_id = 1099511627776 is out of range"),
    ({"device_id": "0"}, TypeError, r"device_id must be an int"),
    ({"device": "gpu"}, ValueError, r"device='gpu' does not match the storage's device=None"),
    ({"device": "tpu"}, ValueError, r"device must be None, 'cpu' or 'gpu'"),
    ({"managed": "cuda"}, ValueError, r"managed='cuda' does not match the storage's managed=False"),
    ({"managed": "gtstorage"}, ValueError, r"managed='gtstorage' does not match"),
    ({"managed": "bogus"}, ValueError, r"managed must be None, 'gtstorage'"),
    ({"readonly": 1}, TypeError, r"readonly must be None, True or False"),
    ({"layout": (2, 1, 0)}, ValueError, r"layout \(2, 1, 0\) does not match the buffer's \(0, 1, 2\)"),
    ({"backend": "gt:cpu_ifirst"}, ValueError, r"stride order \(0, 1, 2\).* is not preset "
                                               r"'gt:cpu_ifirst'"),
    ({"defaults": 5}, TypeError, r"backend/defaults must be a preset name"),
    ({"aligned_index": (9, 0, 0)}, ValueError, r"aligned_index \(9, 0, 0\) is outside"),
    ({"alignment_size": 0}, ValueError, r"alignment_size must be positive"),
    ({"dims": "IJK", "dimensions": "KJI"}, TypeError, r"are aliases; give only one"),
])
def test_every_parameter_is_checked(kwargs, error, message, no_leak):
    s = make()
    with pytest.raises(error, match=r"^as_storage: .*" + message):
        gs.as_storage(s, **kwargs)
    del s


def test_sync_state_of_another_storage_is_refused():
    s, other = make(), make()
    with pytest.raises(ValueError, match=r"^as_storage: sync_state is the SyncState of another"):
        gs.as_storage(s, sync_state=other.sync_state)
    view = s[1:3]  # a view shares the storage's SyncState object
    assert gs.as_storage(view, sync_state=s.sync_state).shape == (2, 5, 6)


def test_readonly_true_gives_a_read_only_view(no_leak):
    s = make()
    w = gs.as_storage(s, readonly=True, dims="IJK", halo=1, backend="gt:cpu_kfirst")
    assert w.readonly and not s.readonly
    assert (w.shape, w.strides, w.dtype, w.dims, w.halo, w.layout, w.__gt_origin__) == (
        s.shape, s.strides, s.dtype, s.dims, s.halo, s.layout, s.__gt_origin__)
    arr = np.asarray(w)
    assert not arr.flags.writeable and np.shares_memory(arr, s.to_numpy())
    assert w.__array_interface__["data"] == (s.__array_interface__["data"][0], True)
    with pytest.raises(ValueError, match="read-only"):
        w[...] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        w += 1.0
    with pytest.raises(ValueError, match="read-only"):
        w.fill(2.0)
    s[1, 2, 3] = -7.0  # the view sees the storage's writes
    assert w[1, 2, 3] == -7.0
    # The source stays alive as long as the view does.
    del s, arr
    gc.collect()
    assert w[1, 2, 3] == -7.0 and w[0, 0, 1] == 1.0
    del w


def test_readonly_of_a_read_only_storage():
    src = np.arange(6.0).reshape(2, 3)
    src.flags.writeable = False
    s = gs.as_storage(src)
    assert s.readonly
    assert gs.as_storage(s, readonly=True).readonly
    assert gs.as_storage(s).readonly
    with pytest.raises(ValueError, match=r"^as_storage: readonly=False was asked for, but the "
                                         r"storage is read-only"):
        gs.as_storage(s, readonly=False)


def test_zero_d_storage():
    s = gs.full((), 3.0)
    w = gs.as_storage(s, shape=(), dims=(), halo=())
    assert isinstance(w, gs.Storage) and w.shape == () and w[()] == 3.0
    assert isinstance(s[...], gs.Storage) and s[()] == 3.0  # NumPy: a[...] is a 0-d view
    r = gs.as_storage(s, readonly=True)
    assert r.readonly and r[()] == 3.0
    with pytest.raises(ValueError, match=r"^as_storage: shape \(1,\) does not match"):
        gs.as_storage(s, shape=(1,))


@pytest.mark.skipif(not DEVICE, reason="no device backend")
def test_device_storages():
    pair = gs.zeros((3, 4), device="gpu")  # host + device mirror
    assert gs.as_storage(pair, device="gpu", managed="gtstorage", device_id=0).sync_state is \
        pair.sync_state
    with pytest.raises(ValueError, match=r"^as_storage: device=None does not match the storage's "
                                         r"device='gpu'"):
        gs.as_storage(pair, device=None)
    with pytest.raises(ValueError, match=r"^as_storage: managed=None does not match the storage's "
                                         r"managed='gtstorage'"):
        gs.as_storage(pair, managed=None)
    with pytest.raises(ValueError, match=r"^as_storage: device_id=5 does not match the storage's "
                                         r"device 0"):
        gs.as_storage(pair, device_id=5)
    pair.modify("device", force=True)
    assert gs.as_storage(pair, sync_state=gs.SyncState.SYNC_DEVICE_DIRTY).shape == (3, 4)
    with pytest.raises(ValueError, match=r"^as_storage: sync_state SYNC_CLEAN does not match the "
                                         r"storage's SYNC_DEVICE_DIRTY"):
        gs.as_storage(pair, sync_state=gs.SyncState.SYNC_CLEAN)
    # A pair's sync state lives with its (writable) buffers: no read-only view of it.
    with pytest.raises(ValueError, match=r"^as_storage: readonly=True: .*host and device"):
        gs.as_storage(pair, readonly=True)
    # A device-only storage has read-only views.
    dev = gs.full((3, 4), 2.5, device="gpu", managed=None)
    r = gs.as_storage(dev, readonly=True, device="gpu", managed=None)
    assert isinstance(r, gs.GPUStorage) and r.readonly
    assert r.strides == dev.strides and float(r.sum()) == 30.0
    with pytest.raises(ValueError, match="read-only"):
        r[...] = 1.0
    dev[0, 0] = 0.5
    assert r[0, 0] == 0.5
