# gtstorage._native, the C fast path (bindings/python/native/gtstorage_native.c): the contract the
# allocators rely on (create_array, host_array, Owner), checked directly. Skipped where the module
# is absent (the source tree); GTSTORAGE_TEST_REQUIRE_NATIVE=1 (tests/python/run.sh, installed
# wheel) makes its absence a failure.
import ctypes
import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import gtstorage
from gtstorage import _capi

from conftest import live, run_in_threads

native = _capi.native


def test_native_is_loaded_where_required():
    if os.environ.get("GTSTORAGE_TEST_REQUIRE_NATIVE") == "1":
        assert native is not None, f"gtstorage._native is not loaded: {_capi.native_error}"
        assert native.library_address() == ctypes.cast(_capi.lib.gtstorage_create,
                                                       ctypes.c_void_p).value


pytestmark_native = pytest.mark.skipif(native is None, reason=f"no gtstorage._native "
                                       f"({_capi.native_error})")


class Options:
    """A gtstorage_create_options with the arrays it points to kept alive."""

    def __init__(self, shape, dtype="<f8", init=_capi.INIT_ZEROS, preset=None, halo=None,
                 readonly=False, device=_capi.DEVICE_DEFAULT):
        self.struct = _capi.new_struct(_capi.CreateOptions)
        _capi.check(_capi.lib.gtstorage_create_options_init(ctypes.byref(self.struct)))
        self._shape = _capi.int64_array(shape)
        self.struct.ndim = len(shape)
        self.struct.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        self._dtype = dtype.encode()
        self.struct.dtype = self._dtype
        self.struct.init = init
        self._preset = preset.encode() if preset else None
        self.struct.preset = self._preset
        if halo is not None:
            self._halo = _capi.int64_array(halo)
            self.struct.halo = ctypes.cast(self._halo, ctypes.POINTER(ctypes.c_int64))
        self.struct.readonly = int(readonly)
        self.struct.device = device

    @property
    def address(self):
        return ctypes.addressof(self.struct)


def host_info(handle):
    info = _capi.new_struct(_capi.InterfaceInfo)
    _capi.check(_capi.lib.gtstorage_interface(handle, _capi.SIDE_HOST, ctypes.byref(info)))
    return info


@pytestmark_native
@pytest.mark.parametrize("dtype", ["<f8", "<f4", "<f2", "<i1", "<i2", "<i4", "<i8", "<u1", "<u2",
                                   "<u4", "<u8", "<c8", "<c16", "|b1"])
def test_create_array_dtypes(dtype, no_leak):
    o = Options((4, 3, 5), dtype)
    a = native.create_array(o.address)
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.dtype(dtype) and a.shape == (4, 3, 5)
    assert not a.any()
    a[...] = 1
    assert a.all()
    del a


@pytestmark_native
def test_create_array_matches_the_library(no_leak):
    o = Options((10, 8, 4), preset="gt:cpu_kfirst", halo=(2, 2, 2, 2, 0, 0))
    a = native.create_array(o.address)
    owner = a.base
    assert type(owner) is native.Owner
    info = host_info(owner.handle)
    assert a.shape == tuple(info.shape[: info.ndim])
    assert a.strides == tuple(info.strides[: info.ndim])
    assert a.__array_interface__["data"][0] == info.data
    assert a.flags.writeable and a.flags.aligned
    assert a.flags.c_contiguous == bool(info.is_c_contiguous)
    refs = ctypes.c_int64()
    _capi.check(_capi.lib.gtstorage_refcount(owner.handle, ctypes.byref(refs)))
    assert refs.value == 1  # the Owner holds the only reference
    assert float(a.sum()) == 0.0


