#!/usr/bin/env bash
# Fortran -> Python call-overhead benchmark: py2fgen vs our bridge (libgtstorage_python).
#
#   bench/py2fgen/run.sh [OUT_JSON]      (default: build/py2fgen/py2fgen.json)
#
# Idempotent and non-interactive:
#   1. creates/updates the venv build/py2fgen/venv from requirements.txt
#   2. generates the py2fgen bindings for bench_functions.py (build/py2fgen/gen)
#   3. builds the Fortran driver with the py2fgen layer (build/py2fgen/obj/bench_driver)
#   4. builds the same driver with layer_gtstorage.F90 and bench_persistent.F90 against
#      a gtstorage build (build/py2fgen/gt/obj), read-only use of its libraries and .mod files
#   5. runs, one process after the other: py2fgen (default interpreter flags),
#      gtstorage wrap-per-call, gtstorage persistent, py2fgen (PYTHONOPTIMIZE=2)
#   6. writes OUT_JSON (py2fgen half, collect_results.py, unchanged format) and
#      COMPARISON_JSON (both halves, ratios, copies, targets; compare_results.py)
#
# Environment knobs:
#   PY2FGEN_PYTHON       interpreter for the venv (default ~/.pyenv/versions/3.12.1/bin/python3.12;
#                        must be >= 3.12 and built with a shared libpython; for the gtstorage
#                        half it must be the Python libgtstorage_python embeds)
#   GTSTORAGE_BUILD_DIR  gtstorage build tree (default <repo>/build/release): src/libgtstorage*.so,
#                        bindings/fortran/{libgtstorage*_fortran.so,mod/}, gtstorage-python.pc
#   COMPARISON_JSON      default build/py2fgen/comparison.json
#   BENCH_PARTS          "py2fgen gtstorage" (default); "gtstorage" alone reuses OUT_JSON
#                        of an earlier py2fgen run for the comparison
#   FC, FFLAGS           Fortran compiler / flags (default gfortran, -O2)
#   BENCH_SCALE          factor on calls per repeat (default 1; 0.05 = quick smoke test)
#   GTSTORAGE_WRAP_SCALE extra factor on the empty-call count of the gtstorage wrap-per-call
#                        run (default 0.05: ~1000 calls per repeat; its empty calls cost
#                        tens of us per array, 20000 x 40 arrays would take minutes); the
#                        diffusion cases keep BENCH_SCALE
#   FORCE=1              regenerate bindings and rebuild even if up to date
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="$ROOT/build/py2fgen"
VENV="$BUILD/venv"
GEN="$BUILD/gen"
OBJ="$BUILD/obj"
LOGS="$BUILD/logs"
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
OUT="$(absolute "${1:-$BUILD/py2fgen.json}")"

PY2FGEN_PYTHON="${PY2FGEN_PYTHON:-$HOME/.pyenv/versions/3.12.1/bin/python3.12}"
FC="${FC:-gfortran}"
FFLAGS="${FFLAGS:--O2}"
BENCH_SCALE="${BENCH_SCALE:-1}"
FORCE="${FORCE:-0}"
GTSTORAGE_BUILD_DIR="${GTSTORAGE_BUILD_DIR:-$ROOT/build/release}"
COMPARISON_JSON="$(absolute "${COMPARISON_JSON:-$BUILD/comparison.json}")"
BENCH_PARTS="${BENCH_PARTS:-py2fgen gtstorage}"
GTSTORAGE_WRAP_SCALE="${GTSTORAGE_WRAP_SCALE:-0.05}"
want() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }
LIB=py2fgen_bench
FUNCS=empty_1,empty_10,empty_40,diffusion,probe,fail

log() { printf '[py2fgen-bench] %s\n' "$*" >&2; }
# newer_than TARGET FILE...: one of the files (in this directory) is newer than TARGET
newer_than() {
    local target="$1" f; shift
    for f in "$@"; do [[ "$HERE/$f" -nt "$target" ]] && return 0; done
    return 1
}
# keep bytecode out of the source tree (also for the generation step)
export PYTHONPYCACHEPREFIX="$BUILD/pycache"
GTOBJ="$BUILD/gt/obj"
mkdir -p "$BUILD" "$GEN" "$OBJ" "$GTOBJ" "$LOGS" "$(dirname "$OUT")" "$(dirname "$COMPARISON_JSON")"

# ---- 1. venv --------------------------------------------------------------------
REQ="$HERE/requirements.txt"
REQ_HASH="$(sha256sum "$REQ" | cut -d' ' -f1)"
STAMP="$VENV/.requirements.sha256"
if [[ ! -x "$VENV/bin/python" || "$(cat "$STAMP" 2>/dev/null)" != "$REQ_HASH" ]]; then
    [[ -x "$PY2FGEN_PYTHON" ]] || { log "interpreter not found: $PY2FGEN_PYTHON (set PY2FGEN_PYTHON)"; exit 1; }
    "$PY2FGEN_PYTHON" - <<'EOF' || { log "need CPython >= 3.12 with a shared libpython (icon4py-tools requires Python >= 3.12; CFFI embedding links libpython)"; exit 1; }
