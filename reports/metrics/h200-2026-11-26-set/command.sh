#!/usr/bin/env bash
# reports/metrics/h200-2026-11-26-set/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15: calibrate of 79c2fad (the chase_load probe, the loads' traffic) and short metrics passes of the set's jobs not yet measured.
set -u
SECONDS=0
for f in fikit-profile libfikit_collector.so libfikit_shim.so; do gunzip -c .gpu/diag/$f.gz > .gpu/diag/$f; done
gunzip -c .gpu/cal2/fikit-sim.gz > .gpu/cal2/fikit-sim
chmod +x .gpu/cal2/fikit-sim .gpu/diag/fikit-profile
D=$OUT/c; mkdir -p $D/met
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; cat .gpu/cal2/COMMIT; } | tee $D/device.txt
if [ "${SKIP_CAL:-0}" != 1 ]; then
  timeout -k 10 300 .gpu/cal2/fikit-sim calibrate -o $D/model.json > $D/calibrate.json 2> $D/calibrate.log; echo "calibrate exit $? at ${SECONDS}s"
  python3 - $D/calibrate.json <<'P'
import json,sys
d=json.load(open(sys.argv[1]))
for f in d["corun"]:
    print(f["kind"], "c=%.3f"%f["slowdown"], "victim %.0f GB/s"%(f.get("victim_bytes_per_s",0)/1e9), " ".join("%.3f:%.2fx(%d,load %.0f GB/s)"%(p["load_demand"],p["stretch"],p["samples"],p.get("load_bytes_per_s",0)/1e9) for p in f["points"]))
P
fi
W=scripts/workloads/workload.py
met() { # name args...
  local n=$1; shift
  [ $SECONDS -gt ${LAST:-470} ] && { echo "skipped $n at ${SECONDS}s"; return; }
  timeout -k 5 100 .gpu/diag/fikit-profile --metrics -q -n $n -p low -o $D/met -- python3 $W "$@" > $D/met/$n.log 2>&1; echo "metrics $n exit $? at ${SECONDS}s"
}
met bertb8 --model bert-base --batch 8 --seq-len 128 --mode eval --iters 20 --warmup 3
met mobb1 --model mobilenet_v3_large --batch 1 --mode eval --iters 20 --warmup 3
met gpt2dec --model gpt2 --batch 1 --seq-len 64 --new-tokens 32 --mode decode --iters 2 --warmup 1
met bertt32 --model bert-base --batch 32 --seq-len 128 --mode train --iters 10 --warmup 2
met r50t32 --model resnet50 --batch 32 --mode train --iters 10 --warmup 2
met r50b8 --model resnet50 --batch 8 --mode eval --iters 20 --warmup 3
if [ "${ALL_JOBS:-0}" = 1 ]; then
  met r50b128 --model resnet50 --batch 128 --mode eval --iters 10 --warmup 2
  met r50b1 --model resnet50 --batch 1 --mode eval --iters 20 --warmup 3
  met vitb1 --model vit_b_16 --batch 1 --mode eval --iters 20 --warmup 3
  met bertb1 --model bert-base --batch 1 --seq-len 128 --mode eval --iters 20 --warmup 3
fi
grep -h "pass" $D/met/*.log | head -20
ls -la $D $D/met; du -sm $D
(cd $OUT && tar czf c.tgz c && rm -rf c); ls -la $OUT

# ---- device.txt: the device, as recorded ----
#   NVIDIA H200, 580.159.04
#   2026-11-26T07:30:55Z
#   79c2fad
#   command: ALL_JOBS=1 LAST=420 bash .gpu/cal2/call.sh (call.sh here)
