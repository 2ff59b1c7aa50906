# gtstorage Python binding: GDP-3 ``as_storage``, a Storage over memory that others allocated.
#
# Every parameter given is validated against the buffer (GDP-3): a preset's stride order and
# alignment by the library's plan of it, the rest against the wrapped storage's geometry. Host
# buffers come through the array interface or the buffer protocol, device buffers through the
# CUDA Array Interface, anything else through DLPack; a storage (or a drop-in array over a whole
# storage) gives a view of that storage.
"""GDP-3 wrapping: as_storage."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _args, _capi
from ._allocation import _library_allocation
from ._args import public
from ._capi import GTStorageError, check, lib
from ._dlpack_import import wrap_dlpack
from ._handle import SyncState, _cai_stream
from ._request import _alias, _dims_string, _ints, halo_widths, plan
from ._storage import Storage, _wait_for_producer, wrap_buffers

_UNSET: Any = _args.UNSET  # "not given"


# ---- GDP-3 wrapping -----------------------------------------------------------------------------


def _host_interface(data: Any) -> dict[str, Any]:
    """Array-interface dict of a host buffer (no copy), with a NumPy array keeping it alive."""
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        # np.asarray() of a NumPy scalar is a new array (a silent copy): the scalar's own bytes,
        # immutable, are wrapped instead, read-only and with the scalar's dtype.
        arr = np.frombuffer(data, dtype=data.dtype).reshape(())
    elif hasattr(data, "__array_interface__") or hasattr(data, "__array_struct__"):
        arr = np.asarray(data)
    else:
        try:
            view = memoryview(data)
        except TypeError:
            raise TypeError(
                f"as_storage: data must expose a buffer (__array_interface__, the buffer protocol),"
                f" got {type(data).__name__}; use from_array() to copy other data") from None
        # Through the memoryview: np.asarray(b"ab") would copy into a new 0-d "S2" array.
        try:
            arr = np.asarray(view)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"as_storage: the buffer of {type(data).__name__} (format "
                            f"{view.format!r}) has no NumPy dtype: {exc}") from None
    return {"array": arr, "data": arr.ctypes.data if arr.size else None, "shape": arr.shape,
            "strides": arr.strides, "typestr": arr.dtype.str, "readonly": not arr.flags.writeable}


@public()
def as_storage(data: Any = None, device_data: Any = None, *, sync_state: Any = None,
               dims: Any = _UNSET, dimensions: Any = _UNSET, halo: Any = None,
               readonly: bool | None = None, device_id: int = -1,
               shape: Sequence[int] | None = None, dtype: Any = None,
               layout: Sequence[int] | None = None, managed: Any = _UNSET, device: Any = _UNSET,
               backend: Any = _UNSET, defaults: Any = _UNSET,
               aligned_index: Sequence[int] | None = None,
               alignment_size: int | None = None) -> Storage:
    """Storage over existing memory, without copying (GDP-3 ``as_storage``).

    Every parameter given is validated against the buffer (GDP-3), and the error says what does
    not match. A gtstorage :class:`Storage` as ``data`` gives a view sharing its buffers and
    :class:`SyncState`; its parameters are fixed, so ``shape``, ``dtype``, ``dims``, ``halo``,
    ``device``, ``managed``, ``device_id`` and ``sync_state`` must be its own, and
    ``readonly=True`` gives a read-only view (NumPy's ``setflags(write=False)`` on a view; only
    a storage with one buffer, host or device, has one).

    Parameters
    ----------
    data : array-like, optional
        Host buffer: a NumPy array, anything with ``__array_interface__`` or the buffer
        protocol, or any DLPack producer (``__dlpack__``: PyTorch tensors, JAX arrays, …); a
        device array (``__cuda_array_interface__`` only: CuPy, CUDA PyTorch tensors) is taken
        as ``device_data``.
    device_data : object, optional
        Device buffer (``__cuda_array_interface__`` or ``__dlpack__``). With both, the storage is
        a mirrored pair whose initial ``sync_state`` says which side is current.
    sync_state : SyncState or int, optional
        Initial state of a host + device pair (default: both equal).
    dims, dimensions : sequence of str, optional
        Dimension labels (default: the buffer's ``__gt_dims__`` or the library's default).
    halo : int or sequence, optional
        Halo widths (as in :func:`gtstorage.gdp3.empty`).
    readonly : bool, optional
        Refuse writes (default: the buffer's own flag; a read-only buffer cannot be made writable).
    device_id : int, optional
        Device ordinal of ``device_data`` (-1: as the pointer says).
    shape, dtype, layout : optional
        Checked against the buffer.
    managed, device : optional
        GDP-3 keywords; only values consistent with wrapping (and with a storage given as
        ``data``) are accepted.
    backend, defaults : str, optional
        A preset the buffer must suit: its stride order for these dims and its alignment of the
        aligned element are checked.
    aligned_index : sequence of int, optional
        Element whose address must be aligned (default: the first interior point).
    alignment_size : int, optional
        Alignment in bytes that element's address must have.

    Returns
    -------
    Storage
        Sharing the memory; the wrapped objects stay alive until the last view and DLPack
        export are gone.

    Raises
    ------
    TypeError, ValueError, OverflowError
        A buffer that cannot be wrapped or a parameter that does not match it (the message says
        which and how).
    """
    if data is None and device_data is None:
        raise TypeError("as_storage needs data, device_data or both")
    _args.array_source("data", data)
    _args.array_source("device_data", device_data)
    if readonly is not None and not isinstance(readonly, (bool, np.bool_)):
        raise TypeError(f"readonly must be None, True or False, got {readonly!r}")
    if isinstance(data, Storage) and device_data is None:
        return _as_storage_of_storage(
            data, sync_state=sync_state, dims=_alias("dimensions", dimensions, "dims", dims),
            halo=halo, readonly=readonly, device_id=device_id, shape=shape, dtype=dtype,
            layout=layout, managed=managed, device=device,
            preset=_alias("backend", backend, "defaults", defaults),
            aligned_index=aligned_index, alignment_size=alignment_size)
    if device_data is None:
        own = _library_storage(data)
        if own is not None:
            # A drop-in array over a storage's whole view: that storage's buffers (a view of it),
            # not a wrap of its memory. Keywords it does not satisfy (other dims, a halo) fall
            # through to the wrap below, which takes them or says what does not fit.
            try:
                return _as_storage_of_storage(
                    own, sync_state=sync_state,
                    dims=_alias("dimensions", dimensions, "dims", dims), halo=halo,
                    readonly=readonly, device_id=device_id, shape=shape, dtype=dtype,
                    layout=layout, managed=managed, device=device,
                    preset=_alias("backend", backend, "defaults", defaults),
                    aligned_index=aligned_index, alignment_size=alignment_size)
            except ValueError:
                pass
    if (device_data is None and hasattr(data, "__cuda_array_interface__")
            and not hasattr(data, "__array_interface__")):
        # A device array given as data (CuPy, a CUDA PyTorch tensor): its memory is the device
        # buffer, as from_array() takes it.
        if device in (None, "cpu"):
            raise ValueError(f"as_storage: device={device!r} contradicts data, a device array "
                             "(pass device='gpu' or leave device out)")
        data, device_data = None, data
    if device_data is None and _is_dlpack_only(data):
        return _as_storage_dlpack(data, dims=_alias("dimensions", dimensions, "dims", dims),
                                  halo=halo, readonly=readonly, shape=shape, dtype=dtype,
                                  layout=layout,
                                  preset=_alias("backend", backend, "defaults", defaults),
                                  aligned_index=aligned_index, alignment_size=alignment_size,
                                  device=device, managed=managed, device_id=device_id,
                                  sync_state=sync_state)
    if managed is not _UNSET and managed not in (None, False, "gtstorage", "gt4py"):
        raise ValueError(f"as_storage: managed={managed!r} cannot wrap existing buffers")
    if device is not _UNSET and device not in (None, "cpu", "gpu"):
        raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")
    if device in (None, "cpu") and device_data is not None:
        raise ValueError(f"as_storage: device={device!r} contradicts device_data (pass "
                         "device='gpu' or leave device out)")
    host = _host_interface(data) if data is not None else None
    dev = None
    if device_data is not None:
        if not hasattr(device_data, "__cuda_array_interface__"):
            raise TypeError("as_storage: device_data must expose __cuda_array_interface__")
        cai = device_data.__cuda_array_interface__
        dev_stream = _cai_stream(cai)
        dev = {"data": int(cai["data"][0]) or None, "shape": tuple(int(s) for s in cai["shape"]),
               "strides": (None if cai.get("strides") is None
                           else tuple(int(s) for s in cai["strides"])),
               "typestr": np.dtype(cai["typestr"]).str, "readonly": bool(cai["data"][1])}
        if host is not None:
            if tuple(host["shape"]) != dev["shape"] or host["typestr"] != dev["typestr"]:
                raise ValueError(f"as_storage: data {host['shape']} {host['typestr']} and "
                                 f"device_data {dev['shape']} {dev['typestr']} differ in shape "
                                 "or dtype")
    ref = host if host is not None else dev
    assert ref is not None  # data or device_data is given (checked above)
    if shape is not None and tuple(_ints("shape", shape, allow_scalar=True)) != tuple(ref["shape"]):
        raise ValueError(f"as_storage: shape {tuple(shape)} does not match the buffer's "
                         f"{tuple(ref['shape'])}")
    if dtype is not None and _args.dtype(dtype).str != ref["typestr"]:
        raise ValueError(f"as_storage: dtype {_args.dtype(dtype)} does not match the buffer's "
                         f"{ref['typestr']}")
    ndim = len(ref["shape"])
    d = _alias("dimensions", dimensions, "dims", dims)
    if (d is _UNSET or d is None) and hasattr(data if data is not None else device_data,
                                              "__gt_dims__"):
        d = tuple((data if data is not None else device_data).__gt_dims__)
    dims_str = None if d is _UNSET or d is None else _dims_string(d)
    halo_flat = None if halo is None else _halo_flat(halo, ndim)
    state_obj = None
    state = _capi.SYNC_CLEAN
    if sync_state is not None:
        if isinstance(sync_state, SyncState):
            state = sync_state.state
            state_obj = None if sync_state.is_bound else sync_state
        else:
            state = SyncState._check(sync_state)
    # A read-only source stays read-only: readonly=False cannot make immutable memory writable.
    if readonly is not None and not readonly and ref["readonly"]:
        raise ValueError("readonly=False was asked for, but the source buffer is read-only")
    ro = bool(readonly) if readonly is not None else bool(ref["readonly"])
    keep = tuple(x for x in (host["array"] if host else None, device_data) if x is not None)
    st = wrap_buffers(
        data=host["data"] if host else None,
        device_data=dev["data"] if dev else None,
        shape=tuple(ref["shape"]),
        host_strides=tuple(host["strides"]) if host else None,
        device_strides=dev["strides"] if dev else None,
        typestr=ref["typestr"],
        dims=dims_str,
        halo=halo_flat,
        readonly=ro,
        device_id=device_id,
        sync_state=state,
        keepalive=keep,
        sync_state_obj=state_obj,
    )
    st._base = data if data is not None else device_data
    if host is None or dev is None:
        # One buffer: device, managed and sync_state cannot be set, only stated; a statement
        # the buffer contradicts (device="gpu" of host memory, a dirty side of a storage that
        # has one side) is an error, not something to ignore.
        # (The state asked for, as it was before the wrap bound a SyncState object to st.)
        _check_fixed(st, device=device, managed=managed, device_id=device_id,
                     sync_state=None if sync_state is None else state)
    _validate(st, _alias("backend", backend, "defaults", defaults), aligned_index,
              alignment_size, layout)
    return _wait_for_producer(st, dev_stream) if dev is not None else st


def _library_storage(data: object) -> Storage | None:
    """The Storage whose whole view @p data is (a drop-in array over libgtstorage memory with
    that storage's address, shape and strides), else None."""
    record = _library_allocation(data)
    if record is None or isinstance(data, Storage):
        return None
    st = record.storage
    key = "__array_interface__" if record.is_host else "__cuda_array_interface__"
    try:
        theirs = getattr(data, key)
        ours = getattr(st, key)
    except (AttributeError, TypeError, ValueError, GTStorageError):
        return None
    same = (int(theirs["data"][0]) == int(ours["data"][0])
            and tuple(theirs["shape"]) == tuple(ours["shape"])
            and np.dtype(theirs["typestr"]) == np.dtype(ours["typestr"])
            and _strides_of(theirs) == _strides_of(ours))
    return st if same else None


def _strides_of(interface: dict[str, Any]) -> tuple[int, ...]:
    """Byte strides of an array interface (C-contiguous when it says None)."""
    strides = interface.get("strides")
    if strides is not None:
        return tuple(int(x) for x in strides)
    out: list[int] = []
    step = np.dtype(interface["typestr"]).itemsize
    for extent in reversed(tuple(interface["shape"])):
        out.append(step)
        step *= int(extent)
    return tuple(reversed(out))


_MANAGED_NAMES = {None: False, False: False, "none": False, "gtstorage": "gtstorage",
                  "gt4py": "gtstorage", "mirror": "gtstorage", "cuda": "cuda", "unified": "cuda"}


def _as_storage_of_storage(st: Storage, *, sync_state: Any, dims: Any, halo: Any,
                           readonly: Any, device_id: Any, shape: Any, dtype: Any, layout: Any,
                           managed: Any, device: Any, preset: Any, aligned_index: Any,
                           alignment_size: Any) -> Storage:
    """GDP-3 ``as_storage`` of a gtstorage Storage: a view of the same buffers that shares its
    sync state. A storage's parameters are fixed, so every given parameter is checked against it
    (ValueError saying what does not match); ``readonly=True`` of a writable storage gives a
    read-only view (NumPy's ``setflags(write=False)`` on a view), which needs a storage with one
    buffer (a host + device pair's sync state cannot be shared by a second handle)."""
    if shape is not None:
        want = tuple(_ints("shape", shape, allow_scalar=True))
        if want != st.shape:
            raise ValueError(f"shape {want} does not match the storage's shape {st.shape}")
    if dtype is not None:
        dt = _args.dtype(dtype)
        if dt != st.dtype:
            raise ValueError(f"dtype {dt} does not match the storage's dtype {st.dtype} "
                             "(as_storage never converts; use astype() or from_array() for a "
                             "copy)")
    if dims is not _UNSET and dims is not None:
        labels = tuple(x for x in _dims_string(dims).split(",") if x)
        if labels != st.dims:
            raise ValueError(f"dims {labels} do not match the storage's dims {st.dims}")
    if halo is not None:
        flat = _halo_flat(halo, st.ndim)
        want_halo = tuple((flat[2 * d], flat[2 * d + 1]) for d in range(len(flat) // 2))
        if want_halo != st.halo:
            raise ValueError(f"halo {want_halo} does not match the storage's halo {st.halo}")
    _check_fixed(st, device=device, managed=managed, device_id=device_id, sync_state=sync_state)
    if readonly is not None and not readonly and st.readonly:
        raise ValueError("readonly=False was asked for, but the storage is read-only")
    if readonly and not st.readonly:
        view = _readonly_view(st)
    else:
        view = st[...]
    _validate(view, preset, aligned_index, alignment_size, layout)
    return view


def _check_fixed(st: Storage, *, device: Any, managed: Any, device_id: Any,
                 sync_state: Any) -> None:
    """Checks GDP-3 parameters that a storage fixed when it was made (its buffers' place,
    management, device and sync state) against the values given to ``as_storage``; a mismatch
    is a ValueError saying what does not match."""
    if device is not _UNSET:
        if not (device is None or (isinstance(device, str) and device in ("cpu", "gpu"))):
            raise ValueError(f"device must be None, 'cpu' or 'gpu', got {device!r}")
        if (device == "gpu") != st._has_device:
            raise ValueError(f"device={device!r} does not match the storage's device={st.device!r}")
    if managed is not _UNSET:
        key = managed.lower() if isinstance(managed, str) else managed
        if not (key is None or key is False or (isinstance(key, str) and key in _MANAGED_NAMES)):
            raise ValueError(f"managed must be None, 'gtstorage' (or 'gt4py') or 'cuda', got "
                             f"{managed!r}")
        if _MANAGED_NAMES[key] != st.managed:
            raise ValueError(f"managed={managed!r} does not match the storage's "
                             f"managed={st.managed!r}")
    device_id = _args.int_scalar("device_id", device_id, _args.INT32_MIN, _args.INT32_MAX)
    if device_id != -1:
        if not st._has_device:
            raise ValueError(f"device_id={device_id} does not match: the storage has no device "
                             "buffer")
        have = st._geom(_capi.SIDE_DEVICE).device_id
        if have != device_id:
            raise ValueError(f"device_id={device_id} does not match the storage's device {have}")
    if sync_state is not None:
        own = st.sync_state
        if isinstance(sync_state, SyncState) and sync_state.is_bound:
            if sync_state is not own:
                raise ValueError("sync_state is the SyncState of another storage; a view shares "
                                 "the storage's own (storage.sync_state)")
        else:
            value = (sync_state.state if isinstance(sync_state, SyncState)
                     else SyncState._check(sync_state))
            if value != own.state:
                names = SyncState._NAMES
                raise ValueError(
                    f"sync_state {names[value]} does not match the storage's {names[own.state]} "
                    "(as_storage does not change the state of a storage: use modify() or "
                    "set_synchronized())")


def _readonly_view(st: Storage) -> Storage:
    """A read-only storage over the buffer of @p st (kept alive by it): a new handle whose
    buffer refuses writes, as the library keeps the flag per buffer."""
    if st._has_host and st._has_device:
        raise ValueError(
            "readonly=True: a read-only view of a storage with host and device buffers cannot "
            "share its sync state (it lives with the buffers, which stay writable); only a "
            "host-only or device-only storage has read-only views")
    side = _capi.SIDE_HOST if st._has_host else _capi.SIDE_DEVICE
    g = st._geom(side)
    if side == _capi.SIDE_DEVICE:
        # Work queued on the source's stream is settled before a second handle uses the memory.
        check(lib.gtstorage_wait_stream(st._handle, 0), "as_storage")
    halo = [h for pair in g.halo for h in pair]
    out = wrap_buffers(
        data=(g.data or None) if side == _capi.SIDE_HOST else None,
        device_data=(g.data or None) if side == _capi.SIDE_DEVICE else None,
        shape=g.shape,
        host_strides=g.strides if side == _capi.SIDE_HOST else None,
        device_strides=g.strides if side == _capi.SIDE_DEVICE else None,
        typestr=g.typestr,
        dims=",".join(g.dims) or None,
        halo=halo or None,
        readonly=True,
        device_id=g.device_id if side == _capi.SIDE_DEVICE else -1,
        keepalive=st,
    )
    out._params = dict(st._params)
    out._base = st if st._base is None else st._base
    return out


def _is_dlpack_only(data: Any) -> bool:
    """A DLPack producer that offers no NumPy/buffer interface (torch tensors, JAX arrays), or a
    DLPack capsule itself."""
    if type(data).__name__ == "PyCapsule":
        return True
    if isinstance(data, np.ndarray) or not hasattr(data, "__dlpack__"):
        return False
    if hasattr(data, "__array_interface__") or hasattr(data, "__cuda_array_interface__"):
        return False
    try:
        memoryview(data)
        return False
    except TypeError:
        return True


def _as_storage_dlpack(data: Any, *, dims: Any, halo: Any, readonly: Any, shape: Any,
                       dtype: Any, layout: Any, preset: Any, aligned_index: Any,
                       alignment_size: Any, device: Any, managed: Any, device_id: Any,
                       sync_state: Any) -> Storage:
    dims_str = None if dims is _UNSET or dims is None else _dims_string(dims)
    if dims_str is None and hasattr(data, "__gt_dims__"):
        dims_str = _dims_string(tuple(data.__gt_dims__))
    halo_flat = None
    if halo is not None:
        ndim = len(data.shape) if hasattr(data, "shape") else None
        halo_flat = _halo_flat(halo, ndim)
    handle = wrap_dlpack(data, context="as_storage(data)", dims=dims_str, halo=halo_flat,
                         readonly=bool(readonly))
    st = Storage._from_handle(handle)
    st._base = data
    if readonly is False and st.readonly:
        raise ValueError("readonly=False was asked for, but the DLPack tensor is read-only")
    if shape is not None and tuple(_ints("shape", shape, allow_scalar=True)) != st.shape:
        raise ValueError(f"shape {tuple(shape)} does not match the buffer's {st.shape}")
    if dtype is not None and _args.dtype(dtype) != st.dtype:
        raise ValueError(f"dtype {_args.dtype(dtype)} does not match the buffer's {st.dtype}")
    # The tensor says where it lives; what the caller says about it must agree.
    _check_fixed(st, device=device, managed=managed, device_id=device_id, sync_state=sync_state)
    _validate(st, preset, aligned_index, alignment_size, layout)
    return st


def _halo_flat(halo: Any, ndim: int | None) -> list[int]:
    if ndim is None and _args.is_int(halo):
        raise TypeError("halo must be a sequence when the buffer's ndim is unknown")
    flat = halo_widths(halo, 0 if ndim is None else ndim)
    if ndim is not None and len(flat) != 2 * ndim:
        raise ValueError(f"halo has {len(flat) // 2} entries for {ndim} dimensions")
    return flat


def _validate(st: Storage, preset: Any, aligned_index: Any, alignment_size: Any,
              layout: Any) -> None:
    """GDP-3: "the consistency of the parameters with the buffers is validated". Checks the
    wrapped storage @p st against a preset (stride order for its dims, alignment of the aligned
    element), an explicit layout, aligned_index and alignment_size; raises ValueError naming
    what does not match."""
    if layout is not None:
        lay = tuple(_ints("layout", layout))
        if lay != st.layout:
            raise ValueError(f"layout {lay} does not match the buffer's {st.layout}")
    if preset is _UNSET or preset is None:
        preset = None
    elif not isinstance(preset, str):
        raise TypeError(f"backend/defaults must be a preset name (str), got {preset!r}")
    if preset is None and aligned_index is None and alignment_size is None:
        return
    ndim = st.ndim
    if aligned_index is not None:
        ai = tuple(_ints("aligned_index", aligned_index))
        if len(ai) != ndim:
            raise ValueError(f"aligned_index {ai} has {len(ai)} entries for {ndim} dimensions")
        for d, (i, n) in enumerate(zip(ai, st.shape)):
            if not 0 <= i < max(n, 1):
                raise ValueError(f"aligned_index {ai} is outside the buffer's shape {st.shape} "
                                 f"in dimension {d}")
    else:
        ai = st.__gt_origin__
    alignment = None
    if alignment_size is not None:
        alignment = _args.int_scalar("alignment_size", alignment_size)
        if alignment <= 0:
            raise ValueError(f"alignment_size must be positive, got {alignment}")
    if preset is not None:
        p = plan(st.shape, st.dtype, backend=preset, dims=st.dims)
        if p["layout"] != st.layout:
            raise ValueError(
                f"the buffer's stride order {st.layout} (strides {st.strides}) is not preset "
                f"{preset!r}'s {p['layout']} for dims {st.dims}")
        if p["device"] == "gpu" and not st._has_device:
            raise ValueError(f"preset {preset!r} is a device preset, but no device buffer was "
                             "given")
        if alignment is None:
            alignment = p["alignment_bytes"]
    if alignment is not None and alignment > 1:
        g = st._geom()
        address = g.data + sum(i * s for i, s in zip(ai, g.strides))
        if address % alignment:
            raise ValueError(
                f"the element at aligned_index {tuple(ai)} (address {address:#x}) is not aligned "
                f"to {alignment} bytes (it is {address % alignment} bytes past a boundary)")
