# GDP-3 storages behave as NumPy duck arrays, pickle by value and speak every seed's spelling.
import ctypes
import pickle
import sys

import numpy as np
import pytest

import gtstorage
import gtstorage.gdp3 as gs
from conftest import write_device_memory


def field(**kw):
    s = gs.zeros((4, 5, 3), backend="gt:cpu_kfirst", halo=(1, 1, 0), **kw)
    s[...] = np.arange(60.0).reshape(4, 5, 3)
    return s


def test_operators_follow_numpy_copy_semantics():
    s = field()
    ref = np.arange(60.0).reshape(4, 5, 3)
    r = s + 1
    assert type(r) is np.ndarray and np.array_equal(r, ref + 1)
    assert np.array_equal(2 * s, 2 * ref) and np.array_equal(s - s, 0 * ref)
    eq = s == 7
    assert eq.dtype == bool and eq.sum() == 1  # elementwise, not identity
    assert np.array_equal(s < 5, ref < 5) and np.array_equal(-s, -ref) and np.array_equal(abs(-s), ref)
    before = s
    s += 1
    assert s is before and isinstance(s, gtstorage.Storage)
    np.testing.assert_array_equal(s.to_numpy(), ref + 1)
    s *= 2
    np.testing.assert_array_equal(s.to_numpy(), (ref + 1) * 2)


def test_ufuncs_and_array_functions():
    s = field()
    ref = np.arange(60.0).reshape(4, 5, 3)
    assert np.sum(s) == ref.sum() and np.max(s) == 59 and np.mean(s) == ref.mean()
    out = gs.zeros((4, 5, 3))
    assert np.add(s, 1, out=out) is out
    np.testing.assert_array_equal(out.to_numpy(), ref + 1)
    assert np.array_equal(np.where(s > 30, s, 0), np.where(ref > 30, ref, 0))
    assert np.concatenate([s, s]).shape == (8, 5, 3)
    assert np.allclose(s, ref) and np.array_equal(np.sqrt(s), np.sqrt(ref))


def test_ndarray_methods_and_attributes():
    s = field()
    ref = np.arange(60.0).reshape(4, 5, 3)
    assert s.sum() == ref.sum() and s.max() == 59 and s.min() == 0 and s.argmax() == 59
    assert s.sum(axis=0).shape == (5, 3) and s.std() == ref.std()
    a = s.astype(np.float32)
    assert type(a) is np.ndarray and a.dtype == np.float32
    assert s.reshape(60).shape == (60,) and s.ravel().shape == (60,)
    assert s.tolist() == ref.tolist() and s.flags.writeable
    assert s.item(1) == 1.0
    c = s.copy()
    assert isinstance(c, gtstorage.Storage) and c.halo == s.halo and np.array_equal(c, s)
    c.fill(2.0)
    assert (c == 2).all() and not (s == 2).all()
    assert 59.0 in s and 100.0 not in s
    z = gs.full((), 3.0)
    assert float(z) == 3.0 and int(z) == 3 and bool(z) and z.ndim == 0 and z.shape == ()
    r = gs.zeros((6,))
    r[...] = [3, 1, 2, 6, 5, 4]
    r.sort()
    assert r.tolist() == [1, 2, 3, 4, 5, 6]


