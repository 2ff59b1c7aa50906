#!/usr/bin/env bash
# The dynamic symbol table of libgtstorage.so must hold exactly the functions the public header
# declares (all gtstorage_*), each bound to a GTSTORAGE_* version node of the version script:
# nothing from the C++ internals, the C++ runtime, OpenMP or the static CUDA runtime may leak,
# and no declared function may be missing. The stable header's functions are bound to a
# numbered node (GTSTORAGE_1), the experimental header's to GTSTORAGE_EXPERIMENTAL (no ABI
# promise: the ABI check leaves that node out).
#
# usage: check_symbols.sh NM LIBRARY STABLE_HEADER [EXPERIMENTAL_HEADER] (gtstorage.h and the
# experimental tier's gtstorage_experimental.h: both tiers are exported by the same library)
set -euo pipefail

nm=$1 lib=$2
shift 2
headers=("$@")
fail=0

# "ADDRESS TYPE NAME[@@VERSION]"; absolute (A) entries named like GTSTORAGE_1 are the version
# definitions themselves, not symbols a program can bind to.
table=$("$nm" -D --defined-only "$lib")
exported=$(awk '!($2 == "A" && $3 ~ /^GTSTORAGE_([0-9_.]+|EXPERIMENTAL)$/) {print $3}' <<<"$table")
[[ -n $exported ]] || { echo "FAIL: $lib exports no symbols"; exit 1; }

bad_names=$(grep -vE '^gtstorage_[a-z0-9_]+(@@?GTSTORAGE_([0-9_.]+|EXPERIMENTAL))?$' <<<"$exported" || true)
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
declared_in() {
  awk '/^[[:space:]]*GTSTORAGE_API/ && match($0, /gtstorage_[a-z0-9_]+[[:space:]]*\(/) {
         name = substr($0, RSTART, RLENGTH - 1); sub(/[[:space:]]+$/, "", name); print name
       }' "$@" | sort -u
}
declared=$(declared_in "${headers[@]}")
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

# Each tier in its node: the stable header's functions in a numbered one, the experimental
# header's in GTSTORAGE_EXPERIMENTAL.
node_of() { sed -nE "s/^$1@@?(GTSTORAGE_[A-Z0-9_.]+)$/\1/p" <<<"$exported" | head -n 1; }
stable=$(declared_in "${headers[0]}")
experimental=""
(( ${#headers[@]} > 1 )) && experimental=$(declared_in "${headers[@]:1}")
for f in $stable; do
  node=$(node_of "$f")
  if [[ -n $node && ! $node =~ ^GTSTORAGE_[0-9_.]+$ ]]; then
    echo "FAIL: $f (stable header) is bound to $node, not to a numbered GTSTORAGE_ node"
    fail=1
  fi
done
for f in $experimental; do
  node=$(node_of "$f")
  if [[ -n $node && $node != GTSTORAGE_EXPERIMENTAL ]]; then
    echo "FAIL: $f (experimental header) is bound to $node, not to GTSTORAGE_EXPERIMENTAL" \
      "(list it in src/gtstorage.map)"
    fail=1
  fi
done

count=$(wc -l <<<"$names")
if (( fail )); then exit 1; fi
echo "OK: $count exported symbols, all gtstorage_* functions declared in the headers, all versioned" \
  "($(wc -w <<<"$experimental") in GTSTORAGE_EXPERIMENTAL)"
