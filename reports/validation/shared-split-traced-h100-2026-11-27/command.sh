#!/usr/bin/env bash
# reports/validation/shared-split-traced-h100-2026-11-27/: the command record of this round, as committed with it
# (call.sh, device.txt; the originals are in raw.tar.xz). Run from the
# repository root; lab/validate/ and lab/analysis/ were scripts/validate/
# and scripts/analysis/ when it ran.

# ---- call.sh ----
# Issue 15, the shared-memory split on real pairs (H100, in sample): bertb1
# beside r50t32 and vitb1 beside bertt32 (the set's in-sample pairs) under
# MPS, both jobs traced with the driver's split per kernel
# (`shared_config_bytes`, recorded since 2026-11-27), 2 repetitions; each
# job profiled alone first. Binaries: .gpu/split/bin.tar.xz.
set -u
SECONDS=0
B=.gpu/b
mkdir -p $B && tar xJf .gpu/split/bin.tar.xz -C $B && chmod +x $B/fikit-run $B/fikit-profile
W=scripts/workloads/workload.py
D=$OUT/t; mkdir -p $D/prof
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; } | tee $D/device.txt
cmd() { python3 -c "import json,sys; print(json.dumps(json.load(open('lab/validate/real-set.json'))['jobs'][sys.argv[1]]['command']))" $1; }
for j in bertb1 vitb1 r50t32 bertt32; do
  $B/fikit-profile -n $j -p 0 -o $D/prof -- $(python3 -c "import json,sys; print(' '.join(json.load(open('lab/validate/real-set.json'))['jobs'][sys.argv[1]]['command']))" $j) > $D/prof/$j.log 2>&1
  echo "profile $j exit $? at ${SECONDS}s"
done
prof() { realpath $(ls $D/prof/$1-*.parquet | head -1); }
mk() { cat <<J
{"policies": ["exclusive","mps"], "repetitions": 2, "jobs": [
 {"name": "$1", "priority": 0, "profile": "$(prof $1)", "command": $(cmd $1)},
 {"name": "$2", "priority": 9, "profile": "$(prof $2)", "command": $(cmd $2)}]}
J
}
mk bertb1 r50t32 > $D/bertb1-r50t32.json
mk vitb1 bertt32 > $D/vitb1-bertt32.json
for p in bertb1-r50t32 vitb1-bertt32; do
  timeout -s INT -k 20 220 $B/fikit-run $D/$p.json --trace $D/tr-$p -o $D/run-$p > $D/run-$p.log 2>&1; echo "$p exit $? at ${SECONDS}s"
done
rm -rf $D/tr-*/exclusive-*
tot() { du -sm $D | cut -f1; }
find $D -name "*.parquet" | xargs ls -la; echo "total $(tot) MB"
for p in bertb1-r50t32 vitb1-bertt32; do tail -25 $D/run-$p/table.txt 2>/dev/null; done
(cd $OUT && tar czf - t | split -b 15M -d - t.tar. && rm -rf t); ls -la $OUT

# ---- device.txt: the device, as recorded ----
#   NVIDIA H100 80GB HBM3, 580.159.04
#   2026-11-27T02:29:28Z
