#!/usr/bin/env bash
# The metrics pass on a GPU machine: fikit-profile --metrics on kernels of
# known DRAM traffic (scripts/workloads/metrics_probe.py) and on a real job
# (resnet50 batch 1), each also profiled without the pass, timed: whether the
# figures match arithmetic, how many kernel keys get figures, and what the
# pass costs in wall time. Writes OUT_DIR/metrics-check.txt and the traces
# (OUT_DIR/probe/, OUT_DIR/r50b1/).
#
#   lab/validate/metrics-check.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds fikit-profile and libfikit_collector.so (or NAME.gz).
set -uo pipefail
BIN=${1:?usage: metrics-check.sh BIN_DIR OUT_DIR}
OUT=${2:?output folder}
for f in fikit-profile libfikit_collector.so; do
  if [ ! -f "$BIN/$f" ] && [ -f "$BIN/$f.gz" ]; then gunzip -c "$BIN/$f.gz" >"$BIN/$f"; fi
done
chmod +x "$BIN/fikit-profile"
mkdir -p "$OUT"
log="$OUT/metrics-check.txt"
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)" | tee -a "$log"
run() {
  local name=$1 mode=$2
  shift 2
  local flags=()
  [ "$mode" = metrics ] && flags=(--metrics)
  local t0=$SECONDS
  "$BIN/fikit-profile" "${flags[@]}" --runs 0 --name "$name" -q -o "$OUT/$name-$mode" -- "$@" >"$OUT/$name-$mode.log" 2>&1
  local rc=$?
  echo "$name $mode: exit $rc, $((SECONDS - t0)) s; $(grep -h 'metrics for\|metrics pass' "$OUT/$name-$mode.log" | tr '\n' ' ')" | tee -a "$log"
}
run probe plain python3 scripts/workloads/metrics_probe.py
run probe metrics python3 scripts/workloads/metrics_probe.py
tail -1 "$OUT/probe-metrics.log" >>"$log"
run r50b1 plain python3 scripts/workloads/workload.py --model resnet50 --batch 1 --mode eval --iters 100 --warmup 10
run r50b1 metrics python3 scripts/workloads/workload.py --model resnet50 --batch 1 --mode eval --iters 100 --warmup 10
