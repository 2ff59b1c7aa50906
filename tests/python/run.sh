#!/usr/bin/env bash
# Runs the Python binding's tests against the package as users get it, twice:
#   1. NumPy 2.x: a venv at <build-dir>/.venv-np2 with tests/python/requirements-dev.txt
#      (created or refreshed when the requirements change);
#   2. Debian's interpreter /usr/bin/python3 with python3-numpy 1.24, python3-pytest and
#      python3-hypothesis (installed with apt-get when missing and running as root), through a
#      --system-site-packages venv at <build-dir>/.venv-debian; torch and xarray tests run when
#      python3-torch / python3-xarray are importable there.
# Then tests/python/lint.sh checks the package with ruff and mypy (pinned in the same venv).
#
# The package (default, GTSTORAGE_PY_PACKAGE=wheel): the wheel built from the repository root
# (`pip wheel <root>`: scikit-build-core builds libgtstorage and gtstorage._native, CUDA off unless
# GTSTORAGE_PY_WHEEL_CUDA=ON), repaired by auditwheel to a manylinux tag, built once into
# <build-dir>/wheelhouse (again only when a source of the package changed) and installed into
# both venvs; pass 2 proves that the extension built against NumPy 2 headers works on NumPy 1.24.
# The tests import the installed package: no PYTHONPATH, no GTSTORAGE_LIBRARY
# (GTSTORAGE_TEST_PACKAGE=installed makes conftest.py refuse the source tree). Before each pass,
# `import gtstorage` must work from a directory outside the repository with an empty environment
# and load gtstorage._native, and `auditwheel show` must report the claimed tag.
# GTSTORAGE_PY_PACKAGE=source instead tests bindings/python with GTSTORAGE_LIBRARY = the build
# directory's library (no wheel, no _native; quick while editing Python code).
# Device tests use the emulated backend (GTSTORAGE_DEVICE_BACKEND=emulated) unless the caller set
# another one.
#
# Usage: tests/python/run.sh <build-dir> [extra pytest arguments, e.g. -k native or a test file]
# Env:   GTSTORAGE_PY_SKIP_DEBIAN=1 skips pass 2; GTSTORAGE_PY_SKIP_VENV=1 skips pass 1.
#        GTSTORAGE_PY_SKIP_LINT=1  skips the last step, tests/python/lint.sh (ruff, mypy)
#        GTSTORAGE_PY_PACKAGE      wheel (default) or source
#        GTSTORAGE_PY_WHEEL        a wheel file to test instead of building one
#        GTSTORAGE_PY_WHEEL_CUDA   GTSTORAGE_ENABLE_CUDA of the wheel build: OFF (default; a
#                                  CUDA build costs ~35% more CPU time), ON, or default (what
#                                  `pip install .` does: CUDA when nvcc is found)
#        GTSTORAGE_PY_WHEEL_TAG    the platform tag auditwheel must give (default
#                                  manylinux_2_35_x86_64, Debian 12's GCC 12 libstdc++; "none":
#                                  no repair, the linux_* wheel is tested)
#        JOBS                      parallel build jobs of the wheel build (default 2)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# python_test_dirs, make_np2_venv (shared with lint.sh)
# shellcheck source=np2_venv.sh
. "$here/np2_venv.sh"
python_test_dirs "<build-dir> [pytest args...]" 1 1000000 "$@"
shift

mode="${GTSTORAGE_PY_PACKAGE:-wheel}"
export GTSTORAGE_DEVICE_BACKEND="${GTSTORAGE_DEVICE_BACKEND:-emulated}"
# Keep hypothesis' example database out of the source tree.
export HYPOTHESIS_STORAGE_DIRECTORY="$build/.hypothesis"
export PYTHONDONTWRITEBYTECODE=1
sys_py=/usr/bin/python3
status=0

case $mode in
  wheel)
    unset GTSTORAGE_LIBRARY PYTHONPATH
    export GTSTORAGE_TEST_PACKAGE=installed GTSTORAGE_TEST_REQUIRE_NATIVE=1
    ;;
  source)
    lib="${GTSTORAGE_LIBRARY:-}"
    if [[ -z "$lib" ]]; then
      for cand in "$build/src/libgtstorage.so.1" "$build/src/libgtstorage.so" \
                  "$build/lib/libgtstorage.so.1" "$build/libgtstorage.so.1"; do
        if [[ -f "$cand" ]]; then lib="$cand"; break; fi
      done
    fi
    if [[ -z "$lib" ]]; then
      echo "run.sh: no libgtstorage.so under $build (build the 'gtstorage' target first)" >&2
      exit 2
    fi
    export GTSTORAGE_LIBRARY="$lib"
    export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
    unset GTSTORAGE_TEST_PACKAGE GTSTORAGE_TEST_REQUIRE_NATIVE
    ;;
  *)
    echo "run.sh: GTSTORAGE_PY_PACKAGE must be wheel or source (got '$mode')" >&2
    exit 2
    ;;
