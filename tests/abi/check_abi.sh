#!/usr/bin/env bash
# Compares libgtstorage.so with the checked-in libabigail baseline (tests/abi/gtstorage.abi).
#
# abidiff's exit status is a bit set: 1 tool error, 2 usage error, 4 ABI change, 8 incompatible
# ABI change (a removed function, a changed parameter type...). Bits 1, 2 and 8 fail the test.
# Bit 4 alone covers what our ABI rules allow (added functions, fields appended to a struct that
# begins with struct_size, new enumerators) but also changes abidiff calls "compatible" that
# would still break existing callers of this C API: a moved field (offset changed), a removed
# field, an enumerator whose value changed or that was removed, a renamed type. Those are
# rejected here by looking for them in the report.
#
# usage: check_abi.sh ABIDIFF BASELINE LIBRARY HEADERS_DIR [FUNCTIONS]
#   FUNCTIONS: tests/abi/exported_functions.txt (written by tools/gen_bindings.py), whose
#   experimental functions are left out of the comparison.
set -uo pipefail

abidiff=$1 baseline=$2 lib=$3 headers=$4 functions=${5-}
SKIP=77

# The experimental tier (no ABI promise) is left out of the comparison: a suppression of the
# functions the generator lists as experimental, so that no list is kept by hand.
suppressions=()
if [[ -n $functions ]]; then
  names=$(awk '$2 == "experimental" {print $1}' "$functions" | paste -sd '|')
  [[ -n $names ]] || { echo "FAIL: no experimental functions listed in $functions"; exit 1; }
  suppr=$(mktemp)
  trap 'rm -f "$suppr"' EXIT
  printf '[suppress_function]\n  name_regexp = ^(%s)$\n' "$names" >"$suppr"
  suppressions=(--suppressions "$suppr")
  echo "left out (experimental tier): ${names//|/, }"
fi

if ! readelf -S "$lib" | grep -q '\.debug_info'; then
  echo "SKIP: $lib has no debug info (abidiff needs it); build with -g (e.g. RelWithDebInfo," \
       "or Release with CMAKE_C_FLAGS/CMAKE_CXX_FLAGS=-g) to run the ABI check"
  exit $SKIP
fi
[[ -f $baseline ]] || { echo "FAIL: no baseline $baseline (tools/update-abi-baseline.sh)"; exit 1; }

report=$("$abidiff" --headers-dir2 "$headers" --drop-private-types --exported-interfaces-only \
  ${suppressions[@]+"${suppressions[@]}"} "$baseline" "$lib" 2>&1)
rc=$?
echo "$report"
echo "abidiff exit status: $rc"

if (( rc & 3 )); then
  echo "FAIL: abidiff could not compare the library with the baseline"
  exit 1
fi
if (( rc & 8 )); then
  echo "FAIL: incompatible ABI change (see the report above)"
  exit 1
fi
if (( rc & 4 )); then
  # Changes abidiff does not flag as incompatible but that break a C caller compiled against
  # the baseline header.
  forbidden=$(grep -E "offset changed|data member deletion|enumerator deletion|from value '|type name changed|\[D\]|Removed (function|variable)" <<<"$report" || true)
  if [[ -n $forbidden ]]; then
    echo "FAIL: ABI change that breaks existing callers:"
    echo "$forbidden"
    exit 1
  fi
  echo "OK: only compatible additions (if intended, refresh the baseline with tools/update-abi-baseline.sh)"
  exit 0
fi
echo "OK: ABI identical to the baseline"
