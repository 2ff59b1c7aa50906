# Integration test with the real GT4Py (gt4py==1.2.3): gtstorage as a drop-in for gt4py.storage.
#
# 1. Layouts: for every layout GT4Py registers (gt4py.storage.layout_registry.REGISTRY), every
#    dims set (0-d, I, J, K, IJ, IK, JK, IJK, IJK + data dims, and for the drop-in every order
#    of them: GT4Py lays dims out by position), several aligned indices and dtypes,
#    gtstorage's drop-in allocators give the shape, strides, dtype and alignment of the aligned
#    element that gt4py.storage gives; GDP-3 storages with a halo give the strides of
#    gt4py.storage with aligned_index = lower halo, and __gt_origin__/__gt_dims__/domain_view
#    agree. GPU layouts are compared through gtstorage's allocation plan (no CuPy needed).
# 2. Stencils: real gtscript stencils (backends from GTSTORAGE_GT4PY_BACKENDS, default numpy,
#    debug and gt:cpu_kfirst) run on gtstorage fields and on gt4py.storage fields made from the
#    same data; the results must be bitwise equal (np.array_equal), halos included.
#
# Run it with tests/integration/gt4py/run.sh <build-dir>.
import importlib.util
import os

import numpy as np
import pytest

import gt4py.storage as gts
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, IJ, PARALLEL, K, Field, computation, interval
from gt4py.storage import layout_registry

import gtstorage as gs  # GT4Py's drop-in: plain NumPy arrays
import gtstorage.gdp3 as gdp3  # GDP-3 storages

plan = gdp3.plan

REGISTRY = layout_registry.REGISTRY
CPU_LAYOUTS = sorted(b for b, info in REGISTRY.items() if info["device"] == "cpu")
GPU_LAYOUTS = sorted(b for b, info in REGISTRY.items() if info["device"] == "gpu")
STENCIL_BACKENDS = [
    b.strip()
    for b in os.environ.get("GTSTORAGE_GT4PY_BACKENDS", "numpy,debug,gt:cpu_kfirst").split(",")
    if b.strip()
]

DIMS_SETS = [
    (), ("I",), ("J",), ("K",), ("I", "J"), ("I", "K"), ("J", "K"), ("I", "J", "K"),
    ("I", "J", "K", "0"), ("I", "J", "K", "0", "1"),
]


def _permuted_dims():
    """Every order of every I/J/K subset with up to two data dimensions (at most 4 labels)."""
    import itertools

    out = set()
    for n_cart in range(4):
        for cart in itertools.combinations("IJK", n_cart):
            for n_data in range(3):
                labels = cart + tuple(str(i) for i in range(n_data))
                if 0 < len(labels) <= 4:
                    out.update(itertools.permutations(labels))
    return sorted(out)


PERMUTED_DIMS = _permuted_dims()
EXTENT = {"I": 11, "J": 7, "K": 5}  # odd sizes: padding of the contiguous dim shows
DTYPES = [np.float64, np.float32, np.int32, np.int8]


def dims_id(dims):
    return "".join(dims) or "0d"


def shape_of(dims):
    return tuple(EXTENT.get(d, 3) for d in dims)


def aligned_indices(dims):
    """None (GT4Py's default: index 0) and a few interior points."""
    return [
        None,
        tuple(1 for _ in dims),
        tuple(3 if d == "I" else 2 if d == "J" else 1 if d == "K" else 0 for d in dims),
    ]


def alignment_bytes(backend, dtype):
    return REGISTRY[backend]["alignment"] * np.dtype(dtype).itemsize


def address_of(arr, index):
    """Address of element `index` of a NumPy array (or anything with __array_interface__)."""
    a = np.asarray(arr)
    return a.ctypes.data + sum(int(i) * s for i, s in zip(index, a.strides))


def host_array(x):
    """The NumPy view of a gtstorage/gt4py field."""
    return np.asarray(x)


