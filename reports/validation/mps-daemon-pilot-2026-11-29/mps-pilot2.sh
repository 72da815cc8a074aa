#!/usr/bin/env bash
P=reports/validation/mps-daemon-pilot-2026-11-29/mps-pilot.py
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
for k in 1 2 3; do
  python3 $P victim $OUT/alone-$k.json >/dev/null 2>&1; echo alone-$k $(cat $OUT/alone-$k.json | tr -d '\n ')
  nvidia-cuda-mps-control -d; sleep 1
  python3 $P victim $OUT/mps-$k.json >/dev/null 2>&1; echo mps-$k $(cat $OUT/mps-$k.json | tr -d '\n ')
  echo quit | nvidia-cuda-mps-control; sleep 2
done