def test_more_ndarray_attributes_follow_numpy():
    s = field()
    ref = np.arange(60.0).reshape(4, 5, 3)
    # base: None for an allocation, the owner for views (chains collapse), the wrapped object.
    assert s.base is None
    assert s[1:].base is s and s[1:][1:].base is s and s.T.base is s and s.domain_view.base is s
    arr = np.zeros((3, 4))
    w = gs.as_storage(arr)
    assert w.base is arr and w[1:].base is arr and gs.as_storage(w).base is arr
    assert gs.as_storage(s).base is s and gs.as_storage(s, readonly=True).base is s
    nd = np.zeros(4)
    assert nd[1:].base is nd and nd[1:][1:].base is nd  # NumPy's rule, for comparison
    # flat: reads and writes through the storage.
    assert type(s.flat) is np.flatiter and list(s.flat) == ref.ravel().tolist()
    assert s.flat[7] == 7.0
    s.flat[7] = -1.0
    assert s[0, 2, 1] == -1.0
    s.flat[[0, 1]] = 9.0
    assert s[0, 0, 0] == s[0, 0, 1] == 9.0
    # ctypes: the host buffer's address.
    assert s.ctypes.data == s.__array_interface__["data"][0]
    assert s.ctypes.shape[:] == [4, 5, 3] and tuple(s.ctypes.strides) == s.strides
    # put, partition: in place.
    s.put([0, 59], [100.0, -100.0])
    assert s[0, 0, 0] == 100.0 and s[3, 4, 2] == -100.0
    p = gs.zeros((7,))
    p[...] = [5, 1, 6, 0, 3, 2, 4]
    assert p.partition(3) is None
    vals = p.tolist()
    assert vals[3] == 3 and max(vals[:3]) < 3 and min(vals[4:]) > 3
    # byteswap: a new array, or the storage's own bytes swapped in place.
    i = gs.full((3,), 1, np.int32)
    swapped = i.byteswap()
    assert type(swapped) is np.ndarray and swapped.tolist() == [2**24] * 3 and i.tolist() == [1] * 3
    assert i.byteswap(inplace=True) is i and i.tolist() == [2**24] * 3
    # getfield (a view), setfield (in place).
    c = gs.zeros((2,), np.complex128)
    c.setfield(2.5, np.float64, 8)
    assert c.tolist() == [2.5j, 2.5j]
    imag = c.getfield(np.float64, 8)
    assert imag.tolist() == [2.5, 2.5]
    imag[0] = 1.0  # NumPy: getfield of a writeable array is a view
    assert c[0] == 1.0j
    # dumps, dump: pickles of the storage.
    t = pickle.loads(s.dumps())
    assert isinstance(t, gtstorage.Storage) and t.halo == s.halo and np.array_equal(t, s)
    import io

    buf = io.BytesIO()
    s.dump(buf)
    buf.seek(0)
    assert np.array_equal(pickle.load(buf), s)


def test_more_ndarray_attributes_on_read_only_storages():
    src = np.arange(6.0)
    src.flags.writeable = False
    r = gs.as_storage(src)
    assert r.flat[2] == 2.0 and list(r.flat) == src.tolist()
    with pytest.raises(ValueError):
        r.flat[2] = 0.0
    assert not r.ctypes.data == 0 and r.ctypes.data == src.ctypes.data
    for call in (lambda: r.put([0], [1.0]), lambda: r.partition(1),
                 lambda: r.byteswap(inplace=True), lambda: r.setfield(1.0, np.float64)):
        with pytest.raises(ValueError, match="read-only"):
            call()
    assert r.byteswap().tolist() == src.byteswap().tolist()
    assert r.tolist() == src.tolist()


def test_more_ndarray_attributes_honour_the_sync_state():
    m = gs.zeros((4,), device="gpu", managed="gtstorage")
    m.synchronize()
    dev = m.__gt_data_interface__["gpu"]

    def device_write(value):  # behind the library's back
        write_device_memory(dev["data"][0], np.full(4, value))
        m.set_device_modified()

    device_write(5.0)
    assert m.flat[1] == 5.0 and m.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    m.host_to_device()
    device_write(6.0)
    assert np.frombuffer((ctypes.c_double * 4).from_address(m.ctypes.data), np.float64)[0] == 6.0
    assert m.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY  # the pointer may be written
    m.host_to_device()
    device_write(7.0)
    m.put([0], [1.0])
    assert m.tolist() == [1.0, 7.0, 7.0, 7.0]
    assert m.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    m.host_to_device()
    device_write(8.0)
    assert m.byteswap().tolist() == np.full(4, 8.0).byteswap().tolist()
    assert m.sync_state.state == gs.SyncState.SYNC_CLEAN  # a read
    device_write(9.0)
    m.partition(0)
    assert m.tolist() == [9.0] * 4 and m.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    # A device-only storage: reads copy to the host; in-place writes need a host buffer.
    d = gs.full((3,), 2.0, device="gpu", managed=None)
    assert list(d.flat) == [2.0] * 3 and d.byteswap().tolist() == np.full(3, 2.0).byteswap().tolist()
    with pytest.raises(ValueError):
        d.flat[0] = 1.0  # the values of a device-only storage are a read-only host copy
    with pytest.raises(gs.GTNoSuchBufferError, match="ctypes: the storage has no host buffer"):
        d.ctypes
    with pytest.raises(gs.GTNoSuchBufferError, match="put: the storage has no host buffer"):
        d.put([0], [1.0])


