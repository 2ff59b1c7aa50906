#!/usr/bin/env bash
# Lint and type checks of the Python package bindings/python/gtstorage (issue 26 point 7):
#   ruff check   (rules and exclusions in the repository's pyproject.toml, [tool.ruff])
#   mypy         (--strict and the checked files in pyproject.toml, [tool.mypy])
# with the pinned ruff and mypy of tests/python/requirements-dev.txt in the NumPy 2.x venv
# <build-dir>/.venv-np2 (created or refreshed here as tests/python/run.sh does; NumPy 2.x ships
# the stubs mypy reads). Any finding fails (exit status 1). Caches go to the build directory.
# tests/python/run.sh runs this after the tests (GTSTORAGE_PY_SKIP_LINT=1 skips it there).
#
# Usage: tests/python/lint.sh <build-dir>
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=np2_venv.sh
. "$here/np2_venv.sh"
python_test_dirs "<build-dir>" 1 1 "$@"
make_np2_venv

status=0
cd "$root"
echo "== lint.sh: ruff $("$venv/bin/ruff" --version | cut -d' ' -f2) check"
RUFF_CACHE_DIR="$build/.ruff_cache" "$venv/bin/ruff" check --no-fix || status=1
echo "== lint.sh: mypy $("$venv/bin/mypy" --version | cut -d' ' -f2) (strict)"
"$venv/bin/mypy" --cache-dir "$build/.mypy_cache" || status=1
if ((status)); then
  echo "lint.sh: findings above (configuration: $root/pyproject.toml)" >&2
fi
exit $status
