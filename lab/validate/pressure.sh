#!/usr/bin/env bash
# The pressure pass on a GPU machine: each job of a validation set run under
# MPS (a daemon of its own, in a private pipe folder) beside calibrate's
# latency-bound victim (`fikit-lab load --victim`, a pointer chase run back to
# back), both profiled, so that how much the job's kernels stretch the victim
# can be read from the two traces (`fikit-lab pressure OUT_DIR/JOB ...`). The victim
# starts seconds before the job (its runs alone) and stops after it.
#
#   lab/validate/pressure.sh BIN_DIR SET OUT_DIR JOB [JOB ...]   (from the repository root)
#
# BIN_DIR holds fikit-lab, fikit-profile and libfikit_collector.so. KIND
# (environment): memory (default: the pointer chase), compute (dependent
# FMAs) or gemm (lab/validate/gemm-victim.py: one ViT layer's matrix
# products at batch 1, the shape of the batch-1 jobs' own kernels), the
# victim's kind; PASSES (environment): the victim's passes per run
# (fikit-lab load --victim-passes; default calibrate's, about 0.45 ms a run). Writes
# OUT_DIR/JOB/JOB-PID.parquet and OUT_DIR/JOB/victim-PID.parquet, and
# OUT_DIR/pressure.log (each run's exit and time, and the job's last output
# line that is a JSON object: workload.py's summary).
set -uo pipefail
BIN=${1:?usage: pressure.sh BIN_DIR SET OUT_DIR JOB [JOB ...]}
SET=${2:?set file}
OUT=${3:?output folder}
shift 3
[ $# -gt 0 ] || { echo "name at least one job of $SET" >&2; exit 2; }
mkdir -p "$OUT"
log="$OUT/pressure.log"
# shellcheck source=scripts/lib/mps-pass.sh
source scripts/lib/mps-pass.sh
private_mps "$OUT"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) victim ${KIND:-memory}" | tee -a "$log"
# The victim, the same for every job. Its runs alone come first: its context
# is up within a second or two (torch's, for the gemm victim, within about
# five).
if [ "${KIND:-memory}" = gemm ]; then
  victim_cmd=(python3 lab/validate/gemm-victim.py) warm=8
else
  victim_cmd=("$BIN/fikit-lab" load --victim --kind "${KIND:-memory}" ${PASSES:+--victim-passes "$PASSES"}) warm=4
fi
failed=0
for job in "$@"; do
  job_command "$SET" "$job"
  [ ${#cmd[@]} -gt 0 ] || { echo "$job: not a job of $SET" | tee -a "$log"; failed=1; continue; }
  rm -f "$OUT/stop"
  "$BIN/fikit-profile" --name victim --single-run -q -o "$OUT/$job" -- "${victim_cmd[@]}" --seconds 300 --stop-file "$OUT/stop" >"$OUT/victim-$job.log" 2>&1 &
  victim=$!
  sleep "$warm"
  t0=$SECONDS
  "$BIN/fikit-profile" --name "$job" --single-run -q -o "$OUT/$job" -- "${cmd[@]}" >"$OUT/$job.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=1
  touch "$OUT/stop"
  wait "$victim"
  echo "$job beside the victim: exit $rc, $((SECONDS - t0)) s; victim exit $?" | tee -a "$log"
  # The job's own summary beside the victim (workload.py's last line, a JSON
  # object with its median iteration), to set beside its runs alone.
  grep -h '^{' "$OUT/$job.log" | tail -n 1 | sed "s/^/$job: /" | tee -a "$log"
done
# Exit 1 when a job was not in the set or a run failed (each is in the log).
exit "$failed"
