#!/usr/bin/env bash
# Regenerates tests/abi/gtstorage.abi, the libabigail baseline that the abi.abidiff test compares
# libgtstorage.so with. Run it when an ABI change is intended (added functions, appended struct
# fields, a new major version) and commit the new baseline with the change, so reviewers see it.
#
# usage: tools/update-abi-baseline.sh [LIBRARY]
#   Without LIBRARY it configures and builds a Release library with debug info (-g: abidw reads
#   the types from DWARF) in build/abi-baseline, without CUDA (the exported API is the same).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$repo/tests/abi/gtstorage.abi
command -v abidw >/dev/null || { echo "abidw not found (Debian: apt-get install abigail-tools)" >&2; exit 1; }

if [[ $# -ge 1 ]]; then
  lib=$1
else
  build=$repo/build/abi-baseline
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # Paths relative to the checkout keep the baseline identical whoever generates it.
  flags="-g -ffile-prefix-map=$repo/=./"
  cmake -S "$repo" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DGTSTORAGE_ENABLE_CUDA=OFF \
    -DGTSTORAGE_ENABLE_HIP=OFF -DGTSTORAGE_ENABLE_FORTRAN=OFF -DGTSTORAGE_BUILD_TESTS=OFF \
    -DGTSTORAGE_BUILD_BENCH=OFF -DGTSTORAGE_BUILD_TOOLS=OFF
  cmake --build "$build" --target gtstorage -j "${JOBS:-2}"
  lib=$(find "$build" -name 'libgtstorage.so.*.*.*' -type f | head -n 1)
fi
[[ -f $lib ]] || { echo "no library at '$lib'" >&2; exit 1; }

# Only the stable tier (gtstorage.h) is in the baseline, its symbol table and its declarations:
# the experimental one (gtstorage_experimental.h, node GTSTORAGE_EXPERIMENTAL) has no ABI
# promise. The tiers are those tools/gen_bindings.py lists (it reads them from the headers).
functions=$repo/tests/abi/exported_functions.txt
keep=$(mktemp)
drop=$(mktemp)
trap 'rm -f "$keep" "$drop"' EXIT
{
  echo "[abi_whitelist]"
  awk '!/^#/ && $2 == "stable" {print "  " $1}' "$functions"
} >"$keep"
printf '[suppress_function]\n  name_regexp = ^(%s)$\n  drop = yes\n' \
  "$(awk '!/^#/ && $2 == "experimental" {print $1}' "$functions" | paste -sd '|')" >"$drop"
abidw --headers-dir "$repo/include/gtstorage" --drop-private-types --no-corpus-path \
  --no-comp-dir-path --type-id-style hash --exported-interfaces-only --kmi-whitelist "$keep" \
  --suppressions "$drop" --out-file "$out" "$lib"
echo "wrote $out from $lib ($(grep -c '<elf-symbol ' "$out") exported functions)"
