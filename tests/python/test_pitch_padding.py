"""pitch_padding="avoid_aliasing" from Python: the drop-in allocators and the GDP-3 ones give the
library's padded strides (never a cached unpadded entry), hold and round-trip values, share
memory with NumPy, *_like keeps the padding of a padded Storage, and bad values are refused."""
import numpy as np
import pytest

import gtstorage
import gtstorage.gdp3 as gs

PAD = "avoid_aliasing"


def test_dropin_strides_of_the_bench_field():
    # GT4Py's strides first, then the padded ones for the same call: the allocator's cache must
    # not hand out the first entry for the second call.
    plain = gtstorage.zeros((512, 512, 128), backend="gt:cpu_kfirst")
    padded = gtstorage.zeros((512, 512, 128), backend="gt:cpu_kfirst", pitch_padding=PAD)
    again = gtstorage.zeros((512, 512, 128), backend="gt:cpu_kfirst")
    assert plain.strides == again.strides == (524288, 1024, 8)
    assert padded.strides == (524352, 1024, 8)
    assert type(padded) is np.ndarray and not padded.any()
    f = gtstorage.empty((512, 512, 128), backend="gt:cpu_ifirst", pitch_padding=PAD)
    assert f.strides == (8, 4160, 2129984)
    assert gtstorage.zeros((512, 512, 128), backend="gt:cpu_kfirst",
                           pitch_padding="none").strides == plain.strides


@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_kfirst", "gt:cpu_ifirst"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_values_round_trip_and_memory_is_shared(backend, dtype):
    src = np.arange(24 * 200 * 6).reshape(24, 200, 6).astype(dtype)
    a = gtstorage.from_array(src, dtype, backend=backend, pitch_padding=PAD)
    np.testing.assert_array_equal(a, src)
    plan = gtstorage.gdp3.plan(src.shape, dtype, backend=backend, pitch_padding=PAD)
    assert a.strides == plan["strides"]
    # Every stride of 4 KiB or more is off 4 KiB multiples; the contiguous one is the item size.
    assert all(s < 4096 or s % 4096 != 0 for s in a.strides)
    assert min(a.strides) == np.dtype(dtype).itemsize
    view = np.asarray(a)
    assert np.shares_memory(view, a)
    view[3, 150, 5] = 9
    assert a[3, 150, 5] == 9
    b = gtstorage.full((24, 200, 6), 2, dtype, backend=backend, pitch_padding=PAD)
    assert b.strides == a.strides and (b == 2).all()


def test_gdp3_storage_and_like_keep_the_padding():
    s = gs.zeros((16, 512, 8), backend="F", pitch_padding=PAD)
    assert s.strides == (8, 128, 65600)  # 128 * 512 = 65536 -> 1025 * 64
    assert gs.empty_like(s).strides == s.strides
    assert gs.ones_like(s, pitch_padding=None).strides == (8, 128, 65536)  # None: the default
    assert gs.zeros_like(s, pitch_padding="none").strides == (8, 128, 65536)
    assert gs.zeros((16, 512, 8), backend="F").strides == (8, 128, 65536)
    t = gs.from_array(np.ones((16, 512, 8)), backend="F", pitch_padding=PAD)
    assert t.strides == s.strides and float(np.asarray(t).sum()) == 16 * 512 * 8


@pytest.mark.parametrize("bad", ["yes", "AVOID_ALIASING", 1, True])
def test_bad_values_are_refused(bad):
    with pytest.raises(ValueError, match="zeros: pitch_padding must be None, 'none' or "
                                         "'avoid_aliasing'"):
        gtstorage.zeros((4, 4), pitch_padding=bad)
    with pytest.raises(ValueError, match="pitch_padding"):
        gs.empty((4, 4), pitch_padding=bad)
    with pytest.raises(ValueError, match="pitch_padding"):
        gs.plan((4, 4), pitch_padding=bad)
