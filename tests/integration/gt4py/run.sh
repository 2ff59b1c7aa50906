#!/usr/bin/env bash
# GT4Py integration test: the real GT4Py (gt4py==1.2.3, gtscript stencils on the numpy, debug
# and gt:cpu_kfirst backends) on gtstorage allocations, compared with gt4py.storage
# (tests/integration/gt4py/test_gt4py_integration.py); gt4py.next on gtstorage.next (test_next.py: a
# randomized layout sweep against gt4py.next's allocator, programs on embedded execution and
# gtfn_cpu, the zero-copy wrap); then GT4Py's own gt4py.next allocator and constructor tests
# routed to gtstorage.next (next_vendored/, a second pytest process).
# Time budget: about 3 minutes warm on 2 cores, plus the compilations of a cold run (the gtfn_cpu
# program of test_next.py about a minute, the gtscript stencils about 2 minutes).
#
# It runs in a Python 3.12 venv at <build-dir>/.venv-gt4py with tests/integration/gt4py/requirements.txt
# (every package pinned); the venv is made again only when that file or the interpreter changes.
# Compiled stencils are cached in <build-dir>/.gt4py-work (GT4Py's .gt_cache), so a warm run
# compiles nothing.
#
# gtstorage reaches the venv in one of two ways (GTSTORAGE_GT4PY_INSTALL):
#   auto    (default) wheel when the repository has a pyproject.toml at its root, else source;
#   wheel   `pip install <repo>` into the venv (the package with its own libgtstorage and
#           gtstorage._native, CUDA off unless GTSTORAGE_GT4PY_WHEEL_CUDA=ON), redone when a
#           source of the package changes, incrementally (CMake build tree kept in
#           <build-dir>/.gt4py-wheel-build); the test then runs with neither GTSTORAGE_LIBRARY
#           nor PYTHONPATH set, as a user would;
#   source  bindings/python on PYTHONPATH and GTSTORAGE_LIBRARY = the build directory's library.
#
# It SKIPS (exit 0, with a "SKIPPED: <reason>" line) when the venv cannot be built: no Python 3.12
# (looked for: $GTSTORAGE_PYTHON312 if set, else python3.12 on PATH, pyenv's versions/3.12.*,
# /usr/local/bin/python3.12, /usr/bin/python3.12) or no package index reachable. Anything else
# (a pip failure while the index is reachable, a failing test) fails.
#
# Usage: tests/integration/gt4py/run.sh <build-dir> [pytest args...]
#        tests/integration/gt4py/run.sh <build-dir> --print-env   (makes the venv and installs gtstorage, then
#                      prints the shell lines that select them; used by bench/python/run.sh)
# Env:   GTSTORAGE_GT4PY_BACKENDS  stencil backends, comma separated (default
#                                  "numpy,debug,gt:cpu_kfirst"; "dace:cpu" works too, about 30 s
#                                  of compilation per stencil on 2 cores)
#        GTSTORAGE_GT4PY_REQUIRE=1 a skip is a failure (exit 1)
#        GTSTORAGE_GT4PY_SKIP=1    skip this step
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
t_start=$SECONDS

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <build-dir> [--print-env | pytest args...]" >&2
  exit 2
fi
mkdir -p "$1"
build="$(cd "$1" && pwd)"
shift
print_env=0
if [[ ${1-} == --print-env ]]; then
  print_env=1
  shift
fi
# In --print-env mode stdout carries only the shell lines; progress goes to stderr.
say() { if ((print_env)); then echo "$*" >&2; else echo "$*"; fi; }

skip() {
  say "SKIPPED: GT4Py integration test: $*"
  if [[ ${GTSTORAGE_GT4PY_REQUIRE:-0} == 1 ]]; then
    say "(GTSTORAGE_GT4PY_REQUIRE=1: a skip is a failure)"
    exit 1
  fi
  exit 0
}

if [[ ${GTSTORAGE_GT4PY_SKIP:-0} == 1 ]]; then
  skip "GTSTORAGE_GT4PY_SKIP=1"
fi

