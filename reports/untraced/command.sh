#!/usr/bin/env bash
# 2026-11-27, the device tool's machines (driver 580.159.04): one NVIDIA H200
# (h200/), then one NVIDIA H100 80GB HBM3 (h100/). BIN: fikit-profile and
# fikit-run of 145b601 (debug build, stripped) beside the release collector
# and launch shim of f5cc4c9 (their sources unchanged since), carried in .gpu/.
OUT=$OUT timeout 580 lab/validate/untraced.sh .gpu/bin "$OUT"
# Then, here, the prediction as traced (fikit-run of f5cc4c9, which does not
# read the characterization) from the same rounds, for each GPU:
#   fikit-run report run.json --job "infer:0:infer-PID.parquet=$INFER" \
#     --job "train:9:train-PID.parquet=$TRAIN" --policy exclusive,timeslice,mps,fikit
# untraced.log: everything printed; table.txt: fikit-run's table (its
# simulated column from the untraced host); raw.tar.xz: both traces and run.json.xz.
# h100-vitb1-bertt32/ (9b31eb7, the same BIN layout), on one H100:
#   INFER="--model vit_b_16 --batch 1 --mode eval --iters 400 --warmup 10" \
#   TRAIN="--model bert-base --batch 32 --seq-len 128 --mode train --iters 150 --warmup 3" \
#   OUT=$OUT timeout 580 lab/validate/untraced.sh .gpu/bin "$OUT"
# (stopped by the call's limit in its FIKIT rounds: untraced.log and the traces
# came back), then on the same machine with those profiles:
#   fikit-run scenario --job "infer:0:TRACE=…" --job "train:9:TRACE=…" \
#     --policy exclusive,timeslice,mps -r 3 -o /tmp/run2   (table.txt, run.json.xz)
