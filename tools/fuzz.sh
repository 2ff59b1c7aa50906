#!/usr/bin/env bash
# Builds the libFuzzer target over the C ABI (tests/cpp/fuzz/fuzz_capi.cpp: clang, coverage +
# AddressSanitizer + UndefinedBehaviorSanitizer, the host and the emulated device) in its own
# build directory, replays the seed corpus and every regression input (tests/cpp/fuzz/corpus,
# tests/cpp/fuzz/regressions), then fuzzes for a bounded time over a working corpus that starts as a
# copy of the seeds and grows from run to run. CI runs it for 2 minutes (run-tests.sh); run it
# longer by hand. docs/architecture.md, "Fuzzing the C ABI", says what the target checks.
#
# usage: tools/fuzz.sh [SECONDS] [libFuzzer option...]
#        (SECONDS default: $FUZZ_SECONDS, else 600; 0 builds and replays only)
# env:   FUZZ_BUILD_DIR (default build/fuzz), FUZZ_CORPUS (the working corpus, default
#        $FUZZ_BUILD_DIR/corpus), JOBS (build jobs, default 2), FUZZ_WORKERS (fuzzing processes,
#        default 1; more run libFuzzer's -fork mode), GTSTORAGE_FUZZ_* (switches of the target:
#        tests/cpp/fuzz/fuzz_capi.cpp, "Known bugs").
# The fuzzer's whole output is kept in $FUZZ_BUILD_DIR/fuzz-last.log.
# Exit status: 0 when the build, the replay and the fuzzing found nothing; 1 otherwise, with the
# crash file and the way to turn it into a regression input printed at the end.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$repo/tools/script-lib.sh"
seconds=${FUZZ_SECONDS:-600}
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
build=${FUZZ_BUILD_DIR:-$repo/build/fuzz}
corpus=${FUZZ_CORPUS:-$build/corpus}
jobs=${JOBS:-2}
workers=${FUZZ_WORKERS:-1}
seeds=$repo/tests/cpp/fuzz/corpus
regressions=$repo/tests/cpp/fuzz/regressions
started=$SECONDS

# libFuzzer comes with clang (Debian: its runtime is the package libclang-rt-14-dev, which clang
# only recommends).
cxx=${FUZZ_CXX:-clang++}
cc=${FUZZ_CC:-clang}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz.sh: $cxx not found; the fuzz target needs clang (Debian: apt-get install clang)" >&2
  exit 1
fi
runtime="$("$cxx" -print-resource-dir)/lib/linux/libclang_rt.fuzzer-$(uname -m).a"
if [[ ! -f $runtime ]]; then
  echo "fuzz.sh: libFuzzer's runtime ($runtime) is missing" >&2
  echo "         (Debian: apt-get install libclang-rt-\$(clang -dumpversion | cut -d. -f1)-dev)" >&2
  exit 1
fi

echo "== fuzz.sh: building $build (clang, -fsanitize=fuzzer,address,undefined)"
mkdir -p "$build"
# The preset fuzz of CMakePresets.json: only what the target links (no Fortran, CUDA, HIP, MPI,
# Python, docs, tests, tools, examples, benchmark); -O1 as in the sanitizer build of
# run-tests.sh; Debug keeps -g and assertions. The compilers are FUZZ_CC/FUZZ_CXX (the preset's
# clang and clang++ by default).
gts_configure_preset fuzz "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
# The target only: libgtstorage.so itself is not built here (clang links no sanitizer runtime
# into a shared library, which the library's -Wl,--no-undefined refuses).
cmake --build "$build" -j "$jobs" --target fuzz_capi
fuzzer=$build/tests/cpp/fuzz/fuzz_capi
echo "== fuzz.sh: built in $((SECONDS - started)) s"

echo "== fuzz.sh: replaying the seed corpus and the regression inputs"
t0=$SECONDS
if ! (cd "$build" && ctest --output-on-failure -R '^fuzz\.replay$'); then
  echo "== fuzz.sh: the replay failed: an input above still finds a bug (a regression input stays"
  echo "   failing until its bug is fixed); not fuzzing"
  exit 1
fi
echo "== fuzz.sh: replayed in $((SECONDS - t0)) s"
((seconds > 0)) || exit 0

mkdir -p "$corpus" "$build/artifacts"
cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true
find "$regressions" -type f ! -name "README*" -exec cp -n {} "$corpus"/ \;
echo "== fuzz.sh: fuzzing for $seconds s over $corpus ($(find "$corpus" -type f | wc -l) inputs)"
opts=(-max_total_time="$seconds" -max_len=2048 -timeout=60 -rss_limit_mb=4096
      -artifact_prefix="$build/artifacts/" -print_final_stats=1)
((workers > 1)) && opts+=(-fork="$workers" -ignore_crashes=0)
stamp=$build/artifacts/.started
touch "$stamp"
# The whole output goes to fuzz-last.log; the terminal (and CI's log) gets it without the lines
# of each new or reduced input, thousands in a run.
set +e
"$fuzzer" "${opts[@]}" "$@" "$corpus" 2>&1 | tee "$build/fuzz-last.log" |
  grep --line-buffered -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE) '
rc=${PIPESTATUS[0]}
set -e
if ((rc == 0)); then
  echo "== fuzz.sh: nothing found in $seconds s ($((SECONDS - started)) s in all)"
  exit 0
fi
cat <<EOF

== fuzz.sh: the fuzzer stopped with status $rc ($((SECONDS - started)) s in all); crash files:
$(find "$build/artifacts" -type f ! -name .started -newer "$stamp" -printf '   %p\n')
To turn a crash file into a regression input:
  1. minimize it:  $fuzzer -minimize_crash=1 -max_total_time=120 \\
                     -exact_artifact_path=/tmp/minimized CRASH_FILE
  2. read it:      GTSTORAGE_FUZZ_TRACE=1 $fuzzer /tmp/minimized   (every call and its status)
  3. keep it:      cp /tmp/minimized tests/cpp/fuzz/regressions/<what-it-shows>
     (the CTest test fuzz.replay of this build runs it from then on, and fails until it is fixed)
EOF
exit 1
