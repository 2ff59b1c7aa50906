#!/usr/bin/env bash
# Checks that every C/C++ source of the repository is formatted as .clang-format says (prints the
# offending files and the first differences; exit 1). --fix reformats them instead. Generated
# files (tools/gen_bindings.py writes them; their layout is the generator's) and vendored
# third_party/ code are not checked.
# Usage: tools/check-format.sh [--fix] [clang-format executable]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIP: not a git checkout (the file list comes from git ls-files)"
  exit 77
fi
fix=0
if [[ ${1:-} == --fix ]]; then
  fix=1
  shift
fi
clang_format=${1:-clang-format}
generated=(tests/fortran/abi_layout_gen.h src/capi/enums.hpp)
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h' '*.hpp' '*.inl' '*.cu' |
  grep -v '^third_party/' | grep -vxF -f <(printf '%s\n' "${generated[@]}"))
if ((fix)); then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if ((${#bad[@]})); then
  echo "not formatted as .clang-format says (fix: tools/check-format.sh --fix):"
  for f in "${bad[@]}"; do
    echo "  $f"
    diff -u "$f" <("$clang_format" "$f") | sed -n '3,20p' | sed 's/^/    /'
  done
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says ($("$clang_format" --version))"
