# gtstorage Python binding: GDP-3's default xarray data interface.
"""Registers ``DataArray.__gt_data_interface__`` when xarray is importable (GDP-3)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import xarray


def data_interface(data_array: xarray.DataArray) -> dict[str | None, dict[str, Any]]:
    """GDP-3 default data interface of an xarray DataArray.

    1. If ``data_array.data`` implements ``__gt_data_interface__``, its per-device dicts are
       returned, each with "dims" set to ``data_array.dims``; a "dims" entry that disagrees with
       them raises ValueError.
    2. Otherwise ``__array_interface__`` / ``__cuda_array_interface__`` of the data become the
       None / "gpu" entries, with "dims" added.
    """
    dims = tuple(str(d) for d in data_array.dims)
    data = data_array.data
    out: dict[str | None, dict[str, Any]] = {}
    gdi = getattr(data, "__gt_data_interface__", None)
    if gdi is not None:
        for device, info in dict(gdi).items():
            if info is None:
                continue
            entry = dict(info)
            if "dims" in entry and entry["dims"] is not None:
                own = tuple(str(d) for d in entry["dims"])
                if own != dims:
                    raise ValueError(
                        f"__gt_data_interface__: the DataArray's dims {dims} disagree with the "
                        f"dims {own} of its data (device {device!r})")
            entry["dims"] = dims
            out[device] = entry
        return out
    for device, attr in ((None, "__array_interface__"), ("gpu", "__cuda_array_interface__")):
        try:
            info = getattr(data, attr)
        except AttributeError:
            continue
        entry = dict(info)
        entry["dims"] = dims
        out[device] = entry
    if not out:
        raise TypeError(f"__gt_data_interface__: the DataArray's data ({type(data).__name__}) "
                        "exposes no array interface")
    return out


def register() -> bool:
    """Registers the accessor; returns False when xarray is not importable."""
    try:
        import xarray
    except ImportError:
        return False
    if "__gt_data_interface__" in getattr(xarray.DataArray, "__dict__", {}):
        return True  # already registered (e.g. module reloaded)
    with warnings.catch_warnings():
        # xarray warns when an accessor name shadows an attribute; a user override stays possible.
        warnings.simplefilter("ignore")
        # (xarray's decorator is not annotated.)
        xarray.register_dataarray_accessor(  # type: ignore[no-untyped-call,unused-ignore]
            "__gt_data_interface__")(data_interface)
    return True