def test_the_gtstorage_under_test():
    """run.sh's choice (GTSTORAGE_GT4PY_PACKAGE): the installed wheel, with its own library and
    C extension, or the source tree with the build directory's library."""
    import sys

    mode = os.environ.get("GTSTORAGE_GT4PY_PACKAGE")
    pkg = os.path.dirname(os.path.abspath(gs.__file__))
    if mode == "wheel":
        assert pkg.startswith(os.path.abspath(sys.prefix)), pkg
        assert os.path.dirname(os.path.abspath(gs.library_path)) == pkg, gs.library_path
        assert gs._capi.native is not None, getattr(gs._capi, "native_error", None)
    elif mode == "source":
        repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        assert pkg == os.path.join(repo, "bindings", "python", "gtstorage"), pkg
    else:
        pytest.skip("not run by tests/integration/gt4py/run.sh")


# ------------------------------------------------------------------------------------------------
# 1. layouts
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dims", DIMS_SETS, ids=dims_id)
@pytest.mark.parametrize("backend", CPU_LAYOUTS)
def test_dropin_layout_matches_gt4py(backend, dims):
    shape = shape_of(dims)
    for dtype in DTYPES:
        align = alignment_bytes(backend, dtype)
        for ai in aligned_indices(dims):
            kw = dict(backend=backend, aligned_index=ai, dimensions=dims)
            ref = gts.zeros(shape, dtype, **kw)
            got = gs.zeros(shape, dtype, **kw)
            assert type(got) is np.ndarray, f"gtstorage.zeros returned {type(got)}"
            arr = host_array(got)
            what = f"{backend} dims={dims} dtype={np.dtype(dtype)} aligned_index={ai}"
            assert arr.shape == ref.shape, what
            assert arr.dtype == ref.dtype, what
            assert arr.strides == ref.strides, what
            index = ai or (0,) * len(dims)
            assert address_of(ref, index) % align == 0, what  # gt4py's own guarantee
            assert address_of(arr, index) % align == 0, what
            assert not arr.any(), what

    # The other allocators, once per backend and dims set.
    dtype, ai = np.float64, aligned_indices(dims)[2]
    kw = dict(backend=backend, aligned_index=ai, dimensions=dims)
    data = np.random.default_rng(1).random(shape)
    for name, args in [
        ("empty", (shape, dtype)),
        ("ones", (shape, dtype)),
        ("full", (shape, 7.5, dtype)),
        ("from_array", (data,)),
    ]:
        ref = getattr(gts, name)(*args, **kw)
        got = getattr(gs, name)(*args, **kw)
        assert type(got) is np.ndarray, f"gtstorage.{name} returned {type(got)}"
        arr = host_array(got)
        assert (arr.shape, arr.dtype, arr.strides) == (ref.shape, ref.dtype, ref.strides), name
        assert address_of(arr, ai) % alignment_bytes(backend, dtype) == 0, name
        if name != "empty":
            assert np.array_equal(arr, ref), name


def test_dropin_from_array_default_dtype_is_float64():
    """GT4Py's from_array(data, dtype=np.float64, ...): float32 data become float64 unless a
    dtype is given (the drop-in must do the same)."""
    data = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    ref = gts.from_array(data, backend="numpy")
    assert ref.dtype == np.float64  # GT4Py's behaviour, checked so that a change shows here
    got = gs.from_array(data, backend="numpy")
    assert got.dtype == ref.dtype
    assert host_array(gs.from_array(data, np.float32, backend="numpy")).dtype == np.float32


@pytest.mark.parametrize("backend", CPU_LAYOUTS)
def test_dropin_subarray_dtype_matches_gt4py(backend):
    """dtype=(float, (3,)) adds a data dimension, as in GT4Py."""
    kw = dict(backend=backend, aligned_index=(2, 1, 0))
    ref = gts.zeros((6, 5, 4), (np.float64, (3,)), **kw)
    arr = host_array(gs.zeros((6, 5, 4), (np.float64, (3,)), **kw))
    assert (arr.shape, arr.dtype, arr.strides) == (ref.shape, ref.dtype, ref.strides)


