#!/usr/bin/env bash
# Runs the Python binding's tests twice against the libgtstorage of a build directory:
#   1. NumPy 2.x: a venv at <build-dir>/.venv-np2 with tests/python/requirements-dev.txt
#      (created or refreshed when the requirements change);
#   2. Debian's interpreter /usr/bin/python3 with python3-numpy 1.24, python3-pytest and
#      python3-hypothesis (installed with apt-get when missing and running as root); torch and
#      xarray tests run when python3-torch / python3-xarray are importable there.
# Device tests use the emulated backend (GTSTORAGE_DEVICE_BACKEND=emulated) unless the caller set
# another one.
#
# Usage: tests/python/run.sh <build-dir> [extra pytest arguments]
# Env:   GTSTORAGE_PY_SKIP_DEBIAN=1 skips run 2; GTSTORAGE_PY_SKIP_VENV=1 skips run 1.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <build-dir> [pytest args...]" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "$1" && pwd)"
shift

lib=""
for cand in "$build/src/libgtstorage.so.1" "$build/src/libgtstorage.so" \
            "$build/lib/libgtstorage.so.1" "$build/libgtstorage.so.1"; do
  if [[ -f "$cand" ]]; then lib="$cand"; break; fi
done
if [[ -z "$lib" ]]; then
  lib="$(find "$build" -name 'libgtstorage.so*' -type f -print -quit 2>/dev/null || true)"
fi
if [[ -z "$lib" ]]; then
  echo "run.sh: no libgtstorage.so under $build (build the 'gtstorage' target first)" >&2
  exit 2
fi

export GTSTORAGE_LIBRARY="$lib"
export PYTHONPATH="$root/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export GTSTORAGE_DEVICE_BACKEND="${GTSTORAGE_DEVICE_BACKEND:-emulated}"
# Keep hypothesis' example database out of the source tree.
export HYPOTHESIS_STORAGE_DIRECTORY="$build/.hypothesis"
export PYTHONDONTWRITEBYTECODE=1

status=0

# ---- 1. NumPy 2.x in a pinned venv --------------------------------------------------------------
if [[ "${GTSTORAGE_PY_SKIP_VENV:-0}" != 1 ]]; then
  venv="$build/.venv-np2"
  req="$here/requirements-dev.txt"
  stamp="$venv/.requirements.sha256"
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "== run.sh: creating $venv (NumPy 2.x, pinned dev requirements)"
    py="${PYTHON:-python3}"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  fi
  echo "== run.sh: NumPy $("$venv/bin/python" -c 'import numpy; print(numpy.__version__)') ($venv)"
  "$venv/bin/python" -m pytest -p no:cacheprovider -c "$here/pytest.ini" --rootdir "$here" "$@" || status=1
fi

# ---- 2. Debian's python3 + python3-numpy 1.24 ---------------------------------------------------
if [[ "${GTSTORAGE_PY_SKIP_DEBIAN:-0}" != 1 ]]; then
  sys_py=/usr/bin/python3
  if [[ ! -x "$sys_py" ]]; then
    echo "run.sh: $sys_py not found; cannot run the Debian NumPy 1.x pass" >&2
    exit 1
  fi
  missing=()
  "$sys_py" -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
  "$sys_py" -c 'import pytest' 2>/dev/null || missing+=(python3-pytest)
  "$sys_py" -c 'import hypothesis' 2>/dev/null || missing+=(python3-hypothesis)
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
  # The Debian pass must see only Debian's packages, never the venv or ~/.local.
  echo "== run.sh: NumPy $(PYTHONNOUSERSITE=1 "$sys_py" -c 'import numpy; print(numpy.__version__)') ($sys_py)"
  PYTHONNOUSERSITE=1 "$sys_py" -m pytest -p no:cacheprovider -c "$here/pytest.ini" --rootdir "$here" "$@" || status=1
fi

exit $status
