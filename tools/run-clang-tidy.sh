#!/usr/bin/env bash
# clang-tidy on the library's sources (src/) with the checks of .clang-tidy; any finding fails.
# Configures a compile database in <build-dir> with the preset lint of CMakePresets.json (CUDA
# and HIP off: the .cu/hipcc sources are not C++ clang-tidy can parse with their flags; their
# shared code, gpu_backend.inl, is checked through the simulated-runtime backend that includes it).
# Usage: tools/run-clang-tidy.sh <build-dir>   Env: JOBS (default 2), CLANG_TIDY (clang-tidy).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/script-lib.sh"
build=${1:?usage: $0 <build-dir>}
tidy=${CLANG_TIDY:-clang-tidy}
command -v "$tidy" >/dev/null || { echo "$tidy not found"; exit 1; }
gts_configure_preset lint "$build" >/dev/null
mapfile -t files < <(python3 - "$build/compile_commands.json" "$root/src/" <<'PY'
import json, sys
root = sys.argv[2]
for f in sorted({e["file"] for e in json.load(open(sys.argv[1]))}):
    if f.startswith(root) and f.endswith(".cpp"):
        print(f)
PY
)
echo "clang-tidy ($("$tidy" --version | grep -m1 -o 'version [0-9.]*')) on ${#files[@]} files of src/"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# clang-tidy exits 0 with findings that are warnings; a nonzero status (xargs: 123 when a run
# exited 1-125, 124 at 255, 125 on a signal, 126/127 when it could not run) without a finding
# in the log is a crash or a tool error, and fails too (tests/lint: lint.clang_tidy_script).
status=0
printf '%s\n' "${files[@]}" | xargs -P "${JOBS:-2}" -n 4 "$tidy" -p "$build" --quiet >"$log" 2>&1 ||
  status=$?
if grep -q "warning:\|error:" "$log"; then
  grep -A3 "warning:\|error:" "$log"
  echo "clang-tidy: $(grep -c "warning:\|error:" "$log") finding(s)"
  exit 1
fi
if ((status != 0)); then
  tail -n 40 "$log"
  echo "clang-tidy: failed (status $status) without a finding: a crash or a tool error"
  exit 1
fi
echo "clang-tidy: no findings"
