#!/usr/bin/env bash
# Are fikit-run's runs alone slower than the characterization's untraced
# runs of the same command? (issue 47, lab log 2026-11-28: in the serving
# set of reports/serving/h200-2026-11-28-open, requests in the rounds' runs
# alone took 1.13-1.17x the median service time of the same command's
# untraced runs, for all four servers.) Design and rule fixed before it ran:
#
# One GPU, the server effs60 of lab/validate/serve-open.json (or SET's job
# JOB, environment: e.g. SET=lab/validate/oos-45c.json JOB=r101b1 for a
# closed-loop batch-1 job, its median iteration). PAIRS times:
#   A: fikit-profile --runs 1 --no-pressure (one traced run, then one
#      untraced: the characterization's untraced run);
#   B: fikit-run scenario with the job alone, --policy exclusive -r 1.
# r_k = workload.py's median service time (ms_per_iter_median) in B_k over
# that of A_k's untraced run. The rounds alone are slower when every r_k
# exceeds 1.05 and their median 1.08; else the set's gap is the sitting's
# drift (profiles first, rounds after), and nothing changes.
# The other way (issue 45, lab log 2026-11-29: a latency-critical job's
# characterization runs 1.03-1.21x its rounds alone on oos-45c): the
# untraced runs are slower when every r_k is under 0.95 and their median
# under 0.93.
#
#   lab/validate/alone-vs-untraced.sh BIN_ARCHIVE WORK [PAIRS]
# BIN_ARCHIVE: an xz tar of the binaries, or a folder holding them
# (lab/validate/build-bins.sh).
# Prints one line a run, then r_k; writes $OUT/alone-vs-untraced.txt.
set -u
ARCHIVE=${1:?usage: alone-vs-untraced.sh BIN_ARCHIVE WORK [PAIRS]}
WORK=${2:?work folder}
PAIRS=${3:-3}
OUTDIR=${OUT:-/tmp/alone-vs-untraced-out}
mkdir -p "$WORK/bin" "$OUTDIR"
# shellcheck source=lab/validate/lib/bins.sh
source "$(dirname "$0")/lib/bins.sh"
unpack_bins "$ARCHIVE" "$WORK/bin" || exit 2
SET=${SET:-lab/validate/serve-open.json}
JOB=${JOB:-effs60}
mapfile -t cmd < <(python3 -c "import json, sys; print('\n'.join(json.load(open(sys.argv[1]))['jobs'][sys.argv[2]]['command']))" "$SET" "$JOB" 2>/dev/null)
[ ${#cmd[@]} -gt 0 ] || { echo "alone-vs-untraced: $SET: no job $JOB" >&2; exit 2; }
service() { python3 -c "
import json, sys
v = [json.loads(l)['ms_per_iter_median'] for l in open(sys.argv[1]) if l.startswith('{\"model\"')]
print(v[int(sys.argv[2])])" "$1" "$2"; }
log="$OUTDIR/alone-vs-untraced.txt"
: > "$log"
for k in $(seq 1 "$PAIRS"); do
  "$WORK/bin/fikit-profile" -n "$JOB" -p 0 --runs 1 --no-pressure -o "$WORK/a$k" -- "${cmd[@]}" > "$WORK/a$k.log" 2>&1
  a=$(service "$WORK/a$k.log" 1)
  "$WORK/bin/fikit-run" scenario --job "$JOB:0=${cmd[*]}" --policy exclusive -r 1 -o "$WORK/b$k" > "$WORK/b$k.log" 2>&1
  b=$(service "$(ls "$WORK"/b$k/logs/*"$JOB"*.log | head -1)" 0)
  echo "pair $k: untraced (A) $a ms, fikit-run alone (B) $b ms, r $(python3 -c "print(round($b / $a, 3))")" | tee -a "$log"
done
