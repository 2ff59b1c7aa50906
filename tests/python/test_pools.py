"""Memory pools from Python: a released field's block serves the next one of its size (zeros()
still reads zero), counters, trim back to nothing held, limits, argument errors."""
import gc

import numpy as np
import pytest

import gtstorage


@pytest.fixture(autouse=True)
def empty_pools():
    gtstorage.pool_set_limit("host", 1 << 32)
    gtstorage.pool_trim("all", 0)
    yield
    gc.collect()
    gtstorage.pool_set_limit("host", 1 << 32)
    gtstorage.pool_trim("all", 0)


def address(a):
    return a.__array_interface__["data"][0]


def test_released_block_serves_the_next_field():
    a = gtstorage.zeros((64, 64, 32), np.float64, backend="gt:cpu_kfirst")
    first = address(a)
    a[...] = 7.0
    del a
    gc.collect()
    held = gtstorage.pool_stats("host")
    assert held["held_blocks"] == 1 and held["held_bytes"] >= 64 * 64 * 32 * 8
    b = gtstorage.zeros((64, 64, 32), np.float64, backend="gt:cpu_kfirst")
    assert address(b) == first
    assert not b.any()  # the old 7.0s are gone
    assert gtstorage.pool_stats("host")["hits"] == held["hits"] + 1
    assert gtstorage.get_stats()["pool_hits"] >= 1


def test_trim_and_limit():
    fields = [gtstorage.empty((1 << 17,), np.float64, backend="numpy") for _ in range(3)]
    del fields
    gc.collect()
    assert gtstorage.pool_stats("host")["held_blocks"] == 3
    gtstorage.pool_set_limit("host", 3 << 19)  # 1.5 blocks of 1 MiB: one stays
    s = gtstorage.pool_stats("host")
    assert s["held_blocks"] == 1 and s["limit_bytes"] == 3 << 19
    gtstorage.pool_trim("all", 0)
    assert gtstorage.pool_stats("host")["held_bytes"] == 0
    assert gtstorage.get_stats()["pool_held_bytes"] == 0


@pytest.mark.parametrize("call,exc,words", [
    (lambda: gtstorage.pool_stats("all"), ValueError, "pool_stats: memory"),
    (lambda: gtstorage.pool_stats(2), TypeError, "pool_stats: memory"),
    (lambda: gtstorage.pool_trim("host", -1), OverflowError, "keep_bytes"),
    (lambda: gtstorage.pool_trim("host", 2**63), OverflowError, "keep_bytes"),
    (lambda: gtstorage.pool_set_limit("gpu", 0), ValueError, "pool_set_limit: memory"),
    (lambda: gtstorage.pool_set_limit("host", 1.5), TypeError, "limit_bytes"),
])
def test_bad_arguments(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