def test_reads_and_writes_honour_the_sync_state():
    m = gs.zeros((4,), device="gpu", managed="gtstorage")
    assert m.managed == "gtstorage"
    m.synchronize()
    # Write the device buffer behind the library's back and declare it modified: every host
    # read must copy it over first.
    dev = m.__gt_data_interface__["gpu"]
    write_device_memory(dev["data"][0], np.full(4, 5.0))
    m.set_device_modified()
    assert m.sum() == 20.0 and (m == 5).all() and np.max(m) == 5
    assert m.sync_state.state == gs.SyncState.SYNC_CLEAN
    m += 1  # a host write: host modified
    assert m.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    m.host_to_device()
    assert m.sync_state.state == gs.SyncState.SYNC_CLEAN
    m.fill(0.0)
    assert (m == 0).all()


@pytest.mark.parametrize("kw", [dict(), dict(device="gpu"), dict(dims="IJK", aligned_index=(1, 1, 0))])
def test_pickle_round_trips_by_value(kw):
    s = field(**kw)
    t = pickle.loads(pickle.dumps(s))
    assert type(t) is type(s) and t is not s
    assert (t.shape, t.dtype, t.halo, t.dims, t.layout, t.strides) == (
        s.shape, s.dtype, s.halo, s.dims, s.layout, s.strides)
    assert t._params.get("backend") == "gt:cpu_kfirst"
    np.testing.assert_array_equal(np.asarray(t), np.asarray(s))
    assert t.__array_interface__["data"][0] != s.__array_interface__["data"][0]
    v = pickle.loads(pickle.dumps(s.domain_view))
    assert v.shape == (2, 3, 3) and np.array_equal(v, s.domain_view)


def test_seed_spellings():
    s = field()
    assert s.default_origin == s.__gt_origin__ == (1, 1, 0)
    gti = s.__gt_interface__
    assert set(gti) == {None}
    host = gti[None]
    assert host["dims"] == ("I", "J", "K")
    assert all(callable(host[k]) for k in ("acquire", "release", "touch"))
    host["acquire"](), host["release"](), host["touch"]()
    assert host["data"][0] == s.__array_interface__["data"][0]
    m = gs.zeros((2, 2), device="gpu")
    m.synchronize()
    gm = m.__gt_interface__
    assert set(gm) == {None, "gpu"} and callable(gm["gpu"]["release"])
    gm["gpu"]["touch"]()
    assert m.sync_state.state == gs.SyncState.SYNC_DEVICE_DIRTY
    gm[None]["acquire"]()
    assert m.sync_state.state == gs.SyncState.SYNC_CLEAN


@pytest.mark.skipif(sys.version_info < (3, 12), reason="PEP 688 (__buffer__) needs Python 3.12")
def test_python_buffer_protocol():
    s = field()
    mv = memoryview(s)
    assert mv.shape == (4, 5, 3) and mv.format == "d" and mv.strides == s.strides
    assert not mv.readonly
    mv.release()


def test_0d_and_zero_extent_storages():
    z = gs.zeros((), backend="gt:cpu_kfirst")
    assert z.shape == () and z.ndim == 0 and z.__gt_origin__ == () and float(z) == 0.0
    z[...] = 2.5
    assert float(z) == 2.5 and np.asarray(z).shape == ()
    e = gs.zeros((3, 0), halo=0)
    assert e.shape == (3, 0) and e.size == 0 and np.asarray(e).shape == (3, 0)
    assert e.sum() == 0 and e.copy().shape == (3, 0)
    assert pickle.loads(pickle.dumps(e)).shape == (3, 0)