import sys, sysconfig
sys.exit(0 if sys.version_info >= (3, 12) and sysconfig.get_config_var("Py_ENABLE_SHARED") else 1)
EOF
    log "creating venv $VENV with $PY2FGEN_PYTHON"
    [[ -x "$VENV/bin/python" ]] || "$PY2FGEN_PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --no-input "$(grep '^pip==' "$REQ")"
    "$VENV/bin/python" -m pip install --quiet --no-input -r "$REQ"
    echo "$REQ_HASH" > "$STAMP"
    FORCE=1
fi
PY="$VENV/bin/python"
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
PYLIBDIR="$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("LIBDIR"))')"

# ---- 2. py2fgen bindings ----------------------------------------------------------
SO="$GEN/lib$LIB.so"
EXE="$OBJ/bench_driver"
if ! want py2fgen; then
    log "BENCH_PARTS=\"$BENCH_PARTS\": py2fgen half skipped (comparison uses $OUT)"
elif [[ "$FORCE" == 1 || ! -f "$SO" || "$HERE/bench_functions.py" -nt "$SO" || "$STAMP" -nt "$SO" ]]; then
    log "generating py2fgen bindings -> $GEN"
    (cd "$GEN" && PYTHONPATH="$HERE" "$VENV/bin/py2fgen" bench_functions "$FUNCS" "$LIB" \
        --output-path "$GEN" --rpath "$PYLIBDIR" --regenerate) > "$LOGS/py2fgen-generate.log" 2>&1 \
        || { cat "$LOGS/py2fgen-generate.log" >&2; exit 1; }
    touch "$SO"
else
    log "bindings up to date ($SO)"
fi

# ---- 3. Fortran driver ------------------------------------------------------------
# Call layer = the only bridge-specific Fortran source.  Another bridge gets its
# own layer_<name>.F90 (module bench_layer, same procedure names) plus its own
# generate/link step here; bench_driver.F90 stays unchanged (see README.md).
LAYER_SRC="$HERE/layer_py2fgen.F90"
LAYER_DEPS=("$GEN/$LIB.f90")                     # generated Fortran module
LAYER_LDFLAGS=(-L"$GEN" -l"$LIB" -Wl,-rpath,"$GEN")
if ! want py2fgen; then
    :