@pytestmark_native
def test_owner_releases_the_handle_and_supports_weakrefs():
    before = live()
    o = Options((8, 8, 8))  # the struct must outlive the call
    a = native.create_array(o.address)
    owner = a.base
    handle = owner.handle
    assert live()[0] == before[0] + 1
    assert "Owner handle=0x" in repr(owner)
    with pytest.raises(AttributeError):
        owner.handle = 0  # read-only
    with pytest.raises(TypeError):
        native.Owner()  # only the module makes owners
    gone = []
    ref = weakref.ref(owner, lambda r: gone.append(True))
    del owner
    assert ref() is not None  # the array keeps it alive
    del a
    gc.collect()
    assert ref() is None and gone == [True]
    assert live() == before
    # The handle is gone from the library's table.
    assert _capi.lib.gtstorage_retain(handle) == _capi.ERROR_INVALID_HANDLE


@pytestmark_native
def test_views_keep_the_storage_alive():
    before = live()
    o = Options((6, 5))
    a = native.create_array(o.address)
    v = a[1:, ::2]
    del a
    gc.collect()
    assert live()[0] == before[0] + 1
    v[...] = 3.0
    assert v.sum() == 3.0 * v.size
    del v
    gc.collect()
    assert live() == before


@pytestmark_native
def test_readonly_and_zero_d(no_leak):
    o = Options((3, 4), init=_capi.INIT_ONES, readonly=True)
    a = native.create_array(o.address)
    assert not a.flags.writeable
    assert (a == 1).all()
    with pytest.raises(ValueError):
        a[0, 0] = 2
    o0 = Options(())
    z = native.create_array(o0.address)
    if isinstance(z, int):  # a library without 0-d storages
        pytest.skip(f"0-d storages not supported: {_capi.error_for(z).args[0]}")
    assert z.shape == () and z.ndim == 0 and z[()] == 0.0
    z[()] = 5
    assert float(z) == 5.0
    del a, z


@pytestmark_native
def test_failure_returns_the_status(no_leak):
    bad = Options((4, 4), dtype="<q7")
    st = native.create_array(bad.address)
    assert isinstance(st, int) and st < 0
    err = _capi.error_for(st)
    assert isinstance(err, gtstorage.GTStorageError) and err.status == st
    assert str(err)  # the thread-local message survived
    unknown = Options((2, 2), preset="no-such-preset")
    st = native.create_array(unknown.address)
    assert st == _capi.ERROR_UNKNOWN_PRESET
    assert "no-such-preset" in str(_capi.error_for(st))
    with pytest.raises(ValueError):
        native.create_array(0)
    with pytest.raises(TypeError):
        native.create_array("0x1234")


@pytestmark_native
def test_device_only_storage_is_released(no_leak):
    count = ctypes.c_int32()
    if _capi.lib.gtstorage_device_count(ctypes.byref(count)) != _capi.OK or count.value == 0:
        pytest.skip("no (emulated) device")
    o = Options((4, 4), device=_capi.DEVICE_GPU)
    o.struct.managed = _capi.MANAGED_NONE
    st = native.create_array(o.address)
    if isinstance(st, np.ndarray):
        pytest.skip("this device storage has a host side")
    assert st == _capi.ERROR_NO_SUCH_BUFFER == native.ERROR_NO_SUCH_BUFFER


@pytestmark_native
def test_host_array_takes_over_a_reference(no_leak):
    h = _capi.handle_t()
    o = Options((5, 6), init=_capi.INIT_ONES)
    _capi.check(_capi.lib.gtstorage_create(ctypes.byref(o.struct), ctypes.byref(h)))
    _capi.check(_capi.lib.gtstorage_retain(h))  # the reference host_array takes over
    a = native.host_array(h.value)
    assert a.base.handle == h.value and (a == 1).all()
    refs = ctypes.c_int64()
    _capi.check(_capi.lib.gtstorage_refcount(h, ctypes.byref(refs)))
    assert refs.value == 2
    _capi.check(_capi.lib.gtstorage_release(h))
    a[0, 0] = 7.0  # still alive through the Owner
    del a
    gc.collect()
    assert _capi.lib.gtstorage_retain(h) == _capi.ERROR_INVALID_HANDLE
    st = native.host_array(h.value)  # a released handle: the status, not an array
    assert st == _capi.ERROR_INVALID_HANDLE
    with pytest.raises(OverflowError):
        native.host_array(-1)


