#!/usr/bin/env bash
# Builds a downstream program against an INSTALLED gtstorage. Steps (one CTest test each):
#   install            cmake --install the build tree into a scratch prefix, check what landed
#   find_package       tests/integration/consumer/project with find_package(gtstorage CONFIG COMPONENTS C
#                      OPTIONAL_COMPONENTS Fortran CUDA HIP): components as built; build, run
#   find_package_fortran  the same with COMPONENTS C Fortran, building main.f90 too
#   components         a missing REQUIRED component fails with its name and reason, an unknown
#                      one too, and without REQUIRED the project goes on with gtstorage_FOUND off
#   pkg-config         compile main.c with `pkg-config --cflags --libs gtstorage`, run
#   pkg-config-fortran compile main.f90 with `pkg-config --cflags --libs gtstorage-fortran`, run
#   find_package_mpi   tests/integration/consumer/project_mpi with find_package(gtstorage COMPONENTS C MPI):
#                      build main_mpi.c against gtstorage::mpi, run it on 2 processes
#   pkg-config-mpi     compile main_mpi.c with mpicc and `pkg-config --cflags --libs gtstorage-mpi`
#                      (and its variable mpi_library), run it on 2 processes
# Settings come from the environment (set by tests/integration/consumer/CMakeLists.txt):
#   GTS_BUILD_DIR GTS_PREFIX GTS_WORK GTS_PROJECT GTS_LIBDIR GTS_VERSION GTS_SOVERSION
#   GTS_GENERATOR GTS_CC GTS_FC GTS_SAN_FLAGS GTS_PKG_CONFIG GTS_HAVE_INFO
#   GTS_HAVE_CUDA GTS_HAVE_HIP GTS_HAVE_FORTRAN (1/0) GTS_FORTRAN_MODDIR (relative to the prefix)
#   GTS_FORTRAN_ID GTS_FORTRAN_VERSION GTS_HAVE_MPI (1/0) GTS_MPIEXEC
set -euo pipefail

step=${1:?usage: run_consumer.sh install|find_package|find_package_fortran|components|pkg-config|pkg-config-fortran|find_package_mpi|pkg-config-mpi}
fail() { echo "FAIL: $*" >&2; exit 1; }
prefix=$GTS_PREFIX
libdir=$prefix/$GTS_LIBDIR

# Fails unless program $1 loads libgtstorage.so.MAJOR from the installed prefix.
loads_installed() {
  local found
  found=$(env -u LD_LIBRARY_PATH ldd "$1" | awk -v lib="libgtstorage.so.$GTS_SOVERSION" '$1 == lib {print $3}')
  [[ -n $found && $(readlink -f "$found") == $(readlink -f "$libdir/libgtstorage.so.$GTS_SOVERSION") ]] ||
    fail "$1 loads '${found:-nothing}' instead of $libdir/libgtstorage.so.$GTS_SOVERSION"
}

# expect_line FILE LINE: FILE has exactly this line.
expect_line() { grep -qxF -- "$2" "$1" || fail "$1 lacks the line '$2': $(cat "$1")"; }
# What CMake's package file sets for a 1/0 flag.
cmake_bool() { if [[ $1 == 1 ]]; then echo TRUE; else echo FALSE; fi; }
# build_project SOURCE BUILD_DIR [CMAKE_ARGS...]: configures SOURCE against the installed prefix
# in a fresh BUILD_DIR (Release, with this build's sanitizer flags) and builds it.
build_project() {
  local source=$1 bdir=$2
  shift 2
  rm -rf "$bdir"
  cmake -S "$source" -B "$bdir" -G "$GTS_GENERATOR" -DCMAKE_C_COMPILER="$GTS_CC" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$GTS_SAN_FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$GTS_SAN_FLAGS" "$@"
  cmake --build "$bdir"
}

