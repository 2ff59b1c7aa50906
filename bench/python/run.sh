#!/usr/bin/env bash
# Runs bench/python/bench_python.py in the GT4Py venv of tests/integration/gt4py (Python 3.12, gt4py==1.2.3,
# gtstorage installed there as tests/integration/gt4py/run.sh installs it), so that the GT4Py stencil
# figures are measured too. Where that venv cannot be built (no Python 3.12, no network), it runs
# with python3, the source tree and the build directory's library, and the GT4Py figures are
# marked skipped.
#
# Usage: bench/python/run.sh <build-dir> [bench_python.py args: --json FILE, --repeats N, ...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ $# -lt 1 ]]; then
  echo "usage: $0 <build-dir> [bench_python.py args...]" >&2
  exit 2
fi
build="$(mkdir -p "$1" && cd "$1" && pwd)"
shift

GT4PY_PYTHON=""
env_lines=$(bash "$root/tests/integration/gt4py/run.sh" "$build" --print-env)
eval "$env_lines"
if [[ -z $GT4PY_PYTHON ]]; then
  echo "bench/python/run.sh: no GT4Py venv; /usr/bin/python3 (or python3) with the source tree (GT4Py figures skipped)" >&2
  lib="${GTSTORAGE_LIBRARY:-$(find "$build/src" -maxdepth 1 -name 'libgtstorage.so.1' 2>/dev/null | head -n 1)}"
  export GTSTORAGE_LIBRARY="$lib" PYTHONPATH="$root/bindings/python"
  GT4PY_PYTHON=python3
  [[ -x /usr/bin/python3 ]] && GT4PY_PYTHON=/usr/bin/python3  # Debian's, with python3-numpy
fi
exec "$GT4PY_PYTHON" "$here/bench_python.py" "$@"