@pytest.mark.parametrize("dims", DIMS_SETS, ids=dims_id)
@pytest.mark.parametrize("backend", GPU_LAYOUTS)
def test_gpu_layout_plan_matches_gt4py(backend, dims):
    """GPU layouts without a GPU: gtstorage's plan against GT4Py's own allocator run on host
    memory with the GPU layout map and alignment (the code gt4py.storage runs on CuPy memory)."""
    from gt4py._core import definitions as core_defs
    from gt4py.storage import allocators

    info = REGISTRY[backend]
    host_alloc = allocators.NDArrayBufferAllocator(
        device_type=core_defs.DeviceType.CPU, array_utils=allocators.numpy_array_utils
    )
    shape = shape_of(dims)
    for dtype in DTYPES:
        align = alignment_bytes(backend, dtype)
        for ai in aligned_indices(dims):
            ref = host_alloc.allocate(
                shape, core_defs.dtype(dtype), device_id=0,
                layout_map=info["layout_map"](dims), byte_alignment=align, aligned_index=ai,
            )
            p = plan(shape, dtype, backend=backend, aligned_index=ai, dimensions=dims)
            what = f"{backend} dims={dims} dtype={np.dtype(dtype)} aligned_index={ai}: {p}"
            assert tuple(p["shape"]) == tuple(shape), what
            assert tuple(p["strides"]) == tuple(ref.strides), what
            assert p["dtype"] == np.dtype(dtype), what
            assert p["device"] == "gpu", what
            assert p["alignment_bytes"] == align, what
            index = ai or (0,) * len(dims)
            offset = p["byte_offset"] + sum(i * s for i, s in zip(index, p["strides"]))
            assert offset % align == 0, what


def _halo_for(dims):
    """Per-dim (lower, upper) halo: 2/1 in I, 1/3 in J, none in K and data dims."""
    return tuple((2, 1) if d == "I" else (1, 3) if d == "J" else (0, 0) for d in dims)


@pytest.mark.parametrize("dims", DIMS_SETS, ids=dims_id)
@pytest.mark.parametrize("backend", CPU_LAYOUTS)
def test_gdp3_storage_layout_matches_gt4py(backend, dims):
    halo = _halo_for(dims)
    lower = tuple(lo for lo, _ in halo)
    shape = tuple(n + lo + up for n, (lo, up) in zip(shape_of(dims), halo))
    for dtype in (np.float64, np.float32):
        s = gdp3.zeros(shape, dtype, backend=backend, halo=halo, dims=dims)
        ref = gts.zeros(shape, dtype, backend=backend, aligned_index=lower, dimensions=dims)
        assert isinstance(s, gs.Storage)
        what = f"{backend} dims={dims} dtype={np.dtype(dtype)}"
        ai = s.__array_interface__
        assert tuple(ai["shape"]) == ref.shape, what
        arr = np.asarray(s)
        assert arr.strides == ref.strides, what
        assert arr.dtype == ref.dtype, what
        assert tuple(s.__gt_origin__) == lower, what
        assert tuple(s.__gt_dims__) == dims, what
        assert address_of(arr, lower) % alignment_bytes(backend, dtype) == 0, what
        dv = s.domain_view
        assert tuple(dv.shape) == shape_of(dims), what
        assert tuple(dv.__gt_origin__) == (0,) * len(dims), what
        assert tuple(dv.__gt_dims__) == dims, what
        assert np.asarray(dv).ctypes.data == address_of(arr, lower), what
        assert np.asarray(dv).strides == ref.strides, what


