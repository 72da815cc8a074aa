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
