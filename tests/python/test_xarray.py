# GDP-3's default xarray data interface: importing gtstorage registers
# DataArray.__gt_data_interface__ (needs xarray: python3-xarray or the venv's pinned xarray).
import numpy as np
import pytest

import gtstorage.gdp3 as gs  # the GDP-3 face: allocators return Storage objects

xr = pytest.importorskip("xarray")


class DuckField:
    """A duck array that xarray keeps as DataArray.data, with its own data interface."""

    def __init__(self, storage, dims=None):
        self.storage = storage
        self.dims = dims
        self.shape = storage.shape
        self.dtype = storage.dtype
        self.ndim = storage.ndim

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.storage)

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented

    def __getitem__(self, key):
        return self.storage[key]

    @property
    def __gt_data_interface__(self):
        gdi = self.storage.__gt_data_interface__
        for entry in gdi.values():
            if self.dims is None:
                entry.pop("dims", None)
            else:
                entry["dims"] = self.dims
        return gdi


def test_accessor_registered_on_import():
    assert "__gt_data_interface__" in xr.DataArray.__dict__


def test_plain_array_interface_gets_dataarray_dims():
    s = gs.from_array(np.arange(12.0).reshape(3, 4))
    da = xr.DataArray(s, dims=("I", "J"))  # xarray keeps a NumPy view of the storage
    gdi = da.__gt_data_interface__
    assert list(gdi) == [None]
    assert gdi[None]["dims"] == ("I", "J")
    assert gdi[None]["shape"] == (3, 4)
    assert gdi[None]["data"][0] == s.to_numpy().ctypes.data  # zero-copy all the way


def test_data_interface_of_data_is_used_and_checked():
    s = gs.zeros((3, 4), dims="IK", halo=(1, 0))
    da = xr.DataArray(DuckField(s, dims=None), dims=("I", "K"))
    assert isinstance(da.data, DuckField)
    gdi = da.__gt_data_interface__
    assert gdi[None]["dims"] == ("I", "K")
    assert gdi[None]["halo"] == ((1, 1), (0, 0))
    assert callable(gdi[None]["acquire"]) and callable(gdi[None]["touch"])
    # Agreeing dims are fine, disagreeing ones are an error.
    ok = xr.DataArray(DuckField(s, dims=("I", "K")), dims=("I", "K"))
    assert ok.__gt_data_interface__[None]["dims"] == ("I", "K")
    bad = xr.DataArray(DuckField(s, dims=("I", "K")), dims=("x", "y"))
    with pytest.raises(ValueError, match="disagree"):
        bad.__gt_data_interface__


def test_storage_dims_are_checked_against_dataarray():
    s = gs.zeros((3, 4), dims="JK")
    da = xr.DataArray(DuckField(s, dims=s.dims), dims=("I", "J"))
    with pytest.raises(ValueError, match="disagree"):
        da.__gt_data_interface__
