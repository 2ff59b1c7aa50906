# The Storage object on the host: attributes, array interface, indexing and views, copies,
# wrapping (as_storage) and memory lifetime checked with the library's live statistics.
import copy
import gc

import numpy as np
import pytest

import gtstorage.gdp3 as gs  # the GDP-3 face: allocators return Storage objects
from conftest import live


def make(shape=(6, 7, 8), halo=(1, 2, 0), **kw):
    s = gs.empty(shape, np.float64, halo=halo, **kw)
    s[...] = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return s


def reference(shape=(6, 7, 8)):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape)


def test_attributes():
    s = gs.zeros((6, 7, 8), np.float32, backend="gt:cpu_ifirst", halo=(1, 2, 0), dims="IJK")
    assert isinstance(s, gs.CPUStorage) and isinstance(s, gs.Storage)
    assert s.shape == (6, 7, 8) and s.ndim == 3 and len(s) == 6
    assert s.dtype == np.float32 and s.itemsize == 4 and s.size == 336
    assert s.nbytes == 336 * 4
    assert s.halo == ((1, 1), (2, 2), (0, 0))
    assert s.dims == s.__gt_dims__ == ("I", "J", "K")
    assert s.__gt_origin__ == (1, 2, 0) == s.aligned_index
    assert s.layout == (2, 1, 0)
    assert s.device is None and s.managed is False
    assert not s.readonly
    assert s.strides == gs.plan((6, 7, 8), np.float32, backend="gt:cpu_ifirst", halo=(1, 2, 0))["strides"]
    assert isinstance(s.sync_state, gs.SyncState)
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    assert "CPUStorage" in repr(s)
    assert isinstance(s.data, memoryview) and s.data.nbytes == s.nbytes


def test_array_interface_zero_copy():
    s = make()
    ai = s.__array_interface__
    assert ai["shape"] == s.shape and ai["strides"] == s.strides and ai["typestr"] == "<f8"
    assert ai["version"] == 3 and ai["data"][1] is False
    a = s.to_numpy()
    assert a.ctypes.data == ai["data"][0]
    a[1, 2, 3] = -5
    assert s[1, 2, 3] == -5
    s[2, 3, 4] = 42
    assert a[2, 3, 4] == 42
    b = np.asarray(s)
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(np.array(s), a)
    assert np.array(s, dtype=np.int32).dtype == np.int32
    assert s.to_ndarray().ctypes.data == a.ctypes.data  # no device: the host view


def test_indexing_views_and_scalars():
    ref = reference()
    s = make()
    assert s[1, 2, 3] == ref[1, 2, 3] and isinstance(s[1, 2, 3], np.float64)
    assert s[-1, -2, -3] == ref[-1, -2, -3]
    for key in [(slice(1, 4), 2), (Ellipsis, 3), (slice(None, None, 2), slice(None, None, -1), 0),
                (1,), (slice(-3, None), Ellipsis, slice(1, 7, 3)), ()]:
        v = s[key]
        assert isinstance(v, gs.Storage), key
        np.testing.assert_array_equal(v.to_numpy(), ref[key])
        assert np.shares_memory(v.to_numpy(), s.to_numpy())
        assert v.sync_state is s.sync_state
    v = s[0:4, 2]
    assert v.dims == ("I", "K")
    assert v.halo == ((1, 0), (0, 0))  # only the lower halo row of I is inside the view
    assert s[1:5].halo == ((0, 0), (2, 2), (0, 0))
    with pytest.raises(IndexError):
        s[6, 0, 0]
    with pytest.raises(IndexError):
        s[0, -8, 0]
    with pytest.raises(IndexError):
        s[0, 0, 0, 0]
    with pytest.raises(IndexError):
        s[..., 0, ...]
    with pytest.raises(ValueError, match="step"):
        s[::0]
    # Advanced indexing gives NumPy arrays (copies), like NumPy.
    np.testing.assert_array_equal(s[[0, 2], 1], ref[[0, 2], 1])
    np.testing.assert_array_equal(s[ref > 300], ref[ref > 300])
    assert s[None, 1].shape == (1, 7, 8)