elif [[ "$FORCE" == 1 || ! -x "$EXE" || "$SO" -nt "$EXE" || "$LAYER_SRC" -nt "$EXE" ]] \
     || newer_than "$EXE" bench_driver.F90 bench_harness.F90 bench_layer_contract.inc; then
    log "building Fortran driver with $FC $FFLAGS"
    (
        cd "$OBJ"
        rm -f ./*.o ./*.mod
        # py2fgen's .f90 contains #ifdef _OPENACC, so the preprocessor is required
        "$FC" $FFLAGS -cpp -c "${LAYER_DEPS[0]}" -o bridge_generated.o
        "$FC" $FFLAGS -cpp -c "$LAYER_SRC" -o layer.o
        "$FC" $FFLAGS -cpp -c "$HERE/bench_harness.F90" -o bench_harness.o
        "$FC" $FFLAGS -cpp -c "$HERE/bench_driver.F90" -o bench_driver.o
        "$FC" $FFLAGS -o "$EXE" bench_driver.o bench_harness.o layer.o bridge_generated.o "${LAYER_LDFLAGS[@]}"
    ) > "$LOGS/build.log" 2>&1 || { cat "$LOGS/build.log" >&2; exit 1; }
else
    log "driver up to date ($EXE)"
fi

# ---- 3b. the same driver on our bridge (libgtstorage_python) ------------------------
# layer_gtstorage.F90 = module bench_layer on modules gtstorage + gtstorage_python (wrap,
# call, release at every call); bench_persistent.F90 = arrays wrapped once.  Built here
# against GTSTORAGE_BUILD_DIR; that tree is only read.
GT_DRIVER="$GTOBJ/bench_driver_gtstorage"
GT_PERSIST="$GTOBJ/bench_persistent"
if want gtstorage; then
    GTB="$GTSTORAGE_BUILD_DIR"
    GT_MOD="$GTB/bindings/fortran/mod"
    for f in "$GTB/src/libgtstorage_python.so" "$GTB/src/libgtstorage.so" \
             "$GTB/bindings/fortran/libgtstorage_python_fortran.so" \
             "$GTB/bindings/fortran/libgtstorage_fortran.so" \
             "$GT_MOD/gtstorage.mod" "$GT_MOD/gtstorage_python.mod"; do
        [[ -f "$f" ]] || { log "missing $f (set GTSTORAGE_BUILD_DIR to a gtstorage build with libgtstorage_python)"; exit 1; }
    done
    # the venv must be of the Python the library embeds (same major.minor)
    EMBEDDED="$(sed -n 's/^python_version=//p' "$GTB/gtstorage-python.pc" 2>/dev/null || true)"
    VENV_VER="$("$PY" -c 'import platform; print(platform.python_version())')"
    if [[ -n "$EMBEDDED" && "${EMBEDDED%.*}" != "${VENV_VER%.*}" ]]; then
        log "libgtstorage_python embeds Python $EMBEDDED, the venv is $VENV_VER (set PY2FGEN_PYTHON)"
        exit 1
    fi
    GT_LDFLAGS=(-L"$GTB/bindings/fortran" -lgtstorage_python_fortran -lgtstorage_fortran
                -L"$GTB/src" -lgtstorage_python -lgtstorage
                -Wl,-rpath,"$GTB/bindings/fortran:$GTB/src")
    GT_LIB="$GTB/src/libgtstorage_python.so"
    if [[ "$FORCE" == 1 || ! -x "$GT_DRIVER" || ! -x "$GT_PERSIST" || "$GT_LIB" -nt "$GT_DRIVER" \
          || "$GT_MOD/gtstorage_python.mod" -nt "$GT_DRIVER" ]] \
       || newer_than "$GT_DRIVER" bench_driver.F90 bench_harness.F90 bench_layer_contract.inc layer_gtstorage.F90 \
       || newer_than "$GT_PERSIST" bench_persistent.F90; then
        log "building gtstorage drivers with $FC $FFLAGS against $GTB"
        (
            cd "$GTOBJ"
            rm -f ./*.o ./*.mod
            "$FC" $FFLAGS -cpp -I"$GT_MOD" -c "$HERE/layer_gtstorage.F90" -o layer.o
            "$FC" $FFLAGS -cpp -c "$HERE/bench_harness.F90" -o bench_harness.o
            "$FC" $FFLAGS -cpp -c "$HERE/bench_driver.F90" -o bench_driver.o
            "$FC" $FFLAGS -o "$GT_DRIVER" bench_driver.o bench_harness.o layer.o "${GT_LDFLAGS[@]}"
            # bench_persistent starts the interpreter with the layer's init_python_from_environment
            "$FC" $FFLAGS -cpp -I"$GT_MOD" -c "$HERE/bench_persistent.F90" -o bench_persistent.o
            "$FC" $FFLAGS -o "$GT_PERSIST" bench_persistent.o bench_harness.o layer.o "${GT_LDFLAGS[@]}"
        ) > "$LOGS/build_gtstorage.log" 2>&1 || { cat "$LOGS/build_gtstorage.log" >&2; exit 1; }
    else
        log "gtstorage drivers up to date ($GTOBJ)"
    fi
fi

# ---- 4. run -------------------------------------------------------------------------
# The embedded interpreter is libpython from the base installation; it does not
# know about the venv, so site-packages, the generated module and
# bench_functions.py go on PYTHONPATH.
export PYTHONPATH="$HERE:$GEN:$SITE"
export PYTHONNOUSERSITE=1
unset PYTHONHOME PYTHONOPTIMIZE PY2FGEN_PROFILING PY2FGEN_LOG_LEVEL PY2FGEN_EXTRA_CALLABLES
# Bytecode goes to a cache under build/ (also for -OO, which pip does not
# precompile); PYTHONDONTWRITEBYTECODE would otherwise make every -OO start-up
# recompile gt4py/dace/sympy (~10 s).  Warm it so first_call_ms measures
# interpreter start-up + imports, not compilation.
unset PYTHONDONTWRITEBYTECODE
export GT4PY_BUILD_CACHE_DIR="$BUILD/gt_cache" GT_CACHE_ROOT="$BUILD/gt_cache"
WARM='import bench_functions, logging, pkgutil
from icon4py.tools.py2fgen import runtime_config, _runtime, _conversion'
if want py2fgen; then
    (cd "$BUILD" && "$PY" -c "$WARM" && "$PY" -OO -c "$WARM") > "$LOGS/warmup.log" 2>&1 \
        || { cat "$LOGS/warmup.log" >&2; exit 1; }
fi
cd "$BUILD"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
RAW_DEFAULT="$BUILD/raw_default.txt"
RAW_OPT="$BUILD/raw_pythonoptimize2.txt"
RAW_GT_WRAP="$BUILD/raw_gtstorage_wrap_per_call.txt"
RAW_GT_PERSIST="$BUILD/raw_gtstorage_persistent.txt"
GT_WRAP_EMPTY_SCALE="$(awk -v a="$BENCH_SCALE" -v b="$GTSTORAGE_WRAP_SCALE" 'BEGIN { printf "%.6g", a * b }')"
# Our bridge: VIRTUAL_ENV gives the venv's site-packages (NumPy); the source package
# bindings/python (gtstorage) and this directory go first on sys.path through the layer's
# BENCH_GTSTORAGE_SYS_PATH; PYTHONPATH (set above for py2fgen) is not used.
run_gt() {  # run_gt NAME EXE RAW SCALE SCALE_DIFF
    log "running $1, scale=$4 (diffusion $5)"
    run_logged "$1" "$1" env -u PYTHONPATH VIRTUAL_ENV="$VENV" \
        BENCH_GTSTORAGE_SYS_PATH="$ROOT/bindings/python:$HERE" "$2" "$3" "$4" "$5"
}
# run_logged NAME LOG COMMAND...: the load average before the run goes into the comparison's
# meta data (loadavg_before_NAME), stderr into $LOGS/run_LOG.stderr.log (its tail on failure)
run_logged() {
    local name="$1" err="$LOGS/run_$2.stderr.log"; shift 2
    LA_META+=(--meta "loadavg_before_$name=$(loadavg)")
    "$@" 2> "$err" || { tail -n 30 "$err" >&2; exit 1; }
}
if want gtstorage; then
    # warm the bytecode cache of what the gtstorage runs import
    (cd "$BUILD" && env -u PYTHONPATH GTSTORAGE_LIBRARY="$GTSTORAGE_BUILD_DIR/src/libgtstorage.so" "$PY" -c "import sys; sys.path[:0] = ['$ROOT/bindings/python', '$HERE']
import numpy, bench_functions_gtstorage") > "$LOGS/warmup_gtstorage.log" 2>&1 || true
fi

LOADAVG_BEFORE="$(loadavg)"
LA_META=()
if want py2fgen; then
    log "running py2fgen driver (default interpreter flags), scale=$BENCH_SCALE"
    run_logged py2fgen_default default "$EXE" "$RAW_DEFAULT" "$BENCH_SCALE"
fi
if want gtstorage; then
    run_gt gtstorage_wrap_per_call "$GT_DRIVER" "$RAW_GT_WRAP" "$GT_WRAP_EMPTY_SCALE" "$BENCH_SCALE"
    run_gt gtstorage_persistent "$GT_PERSIST" "$RAW_GT_PERSIST" "$BENCH_SCALE" "$BENCH_SCALE"
fi
if want py2fgen; then
    log "running py2fgen driver (PYTHONOPTIMIZE=2), scale=$BENCH_SCALE"
    run_logged py2fgen_pythonoptimize2 pythonoptimize2 env PYTHONOPTIMIZE=2 "$EXE" "$RAW_OPT" "$BENCH_SCALE"

    "$PY" "$HERE/collect_results.py" "$OUT" default="$RAW_DEFAULT" pythonoptimize2="$RAW_OPT" \
        --meta "fflags=$FFLAGS -cpp" --meta "bench_scale=$BENCH_SCALE" --meta "loadavg_before=$LOADAVG_BEFORE" \
        --meta "note=cases/probe/error = default run (PYTHONOPTIMIZE unset); runs.pythonoptimize2 = same with PYTHONOPTIMIZE=2"
    log "wrote $OUT"
fi

if want gtstorage; then
    "$PY" "$HERE/compare_results.py" "$COMPARISON_JSON" --py2fgen "$OUT" \
        --wrap "$RAW_GT_WRAP" --persistent "$RAW_GT_PERSIST" \
        --meta "fflags=$FFLAGS -cpp" --meta "bench_scale=$BENCH_SCALE" \
        --meta "gtstorage_wrap_per_call_empty_scale=$GT_WRAP_EMPTY_SCALE" \
        --meta "gtstorage_build_dir=$GTSTORAGE_BUILD_DIR" \
        --meta "gtstorage_git_head=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown) (the working tree may differ)" \
        --meta "gtstorage_libpython_bridge_sha256=$(sha256sum "$(readlink -f "$GTSTORAGE_BUILD_DIR/src/libgtstorage_python.so")" | cut -c1-16)" \
        --meta "gtstorage_python_package_sha256=$(cat "$ROOT"/bindings/python/gtstorage/*.py | sha256sum | cut -c1-16) (bindings/python/gtstorage/*.py at run time)" \
        --meta "run_order=py2fgen default, gtstorage wrap-per-call, gtstorage persistent, py2fgen PYTHONOPTIMIZE=2" \
        "${LA_META[@]}"
    log "wrote $COMPARISON_JSON"
    "$PY" "$HERE/compare_results.py" --table "$COMPARISON_JSON" >&2 || true
fi
