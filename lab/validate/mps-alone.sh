#!/usr/bin/env bash
# Issue 45's MPS question: what the MPS daemon alone (no other client) does
# to a batch-1 job, before any model term for it. Per job and repetition,
# interleaved: the job traced once without the daemon and once as the
# daemon's only client (fikit-profile --single-run), then the same two
# untraced (plain workload.py, its median iteration). The traces are read
# on the machine by lab/analysis/start-latency.py (kernel time, the wait
# from a launch to its kernel's start on an idle stream).
#
#   lab/validate/mps-alone.sh BIN_DIR OUT_DIR [REPS]   (from the repository root, on a GPU machine)
#
# BIN_DIR holds fikit-profile and libfikit_collector.so. JOBS (environment):
# `name=workload.py arguments` entries separated by ';', each with its
# --iters (default resnet50 b1 and bert-base b1 seq 128, host-corun's jobs
# at 200 iterations).
# Writes OUT_DIR/mps-alone.log (everything printed), OUT_DIR/untraced.txt
# and OUT_DIR/start-latency.txt; the traces stay in OUT_DIR/traces.
set -uo pipefail
BIN=${1:?usage: mps-alone.sh BIN_DIR OUT_DIR [REPS]}
OUT=${2:?output folder}
REPS=${3:-3}
mkdir -p "$OUT/traces"
exec > >(tee "$OUT/mps-alone.log") 2>&1
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
W=scripts/workloads/workload.py
JOBS=${JOBS:-"r50b1=--model resnet50 --batch 1 --mode eval --iters 200 --warmup 10;bertb1=--model bert-base --batch 1 --seq-len 128 --mode eval --iters 200 --warmup 10"}
PIPE=$(mktemp -d)
ON=0
daemon() {
  case $1 in
    on) export CUDA_MPS_PIPE_DIRECTORY=$PIPE/pipe CUDA_MPS_LOG_DIRECTORY=$PIPE/log
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d || { echo "mps-alone: cannot start the MPS daemon"; exit 1; }
        ON=1; sleep 1 ;;
    off) [ "$ON" = 1 ] || return 0
         echo quit | nvidia-cuda-mps-control; sleep 2; ON=0
         unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY ;;
  esac
}
# A call cut short leaves no daemon behind.
trap 'daemon off; rm -rf "$PIPE"' EXIT
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
: > "$OUT/untraced.txt"
IFS=';' read -ra jobs <<<"$JOBS"
for k in $(seq 1 "$REPS"); do
  for j in "${jobs[@]}"; do
    name=${j%%=*}; args=${j#*=}
    for cond in plain mps; do
      [ $cond = mps ] && daemon on
      "$BIN/fikit-profile" --single-run -q --name "$name" -o "$OUT/traces/$cond-$k" -- python3 $W $args
      ms=$(python3 $W $args 2>/dev/null | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin if l.startswith("{")][-1]["ms_per_iter_median"])' 2>/dev/null)
      [ -n "$ms" ] || { echo "mps-alone: $name ($cond, repetition $k): the untraced run failed"; ms=failed; }
      echo "$name $cond $k $ms" | tee -a "$OUT/untraced.txt"
      [ $cond = mps ] && daemon off
    done
  done
done
: > "$OUT/start-latency.txt"
for j in "${jobs[@]}"; do
  name=${j%%=*}
  iters=$(echo "${j#*=}" | sed -nE 's/.*--iters ([0-9]+).*/\1/p')
  [ -n "$iters" ] || { echo "mps-alone: $name: no --iters in its arguments" | tee -a "$OUT/start-latency.txt"; continue; }
  python3 lab/analysis/start-latency.py "$iters" "$OUT"/traces/*/"$name"-*.parquet >> "$OUT/start-latency.txt" 2>&1
done
cat "$OUT/start-latency.txt"
