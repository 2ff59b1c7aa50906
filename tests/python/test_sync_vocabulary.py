# The DualView-style sync vocabulary (issue 9, point 3) through the Python binding: the GDP-3
# methods keep their names and are implemented with gtstorage_sync_to / _modify / _need_sync /
# _mark_synchronized / _wait_stream, which Storage also offers as sync_to, modify, need_sync and
# wait_stream. Runs on the emulated device (conftest.py) unless a GPU backend is chosen.
import numpy as np
import pytest

import gtstorage
import gtstorage.gdp3 as gs
from gtstorage import _capi
from conftest import live

SHAPE = (5, 4, 3)


def test_new_calls_are_exported_and_old_ones_marked_deprecated():
    for name in ("gtstorage_sync_to", "gtstorage_sync_to_async", "gtstorage_modify",
                 "gtstorage_need_sync", "gtstorage_mark_synchronized", "gtstorage_wait_stream",
                 "gtstorage_create_options_init_sized", "gtstorage_wrap_options_init_sized"):
        assert name in _capi.PROTOTYPES and hasattr(_capi.lib, name)
    # The old sync vocabulary, and the device functions' names before the header's naming rule
    # (each the same function as its new name).
    renamed = {"gtstorage_get_device_backend": "gtstorage_device_get_backend",
               "gtstorage_set_device": "gtstorage_device_set_current",
               "gtstorage_get_device": "gtstorage_device_get_current",
               "gtstorage_set_device_backend": "gtstorage_device_set_backend"}
    assert set(_capi.DEPRECATED) == {"gtstorage_sync", "gtstorage_sync_async", "gtstorage_acquire",
                                     "gtstorage_touch"} | set(renamed)
    for old, new in renamed.items():
        assert new in _capi.DEPRECATED[old] and hasattr(_capi.lib, new)
        assert _capi.PROTOTYPES[old] == _capi.PROTOTYPES[new]
    assert {"gtstorage_refcount", "gtstorage_reset_transfer_stats",
            "gtstorage_device_set_backend"} <= set(_capi.EXPERIMENTAL)
    # Only a renamed experimental function is both (its old name is the deprecated alias).
    assert set(_capi.DEPRECATED) & set(_capi.EXPERIMENTAL) == {"gtstorage_set_device_backend"}


def test_dualview_cycle():
    base = live()
    s = gs.zeros(SHAPE, device="gpu", managed="gtstorage")
    s.set_synchronized()
    t0 = s.transfer_stats()
    assert not s.need_sync("host") and not s.need_sync("device")
    s.modify("host")
    assert s.need_sync("device") and not s.need_sync("host")
    s.sync_to("host")  # nothing to copy
    assert s.transfer_stats() == t0
    s.sync_to("device")
    assert s.transfer_stats()["h2d_count"] == t0["h2d_count"] + 1
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    s.modify("device")
    with pytest.raises(gtstorage.GTSyncConflictError):
        s.modify("host")
    s.modify("host", force=True)
    assert s.sync_state.state == gs.SyncState.SYNC_HOST_DIRTY
    s.sync_to("device", stream=0)
    s.wait_stream()
    assert s.sync_state.state == gs.SyncState.SYNC_CLEAN
    assert s.transfer_stats()["h2d_count"] == t0["h2d_count"] + 2
    s.sync_to(_capi.SIDE_HOST, force=True)
    assert s.transfer_stats()["d2h_count"] == t0["d2h_count"] + 1
    del s
    assert live() == base


def test_gdp3_names_keep_their_meaning():
    s = gs.from_array(np.arange(60.0).reshape(SHAPE), device="gpu", managed="gtstorage")
    s.host_to_device()
    t0 = s.transfer_stats()
    s.set_host_modified()
    s.synchronize()  # host modified -> device
    assert s.transfer_stats()["h2d_count"] == t0["h2d_count"] + 1
    s.set_device_modified()
    s.synchronize()  # device modified -> host
    assert s.transfer_stats()["d2h_count"] == t0["d2h_count"] + 1
    s.synchronize()  # clean: nothing
    assert s.transfer_stats()["d2h_count"] == t0["d2h_count"] + 1
    s.sync_state.state = gs.SyncState.SYNC_DEVICE_DIRTY
    assert s.need_sync("host")
    s.sync_state.state = gs.SyncState.SYNC_CLEAN
    assert not s.need_sync("host")
    np.testing.assert_array_equal(np.asarray(s), np.arange(60.0).reshape(SHAPE))


def test_host_only_and_bad_arguments():
    s = gs.zeros(SHAPE)
    s.sync_to("device", force=True)
    s.modify("device")
    assert not s.need_sync("host") and not s.need_sync("device")
    s.wait_stream(1)
    for bad in ("gpu", 2, True, None):
        with pytest.raises(ValueError, match="side must be 'host' or 'device'"):
            s.sync_to(bad)
    with pytest.raises(OverflowError, match="wait_stream: stream = -1"):
        s.wait_stream(-1)
