# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared by run-demo.sh and run-tests.sh (sourced, not executed).

GTS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GTS_JOBS=${JOBS:-2}
# The normal build: Release optimisation plus debug info (-g), which the ABI check (abidiff)
# needs; the CUDA backend is built when /usr/local/cuda/bin/nvcc (or another nvcc) is found.
GTS_BUILD=${GTSTORAGE_BUILD_DIR:-$GTS_REPO/build/release}

gts_step() { printf '\n==== %s\n' "$*"; }

# gts_pytest_args ARG...: sets the array pytest_args to ARG... with every path argument (a file
# or directory, with or without ::node) made absolute, for a pytest that runs in another directory.
gts_pytest_args() {
  local arg
  pytest_args=()
  for arg in "$@"; do
    if [[ $arg != -* && -e ${arg%%::*} ]]; then
      arg="$(cd "$(dirname "${arg%%::*}")" && pwd)/$(basename "$arg")"
    fi
    pytest_args+=("$arg")
  done
}

# gts_install_deps [PACKAGE...]: .ci/provision.sh [PACKAGE...]: installs the missing Debian
# packages among PACKAGE... (default: every package of .ci/debian-packages, what CI needs) when
# running as root; otherwise says which are missing and carries on.
gts_install_deps() {
  bash "$GTS_REPO/.ci/provision.sh" "$@"
}

# gts_configure_preset PRESET DIR [cmake argument...]: configures the build directory DIR with
# the configure preset PRESET of CMakePresets.json (cmake --preset PRESET -B DIR ...). The presets
# name Ninja; a directory configured before keeps its generator, and a new one gets CMake's
# default generator when ninja is not installed (as the scripts did before the presets).
gts_configure_preset() {
  local preset=$1 dir=$2 generator=() cached
  shift 2
  if [[ -f $dir/CMakeCache.txt ]]; then
    cached=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
    if [[ -n $cached ]]; then generator=(-G "$cached"); fi
  elif ! command -v ninja >/dev/null; then
    generator=(-G "${CMAKE_GENERATOR:-Unix Makefiles}")
  fi
  cmake -S "$GTS_REPO" --preset "$preset" -B "$dir" "${generator[@]}" "$@"
}

# gts_find_python312: prints a Python 3.12 with venv and ensurepip (the Python of GT4Py 1.2.3, of
# the GT4Py integration test and of libgtstorage_python's tests), or fails. Looked for:
# $GTSTORAGE_PYTHON312 if set (then nothing else), python3.12 on PATH, pyenv's versions/3.12.*,
# /usr/local/bin/python3.12, /usr/bin/python3.12.
gts_find_python312() {
  local c pyenv_root="${PYENV_ROOT:-${HOME:-/root}/.pyenv}" cands=()
  if [[ -n ${GTSTORAGE_PYTHON312:-} ]]; then
    cands=("$GTSTORAGE_PYTHON312")  # when set, nothing else is tried
  else
    cands=("$(command -v python3.12 2>/dev/null || true)")
    # pyenv's 3.12.x, newest first (a shim on PATH may name a version that is not installed).
    # shellcheck disable=SC2012  # ls | sort -V: newest patch release first
    while read -r c; do cands+=("$c"); done < <(
      ls -d "$pyenv_root"/versions/3.12*/bin/python3.12 /root/.pyenv/versions/3.12*/bin/python3.12 \
        2>/dev/null | sort -V -r -u)
    cands+=(/usr/local/bin/python3.12 /usr/bin/python3.12)
  fi
  for c in "${cands[@]}"; do
    [[ -n $c && -x $c ]] || continue
    if "$c" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 12))' \
      >/dev/null 2>&1; then
      echo "$c"
      return 0
    fi
  done
  return 1
}
# Configures the normal build of run-tests.sh (the preset release; idempotent: re-running only
# re-checks); the demo configures its own, smaller build (run-demo.sh, the preset demo).
gts_configure_release() {
  # libgtstorage_python embeds the Python of GT4Py (3.12) when there is one, so that its tests
  # can run GT4Py in the embedded interpreter (tests/integration/bridge/run.sh).
  local embed=()
  local py312
  if py312=$(gts_find_python312); then embed=(-DGTSTORAGE_PYTHON_EXECUTABLE="$py312"); fi
  gts_configure_preset release "$GTS_BUILD" "${embed[@]}"
}
