#!/usr/bin/env bash
# Does a second CUDA process slow a launch-bound job's host when it is not
# a partner waiting at the gate? (issue 45, lab log 2026-11-30; designs and
# rules there, fixed before each runs.) Beside a partner held at the live
# FIKIT gate the top job ran 1.16x its time alone whether the partner
# yielded, slept or ran on another core (`held-partner.sh`). Here the
# neighbour is `idle_context.py` (one kernel, then NEIGHBOUR for 10 s, past
# the top's region): `sleep` (nothing), `spin` (one CPU core busy, no CUDA
# call) or `held` (50 ms GPU sleep kernels, which under FIKIT wait at the
# gate through the top's region: a held partner with no model behind it).
# `fikit-run scenario --policy exclusive,timeslice,fikit -r REPS`
# (`held`: exclusive,fikit; under time slicing its kernels would share the
# GPU). Prints, per policy, the top job's region, median iteration and
# launch call beside the neighbour against alone, paired by repetition.
#
#   [NEIGHBOUR=sleep|spin|held] lab/validate/idle-context.sh BIN_DIR OUT_DIR [REPS]
#
# (from the repository root, on a GPU machine). BIN_DIR holds fikit-run,
# fikit-profile, libfikit_collector.so and libfikit_shim.so. Appends to
# OUT_DIR/idle-context.txt; the rounds in OUT_DIR/NEIGHBOUR.
set -uo pipefail
# shellcheck source=lab/validate/lib/profile.sh
. "$(dirname "$0")/lib/profile.sh"
BIN=${1:?usage: idle-context.sh BIN_DIR OUT_DIR [REPS]}
OUT=${2:?output folder}
REPS=${3:-3}
TOP=$LAUNCH_BOUND_TOP
NEIGHBOUR=${NEIGHBOUR:-sleep}
case $NEIGHBOUR in
sleep | spin) POLICIES=exclusive,timeslice,fikit ;;
held) POLICIES=exclusive,fikit ;;
*) echo "idle-context.sh: NEIGHBOUR=$NEIGHBOUR: expected sleep, spin or held" >&2; exit 2 ;;
esac
IDLE="python3 lab/validate/idle_context.py 10 $NEIGHBOUR"
mkdir -p "$OUT/profiles"
export FIKIT_COLLECTOR="$BIN/libfikit_collector.so"
echo "== $(date -u +%FT%TZ) NEIGHBOUR=$NEIGHBOUR $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" | tee -a "$OUT/idle-context.txt"
if [ ! -f "$OUT/profiles/top.parquet" ] &&
  ! profile_once "$BIN" top high "$OUT/profiles/top.parquet" "$OUT/top-profile.log" "$TOP"; then
  echo "top: profiling did not give one trace (see $OUT/top-profile.log)" | tee -a "$OUT/idle-context.txt"
  exit 1
fi
# fikit-run's FIKIT needs every job's profile, the idle one's too.
if [ ! -f "$OUT/profiles/$NEIGHBOUR.parquet" ] &&
  ! profile_once "$BIN" idle low "$OUT/profiles/$NEIGHBOUR.parquet" "$OUT/$NEIGHBOUR-profile.log" "$IDLE"; then
  echo "$NEIGHBOUR: profiling did not give one trace (see $OUT/$NEIGHBOUR-profile.log)" | tee -a "$OUT/idle-context.txt"
  exit 1
fi
"$BIN/fikit-run" scenario --job "top:0:$OUT/profiles/top.parquet=$TOP" \
  --job "idle:9:$OUT/profiles/$NEIGHBOUR.parquet=$IDLE" \
  --policy "$POLICIES" -r "$REPS" -o "$OUT/$NEIGHBOUR" >"$OUT/$NEIGHBOUR.log" 2>&1
python3 - "$OUT/$NEIGHBOUR/run.json" "$NEIGHBOUR" <<'PY' | tee -a "$OUT/idle-context.txt"
import json, statistics, sys
r, name = json.load(open(sys.argv[1])), sys.argv[2]
top, nb = {}, {}
for x in r["rounds"]:
    for j in x["jobs"]:
        key = (x["policy"], x["repetition"])
        if j["job"] == "top" and j.get("launch_calls") and j.get("end_ns"):
            top[key] = j
        elif j["job"] == "idle":
            nb[key] = j
alone = {k[1]: j for k, j in top.items() if k[0] == "exclusive"}
region = lambda j: j["end_ns"] - j["first_launch_ns"]
# The median iteration after the first ten: slow phases of a few hundred
# iterations, which come alone too, move it little.
iteration = lambda j: statistics.median(j["iterations_ns"][10:])
call = lambda j: j["launch_call_ns"] / j["launch_calls"]
show = lambda xs: f"{' '.join(f'{x:.3f}' for x in xs)} (median {statistics.median(xs):.3f})"
for policy in ("timeslice", "fikit"):
    reps = sorted(k[1] for k in top if k[0] == policy and k[1] in alone)
    if not reps:
        continue
    ratio = lambda f: [f(top[(policy, k)]) / f(alone[k]) for k in reps]
    held = [nb[(policy, k)].get("wait_ns", 0) / 1e9 for k in reps if (policy, k) in nb]
    print(f"{name}, {policy}: the top beside the neighbour over alone, by repetition: "
          f"region {show(ratio(region))}; median iteration {show(ratio(iteration))}; "
          f"launch call {show(ratio(call))}; the neighbour waited at the gate "
          f"{' '.join(f'{x:.1f}' for x in held)} s")
PY
