# Sourced by scripts that run Python with pinned requirements.
# pinned_venv VENV REQ WHAT: makes the virtual environment VENV with REQ
# installed, again whenever REQ changes (a copy of it is kept inside VENV).
pinned_venv() {
  local venv=$1 req=$2 what=$3
  if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/requirements.txt"; then
    echo "== $what environment ($req)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    cp "$req" "$venv/requirements.txt"
  fi
}
