#!/usr/bin/env bash
# Builds gtstorage and runs the demo: gtstorage-info on a sample field, the preset comparison,
# and the C example (examples/basic.c). Installs missing Debian packages when run as root.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/tools/script-lib.sh"

gts_install_deps
gts_step "configure ($GTS_BUILD)"
gts_configure_release
gts_step "build the library, gtstorage-info and the examples"
cmake --build "$GTS_BUILD" -j "$GTS_JOBS" --target gtstorage-info gtstorage-example-basic \
  gtstorage-example-guide_example

info=$GTS_BUILD/tools/gtstorage-info
gts_step "gtstorage-info --preset gt:cpu_kfirst --shape 12,12,6 --halo 2,2,0"
"$info" --preset gt:cpu_kfirst --shape 12,12,6 --halo 2,2,0
gts_step "gtstorage-info --preset gridtools:cpu_ifirst --shape 12,12,6 --halo 2,2,0"
"$info" --preset gridtools:cpu_ifirst --shape 12,12,6 --halo 2,2,0
gts_step "gtstorage-info --shape 12,12,6 --halo 2,2,0 --all-presets"
"$info" --shape 12,12,6 --halo 2,2,0 --all-presets
gts_step "examples/basic.c"
"$GTS_BUILD/examples/basic"
gts_step "demo done (more: $info --help; the worked example: $GTS_BUILD/examples/guide_example)"
