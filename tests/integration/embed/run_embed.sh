#!/usr/bin/env bash
# gtstorage as a sub-project of tests/integration/embed/parent (one CTest test per step):
#   subdirectory  add_subdirectory with the defaults: configure, build, run the parent's C program;
#                 the parent has only the library's targets, no tests, and no CUDA/HIP/Fortran
#   fetchcontent  FetchContent (SOURCE_DIR) with no build type: the same checks at configure
#                 time, the parent's empty CMAKE_BUILD_TYPE left alone, then the build of "all":
#                 only the parent's program and gtstorage's library are built, and the program runs
#   fortran       the parent asks for the Fortran binding (GTSTORAGE_ENABLE_FORTRAN=ON): Fortran is
#                 enabled and gtstorage_fortran defined, still no tests, tools or CUDA
# Settings come from the environment (tests/integration/embed/CMakeLists.txt):
#   GTS_SOURCE GTS_WORK GTS_GENERATOR GTS_CC GTS_CXX GTS_MAIN
set -euo pipefail

step=${1:?usage: run_embed.sh subdirectory|fetchcontent|fortran}
fail() { echo "FAIL: $*" >&2; exit 1; }
parent=$(cd "$(dirname "${BASH_SOURCE[0]}")/parent" && pwd -P)
src=$(cd "$GTS_SOURCE" && pwd -P)

# configure DIR ARGS...: a fresh configure of the parent project in DIR.
configure() {
  local dir=$1
  shift
  rm -rf "$dir"
  cmake -S "$parent" -B "$dir" -G "$GTS_GENERATOR" -DCMAKE_C_COMPILER="$GTS_CC" \
    -DCMAKE_CXX_COMPILER="$GTS_CXX" -DGTSTORAGE_SOURCE_DIR="$src" -DEMBED_MAIN="$GTS_MAIN" "$@"
}

# check DIR [fortran]: what the embedding left in the parent (DIR/embed-report.txt).
check() {
  local dir=$1 fortran=${2:-} report=$1/embed-report.txt line name type sdir rel langs
  local allowed='^src(/.*)?$'
  [[ $fortran == fortran ]] && allowed='^(src(/.*)?|bindings/fortran)$'
  [[ -f $report ]] || fail "no $report"
  local library_seen=0
  while read -r line; do
    [[ $line == target\ * ]] || continue
    read -r _ name type sdir <<<"$line"
    sdir=$(cd "$sdir" && pwd -P)
    # The parent's own targets (it lives in gtstorage's tests/integration/embed/parent) are not gtstorage's.
    [[ $sdir == "$parent" ]] && continue
    [[ $sdir == "$src" || $sdir == "$src"/* ]] || continue
    rel=${sdir#"$src"}
    rel=${rel#/}
    [[ $name == gtstorage ]] && library_seen=1
    # Tests, benchmarks, tools, examples, docs and the Python staging live elsewhere.
    [[ $rel =~ $allowed ]] ||
      fail "the parent got gtstorage's target '$name' ($type) from ${rel:-the top directory}"
  done <"$report"
  ((library_seen)) || fail "the parent has no gtstorage target"
  langs=$(sed -n 's/^languages //p' "$report")
  langs=${langs//;/ }
  echo "targets from gtstorage:"
  grep "^target .* $src" "$report" | grep -v " $parent\$" | sed 's/^/  /'
  echo "enabled languages: $langs"
  for lang in CUDA HIP Fortran; do
    if [[ " $langs " == *" $lang "* ]]; then
      [[ $lang == Fortran && $fortran == fortran ]] ||
        fail "embedding gtstorage enabled $lang in the parent ($langs)"
    elif [[ $lang == Fortran && $fortran == fortran ]]; then
      fail "GTSTORAGE_ENABLE_FORTRAN=ON did not enable Fortran ($langs)"
    fi
  done
  if [[ $fortran == fortran ]]; then
    grep -q '^target gtstorage_fortran ' "$report" || fail "no gtstorage_fortran target"
  fi
  # No tests registered anywhere in the parent.
  local tests
  tests=$(cd "$dir" && ctest -N | sed -n 's/^Total Tests: //p')
  [[ $tests == 0 ]] || fail "the parent has $tests tests from gtstorage"
}

# check_built DIR: after a build of "all", the only programs and libraries under DIR are the
# parent's program and gtstorage's shared library: no test, benchmark, tool or example of
# gtstorage was built (CMake's own compiler checks under CMakeFiles are not counted).
check_built() {
  local dir=$1 f libs=0 bad=()
  while IFS= read -r f; do
    case ${f##*/} in
      parent_program) ;;
      libgtstorage.so | libgtstorage.so.*) libs=$((libs + 1)) ;;
      *) bad+=("${f#"$dir"/}") ;;
    esac
  done < <(find "$dir" -name CMakeFiles -prune -o -type f \( -perm -u+x -o -name '*.so' -o \
    -name '*.so.*' -o -name '*.a' -o -name '*.mod' \) -print)
  ((${#bad[@]} == 0)) ||
    fail "building the parent built more than gtstorage's library: ${bad[*]}"
  ((libs > 0)) || fail "building the parent built no libgtstorage.so"
  [[ -x $dir/parent_program ]] || fail "building the parent did not build parent_program"
  echo "built: parent_program and $(find "$dir" -name 'libgtstorage.so*' -type f -printf '%f ')"
}

case $step in
subdirectory)
  dir=$GTS_WORK/subdirectory
  # Debug: no link-time optimization, the quickest library build.
  configure "$dir" -DEMBED_MODE=subdirectory -DCMAKE_BUILD_TYPE=Debug
  check "$dir"
  cmake --build "$dir" --target parent_program
  # The parent's program finds the library in the parent's build tree (build RPATH).
  env -u LD_LIBRARY_PATH "$dir/parent_program"
  # Building "all" builds nothing of gtstorage's tests or tools either.
  cmake --build "$dir"
  check_built "$dir"
  echo "subdirectory OK"
  ;;
fetchcontent)
  dir=$GTS_WORK/fetchcontent
  configure "$dir" -DEMBED_MODE=fetchcontent
  check "$dir"
  grep -qx "build_type ''" "$dir/embed-report.txt" ||
    fail "gtstorage changed the parent's CMAKE_BUILD_TYPE: $(grep build_type "$dir/embed-report.txt")"
  # A FetchContent consumer builds only the library (issue 9, "Done when"): build "all" and
  # look at what was built; the program runs against the library of the parent's build tree.
  cmake --build "$dir"
  check_built "$dir"
  env -u LD_LIBRARY_PATH "$dir/parent_program"
  echo "fetchcontent OK"
  ;;
fortran)
  dir=$GTS_WORK/fortran
  configure "$dir" -DEMBED_MODE=fetchcontent -DCMAKE_BUILD_TYPE=Debug -DGTSTORAGE_ENABLE_FORTRAN=ON
  check "$dir" fortran
  echo "fortran OK"
  ;;
*)
  fail "unknown step '$step'"
  ;;
esac