esac

# ---- the NumPy 2.x venv (also builds and repairs the wheel): $venv, made by make_np2_venv -------

# ---- the wheel ---------------------------------------------------------------------------------
wheel=""
cuda="${GTSTORAGE_PY_WHEEL_CUDA:-OFF}"
tag="${GTSTORAGE_PY_WHEEL_TAG:-manylinux_2_35_x86_64}"
# Builds (or reuses) the wheel of interpreter $1 into $2; sets $wheel.
build_wheel() {
  local py=$1 house=$2 files src_hash="" stamp="$2/.sources.sha256" t0=$SECONDS log="$2.log"
  # Rebuilt when a source of the package, the interpreter or a setting changed (always outside
  # a git checkout).
  if files=$(cd "$root" && git ls-files -co --exclude-standard -- src include cmake third_party \
      bindings/python CMakeLists.txt pyproject.toml 2>/dev/null) && [[ -n $files ]]; then
    src_hash=$( (cd "$root" && { sort <<<"$files" | tr '\n' '\0' | xargs -0 sha256sum 2>&1 || true; }
      "$py" -c 'import sys; print(sys.version)'; echo "$cuda $tag") | sha256sum | cut -d' ' -f1)
  fi
  wheel=$(ls "$house"/gtstorage-*.whl 2>/dev/null | head -n 1 || true)
  if [[ -n $src_hash && -n $wheel && -f $stamp && "$(cat "$stamp")" == "$src_hash" ]]; then
    echo "== run.sh: reusing $wheel (sources unchanged)"
    return 0
  fi
  rm -rf "$house"
  mkdir -p "$house/raw"
  echo "== run.sh: pip wheel $root (scikit-build-core, -j${JOBS:-2}, GTSTORAGE_ENABLE_CUDA=$cuda)"
  # The CMake build directory is kept between runs (only what changed is rebuilt).
  local cuda_define=(-C "cmake.define.GTSTORAGE_ENABLE_CUDA=$cuda")
  [[ $cuda == default ]] && cuda_define=()
  if ! CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}" "$py" -m pip wheel --no-deps \
      --disable-pip-version-check --no-input -w "$house/raw" "${cuda_define[@]}" \
      -C "build-dir=$house.cmake-cuda-$cuda" "$root" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "run.sh: the wheel build failed (log: $log)" >&2
    return 1
  fi
  wheel=$(ls "$house"/raw/gtstorage-*.whl)
  echo "== run.sh: built $(basename "$wheel") in $((SECONDS - t0)) s"
  if [[ $tag != none ]]; then
    if ! PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "$tag" -w "$house" \
        "$wheel" >>"$log" 2>&1; then
      tail -n 30 "$log" >&2
      echo "run.sh: auditwheel repair --plat $tag failed (log: $log)" >&2
      return 1
    fi
    wheel=$(ls "$house"/gtstorage-*.whl)
  else
    mv "$wheel" "$house/"
    wheel="$house/$(basename "$wheel")"
  fi
  rm -rf "$house/raw"
  echo "$src_hash" > "$stamp"
  echo "== run.sh: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB), $((SECONDS - t0)) s in all"
}

# auditwheel must report the claimed tag for the wheel under test.
check_tag() {
  [[ $tag == none ]] && return 0
  local shown
  shown=$("$venv/bin/auditwheel" show "$1" 2>&1 | tr '\n' ' ' | tr -s ' ')
  if [[ $shown != *"consistent with the following platform tag: \"$tag\""* ]]; then
    echo "run.sh: auditwheel show does not report $tag for $1: $shown" >&2
    return 1
  fi
  echo "== run.sh: auditwheel show: $(basename "$1") is $tag"
}

# Installs the wheel into the venv of interpreter $1 (never a dependency: NumPy stays as it is).
install_wheel() {
  "$1" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --no-index \
    --force-reinstall "$wheel"
}

