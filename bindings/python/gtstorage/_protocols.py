# gtstorage Python binding: the buffer protocols of a Storage: NumPy's array interface, the CUDA
# Array Interface, DLPack, PEP 688's buffer protocol and GT4Py's __gt_*__ interfaces.
"""Storage protocols: array interfaces, DLPack, buffers, GT4Py interfaces."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _args, _capi, _dlpack
from ._capi import GTNoSuchBufferError, check, lib
from ._core import _S, allocators
from ._handle import _CAI_DEVICE_TYPES
from ._sync import Synchronization


class BufferProtocols(Synchronization):
    """The protocols through which other libraries see a storage's memory."""

    # ---- array interfaces ----------------------------------------------------------------------

    @property
    def __array_interface__(self) -> dict[str, Any]:
        """NumPy array interface of the host buffer. For a mirrored storage the host is made
        current and marked modified first, since the consumer may write through it."""
        if not self._has_host:
            raise GTNoSuchBufferError("__array_interface__: the storage has no host buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        if self._has_device:
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__array_interface__")
            check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__array_interface__")
        return dict(self._geom(_capi.SIDE_HOST).interface)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 of the device buffer (device made current, marked modified).

        Only memory a CUDA (or HIP) consumer can use is exported: the emulated device's memory is
        host memory, and the interface has no field to say so, so it is not offered at all
        (``hasattr`` is False; DLPack reports it as kDLExtDev)."""
        if not self._has_device:
            raise GTNoSuchBufferError("__cuda_array_interface__: the storage has no device buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        kind = self._geom(_capi.SIDE_DEVICE).device_type
        if kind not in _CAI_DEVICE_TYPES:
            raise AttributeError(
                "__cuda_array_interface__: the device buffer is not CUDA memory (DLPack device "
                f"type {kind}: the emulated device, whose memory is host memory); CuPy and other "
                "CUDA consumers cannot use it")
        check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__cuda_array_interface__")
        check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__cuda_array_interface__")
        return self._cuda_interface_dict()

    def _cuda_interface_dict(self) -> dict[str, Any]:
        """The device buffer described like a CUDA Array Interface dict (whatever the device)."""
        d = self._raw_interface(_capi.SIDE_DEVICE)
        i = self._info(_capi.SIDE_DEVICE)
        stream = int(i.stream)
        if stream:
            d["stream"] = stream
        elif int(i.device_type) == _capi.DL_ROCM:
            # HIP has no handle 1 for its legacy stream; the buffer was made current
            # synchronously, so there is nothing to wait for.
            d["stream"] = None
        else:
            # CAI v3: 0 is not allowed, 1 names the legacy default stream the library's 0 means.
            d["stream"] = 1
        return d

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """The values as a NumPy array (the NumPy ``__array__`` protocol).

        The zero-copy host view unless a copy or a conversion is needed (a device-only storage is
        copied to the host).

        Parameters
        ----------
        dtype : dtype-like, optional
            Element type of the result (a conversion copies).
        copy : bool, optional
            True: always a copy; False: never (ValueError where one is needed); None: a copy only
            where needed.

        Returns
        -------
        numpy.ndarray
            The host view (which keeps the storage alive) or a copy.
        """
        if self._has_host:
            if copy is False and dtype is not None and np.dtype(dtype) != self.dtype:
                raise ValueError("__array__: a dtype conversion needs a copy, but copy=False")
            arr = self.to_numpy()
        else:
            if copy is False:
                raise ValueError("__array__: the storage has only a device buffer; reading it "
                                 "from NumPy needs a copy, but copy=False")
            arr = self._host_array_for_read()
            copy = False  # already a fresh array
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack_device__(self) -> tuple[int, int]:
        """(DLPack device type, device id) of the buffer __dlpack__ exports by default."""
        g = self._geom(_capi.SIDE_DEVICE if self._has_device else _capi.SIDE_HOST)
        return g.device_type, g.device_id

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> object:
        """DLPack export (the Python array API's ``__dlpack__``).

        Parameters
        ----------
        stream : int, optional
            The consumer's stream (device buffers; None or -1 for a host buffer). The buffer is
            made current synchronously, so the consumer may use it at once on any stream.
        max_version : tuple of int, optional
            The highest DLPack version the consumer takes: ``(1, x)`` or higher gives a versioned
            capsule (which carries the read-only flag), None a legacy one.
        dl_device : tuple of int, optional
            ``(device type, device id)`` the consumer wants; the host of a storage with a device
            buffer is exported (a copy for a device-only storage unless ``copy=False``).
        copy : bool, optional
            True: export a fresh copy; False: never copy (BufferError where one is needed).

        Returns
        -------
        PyCapsule
            A ``dltensor`` (or ``dltensor_versioned``) capsule; the export keeps the storage's
            buffers alive until the consumer's deleter runs.

        Raises
        ------
        BufferError
            An export the storage cannot make (a read-only storage to a legacy capsule, another
            device without a copy, stream 0 for CUDA).
        TypeError, OverflowError
            Arguments of the wrong type or range.
        """
        if max_version is not None:
            if (not isinstance(max_version, tuple) or len(max_version) != 2
                    or not all(_args.is_int(v) for v in max_version)):
                raise TypeError(f"__dlpack__: max_version must be a (major, minor) tuple of ints, "
                                f"got {max_version!r}")
        if stream is not None:
            stream = _args.int_scalar("__dlpack__: stream", stream, -1, _args.UINT64_MAX)
        side = _capi.SIDE_DEVICE if self._has_device else _capi.SIDE_HOST
        if dl_device is not None:
            try:
                wanted = (int(dl_device[0]), int(dl_device[1]))
            except (TypeError, ValueError, IndexError):
                raise TypeError("__dlpack__: dl_device must be a (type, id) pair, "
                                f"got {dl_device!r}") from None
            if wanted == self.__dlpack_device__():
                pass
            elif wanted[0] == _capi.DL_CPU and self._has_host:
                side = _capi.SIDE_HOST
            elif wanted[0] == _capi.DL_CPU and copy is not False:
                return self._host_copy()._export(_capi.SIDE_HOST, stream, max_version)
            else:
                raise BufferError(f"__dlpack__: cannot export to device {wanted} without a copy "
                                  f"(the storage is on {self.__dlpack_device__()})")
        if copy:
            return self.copy()._export(side, stream, max_version)
        return self._export(side, stream, max_version)

    def _host_copy(self: _S) -> _S:
        out: _S = allocators.empty_like(self, device=None)
        check(lib.gtstorage_copy(out._handle, self._handle), "__dlpack__")
        return out

    def _export(self, side: int, stream: int | None, max_version: Any) -> object:
        versioned = max_version is not None and max_version[0] >= 1
        readonly = self._geom(side).readonly
        if readonly and not versioned:
            # A legacy capsule has no read-only flag: a consumer would be free to write.
            raise BufferError("__dlpack__: a read-only storage can only be exported as a versioned "
                              "DLPack capsule (max_version >= (1, 0)), which carries the flag")
        if side == _capi.SIDE_HOST:
            if stream is not None and stream != -1:
                raise BufferError("__dlpack__: stream must be None for a host buffer, "
                                  f"got {stream!r}")
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__dlpack__")
            if not readonly:  # the consumer may write
                check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__dlpack__")
        else:
            # DLPack: for CUDA 0 is disallowed (ambiguous), 1 is the legacy and 2 the per-thread
            # default stream; for ROCm 0 is the default stream (what PyTorch on ROCm passes).
            if stream == 0 and self.__dlpack_device__()[0] != _capi.DL_ROCM:
                raise BufferError("__dlpack__: stream 0 is ambiguous and not allowed for CUDA "
                                  "(1 is the legacy default stream, 2 the per-thread one)")
            # acquire is synchronous: no work on the data is pending on any stream afterwards, so
            # every consumer stream (or stream=-1, "no synchronization") may use it at once.
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__dlpack__")
            if not readonly:
                check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__dlpack__")
        return _dlpack.to_capsule(self._handle, side, versioned)

    # ---- GT4Py / GDP-3 interfaces ----------------------------------------------------------

    @property
    def __gt_dims__(self) -> tuple[str, ...]:
        """Dimension labels for GT4Py (the storage-interface note's ``__gt_dims__``)."""
        return self._geom().dims

    @property
    def __gt_origin__(self) -> tuple[int, ...]:
        """Index of the first interior point (the lower halo widths): GT4Py's default origin."""
        return self._geom().origin

    @property
    def default_origin(self) -> tuple[int, ...]:
        """The allocation note's spelling of ``__gt_origin__``."""
        return self._geom().origin

    @property
    def __gt_interface__(self) -> dict[str | None, dict[str, Any]]:
        """The storage-interface note's ``__gt_interface__``: per device (None = host, "gpu") the
        array interface with ``"dims"`` and the ``"acquire"``, ``"release"`` and ``"touch"``
        callables a stencil calls around a computation (acquire before: that side is made
        current; touch after, for outputs: that side is marked modified; release after: waits
        for work queued on the storage's stream, so the buffers are settled)."""
        out = self.__gt_data_interface__
        for d in out.values():
            d["release"] = self._release_after_compute
        return out

    def _release_after_compute(self) -> None:
        if self._has_device:
            check(lib.gtstorage_wait_stream(self._handle, 0), "release")

    @property
    def __gt_data_interface__(self) -> dict[str | None, dict[str, Any]]:
        """GDP-3 data interface: per device (None = host, "gpu") the array interface plus
        "acquire"/"touch" callables, "dims" and "halo"."""
        out: dict[str | None, dict[str, Any]] = {}
        extra = {"dims": self.dims, "halo": self.halo}
        if self._has_host:
            d = self._raw_interface(_capi.SIDE_HOST)
            d.update(extra, acquire=self.device_to_host, touch=self.set_host_modified)
            out[None] = d
        if self._has_device:
            d = self._cuda_interface_dict()
            # What the memory is (a consumer must not take the emulated device for CUDA).
            d.update(extra, acquire=self.host_to_device, touch=self.set_device_modified,
                     device=self.__dlpack_device__())
            out["gpu"] = d
        return out

    if hasattr(np.ndarray, "__buffer__"):  # Python >= 3.12: PEP 688 buffer protocol in Python

        def __buffer__(self, flags: int) -> memoryview:
            """Python buffer protocol (PEP 688) over the host buffer.

            NumPy asks for this before ``__array_interface__`` on Python 3.12, so it is fast: a
            host-only storage hands out one cached memoryview of its host view."""
            # (The ndarray -> memoryview calls are type-checked as Python 3.10, whose NumPy stubs
            # give ndarray no __buffer__; this method exists on 3.12 and later only.)
            if self._has_device or not self._has_host:
                if flags & 1:  # inspect.BufferFlags.WRITABLE
                    return memoryview(self._write_array("__buffer__"))  # type: ignore[arg-type]
                return memoryview(self._read_array())  # type: ignore[arg-type]
            mv = self._host_mv
            if mv is None:
                mv = self._host_mv = memoryview(
                    self._host_view(write=False))  # type: ignore[arg-type]
            if flags & 1 and mv.readonly:
                raise BufferError("__buffer__: the storage is read-only")
            return mv

        def __release_buffer__(self, view: memoryview) -> None:
            if view is not self._host_mv:
                view.release()
