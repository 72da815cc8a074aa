#!/usr/bin/env bash
# Pilot: victim alone (no MPS), alone under MPS, beside a tiny-kernel stream and beside effb1 under MPS.
P=reports/validation/mps-daemon-pilot-2026-11-29/mps-pilot.py
python3 $P victim $OUT/alone.json >/dev/null 2>&1; echo alone $(cat $OUT/alone.json | tr -d '\n ')
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
python3 $P victim $OUT/mps-alone.json >/dev/null 2>&1; echo mps-alone $(cat $OUT/mps-alone.json | tr -d '\n ')
python3 $P tiny 25 & T=$!; sleep 8
python3 $P victim $OUT/mps-tiny.json >/dev/null 2>&1; echo mps-tiny $(cat $OUT/mps-tiny.json | tr -d '\n '); wait $T
python3 scripts/workloads/workload.py --model efficientnet_b0 --batch 1 --mode eval --iters 5000 --warmup 10 >/dev/null 2>&1 & E=$!; sleep 12
python3 $P victim $OUT/mps-effb1.json >/dev/null 2>&1; echo mps-effb1 $(cat $OUT/mps-effb1.json | tr -d '\n '); kill $E; wait
echo quit | nvidia-cuda-mps-control
