#!/usr/bin/env bash
# The wheel as a user without Rust gets it (.ci/run calls this): builds it
# (scripts/wheel/build.sh), installs it into a fresh virtual environment, and
# with only that environment and /usr/bin:/bin on PATH (no cargo, no rustc)
# checks that
#   - fikit-sim's screen (stdout and stderr) of the installed H200 and H100
#     traces is byte for byte the workspace build's of traces/h200 and traces/h100;
#   - fikit-profile, fikit-sim and fikit-run answer --help;
#   - fikit-profile finds the collector beside itself (its preflight names no
#     missing collector);
#   - `python -m fikit` and the module find the commands and the traces.
# FIKIT_WHEEL_PROFILE is passed on to build.sh. With a WHEEL argument, tests
# that wheel and builds nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
wheel=${1:-}
if [ -z "$wheel" ]; then
  ./scripts/wheel/build.sh
  wheel=$(ls target/wheels/fikit-*.whl)
fi

VENV=$ROOT/target/wheel-test-venv
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel"

# The workspace's own fikit-sim, for the reference screens.
[ -x target/debug/fikit-sim ] || cargo build -q -p fikit-sim
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for gpu in h200 h100; do
  (cd traces && "$ROOT/target/debug/fikit-sim" "$gpu/") >"$WORK/want-$gpu.txt" 2>&1
done

# The module beside a checkout's own build (FIKIT_BIN_DIR): the checkout's traces.
[ "$(FIKIT_BIN_DIR="$ROOT/target/debug" PYTHONPATH="$ROOT/python" python3 -m fikit traces h100)" = "$ROOT/traces/h100" ]

# From here on: the installed environment only.
env -i HOME="$WORK" PATH="$VENV/bin:/usr/bin:/bin" WORK="$WORK" bash -euo pipefail <<'SH'
cd "$WORK"
if command -v cargo || command -v rustc; then echo "test.sh: Rust is on PATH" >&2; exit 1; fi
for gpu in h200 h100; do
  traces=$(python -m fikit traces "$gpu")
  (cd "$traces/.." && fikit-sim "$gpu/") >"got-$gpu.txt" 2>&1
  diff -u "want-$gpu.txt" "got-$gpu.txt"
  echo "installed fikit-sim, $gpu: the workspace build's screen ($(wc -l <"got-$gpu.txt") lines)"
done
for c in fikit-profile fikit-sim fikit-run; do
  "$c" --help | grep -q '^Usage:' || { echo "test.sh: $c --help has no Usage line" >&2; exit 1; }
done
[ "$(python -m fikit bin)" = "$(dirname "$(command -v fikit-sim)")" ]
# No GPU here: the preflight lists what is missing, and the collector must not be among it.
fikit-profile -o "$WORK/out" -- true 2>preflight.txt || true
grep -q 'nothing was recorded' preflight.txt
if grep -i collector preflight.txt; then echo "test.sh: fikit-profile did not find its collector" >&2; exit 1; fi
python - <<'PY'
import fikit
screen = fikit.sim_json(fikit.traces("h100"))
assert screen, "fikit-sim printed an empty JSON screen"
print("fikit module: bin", fikit.bin_dir(), "and", len(list(fikit.traces("h100").glob("*.parquet"))), "H100 traces")
PY
SH
echo "wheel test: passed ($wheel)"