@pytest.mark.parametrize("backend", CPU_LAYOUTS)
def test_dropin_permuted_dims_like_gt4py(backend):
    """gt4py.storage applies a backend's layout by dimension position (its layout_maker takes
    the I, J, K that `dimensions` contains in I, J, K order, then the data dimensions), so
    dimensions=("K", "J", "I") is laid out as ("I", "J", "K"): the drop-in does the same (GDP-3
    storages lay dims out by name; see test_gdp3_kji_storage)."""
    for dims in PERMUTED_DIMS:
        shape = tuple(range(3, 3 + len(dims)))
        for dtype in (np.float64, np.int8):
            ai = tuple(1 for _ in dims)
            ref = gts.zeros(shape, dtype, backend=backend, dimensions=dims, aligned_index=ai)
            arr = host_array(gs.zeros(shape, dtype, backend=backend, dimensions=dims,
                                      aligned_index=ai))
            what = f"{backend} dimensions={dims} dtype={np.dtype(dtype)}"
            assert (arr.shape, arr.dtype, arr.strides) == (ref.shape, ref.dtype, ref.strides), what
            assert address_of(arr, ai) % alignment_bytes(backend, dtype) == 0, what
        data = np.random.default_rng(0).random(shape)
        ref = gts.from_array(data, backend=backend, dimensions=dims)
        arr = host_array(gs.from_array(data, backend=backend, dimensions=dims))
        assert arr.strides == ref.strides and np.array_equal(arr, ref), (backend, dims)
    # A sub-array dtype appends data dimensions after permuted ones.
    kw = dict(backend=backend, dimensions=("K", "I"), aligned_index=(1, 2))
    ref = gts.zeros((4, 5), (np.float64, (3,)), **kw)
    arr = host_array(gs.zeros((4, 5), (np.float64, (3,)), **kw))
    assert (arr.shape, arr.dtype, arr.strides) == (ref.shape, ref.dtype, ref.strides)


@pytest.mark.parametrize("backend", GPU_LAYOUTS)
def test_dropin_permuted_dims_gpu_plan_like_gt4py(backend):
    """The drop-in's plan for GPU backends with permuted dims against GT4Py's allocator run on
    host memory with the GPU layout map and alignment."""
    from gt4py._core import definitions as core_defs
    from gt4py.storage import allocators

    info = REGISTRY[backend]
    host_alloc = allocators.NDArrayBufferAllocator(
        device_type=core_defs.DeviceType.CPU, array_utils=allocators.numpy_array_utils
    )
    for dims in PERMUTED_DIMS:
        shape = tuple(range(3, 3 + len(dims)))
        ref = host_alloc.allocate(
            shape, core_defs.dtype(np.float64), device_id=0, layout_map=info["layout_map"](dims),
            byte_alignment=alignment_bytes(backend, np.float64), aligned_index=None,
        )
        p = gs._gt4py._plan(shape, np.float64, backend=backend, dimensions=dims)
        assert tuple(p["strides"]) == tuple(ref.strides), (backend, dims, p)


@pytest.mark.parametrize("backend", CPU_LAYOUTS)
def test_dropin_0d_like_gt4py(backend):
    """0-d fields (shape (), dimensions () or None), as gt4py.storage allocates them."""
    for dims in (None, ()):
        for name, args in [("empty", ((),)), ("zeros", ((),)), ("ones", ((),)),
                           ("full", ((), 2.5))]:
            ref = getattr(gts, name)(*args, backend=backend, dimensions=dims)
            got = getattr(gs, name)(*args, backend=backend, dimensions=dims)
            assert type(got) is type(ref) is np.ndarray, name
            assert (got.shape, got.dtype, got.strides) == (ref.shape, ref.dtype, ref.strides), name
            if name != "empty":
                assert np.array_equal(got, ref), name
        data = np.array(4.5)
        ref = gts.from_array(data, backend=backend, dimensions=dims)
        got = gs.from_array(data, backend=backend, dimensions=dims)
        assert (got.shape, got.dtype, got.strides) == (ref.shape, ref.dtype, ref.strides)
        assert got[()] == ref[()] == 4.5


# ------------------------------------------------------------------------------------------------
# 2. stencils
# ------------------------------------------------------------------------------------------------


def lap_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp[0, 0, 0]  # noqa: F841


def column_defn(
    a: Field[np.float64],
    b: Field[np.float32],
    surf: Field[IJ, np.float64],
    prof: Field[K, np.float64],
    out: Field[np.float64],
):
    with computation(FORWARD):
        with interval(0, 1):
            out = a + surf
        with interval(1, None):
            out = 0.5 * out[0, 0, -1] + b * prof + a[1, 0, 0]


