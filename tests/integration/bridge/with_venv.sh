#!/usr/bin/env bash
# Runs "$@" with VIRTUAL_ENV=$GTSTORAGE_BRIDGE_VENV (the venv the embedded Python uses, as a
# model's job script would set it); exit 77 (CTest: skipped) without it. See tests/integration/bridge/run.sh.
if [[ -z ${GTSTORAGE_BRIDGE_VENV:-} ]]; then
  echo "SKIPPED: GTSTORAGE_BRIDGE_VENV (a venv of the embedded Python with gt4py) not set"
  exit 77
fi
export VIRTUAL_ENV=$GTSTORAGE_BRIDGE_VENV
exec "$@"
