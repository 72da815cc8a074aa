#!/usr/bin/env bash
# The pressure pass with a victim shaped like the batch-1 jobs' own kernels
# (scripts/validate/gemm-victim.py: one ViT layer's matrix products, batch 1)
# instead of calibrate's pointer chase: each job of a set run under MPS (a
# daemon of its own) beside the victim, both profiled, as pressure.sh does.
# Read with scripts/analysis/gemm-pressure.py OUT_DIR/JOB ... (issue 15).
#
#   scripts/validate/gemm-pressure.sh BIN_DIR SET OUT_DIR JOB [JOB ...]   (from the repository root)
#
# BIN_DIR holds fikit-profile and libfikit_collector.so. Writes
# OUT_DIR/JOB/JOB-PID.parquet, OUT_DIR/JOB/victim-PID.parquet and
# OUT_DIR/pressure.log.
set -uo pipefail
BIN=${1:?usage: gemm-pressure.sh BIN_DIR SET OUT_DIR JOB [JOB ...]}
SET=${2:?set file}
OUT=${3:?output folder}
shift 3
[ $# -gt 0 ] || { echo "name at least one job of $SET" >&2; exit 2; }
mkdir -p "$OUT"
log="$OUT/pressure.log"
# shellcheck source=scripts/lib/mps-pass.sh
source scripts/lib/mps-pass.sh
private_mps "$OUT"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) victim gemm" | tee -a "$log"
failed=0
for job in "$@"; do
  job_command "$SET" "$job"
  [ ${#cmd[@]} -gt 0 ] || { echo "$job: not a job of $SET" | tee -a "$log"; failed=1; continue; }
  rm -f "$OUT/stop"
  "$BIN/fikit-profile" --name victim -q -o "$OUT/$job" -- python3 scripts/validate/gemm-victim.py --seconds 300 --stop-file "$OUT/stop" >"$OUT/victim-$job.log" 2>&1 &
  victim=$!
  # The victim's runs alone: torch's start-up takes a few seconds.
  sleep 8
  t0=$SECONDS
  "$BIN/fikit-profile" --name "$job" -q -o "$OUT/$job" -- "${cmd[@]}" >"$OUT/$job.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=1
  touch "$OUT/stop"
  wait "$victim"
  echo "$job beside the victim: exit $rc, $((SECONDS - t0)) s; victim exit $?" | tee -a "$log"
done
exit "$failed"