def test_setitem_writes_through():
    ref = reference()
    s = make()
    s[0] = 1.5
    ref[0] = 1.5
    s[1:3, ::2, -1] = np.arange(8.0).reshape(2, 4)
    ref[1:3, ::2, -1] = np.arange(8.0).reshape(2, 4)
    s[..., 2] = np.arange(7.0)  # broadcast
    ref[..., 2] = np.arange(7.0)
    s[3, 3, 3] = 7
    ref[3, 3, 3] = 7
    other = gs.full((7, 8), 9.0, backend="gt:cpu_ifirst")
    s[4] = other  # from a storage of another layout
    ref[4] = 9.0
    s[5, :, :] = [[2.0] * 8] * 7
    ref[5] = 2.0
    s[ref == 7] = 70  # advanced indexing
    ref[ref == 7] = 70
    np.testing.assert_array_equal(s.to_numpy(), ref)
    with pytest.raises(ValueError, match="broadcast"):
        s[0] = np.ones(3)
    i = gs.zeros((3,), np.int16)
    i[:] = [1.9, -2.7, 3.2]  # NumPy's unsafe cast
    assert list(i.to_numpy()) == [1, -2, 3]


def test_readonly_storage():
    s = gs.zeros((3, 3), readonly=True)
    assert s.readonly
    with pytest.raises(ValueError):
        s[0, 0] = 1
    a = s.to_numpy()
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1


