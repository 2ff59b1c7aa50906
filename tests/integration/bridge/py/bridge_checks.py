"""Python side of the libgtstorage_python tests (tests/integration/bridge): functions that C and Fortran
test programs call through the bridge. Each records what it saw into a storage the caller
reads, so that the caller's assertions are about values, addresses and shapes."""

import threading
import time

import numpy as np

import gtstorage
from gtstorage import bridge

# ---- plain functions ------------------------------------------------------------------------


@bridge.export(bridge.Arg("a", dtype="float64", ndim=2),
               bridge.Arg("b", dtype="float64", ndim=2, readonly=True))
def axpy(a, b, *, alpha=1.0):
    """a += alpha * b."""
    a += alpha * b


@bridge.export(bridge.Arg("out", dtype="float64", ndim=1))
def record_scalars(out, *, i, x, flag, text):
    """out[0:5] = i, x, flag, len(text), ord(text[0]); out[5] = 1 if every type is right."""
    out[0] = i
    out[1] = x
    out[2] = 1.0 if flag else 0.0
    out[3] = len(text)
    out[4] = ord(text[0]) if text else -1
    out[5] = float(type(i) is int and type(x) is float and type(flag) is bool
                   and type(text) is str)


@bridge.export(bridge.Arg("a", ndim=None), bridge.Arg("out", dtype="float64", ndim=1))
def describe(a, out):
    """out = [id(a), address, ndim, shape..., writeable]: what the function received."""
    out[:] = 0
    out[0] = id(a) % (1 << 52)
    out[1] = a.__array_interface__["data"][0]
    out[2] = a.ndim
    out[3:3 + a.ndim] = a.shape
    out[10] = float(a.flags.writeable)


def undeclared(*arrays):
    """No declaration: any number of storages as NumPy views; each gets 7 added."""
    for arr in arrays:
        arr += 7


def raises(a):
    raise ValueError(f"model asked for trouble with shape {a.shape}")


def raises_gtstorage(a):
    gtstorage.Storage.from_handle(0)  # GTValueError: the handle 0 is never valid


@bridge.export(bridge.Arg("u", dtype="float64", dims="IJK", halo=((2, 2), (2, 2), (0, 0))),
               form="storage")
def halo_checked(u):
    u.domain_view[...] = 1.0


@bridge.export(bridge.Arg("u", dtype="float64", ndim=3, side="device"))
def needs_device(u):
    pass


# ---- threads --------------------------------------------------------------------------------

_busy_lock = threading.Lock()
_inside = 0
max_inside = 0


@bridge.export(bridge.Arg("a", dtype="float64", ndim=1))
def hold_gil(a, *, ms=50.0):
    """Spins for ms milliseconds holding the GIL (no sleep), then adds 1 to a; records how many
    calls ran at the same time (the GIL serializes them: never more than 1)."""
    global _inside, max_inside
    with _busy_lock:
        _inside += 1
        max_inside = max(max_inside, _inside)
    t_end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < t_end:
        pass
    a += 1.0
    with _busy_lock:
        _inside -= 1


@bridge.export(bridge.Arg("out", dtype="float64", ndim=1))
def report_max_inside(out):
    out[0] = max_inside


# ---- what a Fortran caller's arrays look like on this side ----------------------------------


@bridge.export(bridge.Arg("a"), bridge.Arg("out", dtype="float64", ndim=1), form="storage")
def fortran_view(a, out):
    """Records what arrived, then adds 1 to the domain (not the halo) of a numeric array.

    out[0] address of the host buffer (the Fortran array's first element), out[1] ndim,
    out[2:9] shape, out[9:16] byte strides, out[16:30] halo (lower, upper) pairs, out[30] 1 if
    the domain was written."""
    o = np.asarray(out)
    arr = np.asarray(a)
    o[:] = 0
    o[0] = arr.__array_interface__["data"][0]
    n = arr.ndim
    o[1] = n
    o[2:2 + n] = arr.shape
    o[9:9 + n] = arr.strides
    o[16:16 + 2 * n] = [w for pair in a.halo for w in pair]
    if arr.dtype.kind in "iuf":
        domain = np.asarray(a.domain_view)
        domain += 1
        o[30] = 1


@bridge.export(bridge.Arg("flags", dtype=bool, ndim=1), bridge.Arg("out", dtype="float64", ndim=1))
def logical_probe(flags, out):
    """out[0] = how many are true, out[1] = how many bytes are 0xFF; then flags[0] = False,
    flags[1] = True (NumPy writes 1)."""
    out[0] = np.count_nonzero(flags)
    out[1] = np.count_nonzero(flags.view(np.uint8) == 0xFF)
    out[2] = float(bool(flags[2]))  # a 0xFF element read on its own
    flags[0] = False
    flags[1] = True


# ---- device storages (the emulated device in CI, a GPU where there is one) ------------------


@bridge.export(bridge.Arg("u", dtype="float64", side="device", readonly=True),
               bridge.Arg("out", dtype="float64", ndim=1), form="storage")
def device_read(u, out):
    """Reads the model's device array after the model's work on its stream: a host copy made
    through the library (DLPack, copy=True), which is ordered on that stream. out[0] = sum,
    out[1] = the stream current_stream() reports, out[2] = the element count."""
    host = np.from_dlpack(u, device="cpu", copy=True)
    out[0] = float(host.sum())
    out[1] = float(bridge.current_stream())
    out[2] = host.size
