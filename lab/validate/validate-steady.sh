#!/usr/bin/env bash
# Steady-background fidelity on one GPU (issue 5), in one go; about 6 minutes
# on an H200. Needs the GPU, the CUDA driver, libnvrtc (LD_LIBRARY_PATH) and
# the MPS control daemon (nvidia-cuda-mps-control).
#
#   lab/validate/validate-steady.sh FIKIT_LAB MODEL_JSON OUT_DIR
#
# 1. `fikit-lab validate` (every policy) on lab/scenarios/steady-holdout/:
#    batch-1 jobs beside a training job that runs throughout, both as
#    back-to-back requests. Committed before the model change it checks:
#    OUT/steady-holdout/validation.{md,json}.
# 2. Per-kernel timelines (FIKIT_LIVE_TIMELINE) of live time-slicing and MPS
#    runs of two beside-bs128-steady scenarios (resnet50 and mobilenet batch 1
#    beside steady resnet50 batch 128), for the hand-over analysis
#    (lab/analysis/lost-turns.py): OUT/steady-timelines.tar.gz.
set -uo pipefail
LAB="$1"; MODEL="$2"; OUT="$3"
mkdir -p "$OUT"
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

start=$(date +%s)
"$LAB" validate --model "$MODEL" --out "$OUT/steady-holdout" \
    lab/scenarios/steady-holdout/*.json >"$OUT/steady-holdout.md" 2>"$OUT/steady-holdout.err"
echo "validate steady-holdout rc=$? $(( $(date +%s) - start )) s"
sed -n 5,11p "$OUT/steady-holdout.md"

tl=/tmp/steady-timelines; rm -rf "$tl"; mkdir -p "$tl"
for n in resnet50-b1 mobilenet_v3_large-b1; do
    for p in timeslice mps; do
        start=$(date +%s)
        FIKIT_LIVE_TIMELINE="$tl/$n-$p" "$LAB" live --policy "$p" --format json \
            --scenario lab/scenarios/beside-bs128-steady/$n.json \
            >"$tl/$n-$p.json" 2>"$tl/$n-$p.err" || echo "timeline run $n $p failed: rc=$?"
        echo "timeline $n $p $(( $(date +%s) - start )) s"
    done
done
tar -C /tmp -czf "$OUT/steady-timelines.tar.gz" steady-timelines
ls -la "$OUT"
