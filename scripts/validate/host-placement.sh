#!/usr/bin/env bash
# Whether a launch-bound job's slow host under MPS comes with where its
# thread runs (issue 15: mobb1's "two host speeds", the validation log of
# 2026-11-26). First the machine's CPU map (cpu-map.py: a CPU slowed by a
# spinner on another shares a core with it). Then, ROUNDS times in turn, the
# job:
#   alone      - by itself, unpinned;
#   mps        - under MPS beside PARTNER, both unpinned (as the set runs them);
#   mps-apart  - the same, the job on CPUs 0-7 and PARTNER on 8-15.
# PARTNER starts first with ITERS iterations (long enough to outlast the
# job's model load and loop) and is stopped once the job exits. Every run's
# busy threads are sampled (busy-threads.py: which CPU each runs on).
#
#   scripts/validate/host-placement.sh SET JOB PARTNER OUT_DIR   (from the repository root)
#
# ROUNDS (environment, default 3), ITERS (default 1200), LEAD (seconds the
# partner runs before the job starts, default 10). Writes OUT_DIR/placement.log:
# per run, the condition, the job's summary line (workload.py's JSON, its
# median iteration) and the busy threads' CPUs; OUT_DIR/cpu-map.txt.
set -uo pipefail
SET=${1:?usage: host-placement.sh SET JOB PARTNER OUT_DIR}
JOB=${2:?job}
PARTNER=${3:?partner}
OUT=${4:?output folder}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-1200}
LEAD=${LEAD:-10}
mkdir -p "$OUT"
log="$OUT/placement.log"
python3 scripts/validate/cpu-map.py --subjects 0,1,2,3,8,9 >"$OUT/cpu-map.txt" 2>&1
tail -n 8 "$OUT/cpu-map.txt"
# shellcheck source=scripts/lib/mps-pass.sh
source scripts/lib/mps-pass.sh
job_command "$SET" "$JOB"
job_cmd=("${cmd[@]}")
job_command "$SET" "$PARTNER"
partner_cmd=("${cmd[@]}" --iters "$ITERS")
[ ${#job_cmd[@]} -gt 0 ] && [ ${#partner_cmd[@]} -gt 2 ] || { echo "$JOB or $PARTNER: not a job of $SET" >&2; exit 2; }
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $JOB beside $PARTNER" | tee -a "$log"

# run COND: one run of the job in condition COND.
run() {
  local cond=$1 jpin=() ppin=() partner=
  # Alone: not an MPS client (the daemon's pipe folder is private).
  [ "$cond" = alone ] && jpin=(env -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY)
  if [ "$cond" = mps-apart ]; then jpin=(taskset -c 0-7); ppin=(taskset -c 8-15); fi
  if [ "$cond" != alone ]; then
    "${ppin[@]}" "${partner_cmd[@]}" >"$OUT/partner.out" 2>&1 &
    partner=$!
    sleep "$LEAD"
  fi
  "${jpin[@]}" "${job_cmd[@]}" >"$OUT/job.out" 2>&1 &
  local job=$!
  local procs=("job=$job")
  [ -n "$partner" ] && procs+=("partner=$partner")
  python3 scripts/validate/busy-threads.py "${procs[@]}" >"$OUT/threads.out" 2>&1 &
  local sampler=$!
  wait "$job"
  local rc=$?
  [ -n "$partner" ] && { kill "$partner" 2>/dev/null; wait "$partner" 2>/dev/null; }
  wait "$sampler"
  echo "$cond job exit $rc: $(grep -h '^{' "$OUT/job.out" | tail -n 1)" | tee -a "$log"
  echo "$cond threads: $(cat "$OUT/threads.out")" | tee -a "$log"
}

private_mps "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  echo "== round $r" | tee -a "$log"
  run alone
  run mps
  run mps-apart
done