# pkg_config_case MODULE: a fresh build directory $bdir for this step, pkg-config on the
# installed .pc files, and the library directory $pc_libdir that MODULE names.
pkg_config_case() {
  bdir=$GTS_WORK/$step
  rm -rf "$bdir" && mkdir -p "$bdir"
  export PKG_CONFIG_PATH=$libdir/pkgconfig
  pc_libdir=$("$GTS_PKG_CONFIG" --variable=libdir "$1")
}
# expect_libs MODULE FLAGS LIB...: the flags of `pkg-config --libs MODULE` name every LIB.
expect_libs() {
  local module=$1 flags=$2 lib
  shift 2
  for lib in "$@"; do
    [[ " $flags " == *" $lib "* ]] || fail "pkg-config --libs $module lacks $lib: $flags"
  done
}
# run_installed PROGRAM: PROGRAM loads the installed library and runs without LD_LIBRARY_PATH.
run_installed() {
  loads_installed "$1"
  env -u LD_LIBRARY_PATH "$1"
}
# run_installed_mpi PROGRAM: the same on 2 processes; it must print "consumer_mpi OK".
run_installed_mpi() {
  loads_installed "$1"
  env -u LD_LIBRARY_PATH "$GTS_MPIEXEC" --oversubscribe -n 2 "$1" | tee "$bdir/out.txt"
  expect_line "$bdir/out.txt" "consumer_mpi OK"
}

case $step in
install)
  rm -rf "$prefix"
  cmake --install "$GTS_BUILD_DIR" --prefix "$prefix"
  [[ -f $prefix/include/gtstorage/gtstorage.h ]] || fail "header not installed"
  real=$libdir/libgtstorage.so.$GTS_VERSION
  [[ -f $real && ! -L $real ]] || fail "$real is not installed as a regular file"
  [[ $(readlink "$libdir/libgtstorage.so.$GTS_SOVERSION") == libgtstorage.so.$GTS_VERSION ]] ||
    fail "libgtstorage.so.$GTS_SOVERSION does not point to libgtstorage.so.$GTS_VERSION"
  [[ $(readlink "$libdir/libgtstorage.so") == libgtstorage.so.$GTS_SOVERSION ]] ||
    fail "libgtstorage.so does not point to libgtstorage.so.$GTS_SOVERSION"
  soname=$(objdump -p "$real" | awk '$1 == "SONAME" {print $2}')
  [[ $soname == libgtstorage.so.$GTS_SOVERSION ]] || fail "SONAME is '$soname'"
  for f in gtstorageConfig.cmake gtstorageConfigVersion.cmake gtstorageTargets.cmake; do
    [[ -f $libdir/cmake/gtstorage/$f ]] || fail "$f not installed"
  done
  [[ -f $libdir/pkgconfig/gtstorage.pc ]] || fail "gtstorage.pc not installed"
  if [[ $GTS_HAVE_FORTRAN == 1 ]]; then
    # The module sits in a directory named after the compiler that wrote it, never directly in
    # include/gtstorage/fortran where another compiler's build would overwrite it.
    [[ $GTS_FORTRAN_MODDIR == */$GTS_FORTRAN_ID-$GTS_FORTRAN_VERSION ]] ||
      fail "module directory '$GTS_FORTRAN_MODDIR' is not named after $GTS_FORTRAN_ID $GTS_FORTRAN_VERSION"
    [[ -f $prefix/$GTS_FORTRAN_MODDIR/gtstorage.mod ]] ||
      fail "gtstorage.mod not installed in $prefix/$GTS_FORTRAN_MODDIR"
    [[ ! -e $prefix/include/gtstorage/fortran/gtstorage.mod ]] ||
      fail "gtstorage.mod installed outside a compiler-specific directory"
    [[ -f $libdir/pkgconfig/gtstorage-fortran.pc ]] || fail "gtstorage-fortran.pc not installed"
    [[ -f $libdir/libgtstorage_fortran.so.$GTS_SOVERSION ]] || fail "libgtstorage_fortran not installed"
  else
    [[ ! -e $libdir/pkgconfig/gtstorage-fortran.pc ]] ||
      fail "gtstorage-fortran.pc installed by a build without the Fortran binding"
  fi
  if [[ ${GTS_HAVE_MPI:-0} == 1 ]]; then
    [[ -f $prefix/include/gtstorage/gtstorage_mpi.h ]] || fail "gtstorage_mpi.h not installed"
    [[ -f $libdir/libgtstorage_mpi.so.$GTS_SOVERSION ]] || fail "libgtstorage_mpi not installed"
    [[ -f $libdir/pkgconfig/gtstorage-mpi.pc ]] || fail "gtstorage-mpi.pc not installed"
    soname_mpi=$(objdump -p "$libdir/libgtstorage_mpi.so.$GTS_SOVERSION" | awk '$1 == "SONAME" {print $2}')
    [[ $soname_mpi == libgtstorage_mpi.so.$GTS_SOVERSION ]] || fail "libgtstorage_mpi SONAME is '$soname_mpi'"
  else
    [[ ! -e $libdir/pkgconfig/gtstorage-mpi.pc ]] || fail "gtstorage-mpi.pc installed without MPI"
  fi
  # The installed CMake files must not point back into the build or source tree.
  if grep -rlF -e "$GTS_BUILD_DIR" "$libdir/cmake/gtstorage" "$libdir/pkgconfig"; then
    fail "installed package files refer to the build tree"
  fi
  if [[ $GTS_HAVE_INFO == 1 ]]; then
    # Runs from the prefix through its install RPATH, not through the build tree.
    env -u LD_LIBRARY_PATH "$prefix/bin/gtstorage-info" --version ||
      fail "installed gtstorage-info does not run"
    loads_installed "$prefix/bin/gtstorage-info"
  fi
  echo "install OK: $prefix (SONAME $soname)"
  ;;

