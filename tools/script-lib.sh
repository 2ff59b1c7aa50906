# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared by run-demo.sh and run-tests.sh (sourced, not executed).

GTS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GTS_JOBS=${JOBS:-2}
# The normal build: Release optimisation plus debug info (-g), which the ABI check (abidiff)
# needs; the CUDA backend is built when /usr/local/cuda/bin/nvcc (or another nvcc) is found.
GTS_BUILD=${GTSTORAGE_BUILD_DIR:-$GTS_REPO/build/release}

gts_step() { printf '\n==== %s\n' "$*"; }

# gts_install_deps [PACKAGE...]: installs the missing Debian packages among PACKAGE... (default:
# every package of .ci/debian-packages, what CI needs) when running as root; otherwise says which
# are missing and carries on (they may be installed some other way).
gts_install_deps() {
  local wanted=() missing=() pkg
  if (( $# )); then
    wanted=("$@")
  else
    while read -r pkg; do
      pkg=${pkg%%#*}
      pkg=${pkg//[[:space:]]/}
      [[ -n $pkg ]] && wanted+=("$pkg")
    done <"$GTS_REPO/.ci/debian-packages"
  fi
  if [[ -n ${GTS_PRINT_DEPS:-} ]]; then  # tests: say what would be installed, install nothing
    echo "packages: ${wanted[*]}"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null; then
    echo "not a Debian system: make sure these are installed: ${wanted[*]}"
    return 0
  fi
  for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$pkg")
  done
  if (( ${#missing[@]} == 0 )); then
    return 0
  fi
  if [[ $(id -u) -eq 0 ]]; then
    gts_step "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "warning: missing Debian packages: ${missing[*]}"
    echo "         (run as root to install them, or: sudo apt-get install ${missing[*]})"
  fi
}

# Configures the normal build of run-tests.sh (idempotent: re-running only re-checks); the demo
# configures its own, smaller build (run-demo.sh).
gts_configure_release() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if [[ -f $GTS_BUILD/CMakeCache.txt ]]; then generator=(); fi
  cmake -S "$GTS_REPO" -B "$GTS_BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS=-g -DCMAKE_CXX_FLAGS=-g -DCMAKE_Fortran_FLAGS=-g
}
