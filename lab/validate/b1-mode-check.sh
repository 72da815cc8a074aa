#!/usr/bin/env bash
# Why is a launch-bound batch-1 job bimodal alone? Runs resnet50 batch 1 alone,
# no fikit, ROUNDS times under each condition in rotating order (CONDS, default
# "plain seed0 nothp"):
#   plain   as the pairs script runs it
#   spin    beside a CPU-only busy loop (what a partner waiting at the gate
#           does; 2026-11-25: no effect on the mode)
#   pinned  taskset to the CPUs of the GPU's NUMA node (CPUs 2-5 where the
#           host shows no NUMA node for the GPU; 2026-11-25: no effect)
#   seed0   PYTHONHASHSEED=0 (every process hashes alike)
#   nothp   transparent huge pages off for the process (prctl PR_SET_THP_DISABLE)
# and prints per run the median iteration (ms), the CPUs the main thread was
# seen on (sampled every 0.2 s), their NUMA nodes, the most anonymous huge
# pages the process held, and the GPU's SM clock (sampled every 200 ms by one
# nvidia-smi: median and lowest of the last 3 s, the timed loop). The job is
# launch-bound (resnet50 batch 1: the GPU busy 4% of its span), so its mode is
# the host's speed.
#
#   lab/validate/b1-mode-check.sh OUT_DIR
#
# Environment: ROUNDS (3), ITERS (400).
set -euo pipefail
OUT=${1:?usage: b1-mode-check.sh OUT_DIR}
mkdir -p "$OUT"
W="$(cd "$(dirname "$0")/../../scripts/workloads" && pwd)/workload.py"
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-400}

bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
gpu_node=$(cat "/sys/bus/pci/devices/$bus/numa_node" 2>/dev/null || echo -1)
node_cpus=$(cat "/sys/devices/system/node/node${gpu_node}/cpulist" 2>/dev/null || echo "2-5")
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); GPU $bus NUMA node $gpu_node (CPUs ${node_cpus:-?}); $(nproc) CPUs"
node_of() { for d in /sys/devices/system/cpu/cpu"$1"/node*; do basename "$d"; done 2>/dev/null | sed 's/node//' | head -1; }

run_one() { # cond round
  local cond=$1 r=$2 pre=() spinner=""
  case $cond in
    spin) python3 -c 'while True: pass' & spinner=$! ;;
    pinned) [ -n "$node_cpus" ] && pre=(taskset -c "$node_cpus") ;;
    seed0) pre=(env PYTHONHASHSEED=0) ;;
    nothp) pre=(python3 -c 'import ctypes, os, sys
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE, inherited across exec
os.execvp(sys.argv[1], sys.argv[1:])') ;;
  esac
  "${pre[@]}" python3 "$W" --model resnet50 --batch 1 --mode eval --iters "$ITERS" --warmup 10 \
    >"$OUT/$cond-$r.log" 2>&1 &
  local pid=$! seen=() huge=0
  nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -lms 200 >"$OUT/$cond-$r.clk" 2>/dev/null &
  local smi=$!
  while kill -0 "$pid" 2>/dev/null; do
    c=$(ps -o psr= -p "$pid" 2>/dev/null | tr -d ' ') && [ -n "$c" ] && seen+=("$c")
    h=$(awk '/AnonHugePages/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true)
    [ -n "$h" ] && [ "$h" -gt "$huge" ] && huge=$h
    sleep 0.2
  done
  wait "$pid" || true
  kill "$smi" 2>/dev/null || true
  wait "$smi" 2>/dev/null || true
  if [ -n "$spinner" ]; then
    kill "$spinner" 2>/dev/null || true
    wait "$spinner" 2>/dev/null || true
  fi
  local cpus nodes med
  cpus=$(printf '%s\n' "${seen[@]}" | sort -n | uniq -c | sort -rn | head -3 | awk '{printf "%s(%s) ", $2, $1}')
  nodes=$(for c in $(printf '%s\n' "${seen[@]}" | sort -u); do node_of "$c"; done | sort -u | tr '\n' ' ')
  med=$(tail -1 "$OUT/$cond-$r.log" | python3 -c 'import json,sys; print("%.2f" % json.load(sys.stdin)["ms_per_iter_median"])' 2>/dev/null || echo "?")
  echo "round $r $cond: median iteration $med ms; main thread on CPUs $cpus; NUMA nodes $nodes; huge pages ${huge} kB; SM MHz median/lowest of the last 3 s $(tail -n 15 "$OUT/$cond-$r.clk" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)] "/" v[1]}')"
}

read -r -a conds <<<"${CONDS:-plain seed0 nothp}"
n=${#conds[@]}
for r in $(seq 1 "$ROUNDS"); do
  for k in $(seq 0 $((n - 1))); do run_one "${conds[$(((k + r - 1) % n))]}" "$r"; done
done | tee "$OUT/b1-mode.txt"