find_package)
  bdir=$GTS_WORK/find_package
  build_project "$GTS_PROJECT" "$bdir"
  run_installed "$bdir/consumer"
  # The optional components say what this build has.
  report=$bdir/gtstorage-components.txt
  cat "$report"
  expect_line "$report" "FOUND=1"
  expect_line "$report" "C=TRUE"
  expect_line "$report" "Fortran=$(cmake_bool "$GTS_HAVE_FORTRAN")"
  expect_line "$report" "CUDA=$(cmake_bool "$GTS_HAVE_CUDA")"
  expect_line "$report" "HIP=$(cmake_bool "$GTS_HAVE_HIP")"
  if [[ $GTS_HAVE_FORTRAN == 1 ]]; then
    expect_line "$report" "Fortran_MODULE_DIR=$prefix/$GTS_FORTRAN_MODDIR"
    expect_line "$report" "Fortran_COMPILER_ID=$GTS_FORTRAN_ID"
  fi
  # The version file: same major is accepted above, the next major must be refused.
  next=$((GTS_SOVERSION + 1)).0
  if cmake -S "$GTS_PROJECT" -B "$GTS_WORK/find_package_next" -G "$GTS_GENERATOR" \
      -DCMAKE_C_COMPILER="$GTS_CC" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCONSUMER_GTSTORAGE_VERSION="$next" >"$GTS_WORK/find_package_next.log" 2>&1; then
    fail "find_package(gtstorage $next) accepted version $GTS_VERSION"
  fi
  grep -q "version" "$GTS_WORK/find_package_next.log" ||
    fail "find_package(gtstorage $next) failed for another reason: $(cat "$GTS_WORK/find_package_next.log")"
  echo "find_package OK"
  ;;

find_package_fortran)
  bdir=$GTS_WORK/find_package_fortran
  build_project "$GTS_PROJECT" "$bdir" -DCMAKE_Fortran_COMPILER="$GTS_FC" \
    -DCMAKE_Fortran_FLAGS="$GTS_SAN_FLAGS" "-DCONSUMER_COMPONENTS=C;Fortran" \
    "-DCONSUMER_OPTIONAL_COMPONENTS=" -DCONSUMER_FORTRAN=ON
  run_installed "$bdir/consumer_fortran"
  echo "find_package_fortran OK"
  ;;

