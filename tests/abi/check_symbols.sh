#!/usr/bin/env bash
# The dynamic symbol table of libgtstorage.so must hold exactly the functions the public header
# declares (all gtstorage_*), each bound to a GTSTORAGE_* version node of the version script:
# nothing from the C++ internals, the C++ runtime, OpenMP or the static CUDA runtime may leak,
# and no declared function may be missing.
#
# usage: check_symbols.sh NM LIBRARY HEADER... (gtstorage.h and the experimental tier's
# gtstorage_experimental.h: both tiers are exported by the same library)
set -euo pipefail

nm=$1 lib=$2
shift 2
headers=("$@")
fail=0

# "ADDRESS TYPE NAME[@@VERSION]"; absolute (A) entries named like GTSTORAGE_1 are the version
# definitions themselves, not symbols a program can bind to.
table=$("$nm" -D --defined-only "$lib")
exported=$(awk '!($2 == "A" && $3 ~ /^GTSTORAGE_[0-9_.]+$/) {print $3}' <<<"$table")
[[ -n $exported ]] || { echo "FAIL: $lib exports no symbols"; exit 1; }

bad_names=$(grep -vE '^gtstorage_[a-z0-9_]+(@@?GTSTORAGE_[0-9_.]+)?$' <<<"$exported" || true)
if [[ -n $bad_names ]]; then
  echo "FAIL: exported symbols outside the public API (gtstorage_*):"
  sed 's/^/  /' <<<"$bad_names"
  fail=1
fi
unversioned=$(grep -E '^gtstorage_[a-z0-9_]+$' <<<"$exported" || true)
if [[ -n $unversioned ]]; then
  echo "FAIL: symbols without a GTSTORAGE_* version (is the version script applied?):"
  sed 's/^/  /' <<<"$unversioned"
  fail=1
fi
not_functions=$(awk '!($2 == "A" && $3 ~ /^GTSTORAGE_/) && $2 != "T" {print "  " $2 " " $3}' <<<"$table")
if [[ -n $not_functions ]]; then
  echo "FAIL: exported symbols that are not functions (type T):"
  echo "$not_functions"
  fail=1
fi

# Functions declared in the header: the first gtstorage_xxx( on each GTSTORAGE_API line.
declared=$(awk '/^[[:space:]]*GTSTORAGE_API/ && match($0, /gtstorage_[a-z0-9_]+[[:space:]]*\(/) {
                   name = substr($0, RSTART, RLENGTH - 1); sub(/[[:space:]]+$/, "", name); print name
                 }' "${headers[@]}" | sort -u)
names=$(sed -E 's/@.*$//' <<<"$exported" | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$names"))
extra=$(comm -13 <(echo "$declared") <(echo "$names"))
if [[ -n $missing ]]; then
  echo "FAIL: declared in the headers but not exported:"
  sed 's/^/  /' <<<"$missing"
  fail=1
fi
if [[ -n $extra ]]; then
  echo "FAIL: exported but not declared in the headers:"
  sed 's/^/  /' <<<"$extra"
  fail=1
fi

count=$(wc -l <<<"$names")
if (( fail )); then exit 1; fi
echo "OK: $count exported symbols, all gtstorage_* functions declared in the headers, all versioned"
