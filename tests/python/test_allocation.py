# gtstorage.allocation: the allocation behind a drop-in array (address, size, byte offset,
# device, owning storage), as_storage of a drop-in array (the same storage, no wrap), and the
# plan cache (a cached plan equals a fresh one, and validation does not depend on the cache).
import gc

import numpy as np
import pytest

import gtstorage as gs
from conftest import live

HOST_PRESETS = [p["name"] for p in gs.presets() if p["device"] == "cpu"]


def _address(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("backend", HOST_PRESETS)
def test_record_of_a_drop_in_array(backend):
    a = gs.zeros((5, 6, 7), backend=backend, aligned_index=(1, 1, 0))
    p = gs.plan((5, 6, 7), backend=backend, aligned_index=(1, 1, 0))
    r = gs.allocation(a)
    assert isinstance(r, gs.Allocation) and isinstance(r, tuple)
    assert r.size == p["allocation_bytes"]
    assert r.address + r.byte_offset == _address(a)
    assert r.byte_offset == _address(a) - r.address >= 0
    assert r.device == (1, 0) and r.is_host
    assert r.address <= _address(a) and _address(a) + a.nbytes <= r.address + r.size
    # A view: the same allocation, its own offset.
    v = a[2:, 1]
    rv = gs.allocation(v)
    assert (rv.address, rv.size, rv.handle) == (r.address, r.size, r.handle)
    assert rv.byte_offset == _address(v) - r.address
    # The raw bytes, as gt4py.next's TensorBuffer.buffer holds them.
    raw = np.asarray(r)
    assert raw.dtype == np.uint8 and raw.shape == (r.size,)
    assert raw.__array_interface__["data"][0] == r.address
    assert r.__dlpack_device__() == (1, 0)
    with pytest.raises(AttributeError, match="host memory"):
        r.__cuda_array_interface__
    # The owning storage.
    st = r.storage
    assert isinstance(st, gs.Storage) and st.shape == (5, 6, 7)
    assert np.asarray(st).__array_interface__["data"][0] == _address(a)


def test_record_keeps_the_memory_alive():
    a = gs.full((64,), 3.0, backend="numpy")
    r = gs.allocation(a)
    before = live()
    del a
    gc.collect()
    assert live() == before  # the record holds the reference
    assert np.frombuffer(np.asarray(r), np.float64, count=1, offset=r.byte_offset)[0] == 3.0
    del r
    gc.collect()
    assert live()[0] == before[0] - 1


def test_record_of_storages_and_of_foreign_memory():
    st = gs.gdp3.zeros((4, 5), dims="IJ")
    r = gs.allocation(st)
    assert r.address + r.byte_offset == np.asarray(st).__array_interface__["data"][0]
    assert r.handle == st._handle
    with pytest.raises(ValueError, match="whose memory libgtstorage did not allocate"):
        gs.allocation(np.zeros(3))
    with pytest.raises(ValueError, match="did not allocate"):
        gs.allocation([1, 2, 3])


def test_as_storage_of_a_drop_in_array_is_that_storage():
    a = gs.zeros((6, 7), backend="gt:cpu_kfirst")
    before = gs.get_stats()["live_buffers"]
    s = gs.as_storage(a)
    # No wrap of the array's memory: no new buffer, the same allocation, writes shared.
    assert gs.get_stats()["live_buffers"] == before
    assert gs.allocation(s).address == gs.allocation(a).address
    assert gs.allocation(s).handle != 0
    np.asarray(s)[2, 3] = 7.0
    assert a[2, 3] == 7.0
    # Keywords it satisfies are checked as for a storage; others fall back to a wrap.
    assert gs.as_storage(a, shape=(6, 7)).shape == (6, 7)
    with pytest.raises(ValueError, match="shape"):
        gs.as_storage(a, shape=(7, 6))
    w = gs.as_storage(a, dims="JK")  # the storage's are I, J
    assert w.dims == ("J", "K") and gs.get_stats()["live_buffers"] == before + 1
    # A view of the array is not the storage's whole view: wrapped, still zero-copy.
    v = gs.as_storage(a[1:, :])
    assert np.shares_memory(np.asarray(v), a)


@pytest.mark.parametrize("kw", [{}, {"backend": "gt:cpu_ifirst"}, {"halo": 1},
                                {"aligned_index": (1, 2, 0)}, {"dims": "IJK"}])
def test_cached_plan_equals_a_fresh_one(kw):
    first = gs.plan((9, 10, 11), **kw)
    first["strides"] = "changed by the caller"  # a copy: the cache must not see this
    again = gs.plan((9, 10, 11), **kw)
    fresh = gs._request._plan_of(gs._request.validate((9, 10, 11), np.float64, **kw), "plan")
    assert again == fresh


def test_plan_validation_does_not_depend_on_the_cache():
    gs.plan((4, 5))
    for shape in ((4, 5.0), (4.0, 5), (True, 5)):
        with pytest.raises(TypeError, match="shape"):
            gs.plan(shape)
    gs.plan((4, 5), aligned_index=(1, 1))
    with pytest.raises(TypeError, match="aligned_index"):
        gs.plan((4, 5), aligned_index=(1.0, 1))
    assert gs.plan([4, 5])["shape"] == (4, 5)
