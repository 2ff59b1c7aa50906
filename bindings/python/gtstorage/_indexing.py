# gtstorage Python binding: indexing a Storage (NumPy's basic indexing as library views, element
# access, and assignment of values from host or device sources).
"""Storage indexing: views by slices, element reads and writes, assignment."""

from __future__ import annotations

import ctypes
import operator
from typing import Any

import numpy as np

from . import _args, _capi
from ._capi import check, lib
from ._core import _S, StorageCore, _is_gpu_value, _wrap_cuda_array
from ._handle import _INT64_MAX, _clamp, _new_handle, _tuple


class Indexing(StorageCore):
    """``storage[key]`` and ``storage[key] = value``: basic indexing gives views (new library
    handles), an element key reads or writes one value, anything else goes through NumPy."""

    def _specs(self, key: Any) -> tuple[list[tuple[int, int, int, int]], bool] | None:
        """C slice specs for a basic-indexing key, or None for advanced indexing."""
        if not isinstance(key, tuple):
            key = (key,)
        shape = self.shape
        ndim = len(shape)
        n_ellipsis = 0
        for k in key:  # one pass: an advanced index anywhere makes the whole key advanced
            if type(k) is slice or type(k) is int:
                continue
            if k is Ellipsis:
                n_ellipsis += 1
            elif (k is None or isinstance(k, (list, np.ndarray, bool, np.bool_))
                  or hasattr(k, "__array_interface__")):
                return None
        if n_ellipsis > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_ellipsis:
            pos = next(i for i, k in enumerate(key) if k is Ellipsis)
            fill = ndim - (len(key) - 1)
            key = key[:pos] + (slice(None),) * max(fill, 0) + key[pos + 1:]
        if len(key) > ndim:
            raise IndexError(f"too many indices: storage is {ndim}-dimensional, but {len(key)} "
                             "were indexed")
        key = key + (slice(None),) * (ndim - len(key))
        specs = []
        # Every dimension indexed by an int gives a scalar; an ellipsis always gives a view (NumPy:
        # s[...] of a 0-d array is a 0-d view, s[()] its value).
        all_int = n_ellipsis == 0
        for d, k in enumerate(key):
            if type(k) is int:  # the common case first (operator.index below takes any index)
                if not -shape[d] <= k < shape[d]:
                    raise IndexError(f"index {k} is out of bounds for axis {d} with size "
                                     f"{shape[d]}")
                specs.append((k, _capi.SLICE_NONE, 1, _capi.SLICE_INDEX))
                continue
            if isinstance(k, slice):
                all_int = False
                step = 1 if k.step is None else operator.index(k.step)
                if step == 0:
                    raise ValueError("slice step cannot be zero")
                # Python integers are unbounded: clamp like CPython's slice handling, so nothing
                # wraps in the int64 fields and no value collides with the SLICE_NONE sentinel.
                step = _clamp(step, -_INT64_MAX, _INT64_MAX)
                start = (_capi.SLICE_NONE if k.start is None
                         else _clamp(operator.index(k.start), -_INT64_MAX, _INT64_MAX))
                stop = (_capi.SLICE_NONE if k.stop is None
                        else _clamp(operator.index(k.stop), -_INT64_MAX, _INT64_MAX))
                specs.append((start, stop, step, _capi.SLICE_RANGE))
                continue
            try:
                i = operator.index(k)
            except TypeError:
                return None
            if not -shape[d] <= i < shape[d]:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {shape[d]}")
            specs.append((i, _capi.SLICE_NONE, 1, _capi.SLICE_INDEX))
        return specs, all_int

    def _slice(self: _S, specs: list[tuple[int, int, int, int]]) -> _S:
        arr = (_capi.SliceSpec * max(len(specs), 1))()
        for i, (start, stop, step, kind) in enumerate(specs):
            arr[i].start, arr[i].stop, arr[i].step, arr[i].kind = start, stop, step, kind
        return self._view(_new_handle(lib.gtstorage_slice, self._handle, arr, len(specs),
                                      context="index"))

    def __getitem__(self, key: Any) -> Any:
        """The selected elements, like ``ndarray.__getitem__``.

        Parameters
        ----------
        key : int, slice, Ellipsis, tuple of them, or an advanced index
            Basic indexing gives a view (a scalar when every dimension is indexed by an int);
            advanced indexing (arrays, lists, booleans, ``None``) gives a NumPy array, like NumPy.

        Returns
        -------
        Storage or numpy.ndarray or scalar
            A view sharing buffers and sync state, a new NumPy array, or the element's value.
        """
        arr = self._element_array(key)
        if arr is not None:
            return arr[key]
        parsed = self._specs(key)
        if parsed is None:
            return self._host_array_for_read()[key]
        specs, all_int = parsed
        view = self._slice(specs)
        if all_int:
            return view._read_scalar()
        return view

    def _element_array(self, key: Any) -> np.ndarray | None:
        """The cached host ndarray when @p key names one element with Python ints and this
        storage is host-only with a numeric dtype, else None.

        Element loops (``s[i, j] = v``) are the hot case: NumPy indexes, bounds-checks (the same
        IndexError text) and wraps negative indices exactly as the general path does, but
        without a view handle per element (docs/python.md, "The Storage object"). A storage with a
        device side takes the general path, which copies the one element from the side that is
        current instead of syncing the buffer.
        """
        if self._has_device or not self._has_host:
            return None
        if type(key) is not tuple:
            if type(key) is not int:
                return None
            key = (key,)
        if not all(type(k) is int for k in key):
            return None
        arr = self._host_arr
        if arr is None:
            arr = self._host_view(False)
        if len(key) != arr.ndim or arr.dtype.kind not in "biufc":
            return None
        return arr

    def _read_scalar(self) -> Any:
        out = np.empty((), dtype=self.dtype)
        self._copy_to_ndarray(out)
        return out[()]

    def __setitem__(self, key: Any, value: Any) -> None:
        """Writes ``value`` into the selected elements, on the side that is current.

        Parameters
        ----------
        key : int, slice, Ellipsis, tuple of them, or an advanced index
            As in :meth:`__getitem__`.
        value : scalar, array-like, Storage or device array
            Broadcast to the selection and converted to the dtype, as NumPy does; a GPU-enabled
            value is written to the device buffer of a host + device pair (GDP-3).
        """
        if type(value) in (float, int, bool, complex) or isinstance(value, np.number):
            arr = self._element_array(key)
            if arr is not None and arr.flags.writeable:
                # The general path's conversion (np.asarray to the dtype), then one store.
                arr[key] = np.asarray(value, dtype=arr.dtype)
                return
        _args.array_source("__setitem__: value", value)
        parsed = self._specs(key)
        if parsed is None:
            # Advanced indexing: write through the host buffer with NumPy.
            if not self._has_host:
                raise IndexError("advanced indexing needs a host buffer; this storage has none")
            check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_HOST, 0), "__setitem__")
            arr = np.asarray(self._raw_array_interface_object(_capi.SIDE_HOST))
            arr[key] = np.asarray(value) if isinstance(value, StorageCore) else value
            check(lib.gtstorage_modify(self._handle, _capi.SIDE_HOST, 0), "__setitem__")
            return
        self._slice(parsed[0])._assign(value)

    def _assign(self, value: Any) -> None:
        """Writes @p value (scalar, array-like, storage) into every element of this view."""
        if (isinstance(self, StorageCore._kinds[2]) and _is_gpu_value(value)):
            self._assign_on_device(value)
            return
        if isinstance(value, StorageCore) and value.shape == self.shape:
            check(lib.gtstorage_copy(self._handle, value._handle), "__setitem__")
            return
        if isinstance(value, StorageCore):
            value = value._host_array_for_read()
        if np.ndim(value) == 0 and not hasattr(value, "__cuda_array_interface__"):
            scalar = np.asarray(value, dtype=self.dtype)
            check(lib.gtstorage_fill(self._handle, scalar.ctypes.data_as(ctypes.c_void_p)),
                  "__setitem__")
            return
        if hasattr(value, "__cuda_array_interface__") and not hasattr(value, "__array_interface__"):
            wrapped = _wrap_cuda_array(value)
            src = wrapped if wrapped.shape == self.shape else None
            if src is None:
                raise ValueError("__setitem__: a device array value must have the target's shape")
            check(lib.gtstorage_copy(self._handle, src._handle), "__setitem__")
            return
        self._copy_from_ndarray(np.asarray(value))

    def _assign_on_device(self, value: Any) -> None:
        # GDP-3: a GPU-enabled value is written to the device buffer of a mirrored storage. The C
        # copy writes the host side of a storage that has one, so the device side of this view is
        # described as a device-only storage (no copy) and written through that.
        check(lib.gtstorage_sync_to(self._handle, _capi.SIDE_DEVICE, 0), "__setitem__")
        dev = self._info(_capi.SIDE_DEVICE)
        wrap = _capi.new_struct(_capi.WrapOptions)
        shape = _capi.int64_array(_tuple(dev.shape, dev.ndim))
        strides = _capi.int64_array(_tuple(dev.strides, dev.ndim))
        wrap.ndim = dev.ndim
        wrap.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        wrap.device_strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        wrap.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        wrap.dtype = dev.typestr
        wrap.device_data = dev.data
        wrap.device_id = -1  # where the runtime says it lives (a host kind's DLPack id is 0)
        target = StorageCore._from_handle(_new_handle(lib.gtstorage_wrap, ctypes.byref(wrap),
                                                  context="__setitem__"))
        src: StorageCore | None
        if isinstance(value, StorageCore):
            src = value
        elif hasattr(value, "__cuda_array_interface__"):
            src = _wrap_cuda_array(value)
        else:
            src = None
        if src is not None and src.shape == target.shape:
            check(lib.gtstorage_copy(target._handle, src._handle), "__setitem__")
        else:
            host = np.asarray(value._host_array_for_read() if isinstance(value, StorageCore)
                              else value)
            target._copy_from_ndarray(host)
        check(lib.gtstorage_modify(self._handle, _capi.SIDE_DEVICE, 0), "__setitem__")
