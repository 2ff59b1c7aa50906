# Basic indexing of a Storage against NumPy: random keys of ints (negative and out of range
# included), slices (any start, stop, step) and at most one Ellipsis, read and written, on a
# host-only storage with a halo, on a view of it, and on a host + device pair. The values, the
# result kind (scalar or view) and the exception type must be NumPy's.
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import example, given, strategies as st  # noqa: E402

import gtstorage.gdp3 as gs  # noqa: E402

SHAPE = (4, 5, 3)
REF = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)

ints = st.integers(-7, 7)
bounds = st.one_of(st.none(), st.integers(-8, 8))
slices = st.builds(slice, bounds, bounds, st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
parts = st.lists(st.one_of(ints, slices), max_size=4)


@st.composite
def keys(draw):
    key = draw(parts)
    if draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    return key[0] if len(key) == 1 and draw(st.booleans()) else tuple(key)


def _outcome(fn):
    try:
        return "ok", fn()
    except (IndexError, ValueError, TypeError) as exc:
        return "error", type(exc)


def _storages():
    """(storage, its values as NumPy) pairs, each storage made afresh (a write to one never
    shows in another)."""
    yield gs.from_array(REF, halo=(1, 1, 0)), REF
    yield gs.from_array(REF, halo=(1, 1, 0))[1:, ::-2], REF[1:, ::-2]
    if gs.device_count() > 0:
        pair = gs.from_array(REF, device="gpu")
        pair.host_to_device()
        pair.set_device_modified()  # reads and writes go to the device side
        yield pair, REF


@given(key=keys())
@example(key=(-1, -1, -1))
@example(key=(4, 0, 0))
@example(key=(Ellipsis, 2))
@example(key=(Ellipsis, 1, Ellipsis))
def test_read_matches_numpy(key):
    for s, ref in _storages():
        want = _outcome(lambda: ref[key])
        got = _outcome(lambda: s[key])
        assert got[0] == want[0], (key, got, want)
        if want[0] == "error":
            assert got[1] is want[1], (key, got, want)
        elif np.ndim(want[1]) == 0 and not isinstance(want[1], np.ndarray):
            assert type(got[1]) is np.float64 and got[1] == want[1], key
        else:
            np.testing.assert_array_equal(np.asarray(got[1]), want[1])


@given(key=keys(), value=st.one_of(st.integers(-9, 9), st.floats(-9, 9), st.just(np.float32(1.5))))
@example(key=(1, 2, 0), value=7)
@example(key=(-4, -5, -3), value=2.5)
def test_write_matches_numpy(key, value):
    for s, ref in _storages():
        before, ref = ref, ref.copy()  # (reading s here would move a pair's data to the host)
        want = _outcome(lambda: ref.__setitem__(key, value))
        got = _outcome(lambda: s.__setitem__(key, value))
        assert got[0] == want[0], (key, got, want)
        if want[0] == "error":
            assert got[1] is want[1]
            np.testing.assert_array_equal(np.asarray(s), before)  # nothing written
        else:
            np.testing.assert_array_equal(np.asarray(s), ref)
