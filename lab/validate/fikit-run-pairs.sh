#!/usr/bin/env bash
# fikit-run on real PyTorch pairs, on a GPU machine: profiles each command alone
# with fikit-profile, measures the gate's own cost on a batch-1 job alone, then
# runs each pair under the chosen policies with fikit-run (repetitions,
# medians, ranges, overlap check, fikit-sim's prediction for the profiles).
#
#   lab/validate/fikit-run-pairs.sh BIN_DIR OUT_DIR [PAIR...]
#
# BIN_DIR holds fikit-profile, fikit-run and libfikit_collector.so. PAIRs are
# names from the PAIRS table below (default: all). Environment: REPS (3),
# POLICIES (exclusive,timeslice,fikit), OVERHEAD_ROUNDS (3; 0 skips),
# ROUND_TIMEOUT (300 s: a round still running is stopped), DEADLINE (seconds
# from the start; a pair still running then gets Ctrl-C and writes what it has),
# PAIR_MIN_S (with DEADLINE: a pair starts only with at least this many seconds left).
# The real validation set (lab/validate/real-set.json) runs with
# `fikit-run set` instead, from the repository root.
# Writes OUT_DIR/profiles/, OUT_DIR/overhead.txt, OUT_DIR/<pair>/{run.json,table.txt,logs/}.
set -euo pipefail
BIN=$(cd "${1:?usage: fikit-run-pairs.sh BIN_DIR OUT_DIR [PAIR...]}" && pwd)
OUT=${2:?usage: fikit-run-pairs.sh BIN_DIR OUT_DIR [PAIR...]}
shift 2
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W="$(cd "$(dirname "$0")/../../scripts/workloads" && pwd)/workload.py"
REPS=${REPS:-3}
POLICIES=${POLICIES:-exclusive,timeslice,fikit}
OVERHEAD_ROUNDS=${OVERHEAD_ROUNDS:-3}
ROUND_TIMEOUT=${ROUND_TIMEOUT:-300}
DEADLINE=${DEADLINE:-}
PAIR_MIN_S=${PAIR_MIN_S:-10}
T0=$(date +%s)

# name | priority | workload arguments (the same command is profiled and run)
JOBS=(
  "r50b1|0|--model resnet50 --batch 1 --mode eval --iters 400 --warmup 10"
  "bertb1|0|--model bert-base --batch 1 --seq-len 128 --mode eval --iters 300 --warmup 10"
  "vitb1|0|--model vit_b_16 --batch 1 --mode eval --iters 400 --warmup 10"
  "mobb1|0|--model mobilenet_v3_large --batch 1 --mode eval --iters 400 --warmup 10"
  "r50b1serve|0|--model resnet50 --batch 1 --mode eval --iters 300 --warmup 10 --sleep-ms 5"
  "r50b128|9|--model resnet50 --batch 128 --mode eval --iters 400 --warmup 3"
  "r50t32|9|--model resnet50 --batch 32 --mode train --iters 350 --warmup 3"
  "bertt32|9|--model bert-base --batch 32 --seq-len 128 --mode train --iters 150 --warmup 3"
)
# pair | high-priority job | low-priority job
PAIRS=(
  "r50b1+r50b128|r50b1|r50b128"
  "bertb1+r50b128|bertb1|r50b128"
  "vitb1+r50t32|vitb1|r50t32"
  "mobb1+bertt32|mobb1|bertt32"
  "r50b1serve+r50b128|r50b1serve|r50b128"
  "bertb1+r50t32|bertb1|r50t32"
)

args_of() { for e in "${JOBS[@]}"; do IFS='|' read -r n p a <<<"$e"; [ "$n" = "$1" ] && echo "$a"; done; }
prio_of() { for e in "${JOBS[@]}"; do IFS='|' read -r n p a <<<"$e"; [ "$n" = "$1" ] && echo "$p"; done; }

