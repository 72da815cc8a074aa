#!/usr/bin/env bash
# The reading of call.sh's pairs, fixed before they run: each pair's table
# rebuilt off the device (no GPU) under the rule of a113430 and under the
# candidate, both with --host-speed-from-alone=region:
#   rule:      --pressure CHASE
#   candidate: --pressure CHASE --pressure-busiest GEMM
# and as profiled. Prints each variant's MPS rows; the tables go to OUT.
#
#   rebuild.sh FIKIT_RUN T CHASE GEMM OUT
#
# T: call.sh's folder as unpacked (t/: the scenarios *.json, prof/, run-*/);
# the scenarios' profile paths (the device's) are read as T/prof/<file>.
set -euo pipefail
RUN=${1:?usage: rebuild.sh FIKIT_RUN T CHASE GEMM OUT}
T=${2:?T}
CHASE=${3:?CHASE}
GEMM=${4:?GEMM}
OUT=${5:?OUT}
mkdir -p "$OUT"
for scen in "$T"/*.json; do
  pair=$(basename "$scen" .json)
  [ -f "$T/run-$pair/run.json" ] || { echo "$pair: no run.json, not run"; continue; }
  local_scen="$OUT/$pair.json"
  python3 - "$scen" "$T/prof" "$local_scen" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
for j in s["jobs"]:
    j["profile"] = os.path.join(os.path.abspath(sys.argv[2]), os.path.basename(j["profile"]))
json.dump(s, open(sys.argv[3], "w"))
PY
  for variant in as-profiled rule candidate; do
    case $variant in
      as-profiled) extra=() ;;
      rule) extra=(--pressure "$CHASE") ;;
      candidate) extra=(--pressure "$CHASE" --pressure-busiest "$GEMM") ;;
    esac
    echo "== $pair, $variant"
    "$RUN" "$local_scen" --report "$T/run-$pair/run.json" --host-speed-from-alone=region "${extra[@]}" \
      -o "$OUT/$variant-$pair" 2>/dev/null | grep " mps " | awk -F'┆' '{print $2 "|" $7 "|" $8 "|" $9}'
  done
done
