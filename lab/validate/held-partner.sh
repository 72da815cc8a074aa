#!/usr/bin/env bash
# Does a partner held at the live FIKIT gate slow the top job's host? (issue
# 45, lab log 2026-11-30; design and rule there, fixed before it runs.)
# A launch-bound top job (resnet50 b1 eval) and a partner whose kernels
# never fit its gaps (resnet50 b128 eval), `fikit-run scenario --policy
# fikit -r REPS` (each repetition: both jobs alone, then together under
# FIKIT) with `--gate-nap-us` 0 and 50. Prints, per nap, the top job's
# launch call (ns a call, fikit-run's launch_call_ns / launch_calls) alone
# and beside the waiting partner, paired by repetition, and the partner's
# fills (none expected) and held waits.
#
#   lab/validate/held-partner.sh BIN_DIR OUT_DIR [REPS]   (from the repository root, on a GPU machine)
#
# NAPS (default "0 50") lists the naps to run. PIN=1 runs each nap's
# rounds, alone and together, with the top job on one physical core (both
# its hardware threads) and the partner on another (`taskset`, cores from
# `lscpu -p`), named `pin-N` in place of `nap-N`.
#
# BIN_DIR holds fikit-run, fikit-profile, libfikit_collector.so and
# libfikit_shim.so. Writes OUT_DIR/held-partner.txt; each nap's rounds in
# OUT_DIR/nap-N.
set -uo pipefail
# shellcheck source=lab/validate/lib/profile.sh
. "$(dirname "$0")/lib/profile.sh"
BIN=${1:?usage: held-partner.sh BIN_DIR OUT_DIR [REPS]}
OUT=${2:?output folder}
REPS=${3:-3}
TOP=$LAUNCH_BOUND_TOP
PARTNER="python3 scripts/workloads/workload.py --model resnet50 --batch 128 --mode eval --iters 200 --warmup 3"
mkdir -p "$OUT/profiles"
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" | tee -a "$OUT/held-partner.txt"
for spec in "top:high:$TOP" "partner:low:$PARTNER"; do
  name=${spec%%:*}; rest=${spec#*:}; prio=${rest%%:*}; cmd=${rest#*:}
  [ -f "$OUT/profiles/$name.parquet" ] && continue
  if ! profile_once "$BIN" "$name" "$prio" "$OUT/profiles/$name.parquet" "$OUT/$name-profile.log" "$cmd"; then
    echo "$name: profiling did not give one trace (see $OUT/$name-profile.log)" | tee -a "$OUT/held-partner.txt"
    exit 1
  fi
done
lscpu -p=CPU,CORE 2>/dev/null | grep -v '^#' >"$OUT/cpus.txt"
cpus_of() { awk -F, -v c="$1" '$2 == c { printf "%s%s", s, $1; s = "," }' "$OUT/cpus.txt"; }
TOP_RUN=$TOP PARTNER_RUN=$PARTNER TAG=nap
if [ "${PIN:-0}" = 1 ]; then
  cores=$(cut -d, -f2 "$OUT/cpus.txt" | sort -un)
  tc=$(cpus_of "$(echo "$cores" | sed -n 2p)") pc=$(cpus_of "$(echo "$cores" | tail -1)")
  TOP_RUN="taskset -c $tc $TOP" PARTNER_RUN="taskset -c $pc $PARTNER" TAG=pin
  echo "pinned: top on CPUs $tc, partner on CPUs $pc ($(wc -l <"$OUT/cpus.txt") CPUs, $(echo "$cores" | wc -l) cores)" | tee -a "$OUT/held-partner.txt"
fi
for nap in ${NAPS:-0 50}; do
  "$BIN/fikit-run" scenario --job "top:0:$OUT/profiles/top.parquet=$TOP_RUN" \
    --job "partner:9:$OUT/profiles/partner.parquet=$PARTNER_RUN" --policy fikit -r "$REPS" \
    --gate-nap-us "$nap" -o "$OUT/$TAG-$nap" >"$OUT/$TAG-$nap.log" 2>&1
  python3 - "$OUT/$TAG-$nap/run.json" "$TAG $nap" <<'PY' | tee -a "$OUT/held-partner.txt"
import json, statistics, sys
r = json.load(open(sys.argv[1]))
call = {}
for x in r["rounds"]:
    for j in x["jobs"]:
        if j.get("launch_calls"):
            call.setdefault((x["policy"], j["job"]), {})[x["repetition"]] = (j["launch_call_ns"] / j["launch_calls"], j)
alone, beside = call.get(("exclusive", "top"), {}), call.get(("fikit", "top"), {})
pairs = [beside[k][0] / alone[k][0] for k in beside if k in alone]
region = lambda j: j["end_ns"] - j["first_launch_ns"]
regions = [region(beside[k][1]) / region(alone[k][1]) for k in beside if k in alone]
part = [j for (p, n), reps in call.items() if p == "fikit" and n == "partner" for _, j in reps.values()]
print(f"{sys.argv[2]} us: top's launch call alone {statistics.median(v[0] for v in alone.values()):.0f} ns, "
      f"beside the held partner {statistics.median(v[0] for v in beside.values()):.0f} ns; "
      f"ratio by repetition {' '.join(f'{x:.3f}' for x in pairs)} (median {statistics.median(pairs):.3f}); "
      f"region ratio {' '.join(f'{x:.3f}' for x in regions)} (median {statistics.median(regions):.3f}); "
      f"partner fills {[j.get('fills') for j in part]}, waits {[j.get('waits') for j in part]}")
PY
done
