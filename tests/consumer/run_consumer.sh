#!/usr/bin/env bash
# Builds a downstream program against an INSTALLED gtstorage. Steps (one CTest test each):
#   install      cmake --install the build tree into a scratch prefix and check what landed there
#   find_package configure tests/consumer/project with find_package(gtstorage CONFIG), build, run
#   pkg-config   compile the same program with `pkg-config --cflags --libs gtstorage`, run
# Settings come from the environment (set by tests/consumer/CMakeLists.txt):
#   GTS_BUILD_DIR GTS_PREFIX GTS_WORK GTS_PROJECT GTS_LIBDIR GTS_VERSION GTS_SOVERSION
#   GTS_GENERATOR GTS_CC GTS_SAN_FLAGS GTS_PKG_CONFIG GTS_HAVE_INFO
set -euo pipefail

step=${1:?usage: run_consumer.sh install|find_package|pkg-config}
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
  rm -rf "$bdir"
  cmake -S "$GTS_PROJECT" -B "$bdir" -G "$GTS_GENERATOR" -DCMAKE_C_COMPILER="$GTS_CC" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$GTS_SAN_FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$GTS_SAN_FLAGS"
  cmake --build "$bdir"
  loads_installed "$bdir/consumer"
  env -u LD_LIBRARY_PATH "$bdir/consumer"
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

pkg-config)
  bdir=$GTS_WORK/pkg-config
  rm -rf "$bdir" && mkdir -p "$bdir"
  export PKG_CONFIG_PATH=$libdir/pkgconfig
  version=$("$GTS_PKG_CONFIG" --modversion gtstorage)
  [[ $version == "$GTS_VERSION" ]] || fail "pkg-config reports version '$version'"
  cflags=$("$GTS_PKG_CONFIG" --cflags gtstorage)
  libs=$("$GTS_PKG_CONFIG" --libs gtstorage)
  pc_libdir=$("$GTS_PKG_CONFIG" --variable=libdir gtstorage)
  echo "cflags: $cflags"
  echo "libs:   $libs"
  # shellcheck disable=SC2086  # flags are word lists
  "$GTS_CC" -std=c99 -Wall -Wextra -Werror $GTS_SAN_FLAGS $cflags "$GTS_PROJECT/main.c" \
    -o "$bdir/consumer" $libs -Wl,-rpath,"$pc_libdir"
  loads_installed "$bdir/consumer"
  env -u LD_LIBRARY_PATH "$bdir/consumer"
  echo "pkg-config OK"
  ;;

*)
  fail "unknown step '$step'"
  ;;
esac
