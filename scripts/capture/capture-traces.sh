#!/bin/bash
# Captures the suite of traces the project ships, with fikit-profile, on a GPU machine.
#
#   scripts/capture/capture-traces.sh FIKIT_PROFILE OUT_DIR [NAME...]
#
# With NAMEs, only those workloads of the suite (for a capture spread over
# several sittings of a GPU).
# Each workload is scripts/workloads/workload.py with random weights; the
# trace holds the whole process (model set-up, warm-up and timed iterations).
set -euo pipefail
FP=${1:?usage: capture-traces.sh FIKIT_PROFILE OUT_DIR}
OUT=${2:?usage: capture-traces.sh FIKIT_PROFILE OUT_DIR}
W="$(dirname "$0")/../workloads/workload.py"
shift 2
ONLY=" $* "
mkdir -p "$OUT"

# name | priority | workload arguments
SUITE=(
  "resnet50-bs1-eval|high|--model resnet50 --batch 1 --mode eval --iters 60 --warmup 5"
  "mobilenet_v3_large-bs1-eval|high|--model mobilenet_v3_large --batch 1 --mode eval --iters 60 --warmup 5"
  "efficientnet_b0-bs1-eval|high|--model efficientnet_b0 --batch 1 --mode eval --iters 60 --warmup 5"
  "vit_b_16-bs1-eval|high|--model vit_b_16 --batch 1 --mode eval --iters 60 --warmup 5"
  "bert-base-bs1-eval|high|--model bert-base --batch 1 --seq-len 128 --mode eval --iters 60 --warmup 5"
  "resnet50-bs1-eval-2ms-arrivals|high|--model resnet50 --batch 1 --mode eval --iters 60 --warmup 5 --sleep-ms 2"
  "resnet50-bs32-train|low|--model resnet50 --batch 32 --mode train --iters 12 --warmup 3"
  "resnet50-bs128-eval|low|--model resnet50 --batch 128 --mode eval --iters 20 --warmup 3"
  "bert-base-bs32-train|low|--model bert-base --batch 32 --seq-len 128 --mode train --iters 10 --warmup 3"
)
for entry in "${SUITE[@]}"; do
  IFS='|' read -r name prio args <<<"$entry"
  [[ "$ONLY" == "  " || "$ONLY" == *" $name "* ]] || continue
  echo "=== $name"
  # shellcheck disable=SC2086
  "$FP" --name "$name" --priority "$prio" -o "$OUT" -- python3 "$W" $args
done
