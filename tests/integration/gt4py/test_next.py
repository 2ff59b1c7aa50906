# gtstorage.next with the real gt4py.next (1.2.3): the allocator against gt4py.next's default
# allocator (a randomized sweep of layouts), programs on embedded execution and gtfn_cpu over
# gtstorage fields compared with NumPy, the zero-copy wrap, and what users rely on around them
# (hashing, device ids, error texts, the allocation record, backends with gtstorage's allocator).
#
# Time budget: the gtfn_cpu test compiles one program (about a minute on 2 cores, once per run:
# GT4Py's build cache lives in the step's work directory); everything else takes seconds.
import dataclasses
import gc
import random

import numpy as np
import pytest

import gt4py._core.definitions as core_defs
import gt4py.next as gtx
from gt4py.next import common
from gt4py.next import custom_layout_allocators as next_allocators

import gtstorage
import gtstorage.next as gn

I = gtx.Dimension("I")
J = gtx.Dimension("J")
K = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
Cell = gtx.Dimension("Cell")
Edge = gtx.Dimension("Edge")
KHalf = gtx.Dimension("KHalf", kind=gtx.DimensionKind.VERTICAL)
C2E = gtx.Dimension("C2E", kind=gtx.DimensionKind.LOCAL)
V2C = gtx.Dimension("V2C", kind=gtx.DimensionKind.LOCAL)

DEFAULT = next_allocators.StandardCPUFieldBufferAllocator()
F64 = core_defs.dtype(np.float64)


def _aligned_address(tb):
    """Address of the element at the TensorBuffer's aligned index."""
    data = tb.ndarray.__array_interface__["data"][0]
    return data + sum(i * s for i, s in zip(tb.aligned_index, tb.strides))


# ---- the allocator against gt4py.next's ---------------------------------------------------------


def _random_case(rng):
    pool = [Cell, Edge, I, J, K, KHalf, C2E, V2C]
    dims = rng.sample(pool, rng.randint(1, 4))
    ranges = []
    for _ in dims:
        start = rng.choice([0, 0, rng.randint(-20, 20)])
        ranges.append((start, start + rng.randint(1, 40)))
    domain = common.domain(dict(zip(dims, ranges)))
    dtype = core_defs.dtype(rng.choice([np.float64, np.float32, np.int32, np.int64, np.int8,
                                        np.bool_, np.float16, np.uint16]))
    alignment = rng.choice([None, None, 1, 2, 8, 16, 32, 64, 128, 256, 3, 24])
    aligned = None
    if rng.random() < 0.6:
        aligned = [common.NamedIndex(d, rng.randrange(lo, hi))
                   for d, (lo, hi) in zip(dims, ranges) if rng.random() < 0.7]
        if rng.random() < 0.2:  # a dimension the domain does not have is ignored
            aligned.append(common.NamedIndex(gtx.Dimension("Other"), 3))
    return domain, dtype, alignment, aligned


def _theirs(alignment):
    if alignment is None:
        return DEFAULT
    return next_allocators.BaseFieldBufferAllocator(
        device_type=core_defs.DeviceType.CPU, array_utils=DEFAULT.array_utils,
        layout_mapper=next_allocators.horizontal_first_layout_mapper, byte_alignment=alignment)


def test_layouts_equal_gt4py_next_default_allocator_randomized():
    rng = random.Random(20261128)
    compared = refused = 0
    for case in range(400):
        domain, dtype, alignment, aligned = _random_case(rng)
        ours = gn.allocator(alignment=alignment)
        try:
            want = _theirs(alignment).__gt_allocate__(domain, dtype, aligned_index=aligned)
        except ValueError as e:  # an alignment the item size does not divide (or vice versa)
            with pytest.raises(ValueError):
                ours.__gt_allocate__(domain, dtype, aligned_index=aligned)
            refused += 1
            continue
        got = ours.__gt_allocate__(domain, dtype, aligned_index=aligned)
        where = f"case {case}: {domain}, {dtype}, alignment {alignment}, aligned {aligned}"
        assert got.shape == want.shape, where
        assert got.strides == want.strides, where
        assert tuple(got.layout_map) == tuple(want.layout_map), where
        assert got.aligned_index == want.aligned_index, where
        assert got.byte_alignment == want.byte_alignment, where
        assert got.dtype == want.dtype and got.device == want.device, where
        assert got.ndarray.shape == want.ndarray.shape, where
        assert got.ndarray.strides == want.ndarray.strides, where
        assert got.ndarray.dtype == want.ndarray.dtype, where
        assert _aligned_address(got) % got.byte_alignment == 0, where
        # The TensorBuffer describes the library's allocation.
        record = gtstorage.allocation(got.ndarray)
        assert got.buffer == record and got.memory_address == record.address, where
        assert got.memory_address + got.byte_offset == \
            got.ndarray.__array_interface__["data"][0], where
        compared += 1
    assert compared > 300 and refused > 0