def test_element_access_matches_numpy():
    # Element reads and writes with int keys (the fast path of host-only storages) give NumPy's
    # values, types, wrap-around and errors, on views and transposes too, and keep the storage's
    # read-only refusal (the library's message).
    ref = reference()
    s = make()
    for view, expect in ((s, ref), (s[1:5, ::2, 3], ref[1:5, ::2, 3]), (s.transpose(), ref.T)):
        for key in ((0,) * view.ndim, (-1,) * view.ndim, tuple(n // 2 for n in view.shape)):
            got = view[key]
            assert got == expect[key] and type(got) is np.float64
    assert s[-6, -7, -8] == ref[0, 0, 0]
    with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
        s[6, 0, 0]
    with pytest.raises(IndexError, match="index -9 is out of bounds for axis 2 with size 8"):
        s[0, 0, -9] = 1.0
    s[2, 3, 4] = 7.5
    s.transpose()[4, 3, 2] += 1.0
    s[1:3, 3, 4][-1] = np.float32(2.5)  # through a view, with a NumPy scalar
    assert s.to_numpy()[2, 3, 4] == 2.5 and s[1, 3, 4] == ref[1, 3, 4]
    i = gs.zeros((3,), dtype=np.int32)
    i[1] = 2.7  # converted as np.asarray(2.7, dtype=int32) converts it
    i[-1] = True
    assert i[1] == 2 and i[2] == 1 and type(i[0]) is np.int32
    with pytest.raises(TypeError):
        gs.zeros((2,))[0] = 1j
    r = gs.zeros((3, 3), readonly=True)
    with pytest.raises(ValueError, match="read-only"):
        r[0, 0] = 1.0
    assert r[2, 2] == 0.0


def test_element_access_of_a_mirror_reads_the_current_side_without_a_transfer():
    # A host + device pair takes the general path: a read copies the one element from the side
    # that is current (8 bytes), never syncs the whole buffer.
    if gs.device_count() == 0:
        pytest.skip("no device backend")
    m = gs.from_array(reference((4, 5, 6)), device="gpu")
    m.host_to_device()
    m.set_device_modified()
    gs.reset_transfer_stats()
    assert m[1, 2, 3] == reference((4, 5, 6))[1, 2, 3]
    stats = gs.get_stats()
    assert stats["h2d_count"] == 0 and stats["d2h_count"] == 1 and stats["d2h_bytes"] == 8
    assert m.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY


def test_transpose_and_domain_view():
    ref = reference()
    s = make()
    t = s.transpose()
    np.testing.assert_array_equal(t.to_numpy(), ref.T)
    assert t.dims == ("K", "J", "I") and t.halo == s.halo[::-1]
    t2 = s.transpose(1, 0, 2)
    np.testing.assert_array_equal(t2.to_numpy(), ref.transpose(1, 0, 2))
    np.testing.assert_array_equal(s.transpose((2, 0, 1)).to_numpy(), ref.transpose(2, 0, 1))
    np.testing.assert_array_equal(s.T.to_numpy(), ref.T)
    np.testing.assert_array_equal(np.transpose(s.to_numpy()), ref.T)
    with pytest.raises(ValueError):
        s.transpose(0, 1)
    with pytest.raises(ValueError):
        s.transpose(0, 0, 1)
    dv = s.domain_view
    np.testing.assert_array_equal(dv.to_numpy(), ref[1:-1, 2:-2, :])
    assert dv.__gt_origin__ == (0, 0, 0) and dv.halo == ((0, 0),) * 3
    assert dv.sync_state is s.sync_state


def test_copy_and_deepcopy():
    s = make(backend="gt:cpu_ifirst", dims="IJK")
    for c in (s.copy(), copy.deepcopy(s), copy.copy(s)):
        assert type(c) is type(s)
        assert (c.shape, c.strides, c.dims, c.halo, c.layout) == (s.shape, s.strides, s.dims, s.halo, s.layout)
        np.testing.assert_array_equal(c.to_numpy(), s.to_numpy())
        assert not np.shares_memory(c.to_numpy(), s.to_numpy())
        c[0, 0, 0] = -1
        assert s[0, 0, 0] == 0
    v = s[1:3, ::2]
    vc = v.copy()
    np.testing.assert_array_equal(vc.to_numpy(), v.to_numpy())


def test_gt_data_interface_host():
    s = make()
    gdi = s.__gt_data_interface__
    assert list(gdi) == [None]
    host = gdi[None]
    assert host["shape"] == s.shape and host["strides"] == s.strides and host["typestr"] == "<f8"
    assert host["data"][0] == s.to_numpy().ctypes.data
    assert host["dims"] == s.dims and host["halo"] == s.halo
    host["acquire"]()  # valid no-ops without a device
    host["touch"]()
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN


def test_cuda_interfaces_absent_on_host_storage():
    s = gs.zeros((2, 2))
    assert not hasattr(s, "__cuda_array_interface__")
    with pytest.raises(gs.GTNoSuchBufferError):
        s.to_cupy()
    assert s.__dlpack_device__() == (1, 0)


def test_sync_methods_are_noops_on_host(no_leak):
    s = make()
    for m in (s.device_to_host, s.host_to_device, s.set_host_modified, s.set_device_modified,
              s.set_synchronized, s.synchronize):
        m()
    s.device_to_host(force=True)
    s.host_to_device(force=True)
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    assert s.transfer_stats() == {"h2d_count": 0, "h2d_bytes": 0, "d2h_count": 0, "d2h_bytes": 0}
    del s


# ---- memory lifetime ---------------------------------------------------------------------------


def test_dropping_references_frees_buffer():
    base = live()
    s = gs.zeros((100, 100))
    assert live()[1] == base[1] + 1 and live()[2] >= base[2] + 80000
    del s
    assert live() == base


def test_numpy_view_keeps_storage_alive():
    base = live()
    s = gs.full((50, 60), 3.0)
    a = s.to_numpy()
    v = s[10:20]
    b = v.to_numpy()
    del s, v
    gc.collect()
    assert live()[1] == base[1] + 1  # the buffer lives on through the arrays
    assert np.all(a == 3.0) and np.all(b == 3.0)
    a[15, 0] = 8
    assert b[5, 0] == 8
    del a
    assert live()[1] == base[1] + 1
    del b
    assert live() == base


def test_views_keep_buffer_alive_and_sync_state_shared():
    base = live()
    s = gs.zeros((10, 10), halo=1)
    state = s.sync_state
    v = s.domain_view[2:5]
    del s
    gc.collect()
    assert live()[1] == base[1] + 1
    assert v.sync_state is state
    del v
    assert live()[1] == base[1] + 1  # the SyncState holds its own library reference
    del state
    assert live() == base


# ---- wrapping caller memory (GDP-3 as_storage) -------------------------------------------------


def test_as_storage_shares_memory_and_keeps_source_alive():
    base = live()
    src = np.arange(24.0).reshape(4, 6)
    s = gs.as_storage(src, dims="IK", halo=(1, 0))
    assert s.dims == ("I", "K") and s.halo == ((1, 1), (0, 0)) and s.__gt_origin__ == (1, 0)
    assert s.to_numpy().ctypes.data == src.ctypes.data
    s[0, 0] = -1
    assert src[0, 0] == -1
    del src
    gc.collect()
    np.testing.assert_array_equal(s[1], [6, 7, 8, 9, 10, 11])  # still valid: s keeps src alive
    del s
    assert live() == base


def test_as_storage_any_strides_and_readonly():
    src = np.asfortranarray(np.arange(30.0).reshape(5, 6))[:, ::2]
    s = gs.as_storage(src)
    assert s.strides == src.strides and s.layout == (1, 0)
    np.testing.assert_array_equal(s.to_numpy(), src)
    ro = np.arange(4.0)
    ro.flags.writeable = False
    r = gs.as_storage(ro)
    assert r.readonly
    with pytest.raises(ValueError):
        r[0] = 1
    assert gs.as_storage(bytearray(16)).dtype == np.uint8  # buffer protocol
    with pytest.raises(TypeError, match="buffer"):
        gs.as_storage([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        gs.as_storage(np.zeros((2, 3)), shape=(3, 2))
    with pytest.raises(ValueError, match="dtype"):
        gs.as_storage(np.zeros((2, 3)), dtype=np.float32)
    with pytest.raises(ValueError, match="layout"):
        gs.as_storage(np.zeros((2, 3)), layout=(1, 0))
    assert gs.as_storage(np.zeros((2, 3)), layout=(0, 1)).layout == (0, 1)
    # GDP-3: the parameters are validated against the buffer (here its address).
    buf = gs.zeros((20,), alignment_size=64).to_numpy()
    assert gs.as_storage(buf[0:16], alignment_size=64).shape == (16,)
    assert gs.as_storage(buf[1:17], aligned_index=(7,), alignment_size=64).shape == (16,)
    with pytest.raises(ValueError, match=r"as_storage: .*aligned_index \(0,\).*not aligned to 64"):
        gs.as_storage(buf[1:17], alignment_size=64)


def test_as_storage_wraps_scalars_and_bytes_without_a_copy():
    # np.asarray() would copy both into a new array; as_storage wraps the object's own bytes.
    x = np.float32(2.5)
    s = gs.as_storage(x)
    assert s.shape == () and s.dtype == np.float32 and s.readonly and float(s) == 2.5
    assert s.__array_interface__["data"][0] == np.frombuffer(x, dtype=np.float32).ctypes.data
    with pytest.raises(ValueError, match="as_storage: dtype"):  # the scalar's own dtype, refused
        gs.as_storage(np.datetime64("2020-01-02"))
    b = b"\x01\x02\x03"
    w = gs.as_storage(b)
    assert w.shape == (3,) and w.dtype == np.uint8 and w.readonly
    assert w.__array_interface__["data"][0] == np.frombuffer(b, dtype=np.uint8).ctypes.data
    np.testing.assert_array_equal(w.to_numpy(), [1, 2, 3])
    with pytest.raises(ValueError, match="read-only"):
        gs.as_storage(np.int64(3), readonly=False)


def test_as_storage_of_storage_is_a_view():
    s = make()
    w = gs.as_storage(s)
    assert w.sync_state is s.sync_state
    assert np.shares_memory(w.to_numpy(), s.to_numpy())


def test_wrap_release_runs_after_last_reference():
    base = live()
    src = np.ones((3, 3))
    s = gs.as_storage(src)
    x = np.from_dlpack(s)
    del s, src
    gc.collect()
    assert live()[1] == base[1] + 1
    assert x.sum() == 9
    del x
    assert live() == base


def test_get_stats_and_presets():
    stats = gs.get_stats()
    assert set(stats) >= {"live_handles", "live_buffers", "host_bytes", "device_bytes",
                          "h2d_count", "h2d_bytes", "d2h_count", "d2h_bytes"}
    names = [p["name"] for p in gs.presets()]
    assert {"numpy", "gt:cpu_kfirst", "gt:cpu_ifirst", "gt:gpu"} <= set(names)
    gpu = next(p for p in gs.presets() if p["name"] == "gt:gpu")
    assert gpu["device"] == "gpu" and gpu["alignment"] == 32
    assert gs.library_version.count(".") == 2


def test_from_handle_borrows_a_reference():
    import gtstorage.gdp3 as gs

    s = gs.zeros((3, 4, 5), backend="gt:cpu_kfirst", halo=1)
    s[1, 2, 3] = 7.0
    t = gs.Storage.from_handle(s.handle)
    assert t.shape == s.shape and t.strides == s.strides
    assert t.__array_interface__["data"][0] == s.__array_interface__["data"][0]
    del s
    assert float(t[1, 2, 3]) == 7.0  # t holds its own reference
    with pytest.raises(gs.GTStorageError, match="handle"):
        gs.Storage.from_handle(12345)


def test_slices_with_huge_python_integers_match_numpy():
    import gtstorage.gdp3 as gs

    s = gs.zeros((10,), backend="numpy")
    ref = np.zeros(10)
    for key in (slice(None, None, 2**64 + 1), slice(2**64, None), slice(-(2**63), None, -1),
                slice(-(2**70), 2**70), slice(None, None, -(2**66))):
        assert s[key].shape == ref[key].shape, key


def test_as_storage_keeps_readonly_sources_readonly():
    import gtstorage.gdp3 as gs

    src = np.frombuffer(bytes(80))  # immutable memory
    with pytest.raises(ValueError, match="read-only"):
        gs.as_storage(src, readonly=False)
    s = gs.as_storage(src)
    with pytest.raises(Exception):
        s[...] = 7.0
    assert not np.frombuffer(bytes(80)).any()


def test_setitem_from_own_transpose_is_not_corrupted():
    import gtstorage.gdp3 as gs

    a = np.arange(64 * 64, dtype=np.float64).reshape(64, 64)
    s = gs.from_array(a, backend="numpy")
    s[...] = s.to_numpy().T
    assert np.array_equal(s.to_numpy(), a.T)