@pytestmark_native
def test_threads_share_nothing_wrong(no_leak):
    o = Options((16, 16))
    out = []

    def work():
        for _ in range(200):
            a = native.create_array(o.address)
            a[...] = 1.0
            out.append(float(a.sum()))

    errors = run_in_threads(work, [()] * 4)
    assert not errors and out == [256.0] * 800


def test_disabled_by_environment():
    env = dict(os.environ, GTSTORAGE_PY_NATIVE="0")
    r = subprocess.run([sys.executable, "-c", "import gtstorage; from gtstorage import _capi; "
                        "print(_capi.native, _capi.native_error); "
                        "print(float(gtstorage.zeros((2, 3)).sum()))"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == "None disabled by GTSTORAGE_PY_NATIVE"
    assert r.stdout.split("\n")[1] == "0.0"


# ---- gtstorage._native.allocator: empty/zeros/ones served in C (bindings/python/native) --------

from gtstorage import _gt4py, _request  # noqa: E402

ALLOCATORS = [("empty", _capi.INIT_UNINITIALIZED), ("zeros", _capi.INIT_ZEROS),
              ("ones", _capi.INIT_ONES)]
needs_allocator = pytest.mark.skipif(native is None or not hasattr(native, "allocator"),
                                     reason="no gtstorage._native.allocator")


@needs_allocator
@pytest.mark.parametrize("name,init", ALLOCATORS)
def test_allocators_are_installed(name, init):
    f = getattr(gtstorage, name)
    assert type(f) is native.Allocator and f is getattr(_gt4py, name)
    py = f.__wrapped__
    assert type(py).__name__ == "function" and py.__module__ == "gtstorage._gt4py"
    assert (f.__name__, f.__qualname__, f.__module__, f.__doc__) == (
        name, name, "gtstorage._gt4py", py.__doc__)


def _same(a, b, init):
    assert type(a) is type(b) is np.ndarray
    assert (a.shape, a.strides, a.dtype) == (b.shape, b.strides, b.dtype)
    assert type(a.base) is type(b.base)
    assert a.flags.writeable and a.flags.aligned
    assert a.base is not b.base and a.ctypes.data != b.ctypes.data
    if init != _capi.INIT_UNINITIALIZED:
        np.testing.assert_array_equal(a, b)
        assert (a == (1 if init == _capi.INIT_ONES else 0)).all()


CALLS = [
    (((8, 8, 8),), {}),
    (((4, 5),), {"backend": "gt:cpu_kfirst"}),
    (((4, 5, 6), np.float32), {"backend": "gt:cpu_ifirst"}),
    (((4, 5, 6),), {"dtype": np.int32, "backend": "dace:cpu"}),
    ((), {"shape": (3, 7), "dtype": "f4"}),
    (((3, 4), (np.float64, (2,))), {}),  # a sub-array dtype
    (((),), {}),  # 0-d
    (((0, 3),), {"backend": "gt:cpu_kfirst"}),
    (((9,), np.complex128), {"backend": None}),
]


@needs_allocator
@pytest.mark.parametrize("name,init", ALLOCATORS)
@pytest.mark.parametrize("args,kwargs", CALLS)
def test_allocator_returns_what_the_function_returns(name, init, args, kwargs, no_leak):
    f = getattr(gtstorage, name)
    py = f.__wrapped__
    expected = py(*args, **kwargs)  # fills the cache
    for _ in range(3):  # served from the cache (and from the memo of the same objects)
        _same(f(*args, **kwargs), expected, init)
    if type(expected.base) is native.Owner:
        assert expected.base.handle != 0


@needs_allocator
def test_allocator_serves_cache_hits_in_c(no_leak):
    calls = []
    py = gtstorage.zeros.__wrapped__

    def zeros(shape, dtype=np.float64, *, backend="numpy", aligned_index=None):
        calls.append((shape, dtype, backend, aligned_index))
        return py(shape, dtype, backend=backend, aligned_index=aligned_index)

    z = native.allocator(zeros, _request.cache, _capi.INIT_ZEROS)
    shape = (6, 7)
    a = z(shape)  # a miss (unless another test cached it): whatever happens, the result is right
    calls.clear()
    b = z(shape)
    c = z((6, 7), np.float64)
    d = z((6, 7), dtype=np.float64, backend="numpy")
    assert calls == []  # all served from the cache of _request
    for x in (b, c, d):
        _same(x, a, _capi.INIT_ZEROS)
    # Every other form goes to the fallback, unchanged.
    e = z(shape, aligned_index=(1, 1))
    f = z([6, 7])
    g = z((np.int64(6), 7))
    h = z(6)
    assert [c[0] for c in calls] == [shape, [6, 7], (np.int64(6), 7), 6]
    assert calls[0][3] == (1, 1)
    for x in (e, f, g):
        assert x.shape == (6, 7) and not x.any()
    assert h.shape == (6,)


@needs_allocator
def test_allocator_falls_back_with_the_functions_errors(no_leak):
    z = gtstorage.zeros
    z((8, 8))  # an int entry: a float shape of equal value must still fail
    for args, kwargs, exc in [
        (((8.0, 8),), {}, TypeError),
        (((8, 8.0),), {"backend": "gt:cpu_kfirst"}, TypeError),
        (((8, 8),), {"backend": "no_such_backend"}, RuntimeError),
        (((8, 8),), {"backend": 3}, TypeError),
        (((-1, 8),), {}, ValueError),
        (((8, 8), np.float64, np.float32), {}, TypeError),
        (((8, 8), np.float64), {"dtype": np.float32}, TypeError),
        (((8, 8),), {"shape": (8, 8)}, TypeError),
        (((8, 8),), {"halo": 1}, TypeError),
        (((8, 8),), {"dimensions": ("I", "X")}, ValueError),
        ((), {}, TypeError),
        (((8, 8), [1]), {}, TypeError),  # an unhashable dtype
    ]:
        with pytest.raises(exc) as native_error:
            z(*args, **kwargs)
        with pytest.raises(exc) as python_error:
            z.__wrapped__(*args, **kwargs)
        assert type(native_error.value) is type(python_error.value)
        assert str(native_error.value) == str(python_error.value)
        assert "zeros" in str(native_error.value)


class _Entry:
    """A cache entry as _request.Request has it (address, device, shape_types)."""

    def __init__(self, options, device=False, shape_types=None):
        self.options = options
        self.address = options.address
        self.device = device
        self.shape_types = shape_types


@needs_allocator
def test_allocator_contract_with_a_private_cache(no_leak):
    calls = []

    def fallback(shape, dtype="f8", *, backend="numpy", other=None):
        calls.append((shape, dtype, backend, other))
        return "fallback"

    def entry(shape, dtype="<f8", device=False, types=None):
        return _Entry(Options(shape, dtype, init=_capi.INIT_ONES), device,
                      tuple(map(type, shape)) if types is None else types)

    cache = {}
    a = native.allocator(fallback, cache, _capi.INIT_ONES)
    shape = (4, 3)
    # A miss, then hits on the default key and an explicit one.
    assert a(shape) == "fallback" and calls == [(shape, "f8", "numpy", None)]
    calls.clear()
    cache[(_capi.INIT_ONES, (4, 3), "f8", "numpy")] = entry((4, 3), "<f4")
    x = a(shape)
    assert x.dtype == np.float32 and x.shape == (4, 3) and (x == 1).all() and calls == []
    assert type(x.base) is native.Owner
    # The cache changed: the memo of the same objects must see it.
    cache[(_capi.INIT_ONES, (4, 3), "f8", "numpy")] = entry((4, 3), "<i2")
    x = a(shape)
    assert x.dtype == np.int16 and (x == 1).all()
    cache.clear()
    assert a(shape) == "fallback"
    assert calls == [(shape, "f8", "numpy", None)]
    calls.clear()
    # A device entry, other shape element types, an entry without the attributes, a failing
    # create (an invalid dtype), another keyword: the fallback.
    key = (_capi.INIT_ONES, (4, 3), "f8", "gpu")
    cache[key] = entry((4, 3), device=True)
    assert a(shape, backend="gpu") == "fallback"
    cache[key] = entry((4, 3), types=(np.int64, int))
    assert a(shape, backend="gpu") == "fallback"
    cache[key] = object()
    assert a(shape, backend="gpu") == "fallback"
    cache[key] = entry((4, 3), "<q7")
    assert a(shape, backend="gpu") == "fallback"
    assert a(shape, other=1) == "fallback"
    assert [c[2:] for c in calls] == [("gpu", None)] * 4 + [("numpy", 1)]
    calls.clear()
    # dtype positional or keyword, shape keyword.
    cache[(_capi.INIT_ONES, (2,), "<u1", "numpy")] = entry((2,), "<u1")
    for y in (a((2,), "<u1"), a((2,), dtype="<u1"), a(shape=(2,), dtype="<u1")):
        assert y.dtype == np.uint8 and (y == 1).all()
    assert calls == []
    # Wrong construction arguments.
    with pytest.raises(TypeError):
        native.allocator(len, cache, 1)
    with pytest.raises(TypeError):
        native.allocator(fallback, list(cache), 1)
    with pytest.raises(TypeError):
        native.allocator(fallback, cache, 1.0)
    with pytest.raises(TypeError, match="signature"):
        native.allocator(lambda shape, dtype, backend="x": None, cache, 1)
    with pytest.raises(TypeError, match="signature"):
        native.allocator(lambda shape, dtype="f8", *, layout=None: None, cache, 1)
    with pytest.raises(TypeError, match="signature"):
        native.allocator(lambda shape, /, dtype="f8", *, backend=None: None, cache, 1)
    with pytest.raises(TypeError):
        native.Allocator()
    del x, y


@needs_allocator
def test_allocator_looks_like_the_function():
    import copy
    import inspect
    import pickle
    import pydoc

    z = gtstorage.zeros
    py = z.__wrapped__
    assert inspect.signature(z) == inspect.signature(py)
    assert str(inspect.signature(z)).startswith("(shape:")
    assert callable(z) and inspect.isroutine(z)
    assert repr(z).startswith("<function zeros at 0x") and "Allocator" in repr(z)
    text = pydoc.render_doc(z, renderer=pydoc.plaintext)
    assert "zeros(shape:" in text and "filled with 0" in text
    import typing

    assert typing.get_type_hints(z) == typing.get_type_hints(py)
    assert copy.deepcopy(z) is z and pickle.loads(pickle.dumps(z)) is z
    assert weakref.ref(z)() is z

    class Holder:
        make = z

    assert Holder.make is z
    with pytest.raises(TypeError):  # bound like a function: the instance is the shape
        Holder().make()


@needs_allocator
def test_allocator_threads(no_leak):
    shapes = [(16, 16), (3, 5, 7), (8, 8, 8)]
    out = []

    def work(k):
        for i in range(300):
            s = shapes[(i + k) % len(shapes)]
            a = gtstorage.ones(s, backend="gt:cpu_kfirst" if i % 2 else "numpy")
            b = gtstorage.zeros(s, np.float32)
            out.append(a.shape == s and b.shape == s and float(a.sum()) == a.size
                       and not b.any())

    errors = run_in_threads(work, [(k,) for k in range(4)])
    assert not errors and out == [True] * 1200


def test_allocators_are_functions_without_native():
    env = dict(os.environ, GTSTORAGE_PY_NATIVE="0")
    r = subprocess.run([sys.executable, "-c", "import types, gtstorage; "
                        "print(all(type(f) is types.FunctionType for f in "
                        "(gtstorage.empty, gtstorage.zeros, gtstorage.ones)), "
                        "float(gtstorage.ones((2, 3)).sum()))"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "6.0"]
