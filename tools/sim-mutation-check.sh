#!/usr/bin/env bash
# Broken orderings the simulated CUDA runtime must catch (issue 7, "Done when"): each mutation
# below removes one wait or barrier from a copy of the source tree, builds only the emulated test
# that must catch it, runs it and checks that it FAILS with the expected message. The unmutated
# copy is built and run first and must pass. Exit 0 when every mutation is caught, 1 otherwise.
# The working tree itself is never modified.
#
# Usage: tools/sim-mutation-check.sh [WORK_DIR]
#   WORK_DIR (default: a temporary directory, removed at the end) receives the copy of the tree
#   (src/) and its build (build/); an existing WORK_DIR is reused, so a second run only
#   rebuilds what the mutations touch.
# Environment: JOBS (default 2); ONLY=<name> runs one mutation.
# Takes about 4 minutes on 2 cores from scratch (a configure and a build of three emulated tests,
# then one or two translation units per mutation), which is why it is a tool and not a CTest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/script-lib.sh"

# name | file | sed script | target | expected output (extended regex) | what is removed
mutations=(
  "destructor-wait|src/storage/buffer_set.cpp|/^buffer_set::~buffer_set() {/,/^}/ s/if (has_pending()) release_after_pending();/if (false \&\& has_pending()) release_after_pending();/|test_emulated_storage|elements came from the buffer after its owner reused it|buffer_set's destructor no longer waits for a pending asynchronous sync"
  "async-copy-pending|src/storage/storage_copy.cpp|/^void storage::copy_sides/,/^}/ s/if (queued) {/if (false \&\& queued) {/|test_emulated_queued_work|lost its zeros to the queued copy|an asynchronous copy_sides leaves no pending event on the buffer sets it touches (issue 23, F6)"
  "failed-copy-drain|src/storage/storage_copy.cpp|s/device::enqueue_or_drain(be, stream, \[\&\] { be.copy_strided(to, from, dir, stream); });/be.copy_strided(to, from, dir, stream);/|test_emulated_queued_work|returned with work still queued|a copy that fails part-way returns with its first runtime copies still queued into the caller's array or the staging buffer"
  "sync-every-device|src/device/gpu/gpu_streams.inl|/^  void synchronize(uint64_t stream) {/,/^  }/ s/if (!first) first = std::current_exception();/throw;/|test_emulated_queued_work|operations still queued at the return|a wait for a default stream stops at the first failed device and skips the others' queued work"
  "unified-stream-wait|src/storage/storage_copy.cpp|/^void wait_for_device_work/,/^}/ {/b.backend->synchronize(s.stream);/d}|test_emulated_storage|the host read did not wait for the stream|host access to unified memory no longer waits for the storage's stream"
  "cross-device-drain|src/device/gpu/gpu_copies.inl|/const drain_on_error drain(dst_stream.get());/d|test_emulated_error_sweep|memcheck: cudaMemcpy(2D)?Async: source \(when it ran\)|a failed cross-device copy no longer waits for the destination stream before freeing the packed source"
  "transpose-barrier|src/device/gpu/gpu_launch.inl|/transpose_load<T>(d, src, sd, p, threadIdx.x, threadIdx.y, buf);/{n;/__syncthreads();/d}|test_emulated_backend|CHECK failed|the transpose kernel's barrier between loading and storing a tile is gone"
)

