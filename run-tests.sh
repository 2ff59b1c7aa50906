#!/usr/bin/env bash
# Builds and runs every test of gtstorage; CI runs exactly this (.ci/run). First runs
# .ci/provision.sh, which installs the missing Debian packages of .ci/debian-packages when run as
# root. Each build is configured with its preset of CMakePresets.json (cmake --preset NAME; the
# preset names the build type, flags and GTSTORAGE_* options, this script only the directory).
# Steps:
#   1. normal build (Release + debug info, CUDA backend when nvcc exists): the whole CTest suite
#      (C API tests, ABI checks, installed-tree consumer, CLI/examples, docs, Fortran, the
#      halo exchange of libgtstorage_mpi under mpiexec on 1-6 processes, ...)
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build without CUDA: the CTest suite again,
#      the emulated device suite included (tests labelled "python" excluded: an uninstrumented
#      interpreter cannot load the library; the MPI exchange on 1 and 4 processes only, the
#      normal suite runs every count)
#   3. the Python binding's tests (tests/python/run.sh, when present: the wheel built from the
#      repository root, installed into a NumPy 2.x venv and a Debian NumPy 1.24 venv), then the
#      GT4Py integration test (tests/integration/gt4py/run.sh: real gt4py==1.2.3 stencils on gtstorage
#      fields, in a Python 3.12 venv cached in the build directory; skipped with a "SKIPPED:"
#      line without Python 3.12 or network)
#   3b. libgtstorage_python's tests (tests/integration/bridge/run.sh: C and Fortran programs, the mini-model
#      on 1 and 4 MPI processes, embedding the Python 3.12 of the GT4Py venv of step 3, which
#      they need; CTest label "bridge", which the CTest runs of steps 1 and 2 skip)
#   4. HIP backend build (Debian's hipcc) and the device tests against it
#   5. ThreadSanitizer build: the C thread and pool tests and the device suite on the simulated
#      CUDA runtime (ctest -L emulated)
#   6. clang-tidy on src/ (tools/run-clang-tidy.sh, the checks of .clang-tidy, zero findings);
#      the clang-format check is the CTest test lint.format of step 1
#   7. the libFuzzer target over the C ABI (tools/fuzz.sh: tests/cpp/fuzz/fuzz_capi.cpp built with
#      clang, coverage + ASan + UBSan, on the host and the emulated device): the seed corpus and
#      every regression input replayed, then GTSTORAGE_FUZZ_SECONDS (default 120) of fuzzing
# Every step runs even if an earlier one failed; the exit status is non-zero if any failed.
# Environment: JOBS (default 2), GTSTORAGE_BUILD_DIR (normal build, default build/release),
# GTSTORAGE_ASAN_BUILD_DIR (default build/asan), GTSTORAGE_FUZZ_BUILD_DIR (default build/fuzz),
# GTSTORAGE_FUZZ_SECONDS (step 7's fuzzing time, default 120; 0 builds and replays only),
# GTSTORAGE_FUZZ_SEED (step 7's libFuzzer seed, default 1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/script-lib.sh"

asan_build=${GTSTORAGE_ASAN_BUILD_DIR:-$GTS_REPO/build/asan}
failed=()
started=$SECONDS

# Runs "$@" as step $1; a failure is recorded and the script goes on.
run_step() {
  local name=$1 t0=$SECONDS
  shift
  gts_step "$name"
  if "$@"; then
    echo "---- $name: passed ($((SECONDS - t0)) s)"
  else
    echo "---- $name: FAILED ($((SECONDS - t0)) s)"
    failed+=("$name")
  fi
}

# CI shows only the end of the log, so each failed CTest run also leaves the failed tests' names
# and output in this report, printed again before the summary.
failure_report=$(mktemp)
trap 'rm -f "$failure_report"' EXIT
ctest_runner=()  # a command prefix for ctest (the TSan step sets one)

# Runs ctest in directory $1 with the remaining arguments. On failure the failed tests are run
# once more, here, in the same environment (sanitizer options included), into the report.
run_ctest() {
  local dir=$1
  shift
  rm -f "$dir/Testing/Temporary/LastTestsFailed.log"  # ctest keeps it after a passing run
  (cd "$dir" && "${ctest_runner[@]}" ctest --output-on-failure -j "$GTS_JOBS" "$@") && return 0
  {
    echo "==== failed tests in $dir:"
    cat "$dir/Testing/Temporary/LastTestsFailed.log" 2>/dev/null
    (cd "$dir" && "${ctest_runner[@]}" ctest --rerun-failed --output-on-failure -j 1 2>&1 |
      tail -n 60)
  } >>"$failure_report"
  return 1
}

