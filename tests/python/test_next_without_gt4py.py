# gtstorage.next needs gt4py only when gt4py.next calls it: importing it, making allocators and
# wraps, hashing and comparing them work without gt4py (tests/integration/gt4py/test_next.py checks them
# with the real gt4py.next).
import subprocess
import sys

import numpy as np
import pytest

import gtstorage
import gtstorage.next as gn


def test_import_does_not_import_gt4py():
    code = ("import sys, gtstorage.next as gn; a = gn.allocator(); w = gn.wrap(__import__('numpy')"
            ".zeros(3)); print(sorted(m for m in sys.modules if m.split('.')[0] == 'gt4py'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_allocators_are_values():
    a = gn.allocator()
    assert a == gn.allocator(alignment=64) and hash(a) == hash(gn.allocator())
    assert a != gn.allocator(alignment=128) and a != gn.allocator("cuda")
    assert (a.device, a.device_id, a.alignment, a.layout_mapper) == ("cpu", 0, 64, None)
    assert gn.allocator("rocm", device_id=3).alignment == 128
    for bad, exc, text in (({"device": "gpu"}, ValueError, "device must be"),
                           ({"device_id": 1}, ValueError, "Unsupported device ID 1"),
                           ({"device_id": -1}, OverflowError, "device_id"),
                           ({"device_id": 1.0}, TypeError, "device_id"),
                           ({"alignment": 0}, OverflowError, "alignment"),
                           ({"layout_mapper": 5}, TypeError, "layout_mapper")):
        with pytest.raises(exc, match=text):
            gn.allocator(**bad)


def test_wrap_takes_arrays_and_storages():
    w = gn.wrap(np.zeros((3, 4)))
    assert "shape (3, 4), cpu:0, unused" in repr(w)
    assert gn.wrap(gtstorage.gdp3.zeros((3, 4))) is not None
    with pytest.raises(TypeError, match="NumPy or CuPy array"):
        gn.wrap("abc")
    assert w != gn.wrap(np.zeros((3, 4)))  # by identity


def test_device_type_needs_gt4py():
    try:
        import gt4py  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            gn.allocator().__gt_device_type__
    else:
        pytest.skip("gt4py is installed here (tests/integration/gt4py covers it)")