def test_vendored_alignment_rules_hold_with_shifted_domains():
    domain = common.domain({Cell: (100, 137), K: (5, 12)})
    tb = gn.allocator().__gt_allocate__(domain, F64,
                                        aligned_index=[common.NamedIndex(Cell, 103)])
    assert tb.aligned_index == (3, 0)
    assert _aligned_address(tb) % 64 == 0
    with pytest.raises(ValueError, match="outside the domain range"):
        gn.allocator().__gt_allocate__(domain, F64, aligned_index=[common.NamedIndex(K, 12)])


# ---- what gt4py.next's API does with it ---------------------------------------------------------


def test_constructors_with_the_allocator():
    a = gn.allocator()
    domain = {I: (0, 10), J: (-2, 8), K: (0, 5)}
    z = gtx.zeros(domain, allocator=a)
    assert isinstance(z.ndarray, np.ndarray) and not z.ndarray.any()
    assert gtstorage.allocation(z.ndarray).size > 0
    assert (gtx.ones(domain, allocator=a).ndarray == 1).all()
    assert (gtx.full(domain, 2.5, allocator=a).ndarray == 2.5).all()
    src = np.arange(500.0).reshape(10, 10, 5)
    f = gtx.as_field(domain, src, allocator=a)
    assert np.array_equal(f.ndarray, src) and not np.shares_memory(f.ndarray, src)
    e = gtx.empty(domain, dtype=np.int32, allocator=a)
    assert e.ndarray.dtype == np.int32 and e.domain == common.domain(domain)


def test_allocator_is_hashable_and_compared_by_value():
    a, b = gn.allocator(), gn.allocator()
    assert a == b and hash(a) == hash(b) and a is not b
    assert gn.allocator(alignment=128) != a
    assert {a: 1}[b] == 1
    assert a.__gt_device_type__ is core_defs.DeviceType.CPU
    assert next_allocators.is_field_allocator_for(a, core_defs.DeviceType.CPU)
    assert "alignment=64" in repr(a)
    import pickle

    assert pickle.loads(pickle.dumps(a)) == a


def test_device_ids_and_device_kinds():
    with pytest.raises(ValueError, match="Unsupported device ID 1 for CPU memory allocation"):
        gn.allocator(device_id=1)
    with pytest.raises(ValueError, match="Unsupported device ID 2"):
        gn.allocator().__gt_allocate__(common.domain({I: 4}), F64, device_id=2)
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda' or 'rocm'"):
        gn.allocator("gpu")
    # gt4py.next refuses an allocator for another device type, as for its own allocators.
    with pytest.raises(ValueError, match="device type"):
        gtx.zeros({I: 4}, allocator=gn.allocator(),
                  device=core_defs.Device(core_defs.DeviceType.CUDA, 0))
    gpu = gn.allocator("cuda", device_id=1)
    assert gpu.__gt_device_type__ is core_defs.DeviceType.CUDA
    with pytest.raises(ValueError, match="device_id 2 was asked of an allocator for cuda device 1"):
        gpu.__gt_allocate__(common.domain({I: 4}), F64, device_id=2)
    if core_defs.CUPY_DEVICE_TYPE is None:  # no CuPy here: the device kinds say so
        with pytest.raises(RuntimeError, match="CuPy|cupy|emulated|device"):
            gpu.__gt_allocate__(common.domain({I: 4}), F64)


def test_tensor_dtypes_are_refused():
    with pytest.raises(TypeError, match="tensor dtypes"):
        gn.allocator().__gt_allocate__(common.domain({I: 4}),
                                       core_defs.Float64DType((3,)))


def test_as_backend_allocator():
    backend = dataclasses.replace(gtx.itir_python if hasattr(gtx, "itir_python") else
                                  gtx.gtfn_cpu, allocator=gn.allocator())
    f = gtx.zeros({I: 6, J: 7}, allocator=backend)
    assert gtstorage.allocation(f.ndarray).size >= 6 * 7 * 8


# ---- programs over gtstorage fields -------------------------------------------------------------


@gtx.field_operator
def _blend(a: gtx.Field[gtx.Dims[I, J, K], gtx.float64],
           b: gtx.Field[gtx.Dims[I, J, K], gtx.float64],
           alpha: gtx.float64) -> gtx.Field[gtx.Dims[I, J, K], gtx.float64]:
    return a(I + 1) - a + alpha * b


def _program(backend):
    @gtx.program(backend=backend)
    def blend(a: gtx.Field[gtx.Dims[I, J, K], gtx.float64],
              b: gtx.Field[gtx.Dims[I, J, K], gtx.float64], alpha: gtx.float64,
              out: gtx.Field[gtx.Dims[I, J, K], gtx.float64], n: gtx.int32):
        _blend(a, b, alpha, out=out, domain={I: (0, n), J: (0, 9), K: (0, 7)})

    return blend


