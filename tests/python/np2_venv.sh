# Sourced by tests/python/run.sh and tests/python/lint.sh (not run by itself).
# make_np2_venv: creates <build-dir>/.venv-np2 ($venv) with the pinned development requirements
# (tests/python/requirements-dev.txt, in $here), or recreates it when the file changed since.
make_np2_venv() {
  local req="$here/requirements-dev.txt" stamp="$venv/.requirements.sha256" want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "== ${0##*/}: creating $venv (NumPy 2.x, pinned dev requirements)"
    rm -rf "$venv"
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  fi
}