normal_build() {
  gts_configure_release && cmake --build "$GTS_BUILD" -j "$GTS_JOBS"
}
normal_tests() {
  run_ctest "$GTS_BUILD"
}
asan_build() {
  # The preset asan: -O1 keeps the sanitized suite fast; Debug adds -g and keeps assertions on.
  gts_configure_preset asan "$asan_build" &&
    cmake --build "$asan_build" -j "$GTS_JOBS"
}
asan_tests() {
  # No strict_string_checks: libgfortran (not instrumented) passes unterminated strings to
  # strndup with a length, which that option reports as an overflow.
  ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest "$asan_build" -LE python
}
hip_build_dir=${GTSTORAGE_HIP_BUILD_DIR:-$GTS_REPO/build/hip}
# The HIP backend must at least compile and link (no AMD GPU here: its no-device path and the
# shared device code are tested). Debian's hipcc pulls in LLVM 15, so it is installed only here
# (through .ci/provision.sh, not with the list of .ci/debian-packages).
hip_build_and_tests() {
  if ! command -v hipcc >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      bash "$GTS_REPO/.ci/provision.sh" --quiet hipcc || return 1
    else
      echo "hipcc not installed and not root: HIP build skipped"
      return 0
    fi
  fi
  gts_configure_preset hip "$hip_build_dir" &&
    cmake --build "$hip_build_dir" -j "$GTS_JOBS" &&
    run_ctest "$hip_build_dir" -L device
}
tsan_build=${GTSTORAGE_TSAN_BUILD_DIR:-$GTS_REPO/build/tsan}
# ThreadSanitizer on the library with the C thread tests (concurrent create/release, racing double
# releases, retain/release storms, per-thread errors, preset registration: the lock-free handle
# table and the thread-local error state must be race-free, not just pass) and the device suite
# on the simulated CUDA runtime (streams used from several threads, work run by whichever thread
# waits, kernel fibers).
tsan_build_and_tests() {
  # The same targets as the build preset tsan of CMakePresets.json (keep the two lists alike).
  gts_configure_preset tsan "$tsan_build" &&
    cmake --build "$tsan_build" -j "$GTS_JOBS" --target test_threads test_emulated_runtime \
      test_emulated_backend test_emulated_storage test_emulated_error_sweep test_emulated_interop_streams \
      test_sync_state_machine test_device_backends test_dlpack_import test_edge_shapes \
      test_alignment_gt4py test_pools test_copy_sides test_emulated_queued_work \
      test_campaign_findings || return 1
  # GCC 12's TSan runtime does not expect the address-space layout of kernels with high mmap
  # randomization; without ASLR (where the sandbox allows it) it runs on any of them.
  local ctest_runner=()
  setarch "$(uname -m)" -R true 2>/dev/null && ctest_runner=(setarch "$(uname -m)" -R)
  # One OpenMP thread: libgomp is not instrumented, so TSan cannot see its barriers and would
  # report the host kernels' worker threads (which are not what this step checks).
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 OMP_NUM_THREADS=1 \
    run_ctest "$tsan_build" -R '^c\.test_(threads|pools)$' &&
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 OMP_NUM_THREADS=1 \
      run_ctest "$tsan_build" -L emulated
}
# The Python package as users get it: tests/python/run.sh builds the wheel from the repository
# root (one build, reused by its NumPy 2.x and Debian NumPy 1.24 passes) and tests it installed.
python_tests() {
  run_logged "Python tests" env -u GTSTORAGE_LIBRARY JOBS="$GTS_JOBS" \
    bash "$GTS_REPO/tests/python/run.sh" "$GTS_BUILD"
}

bridge_tests() {
  run_logged "libgtstorage_python tests" env JOBS="$GTS_JOBS" \
    bash "$GTS_REPO/tests/integration/bridge/run.sh" "$GTS_BUILD"
}

gt4py_tests() {
  run_logged "GT4Py integration test" env JOBS="$GTS_JOBS" \
    bash "$GTS_REPO/tests/integration/gt4py/run.sh" "$GTS_BUILD"
}

