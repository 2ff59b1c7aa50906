#!/usr/bin/env python3
"""One storage seen from Python, Fortran and C, without a copy anywhere.

1. Python creates a K-first (gt:cpu_kfirst) float64 storage with a halo, every element -999.
2. Python hands its handle to a Fortran routine in a shared library through ctypes
   (together_fill_interior, bind(C), handle by value); Fortran writes the interior through its
   pointer p(i, j, k) = 10000 i + 100 j + k, indices from 1, halo from 1 - width.
3. C code in the same library reads the storage through gtstorage_interface() and byte strides.
4. Python checks everything through a NumPy array over the same memory: the interior has the
   values Fortran wrote, the halo is untouched, C read the same values, and Fortran, C and NumPy
   compute the same address for each element.

Python uses the gtstorage package (bindings/python) when it can be imported, else (or with
--ctypes) the C API directly through ctypes; both share one libgtstorage with the Fortran code.

Environment: GTSTORAGE_LIBRARY (libgtstorage), GTSTORAGE_TOGETHER_LIBRARY (the example's library,
libgtstorage_together). Exit status 0 on success, 1 on a failed check, 77 when NumPy is missing.
"""

import ctypes
import os
import sys

SKIP = 77
INTERIOR = (6, 5, 4)                 # I, J, K
HALO = ((2, 2), (1, 2), (1, 1))      # (lower, upper) per dimension
SHAPE = tuple(n + lo + hi for n, (lo, hi) in zip(INTERIOR, HALO))
SENTINEL = -999.0

MAX_NDIM = 16


class InterfaceInfo(ctypes.Structure):
    """gtstorage_interface_info of gtstorage.h (only for the ctypes path)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("ndim", ctypes.c_uint32), ("data", ctypes.c_void_p),
        ("shape", ctypes.c_int64 * MAX_NDIM), ("strides", ctypes.c_int64 * MAX_NDIM),
        ("layout", ctypes.c_int32 * MAX_NDIM), ("halo", (ctypes.c_int64 * 2) * MAX_NDIM),
        ("origin", ctypes.c_int64 * MAX_NDIM), ("aligned_index", ctypes.c_int64 * MAX_NDIM),
        ("dims", (ctypes.c_char * 4) * MAX_NDIM), ("typestr", ctypes.c_char * 8),
        ("itemsize", ctypes.c_int64), ("nbytes", ctypes.c_int64),
        ("allocation", ctypes.c_void_p), ("allocation_bytes", ctypes.c_int64),
        ("byte_offset", ctypes.c_int64), ("readonly", ctypes.c_int32),
        ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
        ("side", ctypes.c_int32), ("sync_state", ctypes.c_int32),
        ("is_c_contiguous", ctypes.c_int32), ("stream", ctypes.c_uint64),
    ]


class CreateOptions(ctypes.Structure):
    """gtstorage_create_options of gtstorage.h (only for the ctypes path)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32), ("ndim", ctypes.c_uint32),
        ("shape", ctypes.POINTER(ctypes.c_int64)), ("dtype", ctypes.c_char_p),
        ("dims", ctypes.c_char_p), ("preset", ctypes.c_char_p),
        ("layout", ctypes.POINTER(ctypes.c_int32)), ("halo", ctypes.POINTER(ctypes.c_int64)),
        ("aligned_index", ctypes.POINTER(ctypes.c_int64)), ("alignment_bytes", ctypes.c_int64),
        ("init", ctypes.c_int32), ("device", ctypes.c_int32), ("device_id", ctypes.c_int32),
        ("managed", ctypes.c_int32), ("host_memory", ctypes.c_int32),
        ("readonly", ctypes.c_int32), ("fill_value", ctypes.c_void_p),
        ("source", ctypes.c_void_p),
    ]


class Stats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)] + [
        (name, ctypes.c_int64) for name in ("live_handles", "live_buffers", "host_bytes",
                                            "device_bytes", "h2d_count", "h2d_bytes",
                                            "d2h_count", "d2h_bytes")]


