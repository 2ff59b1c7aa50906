#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (H100/H200, sm_90): builds gtstorage with CUDA,
# runs the device suite with GTSTORAGE_TEST_REQUIRE_GPU=1 (no passing by skipping), the Python
# binding's tests on the CUDA backend (with CuPy and PyTorch as real consumers where installed),
# the device benchmark, the device binaries under compute-sanitizer (memcheck, racecheck,
# synccheck, initcheck) and the rest of the CTest suite, in that order (the most telling first,
# so a short lease still gets them), then writes a summary to paste into docs/gpu-validation.md.
# Aim: under 10 minutes on 16 cores.
#
# usage: tools/gpu-check.sh [OUT_DIR]      (default: $OUT if set, else build/gpu-check)
# env:   JOBS (default: nproc), CUDA_HOME (default /usr/local/cuda), CUDA_ARCH (default 90),
#        GTSTORAGE_GPU_CHECK_BUILD (build dir, default build/gpu), BUILD_ONLY=1 (stop after the
#        build: what a machine without a GPU can check), GPU_CHECK_BUDGET (seconds for the whole
#        run, default 570: each step's limit is cut to what is left, and a step with no time
#        left is not run and counts as failed, so a run that cannot finish in time says so),
#        GPU_CHECK_PYTHON (the interpreter of the Python step, default python3; it needs NumPy
#        and pytest), GPU_CHECK_MPI (ON: build libgtstorage_mpi too; default OFF),
#        GPU_CHECK_COMMIT (the commit the summary names, where the tree has no .git).
#        A cmocka outside the system paths (a GPU node's image without it): its prefix in
#        CMAKE_PREFIX_PATH (include/cmocka.h, lib/libcmocka.so); pkg-config is not needed.
# Exit status: 0 when every step passed, 1 otherwise (the summary says which).
set -u -o pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-${OUT:-$repo/build/gpu-check}}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
jobs=${JOBS:-$(nproc)}
arch=${CUDA_ARCH:-90}
build=${GTSTORAGE_GPU_CHECK_BUILD:-$repo/build/gpu}
mkdir -p "$out"
export PATH=$cuda_home/bin:$PATH
summary=$out/summary.md
t0=$SECONDS
failed=()
rows=()

budget=${GPU_CHECK_BUDGET:-570}

# step NAME LIMIT_S CMD...: runs with a time limit (cut to the budget left), output in
# $out/NAME.log, one summary row.
step() {
  local name=$1 limit=$2 t=$SECONDS rc
  shift 2
  local left=$((budget - (SECONDS - t0)))
  if ((left < 20)); then
    rows+=("| $name | NOT RUN | | the time budget ($budget s) is used up |")
    failed+=("$name")
    echo "[$((SECONDS - t0)) s] $name: not run (time budget)"
    return 1
  fi
  ((limit > left)) && limit=$left
  timeout --signal=TERM --kill-after=15 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  local last
  last=$(grep -v '^\s*$' "$out/$name.log" | tail -n 1 | cut -c1-140 | tr '|' '/')
  if [[ $rc -eq 0 ]]; then
    rows+=("| $name | passed | $((SECONDS - t)) s | $last |")
  else
    rows+=("| $name | FAILED (rc $rc) | $((SECONDS - t)) s | $last |")
    failed+=("$name")
  fi
  echo "[$((SECONDS - t0)) s] $name: rc $rc"
  return $rc
}

write_summary() {
  {
    echo "### $(date -u +%Y-%m-%d): tools/gpu-check.sh at ${GPU_CHECK_COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)}"
    echo
    echo '```'
    cat "$out/machine.txt"
    echo '```'
    echo
    echo "| step | result | time | last line |"
    echo "|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Total: $((SECONDS - t0)) s; ${#failed[@]} step(s) failed${failed[*]:+: ${failed[*]}}."
    if [[ -s $out/bench.json ]]; then
      echo
      echo "gtstorage-bench --device (median of 7):"
      echo
      echo '```json'
      python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("device"), indent=1))' \
        "$out/bench.json" 2>/dev/null || cat "$out/bench.json"
      echo '```'
    fi
  } >"$summary"
  echo "summary: $summary"
}

