# Shared fixtures of the Python binding's tests. tests/python/run.sh tests the installed wheel
# (GTSTORAGE_TEST_PACKAGE=installed: the package must not come from the source tree); otherwise
# the package is imported from bindings/python (PYTHONPATH and GTSTORAGE_LIBRARY set by the
# caller; this file adds the source tree as a fallback).
import ctypes
import gc
import os
import sys
import threading

import numpy as np
import pytest

_SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "bindings", "python"))
_INSTALLED = os.environ.get("GTSTORAGE_TEST_PACKAGE") == "installed"
if not _INSTALLED and os.path.isdir(_SRC) and _SRC not in map(os.path.abspath, sys.path):
    sys.path.insert(0, _SRC)

# Device tests run on the emulated backend unless the caller chose one (e.g. cuda on a GPU box).
os.environ.setdefault("GTSTORAGE_DEVICE_BACKEND", "emulated")

import gtstorage  # noqa: E402

if _INSTALLED and os.path.realpath(gtstorage.__file__).startswith(os.path.realpath(_SRC) + os.sep):
    raise pytest.UsageError(f"GTSTORAGE_TEST_PACKAGE=installed, but gtstorage was imported from "
                            f"the source tree: {gtstorage.__file__}")

try:
    import hypothesis

    # Under CI (CI=true) the examples are derived from each test's source, not drawn at random:
    # a run that passed on the rehearsal's clone passes on CI's, and a property test's random
    # exploration happens in development runs (GTSTORAGE_TEST_HYPOTHESIS_DERANDOMIZE=0 to explore
    # under CI=true too, =1 to replay CI's examples by hand).
    derandomize = os.environ.get("GTSTORAGE_TEST_HYPOTHESIS_DERANDOMIZE",
                                 "1" if os.environ.get("CI") == "true" else "0") == "1"
    hypothesis.settings.register_profile(
        "gtstorage", deadline=None, derandomize=derandomize,
        max_examples=int(os.environ.get("GTSTORAGE_TEST_HYPOTHESIS_EXAMPLES", "60")),
        suppress_health_check=[hypothesis.HealthCheck.too_slow])
    hypothesis.settings.load_profile("gtstorage")
except ImportError:  # pragma: no cover - run.sh installs hypothesis everywhere
    pass


def run_in_threads(work, arguments):
    """Runs ``work(*args)`` for every ``args`` of @p arguments, each in a thread of its own, all
    at once; returns the exceptions they raised (empty when all went well)."""
    errors = []

    def guarded(*args):
        try:
            work(*args)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=args) for args in arguments]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def write_device_memory(address, values):
    """Writes the NumPy array @p values at device address @p address behind the back of the
    storage that owns it, as an application's kernel would: a plain memmove on the emulated
    device (its memory is host memory); on a real GPU, whose memory the host cannot address, a
    copy into a second storage that wraps the address (ordered before any later copy of the
    owner's: both use the device's default stream)."""
    values = np.ascontiguousarray(values)
    if gtstorage.get_device_backend() == "emulated":
        ctypes.memmove(address, values.ctypes.data, values.nbytes)
        return

    class Raw:
        __cuda_array_interface__ = {"version": 3, "shape": values.shape, "strides": None,
                                    "typestr": values.dtype.str, "data": (address, False),
                                    "stream": None}

    w = gtstorage.gdp3.as_storage(device_data=Raw())
    w[...] = values
    del w


def live():
    """Library live counts after collecting Python garbage."""
    gc.collect()
    s = gtstorage.get_stats()
    return s["live_handles"], s["live_buffers"], s["host_bytes"], s["device_bytes"]


@pytest.fixture
def no_leak():
    """Fails the test if it leaves library handles or buffers alive."""
    before = live()
    yield
    after = live()
    assert after == before, f"live (handles, buffers, host bytes, device bytes) {before} -> {after}"


_START_BACKEND = gtstorage.get_device_backend()


def _main_thread_device():
    try:
        return gtstorage.get_device() if gtstorage.device_count() > 0 else None
    except gtstorage.GTStorageError:
        return None


@pytest.fixture(autouse=True)
def _process_state_kept():
    """Fails the test that leaves another device backend active, or this thread on another
    device, than the session started with: later tests make their storages on device 0 of the
    same backend, and a leak would fail them instead (far from its cause, and only when a
    property test happens to draw the value that changes the state)."""
    yield
    backend = gtstorage.get_device_backend()
    assert backend == _START_BACKEND, \
        f"the test left device backend {backend!r} active (the session began on {_START_BACKEND!r})"
    device = _main_thread_device()
    assert device in (None, 0), f"the test left this thread on device {device} (0 expected)"
