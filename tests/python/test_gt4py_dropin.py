# The GT4Py drop-in: gtstorage.empty/zeros/ones/full/from_array/*_like take gt4py.storage's
# arguments and return plain NumPy arrays over libgtstorage memory.
import gc
import sys
import types

import numpy as np
import pytest

import gtstorage
import gtstorage as gs
from conftest import live, run_in_threads

HOST_PRESETS = [p["name"] for p in gs.presets() if p["device"] == "cpu"]
DEVICE_PRESETS = [p["name"] for p in gs.presets() if p["device"] == "gpu"]


@pytest.mark.parametrize("backend", HOST_PRESETS)
@pytest.mark.parametrize("dims", [("I", "J", "K"), ("I", "J"), ("K",), ("I", "J", "K", "0")])
def test_returns_plain_ndarray_with_the_plan_strides(backend, dims):
    shape = tuple(range(3, 3 + len(dims)))
    a = gs.zeros(shape, np.float64, backend=backend, dimensions=dims)
    assert type(a) is np.ndarray
    p = gs.plan(shape, np.float64, backend=backend, dims=dims)
    assert a.shape == shape and a.strides == p["strides"] and a.dtype == np.float64
    assert not a.any()
    # The aligned element (aligned_index 0 here) sits on the preset's alignment.
    assert a.ctypes.data % p["alignment_bytes"] == 0


# GT4Py 1.2.3's layout rule (gt4py/storage/cartesian/layout.py, layout_maker_factory, copied):
# the base layout is applied by position, not by name: the first dimensions get the ranks of the
# I, J, K that `dimensions` contains (in I, J, K order), the others are data dimensions.
def gt4py_layout_map(base_layout, dimensions):
    mask = [dim in dimensions for dim in "IJK"]
    ranks = [bl for m, bl in zip(mask, base_layout) if m]
    data_dimensions_size = len(dimensions) - sum(mask)
    ranks = [data_dimensions_size + r for r in ranks]
    ranks += list(range(data_dimensions_size))
    res_layout = [0] * len(ranks)
    for i, idx in enumerate(np.argsort(ranks, kind="stable")):
        res_layout[idx] = i
    return tuple(res_layout)


