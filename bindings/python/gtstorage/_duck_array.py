# gtstorage Python binding: a Storage as a NumPy duck array (operators, ufuncs, array functions,
# ndarray methods), its conversions and its pickling (by value).
"""Storage as a NumPy duck array; conversions; pickling."""

from __future__ import annotations

import operator
import os
import pickle
from collections.abc import Callable, Iterator
from typing import Any, Literal

import numpy as np

from . import _args, _capi
from ._capi import GTNoSuchBufferError
from ._core import StorageCore, allocators
from ._indexing import Indexing


class DuckArray(Indexing, np.lib.mixins.NDArrayOperatorsMixin):
    """NumPy's operators, ufuncs, array functions and ndarray methods on a storage's values."""

    __array_priority__ = 10

    # ---- NumPy duck array: operators, ufuncs, array functions, ndarray methods -----------------
    #
    # Results follow NumPy's copy semantics: anything NumPy returns as a new array is a new
    # numpy.ndarray; in-place operators and ``out=`` write into the storage. Every read makes the
    # host current (a device-to-host copy of a mirrored storage whose device side is newer) and
    # every write marks the host modified, so the sync state stays right.

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy ufuncs on storages (NEP 13).

        Inputs are read from the host (made current first), ``out=`` storages are written through
        and marked modified; results are what NumPy returns (new NumPy arrays, or the given
        ``out``).

        Parameters
        ----------
        ufunc : numpy.ufunc
            The ufunc called.
        method : str
            ``"__call__"``, ``"reduce"``, ``"accumulate"``, ``"outer"``, ``"at"`` …
        *inputs : array-like
            Its inputs (storages among them).
        **kwargs
            Its keywords (``out=``, ``where=``, ``dtype=`` …).

        Returns
        -------
        numpy.ndarray or scalar or Storage or tuple
            As NumPy returns; a storage given as ``out`` is returned itself.
        """
        out = kwargs.get("out")
        outs = out if isinstance(out, tuple) else (() if out is None else (out,))
        if outs and any(isinstance(o, StorageCore) for o in outs):
            kwargs["out"] = tuple(
                o._write_array(ufunc.__name__) if isinstance(o, StorageCore) else o for o in outs)
        args = [x._read_array() if isinstance(x, StorageCore) else x for x in inputs]
        result = getattr(ufunc, method)(*args, **kwargs)
        if outs:
            # NumPy returns its out arrays: hand back the storages the caller gave instead.
            if isinstance(result, tuple):
                return tuple(o if isinstance(o, StorageCore) else r for o, r in zip(outs, result))
            return outs[0] if isinstance(outs[0], StorageCore) else result
        return result

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: dict[str, Any]) -> Any:
        """NumPy functions (``np.where``, ``np.concatenate``, …) on storages (NEP 18).

        Parameters
        ----------
        func : callable
            The NumPy function called.
        types : collection of type
            The types that implement ``__array_function__`` among the arguments.
        args : tuple
            Its positional arguments; storages are replaced by their values.
        kwargs : dict
            Its keywords; a storage given as ``out`` is written through.

        Returns
        -------
        object
            As NumPy returns; a storage given as ``out`` is returned itself.
        """
        def unwrap(x: Any) -> Any:
            if isinstance(x, StorageCore):
                return x._read_array()
            if isinstance(x, (list, tuple)):
                return type(x)(unwrap(v) for v in x)
            return x

        out = kwargs.get("out")
        kw = {k: (v._write_array(func.__name__) if k == "out" and isinstance(v, StorageCore)
                  else unwrap(v))
              for k, v in kwargs.items()}
        result = func(*unwrap(args), **kw)
        return out if isinstance(out, StorageCore) else result

    def fill(self, value: Any) -> None:
        """Sets every element to ``value``, on the side that is current, without a transfer.

        Parameters
        ----------
        value : scalar
            Converted to the dtype like NumPy converts (an array-like is broadcast).
        """
        _args.array_source("fill: value", value)
        self._assign(value)

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None) -> None:
        """Sorts in place along ``axis`` (``numpy.ndarray.sort``).

        The host buffer is made current, sorted and marked modified.

        Parameters
        ----------
        axis : int, optional
            Dimension to sort along (default: the last).
        kind : str, optional
            NumPy's sorting algorithm (``"quicksort"``, ``"stable"`` …).
        order : str or list of str, optional
            Fields to compare first (structured dtypes).
        """
        self._write_array("sort").sort(axis=axis, kind=kind, order=order)

    @property
    def flags(self) -> Any:
        """``numpy.ndarray.flags`` of the host view (C/F contiguity, alignment, writeable)."""
        return self._read_array().flags

    @property
    def real(self) -> np.ndarray:
        """Real part (a NumPy view of the host buffer for complex dtypes, like ndarray.real)."""
        return self._write_array("real").real if not self.readonly else self._read_array().real

    @property
    def imag(self) -> np.ndarray:
        """Imaginary part (like ndarray.imag)."""
        return self._write_array("imag").imag if not self.readonly else self._read_array().imag

    @property
    def base(self) -> Any:
        """What the memory belongs to, like ``ndarray.base``: None for a storage that owns its
        buffers (an allocation), the storage a view was made from (the owner, as NumPy collapses
        chains of views), or the wrapped object of :func:`as_storage` (e.g. the NumPy array)."""
        return self._base

    @property
    def flat(self) -> np.flatiter:
        """``numpy.ndarray.flat`` of the values: a flat iterator over the host view, which
        writes through it reach the storage (the host is made current and marked modified). A
        read-only or device-only storage gives an iterator over read-only values (a host copy
        for a device-only storage)."""
        return self._values("flat").flat

    @property
    def ctypes(self) -> Any:
        """``numpy.ndarray.ctypes`` of the host buffer (its address as a ctypes pointer, shape,
        strides). The host is made current and, unless the storage is read-only, marked
        modified, since the pointer may be written through (as ``__array_interface__``)."""
        if not self._has_host:
            raise GTNoSuchBufferError("ctypes: the storage has no host buffer",
                                      _capi.ERROR_NO_SUCH_BUFFER)
        return self._host_view(write=not self.readonly).ctypes

    def _values(self, context: str) -> np.ndarray:
        """The host view for reading and writing (host current, marked modified) of a writable
        storage with a host buffer; otherwise read-only values (a device-only storage's are a
        host copy, which writes could not reach)."""
        if self._has_host and not self.readonly:
            return self._write_array(context)
        arr = self._read_array()
        if arr.flags.writeable:
            arr = arr.view()
            arr.flags.writeable = False
        return arr

    def put(self, indices: Any, values: Any,
            mode: Literal["raise", "wrap", "clip"] = "raise") -> None:
        """Writes ``values`` at the flat ``indices`` (``numpy.ndarray.put``).

        The host buffer is made current, written and marked modified.

        Parameters
        ----------
        indices : array-like of int
            Flat (C-order) indices of the elements written.
        values : array-like
            Values written (repeated when shorter than ``indices``).
        mode : {"raise", "wrap", "clip"}, optional
            What an out-of-range index does, as in NumPy.
        """
        self._write_array("put").put(indices, values, mode=mode)

    def partition(self, kth: Any, axis: int = -1, kind: Literal["introselect"] = "introselect",
                  order: Any = None) -> None:
        """Partitions in place along ``axis`` (``numpy.ndarray.partition``).

        The host buffer is made current, partitioned and marked modified.

        Parameters
        ----------
        kth : int or sequence of int
            Element(s) that end up in their sorted position.
        axis : int, optional
            Dimension to partition along (default: the last).
        kind : str, optional
            NumPy's selection algorithm.
        order : str or list of str, optional
            Fields to compare first (structured dtypes).
        """
        self._write_array("partition").partition(kth, axis=axis, kind=kind, order=order)

    def byteswap(self, inplace: bool = False) -> StorageCore | np.ndarray:
        """The values with their bytes swapped (``numpy.ndarray.byteswap``).

        Parameters
        ----------
        inplace : bool, optional
            Swap the storage's own bytes (the host is made current and marked modified) instead of
            returning a new array.

        Returns
        -------
        numpy.ndarray or Storage
            A new NumPy array, or with ``inplace=True`` the storage itself.
        """
        if inplace:
            self._write_array("byteswap").byteswap(True)
            return self
        swapped: np.ndarray = self._read_array().byteswap(False)
        return swapped

    def setfield(self, val: Any, dtype: Any, offset: int = 0) -> None:
        """Writes ``val`` into a field of every element (``numpy.ndarray.setfield``).

        The host buffer is made current, written and marked modified.

        Parameters
        ----------
        val : scalar or array-like
            Value written into the field.
        dtype : dtype-like
            Type of the field.
        offset : int, optional
            Byte offset of the field in the element.
        """
        self._write_array("setfield").setfield(val, dtype, offset)

    def dumps(self) -> bytes:
        """The pickle of the storage (``numpy.ndarray.dumps``).

        Returns
        -------
        bytes
            ``pickle.loads`` gives back a storage with the same values, dtype, preset, layout, halo
            and dims.
        """
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    def dump(self, file: Any) -> None:
        """Pickles the storage into ``file`` (``numpy.ndarray.dump``).

        Parameters
        ----------
        file : str or os.PathLike or file object
            A path (the file is written) or a binary file object; ``pickle.load`` reads it back.
        """
        if isinstance(file, (str, bytes, os.PathLike)):
            with open(file, "wb") as f:
                pickle.dump(self, f, protocol=pickle.HIGHEST_PROTOCOL)
        else:
            pickle.dump(self, file, protocol=pickle.HIGHEST_PROTOCOL)

    def __bool__(self) -> bool:
        return bool(self._read_array())

    def __float__(self) -> float:
        return float(self._read_array())

    def __int__(self) -> int:
        return int(self._read_array())

    def __complex__(self) -> complex:
        return complex(self._read_array())

    def __index__(self) -> int:
        return operator.index(self._read_array())

    def __contains__(self, value: object) -> bool:
        return value in self._read_array()

    def __iter__(self) -> Iterator[Any]:
        """Iterates over the first dimension (views, or scalars for 1-d), like NumPy."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d storage")
        for i in range(self.shape[0]):
            yield self[i]

    # ---- pickle: by value (data, dtype, preset, layout, halo, dims, device) ---------------------

    def __reduce__(self) -> tuple[Callable[[dict[str, Any]], StorageCore], tuple[dict[str, Any]]]:
        state = {
            "data": np.array(self._read_array(), order="K"),
            "backend": self._params.get("backend"),
            "layout": self.layout,
            "halo": self.halo,
            "dims": self.dims,
            "aligned_index": self.aligned_index,
            "alignment_size": self._params.get("alignment_size"),
            "device": self.device,
            "managed": self.managed,
            "readonly": self.readonly,
        }
        return (_unpickle_storage, (state,))


