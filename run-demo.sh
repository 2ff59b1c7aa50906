#!/usr/bin/env bash
# Builds gtstorage and runs the demo: gtstorage-info on a sample field, the preset comparison,
# and the C example (examples/basic.c). When run as root, installs the Debian packages the demo
# needs and only those: a C/C++ compiler, CMake and Ninja (run-tests.sh installs everything CI
# needs, .ci/debian-packages; both through .ci/provision.sh). `./run-demo.sh --print-deps` prints
# that list and exits.
# The demo has its own build, with the library, gtstorage-info and the C examples only (the
# CUDA backend too when nvcc is found): the preset demo of CMakePresets.json, in build/demo or
# GTSTORAGE_DEMO_BUILD_DIR.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/script-lib.sh"

demo_packages=(cmake ninja-build gcc g++)
if [[ ${1:-} == --print-deps ]]; then
  GTS_PRINT_DEPS=1 gts_install_deps "${demo_packages[@]}"
  exit 0
fi
gts_install_deps "${demo_packages[@]}"

build=${GTSTORAGE_DEMO_BUILD_DIR:-$GTS_REPO/build/demo}
gts_step "configure ($build)"
gts_configure_preset demo "$build"
gts_step "build the library, gtstorage-info and the examples"
cmake --build "$build" -j "$GTS_JOBS" --target gtstorage-info gtstorage-example-basic \
  gtstorage-example-guide_example

info=$build/apps/gtstorage-info
gts_step "gtstorage-info --preset gt:cpu_kfirst --shape 12,12,6 --halo 2,2,0"
"$info" --preset gt:cpu_kfirst --shape 12,12,6 --halo 2,2,0
gts_step "gtstorage-info --preset gridtools:cpu_ifirst --shape 12,12,6 --halo 2,2,0"
"$info" --preset gridtools:cpu_ifirst --shape 12,12,6 --halo 2,2,0
gts_step "gtstorage-info --shape 12,12,6 --halo 2,2,0 --all-presets"
"$info" --shape 12,12,6 --halo 2,2,0 --all-presets
gts_step "examples/basic.c"
"$build/examples/basic"
gts_step "demo done (more: $info --help; the worked example: $build/examples/guide_example)"