{
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
  else
    echo "nvidia-smi: not available"
  fi
  nvcc --version 2>&1 | tail -n 2
  echo "host: $(nproc) cores, $(uname -sr)"
} >"$out/machine.txt"
cat "$out/machine.txt"

# ---- 1. Build: RelWithDebInfo, -lineinfo so sanitizer reports name source lines ----------------
# First what the GPU steps run (the library, the device test programs and the benchmark); the
# rest of the suite is built by the last step.
step configure 120 cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCMAKE_CUDA_FLAGS=-lineinfo -DGTSTORAGE_ENABLE_CUDA=ON -DGTSTORAGE_ENABLE_FORTRAN=OFF \
  -DGTSTORAGE_ENABLE_MPI="${GPU_CHECK_MPI:-OFF}" \
  -DGTSTORAGE_BUILD_TESTS=ON -DGTSTORAGE_BUILD_BENCH=ON || { write_summary; exit 1; }
gpu_targets=(gtstorage test_device_backends test_gpu_checks gtstorage-bench)
# The sync suite where cmocka was found (the list read whole first: grep -q would end the pipe
# early, and pipefail would take the writer's SIGPIPE for a missing target).
build_targets=$(cmake --build "$build" --target help 2>/dev/null || true)
grep -qw test_sync_state_machine <<<"$build_targets" && gpu_targets+=(test_sync_state_machine)
step build 300 cmake --build "$build" -j "$jobs" --target "${gpu_targets[@]}" ||
  { write_summary; exit 1; }
if [[ ${BUILD_ONLY:-0} == 1 ]]; then
  step build_all 300 cmake --build "$build" -j "$jobs"
  write_summary
  exit 0
fi

# ---- 2. The device suite on the GPU (a missing device fails instead of skipping) ----------------
export GTSTORAGE_TEST_REQUIRE_GPU=1
devt=$build/tests/cpp/device/test_device_backends
ssm=$build/tests/c/test_sync_state_machine
checks=$build/tests/cpp/device/test_gpu_checks
# The label exactly: a regex "gpu" would take the simulated runtime's "emulated" tests too.
step ctest_gpu 150 ctest --test-dir "$build" -L '^gpu$' -V --timeout 140
grep -q "running the functional suite" "$out/ctest_gpu.log" ||
  { rows+=("| ctest_gpu | FAILED | | the CUDA functional suite did not run |"); failed+=(functional_suite); }
[[ -x $ssm ]] || { rows+=("| sync_state_machine | NOT BUILT | | cmocka not found |"); failed+=(sync_suite); }

# ---- 3. The Python binding on the CUDA backend: the whole pytest suite (device tests included;
#         test_cuda_consumers.py with CuPy and PyTorch as real consumers and producers) ----------
py=${GPU_CHECK_PYTHON:-python3}
if "$py" -c "import numpy, pytest" >/dev/null 2>&1; then
  step python_gpu 240 env GTSTORAGE_DEVICE_BACKEND=cuda PYTHONDONTWRITEBYTECODE=1 \
    GTSTORAGE_LIBRARY="$build/src/libgtstorage.so.1" PYTHONPATH="$repo/bindings/python" \
    HYPOTHESIS_STORAGE_DIRECTORY="$build/.hypothesis" \
    "$py" -m pytest -q -p no:cacheprovider -rfEs --tb=short "$repo/tests/python"
else
  rows+=("| python_gpu | NOT RUN | | $py has no NumPy or pytest |")
  failed+=(python_gpu)
fi

# ---- 4. Device benchmark (512 x 512 x 128 f8 fields) ----------------------------------------------
step bench 60 "$build/bench/gtstorage-bench" --device --json-only --reps 7 &&
  cp "$out/bench.log" "$out/bench.json"

