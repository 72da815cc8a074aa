#!/usr/bin/env bash
# Does a second CUDA process that does nothing slow a launch-bound job's
# host? (issue 45, lab log 2026-11-30; design and rule there, fixed before
# it runs.) Beside a partner held at the live FIKIT gate the top job ran
# 1.16x its time alone whether the partner yielded, slept or ran on another
# core (`held-partner.sh`); here the partner holds a context and sleeps
# (`idle_context.py`: one kernel, then 10 s asleep, past the top's
# region), under time slicing and under FIKIT, `fikit-run scenario
# --policy exclusive,timeslice,fikit -r REPS`. Prints, per policy, the top job's region and launch call beside the
# idle process against alone, paired by repetition.
#
#   lab/validate/idle-context.sh BIN_DIR OUT_DIR [REPS]   (from the repository root, on a GPU machine)
#
# BIN_DIR holds fikit-run, fikit-profile, libfikit_collector.so and
# libfikit_shim.so. Writes OUT_DIR/idle-context.txt; the rounds in
# OUT_DIR/idle.
set -uo pipefail
# shellcheck source=lab/validate/lib/profile.sh
. "$(dirname "$0")/lib/profile.sh"
BIN=${1:?usage: idle-context.sh BIN_DIR OUT_DIR [REPS]}
OUT=${2:?output folder}
REPS=${3:-3}
TOP=$LAUNCH_BOUND_TOP
IDLE="python3 lab/validate/idle_context.py 10"
mkdir -p "$OUT/profiles"
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" | tee -a "$OUT/idle-context.txt"
if [ ! -f "$OUT/profiles/top.parquet" ] &&
  ! profile_once "$BIN" top high "$OUT/profiles/top.parquet" "$OUT/top-profile.log" "$TOP"; then
  echo "top: profiling did not give one trace (see $OUT/top-profile.log)" | tee -a "$OUT/idle-context.txt"
  exit 1
fi
# fikit-run's FIKIT needs every job's profile, the idle one's too.
if [ ! -f "$OUT/profiles/idle.parquet" ] &&
  ! profile_once "$BIN" idle low "$OUT/profiles/idle.parquet" "$OUT/idle-profile.log" "$IDLE"; then
  echo "idle: profiling did not give one trace (see $OUT/idle-profile.log)" | tee -a "$OUT/idle-context.txt"
  exit 1
fi
"$BIN/fikit-run" scenario --job "top:0:$OUT/profiles/top.parquet=$TOP" \
  --job "idle:9:$OUT/profiles/idle.parquet=$IDLE" \
  --policy exclusive,timeslice,fikit -r "$REPS" -o "$OUT/idle" >"$OUT/idle.log" 2>&1
python3 - "$OUT/idle/run.json" <<'PY' | tee -a "$OUT/idle-context.txt"
import json, statistics, sys
r = json.load(open(sys.argv[1]))
top = {}
for x in r["rounds"]:
    for j in x["jobs"]:
        if j["job"] == "top" and j.get("launch_calls") and j.get("end_ns"):
            top[(x["policy"], x["repetition"])] = j
alone = {k[1]: j for k, j in top.items() if k[0] == "exclusive"}
region = lambda j: j["end_ns"] - j["first_launch_ns"]
call = lambda j: j["launch_call_ns"] / j["launch_calls"]
for policy in ("timeslice", "fikit"):
    reps = sorted(k[1] for k in top if k[0] == policy and k[1] in alone)
    if not reps:
        print(f"{policy}: no repetition with the top job alone and beside the idle process")
        continue
    reg = [region(top[(policy, k)]) / region(alone[k]) for k in reps]
    cal = [call(top[(policy, k)]) / call(alone[k]) for k in reps]
    print(f"{policy}: top's region beside the idle process over alone, by repetition "
          f"{' '.join(f'{x:.3f}' for x in reg)} (median {statistics.median(reg):.3f}); "
          f"launch call {' '.join(f'{x:.3f}' for x in cal)} (median {statistics.median(cal):.3f})")
PY
