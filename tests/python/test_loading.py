# Library discovery: GTSTORAGE_LIBRARY (file or directory), next to the package, the system
# loader, and a clear ImportError otherwise. Each case imports gtstorage in a fresh interpreter.
import ctypes.util
import os
import shutil
import subprocess
import sys

import pytest

import gtstorage

PKG = os.path.dirname(gtstorage.__file__)
LIB = os.path.realpath(gtstorage.library_path)


def run(env_changes, cwd, code="import gtstorage; print(gtstorage.library_path)"):
    env = {k: v for k, v in os.environ.items() if k not in ("GTSTORAGE_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(env_changes)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)


# A wheel repaired by auditwheel keeps the libraries it bundles (libgomp) in site-packages/
# gtstorage.libs, found through the library's run path $ORIGIN/../gtstorage.libs: copies of the
# library need that directory next to their own directory's parent too.
BUNDLED = os.path.join(os.path.dirname(PKG), "gtstorage.libs")


@pytest.fixture
def pkg_copy(tmp_path):
    dst = tmp_path / "site"
    shutil.copytree(PKG, dst / "gtstorage", ignore=shutil.ignore_patterns("__pycache__", "*.so*"))
    if os.path.isdir(BUNDLED):
        shutil.copytree(BUNDLED, dst / "gtstorage.libs")  # for site/gtstorage/libgtstorage.so.1
        shutil.copytree(BUNDLED, tmp_path / "gtstorage.libs")  # for tmp_path/lib/libgtstorage.so.1
    return dst


def test_env_variable_file_and_directory(pkg_copy):
    r = run({"GTSTORAGE_LIBRARY": LIB, "PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode == 0, r.stderr
    assert os.path.realpath(r.stdout.strip()) == LIB
    r = run({"GTSTORAGE_LIBRARY": os.path.dirname(LIB), "PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode == 0, r.stderr


def test_env_variable_must_not_fall_back(pkg_copy, tmp_path):
    r = run({"GTSTORAGE_LIBRARY": str(tmp_path / "missing.so"), "PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "GTSTORAGE_LIBRARY" in r.stderr
    empty = tmp_path / "emptydir"
    empty.mkdir()
    r = run({"GTSTORAGE_LIBRARY": str(empty), "PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode != 0 and "directory without" in r.stderr


def test_library_next_to_package(pkg_copy):
    shutil.copy(LIB, pkg_copy / "gtstorage" / "libgtstorage.so.1")
    r = run({"PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(pkg_copy / "gtstorage" / "libgtstorage.so.1")


def test_system_loader(pkg_copy, tmp_path):
    libdir = tmp_path / "lib"
    libdir.mkdir()
    shutil.copy(LIB, libdir / "libgtstorage.so.1")
    r = run({"PYTHONPATH": str(pkg_copy), "LD_LIBRARY_PATH": str(libdir)}, pkg_copy)
    assert r.returncode == 0, r.stderr
    assert "libgtstorage" in r.stdout


def test_clear_import_error(pkg_copy):
    if ctypes.util.find_library("gtstorage"):
        pytest.skip("a libgtstorage is installed system-wide on this machine")
    r = run({"PYTHONPATH": str(pkg_copy)}, pkg_copy)
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "libgtstorage was not found" in r.stderr
    assert "GTSTORAGE_LIBRARY" in r.stderr


def test_build_tree_package_if_staged():
    # The CMake target gtstorage_python stages <build>/python/gtstorage with the library.
    staged = os.path.join(os.path.dirname(os.path.dirname(LIB)), "python")
    if not os.path.isfile(os.path.join(staged, "gtstorage", "libgtstorage.so.1")):
        pytest.skip("the gtstorage_python target was not built in this build directory")
    r = run({"PYTHONPATH": staged}, staged)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(staged)