def _run_blend(backend, allocator):
    rng = np.random.default_rng(7)
    a_np = rng.random((12, 9, 7))
    b_np = rng.random((12, 9, 7))
    domain = {I: 12, J: 9, K: 7}
    a = gtx.as_field(domain, a_np, allocator=allocator)
    b = gtx.as_field(domain, b_np, allocator=allocator)
    out = gtx.zeros(domain, allocator=allocator)
    for f in (a, b, out):
        assert gtstorage.allocation(f.ndarray).size > 0  # library memory
    _program(backend)(a, b, 0.5, out, np.int32(11), offset_provider={})
    want = np.zeros((12, 9, 7))
    want[:11] = a_np[1:] - a_np[:11] + 0.5 * b_np[:11]
    return out.ndarray, want


def test_program_embedded_equals_numpy():
    got, want = _run_blend(None, gn.allocator())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_program_gtfn_cpu_equals_numpy():
    backend = dataclasses.replace(gtx.gtfn_cpu, allocator=gn.allocator())
    got, want = _run_blend(gtx.gtfn_cpu, backend)  # fields allocated through the backend
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


# ---- wrap: fields over existing memory ----------------------------------------------------------


@pytest.mark.parametrize("make", ["numpy", "fortran", "dropin", "storage"])
def test_wrap_is_zero_copy_and_a_program_writes_into_it(make):
    shape = (12, 9, 7)
    if make == "numpy":
        mem = np.zeros(shape)
    elif make == "fortran":
        mem = np.zeros(shape, order="F")
    elif make == "dropin":
        mem = gtstorage.zeros(shape, backend="gt:cpu_kfirst")
    else:
        mem = gtstorage.gdp3.zeros(shape, dims="IJK")
    out = gtx.empty({I: 12, J: 9, K: 7}, dtype=np.float64, allocator=gn.wrap(mem))
    target = np.asarray(mem)
    assert np.shares_memory(out.ndarray, target)
    assert out.ndarray.__array_interface__["data"][0] == target.__array_interface__["data"][0]
    rng = np.random.default_rng(3)
    a_np, b_np = rng.random(shape), rng.random(shape)
    a = gtx.as_field({I: 12, J: 9, K: 7}, a_np)
    b = gtx.as_field({I: 12, J: 9, K: 7}, b_np)
    _program(None)(a, b, 2.0, out, np.int32(11), offset_provider={})
    want = a_np[1:] - a_np[:11] + 2.0 * b_np[:11]
    np.testing.assert_allclose(target[:11], want, rtol=0, atol=1e-15)  # the caller's memory
    assert not target[11].any()


def test_wrap_checks_and_is_used_once():
    mem = np.zeros((4, 5))
    w = gn.wrap(mem)
    with pytest.raises(ValueError, match=r"domain's shape \(5, 4\) is not the wrapped array's"):
        gtx.empty({I: 5, J: 4}, allocator=w)
    with pytest.raises(ValueError, match="wrap never converts"):
        gtx.empty({I: 4, J: 5}, dtype=np.float32, allocator=w)
    f = gtx.empty({I: (10, 14), J: 5}, allocator=w)
    assert f.ndarray is mem and f.domain.ranges[0] == common.UnitRange(10, 14)
    with pytest.raises(RuntimeError, match="already handed out"):
        gtx.empty({I: 4, J: 5}, allocator=w)
    with pytest.raises(TypeError, match="NumPy or CuPy array"):
        gn.wrap([1.0, 2.0])
    # A spent wrap does not keep the memory alive (gt4py.next caches allocators).
    import weakref

    mem2 = gtstorage.zeros((3, 3), backend="numpy")
    ref = weakref.ref(mem2.base)
    w2 = gn.wrap(mem2)
    f2 = gtx.empty({I: 3, J: 3}, allocator=w2)
    del mem2, f2
    gc.collect()
    assert ref() is None and "used" in repr(w2)


def test_wrap_buffer_describes_the_memory():
    mem = gtstorage.zeros((6, 5), backend="numpy")
    tb = gn.wrap(mem).__gt_allocate__(common.domain({I: 6, J: 5}), F64)
    record = gtstorage.allocation(mem)
    assert tb.buffer == record and tb.memory_address == record.address
    assert tb.byte_offset == record.byte_offset and tb.ndarray is mem
    plain = np.zeros((6, 5))[::-1]  # negative strides: the buffer starts at the last row
    tb2 = gn.wrap(plain).__gt_allocate__(common.domain({I: 6, J: 5}), F64)
    data = plain.__array_interface__["data"][0]
    assert tb2.memory_address == data - 5 * 40 and tb2.byte_offset == 5 * 40
    assert tb2.byte_alignment >= 8 and _aligned_address(tb2) % tb2.byte_alignment == 0
