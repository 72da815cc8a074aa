#!/bin/bash
# Captures one workload twice on a GPU machine, for the comparison of
# `fikit-sim import` (Kineto) with fikit-profile (tests/import.rs,
# shipped_kineto_capture_matches_fikit_profile):
#
#   scripts/capture/capture-kineto.sh FIKIT_PROFILE OUT_DIR      # e.g. OUT_DIR = traces/kineto
#
# 1. under fikit-profile (the whole process) → OUT_DIR/resnet50-bs1-eval.fikit.parquet
# 2. with torch.profiler (CUDA activity, the timed loop only), exported as
#    gzipped Kineto Chrome-trace JSON   → OUT_DIR/resnet50-bs1-eval.kineto.json.gz
#
# Both run resnet50 batch-1 inference, 10 warm-up and 30 timed iterations,
# random weights; one profiler per process (two CUPTI subscribers collide).
# Existing files are never replaced: the script stops instead.
set -euo pipefail
FP=${1:?usage: capture-kineto.sh FIKIT_PROFILE OUT_DIR}
OUT=${2:?usage: capture-kineto.sh FIKIT_PROFILE OUT_DIR}
W="$(dirname "$0")/../workloads/workload.py"
ARGS=(--model resnet50 --batch 1 --mode eval --iters 30 --warmup 10)
FIKIT="$OUT/resnet50-bs1-eval.fikit.parquet"
KINETO="$OUT/resnet50-bs1-eval.kineto.json.gz"
for f in "$FIKIT" "$KINETO"; do
  if [ -e "$f" ]; then
    echo "capture-kineto.sh: $f exists; move it away first" >&2
    exit 2
  fi
done
mkdir -p "$OUT"
TMP=$(mktemp -d "$OUT/.capture-kineto-XXXXXX")
trap 'rm -rf "$TMP"' EXIT

echo "=== 1/2 fikit-profile"
"$FP" --name resnet50-bs1-eval --priority high -o "$TMP" -- python3 "$W" "${ARGS[@]}"
shopt -s nullglob
traces=("$TMP"/resnet50-bs1-eval-*.parquet)
if [ "${#traces[@]}" -ne 1 ]; then
  echo "capture-kineto.sh: expected one trace from fikit-profile, found ${#traces[@]}" >&2
  exit 1
fi
mv "${traces[0]}" "$FIKIT"

echo "=== 2/2 torch.profiler"
python3 "$W" "${ARGS[@]}" --chrome-trace "$TMP/kineto.json.gz"
mv "$TMP/kineto.json.gz" "$KINETO"

ls -l "$FIKIT" "$KINETO"