# `import gtstorage` from outside the repository, with an empty environment: the installed
# package, its own library, gtstorage._native loaded, one version everywhere.
check_import() {
  local dir rc=0
  dir=$(mktemp -d)
  (cd "$dir" && env -i PATH=/usr/bin:/bin HOME="$dir" "$1" -c '
import importlib.metadata, os, gtstorage
from gtstorage import _capi
pkg = os.path.dirname(gtstorage.__file__)
assert _capi.native is not None, f"gtstorage._native not loaded: {_capi.native_error}"
assert os.path.dirname(_capi.native.__file__) == pkg, _capi.native.__file__
assert os.path.dirname(gtstorage.library_path) == pkg, gtstorage.library_path
dist = importlib.metadata.version("gtstorage")
assert gtstorage.__version__ == dist == gtstorage.library_version, (
    gtstorage.__version__, dist, gtstorage.library_version)
z = gtstorage.zeros((3,), backend="numpy")
assert float(z.sum()) == 0.0
import numpy
print(f"== run.sh: import gtstorage {gtstorage.__version__} from {pkg} with _native, NumPy",
      numpy.__version__, "(empty environment, cwd outside the repository)")
') || rc=1
  rm -rf "$dir"
  return $rc
}

# pytest runs in tests/python (its testpaths apply only there; elsewhere it would collect every
# test_*.py below the current directory); path arguments are made absolute first.
# shellcheck source=../../tools/script-lib.sh
source "$root/tools/script-lib.sh"  # gts_pytest_args
gts_pytest_args "$@"
run_pytest() {  # $1 = interpreter
  (cd "$here" && "$1" -m pytest -p no:cacheprovider -c "$here/pytest.ini" --rootdir "$here" \
    ${pytest_args[@]+"${pytest_args[@]}"})
}

# ---- 1. NumPy 2.x in a pinned venv --------------------------------------------------------------
need_np2_venv=0
[[ "${GTSTORAGE_PY_SKIP_VENV:-0}" != 1 || $mode == wheel ]] && need_np2_venv=1
if ((need_np2_venv)); then
  make_np2_venv
fi
if [[ $mode == wheel ]]; then
  if [[ -n "${GTSTORAGE_PY_WHEEL:-}" ]]; then
    wheel="$(cd "$(dirname "$GTSTORAGE_PY_WHEEL")" && pwd)/$(basename "$GTSTORAGE_PY_WHEEL")"
  else
    build_wheel "$venv/bin/python" "$build/wheelhouse" || exit 1
  fi
  check_tag "$wheel" || status=1
fi
if [[ "${GTSTORAGE_PY_SKIP_VENV:-0}" != 1 ]]; then
  if [[ $mode == wheel ]]; then
    install_wheel "$venv/bin/python" && check_import "$venv/bin/python" || status=1
  fi
  echo "== run.sh: NumPy $("$venv/bin/python" -c 'import numpy; print(numpy.__version__)') ($venv, $mode)"
  run_pytest "$venv/bin/python" || status=1
fi

# ---- 2. Debian's python3 + python3-numpy 1.24 ---------------------------------------------------
if [[ "${GTSTORAGE_PY_SKIP_DEBIAN:-0}" != 1 ]]; then
  if [[ ! -x "$sys_py" ]]; then
    echo "run.sh: $sys_py not found; cannot run the Debian NumPy 1.x pass" >&2
    exit 1
  fi
  missing=()
  "$sys_py" -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
  "$sys_py" -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
  "$sys_py" -c 'import hypothesis' 2>/dev/null || missing+=(python3-hypothesis)
  "$sys_py" -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
      echo "== run.sh: apt-get install ${missing[*]} (plus python3-torch python3-xarray if available)"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >/dev/null
      apt-get install -y -qq "${missing[@]}" >/dev/null
      apt-get install -y -qq python3-torch python3-xarray >/dev/null 2>&1 || true
    else
      echo "run.sh: $sys_py lacks ${missing[*]} and apt-get is not usable (not root)" >&2
      exit 1
    fi
  fi
  # The Debian pass must see only Debian's packages (and the wheel), never the NumPy 2 venv or
  # ~/.local.
  export PYTHONNOUSERSITE=1
  deb_py="$sys_py"
  if [[ $mode == wheel ]]; then
    dvenv="$build/.venv-debian"
    if [[ ! -x "$dvenv/bin/python" ]] ||
       [[ "$("$dvenv/bin/python" -c 'import sys; print(sys.version)')" != "$("$sys_py" -c 'import sys; print(sys.version)')" ]]; then
      rm -rf "$dvenv"
      "$sys_py" -m venv --system-site-packages "$dvenv"
    fi
    deb_py="$dvenv/bin/python"
    wheel_np2="$wheel"
    if [[ -z "${GTSTORAGE_PY_WHEEL:-}" ]] && [[ "$("$deb_py" -c 'import sys; print(sys.version_info[:2])')" != \
          "$("$venv/bin/python" -c 'import sys; print(sys.version_info[:2])')" ]]; then
      # Another CPython minor version than the venv's: its own wheel (needs python3-dev).
      echo "== run.sh: $sys_py is not the venv's Python version: building a wheel for it"
      "$deb_py" -m pip --version >/dev/null
      build_wheel "$deb_py" "$build/wheelhouse-debian" || exit 1
      check_tag "$wheel" || status=1
    fi
    install_wheel "$deb_py" && check_import "$deb_py" || status=1
    wheel="$wheel_np2"
  fi
  echo "== run.sh: NumPy $("$deb_py" -c 'import numpy; print(numpy.__version__)') ($deb_py, $mode)"
  run_pytest "$deb_py" || status=1
fi

# ---- 3. ruff and mypy --strict of the package (tests/python/lint.sh; any finding fails) -------
if [[ "${GTSTORAGE_PY_SKIP_LINT:-0}" != 1 ]]; then
  bash "$here/lint.sh" "$build" || status=1
fi

exit $status