components)
  # configure NAME EXTRA_ARGS...: configures the project into $GTS_WORK/NAME, log in NAME.log;
  # returns cmake's status.
  configure() {
    local name=$1
    shift
    rm -rf "${GTS_WORK:?}/$name"
    cmake -S "$GTS_PROJECT" -B "$GTS_WORK/$name" -G "$GTS_GENERATOR" -DCMAKE_C_COMPILER="$GTS_CC" \
      -DCMAKE_PREFIX_PATH="$prefix" "$@" >"$GTS_WORK/$name.log" 2>&1
  }
  # A component this build lacks (HIP, CUDA or Fortran), with the reason the package gives.
  missing="" reason=""
  if [[ $GTS_HAVE_HIP != 1 ]]; then missing=HIP reason="GTSTORAGE_ENABLE_HIP=OFF"
  elif [[ $GTS_HAVE_CUDA != 1 ]]; then missing=CUDA reason="GTSTORAGE_ENABLE_CUDA"
  elif [[ $GTS_HAVE_FORTRAN != 1 ]]; then missing=Fortran reason="GTSTORAGE_ENABLE_FORTRAN"
  fi
  if [[ -n $missing ]]; then
    if configure components_missing "-DCONSUMER_COMPONENTS=C;$missing" \
        -DCONSUMER_OPTIONAL_COMPONENTS=; then
      fail "find_package(gtstorage REQUIRED COMPONENTS $missing) succeeded: $(cat "$GTS_WORK/components_missing.log")"
    fi
    log=$GTS_WORK/components_missing.log
    grep -q "component $missing: gtstorage was built without" "$log" ||
      fail "the failure does not name component $missing: $(cat "$log")"
    grep -qF "$reason" "$log" || fail "the failure does not say why ($reason): $(cat "$log")"
    grep -A12 "NOT FOUND\|not found" "$log" | head -20
    # Optional: found, the component marked missing.
    configure components_optional "-DCONSUMER_OPTIONAL_COMPONENTS=$missing" ||
      fail "OPTIONAL_COMPONENTS $missing failed: $(cat "$GTS_WORK/components_optional.log")"
    expect_line "$GTS_WORK/components_optional/gtstorage-components.txt" "FOUND=1"
    expect_line "$GTS_WORK/components_optional/gtstorage-components.txt" "$missing=FALSE"
    grep -q "optional component $missing not found" "$GTS_WORK/components_optional.log" ||
      fail "no note about the optional component: $(cat "$GTS_WORK/components_optional.log")"
    # Without REQUIRED: not found, and the project goes on.
    configure components_not_required -DCONSUMER_REQUIRED=OFF "-DCONSUMER_COMPONENTS=C;$missing" \
        -DCONSUMER_OPTIONAL_COMPONENTS= ||
      fail "find_package without REQUIRED stopped the project: $(cat "$GTS_WORK/components_not_required.log")"
    expect_line "$GTS_WORK/components_not_required/gtstorage-components.txt" "FOUND=0"
  else
    echo "this build has every component: the missing-component case is not checked"
  fi
  # An unknown component.
  if configure components_unknown "-DCONSUMER_COMPONENTS=C;Bogus"; then
    fail "find_package(gtstorage REQUIRED COMPONENTS Bogus) succeeded"
  fi
  grep -q "component Bogus: unknown component" "$GTS_WORK/components_unknown.log" ||
    fail "the failure does not name component Bogus: $(cat "$GTS_WORK/components_unknown.log")"
  # Everything the build has, required at once.
  have="C"
  [[ $GTS_HAVE_FORTRAN == 1 ]] && have+=";Fortran"
  [[ $GTS_HAVE_CUDA == 1 ]] && have+=";CUDA"
  [[ $GTS_HAVE_HIP == 1 ]] && have+=";HIP"
  [[ ${GTS_HAVE_MPI:-0} == 1 ]] && have+=";MPI"
  configure components_all "-DCONSUMER_COMPONENTS=$have" "-DCONSUMER_OPTIONAL_COMPONENTS=" ||
    fail "find_package(gtstorage REQUIRED COMPONENTS $have) failed: $(cat "$GTS_WORK/components_all.log")"
  echo "components OK (missing: ${missing:-none}; present: $have)"
  ;;