work=${1:-}
cleanup=0
if [[ -z $work ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/gts-mutation.XXXXXX")
  cleanup=1
fi
mkdir -p "$work/src"
if ((cleanup)); then trap 'rm -rf "$work"' EXIT; fi
started=$SECONDS

gts_step "copying the working tree to $work/src"
# Tracked and untracked (not ignored) files as they are now, uncommitted edits included. Into a
# reused WORK_DIR only the files that differ are copied, with the current time: the tree's own
# (older) times would leave an object built from an earlier run's mutation looking up to date.
rm -rf "$work/incoming"
mkdir -p "$work/incoming"
(cd "$GTS_REPO" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [[ -f $f ]] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$work/incoming"
(cd "$work/incoming" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$work/incoming/$f" "$work/src/$f"; then
    mkdir -p "$(dirname "$work/src/$f")"
    cp "$work/incoming/$f" "$work/src/$f"
  fi
done
rm -rf "$work/incoming"
rm -rf "$work/pristine"
mkdir -p "$work/pristine"

gts_step "configuring $work/build"
generator=()
command -v ninja >/dev/null && [[ ! -f $work/build/CMakeCache.txt ]] && generator=(-G Ninja)
cmake -S "$work/src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DGTSTORAGE_ENABLE_CUDA=OFF \
  -DGTSTORAGE_ENABLE_FORTRAN=OFF -DGTSTORAGE_BUILD_BENCH=OFF -DGTSTORAGE_BUILD_TOOLS=OFF \
  -DGTSTORAGE_BUILD_EXAMPLES=OFF -DGTSTORAGE_BUILD_PYTHON=OFF -DGTSTORAGE_BUILD_DOCS=OFF \
  >"$work/configure.log" 2>&1 || {
  tail -n 30 "$work/configure.log"
  exit 1
}

targets=()
for m in "${mutations[@]}"; do
  IFS='|' read -r _ _ _ target _ _ <<<"$m"
  [[ " ${targets[*]-} " == *" $target "* ]] || targets+=("$target")
done

# Runs emulated test $1 of the build as CTest does; its output goes to $2.
run_test() {
  local bin
  bin=$(find "$work/build/tests" -type f -name "$1" -perm -u+x | head -n 1)
  (cd "$work/build" && env GTSTORAGE_DEVICE_BACKEND=emulated GTSTORAGE_EMULATED_DEVICES=2 \
    timeout 300 "$bin") >"$2" 2>&1
}

gts_step "unmutated: building and running ${targets[*]}"
cmake --build "$work/build" -j "$GTS_JOBS" --target "${targets[@]}" >"$work/build.log" 2>&1 || {
  tail -n 30 "$work/build.log"
  exit 1
}
for t in "${targets[@]}"; do
  if ! run_test "$t" "$work/$t.unmutated.log"; then
    echo "the unmutated $t fails, so a failure under a mutation would prove nothing:"
    tail -n 20 "$work/$t.unmutated.log"
    exit 1
  fi
  echo "$t: passes ($(tail -n 1 "$work/$t.unmutated.log"))"
done

caught=() missed=()
for m in "${mutations[@]}"; do
  IFS='|' read -r name file script target expect what <<<"$m"
  [[ -n ${ONLY:-} && $ONLY != "$name" ]] && continue
  gts_step "mutation $name: $what"
  src="$work/src/$file"
  saved="$work/pristine/${file//\//_}"
  [[ -f $saved ]] || cp -p "$src" "$saved"
  cp "$saved" "$src"
  sed -i -e "$script" "$src"
  if cmp -s "$saved" "$src"; then
    echo "NOT APPLIED: the sed script no longer matches $file (update this script)"
    missed+=("$name (not applied)")
    continue
  fi
  echo "sed -i -e '$script' $file"
  diff -u "$saved" "$src" | sed -n '3,$p' | grep '^[-+]' || true
  log="$work/$name.log"
  if ! cmake --build "$work/build" -j "$GTS_JOBS" --target "$target" >"$work/build-$name.log" 2>&1; then
    echo "the mutated tree does not build:"
    tail -n 20 "$work/build-$name.log"
    missed+=("$name (does not build)")
  else
    rc=0
    run_test "$target" "$log" || rc=$?
    if ((rc != 0)) && grep -Eq -- "$expect" "$log"; then
      echo "CAUGHT: $target exits $rc:"
      grep -E -- "$expect" "$log" | head -n 5
      tail -n 1 "$log"
      caught+=("$name")
    else
      echo "MISSED: $target exits $rc without /$expect/:"
      tail -n 10 "$log"
      missed+=("$name")
    fi
  fi
  cp "$saved" "$src"  # restored (its next build recompiles it once more)
  touch "$src"
done

gts_step "summary ($((SECONDS - started)) s)"
printf 'caught: %s\n' "${caught[@]-}"
if ((${#missed[@]})); then
  printf 'MISSED: %s\n' "${missed[@]}"
  exit 1
fi
echo "every broken ordering was caught"