want=("$@")
if [ ${#want[@]} -eq 0 ]; then for e in "${PAIRS[@]}"; do want+=("${e%%|*}"); done; fi
need=()
for p in "${want[@]}"; do
  for e in "${PAIRS[@]}"; do IFS='|' read -r n h l <<<"$e"; [ "$n" = "$p" ] && need+=("$h" "$l"); done
done
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
mkdir -p "$OUT/profiles"
for j in "${need[@]}"; do
  if ls "$OUT/profiles/$j"-*.parquet >/dev/null 2>&1; then continue; fi
  echo "== profile $j"
  # shellcheck disable=SC2046
  "$BIN/fikit-profile" --name "$j" --priority "$(prio_of "$j")" -o "$OUT/profiles" -- python3 "$W" $(args_of "$j") \
    >"$OUT/profiles/$j.log" 2>&1 || { echo "profile $j failed"; tail -5 "$OUT/profiles/$j.log"; exit 1; }
done

json_cmd() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' python3 "$W" "$@"; }

if [ "$OVERHEAD_ROUNDS" -gt 0 ]; then
  # The gate's own cost on a batch-1 job alone: the plain command, then under
  # fikit-run (exclusive: the gate is open, counts and stamps; fikit: the job
  # is the top job and its launches pass the gate). The figure is the median
  # timed iteration the workload prints (robust to the host's occasional
  # stalls); rounds alternate which goes first.
  j=r50b1
  prof=$(ls "$OUT/profiles/$j"-*.parquet | head -1)
  med() { tail -1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ms_per_iter_median"])'; }
  : >"$OUT/overhead.txt"
  for r in $(seq 1 "$OVERHEAD_ROUNDS"); do
    plain() {
      # shellcheck disable=SC2046
      python3 "$W" $(args_of $j) >"$OUT/overhead-plain-$r.log" 2>&1 || true
    }
    gated() {
      "$BIN/fikit-run" scenario --job "$j:0:$prof=python3 $W $(args_of $j)" --policy fikit -r 1 \
        --round-timeout-s "$ROUND_TIMEOUT" -o "$OUT/overhead-$r" >/dev/null 2>&1 || true
    }
    if [ $((r % 2)) -eq 1 ]; then plain; gated; else gated; plain; fi
    echo "round $r: plain $(med "$OUT/overhead-plain-$r.log") ms/iter (median iteration)," \
      "fikit-run exclusive (gate open) $(med "$OUT/overhead-$r/logs/exclusive-1-$j.log")," \
      "fikit-run fikit (gate, top job alone) $(med "$OUT/overhead-$r/logs/fikit-1-$j.log")" | tee -a "$OUT/overhead.txt"
  done
fi

for p in "${want[@]}"; do
  for e in "${PAIRS[@]}"; do IFS='|' read -r n h l <<<"$e"; [ "$n" = "$p" ] && break; done
  hp=$(ls "$OUT/profiles/$h"-*.parquet | head -1)
  lp=$(ls "$OUT/profiles/$l"-*.parquet | head -1)
  mkdir -p "$OUT/$p"
  # shellcheck disable=SC2046
  cat >"$OUT/$p/scenario.json" <<JSON
{
  "repetitions": $REPS,
  "jobs": [
    {"name": "$l", "priority": $(prio_of "$l"), "profile": "$lp", "command": $(json_cmd $(args_of "$l"))},
    {"name": "$h", "priority": $(prio_of "$h"), "profile": "$hp", "command": $(json_cmd $(args_of "$h"))}
  ]
}
JSON
  echo "== pair $p"
  limit=()
  if [ -n "$DEADLINE" ]; then
    left=$((DEADLINE - ($(date +%s) - T0)))
    if [ "$left" -le "$PAIR_MIN_S" ]; then echo "deadline: $p not run ($left s left)"; continue; fi
    limit=(timeout --signal=INT --kill-after=20 "$left")
  fi
  "${limit[@]}" "$BIN/fikit-run" scenario "$OUT/$p/scenario.json" --policy "$POLICIES" --round-timeout-s "$ROUND_TIMEOUT" -o "$OUT/$p" 2>&1 | tee "$OUT/$p/stderr.txt" || true
done
echo "== done $(date -u +%FT%TZ)"
