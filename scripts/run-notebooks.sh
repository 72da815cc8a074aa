#!/usr/bin/env bash
# Executes every notebook in notebooks/ so that none can rot (.ci/run calls it
# after ./scripts/check): a virtual environment under target/ with the pinned
# notebooks/requirements.txt (made again when that file changes), then
# `jupyter nbconvert --execute`; the executed copies go to target/notebooks/.
# A failing cell fails the script. The committed notebooks must keep no
# outputs (small diffs): the script checks that first.
# Needs python3 (with venv and pip) and the network to PyPI the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/notebook-venv
REQ=notebooks/requirements.txt
OUT=target/notebooks

python3 - notebooks/*.ipynb <<'PY'
import json, sys
bad = [f"{path} cell {i}" for path in sys.argv[1:]
       for i, c in enumerate(json.load(open(path))["cells"])
       if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
if bad:
    sys.exit("run-notebooks.sh: committed notebooks must have no outputs (clear them): " + ", ".join(bad))
PY

# shellcheck source=scripts/lib/venv.sh
source scripts/lib/venv.sh
pinned_venv "$VENV" "$REQ" notebook
# The notebooks call target/*/fikit-sim (through the fikit module); build one where none is.
[ -x target/debug/fikit-sim ] || [ -x target/release/fikit-sim ] || cargo build -q -p fikit-sim
mkdir -p "$OUT"
n=0
for nb in notebooks/*.ipynb; do
  echo "== $nb"
  "$VENV/bin/jupyter" nbconvert --to notebook --execute \
    --ExecutePreprocessor.timeout=600 --output-dir "$OUT" "$nb"
  n=$((n + 1))
done
echo "notebooks: $n passed, 0 failed"