class Check:
    def __init__(self):
        self.failed = 0
        self.count = 0

    def __call__(self, condition, what):
        self.count += 1
        if not condition:
            self.failed += 1
            print("FAILED:", what)


def create_with_package(np):
    """The storage through the gtstorage package: (keep-alive object, handle, NumPy view)."""
    import gtstorage.gdp3  # noqa: F401  (ImportError -> the ctypes path)
    # GDP-3 storages know their halo (the GT4Py drop-in gtstorage.full returns a bare ndarray).
    storage = gtstorage.gdp3.full(SHAPE, SENTINEL, dtype=np.float64, backend="gt:cpu_kfirst",
                                  halo=HALO)
    return storage, int(storage.handle), np.asarray(storage)


def create_with_ctypes(np, lib):
    """The storage through the C API directly: (keep-alive object, handle, NumPy view)."""
    lib.gtstorage_last_error.restype = ctypes.c_char_p
    options = CreateOptions()
    check_status(lib, lib.gtstorage_create_options_init(ctypes.byref(options)), "options_init")
    shape = (ctypes.c_int64 * 3)(*SHAPE)
    halo = (ctypes.c_int64 * 6)(*[w for pair in HALO for w in pair])
    fill = ctypes.c_double(SENTINEL)
    options.ndim = 3
    options.shape = shape
    options.halo = halo
    options.preset = b"gt:cpu_kfirst"
    options.dtype = b"<f8"
    options.init = 3  # GTSTORAGE_INIT_VALUE
    options.fill_value = ctypes.cast(ctypes.byref(fill), ctypes.c_void_p)
    handle = ctypes.c_uint64()
    check_status(lib, lib.gtstorage_create(ctypes.byref(options), ctypes.byref(handle)), "create")

    info = InterfaceInfo()
    info.struct_size = ctypes.sizeof(info)
    check_status(lib, lib.gtstorage_interface(handle, 0, ctypes.byref(info)), "interface")

    class View:
        """Exposes the host buffer to NumPy (zero copy) and keeps the handle until dropped."""

        def __init__(self):
            self.__array_interface__ = {
                "version": 3, "typestr": "<f8", "data": (info.data, False),
                "shape": tuple(info.shape[:3]), "strides": tuple(info.strides[:3]),
            }
            self.handle = handle.value

        def __del__(self):
            lib.gtstorage_release(ctypes.c_uint64(self.handle))

    view = View()
    return view, handle.value, np.asarray(view)


def check_status(lib, status, what):
    if status != 0:
        lib.gtstorage_last_error.restype = ctypes.c_char_p
        raise RuntimeError(f"{what}: status {status}: {lib.gtstorage_last_error().decode()}")


def live_handles(lib):
    stats = Stats()
    stats.struct_size = ctypes.sizeof(stats)
    check_status(lib, lib.gtstorage_get_stats(ctypes.byref(stats)), "get_stats")
    return stats.live_handles