_READ_METHODS = ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose",
                 "clip", "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot",
                 "flatten", "item", "max", "mean", "min", "nonzero", "prod", "ptp", "repeat",
                 "round", "searchsorted", "std", "sum", "take", "tobytes", "tofile", "tolist",
                 "trace", "var")
_VIEW_METHODS = ("getfield", "ravel", "reshape", "squeeze", "swapaxes", "view")


# ndarray methods that write the values in place (through the host buffer, marked modified).
_INPLACE_METHODS = ("itemset",)


def _delegate(name: str, write: bool,
              inplace: bool = False) -> Callable[..., Any] | None:
    ndarray_method = getattr(np.ndarray, name, None)
    if ndarray_method is None:  # e.g. ptp, gone in NumPy 2
        return None

    if inplace:
        def method(self: StorageCore, *args: Any, **kwargs: Any) -> Any:
            return getattr(self._write_array(name), name)(*args, **kwargs)
    else:
        def method(self: StorageCore, *args: Any, **kwargs: Any) -> Any:
            arr = self._write_array(name) if write and not self.readonly else self._read_array()
            return getattr(arr, name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = _DELEGATE_DOC.format(name=name, what=(
        _DELEGATE_INPLACE if inplace else _DELEGATE_VIEW if write else _DELEGATE_READ))
    return method


_DELEGATE_DOC = """NumPy's ``ndarray.{name}`` on the storage's values.

    {what}

    Parameters
    ----------
    *args, **kwargs
        The arguments of ``numpy.ndarray.{name}``, with NumPy's meaning.

    Returns
    -------
    object
        What ``numpy.ndarray.{name}`` returns.
    """
_DELEGATE_READ = """A read: the host is made current first (a device-only storage's values are
    copied to the host); the result is a new NumPy array or a scalar, as NumPy returns it."""
_DELEGATE_VIEW = """The result may be a NumPy view of the host buffer, so the host is made current
    and marked modified first (a read-only storage gives a view of read-only values, a
    device-only one a view of a host copy)."""
_DELEGATE_INPLACE = """Writes in place through the host buffer, which is made current first and then
    marked modified."""


for _name in _READ_METHODS + _VIEW_METHODS + _INPLACE_METHODS:
    _m = _delegate(_name, _name not in _READ_METHODS, _name in _INPLACE_METHODS)
    if _m is not None:
        setattr(DuckArray, _name, _m)
del _name, _m


def _unpickle_storage(state: dict[str, Any]) -> StorageCore:
    kw = {"layout": state["layout"], "halo": state["halo"], "dims": state["dims"],
          "readonly": state["readonly"]}
    if state["backend"] is not None:
        kw["backend"] = state["backend"]
    if state["alignment_size"] is not None:
        kw["alignment_size"] = state["alignment_size"]
    ai = state["aligned_index"]
    if all(a is not None for a in ai):
        kw["aligned_index"] = ai
    if state["device"] == "gpu":
        kw["device"] = "gpu"
        kw["managed"] = state["managed"] or None
    result: StorageCore = allocators.from_array(state["data"], state["data"].dtype, **kw)
    return result
