#!/usr/bin/env bash
# Provisions a Debian/Ubuntu machine for gtstorage: installs the Debian packages of
# .ci/debian-packages (everything run-tests.sh and CI use) that are missing. run-tests.sh runs it
# at its start, so a fresh machine needs nothing else; run it by hand to provision one up front.
# Idempotent: only the missing packages are installed (apt-get update first), and when none is
# missing nothing is run. Only as root: otherwise it installs nothing, says which packages are
# missing and exits 0 (they may be installed some other way).
# Usage: .ci/provision.sh [--print] [--quiet] [PACKAGE...]
#   PACKAGE...  install these instead of the whole list (run-demo.sh: a compiler, CMake, Ninja;
#               run-tests.sh's HIP step: hipcc, which pulls in LLVM 15, only when that step runs)
#   --print     print "packages: <the list>" and install nothing (also GTS_PRINT_DEPS=1)
#   --quiet     no step header, apt-get -qq
set -euo pipefail
list="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/debian-packages"
print=${GTS_PRINT_DEPS:-}
quiet=
while (($#)); do
  case $1 in
  --print) print=1 ;;
  --quiet) quiet=1 ;;
  --) shift; break ;;
  -*) echo "provision.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
  shift
done

wanted=() missing=()
if (($#)); then
  wanted=("$@")
else
  while read -r pkg; do
    pkg=${pkg%%#*}
    pkg=${pkg//[[:space:]]/}
    [[ -n $pkg ]] && wanted+=("$pkg")
  done <"$list"
fi
if [[ -n $print ]]; then  # tests: say what would be installed, install nothing
  echo "packages: ${wanted[*]}"
  exit 0
fi
if ! command -v dpkg-query >/dev/null; then
  echo "not a Debian system: make sure these are installed: ${wanted[*]}"
  exit 0
fi
for pkg in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
    missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
  echo "warning: missing Debian packages: ${missing[*]}"
  echo "         (not root: nothing installed; run as root to install them, or:"
  echo "          sudo apt-get install ${missing[*]})"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if [[ -n $quiet ]]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  printf '\n==== %s\n' "installing Debian packages: ${missing[*]}"
  apt-get update
  apt-get install -y --no-install-recommends "${missing[@]}"
fi