def main():
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy is not importable")
        return SKIP

    use_package = "--ctypes" not in sys.argv[1:]
    if use_package:
        try:
            import gtstorage  # noqa: F401  (loads libgtstorage through GTSTORAGE_LIBRARY)
        except ImportError as exc:
            print(f"note: gtstorage package not importable ({exc}); using ctypes directly")
            use_package = False
    lib = ctypes.CDLL(os.environ["GTSTORAGE_LIBRARY"])
    # The example's library links libgtstorage by SONAME; the loader reuses the copy already
    # loaded, so Python, Fortran and C share one handle table.
    together = ctypes.CDLL(os.environ["GTSTORAGE_TOGETHER_LIBRARY"])
    H, I64 = ctypes.c_uint64, ctypes.c_int64
    together.together_fill_interior.argtypes = [H]
    together.together_fortran_address.argtypes = [H, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    together.together_fortran_address.restype = ctypes.c_ssize_t
    together.together_c_read.argtypes = [H, I64, I64, I64, ctypes.POINTER(ctypes.c_double)]
    together.together_c_address.argtypes = [H, I64, I64, I64]
    together.together_c_address.restype = ctypes.c_ssize_t
    together.together_c_sum_interior.argtypes = [H, ctypes.POINTER(ctypes.c_double),
                                                 ctypes.POINTER(I64)]
    together.gtstorage_fortran_last_error.restype = ctypes.c_char_p
    lib.gtstorage_data.argtypes = [H, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]

    check = Check()
    live0 = live_handles(lib)
    keep, handle, arr = (create_with_package(np) if use_package else create_with_ctypes(np, lib))
    print(f"python: {'gtstorage package' if use_package else 'ctypes'}, storage {handle:#x}, "
          f"shape {arr.shape}, strides {arr.strides}")

    # NumPy sees the library's buffer itself, K-first: K contiguous, I slowest.
    data = ctypes.c_void_p()
    check_status(lib, lib.gtstorage_data(handle, 0, ctypes.byref(data)), "data")
    check(arr.__array_interface__["data"][0] == data.value, "NumPy array is the storage's buffer")
    check(arr.shape == SHAPE, "shape includes the halo")
    check(arr.strides[2] == 8 and arr.strides[0] > arr.strides[1] > 8, "K-first strides")
    check(bool(np.all(arr == SENTINEL)), "initial contents")

    # Fortran writes the interior through p(i, j, k).
    status = together.together_fill_interior(handle)
    check(status == 0, f"Fortran status {status}: {together.gtstorage_fortran_last_error()}")

    # NumPy: interior = 10000 i + 100 j + k (i, j, k from 1), halo untouched.
    expected = np.full(SHAPE, SENTINEL)
    i, j, k = np.meshgrid(*[np.arange(1, n + 1) for n in INTERIOR], indexing="ij")
    interior = tuple(slice(lo, lo + n) for n, (lo, _) in zip(INTERIOR, HALO))
    expected[interior] = 10000.0 * i + 100.0 * j + k
    check(bool(np.array_equal(arr, expected)), "NumPy sees Fortran's interior and the halo intact")

    # C reads the same values through gtstorage_interface, at the same addresses.
    value = ctypes.c_double()
    bad = 0
    for fi in range(1 - HALO[0][0], INTERIOR[0] + HALO[0][1] + 1):
        for fj in range(1 - HALO[1][0], INTERIOR[1] + HALO[1][1] + 1):
            for fk in range(1 - HALO[2][0], INTERIOR[2] + HALO[2][1] + 1):
                index = (fi - 1 + HALO[0][0], fj - 1 + HALO[1][0], fk - 1 + HALO[2][0])
                if together.together_c_read(handle, fi, fj, fk, ctypes.byref(value)) != 0:
                    bad += 1
                    continue
                bad += value.value != arr[index]
                numpy_address = data.value + sum(n * s for n, s in zip(index, arr.strides))
                bad += together.together_c_address(handle, fi, fj, fk) != numpy_address
                bad += together.together_fortran_address(handle, fi, fj, fk) != numpy_address
    check(bad == 0, f"C values and Fortran/C/NumPy addresses agree ({bad} mismatches)")
    total, count = ctypes.c_double(), I64()
    check(together.together_c_sum_interior(handle, ctypes.byref(total), ctypes.byref(count)) == 0,
          "C sum status")
    check(count.value == np.prod(INTERIOR) and total.value == arr[interior].sum(),
          f"C interior sum {total.value} = NumPy {arr[interior].sum()}")

    # And back: NumPy writes, C reads.
    arr[3, 2, 1] = 42.0
    together.together_c_read(handle, 3 - HALO[0][0] + 1, 2 - HALO[1][0] + 1, 1 - HALO[2][0] + 1,
                             ctypes.byref(value))
    check(value.value == 42.0, "C sees NumPy's write")

    del arr, keep
    import gc
    gc.collect()
    check(live_handles(lib) == live0, "storage released when Python drops it")
    print(f"together: {check.count} checks, {check.failed} failed")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