def vec_defn(vec: Field[(np.float64, (3,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = vec[0, 0, 0][0] + 2.0 * vec[0, 0, 0][1] - 3.0 * vec[-1, 0, 0][2]  # noqa: F841


_DEFS = {"lap": lap_defn, "column": column_defn, "vec": vec_defn}
_STENCILS = {}


def stencil(name, backend):
    """The compiled stencil (GT4Py caches the build in $GT_CACHE_ROOT across runs)."""
    key = (name, backend)
    if key not in _STENCILS:
        _STENCILS[key] = gtscript.stencil(backend=backend, definition=_DEFS[name])
    return _STENCILS[key]


KINDS = ["dropin", "gdp3"]


def make(kind, data, backend, halo, dims):
    """A field holding `data` (halo included in its shape): a gt4py.storage array ("gt4py"),
    gtstorage's drop-in ("dropin", aligned at the lower halo as a GT4Py user would ask) or a
    GDP-3 storage with that halo ("gdp3", whose __gt_origin__ is the lower halo)."""
    lower = tuple(lo for lo, _ in halo)
    if kind == "gt4py":
        return gts.from_array(
            data, data.dtype, backend=backend, aligned_index=lower, dimensions=dims
        )
    if kind == "dropin":
        return gs.from_array(data, data.dtype, backend=backend, aligned_index=lower, dimensions=dims)
    s = gdp3.from_array(data, backend=backend, halo=halo, dims=dims)
    assert tuple(s.__gt_origin__) == lower
    assert tuple(s.__gt_dims__) == tuple(dims)
    return s


def assert_bitwise_equal(got, ref, what=""):
    g, r = host_array(got), host_array(ref)
    assert g.shape == r.shape and g.dtype == r.dtype, what
    assert np.array_equal(g, r), f"{what}: max |diff| {np.nanmax(np.abs(g - r))}"
    assert g.tobytes() == r.tobytes(), what  # bitwise, -0.0 and NaN payloads included


IJK = ("I", "J", "K")


def _lap_ref(x):
    return x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2] - 4.0 * x[1:-1, 1:-1]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_lap_explicit_origin_and_domain(backend, kind):
    rng = np.random.default_rng(2)
    halo = ((2, 2), (2, 2), (0, 0))
    data, out0 = rng.random((14, 11, 6)), rng.random((14, 11, 6))
    st = stencil("lap", backend)
    for origin, domain in [
        ((2, 2, 0), (10, 7, 6)),  # the whole interior
        ({"inp": (3, 2, 1), "out": (2, 3, 0)}, (6, 5, 4)),  # per-field origins, a sub-domain
    ]:
        ref_in, ref_out = make("gt4py", data, backend, halo, IJK), make("gt4py", out0, backend, halo, IJK)
        f_in, f_out = make(kind, data, backend, halo, IJK), make(kind, out0, backend, halo, IJK)
        st(ref_in, ref_out, origin=origin, domain=domain)
        st(f_in, f_out, origin=origin, domain=domain)
        assert_bitwise_equal(f_out, ref_out, f"{backend} {kind} origin={origin}")
        assert_bitwise_equal(f_in, ref_in, "input unchanged")
    # The first run computed the Laplacian of the interior (the stencil really ran).
    ref_in, ref_out = make("gt4py", data, backend, halo, IJK), make("gt4py", out0, backend, halo, IJK)
    f_in, f_out = make(kind, data, backend, halo, IJK), make(kind, out0, backend, halo, IJK)
    st(f_in, f_out, origin=(2, 2, 0), domain=(10, 7, 6))
    np.testing.assert_allclose(host_array(f_out)[2:-2, 2:-2], _lap_ref(data[1:-1, 1:-1]), rtol=1e-12)
    assert np.array_equal(host_array(f_out)[:2], out0[:2])  # halo untouched


@pytest.mark.parametrize(
    "halo", [((1, 1), (1, 1), (0, 0)), ((2, 1), (1, 3), (0, 0))], ids=["symmetric", "asymmetric"]
)
@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_gdp3_halo_is_default_origin(backend, halo):
    """No origin/domain given: GT4Py takes the origin from __gt_origin__ (the lower halo) and
    the domain from the shapes, as it does for gt4py.storage arrays given that origin."""
    rng = np.random.default_rng(3)
    shape = (12, 13, 5)
    data, out0 = rng.random(shape), rng.random(shape)
    lower = tuple(lo for lo, _ in halo)
    st = stencil("lap", backend)
    ref_in, ref_out = make("gt4py", data, backend, halo, IJK), make("gt4py", out0, backend, halo, IJK)
    st(ref_in, ref_out, origin=lower)
    f_in, f_out = make("gdp3", data, backend, halo, IJK), make("gdp3", out0, backend, halo, IJK)
    st(f_in, f_out)
    assert_bitwise_equal(f_out, ref_out, f"{backend} halo={halo}")
    # The domain GT4Py chose starts at the lower halo: the points before it are untouched.
    o = host_array(f_out)
    assert np.array_equal(o[: lower[0]], out0[: lower[0]])
    assert np.array_equal(o[:, : lower[1]], out0[:, : lower[1]])
    assert not np.array_equal(o[lower[0], lower[1]], out0[lower[0], lower[1]])


@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_domain_view_as_output(backend):
    """A GDP-3 domain_view (no halo, __gt_origin__ = 0) as the output field."""
    rng = np.random.default_rng(4)
    halo = ((1, 1), (1, 1), (0, 0))
    data, out0 = rng.random((10, 9, 4)), rng.random((10, 9, 4))
    st = stencil("lap", backend)
    ref_in, ref_out = make("gt4py", data, backend, halo, IJK), make("gt4py", out0, backend, halo, IJK)
    st(ref_in, ref_out, origin=(1, 1, 0))
    f_in, f_out = make("gdp3", data, backend, halo, IJK), make("gdp3", out0, backend, halo, IJK)
    view = f_out.domain_view
    assert tuple(view.__gt_origin__) == (0, 0, 0) and tuple(view.shape) == (8, 7, 4)
    st(f_in, view)
    assert_bitwise_equal(f_out, ref_out, backend)
    assert_bitwise_equal(view, host_array(ref_out)[1:-1, 1:-1], backend)


@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_gdp3_kji_storage(backend):
    """GDP-3 storages with dims ("K", "J", "I"): GT4Py transposes them to I, J, K by their
    __gt_dims__, and gtstorage's by-name layout makes the transposed array the backend's optimal
    layout (pytest.ini turns GT4Py's "layout is not recommended" warning into an error). GT4Py
    1.2.3 does not transpose __gt_origin__ with the array, so the origin is given (in I, J, K)."""
    rng = np.random.default_rng(7)
    data, out0 = rng.random((10, 9, 4)), rng.random((10, 9, 4))
    halo_ijk = ((1, 1), (1, 1), (0, 0))
    st = stencil("lap", backend)
    ref_in, ref_out = make("gt4py", data, backend, halo_ijk, IJK), make("gt4py", out0, backend, halo_ijk, IJK)
    st(ref_in, ref_out, origin=(1, 1, 0))
    halo_kji = halo_ijk[::-1]
    f_in = make("gdp3", data.transpose(2, 1, 0), backend, halo_kji, ("K", "J", "I"))
    f_out = make("gdp3", out0.transpose(2, 1, 0), backend, halo_kji, ("K", "J", "I"))
    st(f_in, f_out, origin=(1, 1, 0))
    assert_bitwise_equal(host_array(f_out).transpose(2, 1, 0), ref_out, backend)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_mixed_dtypes_ij_and_k_fields(backend, kind):
    """float64 and float32 3-d fields, an IJ field (Field[IJ, ...]) and a K field
    (Field[K, ...], dims ("K",)) in a FORWARD computation."""
    rng = np.random.default_rng(5)
    nx, ny, nz = 9, 8, 6
    h3, h2, hk = ((1, 2), (1, 1), (0, 0)), ((1, 2), (1, 1)), ((0, 0),)
    shape3 = (nx + 3, ny + 2, nz)
    a, b = rng.random(shape3), rng.random(shape3).astype(np.float32)
    surf, prof, out0 = rng.random((nx + 3, ny + 2)), rng.random(nz), rng.random(shape3)

    def fields(k):
        return (
            make(k, a, backend, h3, IJK),
            make(k, b, backend, h3, IJK),
            make(k, surf, backend, h2, ("I", "J")),
            make(k, prof, backend, hk, ("K",)),
            make(k, out0, backend, h3, IJK),
        )

    st = stencil("column", backend)
    ref, got = fields("gt4py"), fields(kind)
    origin = {"_all_": (1, 1, 0), "surf": (1, 1), "prof": (0,)}
    if kind == "gdp3":
        # Origins from each field's __gt_origin__; GT4Py infers the domain from the shapes
        # (it does not know upper halos: I ends where `a[1, 0, 0]` reaches the last point).
        st(*ref, origin=origin)
        st(*got)
    else:
        st(*ref, origin=origin, domain=(nx, ny, nz))
        st(*got, origin=origin, domain=(nx, ny, nz))
    assert host_array(got[1]).dtype == np.float32
    assert_bitwise_equal(got[4], ref[4], f"{backend} {kind}")
    assert not np.array_equal(host_array(got[4]), out0)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", STENCIL_BACKENDS)
def test_data_dims_field(backend, kind):
    """A field with a data dimension (Field[(float, (3,))], dims I, J, K, "0")."""
    rng = np.random.default_rng(6)
    dims4 = ("I", "J", "K", "0")
    halo4, halo3 = ((1, 0), (0, 0), (0, 0), (0, 0)), ((1, 0), (0, 0), (0, 0))
    vec, out0 = rng.random((8, 6, 5, 3)), rng.random((8, 6, 5))
    st = stencil("vec", backend)
    r_vec, r_out = make("gt4py", vec, backend, halo4, dims4), make("gt4py", out0, backend, halo3, IJK)
    st(r_vec, r_out, origin=(1, 0, 0), domain=(7, 6, 5))
    f_vec, f_out = make(kind, vec, backend, halo4, dims4), make(kind, out0, backend, halo3, IJK)
    assert host_array(f_vec).strides == host_array(r_vec).strides
    if kind == "gdp3":
        st(f_vec, f_out)
    else:
        st(f_vec, f_out, origin=(1, 0, 0), domain=(7, 6, 5))
    assert_bitwise_equal(f_out, r_out, f"{backend} {kind}")
    expect = vec[1:, :, :, 0] + 2.0 * vec[1:, :, :, 1] - 3.0 * vec[:-1, :, :, 2]
    np.testing.assert_allclose(host_array(f_out)[1:], expect, rtol=1e-12)


def test_stencil_backends_are_gt4py_backends():
    """A typo in GTSTORAGE_GT4PY_BACKENDS must not pass as an empty run."""
    from gt4py.cartesian import backend as gt_backend

    assert STENCIL_BACKENDS, "GTSTORAGE_GT4PY_BACKENDS names no backend"
    for b in STENCIL_BACKENDS:
        assert b in gt_backend.REGISTRY, f"{b} is not a GT4Py backend ({sorted(gt_backend.REGISTRY)})"
    if any(b.startswith("dace") for b in STENCIL_BACKENDS):
        assert importlib.util.find_spec("dace") is not None


def test_gdp3_storage_buffer_protocol_on_python_312():
    # PEP 688: on Python >= 3.12 a GDP-3 storage is a buffer exporter (this venv is 3.12), and
    # NumPy takes that route before __array_interface__: zero-copy, writable, right strides.
    s = gdp3.zeros((4, 5, 6), np.float32, backend="gt:cpu_kfirst", halo=(1, 1, 0))
    mv = memoryview(s)
    assert mv.shape == (4, 5, 6) and mv.strides == s.strides and mv.format == "f"
    assert not mv.readonly
    a = np.asarray(s)
    a[1, 2, 3] = 7.0
    assert float(s[1, 2, 3]) == 7.0 and np.shares_memory(a, s.to_numpy())
    r = gdp3.as_storage(np.arange(4.0), readonly=True)
    assert memoryview(r).readonly
