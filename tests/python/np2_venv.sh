# shellcheck shell=bash disable=SC2034,SC2154  # $here is the caller's; $root, $build, $venv its
# Sourced by tests/python/run.sh and tests/python/lint.sh (not run by itself), which set $here
# (tests/python) first.
# python_test_dirs <usage> <min args> <max args> "$@": the usage message and exit status 2 unless
# the script got that many arguments; else $root (the repository), $build (the first argument,
# a build directory, created) and $venv (its NumPy 2.x venv).
python_test_dirs() {
  local usage=$1 min=$2 max=$3
  shift 3
  if (($# < min || $# > max)); then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  root="$(cd "$here/../.." && pwd)"
  mkdir -p "$1"
  build="$(cd "$1" && pwd)"
  venv="$build/.venv-np2"
}

# make_np2_venv: creates <build-dir>/.venv-np2 ($venv) with the pinned development requirements
# (tests/python/requirements-dev.txt, in $here), or recreates it when the file changed since.
make_np2_venv() {
  local req="$here/requirements-dev.txt" stamp="$venv/.requirements.sha256" want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "== ${0##*/}: creating $venv (NumPy 2.x, pinned dev requirements)"
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  fi
}