# ---- Python 3.12 -------------------------------------------------------------------------------
# shellcheck source=../../../tools/script-lib.sh
source "$root/tools/script-lib.sh"  # gts_find_python312
py=$(gts_find_python312) || skip "no Python 3.12 with venv/ensurepip found${GTSTORAGE_PYTHON312:+ (GTSTORAGE_PYTHON312=$GTSTORAGE_PYTHON312 is not one)} (set GTSTORAGE_PYTHON312, or install one: pyenv install 3.12)"
py_version=$("$py" -c 'import sys; print(sys.version.split()[0])')

# ---- the venv ----------------------------------------------------------------------------------
venv="$build/.venv-gt4py"
req="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
want="$( (sha256sum "$req" | cut -d' ' -f1; echo "$py $py_version") | sha256sum | cut -d' ' -f1)"

# Whether the package index answers (pip's own configuration: index URL, certificates, proxy).
index_reachable() {
  "$py" -m pip index versions gt4py --disable-pip-version-check --timeout 15 --retries 1 \
    >/dev/null 2>&1
}

if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  index_reachable || skip "the package index cannot be reached (no network?): cannot build the gt4py venv ($venv)"
  say "== gt4py: creating $venv (Python $py_version from $py, tests/integration/gt4py/requirements.txt)"
  t0=$SECONDS
  rm -rf "$venv"
  "$py" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --timeout 60 \
    --retries 2 -r "$req" >"$build/.venv-gt4py.log" 2>&1; then
    tail -n 40 "$build/.venv-gt4py.log" >&2
    rm -rf "$venv"
    index_reachable || skip "the package index stopped answering while the venv was built (network?)"
    say "gt4py: pip could not install tests/integration/gt4py/requirements.txt although the index is reachable (log: $build/.venv-gt4py.log)"
    exit 1
  fi
  echo "$want" >"$stamp"
  say "== gt4py: venv ready in $((SECONDS - t0)) s"
fi

# ---- gtstorage in the venv ---------------------------------------------------------------------
mode=${GTSTORAGE_GT4PY_INSTALL:-auto}
if [[ $mode == auto ]]; then
  if [[ -f $root/pyproject.toml ]]; then mode=wheel; else mode=source; fi
fi
export PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1
case $mode in
  wheel)
    # Reinstalled when a source of the package (library or binding) changes.
    src_hash=""
    if files=$(cd "$root" && git ls-files -co --exclude-standard -- src include cmake \
      third_party bindings/python CMakeLists.txt pyproject.toml 2>/dev/null) && [[ -n $files ]]
    then
      src_hash=$( (cd "$root" && { sort <<<"$files" | tr '\n' '\0' | xargs -0 sha256sum 2>&1 || true; }
        echo "${GTSTORAGE_GT4PY_WHEEL_CUDA:-OFF}") | sha256sum | cut -d' ' -f1)
    fi
    pkg_stamp="$venv/.gtstorage-package.sha256"
    if [[ -z $src_hash || ! -f $pkg_stamp || "$(cat "$pkg_stamp")" != "$src_hash" ]]; then
      say "== gt4py: pip install $root (the gtstorage package, built with its library)"
      t0=$SECONDS
      # Without build isolation (scikit-build-core and NumPy are in the venv) and with a CMake
      # build tree kept in the build directory, a warm rebuild recompiles only what changed.
      # If that fails (say, pyproject.toml asks for a build requirement the venv lacks), once
      # more the standard way: isolated, from scratch.
      wheel_build="$build/.gt4py-wheel-build"
      pip_install=("$venv/bin/python" -m pip install --disable-pip-version-check --no-input
        --no-deps --force-reinstall)
      export CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-2}"
      pip_install+=(-C "cmake.define.GTSTORAGE_ENABLE_CUDA=${GTSTORAGE_GT4PY_WHEEL_CUDA:-OFF}")
      if ! "${pip_install[@]}" --no-build-isolation -C "build-dir=$wheel_build" "$root" \
        >"$build/.gtstorage-wheel.log" 2>&1; then
        say "== gt4py: incremental build failed (log: $build/.gtstorage-wheel.log); isolated build"
        rm -rf "$wheel_build"
        if ! "${pip_install[@]}" "$root" >"$build/.gtstorage-wheel-isolated.log" 2>&1; then
          tail -n 60 "$build/.gtstorage-wheel-isolated.log" >&2
          say "gt4py: pip install $root failed (logs: $build/.gtstorage-wheel*.log)"
          exit 1
        fi
      fi
      echo "$src_hash" >"$pkg_stamp"
      say "== gt4py: gtstorage installed in $((SECONDS - t0)) s"
    fi
    unset GTSTORAGE_LIBRARY PYTHONPATH
    ;;
  source)
    lib="${GTSTORAGE_LIBRARY:-}"
    if [[ -z $lib ]]; then
      for cand in "$build/src/libgtstorage.so.1" "$build/src/libgtstorage.so" \
        "$build/lib/libgtstorage.so.1" "$build/libgtstorage.so.1"; do
        if [[ -f "$cand" ]]; then lib="$cand"; break; fi
      done
    fi
    if [[ -z $lib ]]; then
      say "gt4py: no libgtstorage.so under $build (build the 'gtstorage' target first, or set GTSTORAGE_LIBRARY)"
      exit 2
    fi
    export GTSTORAGE_LIBRARY="$lib"
    export PYTHONPATH="$root/bindings/python"
    ;;
  *)
    say "gt4py: GTSTORAGE_GT4PY_INSTALL must be auto, wheel or source (got '$mode')"
    exit 2
    ;;