# ---- 5. compute-sanitizer on the binaries that launch kernels and move memory --------------------
cs=$(command -v compute-sanitizer || find "$cuda_home/compute-sanitizer" -maxdepth 1 -name compute-sanitizer -type f 2>/dev/null | head -n 1)
if [[ -n $cs ]]; then
  csf=(--error-exitcode 99 --print-limit 50)
  export GTSTORAGE_GPU_TRIALS=8  # fewer random layouts: every kernel and path still runs
  step memcheck_backend 90 "$cs" --tool memcheck --leak-check full "${csf[@]}" "$devt"
  step racecheck_backend 90 "$cs" --tool racecheck --racecheck-report all "${csf[@]}" "$devt"
  step memcheck_sync 60 "$cs" --tool memcheck "${csf[@]}" "$ssm" cuda
  step synccheck_backend 60 "$cs" --tool synccheck "${csf[@]}" "$devt"
  # initcheck on the backend suite, whose buffers are written before they are read: the sync
  # suite's storages are uninitialized or padded, and a sync copies the whole allocation (one
  # contiguous copy, by design), so initcheck reports every such copy there (3338 reports on
  # the 2026-11-28 run, all of that kind; docs/gpu-validation.md).
  step initcheck_backend 60 "$cs" --tool initcheck "${csf[@]}" "$devt"
  step memcheck_checks 120 "$cs" --tool memcheck "${csf[@]}" "$checks"
  unset GTSTORAGE_GPU_TRIALS
else
  rows+=("| compute-sanitizer | FAILED | | not found under $cuda_home |")
  failed+=(compute-sanitizer)
fi

# ---- 5b. An OpenACC model calls CuPy on its device arrays through libgtstorage_python --------------
# (issue 24; examples/model/model_acc.f90): gfortran with nvptx offloading, a build of its own
# with the Fortran binding and libgtstorage_python embedding GPU_CHECK_ACC_PYTHON (default
# python3: it needs NumPy and CuPy; its venv, if it is one, is passed as VIRTUAL_ENV). The OpenACC
# runtime must find the GPU (ACC_DEVICE_TYPE=nvidia: no silent host fallback).
acc_py=${GPU_CHECK_ACC_PYTHON:-python3}
if ! "$acc_py" -c "import numpy, cupy" >/dev/null 2>&1; then
  rows+=("| openacc_bridge | NOT RUN | | $acc_py has no NumPy or CuPy |")
elif ! gfortran -fopenacc -foffload=nvptx-none -foffload-options=nvptx-none=-misa=sm_80 \
  -x f95 - -o /dev/null <<<"program p; end program" >/dev/null 2>&1; then
  rows+=("| openacc_bridge | NOT RUN | | gfortran cannot offload to nvptx (Debian: gcc-12-offload-nvptx) |")
else
  acc_build=$build-acc
  acc_venv=$("$acc_py" -c 'import sys; print(sys.prefix if sys.prefix != sys.base_prefix else "")')
  step openacc_configure 90 cmake -S "$repo" -B "$acc_build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$cuda_home/bin/nvcc" -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DGTSTORAGE_ENABLE_CUDA=ON -DGTSTORAGE_ENABLE_FORTRAN=ON -DGTSTORAGE_ENABLE_MPI=OFF \
    -DGTSTORAGE_PYTHON_EXECUTABLE="$(command -v "$acc_py")" -DGTSTORAGE_BUILD_TESTS=OFF \
    -DGTSTORAGE_BUILD_BENCH=OFF -DGTSTORAGE_BUILD_EXAMPLES=ON &&
    step openacc_build 180 cmake --build "$acc_build" -j "$jobs" --target gtstorage-example-model-acc &&
    step openacc_bridge 60 env ACC_DEVICE_TYPE=nvidia ${acc_venv:+VIRTUAL_ENV="$acc_venv"} \
      PYTHONPATH="$repo/examples/model:$repo/bindings/python" "$acc_build/examples/model/model_acc"
  grep -q "model_acc (device).*OK\|OK: identical" "$out/openacc_bridge.log" 2>/dev/null ||
    { rows+=("| openacc_bridge | FAILED | | the device path did not report OK |"); failed+=(openacc_bridge_result); }
fi

# ---- 6. The rest of the suite with this build (the simulated runtime included), as CI runs it ----
step build_all 240 cmake --build "$build" -j "$jobs" &&
  step ctest_all 120 ctest --test-dir "$build" -j 8 -LE '^gpu$' --output-on-failure --timeout 110

write_summary
[[ ${#failed[@]} -eq 0 ]]
