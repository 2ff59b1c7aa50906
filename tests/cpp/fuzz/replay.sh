#!/usr/bin/env bash
# Replays inputs of fuzz_capi without fuzzing: every file in the given directories, each in a
# process of its own (libFuzzer runs the files it is given once each), so that one crash does not
# hide the others. The CTest test fuzz.replay runs the seed corpus and the regression inputs; a
# crash, a sanitizer report or a violated check fails it, and the summary names every such file.
# Usage: replay.sh FUZZ_CAPI DIR...
set -uo pipefail
fuzzer=$1
shift
files=()
for dir in "$@"; do
  [[ -d $dir ]] || continue
  while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$dir" -type f ! -name 'README*' -print0 | sort -z)
done
if ((${#files[@]} == 0)); then
  echo "no inputs in $*"
  exit 1
fi
failed=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for f in "${files[@]}"; do
  # -timeout: an input that hangs fails here instead of running into the CTest timeout.
  if "$fuzzer" -timeout=60 "$f" >"$log" 2>&1; then
    echo "ok      $f"
  else
    echo "FAILED  $f"
    grep -E 'FINDING|ERROR: |SUMMARY: |runtime error: |^(WRITE|READ) of' "$log" | head -n 6 |
      sed 's/^/        /'
    failed+=("$f")
  fi
done
echo "${#files[@]} inputs replayed, ${#failed[@]} failed"
if ((${#failed[@]})); then
  echo "(GTSTORAGE_FUZZ_TRACE=1 $fuzzer FILE prints every call an input makes)"
  exit 1
fi
