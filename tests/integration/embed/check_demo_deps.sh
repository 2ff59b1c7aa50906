#!/usr/bin/env bash
# The demo installs only what it needs (a C/C++ compiler, CMake, Ninja), while the test path
# (run-tests.sh, CI) still installs every package of .ci/debian-packages (.ci/provision.sh).
# Usage: check_demo_deps.sh <repository root>
set -euo pipefail
repo=${1:?usage: check_demo_deps.sh <repository root>}
fail() { echo "FAIL: $*" >&2; exit 1; }

demo=$(bash "$repo/run-demo.sh" --print-deps | sed -n 's/^packages: //p')
echo "run-demo.sh installs: $demo"
[[ -n $demo ]] || fail "run-demo.sh --print-deps printed no package list"
for pkg in $demo; do
  case $pkg in
  cmake | ninja-build | make | gcc | g++ | pkgconf) ;;
  *) fail "the demo installs $pkg, which it does not need" ;;
  esac
done
for pkg in cmake gcc g++; do
  [[ " $demo " == *" $pkg "* ]] || fail "the demo does not install $pkg"
done

ci=$(cd "$repo" && GTS_PRINT_DEPS=1 bash -c 'source tools/script-lib.sh && gts_install_deps' |
  sed -n 's/^packages: //p')
# Every package listed in .ci/debian-packages is still installed by the test path.
while read -r pkg; do
  pkg=${pkg%%#*}
  pkg=${pkg//[[:space:]]/}
  [[ -z $pkg ]] && continue
  [[ " $ci " == *" $pkg "* ]] || fail "run-tests.sh no longer installs $pkg"
done <"$repo/.ci/debian-packages"
# shellcheck disable=SC2016  # the line of run-tests.sh, not an expansion
grep -q '^bash "$GTS_REPO/.ci/provision.sh"$' "$repo/run-tests.sh" ||
  fail "run-tests.sh does not call .ci/provision.sh for the whole CI list"
echo "demo: $(wc -w <<<"$demo") packages; tests: $(wc -w <<<"$ci") packages"