# ... and its strides (gt4py/storage/allocators.py, NDArrayBufferAllocator.allocate): the
# contiguous dimension padded to the alignment.
def gt4py_strides(shape, layout_map, itemsize, alignment_bytes):
    per_block = (alignment_bytes // itemsize) or 1
    order = [layout_map.index(i) for i in range(len(shape))]
    padded = list(shape)
    if shape:
        padded[order[-1]] = -(-shape[order[-1]] // per_block) * per_block
    strides = [itemsize] * len(shape)
    acc = itemsize
    for i in range(len(shape) - 2, -1, -1):
        acc = strides[order[i]] = acc * padded[order[i + 1]]
    return tuple(strides)


GT4PY_BACKENDS = [p for p in gs.presets() if p["name"] in (
    "numpy", "debug", "gt:cpu_kfirst", "gt:cpu_ifirst", "gt:gpu", "dace:cpu", "dace:cpu_kfirst",
    "dace:cpu_KJI", "dace:gpu", "dace:gpu_IJK")]


def permuted_dims():
    """Every order of every I/J/K subset with up to two data dimensions, at most 4 labels."""
    import itertools

    out = []
    for n_cart in range(4):
        for cart in itertools.combinations("IJK", n_cart):
            for n_data in range(3):
                labels = cart + tuple(str(i) for i in range(n_data))
                if 0 < len(labels) <= 4:
                    out += itertools.permutations(labels)
    return sorted(set(out))


@pytest.mark.parametrize("preset", GT4PY_BACKENDS, ids=lambda p: p["name"])
def test_permuted_dimensions_are_laid_out_like_gt4py(preset):
    # gt4py.storage.zeros(shape, backend=b, dimensions=("K", "J", "I")) lays the array out as
    # ("I", "J", "K"): the drop-in gives GT4Py's strides for every order of the dims.
    backend = preset["name"]
    for dims in permuted_dims():
        shape = tuple(range(3, 3 + len(dims)))
        for dtype in (np.float64, np.int8):
            itemsize = np.dtype(dtype).itemsize
            align = preset["alignment"] * (itemsize if preset["alignment_unit"] == "elements" else 1)
            want = gt4py_strides(shape, gt4py_layout_map(preset["base_layout"], dims), itemsize,
                                 align)
            what = f"{backend} dimensions={dims} dtype={np.dtype(dtype)}"
            assert gs._gt4py._plan(shape, dtype, backend=backend, dimensions=dims)["strides"] == \
                want, what
            if preset["device"] == "cpu":
                a = gs.zeros(shape, dtype, backend=backend, dimensions=dims)
                assert a.shape == shape and a.strides == want, what
    # A sub-array dtype's data dimensions come after the given ones, as in GT4Py.
    dims = ("K", "I")
    want = gt4py_strides((3, 4, 2), gt4py_layout_map(preset["base_layout"], dims + ("0",)), 8,
                         preset["alignment"] * (8 if preset["alignment_unit"] == "elements" else 1))
    assert gs._gt4py._plan((3, 4), (np.float64, (2,)), backend=backend,
                           dimensions=dims)["strides"] == want
    if preset["device"] == "cpu":
        a = gs.zeros((3, 4), (np.float64, (2,)), backend=backend, dimensions=dims,
                     aligned_index=(1, 2))
        assert a.shape == (3, 4, 2) and a.strides == want and a.dtype == np.float64


def test_permuted_dimensions_of_like_functions_and_from_array():
    data = np.arange(60.0).reshape(3, 4, 5)
    for dims in [("K", "J", "I"), ("J", "K", "I")]:
        want = gs.zeros((3, 4, 5), backend="gt:cpu_ifirst", dimensions=("I", "J", "K")).strides
        a = gs.from_array(data, backend="gt:cpu_ifirst", dimensions=dims)
        assert a.strides == want and np.array_equal(a, data)
        assert gs.empty_like(data, backend="gt:cpu_ifirst", dimensions=dims).strides == want
        assert gs.full((3, 4, 5), 1.0, backend="gt:cpu_ifirst", dimensions=dims).strides == want


def test_bad_dimensions_are_still_reported():
    with pytest.raises(ValueError, match=r"^zeros: .*dims"):
        gs.zeros((3, 4), backend="numpy", dimensions=("I", "I"))
    with pytest.raises(ValueError, match=r"^zeros: .*dims"):
        gs.zeros((3, 4), backend="numpy", dimensions=("I", "X"))
    with pytest.raises(ValueError, match=r"^zeros: dims .* non-matching sizes: 3 labels for a shape of 2"):
        gs.zeros((3, 4), backend="numpy", dimensions=("K", "J", "I"))
    with pytest.raises(TypeError, match=r"^zeros: dims must be a sequence of str"):
        gs.zeros((3, 4), backend="numpy", dimensions=5)


@pytest.mark.parametrize("backend", HOST_PRESETS)
def test_zero_d_like_gt4py(backend):
    for dims in (None, ()):
        for fn, args in ((gs.zeros, ()), (gs.ones, ()), (gs.empty, ()), (gs.full, (2.5,))):
            a = fn((), *args, backend=backend, dimensions=dims)
            assert type(a) is np.ndarray and a.shape == () and a.strides == (), (fn, dims)
        f = gs.full((), 2.5, backend=backend, dimensions=dims, aligned_index=())
        assert f[()] == 2.5
        a = gs.from_array(np.float64(4.0), backend=backend, dimensions=dims)
        assert a.shape == () and a[()] == 4.0
        assert gs.zeros_like(a, dimensions=dims).shape == ()
        assert gs._gt4py._plan((), backend=backend, dimensions=dims)["shape"] == ()
    with pytest.raises(ValueError, match=r"^zeros: dims \('I',\) and shape \(\) have non-matching sizes"):
        gs.zeros((), backend=backend, dimensions=("I",))


def test_values_of_each_allocator():
    assert (gs.ones((2, 3), backend="gt:cpu_ifirst") == 1).all()
    f = gs.full((2, 3), 2.5, np.float32, backend="gt:cpu_kfirst")
    assert f.dtype == np.float32 and (f == 2.5).all()
    assert gs.full((2,), 7.9, np.int32)[0] == 7  # GT4Py: dtype.type(fill_value)
    e = gs.empty((4, 5), np.int16, backend="numpy")
    assert e.shape == (4, 5) and e.dtype == np.int16


def test_from_array_defaults_to_float64_like_gt4py():
    src = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    a = gs.from_array(src, backend="gt:cpu_kfirst")
    assert type(a) is np.ndarray and a.dtype == np.float64  # gt4py.storage.from_array's default
    np.testing.assert_array_equal(a, src)
    assert gs.from_array(src, None, backend="numpy").dtype == np.int32
    f = np.asfortranarray(np.random.default_rng(0).random((5, 6, 7)))
    b = gs.from_array(f, backend="gt:cpu_kfirst")
    assert b.strides == gs.plan((5, 6, 7), backend="gt:cpu_kfirst")["strides"]
    np.testing.assert_array_equal(b, f)


def test_subarray_dtype_adds_data_dims():
    a = gs.zeros((3, 4), (np.float64, (2,)), backend="gt:cpu_kfirst")
    assert a.shape == (3, 4, 2) and a.dtype == np.float64


def test_like_functions():
    src = np.ones((3, 4), np.float32)
    assert gs.zeros_like(src).dtype == np.float32 and not gs.zeros_like(src).any()
    assert (gs.ones_like(src, np.int64) == 1).all()
    assert (gs.full_like(src, 3) == 3).all()
    assert gs.empty_like(src, backend="gt:cpu_ifirst").shape == (3, 4)


def test_0d_and_zero_extents():
    z = gs.zeros(())
    assert type(z) is np.ndarray and z.shape == () and z[()] == 0
    assert gs.full((), 4.0, dimensions=())[()] == 4.0
    e = gs.zeros((0, 3), backend="gt:cpu_kfirst")
    assert e.shape == (0, 3) and e.size == 0
    assert gs.from_array(np.zeros((2, 0, 4)), backend="gt:cpu_ifirst").shape == (2, 0, 4)


def test_memory_is_the_librarys_and_lives_with_the_last_view(no_leak):
    before = live()
    a = gs.ones((64, 64), backend="gt:cpu_kfirst")
    assert live()[0] == before[0] + 1  # one library handle owns the memory
    view = a[1:3, ::2]
    address = view.ctypes.data
    del a
    gc.collect()
    assert live()[0] == before[0] + 1 and view.ctypes.data == address
    assert (view == 1).all()
    del view


def test_errors_have_gt4py_types_and_name_the_function():
    with pytest.raises(RuntimeError, match=r"zeros: .*non_existing"):
        gs.zeros((3,), backend="non_existing")
    with pytest.raises(TypeError, match=r"^empty: shape"):
        gs.empty((3, 2.5))
    with pytest.raises(TypeError, match="shape"):
        gs.zeros((8.0,))  # also after an int shape of the same value was cached
    gs.zeros((8,))
    with pytest.raises(TypeError, match="shape"):
        gs.zeros((8.0,))
    with pytest.raises(ValueError, match="aligned_index"):
        gs.zeros((3, 3), aligned_index=(1,))
    with pytest.raises(ValueError, match="dim"):
        gs.zeros((3, 3), dimensions=("I", "X"))
    with pytest.raises(OverflowError, match=r"ones: shape"):
        gs.ones((2**64 + 5,))
    with pytest.raises(OverflowError, match="aligned_index"):
        gs.ones((4,), aligned_index=(2**63,))
    with pytest.raises(TypeError, match="unexpected keyword argument 'halo'"):
        gs.zeros((3,), halo=1)  # GDP-3 keywords live in gtstorage.gdp3


def test_alignment_size_any_multiple_of_the_itemsize():
    for _ in range(20):
        a = gs.empty((7, 9), np.float64, alignment_size=24, aligned_index=(2, 1))
        assert (a.ctypes.data + 2 * a.strides[0] + a.strides[1]) % 24 == 0
    with pytest.raises(ValueError, match="alignment"):
        gs.empty((7, 9), np.float64, alignment_size=12)


def test_cache_is_thread_safe():
    def work(n):
        for i in range(200):
            shape = (n + 1, i % 7 + 1)
            a = gs.full(shape, n, np.int64, backend="gt:cpu_kfirst")
            assert a.shape == shape and (a == n).all()

    assert not run_in_threads(work, [(n,) for n in range(4)])


@pytest.mark.skipif(not DEVICE_PRESETS or gs.get_device_backend() != "emulated",
                    reason="the emulated device only (a real GPU's memory is CuPy's)")
def test_device_backend_without_cuda_memory_says_why():
    with pytest.raises(RuntimeError, match="zeros: .*(emulated|CuPy)"):
        gs.zeros((3, 3), backend=DEVICE_PRESETS[0])


@pytest.mark.skipif(not DEVICE_PRESETS, reason="no device preset")
def test_device_backend_returns_what_cupy_makes_of_the_device_buffer(monkeypatch):
    # No CuPy and no CUDA here: a stand-in cupy module records the CUDA Array Interface it is
    # given, and the emulated device's memory is let through as if it were CUDA memory.
    from gtstorage import _handle

    fake = types.ModuleType("cupy")

    class FakeArray:
        def __init__(self, owner):
            self.owner = owner
            self.cai = owner.__cuda_array_interface__

    fake.asarray = FakeArray
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(_handle, "_cupy_module", None)
    monkeypatch.setattr(_handle, "_CAI_DEVICE_TYPES", _handle._CAI_DEVICE_TYPES + (12,))
    before = live()
    arr = gs.zeros((4, 5), np.float32, backend=DEVICE_PRESETS[0])
    p = gs.plan((4, 5), np.float32, backend=DEVICE_PRESETS[0])
    assert arr.cai["shape"] == (4, 5) and arr.cai["strides"] == p["strides"]
    assert arr.cai["typestr"] == "<f4" and arr.cai["version"] == 3 and arr.cai["data"][0]
    assert live()[0] == before[0] + 1
    del arr
    gc.collect()
    assert live()[0] == before[0]


@pytest.mark.skipif(not DEVICE_PRESETS, reason="no device preset")
def test_device_backend_without_cupy_says_so(monkeypatch):
    # CuPy absent (an import of it fails) and the emulated device's memory let through as if it
    # were CUDA memory: the drop-in says that CuPy is missing, names the function, and gives the
    # allocation back.
    from gtstorage import _gt4py, _handle

    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    monkeypatch.setattr(_handle, "_cupy_module", None)
    monkeypatch.setattr(_handle, "_CAI_DEVICE_TYPES", _handle._CAI_DEVICE_TYPES + (12,))
    backend = DEVICE_PRESETS[0]
    before = live()
    for name, call in [
        ("zeros", lambda: gs.zeros((3, 3), backend=backend)),
        ("empty", lambda: gs.empty((3,), np.float32, backend=backend)),
        ("ones", lambda: gs.ones((2, 2, 2), backend=backend, dimensions=("K", "J", "I"))),
        ("full", lambda: gs.full((3,), 1.5, backend=backend)),
        ("from_array", lambda: gs.from_array(np.ones((2, 3)), backend=backend)),
        ("zeros_like", lambda: gs.zeros_like(np.ones((2, 3)), backend=backend)),
    ]:
        with pytest.raises(RuntimeError) as info:
            call()
        assert str(info.value) == (
            f"{name}: this backend allocates device memory and returns a cupy.ndarray, but CuPy "
            "is not installed (pip install cupy-cuda13x, or cupy-cuda12x for a CUDA 12 build)"), \
            str(info.value)
    # HIP's memory (ROCm's DLPack type): the ROCm wheels.
    real_info = _gt4py._info  # (the drop-in's: it reads the handle's interface itself)

    def rocm_info(handle, side):
        info = real_info(handle, side)
        if side == gtstorage._capi.SIDE_DEVICE:
            info.device_type = gtstorage._capi.DL_ROCM
        return info

    monkeypatch.setattr(_gt4py, "_info", rocm_info)
    with pytest.raises(RuntimeError, match=r"ones: .*CuPy is not installed \(pip install the "
                                           r"cupy-rocm-\* wheel of your ROCm\)$"):
        gs.ones((2, 2), backend=backend)
    assert live() == before  # nothing kept


def test_code_written_for_gt4py_storage_runs():
    # The calls of GT4Py's own storage documentation, unchanged.
    backend = "gt:cpu_ifirst"
    field = gs.zeros((10, 10, 5), dtype=np.float64, backend=backend, aligned_index=(2, 2, 0))
    field[2:-2, 2:-2, :] = 1.0
    other = gs.from_array(field, backend=backend, aligned_index=(2, 2, 0))
    assert isinstance(other, np.ndarray) and other.sum() == field.sum() == 6 * 6 * 5
    k = gs.ones((5,), backend=backend, dimensions=["K"])
    assert k.shape == (5,)
    ij = gs.ones((10, 10), backend=backend, dimensions=("I", "J"))
    assert (ij + k.sum() == 6).all()


# ---- Defects a gt4py.next client run found (issue 25) -----------------------------------------


def test_validation_does_not_depend_on_call_history():
    # 1.0 == 1 == True as dict keys: the options cache once let a refused aligned_index in after
    # the int version had been called. GT4Py refuses 1.0 in an index every time.
    for _ in range(2):
        with pytest.raises(TypeError, match="aligned_index"):
            gs.zeros((3, 4, 5), backend="numpy", aligned_index=(1.0, 1, 1))
        a = gs.zeros((3, 4, 5), backend="numpy", aligned_index=(1, 1, 1))
        assert a.shape == (3, 4, 5)
    with pytest.raises(TypeError, match="alignment_size"):
        gs.zeros((3, 4), backend="numpy", alignment_size=64.0)
    assert gs.zeros((3, 4), backend="numpy", alignment_size=64).shape == (3, 4)
    with pytest.raises(TypeError, match="alignment_size"):
        gs.zeros((3, 4), backend="numpy", alignment_size=64.0)


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_kfirst"])
def test_non_native_byte_order_becomes_native_as_in_gt4py(backend):
    a = gs.zeros((2, 3), ">f8", backend=backend)
    assert a.dtype == np.float64 and a.dtype.isnative and not a.any()
    assert gs.empty((2, 3), np.dtype(">i4"), backend=backend).dtype == np.int32
    src = np.arange(6, dtype=">f8").reshape(2, 3)
    for dtype in (None, ">f8", "<f8"):
        b = gs.from_array(src, dtype, backend=backend)
        assert b.dtype == np.float64 and b.dtype.isnative
        assert np.array_equal(b, src)
    c = gs.from_array(src, ">f4", backend=backend)
    assert c.dtype == np.float32 and np.array_equal(c, src)
    assert gs.full((2,), 2.5, ">f8", backend=backend).dtype == np.float64
    assert gs.zeros_like(src, backend=backend).dtype == np.float64
    sub = gs.zeros((2, 3), np.dtype((">f8", (2,))), backend=backend)
    assert sub.shape == (2, 3, 2) and sub.dtype == np.float64


def test_mismatched_dimensions_use_gt4pys_wording():
    # GT4Py's test_shape matches "non-matching" (storage_tests/unit_tests/test_interface.py).
    with pytest.raises(ValueError, match="non-matching"):
        gs.zeros((10, 20), backend="numpy", dimensions=("J",))


def test_device_id_keyword():
    for fn, args in ((gs.empty, ()), (gs.zeros, ()), (gs.ones, ()), (gs.full, (1.5,))):
        a = fn((4, 5), *args, backend="gt:cpu_ifirst", device_id=0)
        assert type(a) is np.ndarray and a.shape == (4, 5)
        with pytest.raises(ValueError, match=r"device_id 1: backend 'gt:cpu_ifirst' allocates "
                                             r"host memory"):
            fn((4, 5), *args, backend="gt:cpu_ifirst", device_id=1)
    src = np.ones((4, 5))
    assert np.array_equal(gs.from_array(src, backend="numpy", device_id=0), src)
    assert gs.zeros_like(src, backend="numpy", device_id=0).shape == (4, 5)
    with pytest.raises(TypeError, match="device_id"):
        gs.zeros((4, 5), backend="numpy", device_id=0.0)
    with pytest.raises(ValueError, match="device_id"):
        gs.zeros((4, 5), backend="numpy", device_id=-1)
    assert gs._gt4py._plan((4, 5), backend="gt:gpu", device_id=1)["device"] == "gpu"
