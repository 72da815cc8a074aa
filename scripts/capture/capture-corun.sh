#!/usr/bin/env bash
# Records traces/h200-corun/ (traces/README.md): bert-base and vit_b_16
# batch-1 inference under fikit-profile, alone and beside resnet50 batch-128
# inference (not recorded), with and without MPS. Needs a GPU, python3 with
# torch/torchvision/transformers and nvidia-cuda-mps-control; about 2 minutes.
#
#   scripts/capture/capture-corun.sh FIKIT_PROFILE COLLECTOR OUT_DIR
set -uo pipefail
FP="$1"; export FIKIT_COLLECTOR="$2"; OUT="$3"
W=scripts/workloads/workload.py
mkdir -p "$OUT"
prof() { # model setting
    "$FP" -q -n "$1-$2" -o "$OUT/$1-$2" -- python3 "$W" --model "$1" --batch 1 --mode eval \
        --iters 100 --warmup 20 >"$OUT/$1-$2.log" 2>&1
    echo "$1 $2 rc=$?"
}
bg() {
    python3 "$W" --model resnet50 --batch 128 --mode eval --iters 1000000 --warmup 5 >/dev/null 2>&1 &
    BG=$!
    sleep 12
}
for m in bert-base vit_b_16; do prof "$m" alone; done
bg; for m in bert-base vit_b_16; do prof "$m" timeslice; done; kill "$BG"; wait "$BG" 2>/dev/null
export CUDA_MPS_PIPE_DIRECTORY="$OUT/mps-pipe" CUDA_MPS_LOG_DIRECTORY="$OUT/mps-log"
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d; sleep 1
for m in bert-base vit_b_16; do prof "$m" mps-alone; done
bg; for m in bert-base vit_b_16; do prof "$m" mps; done; kill "$BG"; wait "$BG" 2>/dev/null
echo quit | nvidia-cuda-mps-control; sleep 2
rm -rf "$CUDA_MPS_PIPE_DIRECTORY"
