#!/usr/bin/env bash
# The mini-model of examples/model (model_f: a Fortran model calling GT4Py on its own fields
# through libgtstorage_python) with the GT4Py backends that compile, next to those CI runs:
#   cartesian: numpy (CI) and gt:cpu_kfirst (C++ compiled by GT4Py)
#   next:      embedded (CI) and gtfn_cpu (C++ compiled by gt4py.next: about a minute per
#              program on 2 cores, which is why this is a bench/ script and not a CI test)
# Every run checks itself against the plain Fortran reference, as in CI (a failing run fails the
# script). Writes JSON: the machine, and per run the first step (which compiles) and the mean of
# the later steps, in ms.
#
# Usage: bench/model/run.sh [build-dir (default build/release)] [out.json (default
#        <build-dir>/model-bench.json)]; env STEPS (default 40), NP (MPI processes, default 1).
# Needs the GT4Py venv of tests/integration/gt4py/run.sh (made or reused here) and a build with
# libgtstorage_python embedding its Python (run-tests.sh's normal build).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build/release}" && pwd)"
out="${2:-$build/model-bench.json}"
steps=${STEPS:-40}
np=${NP:-1}
model="$build/examples/model/model_f"
[[ -x $model ]] || { echo "bench/model: $model not built (cmake --build $build --target gtstorage-example-model-f)" >&2; exit 2; }

env_lines=$(bash "$root/tests/integration/gt4py/run.sh" "$build" --print-env)
[[ -n $env_lines ]] || { echo "bench/model: no GT4Py venv (see tests/integration/gt4py/run.sh)" >&2; exit 2; }
eval "$env_lines"
VIRTUAL_ENV="$(cd "$(dirname "$GT4PY_PYTHON")/.." && pwd)"
export VIRTUAL_ENV
export PYTHONPATH="$root/examples/model:$root/bindings/python"
export GT_CACHE_ROOT="$build/.gt4py-bench"  # compiled stencils kept between runs of this script
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
unset GTSTORAGE_LIBRARY

runs=("cartesian numpy" "cartesian gt:cpu_kfirst" "next embedded" "next gtfn_cpu")
results=()
for r in "${runs[@]}"; do
  read -r variant backend <<<"$r"
  echo "== model_f $variant ($backend), $np process(es), $steps steps"
  log=$(GTSTORAGE_MODEL_BACKEND=$([[ $variant == cartesian ]] && echo "$backend" || echo numpy) \
    GTSTORAGE_MODEL_NEXT_BACKEND=$([[ $variant == next ]] && echo "$backend" || echo embedded) \
    mpiexec --oversubscribe -n "$np" "$model" "$variant" "$steps" 2>&1 | grep -v UserWarning) || {
    echo "$log" >&2
    echo "bench/model: $variant ($backend) failed" >&2
    exit 1
  }
  echo "$log" | grep -E "^  (points|Python step|OK|FAILED)"
  grep -q "OK: identical to the reference" <<<"$log" || { echo "bench/model: wrong result" >&2; exit 1; }
  first=$(sed -n 's/.*Python step on process 0: first *\([0-9.]*\) ms, then *\([0-9.]*\) ms per step/\1/p' <<<"$log")
  later=$(sed -n 's/.*Python step on process 0: first *\([0-9.]*\) ms, then *\([0-9.]*\) ms per step/\2/p' <<<"$log")
  results+=("{\"variant\": \"$variant\", \"backend\": \"$backend\", \"first_step_ms\": $first, \"later_step_mean_ms\": $later}")
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
  echo "{"
  echo "  \"benchmark\": \"examples/model model_f through libgtstorage_python\","
  echo "  \"machine\": {\"cpu\": \"$cpu\", \"cores\": $(nproc)},"
  echo "  \"grid\": \"40 x 30 x 5 points, halo 2, $np process(es)\", \"steps\": $steps,"
  echo "  \"runs\": ["
  for i in "${!results[@]}"; do
    sep=","; [[ $i -eq $((${#results[@]} - 1)) ]] && sep=""
    echo "    ${results[$i]}$sep"
  done
  echo "  ]"
  echo "}"
} >"$out"
cat "$out"
