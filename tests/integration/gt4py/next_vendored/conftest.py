# The routing of GT4Py's own gt4py.next allocator and constructor tests (test_*.py here, vendored
# unchanged; README.md says from where) to gtstorage.next.allocator: gt4py.next's standard
# allocators, and its registry of default allocators by device, become gtstorage's before the
# test modules are imported. tests/integration/gt4py/run.sh runs this directory in a pytest process of its
# own, so that the rest of the GT4Py step sees GT4Py's allocators.
#
# What GT4Py's own conftest files give these tests is given here: the `requires_gpu` marker (a
# skip without CuPy and a GPU) and the `nd_array_implementation` fixture.
import hashlib
import os

import pytest

import gt4py._core.definitions as core_defs
import gt4py.next.custom_layout_allocators as next_allocators
from gt4py.next.embedded import nd_array_field

import gtstorage.next

# The vendored files are GT4Py's, unchanged (README.md): an edit fails the run.
VENDORED = {
    "test_constructors.py": "449030b91c332dea96f385a4f567a36ec6eaa8a6846cf303b26b6a6e05c6e940",
    "test_custom_layout_allocators.py":
        "6ed8f4de6090da809e25d1ef1c4106ab2e708bb3f09088d15b586cbca56e662b",
}
for _name, _sha in VENDORED.items():
    _path = os.path.join(os.path.dirname(__file__), _name)
    with open(_path, "rb") as _f:
        if hashlib.sha256(_f.read()).hexdigest() != _sha:
            raise pytest.UsageError(f"{_path} is not GT4Py's file any more (sha256 differs; "
                                    "see README.md): vendored tests stay unchanged")

# Every __gt_allocate__ the tests make through the routed allocators, counted per device.
served = {"cpu": 0, "gpu": 0}


class _Counting(gtstorage.next.Allocator):
    """gtstorage.next.allocator that counts what it serves (for the summary below)."""

    __slots__ = ()

    def __gt_allocate__(self, domain, dtype, device_id=0, aligned_index=None):
        buffer = super().__gt_allocate__(domain, dtype, device_id, aligned_index)
        served["cpu" if self.device == "cpu" else "gpu"] += 1
        return buffer


def StandardCPUFieldBufferAllocator():  # noqa: N802 (GT4Py's class name)
    return _Counting("cpu")


# GTSTORAGE_NEXT_ROUTING=0 runs the same tests on GT4Py's own allocators (the comparison).
ROUTED = os.environ.get("GTSTORAGE_NEXT_ROUTING", "1") != "0"
if ROUTED:
    next_allocators.StandardCPUFieldBufferAllocator = StandardCPUFieldBufferAllocator
    next_allocators.device_allocators[core_defs.DeviceType.CPU] = \
        StandardCPUFieldBufferAllocator()
if ROUTED and core_defs.CUPY_DEVICE_TYPE is not None:
    _gpu_kind = "rocm" if core_defs.CUPY_DEVICE_TYPE == core_defs.DeviceType.ROCM else "cuda"

    def StandardGPUFieldBufferAllocator():  # noqa: N802
        return _Counting(_gpu_kind)

    next_allocators.StandardGPUFieldBufferAllocator = StandardGPUFieldBufferAllocator
    next_allocators.device_allocators[core_defs.CUPY_DEVICE_TYPE] = \
        StandardGPUFieldBufferAllocator()


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_gpu: needs CuPy and a GPU (skipped otherwise)")


def pytest_collection_modifyitems(config, items):
    if _gpu_available():
        return
    skip = pytest.mark.skip(reason="requires_gpu: no CuPy with a reachable GPU")
    for item in items:
        if item.get_closest_marker("requires_gpu"):
            item.add_marker(skip)


def _nd_array_implementations():
    for xp in nd_array_field._nd_array_implementations:
        if getattr(nd_array_field, "cp", None) is not None and xp is nd_array_field.cp:
            yield pytest.param(xp, id=xp.__name__, marks=pytest.mark.requires_gpu)
        else:
            yield pytest.param(xp, id=xp.__name__)


@pytest.fixture(params=list(_nd_array_implementations()))
def nd_array_implementation(request):
    yield request.param


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not ROUTED:
        terminalreporter.write_line("gtstorage.next routing: off (GT4Py's own allocators)")
        return
    terminalreporter.write_line(
        f"gtstorage.next routing: {served['cpu']} host and {served['gpu']} device allocations "
        "of these tests were served by gtstorage.next.allocator")


def pytest_sessionfinish(session, exitstatus):
    # Routing that served nothing would make these tests GT4Py's own again: a failure.
    if ROUTED and exitstatus == 0 and served["cpu"] + served["gpu"] == 0:
        session.exitstatus = 1
