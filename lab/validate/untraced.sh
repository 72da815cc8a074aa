#!/usr/bin/env bash
# The untraced runs on a GPU machine: two jobs profiled by fikit-profile
# (one traced run, then --runs untraced ones; the characterization goes into
# each trace), then run together for real by fikit-run, whose simulated
# column now sets each job's host from those untraced runs.
#
#   lab/validate/untraced.sh BIN_DIR OUT_DIR   (from the repository root)
#
# BIN_DIR holds fikit-profile, fikit-run, libfikit_collector.so and
# libfikit_shim.so. POLICIES (environment): fikit-run's (default
# exclusive,timeslice,mps,fikit); REPS: its repetitions (default 3); INFER
# and TRAIN: workload.py's arguments for the two jobs (default resnet50
# batch 1 eval, resnet50 batch 32 train).
# Writes OUT_DIR/untraced.log (everything printed), the two traces,
# table.txt and run.json.xz.
set -uo pipefail
BIN=${1:?usage: untraced.sh BIN_DIR OUT_DIR}
OUT=${2:?output folder}
mkdir -p "$OUT"
WORK=$(mktemp -d)
exec > >(tee "$OUT/untraced.log") 2>&1
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
W=scripts/workloads/workload.py
INFER="python3 $W ${INFER:---model resnet50 --batch 1 --mode eval --iters 300 --warmup 10}"
TRAIN="python3 $W ${TRAIN:---model resnet50 --batch 32 --mode train --iters 120 --warmup 3}"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
t0=$SECONDS
"$BIN/fikit-profile" --name infer --priority 0 -q -o "$WORK/traces" -- $INFER
"$BIN/fikit-profile" --name train --priority 9 -q -o "$WORK/traces" -- $TRAIN
echo "== profiled in $((SECONDS - t0)) s"
cp "$WORK"/traces/*.parquet "$OUT/"
"$BIN/fikit-run" scenario --job "infer:0:$(ls "$WORK"/traces/infer-*.parquet)=$INFER" \
  --job "train:9:$(ls "$WORK"/traces/train-*.parquet)=$TRAIN" \
  --policy "${POLICIES:-exclusive,timeslice,mps,fikit}" -r "${REPS:-3}" -o "$WORK/run"
echo "== done in $((SECONDS - t0)) s"
cp "$WORK/run/table.txt" "$OUT/"
xz -c "$WORK/run/run.json" > "$OUT/run.json.xz"
rm -rf "$WORK"