pkg-config-fortran)
  pkg_config_case gtstorage-fortran
  flags=$("$GTS_PKG_CONFIG" --cflags --libs gtstorage-fortran)
  fmoddir=$("$GTS_PKG_CONFIG" --variable=fmoddir gtstorage-fortran)
  fc_id=$("$GTS_PKG_CONFIG" --variable=fortran_compiler_id gtstorage-fortran)
  echo "flags:   $flags"
  echo "fmoddir: $fmoddir ($fc_id)"
  [[ $(readlink -f "$fmoddir") == $(readlink -f "$prefix/$GTS_FORTRAN_MODDIR") ]] ||
    fail "fmoddir is '$fmoddir', not $prefix/$GTS_FORTRAN_MODDIR"
  [[ $fc_id == "$GTS_FORTRAN_ID" ]] || fail "fortran_compiler_id is '$fc_id'"
  expect_libs gtstorage-fortran "$flags" -lgtstorage_fortran -lgtstorage
  # shellcheck disable=SC2086  # flags are word lists
  (cd "$bdir" && "$GTS_FC" $GTS_SAN_FLAGS "$GTS_PROJECT/main.f90" -o consumer_fortran $flags \
    -Wl,-rpath,"$pc_libdir")
  run_installed "$bdir/consumer_fortran"
  echo "pkg-config-fortran OK"
  ;;

pkg-config)
  pkg_config_case gtstorage
  version=$("$GTS_PKG_CONFIG" --modversion gtstorage)
  [[ $version == "$GTS_VERSION" ]] || fail "pkg-config reports version '$version'"
  cflags=$("$GTS_PKG_CONFIG" --cflags gtstorage)
  libs=$("$GTS_PKG_CONFIG" --libs gtstorage)
  echo "cflags: $cflags"
  echo "libs:   $libs"
  # shellcheck disable=SC2086  # flags are word lists
  "$GTS_CC" -std=c99 -Wall -Wextra -Werror $GTS_SAN_FLAGS $cflags "$GTS_PROJECT/main.c" \
    -o "$bdir/consumer" $libs -Wl,-rpath,"$pc_libdir"
  run_installed "$bdir/consumer"
  echo "pkg-config OK"
  ;;

find_package_mpi)
  bdir=$GTS_WORK/find_package_mpi
  build_project "$GTS_PROJECT/../project_mpi" "$bdir"
  run_installed_mpi "$bdir/consumer_mpi"
  echo "find_package_mpi OK"
  ;;

pkg-config-mpi)
  pkg_config_case gtstorage-mpi
  flags=$("$GTS_PKG_CONFIG" --cflags --libs gtstorage-mpi)
  built_with=$("$GTS_PKG_CONFIG" --variable=mpi_library gtstorage-mpi)
  echo "flags: $flags (built with: $built_with)"
  [[ -n $built_with ]] || fail "gtstorage-mpi.pc does not say which MPI it was built with"
  expect_libs gtstorage-mpi "$flags" -lgtstorage_mpi -lgtstorage
  # shellcheck disable=SC2086  # flags are word lists
  OMPI_CC=$GTS_CC mpicc -std=c99 -Wall -Wextra $GTS_SAN_FLAGS "$GTS_PROJECT/../project_mpi/main_mpi.c" \
    -o "$bdir/consumer_mpi" $flags -Wl,-rpath,"$pc_libdir"
  run_installed_mpi "$bdir/consumer_mpi"
  echo "pkg-config-mpi OK"
  ;;

*)
  fail "unknown step '$step'"
  ;;
esac
