#!/usr/bin/env bash
# 2026-11-28, the device tool's machines: one NVIDIA H200 (driver
# 580.159.04). BIN (.gpu/bin): fikit-profile and fikit-run of 1adae88 (debug
# build, stripped) beside the release collector and launch shim of f5cc4c9
# (their sources unchanged since).
#
# h200/: fikit-profile's default runs (traced, 3 untraced, the pressure
# pass) of both jobs, then fikit-run, 3 repetitions a policy; its simulated
# column from the profiles alone (untraced host and measured MPS pressure):
POLICIES=exclusive,timeslice,mps REPS=3 OUT=$OUT timeout 570 lab/validate/untraced.sh .gpu/bin "$OUT/r50"
# untraced.log: everything printed; table.txt: fikit-run's table;
# raw.tar.xz: both traces and run.json.xz.
#
# h200-capture-check/: fikit-profile of a07de5f (the wait fixed) on two of
# the shipped suite's jobs (scripts/capture/capture-traces.sh's arguments),
# on a fresh H200; each log and both traces (traces.tar.xz):
W=scripts/workloads/workload.py
for j in "resnet50-bs1-eval|0|--model resnet50 --batch 1 --mode eval --iters 60 --warmup 5" \
         "resnet50-bs32-train|9|--model resnet50 --batch 32 --mode train --iters 12 --warmup 3"; do
  IFS='|' read -r n p a <<<"$j"
  # shellcheck disable=SC2086 # the workload's arguments, one word each
  .gpu/bin/fikit-profile --name "$n" --priority "$p" -q -o "$OUT/t" -- python3 $W $a > "$OUT/$n.log" 2>&1
done
