#!/usr/bin/env bash
# The sensitivity pass on a GPU machine: each job of a validation set profiled
# twice under MPS (a daemon of its own, in a private pipe folder), alone and
# beside calibrate's memory-streaming load holding SHARE of the block slots
# (`fikit-lab load`), so that every kernel key's stretch beside a load of
# known share can be read from the two traces
# (lab/analysis/sensitivity.py). The load starts before the job and
# stops after it; it runs in its own process, as an MPS partner does.
#
#   lab/validate/sensitivity.sh BIN_DIR SET OUT_DIR SHARE JOB [JOB ...]   (from the repository root)
#
# BIN_DIR holds fikit-lab, fikit-profile and libfikit_collector.so. KIND
# (environment): memory (default) or compute, the load's kind; LOAD_ARGS:
# more options of `fikit-lab load` (e.g. "--carveout 100"). Writes
# OUT_DIR/alone/JOB-PID.parquet, OUT_DIR/beside/JOB-PID.parquet,
# OUT_DIR/load-JOB.json (what the load held) and OUT_DIR/sensitivity.log.
set -uo pipefail
BIN=${1:?usage: sensitivity.sh BIN_DIR SET OUT_DIR SHARE JOB [JOB ...]}
SET=${2:?set file}
OUT=${3:?output folder}
SHARE=${4:?load share}
shift 4
[ $# -gt 0 ] || { echo "name at least one job of $SET" >&2; exit 2; }
mkdir -p "$OUT/alone" "$OUT/beside"
log="$OUT/sensitivity.log"
# shellcheck source=scripts/lib/mps-pass.sh
source scripts/lib/mps-pass.sh
private_mps "$OUT"
read -r -a load_args <<<"${LOAD_ARGS:-}"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) share $SHARE kind ${KIND:-memory} ${LOAD_ARGS:-}" | tee -a "$log"
failed=0
for job in "$@"; do
  job_command "$SET" "$job"
  [ ${#cmd[@]} -gt 0 ] || { echo "$job: not a job of $SET" | tee -a "$log"; failed=1; continue; }
  t0=$SECONDS
  "$BIN/fikit-profile" --name "$job" --single-run -q -o "$OUT/alone" -- "${cmd[@]}" >"$OUT/alone-$job.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=1
  echo "$job alone: exit $rc, $((SECONDS - t0)) s" | tee -a "$log"
  rm -f "$OUT/stop"
  "$BIN/fikit-lab" load --kind "${KIND:-memory}" --share "$SHARE" "${load_args[@]}" --seconds 300 --stop-file "$OUT/stop" --report "$OUT/load-$job.json" 2>>"$log" &
  load=$!
  # The load's context and first kernels are up well within this.
  sleep 3
  t0=$SECONDS
  "$BIN/fikit-profile" --name "$job" --single-run -q -o "$OUT/beside" -- "${cmd[@]}" >"$OUT/beside-$job.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=1
  touch "$OUT/stop"
  wait "$load"
  echo "$job beside the load: exit $rc, $((SECONDS - t0)) s; load exit $?" | tee -a "$log"
done
# Exit 1 when a job was not in the set or a run failed (each is in the log).
exit "$failed"