# Runs "$@" (named $1) with its output shown and kept; on failure the lines that say what failed
# (pytest's FAILED/ERROR summary, assertion lines, run.sh's own messages) go into the report that
# is printed again before the summary, since CI shows only the end of the log.
run_logged() {
  local name=$1 log rc=0
  shift
  log=$(mktemp)
  "$@" 2>&1 | tee "$log" || rc=$?
  if ((rc)); then
    {
      echo "==== $name failed (exit $rc); what failed:"
      grep -E '^(FAILED|ERROR) |^E  |^== run\.sh|run\.sh: |Error|[0-9]+ (passed|failed)' "$log" |
        tail -n 80
    } >>"$failure_report"
  fi
  rm -f "$log"
  return $rc
}

# clang-tidy on src/ with the checks of .clang-tidy (zero findings), in its own compile database
# (the preset lint; the format check is the CTest test lint.format of the normal suite).
lint_tidy() {
  JOBS="$GTS_JOBS" "$GTS_REPO/tools/run-clang-tidy.sh" "$GTS_REPO/build/lint"
}

fuzz_build=${GTSTORAGE_FUZZ_BUILD_DIR:-$GTS_REPO/build/fuzz}
fuzz_seconds=${GTSTORAGE_FUZZ_SECONDS:-120}
# The fuzz target: build (about a minute on 2 cores), replay of the seed corpus and regression
# inputs (the CTest test fuzz.replay), bounded fuzzing. On a finding, the lines that say what and
# where (the sanitizer's or the target's report, the crash file, its base64) go into the report.
fuzz_build_and_run() {
  local log rc=0
  log=$(mktemp)
  # A fixed seed (GTSTORAGE_FUZZ_SEED, default 1): from the checked-in corpus, CI repeats the
  # same mutations run after run, so what passed here passes there; by hand, tools/fuzz.sh
  # draws a new seed each run.
  FUZZ_BUILD_DIR=$fuzz_build FUZZ_SECONDS=$fuzz_seconds JOBS=$GTS_JOBS \
    "$GTS_REPO/tools/fuzz.sh" "$fuzz_seconds" -seed="${GTSTORAGE_FUZZ_SEED:-1}" 2>&1 |
    tee "$log" || rc=$?
  if ((rc)); then
    {
      echo "==== fuzzing failed (exit $rc); what it found:"
      grep -E 'ERROR: |FINDING|SUMMARY: |runtime error: |Test unit written|^Base64: |crash files:|^   /|^FAILED |fuzz\.sh: ' \
        "$log" | tail -n 40
    } >>"$failure_report"
  fi
  rm -f "$log"
  return $rc
}

bash "$GTS_REPO/.ci/provision.sh"
echo "gtstorage tests: $(nproc) cores, JOBS=$GTS_JOBS, nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"

run_step "normal build ($GTS_BUILD)" normal_build
if [[ ! " ${failed[*]-} " =~ "normal build" ]]; then
  run_step "CTest suite, normal build" normal_tests
fi
if [[ ! " ${failed[*]-} " =~ "normal build" ]]; then
  run_step "Python tests (tests/python/run.sh)" python_tests
fi
if [[ ! " ${failed[*]-} " =~ "normal build" ]]; then
  run_step "GT4Py integration test (tests/integration/gt4py/run.sh)" gt4py_tests
fi
if [[ ! " ${failed[*]-} " =~ "normal build" ]]; then
  run_step "libgtstorage_python tests (tests/integration/bridge/run.sh)" bridge_tests
fi
run_step "HIP backend build and device tests ($hip_build_dir)" hip_build_and_tests
run_step "sanitizer build ($asan_build, address+undefined)" asan_build
if [[ ! " ${failed[*]-} " =~ "sanitizer build" ]]; then
  run_step "CTest suite, sanitizer build" asan_tests
fi
run_step "ThreadSanitizer build and thread tests ($tsan_build)" tsan_build_and_tests

run_step "clang-tidy on src/ (tools/run-clang-tidy.sh)" lint_tidy
run_step "fuzz target over the C ABI ($fuzz_build, ${fuzz_seconds} s of fuzzing)" fuzz_build_and_run

if [[ -s $failure_report ]]; then
  gts_step "failed tests (their output again)"
  cat "$failure_report"
fi
gts_step "summary ($((SECONDS - started)) s)"
if (( ${#failed[@]} )); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all test steps passed"
