# Real CUDA on both sides: CuPy and PyTorch consuming and producing device memory of the CUDA
# backend, without copies, with the values and the stream order right. tools/gpu-check.sh runs
# this file on a GPU (GTSTORAGE_DEVICE_BACKEND=cuda); elsewhere it is skipped, since emulated
# device memory is host memory that CuPy and PyTorch must refuse (test_device.py checks that).
import gc

import numpy as np
import pytest

import gtstorage
import gtstorage.gdp3 as gs
from conftest import live

pytestmark = pytest.mark.skipif(gs.get_device_backend() != "cuda",
                                reason="needs the CUDA backend on a GPU")

SHAPE = (5, 6, 7)
BIG = (256, 256, 64)  # 32 MiB of float64: kernels long enough for a missing wait to show


def ref(shape=SHAPE):
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape)


def cupy():
    return pytest.importorskip("cupy")


def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def device_address(s):
    return s.__cuda_array_interface__["data"][0]


def test_dropin_returns_cupy_arrays_over_library_memory():
    cp = cupy()
    base = live()
    a = gtstorage.zeros(SHAPE, np.float64, backend="gt:gpu", aligned_index=(1, 1, 0))
    assert type(a) is cp.ndarray
    plan = gtstorage.plan(SHAPE, np.float64, backend="gt:gpu", aligned_index=(1, 1, 0))
    assert a.strides == tuple(plan["strides"])
    assert live()[0] == base[0] + 1  # the library's storage is behind the CuPy array
    assert float(a.sum()) == 0.0
    a[...] = cp.asarray(ref())
    np.testing.assert_array_equal(cp.asnumpy(a), ref())
    o = gtstorage.ones(SHAPE, np.float32, backend="gt:gpu")
    assert o.dtype == np.float32 and bool((o == 1).all())
    f = gtstorage.from_array(ref(), backend="gt:gpu")
    np.testing.assert_array_equal(cp.asnumpy(f), ref())
    del a, o, f
    gc.collect()
    assert live() == base


def test_cupy_works_in_gdp3_device_memory():
    cp = cupy()
    s = gs.from_array(ref(), backend="gt:gpu")
    c = cp.asarray(s)
    assert c.data.ptr == device_address(s) and c.strides == s.strides
    c *= 2  # a CuPy kernel writes the storage's memory
    np.testing.assert_array_equal(np.asarray(s), 2 * ref())


def test_cupy_sees_host_writes_of_a_mirrored_storage_and_the_host_sees_its_writes():
    cp = cupy()
    m = gs.zeros(SHAPE, device="gpu")
    m[...] = ref()  # written on the host
    c = cp.asarray(m)  # the CAI export uploads first, and the device may be written after
    np.testing.assert_array_equal(cp.asnumpy(c), ref())
    c += 1
    np.testing.assert_array_equal(m.to_numpy(), ref() + 1)  # the host read downloads first


def test_torch_from_dlpack_shares_device_memory():
    torch = torch_cuda()
    s = gs.from_array(ref(), backend="gt:gpu")
    t = torch.from_dlpack(s)
    assert t.device.type == "cuda" and t.data_ptr() == device_address(s)
    assert tuple(t.stride()) == tuple(b // 8 for b in s.strides)
    t.mul_(3)
    np.testing.assert_array_equal(np.asarray(s), 3 * ref())


def test_torch_on_its_own_stream_waits_for_the_library():
    # DLPack: the consumer passes its stream, and the producer orders its pending work before it.
    torch = torch_cuda()
    s = gs.empty(BIG, backend="gt:gpu")
    s[...] = 4.0  # a fill queued on the library's stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_dlpack(s)
        total = float(t.sum())
    assert total == 4.0 * np.prod(BIG)


def test_as_storage_wraps_cupy_and_torch_memory():
    cp = cupy()
    x = cp.arange(24, dtype=cp.float32).reshape(4, 6)
    w = gs.as_storage(device_data=x)  # CUDA Array Interface
    assert isinstance(w, gs.GPUStorage) and device_address(w) == x.data.ptr
    np.testing.assert_array_equal(np.asarray(w), np.arange(24, dtype=np.float32).reshape(4, 6))
    w[1] = 7.0  # a library fill, seen by CuPy
    assert float(x[1].sum()) == 42.0
    torch = torch_cuda()
    t = torch.arange(12.0, device="cuda").reshape(3, 4)
    v = gs.as_storage(t)  # DLPack
    assert device_address(v) == t.data_ptr()
    np.testing.assert_array_equal(np.asarray(v), np.arange(12.0).reshape(3, 4))


def test_as_storage_waits_for_the_producers_stream():
    # CAI v3: the consumer waits for the stream the interface names before using the memory.
    cp = cupy()
    with cp.cuda.Stream(non_blocking=True):
        x = cp.zeros(BIG)
        for _ in range(20):
            x += 0.5  # queued on the non-blocking stream
        w = gs.as_storage(device_data=x)
    out = np.asarray(w)  # a copy on the library's stream
    assert (out == 10.0).all()


def test_allocation_and_as_storage_of_a_cupy_dropin_array():
    cp = cupy()
    a = gtstorage.zeros(SHAPE, np.float64, backend="gt:gpu", device_id=0)
    r = gtstorage.allocation(a)
    assert r.device == (2, 0) and not r.is_host
    assert r.address + r.byte_offset == a.data.ptr
    assert r.size == gtstorage.plan(SHAPE, np.float64, backend="gt:gpu")["allocation_bytes"]
    raw = cp.asarray(r)  # the allocation's bytes, as gt4py.next's TensorBuffer.buffer
    assert raw.dtype == cp.uint8 and raw.data.ptr == r.address
    before = gtstorage.get_stats()["live_buffers"]
    s = gtstorage.as_storage(a)
    assert gtstorage.get_stats()["live_buffers"] == before  # the same storage, no wrap
    assert device_address(s) == a.data.ptr


def test_gt4py_next_allocator_on_cuda_when_gt4py_is_there():
    cp = cupy()
    gtx = pytest.importorskip("gt4py.next")
    import gtstorage.next as gn

    I, K = gtx.Dimension("I"), gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
    f = gtx.zeros({I: 10, K: 7}, allocator=gn.allocator("cuda"))
    assert isinstance(f.ndarray, cp.ndarray) and float(f.ndarray.sum()) == 0.0
    assert gtstorage.allocation(f.ndarray).device == (2, 0)
    w = cp.ones((10, 7))
    g = gtx.empty({I: 10, K: 7}, allocator=gn.wrap(w))
    assert g.ndarray is w
