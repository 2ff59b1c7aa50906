# gtstorage.bridge (issue 24, point 3) from Python: the adapter libgtstorage_python calls, driven
# here directly with the handles of storages made in Python (the C side's part, the interpreter
# and the GIL, is tests/integration/bridge's). Declarations, their checks and messages, the forms, and the
# caches: the same handle gives the same view, another handle never an old one.
import numpy as np
import pytest

import gtstorage as gs
from gtstorage import bridge


def adapter(fn):
    return bridge.adapter_for(fn, f"tests:{fn.__name__}")


@bridge.export(bridge.Arg("a", dtype="float64", ndim=2),
               bridge.Arg("b", dtype="float64", ndim=2, readonly=True))
def axpy(a, b, *, alpha=1.0):
    axpy.seen = (a, b)
    a += alpha * b


def test_numpy_form_works_in_place_and_caches():
    x = np.arange(12.0).reshape(3, 4)
    y = np.ones((3, 4))
    sx, sy = gs.as_storage(x), gs.as_storage(y)
    call = adapter(axpy)
    call((sx.handle, sy.handle), alpha=2.0)
    np.testing.assert_array_equal(x, np.arange(12.0).reshape(3, 4) + 2)
    first = axpy.seen
    assert first[0].__array_interface__["data"][0] == x.__array_interface__["data"][0]
    assert not first[1].flags.writeable  # readonly=True: a read-only view
    call((sx.handle, sy.handle))
    assert axpy.seen[0] is first[0] and axpy.seen[1] is first[1]  # the cached views
    sz = gs.as_storage(np.zeros((3, 4)))
    call((sz.handle, sy.handle))
    assert axpy.seen[0] is not first[0]


def test_another_handle_on_the_same_memory_is_never_stale():
    memory = np.zeros(24)

    @bridge.export(bridge.Arg("a", dtype="float64"))
    def shape_of(a):
        shape_of.seen = a.shape

    call = adapter(shape_of)
    s1 = gs.as_storage(memory.reshape(4, 6))
    call((s1.handle,))
    assert shape_of.seen == (4, 6)
    h1 = s1.handle
    del s1
    s2 = gs.as_storage(memory.reshape(3, 8))  # the same address, another handle
    assert s2.handle != h1
    call((s2.handle,))
    assert shape_of.seen == (3, 8)


def test_declaration_mismatches_name_the_function_and_the_argument():
    call = adapter(axpy)
    a = gs.as_storage(np.zeros((3, 4)))
    f4 = gs.as_storage(np.zeros((3, 4), dtype=np.float32))
    three = gs.as_storage(np.zeros((3, 4, 2)))
    frozen = np.zeros((3, 4))
    frozen.flags.writeable = False
    ro = gs.as_storage(frozen)
    with pytest.raises(bridge.ArgumentError, match=r"tests:axpy: 1 storage passed; the function takes 2 \(a, b\)"):
        call((a.handle,))
    with pytest.raises(bridge.ArgumentError, match=r"tests:axpy: argument 1 \('b'\): dtype float32"):
        call((a.handle, f4.handle))
    with pytest.raises(bridge.ArgumentError, match=r"argument 0 \('a'\): 3 dimensions \(3, 4, 2\), declared ndim=2"):
        call((three.handle, a.handle))
    if ro.readonly:
        with pytest.raises(bridge.ArgumentError, match=r"argument 0 \('a'\): the storage is read-only"):
            call((ro.handle, a.handle))
    assert bridge.ArgumentError._gtstorage_status == gs._capi.ERROR_INVALID_ARGUMENT


def test_halo_dims_and_the_storage_form():
    @bridge.export(bridge.Arg("u", dtype="float64", dims="IJK", halo=((2, 2), (1, 1), (0, 0))),
                   form="storage")
    def interior_plus_one(u):
        interior_plus_one.halo = u.halo
        u.domain_view[...] = np.asarray(u.domain_view) + 1

    data = np.zeros((8, 6, 3))
    good = gs.as_storage(data, halo=((2, 2), (1, 1), (0, 0)), dims="IJK")
    adapter(interior_plus_one)((good.handle,))
    assert interior_plus_one.halo == ((2, 2), (1, 1), (0, 0))
    assert data[2:6, 1:5].sum() == 4 * 4 * 3 and data.sum() == 4 * 4 * 3
    wrong = gs.as_storage(np.zeros((8, 6, 3)), halo=((1, 1), (1, 1), (0, 0)), dims="IJK")
    with pytest.raises(bridge.ArgumentError, match=r"argument 0 \('u'\): halo"):
        adapter(interior_plus_one)((wrong.handle,))
    other_dims = gs.as_storage(np.zeros((8, 6, 3)), halo=((2, 2), (1, 1), (0, 0)), dims="JIK")
    with pytest.raises(bridge.ArgumentError, match=r"dims J,I,K, declared I,J,K"):
        adapter(interior_plus_one)((other_dims.handle,))


def test_undeclared_functions_take_any_number_of_numpy_views():
    def add_seven(*arrays):
        for arr in arrays:
            arr += 7

    xs = [np.zeros(3), np.zeros((2, 2))]
    ss = [gs.as_storage(x) for x in xs]
    adapter(add_seven)(tuple(s.handle for s in ss))
    assert all((x == 7).all() for x in xs)
    adapter(add_seven)(())


def test_declarations_are_checked_when_made():
    with pytest.raises(ValueError, match="form must be one of"):
        bridge.export(form="pandas")
    with pytest.raises(ValueError, match="names repeat"):
        bridge.export(bridge.Arg("a"), bridge.Arg("a"))
    with pytest.raises(TypeError, match="must be Arg"):
        bridge.export("a")
    with pytest.raises(TypeError, match="ndim 2 but 3 dims"):
        bridge.Arg("a", ndim=2, dims="IJK")
    with pytest.raises(ValueError, match="side must be one of"):
        bridge.Arg("a", side="gpu")
    with pytest.raises(ValueError, match="form 'gt4py.next' needs dims"):
        bridge.export(bridge.Arg("a"), form="gt4py.next")
    with pytest.raises(TypeError, match="not callable"):
        bridge.adapter_for(42, "m:x")


def test_current_stream_outside_a_call():
    assert bridge.current_stream() is None


def test_gt4py_next_form_shares_memory():
    gtx = pytest.importorskip("gt4py.next")
    I, J = gtx.Dimension("I"), gtx.Dimension("J")

    @bridge.export(bridge.Arg("u", dtype="float64", dims=(I, J)), form="gt4py.next")
    def field_of(u):
        field_of.field = u

    data = np.zeros((6, 5))
    s = gs.as_storage(data, halo=((1, 1), (2, 1)), dims="IJ")
    adapter(field_of)((s.handle,))
    f = field_of.field
    assert np.shares_memory(f.ndarray, data)
    assert tuple((r.start, r.stop) for r in f.domain.ranges) == ((-1, 5), (-2, 3))
