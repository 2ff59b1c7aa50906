#!/usr/bin/env bash
# libgtstorage_python's tests (CTest label "bridge": tests/integration/bridge, examples/model): C and Fortran
# programs that embed Python and call NumPy and GT4Py code on their own arrays, on 1 and 4 MPI
# processes. They need a virtual environment of the Python the library embeds, with NumPy and
# gt4py: the GT4Py integration test's (tests/integration/gt4py/run.sh --print-env makes it, or reuses it).
#
# SKIPS (exit 0, "SKIPPED: ..." line) when the build has no libgtstorage_python, when the GT4Py
# venv cannot be made (no Python 3.12 or no network: tests/integration/gt4py/run.sh says which), or when the
# library embeds another Python than the venv's (configure with
# -DGTSTORAGE_PYTHON_EXECUTABLE=<python3.12>; run-tests.sh does). GTSTORAGE_BRIDGE_REQUIRE=1
# makes a skip a failure.
#
# Usage: tests/integration/bridge/run.sh <build-dir> [ctest args...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
build="$(cd "${1:?usage: $0 <build-dir> [ctest args...]}" && pwd)"
shift

skip() {
  echo "SKIPPED: libgtstorage_python tests: $*"
  [[ ${GTSTORAGE_BRIDGE_REQUIRE:-0} == 1 ]] && exit 1
  exit 0
}

pc="$build/gtstorage-python.pc"
[[ -f $pc ]] || skip "the build has no libgtstorage_python (no Python with a shared libpython was found)"
embedded=$(sed -n 's/^python_version=//p' "$pc")

env_lines=$(bash "$root/tests/integration/gt4py/run.sh" "$build" --print-env) ||
  skip "tests/integration/gt4py/run.sh could not provide the GT4Py venv (see above)"
if [[ -z $env_lines ]]; then
  skip "no GT4Py venv (tests/integration/gt4py/run.sh skipped, see above)"
fi
eval "$env_lines"  # GT_CACHE_ROOT, DACE_CONFIG, GT4PY_PYTHON, PYTHONNOUSERSITE, ...
venv=$(cd "$(dirname "$GT4PY_PYTHON")/.." && pwd)
venv_version=$("$GT4PY_PYTHON" -c 'import sys; print(sys.version.split()[0])')
if [[ ${venv_version%.*} != "${embedded%.*}" ]]; then
  skip "libgtstorage_python embeds Python $embedded, the GT4Py venv is Python $venv_version (configure with -DGTSTORAGE_PYTHON_EXECUTABLE=<python${venv_version%.*}>)"
fi
# The tests use the source package (bindings/python) through their sys_path; the venv gives
# NumPy and GT4Py.
unset GTSTORAGE_LIBRARY PYTHONPATH
export GTSTORAGE_BRIDGE_VENV="$venv"
echo "== bridge: libgtstorage_python (Python $embedded) with $venv"
cd "$build"
exec ctest --output-on-failure -j "${JOBS:-2}" -L bridge "$@"
