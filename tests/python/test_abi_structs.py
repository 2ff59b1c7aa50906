# The ctypes structs of the binding must match the C header byte for byte: compile a small C
# program against include/gtstorage/gtstorage.h and dlpack.h that prints every struct's size and
# field offsets, and compare.
import ctypes
import os
import shutil
import subprocess

import pytest

from gtstorage import _capi, _dlpack

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# Every struct of the header (the generated table, so a new struct is checked without an edit
# here) and the DLPack structs the binding declares by hand.
STRUCTS = {
    **_capi.STRUCTS,
    "DLDevice": _dlpack.DLDevice,
    "DLDataType": _dlpack.DLDataType,
    "DLTensor": _dlpack.DLTensor,
    "DLPackVersion": _dlpack.DLPackVersion,
    "DLManagedTensor": _dlpack.DLManagedTensor,
    "struct DLManagedTensorVersioned": _dlpack.DLManagedTensorVersioned,
}


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        pytest.skip("no C compiler to check the struct layouts with")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "gtstorage/gtstorage.h"',
             '#include "dlpack/dlpack.h"', "int main(void) {"]
    for cname, cls in STRUCTS.items():
        lines.append(f'  printf("{cname} size %zu\\n", sizeof({cname}));')
        for field, _ in cls._fields_:
            lines.append(f'  printf("{cname} {field} %zu\\n", offsetof({cname}, {field}));')
    lines += ["  return 0;", "}"]
    d = tmp_path_factory.mktemp("abi")
    src, exe = d / "layout.c", d / "layout"
    src.write_text("\n".join(lines))
    subprocess.run([cc, "-std=c99", "-I", os.path.join(ROOT, "include"),
                    "-I", os.path.join(ROOT, "third_party"), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    result = {}
    for line in out.splitlines():
        name, field, value = line.rsplit(" ", 2)
        result[(name, field)] = int(value)
    return result


@pytest.mark.parametrize("cname", list(STRUCTS))
def test_struct_layout_matches_header(c_layout, cname):
    cls = STRUCTS[cname]
    assert ctypes.sizeof(cls) == c_layout[(cname, "size")]
    for field, _ in cls._fields_:
        assert getattr(cls, field).offset == c_layout[(cname, field)], field


def test_constants_match_header():
    header = open(os.path.join(ROOT, "include", "gtstorage", "gtstorage.h")).read()
    for name, value in (("GTSTORAGE_MAX_NDIM", _capi.MAX_NDIM),
                        ("GTSTORAGE_DIM_LABEL_SIZE", _capi.DIM_LABEL_SIZE),
                        ("GTSTORAGE_TYPESTR_SIZE", _capi.TYPESTR_SIZE),
                        ("GTSTORAGE_PRESET_NAME_SIZE", _capi.PRESET_NAME_SIZE),
                        ("GTSTORAGE_VERSION_MAJOR", _capi.ABI_MAJOR)):
        assert f"#define {name} {value}" in header, name
    for name in ("ERROR_NO_SUCH_BUFFER", "SYNC_ACQUIRE_DEVICE", "MANAGED_UNIFIED", "DL_CUDA_MANAGED",
                 "SLICE_INDEX", "INIT_COPY", "SYNC_TOUCH_DEVICE", "DLPACK_LEGACY",
                 "DLPACK_VERSIONED"):
        assert f"GTSTORAGE_{name} = {getattr(_capi, name)}" in header, name
