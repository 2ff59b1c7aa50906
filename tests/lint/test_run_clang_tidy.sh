#!/usr/bin/env bash
# tools/run-clang-tidy.sh fails on findings and on a clang-tidy that fails without one (a crash
# prints no "warning:" line), and passes only on a clean, successful run. A stand-in clang-tidy
# (CLANG_TIDY) plays each case; the compile database is configured once in <work>.
# Usage: test_run_clang_tidy.sh <repository> <work>
set -euo pipefail
repo=${1:?usage: $0 <repository> <work>}
work=${2:?usage: $0 <repository> <work>}
mkdir -p "$work"
fake=$work/fake-clang-tidy
fail() { echo "FAIL: $*" >&2; exit 1; }

# run CASE: runs the script with the stand-in in mode CASE; sets rc and out.
run() {
  cat >"$fake" <<FAKE
#!/usr/bin/env bash
if [[ \${1:-} == --version ]]; then echo "LLVM version 99.0.0"; exit 0; fi
case $1 in
  crash) echo "Stack dump:" >&2; echo "0.  Program arguments: clang-tidy" >&2; kill -SEGV \$\$ ;;
  exit1) echo "clang-tidy: unknown argument" >&2; exit 1 ;;
  finding) echo "/x/src/a.cpp:1:1: warning: something [bugprone-x]"; exit 0 ;;
  clean) exit 0 ;;
esac
FAKE
  chmod +x "$fake"
  rc=0
  out=$(CLANG_TIDY=$fake JOBS=1 "$repo/tools/run-clang-tidy.sh" "$work/build" 2>&1) || rc=$?
  printf -- '---- %s (exit %s)\n%s\n' "$1" "$rc" "$out"
}

run clean
[[ $rc == 0 && $out == *"clang-tidy: no findings"* ]] || fail "a clean run did not pass"
run finding
[[ $rc != 0 && $out == *" finding(s)"* && $out == *"warning: something"* ]] || fail "a finding did not fail the script"
run crash
[[ $rc != 0 && $out == *"without a finding"* ]] || fail "a crashing clang-tidy did not fail"
run exit1
[[ $rc != 0 && $out == *"without a finding"* ]] || fail "clang-tidy exiting 1 did not fail"
echo "run-clang-tidy.sh: fails on findings, crashes and tool errors; passes when clean"
