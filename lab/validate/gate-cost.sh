#!/usr/bin/env bash
# The gate's own cost on a job alone, on a GPU machine: ROUNDS paired rounds of
# the job's plain command and the same command under
# `fikit-run scenario --policy fikit` (the job is the top job; every launch
# passes the gate, which counts, stamps synchronizations and reads the control
# block), alternating which goes first. The figure is the median timed
# iteration the workload prints (scripts/workloads/workload.py), robust to the
# host's occasional stalls; the ratio is gated over plain per round. A
# launch-bound job's host speed differs between processes (and inside one) by
# more than the gate costs, so each job then also runs ROUNDS rounds of
# `fikit-lab gate-ab --phase-ms AB_MS`: the gate off and on in alternate
# phases of one process, its command given AB_ITERS timed iterations
# (appended as `--iters`, which workload.py and launch_probe.py take), each on
# phase against its two off neighbours (lab/README.md).
#
#   [AB_MS=250] [AB_ITERS=3000] [PAIRED=ROUNDS] [AB_REPS=ROUNDS] \
#     lab/validate/gate-cost.sh BIN_DIR SET PROFILE_DIR OUT_DIR ROUNDS JOB...
#
# PAIRED and AB_REPS set the paired rounds and the A/B's repetitions apart
# (0 leaves that part out), e.g. to set two builds' A/B side by side. With
# AB_FLOOR=1 each job also runs AB_REPS rounds of the A/B's floor
# (`fikit-lab gate-ab --floor`: CUPTI's dispatch to a near-empty handler, the
# part of the cost that no change to the gate's own work can remove).
# LAUNCH_HOOK (auto, the default, cupti or preload) is passed to every
# fikit-run and fikit-lab call as `--launch-hook`: with preload, or auto where
# BIN_DIR holds libfikit_shim.so, the gate sees launches through the shim.
#
# BIN_DIR holds fikit-run, fikit-lab and libfikit_collector.so (or NAME.gz);
# SET is the validation set whose jobs' commands run
# (lab/validate/real-set.json); a JOB of the form NAME=COMMAND runs COMMAND
# instead (e.g. 'probe=python3 scripts/workloads/launch_probe.py').
# PROFILE_DIR holds NAME.parquet for each job; a job without one is profiled
# there first with BIN_DIR's fikit-profile. Writes OUT_DIR/gate-cost.txt.
set -uo pipefail
# shellcheck source=lab/validate/lib/profile.sh
. "$(dirname "$0")/lib/profile.sh"
BIN=${1:?usage: gate-cost.sh BIN_DIR SET PROFILE_DIR OUT_DIR ROUNDS JOB...}
SET=${2:?set}
PROF=${3:?profile folder}
OUT=${4:?output folder}
ROUNDS=${5:?rounds}
AB_MS=${AB_MS:-250}
AB_ITERS=${AB_ITERS:-3000}
PAIRED=${PAIRED:-$ROUNDS}
AB_FLOOR=${AB_FLOOR:-0}
HOOK=(--launch-hook "${LAUNCH_HOOK:-auto}")
AB_REPS=${AB_REPS:-$ROUNDS}
shift 5
for f in fikit-run fikit-lab fikit-profile libfikit_collector.so libfikit_shim.so; do
  if [ ! -f "$BIN/$f" ] && [ -f "$BIN/$f.gz" ]; then gunzip -c "$BIN/$f.gz" >"$BIN/$f"; fi
done
chmod +x "$BIN/fikit-run" "$BIN/fikit-lab" "$BIN/fikit-profile" 2>/dev/null
mkdir -p "$OUT" "$PROF"
cmd_of() { python3 -c 'import json,sys,shlex; print(shlex.join(json.load(open(sys.argv[1]))["jobs"][sys.argv[2]]["command"]))' "$SET" "$1"; }
med() { tail -1 "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ms_per_iter_median"])' 2>/dev/null || echo nan; }
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" | tee -a "$OUT/gate-cost.txt"
for spec in "$@"; do
  j=${spec%%=*}
  if [ "$spec" != "$j" ]; then cmd=${spec#*=}; else cmd=$(cmd_of "$j"); fi
  if [ ! -f "$PROF/$j.parquet" ] && ! profile_once "$BIN" "$j" high "$PROF/$j.parquet" "$OUT/$j-profile.log" "$cmd"; then
    echo "$j: profiling did not give one trace (see $OUT/$j-profile.log); skipped" | tee -a "$OUT/gate-cost.txt"
    continue
  fi
  for r in $(seq 1 "$PAIRED"); do
    plain() { bash -c "$cmd" >"$OUT/$j-plain-$r.log" 2>&1; }
    gated() {
      "$BIN/fikit-run" scenario "${HOOK[@]}" --job "$j:0:$PROF/$j.parquet=$cmd" --policy fikit -r 1 -o "$OUT/$j-gated-$r" >/dev/null 2>&1
    }
    if [ $((r % 2)) -eq 1 ]; then plain; gated; else gated; plain; fi
    p=$(med "$OUT/$j-plain-$r.log")
    g=$(med "$OUT/$j-gated-$r/logs/fikit-1-$j.log")
    e=$(med "$OUT/$j-gated-$r/logs/exclusive-1-$j.log")
    echo "$j round $r: median iteration plain $p ms, under fikit-run fikit $g ms (ratio $(python3 -c "print(f'{$g/$p:.3f}')" 2>/dev/null)), fikit-run exclusive (gate open) $e ms (ratio $(python3 -c "print(f'{$e/$p:.3f}')" 2>/dev/null))" | tee -a "$OUT/gate-cost.txt"
  done
  [ "$AB_REPS" -gt 0 ] || continue
  "$BIN/fikit-lab" gate-ab "${HOOK[@]}" --job "$j:0:$PROF/$j.parquet=$cmd --iters $AB_ITERS" --policy fikit -r "$AB_REPS" \
    --phase-ms "$AB_MS" -o "$OUT/$j-ab" 2>"$OUT/$j-ab.log" | grep '^gate A/B' | tee -a "$OUT/gate-cost.txt"
  [ "$AB_FLOOR" = 1 ] || continue
  "$BIN/fikit-lab" gate-ab "${HOOK[@]}" --job "$j:0:$PROF/$j.parquet=$cmd --iters $AB_ITERS" --policy fikit -r "$AB_REPS" \
    --phase-ms "$AB_MS" --floor -o "$OUT/$j-floor" 2>"$OUT/$j-floor.log" | grep '^gate A/B' | sed 's/^gate A\/B/gate A\/B floor/' | tee -a "$OUT/gate-cost.txt"
done
