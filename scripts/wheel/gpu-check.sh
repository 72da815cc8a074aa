#!/usr/bin/env bash
# The installed wheel on a GPU machine (issue 46): installs WHEEL into the
# Python environment of the python3 on PATH (the one with PyTorch, as a user
# would), then with the installed commands (no build of the checkout)
#   1. profiles a batch-1 ResNet-50 and a ResNet-50 training job of
#      scripts/workloads/workload.py alone (fikit-profile),
#   2. predicts the pair (fikit-sim),
#   3. runs the pair for real under every policy, 3 rounds each (fikit-run),
# and writes everything it printed to $OUT/wheel-gpu.txt and fikit-run's
# table and run.json beside it. From the repository root:
#   scripts/wheel/gpu-check.sh target/wheels/fikit-*.whl
set -euo pipefail
WHEEL=${1:?usage: gpu-check.sh WHEEL}
OUT=${OUT:-/tmp/fikit-wheel-gpu}
WORK=$(mktemp -d)
mkdir -p "$OUT"
exec > >(tee "$OUT/wheel-gpu.txt") 2>&1
date -u +%FT%TZ
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install --quiet --disable-pip-version-check --no-index "$WHEEL"
[ ! -e target ] || { echo "gpu-check.sh: a target/ folder is here; run it on a checkout without builds" >&2; exit 1; }
echo "== installed: $(command -v fikit-profile) $(command -v fikit-sim) $(command -v fikit-run)"
ls "$(python3 -m fikit bin)"
W=scripts/workloads/workload.py
INFER="python3 $W --model resnet50 --batch 1 --mode eval --iters 300 --warmup 10"
TRAIN="python3 $W --model resnet50 --batch 32 --mode train --iters 120 --warmup 3"
echo "== fikit-profile"
fikit-profile --name infer --priority 0 -o "$WORK/traces" -- $INFER
fikit-profile --name train --priority 9 -o "$WORK/traces" -- $TRAIN
echo "== fikit-sim"
fikit-sim "$WORK/traces/" --jobs infer,train --no-plots
echo "== fikit-run"
fikit-run scenario --job "infer:0:$(ls "$WORK"/traces/infer-*.parquet)=$INFER" \
  --job "train:9:$(ls "$WORK"/traces/train-*.parquet)=$TRAIN" -r 3 -o "$WORK/run"
cp "$WORK/run/table.txt" "$WORK/run/run.json" "$OUT/"
echo "gpu-check: passed"
