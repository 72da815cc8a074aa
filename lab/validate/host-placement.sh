#!/usr/bin/env bash
# Whether a launch-bound job's slow host under MPS comes with where its
# thread runs (issue 15: mobb1's "two host speeds", the validation log of
# 2026-11-26). First the machine's CPU map (cpu-map.py: a CPU slowed by a
# spinner on another shares a core with it). Then, ROUNDS times in turn, the
# job:
#   alone      - by itself, unpinned;
#   mps        - under MPS beside PARTNER, both unpinned (as the set runs them);
#   mps-apart  - the same, the job on CPUs 0-7 and PARTNER on 8-15;
#   mps-nap    - as mps, PARTNER with CUDA's blocking synchronization
#                (blocking-sync.py: its host thread sleeps while it waits on
#                the GPU instead of spinning a CPU);
#   spin       - by itself, not an MPS client, beside a Python busy loop on
#                one CPU (no GPU).
# PARTNER (or the loop) starts first with ITERS iterations (long enough to
# outlast the job's model load and loop) and is stopped once the job exits.
# Every run's busy threads are sampled (busy-threads.py: which CPU each runs
# on).
#
#   lab/validate/host-placement.sh SET JOB PARTNER OUT_DIR   (from the repository root)
#
# ROUNDS (environment, default 3), CONDITIONS (default "alone mps
# mps-apart": the conditions of a round, in turn), ITERS (default 1200), LEAD
# (seconds the partner runs before the job starts, default 10), DEADLINE
# (seconds: no round starts after it; default none), CPU_MAP (0: skip the
# map). Writes OUT_DIR/placement.log: per run, the condition, the job's
# summary line (workload.py's JSON, its median iteration) and the busy
# threads' CPUs; OUT_DIR/cpu-map.txt.
set -uo pipefail
SET=${1:?usage: host-placement.sh SET JOB PARTNER OUT_DIR}
JOB=${2:?job}
PARTNER=${3:?partner}
OUT=${4:?output folder}
ROUNDS=${ROUNDS:-3}
CONDITIONS=${CONDITIONS:-alone mps mps-apart}
ITERS=${ITERS:-1200}
LEAD=${LEAD:-10}
DEADLINE=${DEADLINE:-}
SECONDS=0
for c in $CONDITIONS; do
  case $c in alone | mps | mps-apart | mps-nap | spin) ;; *) echo "CONDITIONS: unknown condition $c (alone, mps, mps-apart, mps-nap, spin)" >&2; exit 2 ;; esac
done
mkdir -p "$OUT"
log="$OUT/placement.log"
if [ "${CPU_MAP:-1}" != 0 ]; then
  python3 lab/validate/cpu-map.py --subjects 0,1,2,3,8,9 >"$OUT/cpu-map.txt" 2>&1
  tail -n 8 "$OUT/cpu-map.txt"
fi
# shellcheck source=scripts/lib/mps-pass.sh
source scripts/lib/mps-pass.sh
job_command "$SET" "$JOB"
job_cmd=("${cmd[@]}")
job_command "$SET" "$PARTNER"
partner_cmd=("${cmd[@]}" --iters "$ITERS")
[ ${#job_cmd[@]} -gt 0 ] && [ ${#partner_cmd[@]} -gt 2 ] || { echo "$JOB or $PARTNER: not a job of $SET" >&2; exit 2; }
# The partner with blocking synchronization: its interpreter runs the wrapper first.
nap_cmd=("${partner_cmd[0]}" lab/validate/blocking-sync.py "${partner_cmd[@]:1}")
spin_cmd=(python3 -c 'import time
end = time.time() + 3600
while time.time() < end:
    pass')
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) $JOB beside $PARTNER" | tee -a "$log"

# run COND: one run of the job in condition COND.
run() {
  local cond=$1 jpin=() ppin=() partner= pcmd=("${partner_cmd[@]}")
  # Alone and beside the loop: not an MPS client (the daemon's pipe folder is private).
  case $cond in alone | spin) jpin=(env -u CUDA_MPS_PIPE_DIRECTORY -u CUDA_MPS_LOG_DIRECTORY) ;; esac
  if [ "$cond" = mps-apart ]; then jpin=(taskset -c 0-7); ppin=(taskset -c 8-15); fi
  [ "$cond" = mps-nap ] && pcmd=("${nap_cmd[@]}")
  [ "$cond" = spin ] && pcmd=("${spin_cmd[@]}")
  if [ "$cond" != alone ]; then
    "${ppin[@]}" "${pcmd[@]}" >"$OUT/partner.out" 2>&1 &
    partner=$!
    sleep "$LEAD"
  fi
  "${jpin[@]}" "${job_cmd[@]}" >"$OUT/job.out" 2>&1 &
  local job=$!
  local procs=("job=$job")
  [ -n "$partner" ] && procs+=("partner=$partner")
  python3 lab/validate/busy-threads.py "${procs[@]}" >"$OUT/threads.out" 2>&1 &
  local sampler=$!
  wait "$job"
  local rc=$?
  [ -n "$partner" ] && { kill "$partner" 2>/dev/null; wait "$partner" 2>/dev/null; }
  wait "$sampler"
  echo "$cond job exit $rc: $(grep -h '^{' "$OUT/job.out" | tail -n 1)" | tee -a "$log"
  echo "$cond threads: $(cat "$OUT/threads.out")" | tee -a "$log"
  [ "$cond" = mps-nap ] && echo "$cond partner: $(grep -h '^blocking-sync.py' "$OUT/partner.out" | tail -n 1)" | tee -a "$log"
  return 0
}

private_mps "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  if [ -n "$DEADLINE" ] && [ "$SECONDS" -ge "$DEADLINE" ]; then
    echo "== deadline: stopped before round $r after ${SECONDS}s" | tee -a "$log"
    break
  fi
  echo "== round $r" | tee -a "$log"
  for c in $CONDITIONS; do run "$c"; done
done
