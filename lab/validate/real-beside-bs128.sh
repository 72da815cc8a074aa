#!/usr/bin/env bash
# Real hardware against simulation and live replay (issue 5): how much slower
# is a batch-1 inference job while resnet50 batch-128 inference runs beside it,
# under the GPU's default time slicing and under MPS? Needs a GPU, python3
# with torch/torchvision/transformers, and nvidia-cuda-mps-control. About 4
# minutes on an H200.
#
#   lab/validate/real-beside-bs128.sh OUT_DIR [ROUNDS]
#
# For each batch-1 model, ROUNDS times (default 2): alone, beside the
# background job (separate processes: time slicing), and beside it under MPS.
# The real PyTorch models run (scripts/workloads/workload.py, random weights),
# not traces. Writes OUT_DIR/real.jsonl: one line per run with the model,
# the setting and the workload's JSON (ms_per_iter, ms_per_iter_median).
# The matching simulations and live replays are the scenarios of
# lab/scenarios/beside-bs128/ (the background job repeated so it
# outlasts the batch-1 job): `fikit-lab validate --policy mps …`.
set -uo pipefail
OUT="$1"; ROUNDS="${2:-2}"
mkdir -p "$OUT"
W=scripts/workloads/workload.py
PY="${PYTHON:-python3}"
RES="$OUT/real.jsonl"; : >"$RES"
MODELS="bert-base vit_b_16 mobilenet_v3_large resnet50 efficientnet_b0"

bs1() { # model setting
    local line
    line=$("$PY" "$W" --model "$1" --batch 1 --mode eval --iters 300 --warmup 30 2>>"$OUT/stderr.txt" | tail -1)
    echo "{\"model\": \"$1\", \"setting\": \"$2\", \"run\": $line}" >>"$RES"
    echo "$1 $2: $line"
}

background() { # starts resnet50 bs128 inference for ~forever; waits until it runs
    "$PY" "$W" --model resnet50 --batch 128 --mode eval --iters 1000000 --warmup 5 \
        >/dev/null 2>>"$OUT/stderr.txt" &
    BG=$!
    sleep 12
}

stop_background() { kill "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; }

mps_start() {
    export CUDA_MPS_PIPE_DIRECTORY="$OUT/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$OUT/mps-log"
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    sleep 1
}

mps_stop() {
    echo quit | nvidia-cuda-mps-control
    sleep 2
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in $(seq "$ROUNDS"); do
    for m in $MODELS; do bs1 "$m" alone; done
    background
    for m in $MODELS; do bs1 "$m" timeslice; done
    stop_background
    mps_start
    for m in $MODELS; do bs1 "$m" mps-alone; done
    background
    for m in $MODELS; do bs1 "$m" mps; done
    stop_background
    mps_stop
done
