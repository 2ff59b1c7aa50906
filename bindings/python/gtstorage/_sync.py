# gtstorage Python binding: host/device synchronization of a Storage, GDP-3's names over the C
# library's verbs (gtstorage_sync_to, gtstorage_modify, gtstorage_need_sync, ...).
"""Storage synchronization: GDP-3 names over the library's sync verbs."""

from __future__ import annotations

import ctypes
from typing import Any

from . import _args, _capi
from ._capi import check, lib
from ._core import StorageCore


class Synchronization(StorageCore):
    """Host/device synchronization of a storage (no-ops without a host/device pair)."""

    # ---- host/device synchronization (no-ops without a host/device pair) ----------------------
    # GDP-3's names, implemented with the C library's DualView-style vocabulary
    # (gtstorage_sync_to, gtstorage_modify, gtstorage_need_sync, gtstorage_mark_synchronized).

    def device_to_host(self, *, force: bool = False) -> None:
        """Copies device -> host if the device is modified; both are then in sync.

        Parameters
        ----------
        force : bool, optional
            Copy even if the device is not marked modified.
        """
        self.sync_to("host", force=force)

    def host_to_device(self, *, force: bool = False) -> None:
        """Copies host -> device if the host is modified; both are then in sync.

        Parameters
        ----------
        force : bool, optional
            Copy even if the host is not marked modified.
        """
        self.sync_to("device", force=force)

    def set_host_modified(self) -> None:
        """Marks the host side modified (the next device access copies host -> device)."""
        self.modify("host")

    def set_device_modified(self) -> None:
        """Marks the device side modified (the next host access copies device -> host)."""
        self.modify("device")

    def set_synchronized(self) -> None:
        """Declares both sides equal, without copying."""
        check(lib.gtstorage_mark_synchronized(self._handle), "set_synchronized")

    def synchronize(self) -> None:
        """Copies whichever side is modified to the other."""
        for side in ("host", "device"):
            if self.need_sync(side):
                self.sync_to(side)
                return

    @staticmethod
    def _side(side: Any, what: str) -> int:
        if side in ("host", _capi.SIDE_HOST) and not isinstance(side, bool):
            return _capi.SIDE_HOST
        if side in ("device", _capi.SIDE_DEVICE) and not isinstance(side, bool):
            return _capi.SIDE_DEVICE
        raise ValueError(f"{what}: side must be 'host' or 'device', got {side!r}")

    def sync_to(self, side: Any, *, force: bool = False, stream: int | None = None) -> None:
        """Makes ``side`` current: copies the other side into it if that one is modified.

        Parameters
        ----------
        side : {"host", "device"}
            The side made current.
        force : bool, optional
            Copy even if the other side is not marked modified.
        stream : int, optional
            Only enqueue the copy on this stream (0: the storage's own); later accesses through the
            library wait for it. None (default) copies synchronously.
        """
        s = self._side(side, "sync_to")
        flags = _capi.SYNC_FLAG_FORCE if force else 0
        if stream is None:
            check(lib.gtstorage_sync_to(self._handle, s, flags), "sync_to")
        else:
            stream = _args.int_scalar("sync_to: stream", stream, 0, _args.UINT64_MAX)
            check(lib.gtstorage_sync_to_async(self._handle, s, flags, stream), "sync_to")

    def modify(self, side: Any, *, force: bool = False) -> None:
        """Marks ``side`` modified (the next access of the other side copies it over).

        Parameters
        ----------
        side : {"host", "device"}
            The side marked modified.
        force : bool, optional
            Discard the other side's changes if it is modified too, instead of raising.

        Raises
        ------
        GTSyncConflictError
            The other side is already modified (and ``force`` is False).
        """
        s = self._side(side, "modify")
        check(lib.gtstorage_modify(self._handle, s, _capi.SYNC_FLAG_FORCE if force else 0),
              "modify")

    def need_sync(self, side: Any) -> bool:
        """Whether ``sync_to(side)`` would copy.

        Parameters
        ----------
        side : {"host", "device"}
            The side asked about.

        Returns
        -------
        bool
            True if the other side is modified.
        """
        s = self._side(side, "need_sync")
        out = ctypes.c_int32()
        check(lib.gtstorage_need_sync(self._handle, s, ctypes.byref(out)), "need_sync")
        return bool(out.value)

    def wait_stream(self, stream: int = 0) -> None:
        """Blocks until the work queued on ``stream`` has completed.

        Parameters
        ----------
        stream : int, optional
            A stream handle; 0 (default) is the storage's own stream.
        """
        stream = _args.int_scalar("wait_stream: stream", stream, 0, _args.UINT64_MAX)
        check(lib.gtstorage_wait_stream(self._handle, stream), "wait_stream")

    def set_stream(self, stream: int) -> None:
        """Sets the stream that ``__cuda_array_interface__`` reports and asynchronous syncs use.

        Parameters
        ----------
        stream : int
            A stream handle of the device runtime (0: the default stream).
        """
        stream = _args.int_scalar("set_stream: stream", stream, 0, _args.UINT64_MAX)
        check(lib.gtstorage_set_stream(self._handle, stream), "set_stream")

    def transfer_stats(self) -> dict[str, int]:
        """Host<->device transfer counters of the buffers behind this storage (shared by views)."""
        out = _capi.new_struct(_capi.TransferStats)
        check(lib.gtstorage_get_transfer_stats(self._handle, ctypes.byref(out)), "transfer_stats")
        return {k: int(getattr(out, k))
                for k in ("h2d_count", "h2d_bytes", "d2h_count", "d2h_bytes")}

    def refcount(self) -> int:
        """Reference count of this handle in the library (DLPack exports add to it)."""
        out = ctypes.c_int64()
        check(lib.gtstorage_refcount(self._handle, ctypes.byref(out)), "refcount")
        return int(out.value)


# ndarray methods that read the values (result: a new array or a scalar, as NumPy returns) and
# methods whose result may be a view of the host buffer (the host is then marked modified).
