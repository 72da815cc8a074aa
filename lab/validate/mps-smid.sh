#!/usr/bin/env bash
# lab/validate/mps-smid.py's runs side by side on one GPU, each pair of
# clients under one private MPS daemon (its docstring holds the design and
# the rules): the spinning, busy and working partner A beside B spinning or
# working. Writes OUT/read.txt; the block records stay in WORK. RUNS
# (environment) picks pairings, A:B; A_ITERS and B_ITERS pass through.
#
#   lab/validate/mps-smid.sh WORK OUT [SECONDS]   (from the repository root, on a GPU machine)
set -uo pipefail
WORK=${1:?usage: mps-smid.sh WORK OUT [SECONDS]}
OUT=${2:?output folder}
SECONDS_RUN=${3:-3}
mkdir -p "$WORK" "$OUT"
export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps-pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" | tee "$OUT/read.txt"
nvidia-cuda-mps-control -d || { echo "MPS daemon did not start" | tee -a "$OUT/read.txt"; exit 1; }
for run in ${RUNS:-spin:spin busy:spin spin:work busy:work work:work work:spin}; do
  a=${run%%:*}; b=${run#*:}; dir=$WORK/$a-$b
  mkdir -p "$dir"
  {
    echo "== A $a, B $b"
    A_KERNEL=$a python3 lab/validate/mps-smid.py A "$((SECONDS_RUN + 2))" "$dir" &
    sleep 2   # A's kernels run alone first (its drain alone is read from them)
    B_KERNEL=$b python3 lab/validate/mps-smid.py B "$SECONDS_RUN" "$dir"
    wait
    python3 lab/validate/mps-smid.py read "$dir"
  } 2>&1 | tee -a "$OUT/read.txt"
done
echo quit | nvidia-cuda-mps-control