esac

# GT4Py's stencil cache and DaCe's files stay in the build directory, out of the source tree.
work="$build/.gt4py-work"
mkdir -p "$work"
export GT_CACHE_ROOT="$work" DACE_CONFIG="$work/.dace.conf"
# gt4py.next's compiled programs (gtfn_cpu) too: a warm run compiles nothing.
export GT4PY_BUILD_CACHE_LIFETIME=persistent GT4PY_BUILD_CACHE_DIR="$work"
export GTSTORAGE_GT4PY_BACKENDS="${GTSTORAGE_GT4PY_BACKENDS:-numpy,debug,gt:cpu_kfirst}"
export GTSTORAGE_GT4PY_PACKAGE="$mode"  # the test checks that this is the gtstorage it imports

if ((print_env)); then
  printf 'export PYTHONNOUSERSITE=1 GT_CACHE_ROOT=%q DACE_CONFIG=%q\n' "$GT_CACHE_ROOT" "$DACE_CONFIG"
  printf 'export GT4PY_BUILD_CACHE_LIFETIME=persistent GT4PY_BUILD_CACHE_DIR=%q\n' "$work"
  if [[ $mode == source ]]; then
    printf 'export GTSTORAGE_LIBRARY=%q PYTHONPATH=%q\n' "$GTSTORAGE_LIBRARY" "$PYTHONPATH"
  else
    echo 'unset GTSTORAGE_LIBRARY PYTHONPATH'
  fi
  printf 'GT4PY_PYTHON=%q\n' "$venv/bin/python"
  exit 0
fi

say "== gt4py: $("$venv/bin/python" -c 'import gt4py, numpy; print(f"gt4py {gt4py.__version__}, NumPy {numpy.__version__}")') ($venv); gtstorage: $mode; stencil backends: $GTSTORAGE_GT4PY_BACKENDS"
# pytest runs in $work: path arguments are made absolute first.
gts_pytest_args "$@"
t0=$SECONDS
status=0
(cd "$work" && "$venv/bin/python" -m pytest -p no:cacheprovider -c "$here/pytest.ini" \
  --rootdir "$here" -rs "$here" ${pytest_args[@]+"${pytest_args[@]}"}) || status=$?
say "== gt4py: tests took $((SECONDS - t0)) s (whole step $((SECONDS - t_start)) s)"
# GT4Py's own gt4py.next allocator and constructor tests, routed to gtstorage.next.allocator
# (tests/integration/gt4py/next_vendored): a process of their own, since the routing replaces gt4py.next's
# standard allocators. Skipped when pytest was given arguments (a selection of the tests above).
if ((${#pytest_args[@]} == 0)); then
  t0=$SECONDS
  say "== gt4py: GT4Py's gt4py.next allocator and constructor tests on gtstorage.next"
  (cd "$work" && "$venv/bin/python" -m pytest -p no:cacheprovider -c "$here/next_vendored/pytest.ini" \
    --rootdir "$here/next_vendored" -rs "$here/next_vendored") || status=$?
  say "== gt4py: vendored gt4py.next tests took $((SECONDS - t0)) s"
fi
exit $status