def test_bad_integers_never_become_a_wrong_storage():
    with pytest.raises(OverflowError, match=r"zeros: shape"):
        gs.zeros((2**64 + 5,))
    with pytest.raises(OverflowError, match=r"zeros: halo"):
        gs.zeros((4, 4), halo=(2**64 + 1, 0))
    s = gs.zeros((2,))
    with pytest.raises(OverflowError, match="handle"):
        gtstorage.Storage.from_handle(2**64 + s.handle)
    with pytest.raises(TypeError, match="set_device_backend: name"):
        gtstorage.set_device_backend(5)
    with pytest.raises(TypeError, match="max_version"):
        s.__dlpack__(max_version="x")
    with pytest.raises(OverflowError, match="device_id"):
        gs.zeros((2,), device="gpu", device_id=2**40)
    # Issue 23, F11: an int beyond int32 was truncated modulo 2**32 (2**32 + 1 became 1), so
    # these gave a transposed view and a storage of layout (1, 0).
    m = gs.zeros((3, 4))
    with pytest.raises(ValueError, match=r"transpose: axis 4294967297 is out of bounds"):
        m.transpose(2**32 + 1, 0)
    with pytest.raises(ValueError, match=r"transpose: axis -4294967295 is out of bounds"):
        m.transpose(0, -(2**32) + 1)
    with pytest.raises(OverflowError, match=r"layout: 4294967297 is out of range"):
        gs.zeros((3, 4), layout=(2**32 + 1, 0))
    with pytest.raises(OverflowError, match=r"layout: 4294967297 is out of range"):
        gtstorage.zeros((3, 4), np.float64, backend="gt:cpu_kfirst", layout=(2**32 + 1, 0))
    assert m.transpose(1, 0).shape == (4, 3)


def test_misspelled_keyword_names_the_public_function():
    with pytest.raises(TypeError, match=r"zeros\(\) got an unexpected keyword argument 'haloo'"):
        gs.zeros((3,), haloo=1)


def test_signatures_show_the_keywords():
    import inspect

    for fn in (gs.empty, gs.zeros, gs.ones, gs.full, gs.from_array, gs.zeros_like, gs.as_storage,
               gs.storage, gtstorage.zeros, gtstorage.from_array):
        params = inspect.signature(fn).parameters
        assert not any(p.kind is p.VAR_KEYWORD for p in params.values()), fn
        assert fn.__doc__ and "Parameters" in fn.__doc__, fn
    assert "halo" in inspect.signature(gs.zeros).parameters
    assert "aligned_index" in inspect.signature(gtstorage.zeros).parameters


def test_as_storage_validates_every_parameter_against_the_buffer():
    k = gtstorage.zeros((6, 7, 8), backend="gt:cpu_kfirst")  # K contiguous (drop-in ndarray)
    s = gs.as_storage(k, defaults="gt:cpu_kfirst", aligned_index=(0, 0, 0))
    assert s.__array_interface__["data"][0] == k.ctypes.data
    with pytest.raises(ValueError, match=r"as_storage: .*stride order .*'gt:cpu_ifirst'"):
        gs.as_storage(k, defaults="gt:cpu_ifirst")
    with pytest.raises(ValueError, match="device preset"):
        gs.as_storage(np.zeros((4, 4, 4), order="F"), backend="gt:gpu")  # I-first, but host
    a64 = gtstorage.zeros((40,), alignment_size=64)
    assert gs.as_storage(a64[8:24], alignment_size=64).shape == (16,)
    with pytest.raises(ValueError, match=r"aligned_index \(0,\).*not aligned to 64 bytes"):
        gs.as_storage(a64[1:17], alignment_size=64)
    with pytest.raises(ValueError, match="outside the buffer"):
        gs.as_storage(a64, aligned_index=(40,), alignment_size=8)
    with pytest.raises(RuntimeError, match="no_such"):
        gs.as_storage(a64, defaults="no_such")
